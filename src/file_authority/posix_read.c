/* file-authority: bounded, consistent reads of one regular file (POSIX).
 *
 * A read is returned only if the file's identity, size and modification time are the
 * same before and after it. That alone misses one case: the kernel sets the
 * modification time when a write *starts*, so an in-place write already under way at
 * the open (or several writes within one timestamp tick) changes bytes under the read
 * while the time stays put. A file whose modification time is recent (within
 * AOS_FA__RACY_NS of the open, or in the future) is therefore "racy", as git calls an
 * index entry it cannot trust by time alone. For a racy file:
 *  - on Linux, lseek(SEEK_DATA) first: ext4, tmpfs and btrfs take the inode lock
 *    for it, which a buffered write holds from before it sets the time until its
 *    last byte is copied, so the lseek returns only once a write begun before the
 *    open has finished (a later write sets a newer time, which the fstat after the
 *    read sees; kernels with fine-grained timestamps make that time differ);
 *  - its content is read again and must come back identical, with the same metadata,
 *    before it is returned. Two reads that differ are retried a bounded number of
 *    times, then reported as FILE_CHANGED.
 * Files not written recently cost one read, as before. The residual limit (a writer
 * on a filesystem that takes no lock for SEEK_DATA, stalled mid-copy across both
 * reads) is stated in docs/file-authority.md. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif

/* A write that began up to this long before the open may still be copying bytes. */
#define AOS_FA__RACY_NS (1000LL * 1000 * 1000)
/* Consecutive re-reads that may disagree before the read is FILE_CHANGED. */
#define AOS_FA__RACY_RETRIES 4

static bool aos_fa__same_version(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtime == b->st_mtime && AOS_FA_MTIME_NS(*a) == AOS_FA_MTIME_NS(*b);
}

static int64_t aos_fa__now_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return INT64_MAX; /* unknown: racy */
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* True when `sb`'s modification time is not clearly older than `open_ns`. */
static bool aos_fa__racy(const struct stat *sb, int64_t open_ns) {
  int64_t mtime_ns = (int64_t)sb->st_mtime * 1000000000LL + AOS_FA_MTIME_NS(*sb);
  return open_ns == INT64_MAX || mtime_ns >= open_ns - AOS_FA__RACY_NS;
}

/* Reads up to `want` bytes from `offset`; fewer only at end of file. Returns the
 * count or -errno. */
static ssize_t aos_fa__read_full(int fd, uint8_t *buf, size_t want, uint64_t offset) {
  size_t got = 0;
  while (got < want) {
    ssize_t n = pread(fd, buf + got, want - got, (off_t)(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  return (ssize_t)got;
}

/* One pass over the open file: reads `size` bytes from `offset` into buf; for a whole
 * read (`probe`), then probes for one more byte (into a byte of its own, so buf holds
 * exactly the caller's destination); and fstats afterwards. For a whole file that has
 * not changed that is a pread of the whole file and one that returns 0, as a single
 * read of size + 1 bytes would make. Returns 0 when exactly `size` bytes came back
 * and the metadata still matches `opened`; otherwise fails *st (HOST_IO,
 * OVER_BUDGET, FILE_CHANGED). */
static int aos_fa__read_pass(int fd, uint8_t *buf, size_t size, uint64_t offset, bool probe,
                             uint64_t max_bytes, const struct stat *opened, int last,
                             aos_fa_status *st) {
  ssize_t got = aos_fa__read_full(fd, buf, size, offset);
  if (got < 0) return aos_fa_fail(st, AOS_FA_HOST_IO, (int)-got, last);
  if ((size_t)got != size) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1); /* shrank */
  if (probe) {
    uint8_t extra;
    ssize_t n;
    do {
      n = pread(fd, &extra, 1, (off_t)(offset + size));
    } while (n < 0 && errno == EINTR);
    if (n < 0) return aos_fa_fail(st, AOS_FA_HOST_IO, errno, last);
    if (n > 0) {
      /* Grew: a byte beyond the budget is over budget; otherwise it changed. */
      if ((uint64_t)size + 1 > max_bytes) return aos_fa_fail(st, AOS_FA_OVER_BUDGET, 0, -1);
      return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    }
  }
  struct stat after;
  if (fstat(fd, &after) != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, errno, last);
  if (!aos_fa__same_version(opened, &after)) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  return 0;
}

/* Reads the racy file again until two consecutive passes agree byte for byte.
 * `buf` holds the first pass; on success it holds bytes that two passes saw. */
static int aos_fa__confirm(int fd, uint8_t *buf, size_t size, uint64_t offset, bool probe,
                           uint64_t max_bytes, const struct stat *opened, int last,
                           aos_fa_status *st) {
  uint8_t *again = malloc(size > 0 ? size : 1);
  if (again == NULL) return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  int r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  for (int i = 0; i < AOS_FA__RACY_RETRIES; i++) {
    int p = aos_fa__read_pass(fd, again, size, offset, probe, max_bytes, opened, last, st);
    if (p != 0) {
      r = p;
      break;
    }
    if (size == 0 || memcmp(buf, again, size) == 0) {
      r = 0;
      break;
    }
    memcpy(buf, again, size);
    r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  free(again);
  return r;
}

/* Opens the regular file segs[0..count) for reading: *fd and its metadata at the
 * open (*opened), *open_ns the time just before the open. Fails *st otherwise. */
static int aos_fa__open_regular(const aos_fa_root *root, const char *const *segs, size_t count,
                                int *fd_out, struct stat *opened, int64_t *open_ns,
                                aos_fa_status *st) {
  *fd_out = -1;
  /* No segments names the root itself: a directory, never a regular file. */
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, -1);
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  int last = (int)count - 1;
  int dir = root->fd;
  if (count > 1) {
    r = aos_fa_walk(root, segs, count - 1, 0, &dir, st);
    if (r != 0) return r;
  } else {
    r = aos_fa_root_check(root->fd, st);
    if (r != 0) return r;
  }

  /* Look before opening: a FIFO, socket or device is refused without being opened. */
  struct stat before;
  if (fstatat(dir, segs[last], &before, AT_SYMLINK_NOFOLLOW) != 0) {
    int e = errno;
    if (dir != root->fd) close(dir);
    if (e == ENOENT) return aos_fa_fail(st, AOS_FA_NOT_FOUND, e, last);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  if (!S_ISREG(before.st_mode)) {
    if (dir != root->fd) close(dir);
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, S_ISLNK(before.st_mode) ? ELOOP : 0, last);
  }

  /* The entry may be swapped between the look and the open: the open still never
   * follows a link and never blocks, and the descriptor is checked again. */
  *open_ns = aos_fa__now_ns();
  int fd;
  do {
    fd = openat(dir, segs[last], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  int open_err = fd < 0 ? errno : 0;
  if (dir != root->fd) close(dir);
  if (fd < 0) {
    if (open_err == ENOENT) return aos_fa_fail(st, AOS_FA_NOT_FOUND, open_err, last);
    if (open_err == ELOOP || open_err == ENXIO || open_err == EISDIR) {
      return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, open_err, last);
    }
    return aos_fa_fail(st, AOS_FA_HOST_IO, open_err, last);
  }

  if (fstat(fd, opened) != 0) {
    int e = errno;
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  if (!S_ISREG(opened->st_mode)) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, last);
  }
  if (opened->st_size < 0) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, EOVERFLOW, last);
  }
  *fd_out = fd;
  return 0;
}

/* Reads [offset, offset + size) of the open file into the caller's buffer under the
 * consistency rule; `probe` for a whole read (growth past the end is seen). Closes fd. */
static int aos_fa__read_consistent(int fd, uint8_t *buf, size_t size, uint64_t offset, bool probe,
                                   uint64_t max_bytes, const struct stat *opened, int64_t open_ns,
                                   int last, aos_fa_status *st) {
  bool racy = aos_fa__racy(opened, open_ns);
#if defined(__linux__) && defined(SEEK_DATA)
  if (racy) (void)lseek(fd, 0, SEEK_DATA); /* a barrier only: ENXIO (empty) is fine */
#endif
  int r = aos_fa__read_pass(fd, buf, size, offset, probe, max_bytes, opened, last, st);
  if (r == 0 && racy) r = aos_fa__confirm(fd, buf, size, offset, probe, max_bytes, opened, last, st);
  close(fd);
  return r;
}

int aos_fa_read_into(const aos_fa_root *root, const char *const *segs, size_t count,
                     uint64_t max_bytes, aos_fa_alloc alloc, void *ctx, uint8_t **data,
                     size_t *len, aos_fa_version *version, aos_fa_status *st) {
  *data = NULL;
  *len = 0;
  if (version != NULL) memset(version, 0, sizeof *version);
  int fd;
  struct stat opened;
  int64_t open_ns = 0;
  int r = aos_fa__open_regular(root, segs, count, &fd, &opened, &open_ns, st);
  if (r != 0) return r;
  int last = (int)count - 1;
  if ((uint64_t)opened.st_size > max_bytes) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_OVER_BUDGET, 0, -1);
  }
  if ((uint64_t)opened.st_size > (uint64_t)SIZE_MAX - 1) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }
  size_t size = (size_t)opened.st_size;
  /* The caller's destination, exactly the size (the growth probe has its own byte). */
  uint8_t *buf = alloc(ctx, size);
  *data = buf;
  if (buf == NULL && size > 0) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }
  r = aos_fa__read_consistent(fd, buf, size, 0, true, max_bytes, &opened, open_ns, last, st);
  if (r != 0) return r;
  *len = size;
  if (version != NULL) aos_fa_posix_version(&opened, version);
  aos_fa_status_ok(st);
  return 0;
}

int aos_fa_read_range(const aos_fa_root *root, const char *const *segs, size_t count,
                      uint64_t offset, uint64_t length, aos_fa_alloc alloc, void *ctx,
                      uint8_t **data, size_t *len, uint64_t *size, aos_fa_version *version,
                      aos_fa_status *st) {
  *data = NULL;
  *len = 0;
  *size = 0;
  if (version != NULL) memset(version, 0, sizeof *version);
  int fd;
  struct stat opened;
  int64_t open_ns = 0;
  int r = aos_fa__open_regular(root, segs, count, &fd, &opened, &open_ns, st);
  if (r != 0) return r;
  int last = (int)count - 1;
  uint64_t file_size = (uint64_t)opened.st_size;
  uint64_t want = offset < file_size ? file_size - offset : 0;
  if (want > length) want = length;
  if (want > (uint64_t)SIZE_MAX - 1) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }
  size_t n = (size_t)want;
  uint8_t *buf = alloc(ctx, n);
  *data = buf;
  if (buf == NULL && n > 0) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }
  /* No probe: a file that grows or shrinks changes its size, which the fstat after
   * the read compares. */
  r = aos_fa__read_consistent(fd, buf, n, offset, false, UINT64_MAX, &opened, open_ns, last, st);
  if (r != 0) return r;
  *len = n;
  *size = file_size;
  if (version != NULL) aos_fa_posix_version(&opened, version);
  aos_fa_status_ok(st);
  return 0;
}
