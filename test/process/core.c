/* The C core of the process primitive on its own, without Node-API: built and run
 * by test/process/core.test.js against src/process/{posix,linux}.c. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "process/process.h"

static int failures = 0;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static void nap(void) {
  struct timespec ts = {0, 5 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

/* A child in its own group (when `own_group`) with a grandchild whose command name
 * is hostile to naive /proc/<pid>/stat parsing. Both wait for a signal. */
static pid_t spawn_pair(int own_group, int ready[2]) {
  pid_t child = fork();
  if (child == 0) {
    if (own_group) setpgid(0, 0);
    pid_t grand = fork();
    if (grand == 0) {
      prctl(PR_SET_NAME, "x) S 1 1 (y", 0, 0, 0);
      if (write(ready[1], "g", 1) != 1) _exit(2);
      for (;;) pause();
    }
    if (write(ready[1], "c", 1) != 1) _exit(2);
    for (;;) pause();
  }
  char b[2];
  for (size_t got = 0; got < 2;) { /* both are up */
    ssize_t r = read(ready[0], b + got, 2 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  nap();                                     /* and the name is set */
  return child;
}

static int wait_gone(aos_proc_tree *t) {
  for (int i = 0; i < 2000; i++) {
    if (aos_proc_tree_alive(t, false) == 0) return 1;
    nap();
  }
  return 0;
}

static void run(unsigned flags, int own_group) {
  int ready[2];
  if (pipe(ready) != 0) abort();
  pid_t child = spawn_pair(own_group, ready);
  if (child <= 0) {
    fprintf(stderr, "could not start the tree\n");
    exit(1);
  }
  aos_proc_tree *t = NULL;
  CHECK(aos_proc_tree_open(child, flags, &t) == 0);
  size_t n = 0;
  CHECK(aos_proc_tree_signal(t, SIGTERM, &n) == 0);
  CHECK(n == 2); /* the child and the grandchild */
  int pids[4];
  CHECK(aos_proc_tree_pids(t, pids, 4) == 2);
  CHECK(pids[0] == child);
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  CHECK(wait_gone(t));
  /* Nothing left: a second signal reaches nobody. */
  CHECK(aos_proc_tree_signal(t, SIGKILL, &n) == 0);
  CHECK(n == 0);
  aos_proc_tree_close(t);
  close(ready[0]);
  close(ready[1]);
}

int main(void) {
  aos_proc_tree *t = NULL;
  CHECK(aos_proc_tree_open(getpid(), 0, &t) == -EINVAL);
  CHECK(aos_proc_tree_open(0, 0, &t) == -EINVAL);
  aos_proc_tree_close(NULL);
  for (unsigned flags = 0; flags <= AOS_PROC_NO_PIDFD; flags += AOS_PROC_NO_PIDFD) {
    run(flags, 1);
    run(flags, 0);
  }
  if (failures == 0) printf("ok\n");
  return failures == 0 ? 0 : 1;
}
