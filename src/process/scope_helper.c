/* agent_os_scope_helper: the small program that process scopes start commands through
 * on Linux (see docs/process-scopes.md). Built beside the binding by binding.gyp; a
 * plain single-threaded program, so nothing here runs between fork and exec of the
 * multithreaded Node process.
 *
 *   agent_os_scope_helper cg <cgroup.procs> <argv0> <file> [args...]
 *       Moves itself into the scope's cgroup, then execs the command: the process
 *       Node spawned *is* the command (same pid, exit status, signals).
 *
 *   agent_os_scope_helper keep <cgroup dir>
 *       The cgroup scope's keeper. Waits for EOF on its stdin (a pipe whose other end
 *       only the Node process holds): when Node closes it or dies, every process in
 *       the cgroup is killed, the cgroup removed, and the keeper exits.
 *
 *   agent_os_scope_helper reap <handshake fd> <argv0> <file> [args...]
 *       The subreaper backend. This process (H, the ChildProcess Node sees) forks R,
 *       which becomes a child subreaper (PR_SET_CHILD_SUBREAPER) and forks the command
 *       C (R is cloned with CLONE_PARENT, so Node, not H, is its parent and reaps
 *       it). Every orphan of C's descendants is re-parented to R, however it forked or
 *       whatever session or group it moved to. R writes its pid on the handshake fd
 *       (then closes it; the command never sees it), forwards to C the signals sent to
 *       H, reports C's exit status to H, which exits with exactly that status, and
 *       stays while anything is left in the scope. Node controls R with a queued
 *       signal (AOS_SCOPE_CTL_SIGNAL carrying a signal number): signal everything;
 *       SIGKILL means kill everything, reap it all and exit. R also kills everything
 *       and exits when the Node process ends (a pidfd of it, polled).
 *
 * Every descriptor is O_CLOEXEC; every loop retries EINTR (never close). A command
 * that cannot be executed ends the helper with status 127 (126: not executable), as a
 * shell would. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process/scope.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static ssize_t write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, p + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    done += (size_t)n;
  }
  return (ssize_t)done;
}

static ssize_t read_full(int fd, void *buf, size_t len) {
  char *p = buf;
  size_t done = 0;
  while (done < len) {
    ssize_t n = read(fd, p + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += (size_t)n;
  }
  return (ssize_t)done;
}

static int open_cloexec(const char *path, int flags) {
  int fd;
  do fd = open(path, flags | O_CLOEXEC); while (fd < 0 && errno == EINTR);
  return fd;
}

static void exec_command(char *argv0, char *file, char **args) {
  args[0] = argv0;
  execvp(file, args);
  _exit(errno == ENOENT ? 127 : 126);
}

/* ---- cg: move into the cgroup, then exec ---------------------------------------- */

static int mode_cg(int argc, char **argv) {
  if (argc < 5) return 2;
  int fd = open_cloexec(argv[2], O_WRONLY);
  if (fd < 0) return 125;
  ssize_t n = write_all(fd, "0", 1);
  close(fd);
  if (n < 0) return 125;
  exec_command(argv[3], argv[4], argv + 4);
  return 127;
}

/* ---- keep: end the cgroup when Node's end of stdin closes ------------------------- */

static bool cg_populated(int dirfd) {
  int fd;
  do fd = openat(dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC); while (fd < 0 && errno == EINTR);
  if (fd < 0) return false; /* gone */
  char buf[256];
  ssize_t n = read_full(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return strstr(buf, "populated 1") != NULL;
}

/* Signals every process listed in cgroup.procs once. */
static void cg_signal_all(int dirfd, int sig) {
  int fd;
  do fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC); while (fd < 0 && errno == EINTR);
  if (fd < 0) return;
  char buf[8192];
  ssize_t n = read_full(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  for (char *p = buf; *p != '\0';) {
    char *end = NULL;
    long pid = strtol(p, &end, 10);
    if (end == p) break;
    if (pid > 1) kill((pid_t)pid, sig);
    p = end;
    while (*p == '\n') p++;
  }
}

static int mode_keep(int argc, char **argv) {
  if (argc < 3) return 2;
  /* Only EOF on stdin ends the keeper: a signal sent to a whole process group or
   * session (Ctrl-C, `timeout`, a hang-up) must not take it away before it cleaned
   * up. */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  int dirfd = open_cloexec(argv[2], O_RDONLY | O_DIRECTORY);
  if (dirfd < 0) return 0; /* already removed */
  char buf[64];
  for (;;) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* EOF (or error): Node is done with the scope or is gone */
  }
  int kfd;
  do kfd = openat(dirfd, "cgroup.kill", O_WRONLY | O_CLOEXEC); while (kfd < 0 && errno == EINTR);
  bool have_kill = kfd >= 0;
  if (have_kill) {
    write_all(kfd, "1", 1);
    close(kfd);
  }
  /* Wait for the cgroup to empty (cgroup.events changes raise POLLPRI); without
   * cgroup.kill, SIGKILL every member again on each round. */
  int efd;
  do efd = openat(dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC); while (efd < 0 && errno == EINTR);
  while (cg_populated(dirfd)) {
    if (!have_kill) cg_signal_all(dirfd, SIGKILL);
    if (efd >= 0) {
      struct pollfd p = {.fd = efd, .events = POLLPRI};
      int r = poll(&p, 1, 50);
      (void)r;
    } else {
      usleep(10000);
    }
  }
  if (efd >= 0) close(efd);
  /* Remove the directory. A process that joins after the check above (a scope
   * helper that was still entering when Node went away) makes rmdir fail with
   * EBUSY: kill again and retry, for up to 5 s. */
  for (int i = 0; i < 500; i++) {
    if (rmdir(argv[2]) == 0 || errno != EBUSY) break;
    if (have_kill) {
      do kfd = openat(dirfd, "cgroup.kill", O_WRONLY | O_CLOEXEC); while (kfd < 0 && errno == EINTR);
      if (kfd >= 0) {
        write_all(kfd, "1", 1);
        close(kfd);
      }
    } else {
      cg_signal_all(dirfd, SIGKILL);
    }
    usleep(10000);
  }
  close(dirfd);
  return 0;
}

/* ---- reap: H and the subreaper R ------------------------------------------------- */

/* The status message R sends H: how C ended. */
typedef struct {
  int32_t signalled; /* 1: killed by signal `value`; 0: exited with code `value` */
  int32_t value;
} aos_scope__status;

static int h_sigpipe_w = -1; /* H's end of the forwarding pipe */

static void h_forward(int sig) {
  int saved = errno;
  unsigned char b = (unsigned char)sig;
  ssize_t n;
  do n = write(h_sigpipe_w, &b, 1); while (n < 0 && errno == EINTR);
  errno = saved;
}

/* The signals H forwards to the command (everything a caller may send through
 * ChildProcess.kill() that a process can catch). */
static const int aos_scope__forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                                           SIGWINCH, SIGALRM, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU};

static void exit_like(const aos_scope__status *st) {
  if (!st->signalled) _exit(st->value & 0xff);
  int sig = st->value;
  /* Die of the same signal, without writing a second core dump. */
  struct rlimit nocore = {0, 0};
  setrlimit(RLIMIT_CORE, &nocore);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigaction(sig, &sa, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  kill(getpid(), sig);
  if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) kill(getpid(), SIGKILL);
  _exit(128 + sig);
}

/* Sends `sig` to every descendant. Each is found as a child of a process that is
 * itself a member, so the pid names a member unless it was reaped and reused in
 * between; a pidfd taken before signalling, and the parent re-checked after, closes
 * that gap where pidfds exist. Returns how many were signalled. */
static size_t signal_descendants(int sig) {
  enum { CAP = 4096 };
  static int pids[CAP];
  int n = aos_scope_descendants(getpid(), pids, CAP);
  size_t sent = 0;
  for (int i = 0; i < n; i++) {
    int pfd = (int)syscall(SYS_pidfd_open, pids[i], 0);
    int rc;
    if (pfd >= 0) {
      rc = (int)syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0);
      close(pfd);
    } else {
      rc = kill(pids[i], sig);
    }
    if (rc == 0) sent++;
  }
  return sent;
}

static void reap_all(int cmd, bool *cmd_done, int status_w) {
  for (;;) {
    int status = 0;
    pid_t p;
    do p = waitpid(-1, &status, WNOHANG); while (p < 0 && errno == EINTR);
    if (p <= 0) return;
    if (p == cmd && !*cmd_done) {
      *cmd_done = true;
      aos_scope__status st = {0, 0};
      if (WIFSIGNALED(status)) {
        st.signalled = 1;
        st.value = WTERMSIG(status);
      } else {
        st.value = WEXITSTATUS(status);
      }
      if (status_w >= 0) write_all(status_w, &st, sizeof st);
    }
  }
}

static bool has_children(void) {
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int rc;
  do rc = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT); while (rc < 0 && errno == EINTR);
  return rc == 0; /* ECHILD: none left */
}

/* SIGKILL everything until nothing is left, then exit. A process forked between two
 * rounds is a child of something found in this round or of R, and is found next. */
static void kill_everything(int cmd, bool *cmd_done, int status_w) {
  for (;;) {
    signal_descendants(SIGKILL);
    reap_all(cmd, cmd_done, status_w);
    if (!has_children()) break;
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  _exit(0);
}

static void run_reaper(int node_pidfd, int status_w, int sig_r, int hs_fd, char **argv) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, AOS_SCOPE_CTL_SIGNAL);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigaddset(&mask, SIGQUIT);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  if (sfd < 0) _exit(125);

  pid_t cmd = fork();
  if (cmd < 0) _exit(125);
  if (cmd == 0) {
    sigprocmask(SIG_UNBLOCK, &mask, NULL);
    exec_command(argv[3], argv[4], argv + 4);
  }
  /* A status write to an H that is gone must not kill R (set after the fork: an
   * ignored disposition would survive the command's exec). */
  signal(SIGPIPE, SIG_IGN);
  /* The handshake: R's pid, for Node to take a pidfd of and control. Written after
   * the fork, so the command inherits nothing of it (it is O_CLOEXEC as well). */
  char line[32];
  int len = snprintf(line, sizeof line, "%d\n", (int)getpid());
  write_all(hs_fd, line, (size_t)len);
  close(hs_fd);

  bool cmd_done = false;
  bool attached = false; /* Node acknowledged the handshake (took its pidfd) */
  for (;;) {
    struct pollfd p[3] = {{.fd = sfd, .events = POLLIN},
                          {.fd = node_pidfd, .events = POLLIN},
                          {.fd = sig_r, .events = POLLIN}};
    int r = poll(p, 3, node_pidfd < 0 ? 200 : -1);
    if (r < 0 && errno != EINTR) _exit(125);
    if (r > 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      kill_everything(cmd, &cmd_done, status_w); /* Node ended */
    }
    if (r > 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      unsigned char b;
      ssize_t n;
      do n = read(sig_r, &b, 1); while (n < 0 && errno == EINTR);
      if (n == 1) {
        if (!cmd_done) kill(cmd, b);
      } else {
        /* H is gone (killed itself, e.g. ChildProcess.kill('SIGKILL')): the command
         * goes with it, as it would have without the helper in between. */
        close(sig_r);
        sig_r = -1;
        if (!cmd_done) kill(cmd, SIGKILL);
      }
    }
    if (r > 0 && (p[0].revents & POLLIN)) {
      struct signalfd_siginfo si;
      ssize_t n;
      do n = read(sfd, &si, sizeof si); while (n < 0 && errno == EINTR);
      if (n == (ssize_t)sizeof si) {
        if ((int)si.ssi_signo == AOS_SCOPE_CTL_SIGNAL) {
          int what = si.ssi_int;
          if (what == 0) {
            attached = true;
          } else if (what == SIGKILL) {
            kill_everything(cmd, &cmd_done, status_w);
          } else if (what > 0 && what < 65) {
            /* Twice: a process forked while the first pass ran is found by the
             * second. Then SIGCONT, so that stopped processes act on it. */
            signal_descendants(what);
            signal_descendants(what);
            if (what != SIGSTOP) signal_descendants(SIGCONT);
          }
        } else if (si.ssi_signo != SIGCHLD) {
          /* SIGTERM and the like sent to R itself (say, by killProcessTree walking
           * from the helper): pass it to everything in the scope. */
          signal_descendants((int)si.ssi_signo);
        }
      }
    }
    reap_all(cmd, &cmd_done, status_w);
    if (cmd_done && status_w >= 0) {
      close(status_w);
      status_w = -1;
    }
    if (cmd_done && attached && !has_children()) _exit(0);
  }
}

static int mode_reap(int argc, char **argv) {
  if (argc < 5) return 2;
  int hs_fd = atoi(argv[2]);
  if (hs_fd < 3 || fcntl(hs_fd, F_SETFD, FD_CLOEXEC) < 0) return 2;
  pid_t node = getppid();
  int node_pidfd = (int)syscall(SYS_pidfd_open, node, 0);
  if (node_pidfd >= 0) fcntl(node_pidfd, F_SETFD, FD_CLOEXEC);
  /* H dies with Node; the re-check catches a Node that ended before the prctl. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != node) return 125;

  int st[2], sg[2];
  if (pipe2(st, O_CLOEXEC) < 0) return 125;
  if (pipe2(sg, O_CLOEXEC) < 0) return 125;
  h_sigpipe_w = sg[1];
  /* R is made a child of Node, not of H (CLONE_PARENT): H exits as soon as the
   * command does, and an orphaned R would be left to init to reap (a zombie on
   * hosts whose init does not). Node reaps R through its pidfd instead. */
  pid_t r = (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), 0, 0, 0, 0);
  if (r < 0) return 125;
  if (r == 0) {
    close(st[0]);
    close(sg[1]);
    run_reaper(node_pidfd, st[1], sg[0], hs_fd, argv);
    _exit(125);
  }
  close(st[1]);
  close(sg[0]);
  close(hs_fd);
  if (node_pidfd >= 0) close(node_pidfd);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = h_forward;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  /* A write to the forwarding pipe after R is gone must not kill H. */
  signal(SIGPIPE, SIG_IGN);
  for (size_t i = 0; i < sizeof aos_scope__forwarded / sizeof aos_scope__forwarded[0]; i++) {
    sigaction(aos_scope__forwarded[i], &sa, NULL);
  }
  aos_scope__status s;
  ssize_t n = read_full(st[0], &s, sizeof s);
  if (n != (ssize_t)sizeof s) {
    /* R ended without a status (SIGKILLed): report the command as killed. */
    s.signalled = 1;
    s.value = SIGKILL;
  }
  exit_like(&s);
  return 125;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (strcmp(argv[1], "cg") == 0) return mode_cg(argc, argv);
  if (strcmp(argv[1], "keep") == 0) return mode_keep(argc, argv);
  if (strcmp(argv[1], "reap") == 0) return mode_reap(argc, argv);
  return 2;
}
