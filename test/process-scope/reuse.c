/* A plain subreaper's walk (aos_scope_signal_below, src/process/scope_linux.c) never
 * signals a pid that was reaped and given to another process between the read of a
 * children list and the pidfd taken of it. Run as pid 1 of a private pid namespace
 * (unshare --pid --fork --mount-proc, as root: it steers ns_last_pid).
 *
 * pid 1 (this program) forks T, the subreaper, and on T's request forks a stranger S
 * on a pid T names (ns_last_pid), as a child of its own, not of T. T forks two
 * members A and B and walks below itself with SIGTERM; in the moment after the list
 * [A, B] was read (the test's hook), T kills and reaps A and has S made on A's pid.
 * S must not be signalled (its parent is not T); B must be. Prints "ok", "skip: ..."
 * or what went wrong. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process/scope.h"

static int req_w = -1, ans_r = -1;
static pid_t member_a = -1;
static pid_t stranger = -1;
static int hooked = 0;

static void nap(void) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

static void hook(const int *pids, size_t n, void *ctx) {
  (void)ctx;
  if (hooked++ != 0) return;
  int listed = 0;
  for (size_t i = 0; i < n; i++) listed += pids[i] == member_a;
  if (!listed) return;
  kill(member_a, SIGKILL);
  while (waitpid(member_a, NULL, 0) < 0 && errno == EINTR) {
  }
  int want = (int)member_a;
  if (write(req_w, &want, sizeof want) != (ssize_t)sizeof want) return;
  int got = -1;
  if (read(ans_r, &got, sizeof got) != (ssize_t)sizeof got) return;
  stranger = got;
}

static int run_t(void) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  member_a = fork();
  if (member_a == 0) {
    for (;;) pause();
  }
  pid_t b = fork();
  if (b == 0) {
    for (;;) pause();
  }
  nap(); /* both listed in /proc/<T>/task/<T>/children */
  int sent = aos_scope_signal_below_hooked(SIGTERM, hook, NULL);
  int status = 0;
  while (waitpid(b, &status, 0) < 0 && errno == EINTR) {
  }
  if (stranger != member_a) return 3; /* the pid could not be steered */
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) return 4;
  return sent == 1 ? 0 : 5;
}

int main(void) {
  if (getpid() != 1) {
    puts("skip: not pid 1 of a pid namespace");
    return 0;
  }
  int req[2], ans[2];
  if (pipe(req) < 0 || pipe(ans) < 0) return 1;
  pid_t t = fork();
  if (t == 0) {
    close(req[0]);
    close(ans[1]);
    req_w = req[1];
    ans_r = ans[0];
    _exit(run_t());
  }
  close(req[1]);
  close(ans[0]);
  pid_t s = -1;
  int want;
  if (read(req[0], &want, sizeof want) == (ssize_t)sizeof want) {
    int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
    char line[32];
    int len = snprintf(line, sizeof line, "%d", want - 1);
    if (fd >= 0 && write(fd, line, (size_t)len) == len) {
      s = fork();
      if (s == 0) {
        for (;;) pause();
      }
    }
    if (fd >= 0) close(fd);
    int got = (int)s;
    if (write(ans[1], &got, sizeof got) != (ssize_t)sizeof got) return 1;
  }
  int tstatus = 0;
  while (waitpid(t, &tstatus, 0) < 0 && errno == EINTR) {
  }
  int code = WIFEXITED(tstatus) ? WEXITSTATUS(tstatus) : 100;
  if (code == 3) {
    puts("skip: ns_last_pid could not steer the stranger onto the reaped pid");
  } else if (s > 0 && waitpid(s, NULL, WNOHANG) != 0) {
    puts("the stranger on the reaped pid was signalled");
  } else if (code != 0) {
    printf("the walk went wrong (%d)\n", code);
  } else {
    puts("ok");
  }
  if (s > 0) kill(s, SIGKILL);
  return 0;
}
