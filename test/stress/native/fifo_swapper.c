/* fifo_swapper DIR: exchanges DIR/name (at first a regular file holding "FILE") with
 * DIR/spare and DIR/idle, two FIFOs, in turn, with renameat2(RENAME_EXCHANGE), until
 * killed, printing "go" once the loop runs; so the name holds the file, one FIFO or
 * the other. `spare` is held open read-write here and kept filled with "FIFO" bytes:
 * a read that ever read it would return them. `idle` is opened by no one: an open of
 * it for reading that could block would block forever. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  int dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 3;
  int f = openat(dir, "name", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f < 0 || write(f, "FILE", 4) != 4) return 3;
  close(f);
  if (mkfifoat(dir, "spare", 0644) != 0 || mkfifoat(dir, "idle", 0644) != 0) return 3;
  int p = openat(dir, "spare", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (p < 0) return 3;
  for (unsigned long i = 0;; i++) {
    if (i % 64 == 0) {
      ssize_t n = write(p, "FIFO", 4); /* EAGAIN: full, as it should stay */
      (void)n;
    }
    const char *other = (i & 1) ? "idle" : "spare";
    if (syscall(SYS_renameat2, dir, "name", dir, other, RENAME_EXCHANGE) != 0) return 4;
    if (i == 0) {
      fputs("go\n", stdout);
      fflush(stdout);
    }
  }
}
