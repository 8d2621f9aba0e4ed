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

/* A staged temporary file: complete, flushed, with its final permission bits, and
 * named `name` in the parent directory. */
typedef struct {
  char name[48];
  struct stat id;
} aos_fa__staged;

/* aos_fa__stage's answer when an unnamed file could not be given a name: stage again
 * the classic way. */
#define AOS_FA__STAGE_NAMED 1

#if defined(__linux__) && defined(O_TMPFILE)
/* Names an O_TMPFILE file exclusively (linkat never replaces): through AT_EMPTY_PATH
 * (needs CAP_DAC_READ_SEARCH) or /proc/self/fd. 0, -EEXIST, or AOS_FA__STAGE_NAMED. */
static int aos_fa__name_unnamed(int tmp, int dir, char name[48]) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", tmp);
  for (int tries = 0; tries < AOS_FA__TEMP_TRIES; tries++) {
    aos_fa__temp_name(name);
    int r = linkat(tmp, "", dir, name, AT_EMPTY_PATH);
    if (r != 0 && errno != EEXIST) r = linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW);
    if (r == 0) return 0;
    if (errno != EEXIST) return AOS_FA__STAGE_NAMED;
  }
  return -EEXIST;
}
#endif

/* Writes data[0..len) into a new file in `dir`: on Linux an O_TMPFILE file that gets
 * its name only once complete (a writer killed while writing leaves nothing behind);
 * otherwise, or when `unnamed` is false, a file created exclusively under a random
 * name without following links. Mode 0666 so the kernel applies the umask; `keep`,
 * if given, is set with fchmod. Returns 0, -errno (nothing left behind), or
 * AOS_FA__STAGE_NAMED. */
static int aos_fa__stage(int dir, const uint8_t *data, size_t len, const mode_t *keep,
                         bool unnamed, aos_fa__staged *out) {
  int tmp = -1;
  bool named = false;
#if defined(__linux__) && defined(O_TMPFILE)
  if (unnamed) {
    do {
      tmp = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    } while (tmp < 0 && errno == EINTR);
  }
#else
  (void)unnamed;
#endif
  if (tmp < 0) {
    for (int tries = 0; tmp < 0 && tries < AOS_FA__TEMP_TRIES; tries++) {
      aos_fa__temp_name(out->name);
      do {
        tmp = openat(dir, out->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      } while (tmp < 0 && errno == EINTR);
      if (tmp < 0 && errno != EEXIST) break;
    }
    if (tmp < 0) return -errno;
    named = true;
  }
  int r = 0;
  if (fstat(tmp, &out->id) != 0) {
    r = -errno;
    close(tmp);
    /* The name was created exclusively a moment ago; without its identity, remove it
     * by name rather than leave it behind. */
    if (named) unlinkat(dir, out->name, 0);
    return r;
  }
  if (keep != NULL && fchmod(tmp, *keep) != 0) r = -errno;
  if (r == 0) r = aos_fa__write_all(tmp, data, len);
  if (r == 0) r = aos_fa__fsync(tmp, false);
#if defined(__linux__) && defined(O_TMPFILE)
  if (r == 0 && !named) {
    r = aos_fa__name_unnamed(tmp, dir, out->name);
    named = r == 0;
  }
#endif
  if (close(tmp) != 0 && errno != EINTR && r == 0) r = -errno;
  if (r != 0 && named) aos_fa__remove_temp(dir, out->name, &out->id);
  return r;
}

int aos_fa_write(const aos_fa_root *root, const char *const *segs, size_t count,
                 const uint8_t *data, size_t len, const aos_fa_write_opts *opts,
                 aos_fa_status *st) {
  bool create_parents = opts->create_parents;
  /* No segments names the root itself: a directory, never replaced. */
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, -1);
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  if (len > 0 && data == NULL) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  if (opts->utf8 && !aos_fa_utf8_valid(data, len)) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
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

  aos_fa__staged staged;
  mode_t keep = replacing ? (existing.st_mode & 07777) : 0;
  /* The portable mode (no Linux-only features) stages under a name from the start. */
  bool unnamed = root->resolver != AOS_FA_RESOLVE_PORTABLE;
  r = aos_fa__stage(dir, data, len, replacing ? &keep : NULL, unnamed, &staged);
  if (r == AOS_FA__STAGE_NAMED) r = aos_fa__stage(dir, data, len, replacing ? &keep : NULL, false, &staged);
  if (r != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
    goto out;
  }
  const char *tmpname = staged.name;
  const struct stat ours = staged.id;

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
  aos_fa__remove_temp(dir, tmpname, &ours);
out:
  if (dir != root->fd) close(dir);
  return r;
}
