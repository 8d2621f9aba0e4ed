/* read_loop MODE ROOT REL N [WRITTEN_NS]
 *
 * A rooted, checked whole-file read, N times, as the package's readBytesSync performs
 * it (its syscall sequence, seen with strace; the harness's syscall check compares the
 * two on every run). The root directory is opened once, outside the loop, as an
 * authority retains it. Prints the mean ns per iteration.
 *
 * Two sequences. The path sequence (the openat2 resolver's, from issue 28):
 *   MODE "openat2-path", a first read (nothing kept):
 *     openat2(root, REL, O_PATH | O_NOFOLLOW | O_CLOEXEC, RESOLVE_BENEATH |
 *     RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) ; fstat of that path descriptor (the
 *     look: a regular file?) ; openat2(root, REL, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
 *     O_NOCTTY | O_CLOEXEC, the same resolve flags) ; close of the path descriptor ;
 *     fstat(fd) (the same dev and ino as the look) ; one preadv into a fresh buffer of
 *     size bytes plus a probe byte of its own past it (a regular file at rest returns
 *     size: its end; a byte more would mean the file grew) ; fstat(fd) (identity, size,
 *     mtime and ctime unchanged) ; close(fd) ; free.
 *   MODE "openat2-path-kept": the reads a ReadAuthority makes once it keeps the file's
 *     descriptor (src/file_authority/posix_fdcache.c). The first read as above, the
 *     descriptor kept instead of closed; each later one: openat2 O_PATH as above ;
 *     fstat of the path descriptor (regular, and the same dev, ino and ctime as the
 *     kept descriptor's look) ; preadv through the kept descriptor ; fstat of it (the
 *     same dev, ino, size, mtime and ctime as the look) ; close of the path descriptor.
 *   MODE "openat2-path-fresh": "openat2-path-kept" for a file changed within the last
 *     second (mtime or ctime; the package's racy window). Such a read adds, before the
 *     preadv, fcntl(fd, F_SETSIG, SIGURG) and fcntl(fd, F_SETLEASE, F_RDLCK) (a read
 *     lease is granted only while no one has the file open for writing, and holds off
 *     every new opener for writing until released), and after the second fstat
 *     fcntl(fd, F_SETLEASE, F_UNLCK). The loop rewrites nothing itself: the harness
 *     rewrites the file just before starting it. Its warm-up is one read (the first
 *     read after the change, which opens the file and keeps its descriptor), so that
 *     the timed reads follow the change by milliseconds; every timed read must find
 *     the file changed within the last second, or the loop fails. With WRITTEN_NS (the
 *     CLOCK_MONOTONIC time in ns at which the harness finished rewriting the file) it
 *     prints a second line: the ns from then to the start of the timed loop.
 * The parent sequence (rounds three to six; the portable resolver still makes it):
 *   the parent directory of REL, resolved beneath ROOT (O_PATH | O_DIRECTORY |
 *   O_NOFOLLOW): MODE "openat2" with one openat2 (RESOLVE_BENEATH |
 *   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), MODE "walk" with an openat of each
 *   component (closing the previous one); a file directly in ROOT skips it. Then
 *   fstatat of the final name in it without following it (a regular file?), openat
 *   of that name O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, close of the parent (no lookup
 *   ever passes through a path of several components but the beneath-only openat2);
 *   then: fstat (size), preadv (buffer + probe byte), fstat again, close, free.
 *   MODE "openat2-kept" / "walk-kept": the same reads once the descriptor is kept:
 *   the first read as above but the descriptor kept; each later one resolves the
 *   parent, fstatats the name, closes the parent, and, the look finding the kept file
 *   with the same identity and ctime, reads through the kept descriptor (preadv,
 *   fstat) without opening or closing it.
 * Except in the "-fresh" mode, the sequences are those of a file at rest: the bench's
 * fixtures are dated an hour back and read once they are a second old. */
#include "bench.h"

#include <signal.h>
#include <sys/uio.h>

/* The descriptor kept by the "-kept" and "-fresh" modes, and what the look saw before
 * its open. */
static int kept_fd = -1;
static struct stat kept_look;

static int same_file (const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Identity, size, mtime and ctime all equal: the file did not change. */
static int unchanged (const struct stat *a, const struct stat *b) {
  return same_file(a, b) && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Reads the whole file of `size` bytes from fd: the size into a fresh buffer, one byte
 * more into a probe of its own (one preadv; a short one that met the end stops). */
static unsigned read_all (int fd, size_t size) {
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) bench_die("malloc", ENOMEM);
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
  unsigned sink = size ? buf[size - 1] : 0;
  free(buf);
  return sink;
}

/* ------------------------------------------------------------ the parent sequence */

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
  unsigned sink = read_all(fd, (size_t) before.st_size);
  if (fstat(fd, &after) != 0) bench_die("fstat", errno);
  if (!unchanged(&after, &before)) bench_die("file changed", EIO);
  if (keep && (kept || same_file(&before, &look))) {
    kept_fd = fd;
    kept_look = look;
  } else {
    close(fd);
  }
  return sink;
}

/* -------------------------------------------------------------- the path sequence */

/* Timed reads of the "-fresh" mode that found the file at rest. */
static long at_rest_reads = 0;

static int after_or_equal (const struct timespec *a, const struct timespec *b) {
  return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* Modified or changed within the last second (a stamp in the future included). */
static int changed_lately (const struct stat *st) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct timespec since = now;
  since.tv_sec -= 1;
  return after_or_equal(&st->st_mtim, &since) || after_or_equal(&st->st_ctim, &since);
}

static void set_lease (int fd, int type) {
  if (fcntl(fd, F_SETLEASE, type) != 0) bench_die(type == F_UNLCK ? "F_SETLEASE F_UNLCK" : "F_SETLEASE F_RDLCK", errno);
}

/* keep: keep the descriptor between reads; fresh: the "-fresh" mode (the lease around
 * the read of a file changed within the last second). */
static unsigned read_path_once (int rootfd, const char *rel, int keep, int fresh) {
  int pathfd = bench_openat2(rootfd, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (pathfd < 0) bench_die("openat2 O_PATH", errno);
  struct stat look, before, after;
  if (fstat(pathfd, &look) != 0) bench_die("fstat", errno);
  if (!S_ISREG(look.st_mode)) bench_die("not a regular file", EINVAL);
  int racy = fresh && changed_lately(&look);
  if (fresh && !racy) at_rest_reads++;
  int fd;
  int kept = keep && kept_fd >= 0 && same_file(&look, &kept_look);
  if (kept) {
    fd = kept_fd;
    before = look;
  } else {
    if (kept_fd >= 0) {
      close(kept_fd);
      kept_fd = -1;
    }
    fd = bench_openat2(rootfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int saved = errno;
    close(pathfd);
    if (fd < 0) bench_die("openat2", saved);
    if (fstat(fd, &before) != 0) bench_die("fstat", errno);
    if (before.st_dev != look.st_dev || before.st_ino != look.st_ino) bench_die("another file opened", EIO);
  }
  if (racy) {
    if (fcntl(fd, F_SETSIG, SIGURG) != 0) bench_die("F_SETSIG", errno);
    set_lease(fd, F_RDLCK);
  }
  unsigned sink = read_all(fd, (size_t) before.st_size);
  if (fstat(fd, &after) != 0) bench_die("fstat", errno);
  if (!unchanged(&after, &before)) bench_die("file changed", EIO);
  if (racy) set_lease(fd, F_UNLCK);
  if (kept) {
    close(pathfd);
  } else if (keep && same_file(&before, &look)) {
    kept_fd = fd;
    kept_look = look;
  } else {
    close(fd);
  }
  return sink;
}

/* ------------------------------------------------------------------------- main */

static const char *const MODES[] = {
  "openat2", "walk", "openat2-kept", "walk-kept", "openat2-path", "openat2-path-kept", "openat2-path-fresh"
};

int main (int argc, char **argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: read_loop openat2|walk|openat2-kept|walk-kept|openat2-path|openat2-path-kept|openat2-path-fresh ROOT REL N [WRITTEN_NS]\n");
    return 2;
  }
  int mode = -1;
  for (int i = 0; i < (int) (sizeof MODES / sizeof MODES[0]); i++) {
    if (strcmp(argv[1], MODES[i]) == 0) mode = i;
  }
  if (mode < 0) bench_die("mode", EINVAL);
  int use_openat2 = strncmp(argv[1], "openat2", 7) == 0;
  int path_seq = mode >= 4;
  int fresh = mode == 6;
  int keep = mode == 2 || mode == 3 || mode == 5 || mode == 6;
  long n = bench_parse_count(argv[4]);
  uint64_t written = 0;
  if (argc == 6) {
    char *end = NULL;
    written = strtoull(argv[5], &end, 10);
    if (end == argv[5] || *end != '\0') bench_die("WRITTEN_NS", EINVAL);
  }
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
  long warmup = fresh ? 1 : bench_warmup_count(n);
  for (long i = 0; i < warmup; i++) {
    sink += path_seq ? read_path_once(rootfd, argv[3], keep, fresh) : read_once(rootfd, argv[3], use_openat2, keep);
  }
  at_rest_reads = 0;
  bench_mark("MARK");
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++) {
    sink += path_seq ? read_path_once(rootfd, argv[3], keep, fresh) : read_once(rootfd, argv[3], use_openat2, keep);
  }
  uint64_t t1 = bench_now_ns();
  bench_mark("END");
  if (at_rest_reads > 0) {
    fprintf(stderr, "%ld of %ld timed reads found the file changed more than a second ago: not a fresh file\n", at_rest_reads, n);
    return 4;
  }
  printf("%.1f\n", (double) (t1 - t0) / (double) n);
  if (written) printf("%lld\n", (long long) (t0 - written));
  (void) sink;
  return 0;
}
