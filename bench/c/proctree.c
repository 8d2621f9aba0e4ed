/* proctree N [--ignore-term I] [--setsid I]
 *
 * Builds a tree of N processes (this one is index 0; process i is the parent of
 * processes FANOUT*i+1 .. FANOUT*i+FANOUT, FANOUT 4), each of which then waits for a
 * signal. Process I of --ignore-term ignores SIGTERM; process I of --setsid calls
 * setsid() and so leaves the root's process group and session while staying a
 * descendant. Every process other than the root writes its pid to a pipe once set
 * up; when all N-1 have reported, the root prints "ready PID0 PID1 ..." (all N pids)
 * on stdout and then waits like the others. Descendants' stdin and stdout are
 * /dev/null, so only the root holds the harness's pipe. */
#include "bench.h"
#include <signal.h>

#define FANOUT 4

static long n;
static long ignore_term = -1;
static long escapee = -1;
static int report_fd = -1;

static void become (long index);

static void spawn_children (long index) {
  for (long c = FANOUT * index + 1; c <= FANOUT * index + FANOUT && c < n; c++) {
    pid_t pid = fork();
    if (pid < 0) bench_die("fork", errno);
    if (pid == 0) {
      become(c);
      _exit(0);
    }
  }
}

static void wait_forever (void) {
  for (;;) pause();
}

static void become (long index) {
  /* A disposition set to ignore is inherited across fork: only member I ignores. */
  signal(SIGTERM, index == ignore_term ? SIG_IGN : SIG_DFL);
  if (index == escapee && setsid() < 0) bench_die("setsid", errno);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    close(null);
  }
  spawn_children(index);
  int32_t pid = (int32_t) getpid();
  ssize_t r;
  do {
    r = write(report_fd, &pid, sizeof pid);
  } while (r < 0 && errno == EINTR);
  close(report_fd);
  wait_forever();
}

int main (int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: proctree N [--ignore-term I] [--setsid I]\n");
    return 2;
  }
  n = bench_parse_count(argv[1]);
  for (int i = 2; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--ignore-term") == 0) ignore_term = strtol(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--setsid") == 0) escapee = strtol(argv[i + 1], NULL, 10);
    else bench_die("option", EINVAL);
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) bench_die("pipe", errno);
  report_fd = fds[1];
  if (ignore_term == 0) signal(SIGTERM, SIG_IGN);
  spawn_children(0);
  close(fds[1]);
  int32_t *pids = calloc((size_t) n, sizeof *pids);
  if (!pids) bench_die("calloc", ENOMEM);
  pids[0] = (int32_t) getpid();
  size_t want = (size_t) (n - 1) * sizeof *pids, got = 0;
  while (got < want) {
    ssize_t r = read(fds[0], (char *) (pids + 1) + got, want - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) bench_die("read", r < 0 ? errno : EPIPE);
    got += (size_t) r;
  }
  close(fds[0]);
  printf("ready");
  for (long i = 0; i < n; i++) printf(" %d", (int) pids[i]);
  printf("\n");
  fflush(stdout);
  wait_forever();
}
