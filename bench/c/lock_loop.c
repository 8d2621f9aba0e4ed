/* lock_loop PATH N
 *
 * A nonblocking lock cycle carried by an open handle, N times: open the guard file
 * (O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC), flock(LOCK_EX | LOCK_NB), fstat the
 * handle and lstat the path (the locked handle must still be the file at the path),
 * flock(LOCK_UN), close. A reference for the lock row; it has no target.
 * Prints the mean ns per iteration. */
#include "bench.h"
#include <sys/file.h>

static void cycle (const char *path) {
  int fd = bench_openat(AT_FDCWD, path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) bench_die("open", errno);
  int r;
  do {
    r = flock(fd, LOCK_EX | LOCK_NB);
  } while (r != 0 && errno == EINTR);
  if (r != 0) bench_die("flock", errno);
  struct stat held, named;
  if (fstat(fd, &held) != 0) bench_die("fstat", errno);
  if (lstat(path, &named) != 0) bench_die("lstat", errno);
  if (held.st_ino != named.st_ino || held.st_dev != named.st_dev) bench_die("replaced", EIO);
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
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) cycle(argv[1]);
  uint64_t t1 = bench_now_ns();
  printf("%.1f\n", (double) (t1 - t0) / (double) n);
  return 0;
}
