/* file-authority: atomic replacement of one file through its retained parent (POSIX). */
#include "file_authority/fa.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/random.h>
#endif

#define AOS_FA__TEMP_TRIES 16

static void aos_fa__random(uint8_t *out, size_t n) {
#if defined(__linux__)
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(out + got, n - got, GRND_NONBLOCK);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += (size_t)r;
  }
  if (got == n) return;
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
  arc4random_buf(out, n);
  return;
#endif
  /* No entropy source answered: the name only needs to be unlikely to collide (the
   * file is created exclusively, so a collision is retried, never shared). */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
               ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&ts;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    out[i] = (uint8_t)x;
  }
}

/* ".aos-<32 hex>.tmp": a name no segment rule stops a caller from using, but one
 * that is never reused: each attempt is random and created exclusively. */
static void aos_fa__temp_name(char name[48]) {
  static const char hex[] = "0123456789abcdef";
  uint8_t r[16];
  aos_fa__random(r, sizeof r);
  memcpy(name, ".aos-", 5);
  for (size_t i = 0; i < sizeof r; i++) {
    name[5 + 2 * i] = hex[r[i] >> 4];
    name[6 + 2 * i] = hex[r[i] & 15];
  }
  memcpy(name + 5 + 2 * sizeof r, ".tmp", 5);
}

static int aos_fa__write_all(int fd, const uint8_t *data, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, data + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    done += (size_t)n;
  }
  return 0;
}

static int aos_fa__fsync(int fd, bool directory) {
  int r;
  do {
    r = fsync(fd);
  } while (r != 0 && errno == EINTR);
  if (r == 0) return 0;
  /* Some filesystems cannot flush a directory descriptor; the rename is then as
   * durable as that filesystem makes it. */
  if (directory && (errno == EINVAL || errno == ENOTSUP)) return 0;
  return -errno;
}

/* Removes the temporary name if it still names our file (never someone else's). */
static void aos_fa__remove_temp(int dir, const char *name, const struct stat *ours) {
  struct stat sb;
  if (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && sb.st_dev == ours->st_dev &&
      sb.st_ino == ours->st_ino) {
    unlinkat(dir, name, 0);
  }
}

int aos_fa_write(const aos_fa_root *root, const char *const *segs, size_t count,
                 const uint8_t *data, size_t len, bool create_parents, aos_fa_status *st) {
  /* No segments names the root itself: a directory, never replaced. */
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, -1);
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  if (len > 0 && data == NULL) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  if (!aos_fa_utf8_valid(data, len)) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  int last = (int)count - 1;
  const char *target = segs[last];

  int dir = root->fd;
  if (count > 1) {
    unsigned flags = AOS_FA_WALK_SYNC | (create_parents ? AOS_FA_WALK_CREATE : 0u);
    r = aos_fa_walk(root, segs, count - 1, flags, &dir, st);
    /* A missing parent is a host failure for a write, not an absent result. */
    if (r != 0 && st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO;
    if (r != 0) return r;
  } else {
    r = aos_fa_root_check(root->fd, st);
    if (r != 0) return r;
  }

  int tmp = -1;
  char tmpname[48];
  struct stat ours;
  memset(&ours, 0, sizeof ours);

  /* The existing target: a regular file (its permission bits are kept), or none. */
  struct stat existing;
  bool replacing = false;
  if (fstatat(dir, target, &existing, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISREG(existing.st_mode)) {
      r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, S_ISLNK(existing.st_mode) ? ELOOP : 0, last);
      goto out;
    }
    replacing = true;
  } else if (errno != ENOENT) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, errno, last);
    goto out;
  }

  /* Exclusive, never through a link; 0666 so the kernel applies the umask. */
  for (int tries = 0; tmp < 0 && tries < AOS_FA__TEMP_TRIES; tries++) {
    aos_fa__temp_name(tmpname);
    do {
      tmp = openat(dir, tmpname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    } while (tmp < 0 && errno == EINTR);
    if (tmp < 0 && errno != EEXIST) break;
  }
  if (tmp < 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, errno, last);
    goto out;
  }
  if (fstat(tmp, &ours) != 0) {
    int e = errno;
    close(tmp);
    tmp = -1;
    /* Without its identity the temporary file cannot be told from another. */
    r = aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    goto out;
  }
  if (replacing && fchmod(tmp, existing.st_mode & 07777) != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, errno, last);
    goto fail_temp;
  }
  r = aos_fa__write_all(tmp, data, len);
  if (r == 0) r = aos_fa__fsync(tmp, false);
  if (r != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
    goto fail_temp;
  }
  if (close(tmp) != 0 && errno != EINTR) {
    tmp = -1;
    r = aos_fa_fail(st, AOS_FA_HOST_IO, errno, last);
    goto fail_temp;
  }
  tmp = -1;

  if (renameat(dir, tmpname, dir, target) != 0) {
    int e = errno;
    if (e == EISDIR || e == ENOTDIR || e == ENOTEMPTY || e == EEXIST) {
      r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, last);
    } else {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    }
    goto fail_temp;
  }
  r = aos_fa__fsync(dir, true);
  if (r != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
    goto out;
  }
  /* The committed name must still be the file just written. */
  struct stat committed;
  if (fstatat(dir, target, &committed, AT_SYMLINK_NOFOLLOW) != 0 ||
      committed.st_dev != ours.st_dev || committed.st_ino != ours.st_ino) {
    r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    goto out;
  }
  aos_fa_status_ok(st);
  r = 0;
  goto out;

fail_temp:
  if (tmp >= 0) close(tmp);
  tmp = -1;
  aos_fa__remove_temp(dir, tmpname, &ours);
out:
  if (dir != root->fd) close(dir);
  return r;
}
