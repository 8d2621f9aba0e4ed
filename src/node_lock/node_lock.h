/* node-lock's C core: a nonblocking exclusive lock on a guard file, carried by an
 * operating-system lock on an open handle (flock on POSIX, LockFileEx on Windows).
 *
 * No Node-API here: the core is readable and testable alone. src/node_lock/posix.c
 * and src/node_lock/win32.c implement this interface; src/node_lock/napi.c is the
 * only caller.
 *
 * Every function returns 0 or a negative errno value (Windows errors are mapped to
 * errno values). "Held by someone else" and "unsafe entry at the path" are not
 * errors of the host: they are outcomes, reported through aos_lock_outcome. */
#ifndef AOS_NODE_LOCK_H
#define AOS_NODE_LOCK_H

#include <stdbool.h>
#include <stdint.h>

/* The open, locked guard file. Close-on-exec / non-inheritable. */
typedef struct aos_lock {
#ifdef _WIN32
  void *handle; /* HANDLE; NULL when not held */
#else
  int fd; /* -1 when not held */
#endif
  bool recorded; /* the holder's record was written into the guard file */
} aos_lock;

typedef enum aos_lock_state {
  AOS_LOCK_ACQUIRED = 0, /* *lock now holds the guard */
  AOS_LOCK_HELD,         /* another handle (any process or thread) holds it */
  AOS_LOCK_UNSAFE        /* the entry at the path is not a guard file: a link, not a regular
                          * file, a file with more than one link, or (found when locked)
                          * content other than a holder record (src/node_lock/record.h) */
} aos_lock_state;

typedef struct aos_lock_outcome {
  aos_lock_state state;
  /* AOS_LOCK_HELD, when the caller asked for it: the holder's pid where it can be
   * known (Linux: the live process the kernel's lock table lists as holding the
   * file's flock; elsewhere, or when the table has no match, the live process the
   * guard file's record names); 0 otherwise. */
  int64_t holder_pid;
  /* AOS_LOCK_UNSAFE: the host's refusal as a positive errno value (ELOOP for a
   * symlink, EISDIR for a directory), or 0 when the entry was refused by type. */
  int host_errno;
} aos_lock_outcome;

/* The number of times aos_lock_try_acquire re-opens the path when the file it
 * locked is no longer the one the path names. Past it, the outcome is
 * AOS_LOCK_HELD with an unknown holder: the path is being replaced continually. */
#define AOS_LOCK_MAX_REPLACED_RETRIES 8

/* Tries once to take the guard at `path` (UTF-8, absolute, NUL-terminated), never
 * waiting. Opens or creates the guard file without following a link at its final
 * component, refuses anything but a regular file, takes an exclusive nonblocking
 * lock on the open handle, then checks the handle is still the file the path names
 * and is a guard: one link, and (when locked) empty or holding a holder record. A
 * file that is not a guard is unlocked and left exactly as it was. Where the system
 * keeps no readable table of lock holders (all but Linux with /proc), the holder then
 * writes its record into the file. Never sleeps, yields or spins.
 *
 * Returns 0 with *out describing the outcome (on AOS_LOCK_ACQUIRED, *lock holds
 * it until aos_lock_release), or -errno for a host failure (missing directory,
 * permissions, ...), in which case nothing is left open. `want_holder` asks for
 * out->holder_pid when the lock is held; it costs a read of the guard file (and of
 * the kernel's lock table on Linux), so callers that discard it pass false. */
int aos_lock_try_acquire(const char *path, bool want_holder, aos_lock *lock,
                         aos_lock_outcome *out);

/* Who holds the guard at `path`, without taking or waiting for the lock: *pid is the
 * holder's pid (> 0) as aos_lock_try_acquire finds it, 0 when it cannot be known (no
 * live holder named, not a guard), or -1 when the guard file is empty on a host where
 * holders record themselves: a holder may be between its lock and its record write
 * (or no one holds it). Returns 0, or -errno when the file cannot be opened. Never
 * sleeps, yields or spins. */
int aos_lock_holder(const char *path, int64_t *pid);

/* Releases a held guard: clears its record if it wrote one (before unlocking, so it
 * can never erase the record of the next holder), unlocks, closes. Idempotent: a released or
 * never-acquired lock (fd -1 / NULL handle) is left alone. Never fails: the handle
 * is gone afterwards whatever the host says. The guard file is never deleted. */
void aos_lock_release(aos_lock *lock);

/* Sets *lock to the "not held" state. */
void aos_lock_init(aos_lock *lock);

#endif
