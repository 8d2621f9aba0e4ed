/* subreaper COMMAND [ARG...]
 *
 * Runs COMMAND as a child of a child subreaper (PR_SET_CHILD_SUBREAPER): processes
 * orphaned inside the command's trees are re-parented here and reaped, as init does
 * on an ordinary host. (Some container inits never reap, and orphaned zombies would
 * pile up across bench runs.) When COMMAND exits, any process still re-parented here
 * is sent SIGKILL and reaped, so nothing a bench run started outlives it. Exits with
 * COMMAND's status. */
#include "bench.h"
#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static volatile sig_atomic_t pending_signal;

static void on_signal (int sig) {
  pending_signal = sig;
}

static int kill_adopted (pid_t self) {
  DIR *proc = opendir("/proc");
  if (!proc) return 0;
  int found = 0;
  struct dirent *e;
  while ((e = readdir(proc)) != NULL) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0) continue;
    buf[len] = '\0';
    char *close_paren = strrchr(buf, ')');
    char state;
    long ppid;
    if (!close_paren || sscanf(close_paren + 1, " %c %ld", &state, &ppid) != 2) continue;
    if (ppid == (long) self) {
      kill((pid_t) pid, SIGKILL);
      found = 1;
    }
  }
  closedir(proc);
  return found;
}

int main (int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: subreaper COMMAND [ARG...]\n");
    return 2;
  }
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) bench_die("prctl", errno);
  pid_t child = fork();
  if (child < 0) bench_die("fork", errno);
  if (child == 0) {
    execvp(argv[1], argv + 1);
    bench_die("exec", errno);
  }
  /* Ctrl-C reaches the whole foreground group anyway; a SIGTERM or SIGHUP sent to
   * this process alone is passed on to COMMAND, and reaping goes on. */
  signal(SIGINT, SIG_IGN);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  int status = 0, child_status = 0, child_done = 0;
  for (;;) {
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR) {
      int sig = pending_signal;
      pending_signal = 0;
      if (sig != 0 && !child_done) kill(child, sig);
      continue;
    }
    if (pid < 0) {
      if (errno == ECHILD) break;
      bench_die("waitpid", errno);
    }
    if (pid == child) {
      child_status = status;
      child_done = 1;
    }
    if (child_done) kill_adopted(getpid());
  }
  if (WIFEXITED(child_status)) return WEXITSTATUS(child_status);
  return 128 + (WIFSIGNALED(child_status) ? WTERMSIG(child_status) : 0);
}
