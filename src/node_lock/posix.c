/* node-lock on POSIX (Linux, macOS): flock(2) on a descriptor opened without
 * following a link at the final component.
 *
 * flock locks belong to the open file description, so two descriptors opened here
 * exclude each other even in one process (threads, worker_threads), and the lock
 * ends when the last descriptor of that description is closed: when the holder
 * releases, exits or is killed. Every descriptor is O_CLOEXEC, so a child that
 * execs never inherits the lock. */
#if defined(__linux__) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
/* The build defines _GNU_SOURCE on Linux; compiled alone with -std=c11, ask glibc
 * for POSIX.1-2008 plus flock. */
#define _DEFAULT_SOURCE
#endif

#include "node_lock/node_lock.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/sysmacros.h>
#endif

#ifndef O_NOFOLLOW
#error "node-lock needs O_NOFOLLOW"
#endif
#ifndef O_CLOEXEC
#error "node-lock needs O_CLOEXEC"
#endif

/* Extra reads of an empty pid record before the holder counts as unknown. */
#define AOS_LOCK__PID_RETRIES 16

/* The longest pid record read back: "2147483647\n" with room to spare. */
#define AOS_LOCK__PID_MAX_BYTES 24

void aos_lock_init(aos_lock *lock) {
  lock->fd = -1;
  lock->recorded = false;
}

/* errno values that an open with O_NOFOLLOW (or O_RDWR) reports for an entry that
 * is not a regular file: a symlink (ELOOP; EMLINK on FreeBSD, EFTYPE on NetBSD), a
 * directory (EISDIR), a socket (ENXIO), a device without its driver (ENODEV). */
static bool aos_lock__is_entry_errno(int err) {
  switch (err) {
    case ELOOP:
    case EMLINK:
    case EISDIR:
    case ENXIO:
    case ENODEV:
#ifdef EFTYPE
    case EFTYPE:
#endif
      return true;
    default:
      return false;
  }
}

static void aos_lock__unsafe(aos_lock_outcome *out, const struct stat *st, int err) {
  out->state = AOS_LOCK_UNSAFE;
  out->holder_pid = 0;
  if (err != 0) {
    out->host_errno = err;
  } else if (S_ISLNK(st->st_mode)) {
    out->host_errno = ELOOP;
  } else if (S_ISDIR(st->st_mode)) {
    out->host_errno = EISDIR;
  } else {
    out->host_errno = 0;
  }
}

static int aos_lock__flock(int fd, int op) {
  int r;
  do {
    r = flock(fd, op);
  } while (r == -1 && errno == EINTR);
  return r == -1 ? -errno : 0;
}

static int aos_lock__ftruncate0(int fd) {
  int r;
  do {
    r = ftruncate(fd, 0);
  } while (r == -1 && errno == EINTR);
  return r == -1 ? -errno : 0;
}

/* Closes a descriptor this file opened; close is never retried (the descriptor is
 * gone whatever it reports). Keeps the caller's errno. */
static void aos_lock__close(int fd) {
  int saved = errno;
  (void)close(fd);
  errno = saved;
}

/* Opens the guard file for the lock: read-write (so the holder can record its pid),
 * created if missing with 0666 less the umask, never through a symlink at the final
 * component, never blocking (a FIFO opened O_NONBLOCK returns at once), never as a
 * controlling terminal. An existing guard file this process may not write (another
 * user's, or on a read-only mount) is opened read-only: flock needs no write
 * access; the pid is then not recorded. */
static int aos_lock__open(const char *path, bool *writable) {
  const int base = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
  int fd;
  do {
    fd = open(path, O_RDWR | O_CREAT | base, 0666);
  } while (fd == -1 && errno == EINTR);
  if (fd >= 0) {
    *writable = true;
    return fd;
  }
  int err = errno;
  if (err != EACCES && err != EROFS && err != EPERM) return -err;
  do {
    fd = open(path, O_RDONLY | base);
  } while (fd == -1 && errno == EINTR);
  if (fd == -1) return -err; /* the first refusal is the one that explains */
  *writable = false;
  return fd;
}

/* 1 when the path still names the file open at `fd` (same device and inode, and the
 * path itself is not a link now), 0 when it names something else or nothing, or
 * -errno when that cannot be told. */
static int aos_lock__still_at_path(const char *path, const struct stat *held) {
  struct stat now;
  if (lstat(path, &now) == -1) {
    return errno == ENOENT ? 0 : -errno;
  }
  if (!S_ISREG(now.st_mode)) return 0;
  return now.st_dev == held->st_dev && now.st_ino == held->st_ino ? 1 : 0;
}

static void aos_lock__record_pid(aos_lock *lock) {
  char text[AOS_LOCK__PID_MAX_BYTES];
  int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
  if (n <= 0 || (size_t)n >= sizeof text) return;
  if (aos_lock__ftruncate0(lock->fd) != 0) return;
  lock->recorded = true;
  size_t done = 0;
  while (done < (size_t)n) {
    ssize_t w = pwrite(lock->fd, text + done, (size_t)n - done, (off_t)done);
    if (w == -1 && errno == EINTR) continue;
    if (w <= 0) return; /* the pid is advisory: the lock itself is held */
    done += (size_t)w;
  }
}

/* The pid recorded in the guard file open at `fd`, or 0 when there is none: the
 * file must hold exactly decimal digits and one newline. */
static int64_t aos_lock__read_pid(int fd) {
  char text[AOS_LOCK__PID_MAX_BYTES];
  ssize_t n;
  do {
    n = pread(fd, text, sizeof text, 0);
  } while (n == -1 && errno == EINTR);
  if (n <= 1 || (size_t)n >= sizeof text) return 0;
  if (text[n - 1] != '\n') return 0;
  int64_t pid = 0;
  for (ssize_t i = 0; i < n - 1; i++) {
    if (text[i] < '0' || text[i] > '9') return 0;
    pid = pid * 10 + (text[i] - '0');
    if (pid > INT_MAX) return 0;
  }
  return pid;
}

static bool aos_lock__pid_alive(int64_t pid) {
  if (pid <= 0) return false;
  if (kill((pid_t)pid, 0) == 0) return true;
  return errno == EPERM; /* exists, owned by someone we may not signal */
}

#ifdef __linux__
/* The pid on one line of /proc/locks, "N: FLOCK  ADVISORY  WRITE pid MAJ:MIN:INO 0 EOF",
 * when it is an exclusive flock on the file `st` describes; else 0 (waiters read
 * "N: -> FLOCK ..." and never match). */
static int64_t aos_lock__locks_line_holder(const char *line, const struct stat *st) {
  char type[16], mode[16], access[16];
  long long line_pid = 0;
  unsigned int maj = 0, min = 0;
  unsigned long long ino = 0;
  int n = sscanf(line, "%*d: %15s %15s %15s %lld %x:%x:%llu", type, mode, access,
                 &line_pid, &maj, &min, &ino);
  if (n != 7 || line_pid <= 0 || line_pid > INT_MAX) return 0;
  bool match = strcmp(type, "FLOCK") == 0 && strcmp(access, "WRITE") == 0 &&
               maj == major(st->st_dev) && min == minor(st->st_dev) &&
               ino == (unsigned long long)st->st_ino;
  return match ? (int64_t)line_pid : 0;
}

/* The pid that the kernel's lock table lists as holding an exclusive flock on the
 * file `st` describes: > 0, 0 when it lists none, -1 when the table cannot be read
 * (no procfs). This is the kernel's own record of who locked, so it needs no help
 * from the holder (it is right even in the instant between a holder's flock and its
 * pid write). Pids in /proc/locks are those of the reader's pid namespace; a holder
 * in another namespace shows as 0 and is not named. */
static int64_t aos_lock__kernel_holder(const struct stat *st) {
  int fd;
  do {
    fd = open("/proc/locks", O_RDONLY | O_CLOEXEC);
  } while (fd == -1 && errno == EINTR);
  if (fd == -1) return -1;
  char buf[8192];
  size_t have = 0;
  int64_t found = 0;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
    if (n == -1 && errno == EINTR) continue;
    if (n < 0) {
      found = -1;
      break;
    }
    have += (size_t)n;
    buf[have] = '\0';
    char *line = buf;
    char *nl;
    while (found == 0 && (nl = strchr(line, '\n')) != NULL) {
      *nl = '\0';
      found = aos_lock__locks_line_holder(line, st);
      line = nl + 1;
    }
    if (found != 0) break;
    size_t rest = have - (size_t)(line - buf);
    if (n == 0) {
      if (rest > 0) found = aos_lock__locks_line_holder(line, st);
      break;
    }
    if (rest == sizeof buf - 1) rest = 0; /* a line longer than any the kernel writes */
    memmove(buf, line, rest);
    have = rest;
  }
  aos_lock__close(fd);
  return found;
}
#endif

/* The holder's pid where it can be known, else 0. `fd` is this caller's own
 * (unlocked) descriptor of the guard file, `st` its identity.
 * Linux: the kernel's lock table names the process that took the flock; the pid
 * recorded in the file is only consulted where that table cannot be read. Elsewhere
 * (and then): the recorded pid, if it names a live process. A holder records its pid a
 * few system calls after its flock succeeded, so an empty record is read again a
 * bounded number of times, yielding the processor in between. */
static int64_t aos_lock__holder_pid(int fd, const struct stat *st) {
#ifdef __linux__
  int64_t kernel = aos_lock__kernel_holder(st);
  if (kernel >= 0) return aos_lock__pid_alive(kernel) ? kernel : 0;
#else
  (void)st;
#endif
  int64_t pid = aos_lock__read_pid(fd);
  for (int tries = 0; pid == 0 && tries < AOS_LOCK__PID_RETRIES; tries++) {
    sched_yield();
    pid = aos_lock__read_pid(fd);
  }
  return aos_lock__pid_alive(pid) ? pid : 0;
}

int aos_lock_try_acquire(const char *path, bool want_holder, aos_lock *lock,
                         aos_lock_outcome *out) {
  aos_lock_init(lock);
  out->state = AOS_LOCK_HELD;
  out->holder_pid = 0;
  out->host_errno = 0;

  for (int attempt = 0; attempt <= AOS_LOCK_MAX_REPLACED_RETRIES; attempt++) {
    /* Refuse a non-regular entry before opening it: opening a device can have
     * effects of its own. The descriptor's own type is checked again below. */
    struct stat st;
    if (lstat(path, &st) == 0) {
      if (!S_ISREG(st.st_mode)) {
        aos_lock__unsafe(out, &st, 0);
        return 0;
      }
    } else if (errno != ENOENT) {
      return -errno;
    }

    bool writable = false;
    int fd = aos_lock__open(path, &writable);
    if (fd < 0) {
      if (aos_lock__is_entry_errno(-fd) && lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        aos_lock__unsafe(out, &st, -fd);
        return 0;
      }
      return fd;
    }
    if (fstat(fd, &st) == -1) {
      int err = errno;
      aos_lock__close(fd);
      return -err;
    }
    if (!S_ISREG(st.st_mode)) {
      aos_lock__close(fd);
      aos_lock__unsafe(out, &st, 0);
      return 0;
    }

    int r = aos_lock__flock(fd, LOCK_EX | LOCK_NB);
    bool locked = r == 0;
    if (!locked && r != -EWOULDBLOCK && r != -EAGAIN) {
      aos_lock__close(fd);
      return r;
    }

    int same = aos_lock__still_at_path(path, &st);
    if (same < 0) {
      aos_lock__close(fd); /* closing the only descriptor drops the lock */
      return same;
    }
    if (same == 0) {
      /* The path was replaced or removed between open and lock: this handle is
       * not the guard at lockPath. Drop it and look again. */
      aos_lock__close(fd);
      continue;
    }

    if (!locked) {
      out->state = AOS_LOCK_HELD;
      out->holder_pid = want_holder ? aos_lock__holder_pid(fd, &st) : 0;
      aos_lock__close(fd);
      return 0;
    }

    lock->fd = fd;
    if (writable) aos_lock__record_pid(lock);
    out->state = AOS_LOCK_ACQUIRED;
    return 0;
  }
  /* Replaced on every look: someone keeps swapping the path. Not acquired. */
  out->state = AOS_LOCK_HELD;
  out->holder_pid = 0;
  return 0;
}

void aos_lock_release(aos_lock *lock) {
  if (lock->fd < 0) return;
  /* Clear the record while still holding the lock: after unlocking, the next
   * holder may already have written its own pid. */
  if (lock->recorded) (void)aos_lock__ftruncate0(lock->fd);
  /* Unlock explicitly: should the description have been shared (a fork without
   * exec), closing this descriptor alone would not end the lock. */
  (void)aos_lock__flock(lock->fd, LOCK_UN);
  aos_lock__close(lock->fd);
  lock->fd = -1;
  lock->recorded = false;
}
