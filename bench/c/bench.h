/* Shared helpers for the bench's C comparison loops (the programs in bench/c).
 *
 * Each loop program runs a short untimed warm-up, then N timed iterations, and
 * prints one line: the mean nanoseconds per iteration. The harness runs it once per
 * round, alternating with the JavaScript implementations, and takes medians. */
#ifndef AOS_BENCH_H
#define AOS_BENCH_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t bench_now_ns (void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static inline void bench_die (const char *what, int err) {
  fprintf(stderr, "%s: %s\n", what, strerror(err));
  exit(2);
}

static inline long bench_parse_count (const char *text) {
  char *end = NULL;
  long n = strtol(text, &end, 10);
  if (end == text || *end != '\0' || n < 1) {
    fprintf(stderr, "bad count\n");
    exit(2);
  }
  return n;
}

/* The warm-up: a tenth of N, at least one iteration, at most 1000. */
static inline long bench_warmup_count (long n) {
  long w = n / 10;
  if (w < 1) w = 1;
  if (w > 1000) w = 1000;
  return w;
}

/* With AOS_BENCH_MARK set in the environment, writes "=====<what>" to stderr: the
 * harness's syscall check (strace) cuts the trace at these marks. */
static inline void bench_mark (const char *what) {
  static int enabled = -1;
  if (enabled < 0) enabled = getenv("AOS_BENCH_MARK") != NULL;
  if (!enabled) return;
  char line[64];
  int len = snprintf(line, sizeof line, "=====%s\n", what);
  if (len > 0 && write(2, line, (size_t) len) < 0) bench_die("write", errno);
}

static inline int bench_openat2 (int dirfd, const char *path, int flags) {
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = (uint64_t) flags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long r;
  do {
    r = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
  } while (r == -1 && (errno == EINTR || errno == EAGAIN));
  return (int) r;
}

static inline int bench_openat (int dirfd, const char *path, int flags, mode_t mode) {
  int r;
  do {
    r = openat(dirfd, path, flags, mode);
  } while (r == -1 && errno == EINTR);
  return r;
}

/* Opens the directory `rel` (components separated by '/', possibly empty for the
 * root itself) beneath `rootfd`, either with one openat2 resolution or with the
 * per-component openat walk (each component O_DIRECTORY | O_NOFOLLOW | `extra`, the
 * previous descriptor closed after the next is open). Returns a new descriptor or -1. */
static inline int bench_open_dir (int rootfd, const char *rel, int use_openat2, int extra) {
  int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | extra;
  if (rel[0] == '\0') return bench_openat(rootfd, ".", flags, 0);
  if (use_openat2) return bench_openat2(rootfd, rel, flags);
  char name[256];
  int cur = rootfd;
  const char *p = rel;
  for (;;) {
    const char *slash = strchr(p, '/');
    size_t len = slash ? (size_t) (slash - p) : strlen(p);
    if (len == 0 || len >= sizeof name) { errno = EINVAL; break; }
    memcpy(name, p, len);
    name[len] = '\0';
    int next = bench_openat(cur, name, flags, 0);
    int saved = errno;
    if (cur != rootfd) close(cur);
    if (next < 0) { errno = saved; return -1; }
    cur = next;
    if (!slash) return cur;
    p = slash + 1;
  }
  if (cur != rootfd) close(cur);
  return -1;
}

/* Splits "a/b/c" into the directory part "a/b" (written to dir) and the final name
 * (returned, pointing into path). */
static inline const char *bench_split (const char *path, char *dir, size_t dirsize) {
  const char *slash = strrchr(path, '/');
  if (!slash) { dir[0] = '\0'; return path; }
  size_t len = (size_t) (slash - path);
  if (len >= dirsize) bench_die("path", ENAMETOOLONG);
  memcpy(dir, path, len);
  dir[len] = '\0';
  return slash + 1;
}

#endif
