/* Process scopes on Linux: pidfd control of a scope's reaper, the walk below it, and
 * the members of a cgroup. See src/process/scope.h. Shared by the binding and the
 * helper program (src/process/scope_helper.c). */
#include "process/scope.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define AOS_P_PIDFD 3 /* waitid's P_PIDFD, Linux 5.4 */
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

void aos_scope_pids_free(aos_scope_pids *p) {
  free(p->v);
  p->v = NULL;
  p->n = p->cap = 0;
}

static int aos_scope__push(aos_scope_pids *p, int pid) {
  if (p->n == p->cap) {
    size_t cap = p->cap == 0 ? 64 : p->cap * 2;
    int *grown = realloc(p->v, cap * sizeof *grown);
    if (grown == NULL) return -ENOMEM;
    p->v = grown;
    p->cap = cap;
  }
  p->v[p->n++] = pid;
  return 0;
}

static int aos_scope__open_at(int dirfd, const char *path, int flags) {
  int fd;
  do fd = openat(dirfd, path, flags | O_CLOEXEC); while (fd < 0 && errno == EINTR);
  return fd;
}

/* Reads all of `fd` into a malloc'ed, NUL-terminated buffer. Length, or -errno. */
static ssize_t aos_scope__read_fd(int fd, char **out) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) return -ENOMEM;
  for (;;) {
    if (len + 1 == cap) {
      char *more = realloc(buf, cap * 2);
      if (more == NULL) {
        free(buf);
        return -ENOMEM;
      }
      buf = more;
      cap *= 2;
    }
    ssize_t n = read(fd, buf + len, cap - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      free(buf);
      return -err;
    }
    if (n == 0) break;
    len += (size_t)n;
  }
  buf[len] = '\0';
  *out = buf;
  return (ssize_t)len;
}

/* Reads a whole /proc or cgroupfs file. Length, or -errno. */
static ssize_t aos_scope__slurp_at(int dirfd, const char *path, char **out) {
  int fd = aos_scope__open_at(dirfd, path, O_RDONLY);
  if (fd < 0) return -errno;
  ssize_t n = aos_scope__read_fd(fd, out);
  close(fd);
  return n;
}

static ssize_t aos_scope__slurp(const char *path, char **out) { return aos_scope__slurp_at(AT_FDCWD, path, out); }

int aos_scope_pidfd_open(int pid, int *out_fd) {
  long fd;
  do fd = syscall(SYS_pidfd_open, pid, 0); while (fd < 0 && errno == EINTR);
  if (fd < 0) return -errno;
  /* pidfd_open sets O_CLOEXEC itself. */
  *out_fd = (int)fd;
  return 0;
}

int aos_scope_kernel_support(void) {
  int fd = -1;
  int rc = aos_scope_pidfd_open((int)getpid(), &fd);
  if (rc < 0) return rc;
  /* This process is not its own child: a kernel that knows P_PIDFD says ECHILD, one
   * before 5.4 rejects the idtype with EINVAL. */
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int w;
  do w = waitid((idtype_t)AOS_P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG); while (w < 0 && errno == EINTR);
  rc = (w == 0 || errno == ECHILD) ? 0 : -errno;
  close(fd);
  return rc;
}

int aos_scope_pidfd_signal(int pidfd, int sig) {
  long r;
  do r = syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0); while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}

int aos_scope_control(int pidfd, int value) {
  siginfo_t info;
  memset(&info, 0, sizeof info);
  info.si_signo = AOS_SCOPE_CTL_SIGNAL;
  info.si_code = SI_QUEUE;
  info.si_pid = getpid();
  info.si_uid = getuid();
  info.si_value.sival_int = value;
  long r;
  do r = syscall(SYS_pidfd_send_signal, pidfd, AOS_SCOPE_CTL_SIGNAL, &info, 0); while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}

/* 1 once the process of `pidfd` has exited (reaped or not), 0 while it runs, or
 * -errno. Never reaps: a process found through a cgroup may be a child of this
 * process that libuv reaps, and reaping it here would take its exit from Node. */
static int aos_scope__gone(int pidfd) {
  struct pollfd p = {.fd = pidfd, .events = POLLIN};
  int r;
  do r = poll(&p, 1, 0); while (r < 0 && errno == EINTR);
  if (r < 0) return -errno;
  return r == 0 ? 0 : 1;
}

int aos_scope_exited(int pidfd) {
  int r = aos_scope__gone(pidfd);
  if (r <= 0) return r;
  /* Reap it when it is a child of this process that libuv does not know (a scope's
   * reaper, cloned with CLONE_PARENT); ECHILD otherwise. Only called with such
   * pidfds (lib/internal/process-scope.js: the reapers of a scope). */
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int w;
  do w = waitid((idtype_t)AOS_P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG); while (w < 0 && errno == EINTR);
  return 1;
}

/* Appends the pids listed in every /proc/<pid>/task/<tid>/children of `pid`. */
static int aos_scope__children(int pid, aos_scope_pids *out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  int dfd = aos_scope__open_at(AT_FDCWD, path, O_RDONLY | O_DIRECTORY);
  if (dfd < 0) return 0; /* gone */
  DIR *d = fdopendir(dfd);
  if (d == NULL) {
    close(dfd);
    return 0;
  }
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char cpath[300];
    snprintf(cpath, sizeof cpath, "%s/children", e->d_name);
    char *buf = NULL;
    ssize_t n = aos_scope__slurp_at(dirfd(d), cpath, &buf);
    if (n == -ENOMEM) rc = -ENOMEM;
    if (n <= 0) {
      free(buf);
      continue;
    }
    for (char *p = buf; *p != '\0' && rc == 0;) {
      char *end = NULL;
      long child = strtol(p, &end, 10);
      if (end == p) break;
      p = end;
      while (*p == ' ' || *p == '\n') p++;
      if (child > 0) rc = aos_scope__push(out, (int)child);
    }
    free(buf);
  }
  closedir(d);
  return rc;
}

int aos_scope_descendants(int pid, aos_scope_pids *out) {
  size_t head = out->n;
  int rc = aos_scope__children(pid, out);
  for (; rc == 0 && head < out->n; head++) rc = aos_scope__children(out->v[head], out);
  return rc;
}

/* The parent of `pid` as /proc/<pid>/stat shows it (fields counted from the last ')'),
 * or -errno. */
static int aos_scope__ppid(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  char *buf = NULL;
  ssize_t n = aos_scope__slurp(path, &buf);
  if (n < 0) return (int)n;
  const char *p = strrchr(buf, ')');
  int ppid = -EIO;
  if (p != NULL) {
    char state;
    int v;
    if (sscanf(p + 1, " %c %d", &state, &v) == 2) ppid = v;
  }
  free(buf);
  return ppid;
}

int aos_scope_signal_below(int sig) { return aos_scope_signal_below_hooked(sig, NULL, NULL); }

int aos_scope_signal_below_hooked(int sig, aos_scope_list_hook hook, void *ctx) {
  /* Breadth first from this process: held[i] is a process found below it, with the
   * index of the one it was listed under (-1: this process) and its pidfd. */
  typedef struct {
    int pid;
    int fd;
    long parent;
  } held_t;
  held_t *held = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  int self = (int)getpid();
  for (long at = -1; rc == 0 && (at < 0 || (size_t)at < n); at++) {
    int under = at < 0 ? self : held[at].pid;
    aos_scope_pids kids = {0};
    if (aos_scope__children(under, &kids) < 0) {
      rc = -ENOMEM;
      break;
    }
    if (hook != NULL) hook(kids.v, kids.n, ctx);
    for (size_t k = 0; k < kids.n && rc == 0; k++) {
      int fd = -1;
      int orc = aos_scope_pidfd_open(kids.v[k], &fd);
      if (orc == -ESRCH) continue;
      /* Held (or, before 5.3, only about to be signalled by pid): its parent now must
       * still be the process it was listed under, which is this process or a held
       * one still running after that read (so its pid was not reused either). */
      bool ok = aos_scope__ppid(kids.v[k]) == under;
      if (ok && at >= 0) ok = aos_scope__gone(held[at].fd) == 0;
      if (ok && fd >= 0) ok = aos_scope__gone(fd) == 0;
      if (!ok) {
        if (fd >= 0) close(fd);
        continue;
      }
      if (n == cap) {
        size_t ncap = cap == 0 ? 64 : cap * 2;
        held_t *grown = realloc(held, ncap * sizeof *grown);
        if (grown == NULL) {
          if (fd >= 0) close(fd);
          rc = -ENOMEM;
          break;
        }
        held = grown;
        cap = ncap;
      }
      held[n++] = (held_t){.pid = kids.v[k], .fd = fd, .parent = at};
    }
    aos_scope_pids_free(&kids);
  }
  int sent = 0;
  for (size_t i = 0; i < n; i++) {
    int src;
    if (held[i].fd >= 0) {
      src = aos_scope_pidfd_signal(held[i].fd, sig);
    } else {
      src = aos_scope__ppid(held[i].pid) == (held[i].parent < 0 ? self : held[held[i].parent].pid) &&
                    kill(held[i].pid, sig) == 0
                ? 0
                : -ESRCH;
    }
    if (src == 0) sent++;
  }
  for (size_t i = 0; i < n; i++) {
    if (held[i].fd >= 0) close(held[i].fd);
  }
  free(held);
  return rc < 0 && sent == 0 ? rc : sent;
}

/* Whether /proc/<pid>/cgroup names `cgpath` or a cgroup below it on the unified
 * hierarchy ("0::<path>"). */
static bool aos_scope__in_cgroup(int pid, const char *cgpath) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/cgroup", pid);
  char *buf = NULL;
  if (aos_scope__slurp(path, &buf) <= 0) {
    free(buf);
    return false;
  }
  bool in = false;
  size_t len = strlen(cgpath);
  for (char *line = buf; line != NULL && *line != '\0';) {
    char *next = strchr(line, '\n');
    if (next != NULL) *next++ = '\0';
    if (strncmp(line, "0::", 3) == 0) {
      const char *p = line + 3;
      in = strncmp(p, cgpath, len) == 0 && (p[len] == '\0' || p[len] == '/');
      break;
    }
    line = next;
  }
  free(buf);
  return in;
}

/* Signals the members listed in `dirfd`'s cgroup.procs. */
static int aos_scope__cg_signal_one(int dirfd, const char *cgpath, int sig) {
  char *buf = NULL;
  ssize_t n = aos_scope__slurp_at(dirfd, "cgroup.procs", &buf);
  if (n < 0) return (int)n;
  int sent = 0;
  int self = (int)getpid();
  for (char *p = buf; *p != '\0';) {
    char *end = NULL;
    long pid = strtol(p, &end, 10);
    if (end == p) break;
    p = end;
    while (*p == '\n') p++;
    if (pid <= 1 || pid == self) continue;
    int pfd = -1;
    int rc = aos_scope_pidfd_open((int)pid, &pfd);
    if (rc == 0) {
      /* The pidfd pins the process; while it runs, /proc/<pid> is that process. */
      bool member = aos_scope__in_cgroup((int)pid, cgpath) && aos_scope__gone(pfd) == 0;
      if (member && aos_scope_pidfd_signal(pfd, sig) == 0) sent++;
      close(pfd);
    } else if (rc != -ESRCH && aos_scope__in_cgroup((int)pid, cgpath)) {
      /* No pidfds (before 5.3): pid checked against the cgroup just before kill(). */
      if (kill((pid_t)pid, sig) == 0) sent++;
    }
  }
  free(buf);
  return sent;
}

/* Calls fn on `dirfd` and on every cgroup directory below it (depth first, children
 * before their parent when `post`), up to a depth of 64. */
typedef int (*aos_scope__cg_fn)(int dirfd, const char *name, int parentfd, void *ctx);

static int aos_scope__cg_walk(int dirfd, int parentfd, const char *name, int depth, bool post, aos_scope__cg_fn fn, void *ctx) {
  int rc = 0;
  if (!post) rc = fn(dirfd, name, parentfd, ctx);
  if (depth < 64) {
    int dup;
    do dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 0); while (dup < 0 && errno == EINTR);
    DIR *d = dup < 0 ? NULL : fdopendir(dup);
    if (d == NULL && dup >= 0) close(dup);
    if (d != NULL) {
      struct dirent *e;
      while ((e = readdir(d)) != NULL) {
        /* Only "." and ".." are skipped: a member's child cgroup may be named ".x"
         * (red team: such a directory was left after close()). */
        bool dots = e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0'));
        if (dots || e->d_type != DT_DIR) continue;
        int sub = aos_scope__open_at(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (sub < 0) continue;
        int src = aos_scope__cg_walk(sub, dirfd, e->d_name, depth + 1, post, fn, ctx);
        close(sub);
        if (src < 0 && rc >= 0) rc = src;
      }
      closedir(d);
    }
  }
  if (post) {
    int src = fn(dirfd, name, parentfd, ctx);
    if (src < 0 && rc >= 0) rc = src;
  }
  return rc;
}

typedef struct {
  const char *cgpath;
  int sig;
  int sent;
} aos_scope__cg_sig_ctx;

static int aos_scope__cg_sig_fn(int dirfd, const char *name, int parentfd, void *ctx) {
  (void)name, (void)parentfd;
  aos_scope__cg_sig_ctx *c = ctx;
  int n = aos_scope__cg_signal_one(dirfd, c->cgpath, c->sig);
  if (n > 0) c->sent += n;
  return n < 0 ? n : 0;
}

int aos_scope_cg_signal(const char *dir, const char *cgpath, int sig) {
  int dfd = aos_scope__open_at(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY);
  if (dfd < 0) return -errno;
  aos_scope__cg_sig_ctx c = {.cgpath = cgpath, .sig = sig, .sent = 0};
  int rc = aos_scope__cg_walk(dfd, -1, NULL, 0, false, aos_scope__cg_sig_fn, &c);
  close(dfd);
  /* A cgroup below that went away meanwhile is not an error; the top one is. */
  return c.sent > 0 || rc >= 0 ? c.sent : rc;
}

static bool aos_scope__populated(int dirfd) {
  char *buf = NULL;
  ssize_t n = aos_scope__slurp_at(dirfd, "cgroup.events", &buf);
  bool populated = n > 0 && strstr(buf, "populated 1") != NULL;
  free(buf);
  return populated;
}

/* SIGKILLs everything in the cgroup of `dirfd` and below it: cgroup.kill (which is
 * recursive), else each member. */
static void aos_scope__cg_kill(int dirfd, const char *cgpath) {
  int kfd = aos_scope__open_at(dirfd, "cgroup.kill", O_WRONLY);
  if (kfd >= 0) {
    ssize_t w;
    do w = write(kfd, "1", 1); while (w < 0 && errno == EINTR);
    close(kfd);
    if (w == 1) return;
  }
  aos_scope__cg_sig_ctx c = {.cgpath = cgpath, .sig = SIGKILL, .sent = 0};
  (void)aos_scope__cg_walk(dirfd, -1, NULL, 0, false, aos_scope__cg_sig_fn, &c);
}

static int aos_scope__cg_rmdir_fn(int dirfd, const char *name, int parentfd, void *ctx) {
  (void)dirfd, (void)ctx;
  if (name == NULL || parentfd < 0) return 0; /* the top one is removed by its path */
  if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) return 0;
  return -errno;
}

static void aos_scope__sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

int aos_scope_cg_remove(const char *dir, const char *cgpath, int wait_ms) {
  int dfd = aos_scope__open_at(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY);
  if (dfd < 0) return errno == ENOENT ? 0 : -errno;
  int rc = -EBUSY;
  for (int waited = 0;; waited += 10) {
    aos_scope__cg_kill(dfd, cgpath);
    if (!aos_scope__populated(dfd)) {
      /* Deepest first; then the cgroup itself. A process that joined since the
       * check (a helper still entering) makes rmdir fail with EBUSY: again. */
      int wrc = aos_scope__cg_walk(dfd, -1, NULL, 0, true, aos_scope__cg_rmdir_fn, NULL);
      if (wrc == 0 && (rmdir(dir) == 0 || errno == ENOENT)) {
        rc = 0;
        break;
      }
      rc = wrc < 0 ? wrc : -errno;
      if (rc != -EBUSY && rc != -ENOTEMPTY) break;
    }
    if (waited >= wait_ms) break;
    aos_scope__sleep_ms(10);
  }
  close(dfd);
  return rc == -ENOTEMPTY ? -EBUSY : rc;
}
