/* lock_loop PATH N
 *
 * One uncontended lock cycle carried by an open handle, N times, in the order the
 * package's tryAcquire + release performs it on Linux (its syscall sequence, seen
 * with strace; the harness's syscall check compares the two on every run):
 *   lstat the path (not a symlink, not a device), open it O_RDWR | O_CREAT |
 *   O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, flock(LOCK_EX | LOCK_NB), fstat the handle
 *   (type, link count, size, identity), lstat the path again (the locked handle must
 *   still be the file there); release: flock(LOCK_UN), close. No record is written on
 *   Linux: the kernel's lock table names the holder.
 * Prints the mean ns per iteration. */
#include "bench.h"
#include <sys/file.h>

static void cycle (const char *path) {
  struct stat named, held;
  if (lstat(path, &named) != 0 && errno != ENOENT) bench_die("lstat", errno);
  int fd = bench_openat(AT_FDCWD, path, O_RDWR | O_CREAT | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) bench_die("open", errno);
  int r;
  do {
    r = flock(fd, LOCK_EX | LOCK_NB);
  } while (r != 0 && errno == EINTR);
  if (r != 0) bench_die("flock", errno);
  if (fstat(fd, &held) != 0) bench_die("fstat", errno);
  if (!S_ISREG(held.st_mode) || held.st_nlink != 1 || held.st_size != 0) bench_die("not a guard", EINVAL);
  if (lstat(path, &named) != 0) bench_die("lstat", errno);
  if (held.st_ino != named.st_ino || held.st_dev != named.st_dev) bench_die("replaced", EIO);
  /* release */
  do {
    r = flock(fd, LOCK_UN);
  } while (r != 0 && errno == EINTR);
  if (r != 0) bench_die("flock", errno);
  close(fd);
}

int main (int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: lock_loop PATH N\n");
    return 2;
  }
  long n = bench_parse_count(argv[2]);
  for (long i = 0, w = bench_warmup_count(n); i < w; i++) cycle(argv[1]);
  bench_mark("MARK");
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) cycle(argv[1]);
  uint64_t t1 = bench_now_ns();
  bench_mark("END");
  printf("%.1f\n", (double) (t1 - t0) / (double) n);
  return 0;
}
