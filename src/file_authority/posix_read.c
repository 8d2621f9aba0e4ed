/* file-authority: bounded, consistent reads of one regular file (POSIX). */
#include "file_authority/fa.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __APPLE__
#define AOS_FA__MTIME_NS(sb) ((sb).st_mtimespec.tv_nsec)
#else
#define AOS_FA__MTIME_NS(sb) ((sb).st_mtim.tv_nsec)
#endif

#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif

static bool aos_fa__same_version(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtime == b->st_mtime && AOS_FA__MTIME_NS(*a) == AOS_FA__MTIME_NS(*b);
}

/* Reads up to `want` bytes; fewer only at end of file. Returns the count or -errno. */
static ssize_t aos_fa__read_full(int fd, uint8_t *buf, size_t want) {
  size_t got = 0;
  while (got < want) {
    ssize_t n = read(fd, buf + got, want - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  return (ssize_t)got;
}

int aos_fa_read(const aos_fa_root *root, const char *const *segs, size_t count,
                uint64_t max_bytes, uint8_t **data, size_t *len, aos_fa_status *st) {
  *data = NULL;
  *len = 0;
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

  struct stat opened;
  if (fstat(fd, &opened) != 0) {
    int e = errno;
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  if (!S_ISREG(opened.st_mode)) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, last);
  }
  if (opened.st_size < 0 || (uint64_t)opened.st_size > max_bytes) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_OVER_BUDGET, 0, -1);
  }
  if ((uint64_t)opened.st_size > (uint64_t)SIZE_MAX - 1) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }

  size_t size = (size_t)opened.st_size;
  /* One byte more than the size, to see growth. */
  uint8_t *buf = malloc(size + 1);
  if (buf == NULL) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }
  ssize_t got = aos_fa__read_full(fd, buf, size + 1);
  if (got < 0) {
    close(fd);
    free(buf);
    return aos_fa_fail(st, AOS_FA_HOST_IO, (int)-got, last);
  }
  if ((size_t)got != size) {
    close(fd);
    free(buf);
    /* Grew: a byte beyond the budget is over budget; otherwise it changed. */
    if ((size_t)got > size && (uint64_t)size + 1 > max_bytes) {
      return aos_fa_fail(st, AOS_FA_OVER_BUDGET, 0, -1);
    }
    return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }

  struct stat after;
  int e = fstat(fd, &after) != 0 ? errno : 0;
  close(fd);
  if (e != 0) {
    free(buf);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  if (!aos_fa__same_version(&opened, &after)) {
    free(buf);
    return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  *data = buf;
  *len = size;
  aos_fa_status_ok(st);
  return 0;
}
