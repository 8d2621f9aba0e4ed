/* range_loop MODE ROOT NAME N SLICE
 *
 * N reads of SLICE bytes at pseudo-random offsets (uniform, unaligned, a fixed
 * sequence) of the file NAME directly in ROOT, a fresh buffer each time:
 *   MODE "package": the calls of the package's readRangeSync for a file at rest that
 *     the authority read before (its sequence, seen with strace): fstatat of NAME in
 *     the retained root without following it, which finds the file whose descriptor
 *     the authority kept, with the same identity and ctime
 *     (src/file_authority/posix_fdcache.c); one preadv of the slice through that
 *     descriptor; fstat (same identity, size, mtime and ctime as the look). The first
 *     read (in the warm-up) opens it as "first" does and keeps it.
 *   MODE "first": the calls of a read with no descriptor kept (the authority's first
 *     read of the file, or one of more files in turn than it keeps): fstatat (a
 *     regular file?), openat O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, fstat (regular,
 *     size, identity), one preadv of the slice, fstat again (same identity, size,
 *     mtime and ctime), close;
 *   MODE "plain": what fs.openSync + fs.readSync + fs.closeSync make: openat of the
 *     joined path, pread, close.
 * The root directory is opened once, outside the loop. Prints the mean ns per
 * iteration. */
#include "bench.h"

#include <sys/uio.h>

static uint64_t next_offset (uint64_t *state, uint64_t span) {
  *state = *state * 6364136223846793005u + 1442695040888963407u;
  return (*state >> 11) % span;
}

/* The descriptor "package" keeps, and what the look saw before its open. */
static int kept_fd = -1;
static struct stat kept_look;

static int same_version (const struct stat *a, const struct stat *b) {
  return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static unsigned read_package (int rootfd, const char *name, size_t slice, uint64_t off, int keep) {
  struct stat look, before, after;
  if (fstatat(rootfd, name, &look, AT_SYMLINK_NOFOLLOW) != 0) bench_die("fstatat", errno);
  if (!S_ISREG(look.st_mode)) bench_die("not a regular file", EINVAL);
  int fd;
  if (keep && kept_fd >= 0 && look.st_dev == kept_look.st_dev && look.st_ino == kept_look.st_ino &&
      look.st_ctim.tv_sec == kept_look.st_ctim.tv_sec && look.st_ctim.tv_nsec == kept_look.st_ctim.tv_nsec) {
    fd = kept_fd;
    before = look;
  } else {
    if (kept_fd >= 0) close(kept_fd);
    kept_fd = -1;
    fd = bench_openat(rootfd, name, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) bench_die("openat", errno);
    if (fstat(fd, &before) != 0) bench_die("fstat", errno);
    if (!S_ISREG(before.st_mode)) bench_die("not a regular file", EINVAL);
  }
  unsigned char *buf = malloc(slice ? slice : 1);
  if (!buf) bench_die("malloc", ENOMEM);
  size_t got = 0;
  while (got < slice) {
    struct iovec iov = {buf + got, slice - got};
    ssize_t r = preadv(fd, &iov, 1, (off_t) (off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) bench_die("preadv", errno);
    if (r == 0) bench_die("file shrank", EIO);
    got += (size_t) r;
  }
  if (fstat(fd, &after) != 0) bench_die("fstat", errno);
  if (!same_version(&before, &after)) bench_die("file changed", EIO);
  if (keep) {
    kept_fd = fd;
    kept_look = look;
  } else {
    close(fd);
  }
  unsigned sink = buf[slice - 1];
  free(buf);
  return sink;
}

static unsigned read_plain (const char *path, size_t slice, uint64_t off) {
  int fd = bench_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) bench_die("openat", errno);
  unsigned char *buf = malloc(slice ? slice : 1);
  if (!buf) bench_die("malloc", ENOMEM);
  ssize_t r;
  do {
    r = pread(fd, buf, slice, (off_t) off);
  } while (r < 0 && errno == EINTR);
  if (r < 0) bench_die("pread", errno);
  close(fd);
  unsigned sink = buf[slice - 1];
  free(buf);
  return sink;
}

int main (int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: range_loop package|first|plain ROOT NAME N SLICE\n");
    return 2;
  }
  int keep = strcmp(argv[1], "package") == 0;
  int package = keep || strcmp(argv[1], "first") == 0;
  if (!package && strcmp(argv[1], "plain") != 0) bench_die("mode", EINVAL);
  long n = bench_parse_count(argv[4]);
  long slice = bench_parse_count(argv[5]);
  int rootfd = bench_openat(AT_FDCWD, argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (rootfd < 0) bench_die("open root", errno);
  char path[4096];
  if (snprintf(path, sizeof path, "%s/%s", argv[2], argv[3]) >= (int) sizeof path) bench_die("path", ENAMETOOLONG);
  struct stat st;
  if (fstatat(rootfd, argv[3], &st, AT_SYMLINK_NOFOLLOW) != 0) bench_die("fstatat", errno);
  if (st.st_size < slice) bench_die("file smaller than the slice", EINVAL);
  uint64_t span = (uint64_t) st.st_size - (uint64_t) slice + 1;
  uint64_t state = 42;
  volatile unsigned sink = 0;
  for (long i = 0, w = bench_warmup_count(n); i < w; i++) {
    uint64_t off = next_offset(&state, span);
    sink += package ? read_package(rootfd, argv[3], (size_t) slice, off, keep) : read_plain(path, (size_t) slice, off);
  }
  bench_mark("MARK");
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) {
    uint64_t off = next_offset(&state, span);
    sink += package ? read_package(rootfd, argv[3], (size_t) slice, off, keep) : read_plain(path, (size_t) slice, off);
  }
  uint64_t t1 = bench_now_ns();
  bench_mark("END");
  printf("%.1f\n", (double) (t1 - t0) / (double) n);
  (void) sink;
  return 0;
}
