/* mover ROOT OUTSIDE: moves ROOT/d out of the root to OUTSIDE/d, exchanges the file f in
 * it with OUTSIDE/prep (a file whose bytes never exist beneath the root), exchanges it
 * back, and moves d back (a few microseconds in each state), in a loop until killed; prints "go" once running, and on
 * SIGTERM the number of cycles. The outside bytes sit in d only while d is outside. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static volatile sig_atomic_t stop;

/* Busy-waits `us` microseconds (a sleep would give the reader whole milliseconds). */
static void spin(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}
static void on_term(int sig) {
  (void)sig;
  stop = 1;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  char in[4096], out[4096], f[4096], prep[4096];
  snprintf(in, sizeof in, "%s/d", argv[1]);
  snprintf(out, sizeof out, "%s/d", argv[2]);
  snprintf(f, sizeof f, "%s/d/f", argv[2]);
  snprintf(prep, sizeof prep, "%s/prep", argv[2]);
  signal(SIGTERM, on_term);
  unsigned long cycles = 0;
  while (!stop) {
    if (rename(in, out) != 0) return 3;
    if (renameat2(AT_FDCWD, f, AT_FDCWD, prep, RENAME_EXCHANGE) != 0) return 4;
    spin(10); /* the outside bytes in the moved-out d */
    if (renameat2(AT_FDCWD, f, AT_FDCWD, prep, RENAME_EXCHANGE) != 0) return 5;
    if (rename(out, in) != 0) return 6;
    spin(20); /* d beneath the root */
    if (cycles++ == 0) {
      fputs("go\n", stdout);
      fflush(stdout);
    }
  }
  printf("cycles %lu\n", cycles);
  return 0;
}
