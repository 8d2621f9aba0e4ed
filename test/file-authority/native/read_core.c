/* The file-authority read core on its own, without Node-API: aos_fa_read_into and
 * aos_fa_read_range (slices, end of file, versions, refusals), under both resolvers.
 * Built and run by test/file-authority/hardening-read-core.test.js. Prints "ok". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file_authority/fa.h"

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

static void run(aos_fa_resolver resolver, const char *base) {
  aos_fa_status st;
  aos_fa_root root;
  root.resolver = resolver;
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
  aos_fa_root_close(root.fd);
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  run(AOS_FA_RESOLVE_PORTABLE, argv[1]);
  if (aos_fa_openat2_available()) run(AOS_FA_RESOLVE_OPENAT2, argv[2]);
  if (failures != 0) return 1;
  puts("ok");
  return 0;
}
