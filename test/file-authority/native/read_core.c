/* The file-authority read core on its own, without Node-API: aos_fa_read_into and
 * aos_fa_read_range (slices, end of file, versions, refusals), under both resolvers,
 * without and with the descriptors a reader keeps (posix_fdcache.c), and what is kept
 * when. Built and run by test/file-authority/hardening-read-core.test.js (with
 * AddressSanitizer's leak check). Prints "ok". */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <sys/vfs.h>

/* 1 when a file changed lately is kept after a consistent read on the filesystem of
 * dfd: multigrain stamps with a sub-second part (posix_read.c aos_fa__keepable). */
static int keeps_fresh(int dfd, const char *name) {
  struct stat sb;
  struct statfs sf;
  if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || fstatfs(dfd, &sf) != 0) return 0;
  return aos_fa_posix_multigrain(&sf, sb.st_dev) && aos_fa_posix_stamp_gran(&sb) < 1000000000LL;
}

static int failures = 0;
#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
      failures++;                                                                \
    }                                                                            \
  } while (0)

typedef struct {
  uint8_t *buf;
  size_t asked; /* the size alloc was called with */
  int calls;
  int refuse;
} dest;

static uint8_t *alloc_dest(void *ctx, size_t size) {
  dest *d = ctx;
  d->calls++;
  d->asked = size;
  if (d->refuse) return NULL;
  d->buf = malloc(size > 0 ? size : 1);
  return d->buf;
}

static void put(int dirfd, const char *name, const char *content, size_t len) {
  int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write(fd, content, len) != (ssize_t)len) {
    perror("put");
    exit(2);
  }
  close(fd);
}

static bool zero_version(const aos_fa_version *v) {
  aos_fa_version z;
  memset(&z, 0, sizeof z);
  return aos_fa_version_equal(v, &z);
}

/* A range read of `name` (one or two segments); returns the status kind. */
static aos_fa_kind range(const aos_fa_root *root, const char *const *segs, size_t count,
                         uint64_t off, uint64_t len, dest *d, size_t *got, uint64_t *size,
                         aos_fa_version *v, aos_fa_status *st) {
  uint8_t *data = NULL;
  memset(d, 0, sizeof *d);
  int r = aos_fa_read_range(root, segs, count, off, len, alloc_dest, d, &data, got, size, v, st);
  CHECK(data == d->buf);
  CHECK((r == 0) == (st->kind == AOS_FA_OK));
  return st->kind;
}

static void run(aos_fa_resolver resolver, const char *base, bool keep) {
  aos_fa_status st;
  aos_fa_root root = {-1, resolver, keep ? aos_fa_fdcache_new() : NULL};
  CHECK(!keep || root.fdcache != NULL);
  CHECK(aos_fa_root_open(base, &root.fd, &st) == 0);
  mkdirat(root.fd, "d", 0755);
  int dfd = openat(root.fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const char *text = "0123456789abcdef";
  put(dfd, "f", text, 16);
  put(dfd, "empty", "", 0);
  const char *f[] = {"d", "f"};
  const char *empty[] = {"d", "empty"};

  dest d;
  size_t got;
  uint64_t size;
  aos_fa_version v, whole;

  /* The whole read's version. */
  uint8_t *all = NULL;
  size_t alllen = 0;
  CHECK(aos_fa_read(&root, f, 2, 16, &all, &alllen, &whole, &st) == 0);
  CHECK(alllen == 16 && memcmp(all, text, 16) == 0);
  CHECK(!zero_version(&whole));
  free(all);

  /* A slice in the middle: exactly its bytes, the file's size and version. */
  CHECK(range(&root, f, 2, 3, 5, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(d.calls == 1 && d.asked == 5 && got == 5 && size == 16);
  CHECK(d.buf != NULL && memcmp(d.buf, "34567", 5) == 0);
  CHECK(aos_fa_version_equal(&v, &whole));
  free(d.buf);

  /* Past the end: fewer bytes; at and beyond the end: none, never an error. */
  CHECK(range(&root, f, 2, 10, 100, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(d.asked == 6 && got == 6 && size == 16 && memcmp(d.buf, "abcdef", 6) == 0);
  free(d.buf);
  CHECK(range(&root, f, 2, 16, 4, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(d.calls == 1 && d.asked == 0 && got == 0 && size == 16);
  free(d.buf);
  CHECK(range(&root, f, 2, UINT64_MAX, UINT64_MAX, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(got == 0 && size == 16 && aos_fa_version_equal(&v, &whole));
  free(d.buf);
  /* A length larger than the file is never OVER_BUDGET; length 0 reads nothing. */
  CHECK(range(&root, f, 2, 0, UINT64_MAX, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(got == 16 && memcmp(d.buf, text, 16) == 0);
  free(d.buf);
  CHECK(range(&root, f, 2, 2, 0, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(got == 0 && size == 16);
  free(d.buf);
  CHECK(range(&root, empty, 2, 0, 10, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(got == 0 && size == 0 && !zero_version(&v) && !aos_fa_version_equal(&v, &whole));
  free(d.buf);

  /* A rewrite (same size, new content) gives another version. */
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  int fd = openat(dfd, "f", O_WRONLY | O_CLOEXEC);
  CHECK(fd >= 0 && pwrite(fd, "X", 1, 0) == 1);
  close(fd);
  CHECK(range(&root, f, 2, 0, 2, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(got == 2 && memcmp(d.buf, "X1", 2) == 0 && !aos_fa_version_equal(&v, &whole));
  free(d.buf);

  /* A chmod moves only the ctime: another version too. */
  aos_fa_version before_chmod = v;
  nanosleep(&pause, NULL);
  CHECK(fchmodat(dfd, "f", 0600, 0) == 0);
  CHECK(range(&root, f, 2, 0, 2, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(!aos_fa_version_equal(&v, &before_chmod));
  free(d.buf);

  /* Refusals: alloc never called, version zeroed, the segment named. */
  const char *missing[] = {"d", "nope"};
  CHECK(range(&root, missing, 2, 0, 1, &d, &got, &size, &v, &st) == AOS_FA_NOT_FOUND);
  CHECK(st.segment == 1 && d.calls == 0 && zero_version(&v) && got == 0 && size == 0);
  const char *missing_parent[] = {"nope", "f"};
  CHECK(range(&root, missing_parent, 2, 0, 1, &d, &got, &size, &v, &st) == AOS_FA_NOT_FOUND);
  CHECK(st.segment == 0);
  CHECK(symlinkat("f", dfd, "link") == 0);
  const char *link[] = {"d", "link"};
  CHECK(range(&root, link, 2, 0, 1, &d, &got, &size, &v, &st) == AOS_FA_UNSAFE_ENTRY);
  CHECK(st.segment == 1 && st.err == ELOOP && d.calls == 0);
  CHECK(symlinkat("d", root.fd, "dlink") == 0);
  const char *via_link[] = {"dlink", "f"};
  CHECK(range(&root, via_link, 2, 0, 1, &d, &got, &size, &v, &st) == AOS_FA_UNSAFE_ENTRY);
  CHECK(st.segment == 0 && d.calls == 0);
  CHECK(mkfifoat(dfd, "fifo", 0644) == 0);
  const char *fifo[] = {"d", "fifo"};
  CHECK(range(&root, fifo, 2, 0, 1, &d, &got, &size, &v, &st) == AOS_FA_UNSAFE_ENTRY);
  CHECK(st.segment == 1 && d.calls == 0);
  const char *dir[] = {"d"};
  CHECK(range(&root, dir, 1, 0, 1, &d, &got, &size, &v, &st) == AOS_FA_UNSAFE_ENTRY);
  CHECK(st.segment == 0);
  CHECK(range(&root, NULL, 0, 0, 1, &d, &got, &size, &v, &st) == AOS_FA_UNSAFE_ENTRY);
  const char *bad[] = {"d", ".."};
  CHECK(range(&root, bad, 2, 0, 1, &d, &got, &size, &v, &st) == AOS_FA_INVALID_PATH);
  CHECK(st.segment == 1);
  /* A destination that cannot be had: HOST_IO ENOMEM, nothing returned. */
  memset(&d, 0, sizeof d);
  d.refuse = 1;
  uint8_t *data = (uint8_t *)&d;
  CHECK(aos_fa_read_range(&root, f, 2, 0, 4, alloc_dest, &d, &data, &got, &size, &v, &st) != 0);
  CHECK(st.kind == AOS_FA_HOST_IO && st.err == ENOMEM && data == NULL && d.calls == 1);

  /* aos_fa_read_into: a refusal leaves the version zeroed too. */
  uint8_t *none = NULL;
  size_t nonelen = 0;
  v = whole;
  CHECK(aos_fa_read(&root, fifo, 2, 16, &none, &nonelen, &v, &st) != 0);
  CHECK(st.kind == AOS_FA_UNSAFE_ENTRY && none == NULL && zero_version(&v));
  v = whole;
  CHECK(aos_fa_read(&root, f, 2, 15, &none, &nonelen, &v, &st) != 0);
  CHECK(st.kind == AOS_FA_OVER_BUDGET && zero_version(&v));

  close(dfd);
  aos_fa_fdcache_free(root.fdcache);
  aos_fa_root_close(root.fd);
}

/* ------------------------------------------------- the descriptors a reader keeps */

/* This process's open descriptors, and how many of them read a removed file. */
static int open_fds(int *deleted) {
  int n = 0;
  if (deleted != NULL) *deleted = 0;
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) return -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    n++;
    char link[300], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(link, target, sizeof target - 1);
    if (len > 0 && deleted != NULL) {
      target[len] = '\0';
      if (strstr(target, " (deleted)") != NULL) (*deleted)++;
    }
  }
  closedir(d);
  return n - 1; /* the directory stream's own */
}

/* readRange of segs into a fresh buffer: the bytes must be `want` (wlen of them). */
static void range_is(aos_fa_root *root, const char *const *segs, size_t count,
                     const char *want, size_t wlen) {
  dest d;
  size_t got;
  uint64_t size;
  aos_fa_version v;
  aos_fa_status st;
  CHECK(range(root, segs, count, 0, 64, &d, &got, &size, &v, &st) == AOS_FA_OK);
  CHECK(got == wlen && size == wlen && memcmp(d.buf, want, wlen) == 0);
  free(d.buf);
}

static void keep_checks(aos_fa_resolver resolver, const char *base) {
  aos_fa_status st;
  aos_fa_root root = {-1, resolver, aos_fa_fdcache_new()};
  CHECK(root.fdcache != NULL);
  CHECK(aos_fa_root_open(base, &root.fd, &st) == 0);
  mkdirat(root.fd, "d", 0755);
  int dfd = openat(root.fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  put(dfd, "f", "first", 5);
  const char *f[] = {"d", "f"};
  const char *top[] = {"top"};
  put(root.fd, "top", "top!", 4);
  /* Only files unchanged for AOS_FA__RACY_NS (built at 100 ms here) are kept. */
  struct timespec settle = {0, 150 * 1000 * 1000};
  nanosleep(&settle, NULL);
  int deleted = 0;
  int base_fds = open_fds(NULL);

  /* A read keeps its descriptor; reading again reuses it, however often. */
  range_is(&root, f, 2, "first", 5);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 1 && open_fds(NULL) == base_fds + 1);
  for (int i = 0; i < 50; i++) range_is(&root, f, 2, "first", 5);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 1 && open_fds(NULL) == base_fds + 1);
  range_is(&root, top, 1, "top!", 4); /* a file in the root itself */
  CHECK(aos_fa_fdcache_count(root.fdcache) == 2);

  /* Written in place (same inode, the ctime moves): the new bytes, one descriptor. */
  int fd = openat(dfd, "f", O_WRONLY | O_CLOEXEC);
  CHECK(fd >= 0 && pwrite(fd, "FIRST", 5, 0) == 5);
  close(fd);
  /* Read at once, it is kept only where stamps tell every later change apart
   * (multigrain, posix_read.c aos_fa__keepable); a moment later it is everywhere. */
  int fresh = keeps_fresh(dfd, "f");
  range_is(&root, f, 2, "FIRST", 5);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 1 + fresh && open_fds(NULL) == base_fds + 1 + fresh);
  nanosleep(&settle, NULL);
  range_is(&root, f, 2, "FIRST", 5);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 2 && open_fds(NULL) == base_fds + 2);

  /* Replaced by another file: its bytes; the removed file's descriptor is closed. */
  put(dfd, "g", "second", 6);
  CHECK(renameat(dfd, "g", dfd, "f") == 0);
  nanosleep(&settle, NULL);
  range_is(&root, f, 2, "second", 6);
  CHECK(open_fds(&deleted) == base_fds + 2 && deleted == 0);

  /* Removed: not found, and nothing of it is held open. */
  CHECK(unlinkat(dfd, "f", 0) == 0);
  CHECK(open_fds(&deleted) == base_fds + 2 && deleted == 1); /* until the next read */
  dest d;
  size_t got;
  uint64_t size;
  aos_fa_version v;
  CHECK(range(&root, f, 2, 0, 8, &d, &got, &size, &v, &st) == AOS_FA_NOT_FOUND);
  CHECK(open_fds(&deleted) == base_fds + 1 && deleted == 0);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 1);

  /* A link, a FIFO, a directory swapped in at a kept name: refused as ever, closed. */
  put(dfd, "f", "third", 5);
  nanosleep(&settle, NULL);
  range_is(&root, f, 2, "third", 5);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 2);
  CHECK(renameat(dfd, "f", dfd, "old") == 0);
  CHECK(symlinkat("old", dfd, "f") == 0);
  CHECK(range(&root, f, 2, 0, 8, &d, &got, &size, &v, &st) == AOS_FA_UNSAFE_ENTRY);
  CHECK(st.err == ELOOP && d.calls == 0 && aos_fa_fdcache_count(root.fdcache) == 1);
  CHECK(unlinkat(dfd, "f", 0) == 0 && renameat(dfd, "old", dfd, "f") == 0);
  nanosleep(&settle, NULL);
  range_is(&root, f, 2, "third", 5);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 2);
  CHECK(renameat(dfd, "f", dfd, "old") == 0 && mkfifoat(dfd, "f", 0644) == 0);
  CHECK(range(&root, f, 2, 0, 8, &d, &got, &size, &v, &st) == AOS_FA_UNSAFE_ENTRY);
  CHECK(d.calls == 0 && aos_fa_fdcache_count(root.fdcache) == 1);
  CHECK(unlinkat(dfd, "f", 0) == 0 && renameat(dfd, "old", dfd, "f") == 0);
  nanosleep(&settle, NULL);
  range_is(&root, f, 2, "third", 5);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 2);
  CHECK(renameat(dfd, "f", dfd, "old") == 0 && mkdirat(dfd, "f", 0755) == 0);
  CHECK(range(&root, f, 2, 0, 8, &d, &got, &size, &v, &st) == AOS_FA_UNSAFE_ENTRY);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 1);
  CHECK(unlinkat(dfd, "f", AT_REMOVEDIR) == 0 && renameat(dfd, "old", dfd, "f") == 0);

  /* The parent swapped for a link: refused at the parent, as without a kept one. */
  range_is(&root, f, 2, "third", 5);
  CHECK(renameat(root.fd, "d", root.fd, "d.real") == 0 && symlinkat("d.real", root.fd, "d") == 0);
  CHECK(range(&root, f, 2, 0, 8, &d, &got, &size, &v, &st) == AOS_FA_UNSAFE_ENTRY);
  CHECK(st.segment == 0);
  CHECK(unlinkat(root.fd, "d", 0) == 0 && renameat(root.fd, "d.real", root.fd, "d") == 0);

  /* A chmod moves the ctime: the kept descriptor is not used (an open decides again). */
  range_is(&root, f, 2, "third", 5);
  CHECK(fchmodat(dfd, "f", 0640, 0) == 0);
  range_is(&root, f, 2, "third", 5);
  /* the kept one closed; the new one kept only where stamps are multigrain */
  CHECK(aos_fa_fdcache_count(root.fdcache) == 1 + keeps_fresh(dfd, "f"));
  nanosleep(&settle, NULL);
  range_is(&root, f, 2, "third", 5);
  CHECK(aos_fa_fdcache_count(root.fdcache) == 2);

  /* Over budget: refused; a whole read (readBytes) shares what is kept. */
  uint8_t *all = NULL;
  size_t alllen = 0;
  CHECK(aos_fa_read(&root, f, 2, 4, &all, &alllen, NULL, &st) != 0 && st.kind == AOS_FA_OVER_BUDGET);
  CHECK(aos_fa_read(&root, f, 2, 5, &all, &alllen, NULL, &st) == 0);
  CHECK(alllen == 5 && memcmp(all, "third", 5) == 0);
  free(all);

  /* At most AOS_FA_FDCACHE_SLOTS: the least recently read gives way. */
  char name[16];
  for (int i = 0; i < AOS_FA_FDCACHE_SLOTS + 3; i++) {
    snprintf(name, sizeof name, "n%d", i);
    put(dfd, name, name, strlen(name));
  }
  nanosleep(&settle, NULL);
  for (int i = 0; i < AOS_FA_FDCACHE_SLOTS + 3; i++) {
    snprintf(name, sizeof name, "n%d", i);
    const char *n[] = {"d", name};
    range_is(&root, n, 2, name, strlen(name));
    CHECK(open_fds(NULL) == base_fds + (i + 3 < AOS_FA_FDCACHE_SLOTS ? i + 3 : AOS_FA_FDCACHE_SLOTS));
  }
  CHECK(aos_fa_fdcache_count(root.fdcache) == AOS_FA_FDCACHE_SLOTS);

  /* In the whole process at most AOS_FA_FDCACHE_PROCESS_MAX, whatever the readers. */
  enum { READERS = AOS_FA_FDCACHE_PROCESS_MAX / AOS_FA_FDCACHE_SLOTS + 2 };
  aos_fa_root more[READERS];
  int kept = AOS_FA_FDCACHE_SLOTS;
  for (int r = 0; r < READERS; r++) {
    more[r].resolver = resolver;
    more[r].fdcache = aos_fa_fdcache_new();
    CHECK(aos_fa_root_open(base, &more[r].fd, &st) == 0);
    for (int i = 0; i < AOS_FA_FDCACHE_SLOTS; i++) {
      snprintf(name, sizeof name, "n%d", i);
      const char *n[] = {"d", name};
      range_is(&more[r], n, 2, name, strlen(name));
    }
    kept += aos_fa_fdcache_count(more[r].fdcache);
  }
  CHECK(kept == AOS_FA_FDCACHE_PROCESS_MAX);
  for (int r = 0; r < READERS; r++) {
    aos_fa_fdcache_free(more[r].fdcache);
    aos_fa_root_close(more[r].fd);
  }

  /* Freed: every kept descriptor is closed. */
  aos_fa_fdcache_free(root.fdcache);
  root.fdcache = NULL;
  CHECK(open_fds(NULL) == base_fds);
  close(dfd);
  aos_fa_root_close(root.fd);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  static const char *const sub[] = {"portable", "portable-kept", "openat2", "openat2-kept", "keep-portable", "keep-openat2"};
  char dirs[6][4096];
  for (int i = 0; i < 6; i++) {
    snprintf(dirs[i], sizeof dirs[i], "%s/%s", argv[1], sub[i]);
    if (mkdir(dirs[i], 0755) != 0) return 2;
  }
  bool openat2 = aos_fa_openat2_available();
  run(AOS_FA_RESOLVE_PORTABLE, dirs[0], false);
  run(AOS_FA_RESOLVE_PORTABLE, dirs[1], true);
  if (openat2) run(AOS_FA_RESOLVE_OPENAT2, dirs[2], false);
  if (openat2) run(AOS_FA_RESOLVE_OPENAT2, dirs[3], true);
  keep_checks(AOS_FA_RESOLVE_PORTABLE, dirs[4]);
  if (openat2) keep_checks(AOS_FA_RESOLVE_OPENAT2, dirs[5]);
  if (failures != 0) return 1;
  puts("ok");
  return 0;
}
