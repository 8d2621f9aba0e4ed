/* agent_os_scope_helper: the small program that process scopes start commands through
 * on Linux (see docs/process-scopes.md). Built beside the binding by binding.gyp; a
 * plain single-threaded program, so nothing here runs between fork and exec of the
 * multithreaded Node process.
 *
 *   agent_os_scope_helper run <handshake fd> <opts> <cgroup.procs|-> <uid|-> <gid|->
 *                             <argv0> <file> [args...]
 *       This process (H, the ChildProcess Node sees) clones the reaper R with
 *       CLONE_PARENT (so Node, not H, is R's parent and reaps it), and R forks the
 *       command C. `opts` is "-" or letters:
 *         n  R is cloned into a new PID and mount namespace, whose init it is: every
 *            process C starts is in that namespace, which nothing can leave, and when
 *            R exits (or is SIGKILLed from outside) the kernel kills everything in
 *            it. R mounts a fresh /proc there (after making its mounts slaves of the
 *            host's), so /proc, ps and pgrep show the namespace's own pids.
 *         u  with n: in a new user namespace too (the caller is not privileged),
 *            mapping the caller's own uid and gid only (H writes the maps).
 *         p  without n: R is a child subreaper (PR_SET_CHILD_SUBREAPER): orphans
 *            below C come back to R instead of init.
 *         d  C starts a new session (spawn's `detached`).
 *       `cgroup.procs`: C moves itself into that cgroup before anything else (H opens
 *       the file, so the check is made with H's credentials); R stays out of it, so
 *       that the cgroup's end never ends R before R ended what left the cgroup. `uid`/`gid`: C drops to
 *       them before exec, as libuv does (setgroups(0), setgid, setuid), after R
 *       entered its cgroup and namespaces: a root caller's helper sets all that up,
 *       then the command runs as the other user.
 *       H writes R's pid (as the caller sees it) on the handshake fd, then closes it;
 *       forwards to C the signals sent to H; exits with C's exact status. R reports
 *       C's status to H, stays while anything is left in its scope, and obeys Node's
 *       control signal (AOS_SCOPE_CTL_SIGNAL, from its parent only): signal
 *       everything, or kill everything and exit. R also kills everything and exits
 *       when the Node process ends (a pidfd of Node, polled), or when H ends before C
 *       does (C is SIGKILLed then, as a command whose spawner died).
 *       Every helper process is non-dumpable (no ptrace, no /proc/<pid>/mem for a
 *       process of the same user).
 *
 *   agent_os_scope_helper probe <opts>
 *       Makes the namespaces `opts` asks for, as `run` would (clone, maps, mounts),
 *       or with `p` only clones with CLONE_PARENT, and prints "ok", or the step that
 *       was refused and its errno number ("clone 1"), on stdout. The choice of a
 *       backend asks it once.
 *
 *   agent_os_scope_helper keep <cgroup dir> <cgroup path>
 *       The cgroup scope's keeper. Waits for EOF on its stdin (a pipe whose other end
 *       only the Node process holds): when Node closes it or dies, every process in
 *       the cgroup (and in any cgroup below it) is killed, the cgroups removed, and
 *       the keeper exits.
 *
 * Every descriptor is O_CLOEXEC; every loop retries EINTR (never close). A command
 * that cannot be executed ends with status 127 (126: not executable), as a shell
 * would; 125: the scope could not be set up (the command did not run). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process/scope.h"

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

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* ---- options ------------------------------------------------------------------- */

typedef struct {
  bool ns;        /* n: PID + mount namespace, R its init */
  bool userns;    /* u: and a user namespace */
  bool plain;     /* p: R is a child subreaper */
  bool detached;  /* d: C starts a new session */
  bool set_uid, set_gid;
  uid_t uid;
  gid_t gid;
} run_opts;

static bool parse_opts(const char *s, run_opts *o) {
  memset(o, 0, sizeof *o);
  if (strcmp(s, "-") == 0) return true;
  for (const char *c = s; *c != '\0'; c++) {
    switch (*c) {
      case 'n': o->ns = true; break;
      case 'u': o->userns = true; break;
      case 'p': o->plain = true; break;
      case 'd': o->detached = true; break;
      default: return false;
    }
  }
  return !(o->userns && !o->ns) && !(o->plain && o->ns);
}

static bool parse_id(const char *s, bool *set, unsigned long *out) {
  *set = false;
  if (strcmp(s, "-") == 0) return true;
  char *end = NULL;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v > 0xfffffffeUL) return false;
  *set = true;
  *out = v;
  return true;
}

/* ---- namespaces ---------------------------------------------------------------- */

/* The clone flags for `o`: R's parent is H's parent (Node), and R is in the new
 * namespaces. */
static unsigned long clone_flags(const run_opts *o) {
  unsigned long f = CLONE_PARENT | SIGCHLD;
  if (o->ns) f |= CLONE_NEWPID | CLONE_NEWNS;
  if (o->userns) f |= CLONE_NEWUSER;
  return f;
}

static pid_t clone_reaper(unsigned long flags) {
  /* A fork with flags: no new stack (the child runs on a copy of this one). */
  return (pid_t)syscall(SYS_clone, flags, 0, 0, 0, 0);
}

/* Writes `text` to /proc/<pid>/<name>. 0, or -errno. */
static int write_proc(pid_t pid, const char *name, const char *text) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
  int fd = open_cloexec(path, O_WRONLY);
  if (fd < 0) return -errno;
  ssize_t n = write_all(fd, text, strlen(text));
  int err = n < 0 ? -errno : 0;
  close(fd);
  return err;
}

/* H's part for a user namespace: R sees the caller's own uid and gid, and nothing
 * else is mapped. -errno with the step in *step on failure. */
static int write_maps(pid_t r, const char **step) {
  char line[64];
  *step = "setgroups";
  int rc = write_proc(r, "setgroups", "deny");
  if (rc < 0 && rc != -ENOENT) return rc; /* ENOENT: before 3.19, no such file */
  *step = "uid_map";
  snprintf(line, sizeof line, "%u %u 1\n", (unsigned)geteuid(), (unsigned)geteuid());
  if ((rc = write_proc(r, "uid_map", line)) < 0) return rc;
  *step = "gid_map";
  snprintf(line, sizeof line, "%u %u 1\n", (unsigned)getegid(), (unsigned)getegid());
  return write_proc(r, "gid_map", line);
}

/* R's part: its mounts become slaves of the host's (nothing it mounts shows
 * outside), and a fresh /proc shows its namespace. -errno with the step. */
static int setup_mounts(const char **step) {
  *step = "mount";
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) return -errno;
  *step = "proc";
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) return -errno;
  return 0;
}

/* ---- the command ---------------------------------------------------------------- */

static void exec_command(const run_opts *o, int cg_fd, char *argv0, char *file, char **args) {
  /* Into the scope's cgroup first (R stays out of it: cgroup.kill must not end R
   * before R has ended what left the cgroup), with the rights H opened it with. */
  if (cg_fd >= 0 && write_all(cg_fd, "0", 1) < 0) _exit(125);
  if (o->detached) setsid();
  if (o->set_uid || o->set_gid) {
    /* As libuv does: no supplementary groups, then the group, then the user. */
    if (setgroups(0, NULL) < 0 && errno != EPERM) _exit(125);
    if (o->set_gid && setgid(o->gid) < 0) _exit(125);
    if (o->set_uid && setuid(o->uid) < 0) _exit(125);
  }
  args[0] = argv0;
  execvp(file, args);
  _exit(errno == ENOENT || errno == ENOTDIR ? 127 : 126);
}

/* ---- keep: end the cgroup when Node's end of stdin closes ------------------------- */

static int mode_keep(int argc, char **argv) {
  if (argc < 4) return 2;
  /* Only EOF on stdin ends the keeper: a signal sent to a whole process group or
   * session (Ctrl-C, `timeout`, a hang-up) must not take it away before it cleaned
   * up. */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  prctl(PR_SET_DUMPABLE, 0);
  char buf[64];
  for (;;) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* EOF (or error): Node is done with the scope or is gone */
  }
  /* Kill what is left (in child cgroups a member made too), wait for it to go and
   * remove every directory; a helper that was still entering when Node went away
   * is killed by the next round. */
  (void)aos_scope_cg_remove(argv[2], argv[3], 30000);
  return 0;
}

/* ---- run: H and the reaper R ------------------------------------------------------ */

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

typedef struct {
  run_opts o;
  int cg_fd; /* the scope's cgroup.procs (O_CLOEXEC), or -1 */
  pid_t cmd;
  bool cmd_done;
  int status_w;
} reaper;

static void reap_all(reaper *r) {
  for (;;) {
    int status = 0;
    pid_t p;
    do p = waitpid(-1, &status, WNOHANG); while (p < 0 && errno == EINTR);
    if (p <= 0) return;
    if (p == r->cmd && !r->cmd_done) {
      r->cmd_done = true;
      aos_scope__status st = {0, 0};
      if (WIFSIGNALED(status)) {
        st.signalled = 1;
        st.value = WTERMSIG(status);
      } else {
        st.value = WEXITSTATUS(status);
      }
      if (r->status_w >= 0) write_all(r->status_w, &st, sizeof st);
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

/* Sends `sig` to everything in R's part of the scope. As the init of a namespace,
 * kill(-1) reaches every other process in it at once (no fork can complete during
 * it); as a plain subreaper, everything below R, walked and held by pidfds, twice (a
 * process forked while the first pass ran is found by the second). */
static void signal_all(reaper *r, int sig) {
  if (r->o.ns) {
    kill(-1, sig);
  } else {
    aos_scope_signal_below(sig);
    aos_scope_signal_below(sig);
  }
}

/* Kills everything and exits. The init of a namespace just exits: the kernel then
 * SIGKILLs every process in the namespace, and R's exit completes only once they are
 * all gone. A plain subreaper SIGKILLs everything below it until nothing is left. */
static void die_all(reaper *r) {
  if (r->o.ns) _exit(0);
  for (;;) {
    aos_scope_signal_below(SIGKILL);
    reap_all(r);
    if (!has_children()) break;
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  _exit(0);
}

/* Closes every descriptor R inherited from H (the command's stdio, an IPC channel)
 * but its own: R holding a pipe open would keep Node's 'close' of the ChildProcess
 * pending after the command and everything holding the pipe are gone. 0, 1 and 2
 * become /dev/null. */
static void close_inherited(const int *keep, size_t nkeep) {
  int fds[1024];
  size_t n = 0;
  int dfd = open_cloexec("/proc/self/fd", O_RDONLY | O_DIRECTORY);
  DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
  if (d == NULL && dfd >= 0) close(dfd);
  if (d != NULL) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < sizeof fds / sizeof fds[0]) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      int fd = atoi(e->d_name);
      if (fd != dirfd(d)) fds[n++] = fd;
    }
    closedir(d);
  } else {
    struct rlimit rl;
    int top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024 ? (int)rl.rlim_cur : 1024;
    for (int fd = 0; fd < top; fd++) fds[n++] = fd;
  }
  for (size_t i = 0; i < n; i++) {
    bool kept = false;
    for (size_t k = 0; k < nkeep; k++) kept = kept || keep[k] == fds[i];
    if (!kept) close(fds[i]);
  }
  for (int fd = 0; fd < 3; fd++) {
    bool kept = false;
    for (size_t k = 0; k < nkeep; k++) kept = kept || keep[k] == fd;
    if (kept) continue;
    int nul = open("/dev/null", O_RDWR); /* the lowest free number: fd itself */
    if (nul >= 0 && nul != fd) close(nul);
  }
}

static void run_reaper(reaper *r, int node_pidfd, int sig_r, int sfd, char **argv) {
  pid_t cmd = fork();
  if (cmd < 0) _exit(125);
  if (cmd == 0) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, NULL);
    exec_command(&r->o, r->cg_fd, argv[6], argv[7], argv + 7);
  }
  r->cmd = cmd;
  const int keep[] = {node_pidfd, sig_r, sfd, r->status_w};
  close_inherited(keep, sizeof keep / sizeof keep[0]);
  /* A status write to an H that is gone must not kill R (set after the fork: an
   * ignored disposition would survive the command's exec). */
  signal(SIGPIPE, SIG_IGN);

  bool attached = false; /* Node acknowledged the handshake (took R's pidfd) */
  for (;;) {
    struct pollfd p[3] = {{.fd = sfd, .events = POLLIN},
                          {.fd = node_pidfd, .events = POLLIN},
                          {.fd = sig_r, .events = POLLIN}};
    int n = poll(p, 3, -1);
    if (n < 0 && errno != EINTR) _exit(125);
    if (n > 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) die_all(r); /* Node ended */
    if (n > 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      unsigned char b;
      ssize_t got;
      do got = read(sig_r, &b, 1); while (got < 0 && errno == EINTR);
      if (got == 1) {
        if (!r->cmd_done) kill(r->cmd, b);
      } else {
        /* H is gone (killed itself, e.g. ChildProcess.kill('SIGKILL')): the command
         * goes with it, as it would have without the helper in between. */
        close_fd(&sig_r);
        if (!r->cmd_done) kill(r->cmd, SIGKILL);
      }
    }
    if (n > 0 && (p[0].revents & POLLIN)) {
      struct signalfd_siginfo si;
      ssize_t got;
      do got = read(sfd, &si, sizeof si); while (got < 0 && errno == EINTR);
      if (got == (ssize_t)sizeof si && (int)si.ssi_signo == AOS_SCOPE_CTL_SIGNAL) {
        /* Only from the parent (Node: pid 0 here when R is a namespace's init, as
         * for any sender outside it), queued with a value. A process inside can
         * forge both (rt_sigqueueinfo), but can only ask for what it could do
         * itself: signal or end the scope it is in. */
        int what = si.ssi_int;
        if (si.ssi_code != SI_QUEUE || si.ssi_pid != (uint32_t)getppid()) {
          /* not Node's */
        } else if (what == 0) {
          attached = true;
        } else if (what == SIGKILL) {
          die_all(r);
        } else if (what > 0 && what < 65) {
          signal_all(r, what);
          if (what != SIGSTOP) signal_all(r, SIGCONT); /* stopped processes act on it */
        }
      } else if (got == (ssize_t)sizeof si && r->o.plain && si.ssi_signo != SIGCHLD) {
        /* A plain subreaper's SIGTERM and the like (say, killProcessTree walking
         * from the helper): passed to everything in the scope. */
        signal_all(r, (int)si.ssi_signo);
      }
    }
    reap_all(r);
    if (r->cmd_done) close_fd(&r->status_w);
    if (r->cmd_done && attached && !has_children()) _exit(0);
  }
}

/* R's setup, in the new namespaces: wait for H's maps, mounts, cgroup, then run. */
static void reaper_main(reaper *r, int sync_r, int cg_fd, int node_pidfd, int sig_r, char **argv) {
  char go = 0;
  if (read_full(sync_r, &go, 1) != 1 || go != '1') _exit(125);
  close(sync_r);
  /* From here no process of the same user may ptrace R or write its memory. */
  prctl(PR_SET_DUMPABLE, 0);
  const char *step = NULL;
  if (r->o.ns && setup_mounts(&step) < 0) _exit(125);
  r->cg_fd = cg_fd;
  if (r->o.plain) prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, AOS_SCOPE_CTL_SIGNAL);
  if (r->o.plain) {
    /* A plain subreaper is a process like any other: these would end it. */
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGQUIT);
  }
  /* The init of a namespace ignores every other signal it has no handler for (the
   * kernel drops them), SIGKILL from outside the namespace excepted. */
  sigprocmask(SIG_BLOCK, &mask, NULL);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  if (sfd < 0) _exit(125);
  run_reaper(r, node_pidfd, sig_r, sfd, argv);
}

static int mode_run(int argc, char **argv) {
  if (argc < 9) return 2;
  /* argv[2]: "<handshake fd>:<Node's pid>" (Node's pid as Node sees it, which is H's
   * parent's pid here: H is spawned by Node itself). */
  int hs_fd = atoi(argv[2]);
  const char *colon = strchr(argv[2], ':');
  long node_expected = colon != NULL ? atol(colon + 1) : 0;
  if (hs_fd < 3 || node_expected <= 0 || fcntl(hs_fd, F_SETFD, FD_CLOEXEC) < 0) return 2;
  reaper r;
  memset(&r, 0, sizeof r);
  r.status_w = -1;
  unsigned long uid = 0, gid = 0;
  if (!parse_opts(argv[3], &r.o) || !parse_id(argv[5], &r.o.set_uid, &uid) || !parse_id(argv[6], &r.o.set_gid, &gid)) return 2;
  r.o.uid = (uid_t)uid;
  r.o.gid = (gid_t)gid;
  /* argv from here: [6] argv0, [7] file, [8...] args (run_reaper's view). */
  argv += 1;

  /* Node must still be H's parent: a Node that ended before H ran left H to init (or
   * a subreaper), whose pid getppid() then gives; watching that instead would keep the
   * scope alive for good (red team: 7 of 225 Node SIGKILLs right after spawn, as
   * nobody). */
  pid_t node = getppid();
  if ((long)node != node_expected) return 125;
  int node_pidfd = -1;
  if (aos_scope_pidfd_open((int)node, &node_pidfd) < 0) return 125;
  /* H dies with Node; the re-check catches a Node that ended before the prctl. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != node) return 125;

  int cg_fd = -1;
  if (strcmp(argv[3], "-") != 0) {
    cg_fd = open_cloexec(argv[3], O_WRONLY);
    if (cg_fd < 0) return 125;
  }
  int st[2], sg[2], sy[2];
  if (pipe2(st, O_CLOEXEC) < 0) return 125;
  if (pipe2(sg, O_CLOEXEC) < 0) return 125;
  if (pipe2(sy, O_CLOEXEC) < 0) return 125;
  h_sigpipe_w = sg[1];
  pid_t rp = clone_reaper(clone_flags(&r.o));
  if (rp < 0) return 125;
  if (rp == 0) {
    /* First: the control signal is queued from now on. Node learns R's pid only
     * after this (H writes it once R is set up), and a namespace's init drops a
     * signal it neither blocks nor handles. */
    sigset_t ctl;
    sigemptyset(&ctl);
    sigaddset(&ctl, AOS_SCOPE_CTL_SIGNAL);
    sigaddset(&ctl, SIGCHLD);
    sigprocmask(SIG_BLOCK, &ctl, NULL);
    close(st[0]);
    close(sg[1]);
    close(sy[1]);
    close(hs_fd);
    r.status_w = st[1];
    reaper_main(&r, sy[0], cg_fd, node_pidfd, sg[0], argv);
    _exit(125);
  }
  close(st[1]);
  close(sg[0]);
  close(sy[0]);
  close_fd(&cg_fd);
  close_fd(&node_pidfd);
  const char *step = NULL;
  if (r.o.userns && write_maps(rp, &step) < 0) {
    kill(rp, SIGKILL); /* R is this process's sibling: same user, not set up yet */
    return 125;
  }
  /* Only now (R inherits it, and a non-dumpable R's maps could not be written):
   * no process of the same user may ptrace H or write its memory. */
  prctl(PR_SET_DUMPABLE, 0);
  write_all(sy[1], "1", 1);
  close(sy[1]);
  /* The handshake: R's pid, for Node to take a pidfd of and control. */
  char line[32];
  int len = snprintf(line, sizeof line, "%d\n", (int)rp);
  write_all(hs_fd, line, (size_t)len);
  close(hs_fd);

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

/* ---- probe: can this user make those namespaces here? ----------------------------- */

/* probe p: whether clone(CLONE_PARENT) works here at all (qemu-user refuses it). An
 * intermediate child X makes the clone, so that the clone's parent is this process
 * (X's parent), which reaps it, and never the Node process. */
static int probe_clone_parent(void) {
  int rep[2];
  if (pipe2(rep, O_CLOEXEC) < 0) {
    printf("pipe %d\n", errno);
    return 0;
  }
  pid_t x = fork();
  if (x < 0) {
    printf("fork %d\n", errno);
    return 0;
  }
  if (x == 0) {
    close(rep[0]);
    pid_t c = clone_reaper(CLONE_PARENT | SIGCHLD);
    if (c == 0) _exit(0);
    int err = c < 0 ? errno : 0;
    write_all(rep[1], &err, sizeof err);
    _exit(0);
  }
  close(rep[1]);
  int err = -1;
  if (read_full(rep[0], &err, sizeof err) != (ssize_t)sizeof err) err = EIO;
  close(rep[0]);
  /* X, and the clone when there was one: both children of this process now. */
  for (;;) {
    pid_t w = waitpid(-1, NULL, 0);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) break;
  }
  if (err == 0) printf("ok\n");
  else printf("clone %d\n", err);
  return 0;
}

static int mode_probe(int argc, char **argv) {
  if (argc < 3) return 2;
  run_opts o;
  if (!parse_opts(argv[2], &o)) return 2;
  if (o.plain) return probe_clone_parent();
  if (!o.ns) return 2;
  int sy[2], rep[2];
  if (pipe2(sy, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
    printf("pipe %d\n", errno);
    return 0;
  }
  /* Not CLONE_PARENT here: the probe waits for its own child. */
  unsigned long flags = (clone_flags(&o) & ~(unsigned long)CLONE_PARENT);
  pid_t c = clone_reaper(flags);
  if (c < 0) {
    printf("clone %d\n", errno);
    return 0;
  }
  if (c == 0) {
    close(sy[1]);
    close(rep[0]);
    char go = 0;
    if (read_full(sy[0], &go, 1) != 1) _exit(1);
    const char *step = NULL;
    int rc = setup_mounts(&step);
    char msg[64];
    int len = rc < 0 ? snprintf(msg, sizeof msg, "%s %d\n", step, -rc) : snprintf(msg, sizeof msg, "ok\n");
    write_all(rep[1], msg, (size_t)len);
    _exit(0);
  }
  close(sy[0]);
  close(rep[1]);
  const char *step = NULL;
  int rc = o.userns ? write_maps(c, &step) : 0;
  if (rc < 0) {
    kill(c, SIGKILL);
    printf("%s %d\n", step, -rc);
  } else {
    write_all(sy[1], "1", 1);
    char msg[64] = {0};
    ssize_t n = read_full(rep[0], msg, sizeof msg - 1);
    printf("%s", n > 0 ? msg : "child 0\n");
  }
  close(sy[1]);
  int status;
  while (waitpid(c, &status, 0) < 0 && errno == EINTR) {
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (strcmp(argv[1], "run") == 0) return mode_run(argc, argv);
  if (strcmp(argv[1], "keep") == 0) return mode_keep(argc, argv);
  if (strcmp(argv[1], "probe") == 0) return mode_probe(argc, argv);
  return 2;
}
