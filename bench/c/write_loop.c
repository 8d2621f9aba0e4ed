/* write_loop MODE RESOLVE ROOT REL SIZE N
 *
 * MODE "excl" or "tmpfile", either with "-nosync" after it ("tmpfile-nosync"): the same
 * calls without the two fsyncs (writeTextSync with durable: false).
 *
 * The contract's atomic replace of one file, N times, in the order the package's
 * writeTextSync performs it (its syscall sequence, seen with strace; the harness's
 * syscall check compares the two on every run):
 *   resolve the parent directory of REL beneath ROOT (RESOLVE "openat2" or "walk",
 *   as in read_loop), fstatat the target without following links (a regular file or
 *   missing; its mode is kept), create the temporary file in that parent (MODE
 *   "excl": a random name (getrandom), openat with O_CREAT | O_EXCL | O_NOFOLLOW;
 *   MODE "tmpfile": an unnamed O_TMPFILE file), fstat it (identity), write SIZE
 *   bytes, fchmod to the kept mode, fsync, (MODE "tmpfile": a random name, linkat
 *   with AT_EMPTY_PATH), close; then, over an existing target, renameat2 with
 *   RENAME_EXCHANGE, fstatat of the replaced entry now at the temporary name (the one
 *   checked?) and unlinkat of it; over no target, renameat2 with RENAME_NOREPLACE;
 *   fsync the parent, fstatat the committed name and compare it with the temporary
 *   file's identity, close the parent.
 * The root directory is opened once, outside the loop.
 * Prints the mean ns per iteration. */
#include "bench.h"
#include <sys/random.h>

static void write_all (int fd, const unsigned char *buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t r = write(fd, buf + done, size - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) bench_die("write", errno);
    done += (size_t) r;
  }
}

static int no_sync; /* MODE ...-nosync: durable: false */

static void fsync_fd (int fd) {
  if (no_sync) return;
  int r;
  do {
    r = fsync(fd);
  } while (r != 0 && errno == EINTR);
  if (r != 0) bench_die("fsync", errno);
}

static void random_name (char *out, size_t size) {
  unsigned char rnd[16];
  if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t) sizeof rnd) bench_die("getrandom", errno);
  int len = snprintf(out, size, ".aos-");
  for (size_t i = 0; i < sizeof rnd; i++) len += snprintf(out + len, size - (size_t) len, "%02x", rnd[i]);
  snprintf(out + len, size - (size_t) len, ".tmp");
}

static void write_once (int rootfd, const char *rel, int use_openat2, int use_tmpfile,
                        const unsigned char *buf, size_t size) {
  char dir[4096];
  const char *name = bench_split(rel, dir, sizeof dir);
  int pfd = bench_open_dir(rootfd, dir, use_openat2, 0);
  if (pfd < 0) bench_die("open parent", errno);
  struct stat target;
  mode_t mode = 0666 & ~(mode_t) 022;
  int have_target = fstatat(pfd, name, &target, AT_SYMLINK_NOFOLLOW) == 0;
  if (!have_target && errno != ENOENT) bench_die("fstatat", errno);
  if (have_target) {
    if (!S_ISREG(target.st_mode)) bench_die("target not a regular file", EINVAL);
    mode = target.st_mode & 07777;
  }
  char tmpname[64];
  if (!use_tmpfile) random_name(tmpname, sizeof tmpname);
  int fd;
  if (use_tmpfile) {
    fd = bench_openat(pfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  } else {
    fd = bench_openat(pfd, tmpname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  }
  if (fd < 0) bench_die("open temporary", errno);
  struct stat written;
  if (fstat(fd, &written) != 0) bench_die("fstat", errno);
  write_all(fd, buf, size);
  if (have_target && fchmod(fd, mode) != 0) bench_die("fchmod", errno);
  fsync_fd(fd);
  if (use_tmpfile) {
    /* Named only once complete: AT_EMPTY_PATH, or through /proc without the
     * capability it needs. */
    random_name(tmpname, sizeof tmpname);
    if (linkat(fd, "", pfd, tmpname, AT_EMPTY_PATH) != 0) {
      char proc[64];
      snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
      if (linkat(AT_FDCWD, proc, pfd, tmpname, AT_SYMLINK_FOLLOW) != 0) bench_die("linkat", errno);
    }
  }
  close(fd);
  if (have_target) {
    if (renameat2(pfd, tmpname, pfd, name, RENAME_EXCHANGE) != 0) bench_die("renameat2", errno);
    struct stat replaced;
    if (fstatat(pfd, tmpname, &replaced, AT_SYMLINK_NOFOLLOW) != 0) bench_die("fstatat", errno);
    if (replaced.st_ino != target.st_ino || replaced.st_dev != target.st_dev) bench_die("target changed", EIO);
    if (unlinkat(pfd, tmpname, 0) != 0) bench_die("unlinkat", errno);
  } else if (renameat2(pfd, tmpname, pfd, name, RENAME_NOREPLACE) != 0) {
    bench_die("renameat2", errno);
  }
  fsync_fd(pfd);
  struct stat committed;
  if (fstatat(pfd, name, &committed, AT_SYMLINK_NOFOLLOW) != 0) bench_die("fstatat", errno);
  if (committed.st_ino != written.st_ino || committed.st_dev != written.st_dev) bench_die("file changed", EIO);
  close(pfd);
}

int main (int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: write_loop excl|tmpfile[-nosync] openat2|walk ROOT REL SIZE N\n");
    return 2;
  }
  char mode[32];
  snprintf(mode, sizeof mode, "%s", argv[1]);
  char *suffix = strstr(mode, "-nosync");
  if (suffix != NULL && suffix[7] == '\0') {
    no_sync = 1;
    *suffix = '\0';
  }
  int use_tmpfile = strcmp(mode, "tmpfile") == 0;
  if (!use_tmpfile && strcmp(mode, "excl") != 0) bench_die("mode", EINVAL);
  int use_openat2 = strcmp(argv[2], "openat2") == 0;
  if (!use_openat2 && strcmp(argv[2], "walk") != 0) bench_die("resolve", EINVAL);
  long size = bench_parse_count(argv[5]);
  long n = bench_parse_count(argv[6]);
  umask(022);
  int rootfd = bench_openat(AT_FDCWD, argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (rootfd < 0) bench_die("open root", errno);
  unsigned char *buf = malloc((size_t) size);
  if (!buf) bench_die("malloc", ENOMEM);
  for (long i = 0; i < size; i++) buf[i] = (unsigned char) ('a' + i % 26);
  for (long i = 0, w = bench_warmup_count(n); i < w; i++)
    write_once(rootfd, argv[4], use_openat2, use_tmpfile, buf, (size_t) size);
  bench_mark("MARK");
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < n; i++)
    write_once(rootfd, argv[4], use_openat2, use_tmpfile, buf, (size_t) size);
  uint64_t t1 = bench_now_ns();
  bench_mark("END");
  printf("%.1f\n", (double) (t1 - t0) / (double) n);
  free(buf);
  return 0;
}
