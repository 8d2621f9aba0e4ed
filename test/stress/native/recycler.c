/* recycler NS_LAST_PID: hands pids that were just freed to strangers.
 *
 * Reads one pid per line on stdin. For each, it writes pid - 1 to NS_LAST_PID (the
 * kernel's last allocated pid of this pid namespace; root only) and forks at once, so
 * that the child gets that very pid unless another fork came first. A child that got
 * another pid exits at once (a miss). A child that got it is a stranger: it starts a
 * session of its own and waits, and any signal that reaches it shows (every catchable
 * signal makes it exit with 64 + the signal's number; SIGKILL kills it and SIGSTOP stops
 * it). Prints "hit PID" or "miss PID" for each line read.
 *
 * On end of input it looks at every stranger without waiting (waitpid with WNOHANG,
 * WUNTRACED and WCONTINUED: any change means a signal reached it, since nothing else
 * ends it), kills them all, and prints "strangers H signalled S". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_STRANGERS 65536

static void on_signal(int sig) { _exit(64 + sig); }

static int steer(const char *ns_last_pid, long pid) {
  int fd;
  do fd = open(ns_last_pid, O_WRONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return -1;
  char text[32];
  int len = snprintf(text, sizeof text, "%ld", pid - 1);
  ssize_t n;
  do n = write(fd, text, (size_t)len);
  while (n < 0 && errno == EINTR);
  close(fd);
  return n == len ? 0 : -1;
}

static void stranger(void) {
  setsid();
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &sa, NULL); /* fails for the signals that cannot be caught */
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (;;) pause();
}

static pid_t reap(pid_t pid, int *status, int flags) {
  pid_t r;
  do r = waitpid(pid, status, flags);
  while (r < 0 && errno == EINTR);
  return r;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  static pid_t strangers[MAX_STRANGERS];
  size_t count = 0;
  char line[64];
  setvbuf(stdout, NULL, _IOLBF, 0);
  while (fgets(line, sizeof line, stdin) != NULL) {
    long want = strtol(line, NULL, 10);
    if (want < 2 || count == MAX_STRANGERS) {
      printf("miss %ld\n", want);
      continue;
    }
    if (steer(argv[1], want) != 0) {
      printf("miss %ld\n", want);
      continue;
    }
    pid_t child = fork();
    if (child == 0) {
      if (getpid() != (pid_t)want) _exit(0);
      stranger();
    }
    if (child < 0) return 3;
    if (child == (pid_t)want) {
      strangers[count++] = child;
      printf("hit %ld\n", want);
    } else {
      int status;
      reap(child, &status, 0);
      printf("miss %ld\n", want);
    }
  }
  size_t signalled = 0;
  for (size_t i = 0; i < count; i++) {
    int status;
    if (reap(strangers[i], &status, WNOHANG | WUNTRACED | WCONTINUED) != 0) signalled++;
    kill(strangers[i], SIGKILL);
    reap(strangers[i], &status, 0);
  }
  printf("strangers %zu signalled %zu\n", count, signalled);
  return 0;
}
