/* Internal: what src/process/posix.c needs from each POSIX operating system
 * (src/process/linux.c, src/process/darwin.c). Not included outside src/process. */
#ifndef AOS_PROCESS_PLATFORM_H
#define AOS_PROCESS_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One process of a process-table snapshot. `start` is the start time in the
 * operating system's own unit; with `pid` it names one process for good. */
typedef struct {
  int pid;
  int ppid;
  int pgid;
  uint64_t start;
  bool zombie; /* exited: every thread is gone (a main thread that called
                * pthread_exit while others run does not make a zombie) */
} aos_proc__entry;

/* A process held by a tree. */
typedef struct {
  int pid;
  uint64_t start;
  int fd;          /* Linux pidfd, or -1 when identified by pid + start only */
  bool by_caller;  /* the caller's own child held without a pidfd (AOS_PROC_CHILD):
                    * never signalled here, since only the caller's thread knows
                    * whether it was reaped; the caller signals it (and, without a
                    * process table, its group) after checking that. start is 0 when
                    * the process table cannot be read */
  bool signalled;  /* `sig` of some aos_proc_tree_signal call was delivered */
  bool stopped;    /* SIGSTOP delivered during the current signal call */
  bool gone;       /* seen exited; stays true */
} aos_proc__member;

/* Reads the whole process table. On success *out is a malloc'ed array of *count
 * entries (free it with free()). */
int aos_proc__scan(aos_proc__entry **out, size_t *count);

/* Whether the process table can be read at all (Linux: /proc is there). */
bool aos_proc__table_readable(void);

/* Takes hold of process `pid`. When `expect_start` is non-zero the process must still
 * be the one with that start time, else -ESRCH; when zero, whatever process `pid`
 * names now is taken and its start time recorded (0 when the process table cannot
 * be read). -ESRCH when it is gone; -ENOTSUP when nothing can identify it (no pidfd
 * and no process table). `flags` are the AOS_PROC_* flags of src/process/process.h
 * (only AOS_PROC_NO_PIDFD is read). Sets every field of `m` (the flags false). */
/* `expect`: the entry the scan found at pid (start time, parent and group all
 * compared), or NULL for the root (any process at pid). */
int aos_proc__hold(aos_proc__member *m, int pid, const aos_proc__entry *expect, unsigned flags);

/* Sends `sig` to the held process. 0, or -ESRCH when it is gone (nothing sent). */
int aos_proc__signal(aos_proc__member *m, int sig);

/* Sends `sig` to the process group led (or once led) by the held process `leader`
 * through the leader's own handle, which names that group for good (Linux 6.9+:
 * PIDFD_SIGNAL_PROCESS_GROUP). 0; -ESRCH when the group is empty; -ENOTSUP when the
 * operating system (or `no_pgroup_fd`) offers no such handle, and the caller must
 * fall back to a guarded kill(-pgid), see src/process/posix.c. */
int aos_proc__signal_group(aos_proc__member *leader, int sig, bool no_pgroup_fd);

/* Whether the held process still occupies its pid: alive, or exited and not yet
 * reaped (a zombie). 0 when it does, -ESRCH when it was reaped (or the pid names
 * another process now), -ENOTSUP when this cannot be told (no pidfd, no /proc). */
int aos_proc__probe(aos_proc__member *m);

/* Whether the held process has exited (a zombie has). Never blocks. */
bool aos_proc__gone(aos_proc__member *m);

/* The current process group of the held process, or a negative errno. */
int aos_proc__pgid(aos_proc__member *m);

/* Releases the hold. Idempotent. */
void aos_proc__release(aos_proc__member *m);

#endif
