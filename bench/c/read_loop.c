/* read_loop MODE ROOT REL N
 *
 * The syscall sequence of a rooted, checked whole-file read, N times:
 *   resolve REL beneath ROOT (MODE "openat2": one openat2 with RESOLVE_BENEATH |
 *   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS; MODE "walk": openat per directory
 *   component with O_DIRECTORY | O_NOFOLLOW, then openat of the final name with
 *   O_NOFOLLOW | O_NONBLOCK), fstat (regular file? size), a fresh buffer of that
 *   size, read until full, one more read that must return 0 (nothing beyond the
 *   size), fstat again (same identity, size and mtime), close, free.
 * The root directory is opened once, outside the loop, as an authority retains it.
 * Prints the mean ns per iteration. */
#include "bench.h"

static int open_final (int rootfd, const char *rel, int use_openat2) {
  int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  if (use_openat2) return bench_openat2(rootfd, rel, flags);
  char dir[4096];
  const char *name = bench_split(rel, dir, sizeof dir);
  if (dir[0] == '\0') return bench_openat(rootfd, name, flags, 0);
  int dfd = bench_open_dir(rootfd, dir, 0);
  if (dfd < 0) return -1;
  int fd = bench_openat(dfd, name, flags, 0);
  int saved = errno;
  close(dfd);
  errno = saved;
  return fd;
}

static unsigned read_once (int rootfd, const char *rel, int use_openat2) {
  int fd = open_final(rootfd, rel, use_openat2);
  if (fd < 0) bench_die("open", errno);
  struct stat before, after;
  if (fstat(fd, &before) != 0) bench_die("fstat", errno);
  if (!S_ISREG(before.st_mode)) bench_die("not a regular file", EINVAL);
  size_t size = (size_t) before.st_size;
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) bench_die("malloc", ENOMEM);
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fd, buf + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) bench_die("read", errno);
    if (r == 0) bench_die("file shrank", EIO);
    got += (size_t) r;
  }
  unsigned char extra;
  ssize_t r;
  do {
    r = read(fd, &extra, 1);
  } while (r < 0 && errno == EINTR);
  if (r != 0) bench_die("file grew", EIO);
  if (fstat(fd, &after) != 0) bench_die("fstat", errno);
  if (after.st_ino != before.st_ino || after.st_dev != before.st_dev ||
      after.st_size != before.st_size ||
      after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
      after.st_mtim.tv_nsec != before.st_mtim.tv_nsec) bench_die("file changed", EIO);
  close(fd);
  unsigned sink = size ? buf[size - 1] : 0;
  free(buf);
  return sink;
}

int main (int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: read_loop openat2|walk ROOT REL N\n");
    return 2;
  }
  int use_openat2 = strcmp(argv[1], "openat2") == 0;
  if (!use_openat2 && strcmp(argv[1], "walk") != 0) bench_die("mode", EINVAL);
  long n = bench_parse_count(argv[4]);
  int rootfd = bench_openat(AT_FDCWD, argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (rootfd < 0) bench_die("open root", errno);
  if (use_openat2) {
    int probe = bench_openat2(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (probe < 0 && errno == ENOSYS) {
      printf("ENOSYS\n");
      return 3;
    }
    if (probe >= 0) close(probe);
  }
  volatile unsigned sink = 0;
  for (long i = 0, w = bench_warmup_count(n); i < w; i++) sink += read_once(rootfd, argv[3], use_openat2);
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) sink += read_once(rootfd, argv[3], use_openat2);
  uint64_t t1 = bench_now_ns();
  printf("%.1f\n", (double) (t1 - t0) / (double) n);
  (void) sink;
  return 0;
}
