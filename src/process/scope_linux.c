/* Process scopes on Linux: pidfd control of the subreaper helper, the walk below it,
 * and signalling the members of a cgroup. See src/process/scope.h. Shared by the
 * binding and the helper program (src/process/scope_helper.c). */
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define AOS_P_PIDFD 3 /* waitid's P_PIDFD, Linux 5.4 */
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static ssize_t aos_scope__read_all(int fd, char *buf, size_t cap) {
  size_t done = 0;
  while (done < cap) {
    ssize_t n = read(fd, buf + done, cap - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) break;
    done += (size_t)n;
  }
  return (ssize_t)done;
}

/* Reads a small /proc or cgroupfs file into buf (NUL-terminated). Length or -errno. */
static ssize_t aos_scope__slurp(const char *path, char *buf, size_t cap) {
  int fd;
  do fd = open(path, O_RDONLY | O_CLOEXEC); while (fd < 0 && errno == EINTR);
  if (fd < 0) return -errno;
  ssize_t n = aos_scope__read_all(fd, buf, cap - 1);
  close(fd);
  if (n >= 0) buf[n] = '\0';
  return n;
}

int aos_scope_pidfd_open(int pid, int *out_fd) {
  long fd = syscall(SYS_pidfd_open, pid, 0);
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

int aos_scope_control(int pidfd, int value) {
  siginfo_t info;
  memset(&info, 0, sizeof info);
  info.si_signo = AOS_SCOPE_CTL_SIGNAL;
  info.si_code = SI_QUEUE;
  info.si_pid = getpid();
  info.si_uid = getuid();
  info.si_value.sival_int = value;
  if (syscall(SYS_pidfd_send_signal, pidfd, AOS_SCOPE_CTL_SIGNAL, &info, 0) < 0) return -errno;
  return 0;
}

/* 1 once the process of `pidfd` has exited (reaped or not), 0 while it runs, or
 * -errno. Never reaps: a process found through a cgroup may be a child of this
 * process that libuv reaps (a scope's command), and reaping it here would take its
 * exit from Node. */
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
  /* Reap it when it is a child of this process that libuv does not know (the
   * subreaper helper's reaper, cloned with CLONE_PARENT); ECHILD otherwise. Only
   * called with such pidfds (lib/internal/process-scope.js, subreaper members). */
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int w;
  do w = waitid((idtype_t)AOS_P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG); while (w < 0 && errno == EINTR);
  return 1;
}

/* Appends the pids listed in every /proc/<pid>/task/<tid>/children of `pid`. */
static void aos_scope__children(int pid, int *out, size_t cap, size_t *n) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR *d = opendir(path);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char cpath[96];
    snprintf(cpath, sizeof cpath, "/proc/%d/task/%.16s/children", pid, e->d_name);
    char buf[4096];
    if (aos_scope__slurp(cpath, buf, sizeof buf) <= 0) continue;
    for (char *p = buf; *p != '\0';) {
      char *end = NULL;
      long child = strtol(p, &end, 10);
      if (end == p) break;
      p = end;
      while (*p == ' ' || *p == '\n') p++;
      if (*n < cap) out[(*n)++] = (int)child;
    }
  }
  closedir(d);
}

int aos_scope_descendants(int pid, int *out, size_t cap) {
  size_t n = 0;
  aos_scope__children(pid, out, cap, &n);
  for (size_t head = 0; head < n; head++) aos_scope__children(out[head], out, cap, &n);
  return (int)n;
}

/* Whether /proc/<pid>/cgroup names `cgpath` on the unified hierarchy ("0::<path>"). */
static bool aos_scope__in_cgroup(int pid, const char *cgpath) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/cgroup", pid);
  if (aos_scope__slurp(path, buf, sizeof buf) <= 0) return false;
  for (char *line = buf; line != NULL && *line != '\0';) {
    char *next = strchr(line, '\n');
    if (next != NULL) *next++ = '\0';
    if (strncmp(line, "0::", 3) == 0) return strcmp(line + 3, cgpath) == 0;
    line = next;
  }
  return false;
}

int aos_scope_cg_signal(const char *dir, const char *cgpath, int sig) {
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/cgroup.procs", dir) >= sizeof path) return -ENAMETOOLONG;
  int fd;
  do fd = open(path, O_RDONLY | O_CLOEXEC); while (fd < 0 && errno == EINTR);
  if (fd < 0) return -errno;
  size_t cap = 65536, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) {
    close(fd);
    return -ENOMEM;
  }
  for (;;) {
    if (len + 1 == cap) {
      char *more = realloc(buf, cap * 2);
      if (more == NULL) {
        free(buf);
        close(fd);
        return -ENOMEM;
      }
      buf = more;
      cap *= 2;
    }
    ssize_t n = aos_scope__read_all(fd, buf + len, cap - 1 - len);
    if (n < 0) {
      free(buf);
      close(fd);
      return (int)n;
    }
    if (n == 0) break;
    len += (size_t)n;
  }
  close(fd);
  buf[len] = '\0';
  int sent = 0;
  for (char *p = buf; *p != '\0';) {
    char *end = NULL;
    long pid = strtol(p, &end, 10);
    if (end == p) break;
    p = end;
    while (*p == '\n') p++;
    if (pid <= 1 || pid == getpid()) continue;
    int pfd = -1;
    int rc = aos_scope_pidfd_open((int)pid, &pfd);
    if (rc == 0) {
      /* The pidfd pins the process; while it runs, /proc/<pid> is that process. */
      bool member = aos_scope__in_cgroup((int)pid, cgpath) && aos_scope__gone(pfd) == 0;
      if (member && syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) == 0) sent++;
      close(pfd);
    } else if (rc != -ESRCH && aos_scope__in_cgroup((int)pid, cgpath)) {
      /* No pidfds (before 5.3): pid checked against the cgroup just before kill(). */
      if (kill((pid_t)pid, sig) == 0) sent++;
    }
  }
  free(buf);
  return sent;
}
