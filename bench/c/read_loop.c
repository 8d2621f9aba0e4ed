/* read_loop MODE ROOT REL N
 *
 * A rooted, checked whole-file read, N times, as the package's readBytesSync performs
 * it (its syscall sequence, seen with strace; the harness's syscall check compares
 * the two on every run):
 *   fstat the root (still there?), resolve the parent directory of REL beneath ROOT
 *   as an O_PATH descriptor (MODE "openat2": one openat2 with RESOLVE_BENEATH |
 *   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS; MODE "walk": openat per component
 *   with O_DIRECTORY | O_NOFOLLOW, closing the previous one), fstatat the final name
 *   without following links (a regular file?), openat it O_NOFOLLOW | O_NONBLOCK,
 *   close the parent, fstat (size), pread from offset 0 into a fresh buffer of
 *   size bytes until it is full, then a one-byte pread at offset size into a byte of
 *   its own (it returns 0 for an unchanged file; a byte would mean the file grew),
 *   fstat again (same identity, size and mtime), close, free.
 * This is the path of a file at rest; the package reads a file modified within the
 * last second twice, behind an lseek(SEEK_DATA) barrier, and the bench's fixtures are
 * dated an hour back so that they take the ordinary path.
 * The root directory is opened once, outside the loop, as an authority retains it.
 * Prints the mean ns per iteration. */
#include "bench.h"

static int open_final (int rootfd, const char *rel, int use_openat2) {
  char dir[4096];
  const char *name = bench_split(rel, dir, sizeof dir);
  int dfd = rootfd;
  if (dir[0] != '\0') {
    dfd = bench_open_dir(rootfd, dir, use_openat2, O_PATH);
    if (dfd < 0) return -1;
  }
  struct stat st;
  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) bench_die("fstatat", errno);
  if (!S_ISREG(st.st_mode)) bench_die("not a regular file", EINVAL);
  int fd = bench_openat(dfd, name, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0);
  int saved = errno;
  if (dfd != rootfd) close(dfd);
  errno = saved;
  return fd;
}

static unsigned read_once (int rootfd, const char *rel, int use_openat2) {
  struct stat root;
  if (fstat(rootfd, &root) != 0) bench_die("fstat root", errno);
  int fd = open_final(rootfd, rel, use_openat2);
  if (fd < 0) bench_die("open", errno);
  struct stat before, after;
  if (fstat(fd, &before) != 0) bench_die("fstat", errno);
  size_t size = (size_t) before.st_size;
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) bench_die("malloc", ENOMEM);
  /* Reads the size, then probes one byte past it: a byte there means the file grew. */
  size_t got = 0;
  while (got < size) {
    ssize_t r = pread(fd, buf + got, size - got, (off_t) got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) bench_die("read", errno);
    if (r == 0) break;
    got += (size_t) r;
  }
  if (got != size) bench_die("file changed size", EIO);
  unsigned char probe;
  ssize_t extra;
  do {
    extra = pread(fd, &probe, 1, (off_t) size);
  } while (extra < 0 && errno == EINTR);
  if (extra != 0) bench_die("file grew", EIO);
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
  bench_mark("MARK");
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) sink += read_once(rootfd, argv[3], use_openat2);
  uint64_t t1 = bench_now_ns();
  bench_mark("END");
  printf("%.1f\n", (double) (t1 - t0) / (double) n);
  (void) sink;
  return 0;
}
