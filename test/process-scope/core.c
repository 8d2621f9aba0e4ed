/* The process-scope C core alone (src/process/scope_linux.c, no Node-API).
 *
 * aos_scope_cg_signal must never reap a process: the command of a cgroup scope is the
 * Node process's own child, which only libuv may reap (else its 'exit' is never
 * emitted and kill() waits for it forever). A cgroup's signal pass can meet that child
 * after it exited and before Node reaped it (listed when cgroup.procs was read, a
 * zombie when checked). That moment is made here deterministic: the list given to
 * aos_scope_cg_signal (a directory of ours whose cgroup.procs names the pid) holds
 * a child of this program that has exited and is not reaped. Prints "ok". */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process/scope.h"

static int failures = 0;

#define CHECK(cond, what)                      \
  do {                                         \
    if (!(cond)) {                             \
      fprintf(stderr, "FAILED: %s\n", what);   \
      failures++;                              \
    }                                          \
  } while (0)

/* This process's cgroup v2 path ("0::<path>" of /proc/self/cgroup). */
static int own_cgroup(char *out, size_t cap) {
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (f == NULL) return -1;
  char line[4096];
  int rc = -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "0::", 3) != 0) continue;
    line[strcspn(line, "\n")] = '\0';
    snprintf(out, cap, "%s", line + 3);
    rc = 0;
  }
  fclose(f);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  char cgpath[4096];
  if (own_cgroup(cgpath, sizeof cgpath) != 0) {
    puts("skip: no cgroup v2 line in /proc/self/cgroup");
    return 0;
  }
  pid_t child = fork();
  if (child == 0) _exit(7);
  CHECK(child > 0, "fork");
  /* Wait until it is a zombie, without reaping it. */
  siginfo_t si;
  memset(&si, 0, sizeof si);
  CHECK(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT) == 0, "waitid WNOWAIT");
  char procs[4096];
  snprintf(procs, sizeof procs, "%s/cgroup.procs", argv[1]);
  FILE *f = fopen(procs, "we");
  CHECK(f != NULL, "write the list");
  if (f != NULL) {
    fprintf(f, "%d\n", (int)child);
    fclose(f);
  }
  for (int sig = SIGTERM, pass = 0; pass < 3; pass++) {
    int sent = aos_scope_cg_signal(argv[1], cgpath, pass == 2 ? SIGCONT : sig);
    CHECK(sent == 0, "an exited process was signalled");
  }
  /* Still ours to reap, with its status. */
  memset(&si, 0, sizeof si);
  int w = waitid(P_PID, (id_t)child, &si, WEXITED | WNOHANG);
  CHECK(w == 0 && si.si_pid == child, "the exited child was reaped by aos_scope_cg_signal");
  CHECK(si.si_code == CLD_EXITED && si.si_status == 7, "the child's status");
  /* aos_scope_exited, which does reap (the subreaper's own helper), still reports. */
  pid_t other = fork();
  if (other == 0) _exit(0);
  int pfd = -1;
  CHECK(aos_scope_pidfd_open((int)other, &pfd) == 0, "pidfd_open");
  memset(&si, 0, sizeof si);
  CHECK(waitid(P_PID, (id_t)other, &si, WEXITED | WNOWAIT) == 0, "waitid WNOWAIT (2)");
  CHECK(aos_scope_exited(pfd) == 1, "aos_scope_exited of an exited child");
  CHECK(waitpid(other, NULL, WNOHANG) < 0 && errno == ECHILD, "aos_scope_exited reaps its own");
  close(pfd);
  if (failures != 0) return 1;
  puts("ok");
  return 0;
}
