/* read_loop MODE ROOT REL N
 *
 * A rooted, checked whole-file read, N times, as the package's readBytesSync performs
 * it for a file at rest (its syscall sequence, seen with strace; the harness's syscall
 * check compares the two on every run):
 *   the parent directory of REL, resolved beneath ROOT (O_PATH | O_DIRECTORY |
 *   O_NOFOLLOW): MODE "openat2" with one openat2 (RESOLVE_BENEATH |
 *   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), MODE "walk" with an openat of each
 *   component (closing the previous one); a file directly in ROOT skips it. Then
 *   fstatat of the final name in it without following it (a regular file?), openat
 *   of that name O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, close of the parent (no lookup
 *   ever passes through a path of several components but the beneath-only openat2);
 *   then: fstat (size), one preadv into a fresh buffer of size bytes plus a byte of
 *   its own past it (a regular file at rest returns size: its end; a byte more would
 *   mean the file grew), fstat again (same identity, size, mtime and ctime), close,
 *   free.
 *   MODE "openat2-kept" / "walk-kept": the same reads as a ReadAuthority makes them
 *   once it keeps the file's descriptor (src/file_authority/posix_fdcache.c): the
 *   first read as above but the descriptor kept; each later one resolves the parent,
 *   fstatats the name, closes the parent, and, the look finding the kept file with
 *   the same identity and ctime, reads through the kept descriptor (preadv, fstat)
 *   without opening or closing it.
 * The package reads a file modified within the last second twice, behind a bounded
 * write barrier; the bench's fixtures are dated an hour back so that they take the
 * ordinary path. The root directory is opened once, outside the loop, as an
 * authority retains it. Prints the mean ns per iteration. */
#include "bench.h"

#include <sys/uio.h>

/* The descriptor kept by the "-kept" modes, and what the look saw before its open. */
static int kept_fd = -1;
static struct stat kept_look;

static int same_file (const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The file's descriptor and *look, the look at it; *kept when it is the kept one. */
static int open_final (int rootfd, const char *rel, int use_openat2, int keep, struct stat *look,
                       int *kept) {
  const int flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
  char dir[4096];
  const char *name = bench_split(rel, dir, sizeof dir);
  int dfd = rootfd;
  *kept = 0;
  if (dir[0] != '\0') {
    dfd = bench_open_dir(rootfd, dir, use_openat2, O_PATH);
    if (dfd < 0) return -1;
  }
  if (fstatat(dfd, name, look, AT_SYMLINK_NOFOLLOW) != 0) bench_die("fstatat", errno);
  if (keep && kept_fd >= 0) {
    if (S_ISREG(look->st_mode) && same_file(look, &kept_look)) {
      if (dfd != rootfd) close(dfd);
      *kept = 1;
      return kept_fd;
    }
    close(kept_fd);
    kept_fd = -1;
  }
  if (!S_ISREG(look->st_mode)) bench_die("not a regular file", EINVAL);
  int fd = bench_openat(dfd, name, flags, 0);
  int saved = errno;
  if (dfd != rootfd) close(dfd);
  errno = saved;
  return fd;
}

static unsigned read_once (int rootfd, const char *rel, int use_openat2, int keep) {
  struct stat look;
  int kept;
  int fd = open_final(rootfd, rel, use_openat2, keep, &look, &kept);
  if (fd < 0) bench_die("open", errno);
  struct stat before, after;
  if (kept) before = look;
  else if (fstat(fd, &before) != 0) bench_die("fstat", errno);
  size_t size = (size_t) before.st_size;
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) bench_die("malloc", ENOMEM);
  /* The size into the buffer, one byte more into a probe of its own. */
  unsigned char probe;
  size_t got = 0;
  while (got < size + 1) {
    struct iovec iov[2];
    int n = 0;
    if (got < size) {
      iov[n].iov_base = buf + got;
      iov[n].iov_len = size - got;
      n++;
    }
    iov[n].iov_base = &probe;
    iov[n].iov_len = 1;
    n++;
    ssize_t r = preadv(fd, iov, n, (off_t) got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) bench_die("read", errno);
    if (r == 0) break;
    got += (size_t) r;
    if (got >= size) break; /* a short read met the end */
  }
  if (got != size) bench_die(got > size ? "file grew" : "file changed size", EIO);
  if (fstat(fd, &after) != 0) bench_die("fstat", errno);
  if (after.st_ino != before.st_ino || after.st_dev != before.st_dev ||
      after.st_size != before.st_size ||
      after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
      after.st_mtim.tv_nsec != before.st_mtim.tv_nsec ||
      after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
      after.st_ctim.tv_nsec != before.st_ctim.tv_nsec) bench_die("file changed", EIO);
  if (keep && (kept || same_file(&before, &look))) {
    kept_fd = fd;
    kept_look = look;
  } else {
    close(fd);
  }
  unsigned sink = size ? buf[size - 1] : 0;
  free(buf);
  return sink;
}

int main (int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: read_loop openat2|walk|openat2-kept|walk-kept ROOT REL N\n");
    return 2;
  }
  int use_openat2 = strncmp(argv[1], "openat2", 7) == 0;
  const char *rest = argv[1] + (use_openat2 ? 7 : 4);
  if (!use_openat2 && strncmp(argv[1], "walk", 4) != 0) bench_die("mode", EINVAL);
  int keep = strcmp(rest, "-kept") == 0;
  if (!keep && rest[0] != '\0') bench_die("mode", EINVAL);
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
  for (long i = 0, w = bench_warmup_count(n); i < w; i++) sink += read_once(rootfd, argv[3], use_openat2, keep);
  bench_mark("MARK");
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) sink += read_once(rootfd, argv[3], use_openat2, keep);
  uint64_t t1 = bench_now_ns();
  bench_mark("END");
  printf("%.1f\n", (double) (t1 - t0) / (double) n);
  (void) sink;
  return 0;
}
