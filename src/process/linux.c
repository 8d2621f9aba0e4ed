/* Linux primitives for src/process/posix.c: the process table from /proc, and
 * process identities held as pidfds.
 *
 * A pidfd names one process for good: signals sent through it can never reach a
 * process that later got the same pid. A process found in a /proc snapshot is taken
 * hold of by pidfd_open(pid) followed by a second read of /proc/<pid>/stat: if the
 * start time there is still the one the snapshot showed, the process was alive from
 * the snapshot to after pidfd_open, so the pidfd names that very process.
 *
 * Without pidfd_open (kernels before 5.3, or AOS_PROC_NO_PIDFD) a process is
 * identified by pid and start time, checked immediately before each kill(); the
 * residual race (the process exits and is reaped, and its pid is reused, between the
 * check and the kill) is documented in docs/process.md.
 *
 * Without /proc (not mounted, or hidden) a pidfd still names a process: the root is
 * held by its pidfd alone (start time unknown, 0). Without pidfds either, nothing here
 * can name a process (-ENOTSUP); src/process/posix.c then leaves a root that is the
 * caller's own child to the caller (AOS_PROC_CHILD). Nothing else can be found there.
 *
 * A process whose main thread called pthread_exit shows state Z in /proc/<pid>/stat
 * while its other threads run; it is alive until /proc/<pid>/task lists no thread
 * but the main one. */
#include "process/platform.h"
#include "process/process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1u << 2)
#endif

typedef struct {
  char state;
  int ppid;
  int pgid;
  uint64_t start;
} aos_proc__stat;

static int aos_proc__pidfd_open(int pid) {
#ifdef SYS_pidfd_open
  long r;
  do {
    r = syscall(SYS_pidfd_open, pid, 0u); /* pidfds are always close-on-exec */
  } while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : (int)r;
#else
  (void)pid;
  return -ENOSYS;
#endif
}

static int aos_proc__pidfd_send(int fd, int sig, unsigned flags) {
#ifdef SYS_pidfd_send_signal
  long r;
  do {
    r = syscall(SYS_pidfd_send_signal, fd, sig, NULL, flags);
  } while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
#else
  (void)fd, (void)sig, (void)flags;
  return -ENOSYS;
#endif
}

/* Parses a /proc/<pid>/stat line. The command name (field 2) is in parentheses and
 * may itself contain spaces and parentheses, so fields are counted from the last
 * ')'. After it: state (3), ppid (4), pgrp (5), ..., starttime (22). */
static int aos_proc__parse_stat(const char *line, aos_proc__stat *st) {
  const char *p = strrchr(line, ')');
  if (p == NULL) return -EIO;
  p++;
  for (int field = 3; field <= 22; field++) {
    while (*p == ' ') p++;
    if (*p == '\0' || *p == '\n') return -EIO;
    const char *tok = p;
    while (*p != ' ' && *p != '\0' && *p != '\n') p++;
    char *end = NULL;
    switch (field) {
      case 3:
        st->state = *tok;
        break;
      case 4:
        st->ppid = (int)strtol(tok, &end, 10);
        break;
      case 5:
        st->pgid = (int)strtol(tok, &end, 10);
        break;
      case 22:
        st->start = strtoull(tok, &end, 10);
        break;
      default:
        break;
    }
    if (end != NULL && end != p) return -EIO;
  }
  return 0;
}

/* Reads `<dirfd>/<path>` (a stat file). -ESRCH when the process is gone. */
static int aos_proc__read_stat_at(int dirfd, const char *path, aos_proc__stat *st) {
  int fd;
  do {
    fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT && faccessat(AT_FDCWD, "/proc/self/stat", F_OK, 0) != 0) {
      return -ENOTSUP; /* no /proc: nothing can be said of any process */
    }
    return err == ENOENT || err == ESRCH ? -ESRCH : -err;
  }
  char buf[1024];
  size_t len = 0;
  int rc = 0;
  while (len < sizeof buf - 1) {
    ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      rc = errno == ESRCH ? -ESRCH : -errno; /* the process exited and was reaped */
      break;
    }
    if (r == 0) break;
    len += (size_t)r;
  }
  close(fd);
  if (rc < 0) return rc;
  buf[len] = '\0';
  return aos_proc__parse_stat(buf, st);
}

/* Whether a process whose stat shows Z still has a thread other than its main one
 * (the main thread called pthread_exit): `<dirfd>/<pid>/task` lists more than one. */
static bool aos_proc__threads_left(int dirfd, int pid) {
  char path[40];
  snprintf(path, sizeof path, "%d/task", pid);
  int fd;
  do {
    fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return false;
  DIR *dir = fdopendir(fd);
  if (dir == NULL) {
    close(fd);
    return false;
  }
  bool left = false;
  for (struct dirent *d; !left && (d = readdir(dir)) != NULL;) {
    if (d->d_name[0] == '.') continue;
    char *end = NULL;
    long tid = strtol(d->d_name, &end, 10);
    left = end != d->d_name && *end == '\0' && tid != pid;
  }
  closedir(dir);
  return left;
}

/* Exited for good: a zombie (or dead) with no thread left. */
static bool aos_proc__dead_at(int dirfd, int pid, char state) {
  if (state != 'Z' && state != 'X' && state != 'x') return false;
  return !aos_proc__threads_left(dirfd, pid);
}

static int aos_proc__read_stat(int pid, aos_proc__stat *st) {
  char path[32];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  return aos_proc__read_stat_at(AT_FDCWD, path, st);
}

static bool aos_proc__dead(int pid, char state) {
  int dfd;
  if (state != 'Z' && state != 'X' && state != 'x') return false;
  do {
    dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (dfd < 0 && errno == EINTR);
  if (dfd < 0) return true;
  bool dead = aos_proc__dead_at(dfd, pid, state);
  close(dfd);
  return dead;
}

static int aos_proc__parse_pid(const char *name) {
  long v = 0;
  if (*name == '\0') return -1;
  for (const char *c = name; *c != '\0'; c++) {
    if (*c < '0' || *c > '9') return -1;
    v = v * 10 + (*c - '0');
    if (v > 0x7fffffffL) return -1;
  }
  return (int)v;
}

int aos_proc__scan(aos_proc__entry **out, size_t *count) {
  *out = NULL;
  *count = 0;
  int dfd;
  do {
    dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (dfd < 0 && errno == EINTR);
  if (dfd < 0) return -errno;
  DIR *dir = fdopendir(dfd);
  if (dir == NULL) {
    int err = errno;
    close(dfd);
    return -err;
  }
  aos_proc__entry *e = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (;;) {
    errno = 0;
    struct dirent *d = readdir(dir);
    if (d == NULL) {
      if (errno != 0) rc = -errno;
      break;
    }
    int pid = aos_proc__parse_pid(d->d_name);
    if (pid <= 0) continue;
    char path[32];
    snprintf(path, sizeof path, "%d/stat", pid);
    aos_proc__stat st;
    int src = aos_proc__read_stat_at(dirfd(dir), path, &st);
    if (src < 0) continue; /* gone meanwhile, or unreadable: not part of this snapshot */
    if (n == cap) {
      size_t ncap = cap == 0 ? 256 : cap * 2;
      aos_proc__entry *grown = realloc(e, ncap * sizeof *grown);
      if (grown == NULL) {
        rc = -ENOMEM;
        break;
      }
      e = grown;
      cap = ncap;
    }
    e[n++] = (aos_proc__entry){.pid = pid,
                               .ppid = st.ppid,
                               .pgid = st.pgid,
                               .start = st.start,
                               .zombie = aos_proc__dead_at(dirfd(dir), pid, st.state)};
  }
  closedir(dir);
  if (rc < 0) {
    free(e);
    return rc;
  }
  *out = e;
  *count = n;
  return 0;
}

int aos_proc_is_thread(int id) {
  if (id <= 0) return 0;
  char path[40];
  snprintf(path, sizeof path, "/proc/%d/status", id);
  int fd;
  do {
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd >= 0) {
    /* /proc/<tid> of a non-main thread opens too (hidden from the listing only). */
    char buf[4096];
    size_t len = 0;
    for (;;) {
      ssize_t r = read(fd, buf + len, sizeof buf - 1 - len);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      len += (size_t)r;
      if (len == sizeof buf - 1) break;
    }
    close(fd);
    buf[len] = '\0';
    const char *tgid = strstr(buf, "\nTgid:");
    if (tgid != NULL) return strtol(tgid + 6, NULL, 10) != id ? 1 : 0;
    return 0;
  }
  if (errno == ENOENT && aos_proc__table_readable()) return 0; /* no such task */
  /* No /proc: pidfd_open takes only a thread-group leader (a thread that leads none:
   * EINVAL before Linux 6.9, ENOENT since; no task at all is ESRCH). */
  int pfd = aos_proc__pidfd_open(id);
  if (pfd >= 0) {
    close(pfd);
    return 0;
  }
  if (pfd == -EINVAL || pfd == -ENOENT) return 1;
  return pfd == -ESRCH ? 0 : pfd;
}

bool aos_proc__table_readable(void) { return faccessat(AT_FDCWD, "/proc/self/stat", F_OK, 0) == 0; }

int aos_proc__hold(aos_proc__member *m, int pid, const aos_proc__entry *expect, unsigned flags) {
  uint64_t expect_start = expect != NULL ? expect->start : 0;
  *m = (aos_proc__member){.pid = pid, .fd = -1};
  int fd = -1;
  if (!(flags & AOS_PROC_NO_PIDFD)) {
    fd = aos_proc__pidfd_open(pid);
    if (fd == -ESRCH) return -ESRCH;
    /* ENOSYS (old kernel), EMFILE/ENFILE (out of descriptors), ENOMEM: this one is
     * identified by pid and start time instead. */
    if (fd < 0) fd = -1;
  }
  aos_proc__stat st;
  int rc = aos_proc__read_stat(pid, &st);
  /* The process the scan found, not a later one on its pid: start times count clock
   * ticks (10 ms), so a stranger forked onto a reaped member's pid within the same
   * tick has the same one (red team: 3 in 2 910 rounds with the pid steered). A
   * stranger also has a parent and a group of its own; a member may change one of the
   * two meanwhile (reparented when its parent exits, or setsid), hardly both. */
  if (rc == 0 && expect != NULL &&
      (st.start != expect->start || (st.ppid != expect->ppid && st.pgid != expect->pgid))) {
    rc = -ESRCH;
  }
  if (rc == 0) {
    m->start = st.start;
    m->fd = fd;
    return 0;
  }
  if (rc != -ESRCH && expect_start == 0 && fd >= 0) {
    /* The process table cannot be read (no /proc): the pidfd alone names it. */
    m->fd = fd;
    return 0;
  }
  if (fd >= 0) close(fd);
  return rc;
}

/* Fallback identity check: 0 when the process at m->pid is still the one held and
 * has not exited, -ESRCH when it is not, another negative errno when nothing can be
 * said (no /proc). */
static int aos_proc__check_same(const aos_proc__member *m, aos_proc__stat *st) {
  int rc = aos_proc__read_stat(m->pid, st);
  if (rc < 0) return rc;
  return st->start == m->start && !aos_proc__dead(m->pid, st->state) ? 0 : -ESRCH;
}

int aos_proc__signal(aos_proc__member *m, int sig) {
  if (m->fd >= 0) return aos_proc__pidfd_send(m->fd, sig, 0);
  aos_proc__stat st;
  int rc = aos_proc__check_same(m, &st);
  if (rc < 0) return rc;
  return kill(m->pid, sig) == 0 ? 0 : -errno;
}

int aos_proc__signal_group(aos_proc__member *leader, int sig, bool no_pgroup_fd) {
  if (leader->fd < 0 || no_pgroup_fd) return -ENOTSUP;
  /* Signals the group whose id is the pidfd's own pid: it names the group even after
   * the leader was reaped, and never a later group that reuses the number. */
  int rc = aos_proc__pidfd_send(leader->fd, sig, PIDFD_SIGNAL_PROCESS_GROUP);
  return rc == -EINVAL || rc == -ENOSYS ? -ENOTSUP : rc;
}

int aos_proc__probe(aos_proc__member *m) {
  if (m->fd >= 0) {
    /* Signal 0 through the pidfd: succeeds while the task exists, zombie included;
     * ESRCH once it was reaped. */
    int rc = aos_proc__pidfd_send(m->fd, 0, 0);
    return rc == -ESRCH ? -ESRCH : 0;
  }
  aos_proc__stat st;
  int rc = aos_proc__read_stat(m->pid, &st);
  if (rc == -ESRCH) return -ESRCH;
  if (rc < 0) return -ENOTSUP;
  return st.start == m->start ? 0 : -ESRCH;
}

bool aos_proc__gone(aos_proc__member *m) {
  if (m->fd >= 0) {
    /* A pidfd polls readable once its process has exited (zombie or reaped), that
     * is once every thread of it has: a main thread that called pthread_exit does
     * not make it readable. */
    struct pollfd p = {.fd = m->fd, .events = POLLIN};
    int r;
    do {
      r = poll(&p, 1, 0);
    } while (r < 0 && errno == EINTR);
    return r > 0 && p.revents != 0;
  }
  aos_proc__stat st;
  int rc = aos_proc__read_stat(m->pid, &st);
  if (rc == -ESRCH) return true;
  if (rc < 0) return false; /* cannot tell: counted alive */
  return st.start != m->start || aos_proc__dead(m->pid, st.state);
}

int aos_proc__pgid(aos_proc__member *m) {
  if (m->fd >= 0) {
    pid_t g = getpgid(m->pid);
    if (g < 0) return -errno;
    /* Still alive after getpgid: the pid named the held process when it was asked. */
    if (aos_proc__gone(m)) return -ESRCH;
    return (int)g;
  }
  aos_proc__stat st;
  int rc = aos_proc__check_same(m, &st);
  if (rc < 0) return rc;
  return st.pgid;
}

void aos_proc__release(aos_proc__member *m) {
  if (m->fd >= 0) close(m->fd);
  m->fd = -1;
}
