/* file-authority: appending to one regular file through its retained parent (POSIX).
 *
 * The bytes of one call go to the end of the file in ONE write(2) on a descriptor
 * opened with O_APPEND. On a local filesystem the kernel takes the file's inode lock
 * for the whole of such a write, moving the position to the end and copying every byte
 * under it (Linux: ext4, xfs, btrfs, tmpfs, f2fs; macOS: APFS, HFS+), so two appends
 * never interleave, whoever makes them: this package's appends from any thread or
 * process, and also a program that takes no lock of any kind (a shell's `>>`). No
 * lock of the package's own is taken, so an append never waits for another process:
 * a lock would protect only the package's own appenders, cost a call, and let anyone
 * able to open the file stall every append by holding it (flock and OFD locks alike;
 * POSIX record locks are per process, so threads would not even exclude each other).
 *
 * - One write is at most AOS_FA_APPEND_MAX bytes (the most Linux moves in one call);
 *   a longer call is refused before anything is opened.
 * - A write that the filesystem ends early (no space left, a quota, the file-size
 *   limit) is never continued: a second write could land after another process's
 *   append. The call fails HOST_IO and leaves a prefix of its bytes at the end, as a
 *   crash during the write does (the kernel stops between pages on SIGKILL).
 * - A reader that reads while an append is copying may see a prefix of it: the size
 *   grows page by page (this package's reads then report FILE_CHANGED, or wait out the
 *   write: posix_read.c).
 *
 * The entry is looked at first without following it (statx AT_SYMLINK_NOFOLLOW, asking
 * for no timestamp: aos_fa_posix_look_kind; fstatat where there is no statx): a
 * link, directory, FIFO, socket or device is refused without being opened. A regular
 * file is opened O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY: an entry of
 * another kind swapped in between is opened without blocking (a FIFO without a reader
 * is ENXIO and not opened at all), found not regular by fstat, and closed unwritten.
 * A missing file is created exclusively (O_CREAT | O_EXCL | O_NOFOLLOW) with the
 * caller's mode, which the kernel reduces by the umask; an entry appearing meanwhile is
 * looked at again. A set-user-ID or set-group-ID bit on the file is cleared before its
 * first byte changes (the kernel clears them on write only for callers without
 * CAP_FSETID; writeText never carries them over either).
 *
 * durable: the file's data is flushed (fdatasync; macOS F_FULLFSYNC), and the parent
 * directory too when the call created the file.
 *
 * The sequence (Linux, a file directly in the root, durable false): statx, openat,
 * statx, write, close. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif

/* Tries of look-then-open when the entry changes kind under the call (removed after
 * the look, created by someone else before the exclusive create). */
#define AOS_FA__APPEND_TRIES 8

#define AOS_FA__APPEND_FLAGS (O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
/* How long an open for writing waits, in all, for a read lease to go (below). */
#define AOS_FA__LEASE_WAIT_NS (200LL * 1000 * 1000)
#define AOS_FA__LEASE_NAP_NS (50LL * 1000)

/* openat for appending, EINTR retried. A non-blocking open for writing of a file that
 * someone holds a read lease on fails with EWOULDBLOCK while the kernel asks the holder
 * to let go (a read of a file written lately holds one for the few microseconds of
 * its read: posix_read.c); it is tried again, for at most AOS_FA__LEASE_WAIT_NS. */
static int aos_fa__append_openat(int dir, const char *name, int flags, mode_t mode) {
  int64_t waited = 0;
  for (;;) {
    int f = openat(dir, name, flags, mode);
    if (f >= 0) return f;
    if (errno == EINTR) continue;
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || waited >= AOS_FA__LEASE_WAIT_NS) return -1;
    aos_fa_posix_sleep_ns(AOS_FA__LEASE_NAP_NS);
    waited += AOS_FA__LEASE_NAP_NS;
  }
}

/* Opens the regular file `name` in `dir` for appending, or creates it: *fd and
 * *created on success; never opens a link, and opens nothing else that could block or
 * act on open. */
static int aos_fa__append_open(int dir, const char *name, mode_t mode, int last, int *fd,
                               bool *created, aos_fa_status *st) {
  *fd = -1;
  *created = false;
  for (int tries = 0; tries < AOS_FA__APPEND_TRIES; tries++) {
    struct stat sb;
    int f;
    int look = aos_fa_posix_look_kind(dir, name, &sb);
    if (look == 0) {
      if (!S_ISREG(sb.st_mode)) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, aos_fa_posix_kind_errno(sb.st_mode), last);
      f = aos_fa__append_openat(dir, name, AOS_FA__APPEND_FLAGS, 0);
      if (f < 0 && errno == ENOENT) continue; /* removed since the look */
    } else if (look == -ENOENT) {
      f = aos_fa__append_openat(dir, name, AOS_FA__APPEND_FLAGS | O_CREAT | O_EXCL, mode);
      if (f < 0 && errno == EEXIST) continue; /* created by someone else meanwhile */
      *created = f >= 0;
    } else {
      return aos_fa_fail(st, AOS_FA_HOST_IO, -look, last);
    }
    if (f < 0) {
      int e = errno;
      /* Swapped in since the look: a link (ELOOP), a directory (EISDIR), a FIFO
       * without a reader (ENXIO); never opened. */
      if (e == ELOOP || e == EISDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, last);
      if (e == ENXIO) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, last);
      return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    }
    *fd = f;
    return 0;
  }
  return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
}

/* Why a write stopped early without saying: the file-size limit (EFBIG), no space
 * (ENOSPC), or EIO when neither shows. */
static int aos_fa__short_write_errno(int fd) {
  struct rlimit rl;
  off_t end = lseek(fd, 0, SEEK_CUR);
  if (end >= 0 && getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      (rlim_t)end >= rl.rlim_cur) {
    return EFBIG;
  }
  struct statvfs vfs;
  int r;
  do {
    r = fstatvfs(fd, &vfs);
  } while (r != 0 && errno == EINTR);
  if (r == 0 && (vfs.f_bavail == 0 || vfs.f_bfree == 0)) return ENOSPC;
  return EIO;
}

/* Confinement: `dir` is beneath the root now (HOST_IO at the final segment's index). */
static int aos_fa__beneath(const aos_fa_root *root, int dir, int last, aos_fa_status *st) {
  int r = aos_fa_beneath_dir(root, dir, st);
  if (r != 0 && st->kind == AOS_FA_HOST_IO) st->segment = last;
  return r;
}

/* Undoes an append found to have happened where the file's directory may have been
 * outside the root: a file this call created is removed if the name still names it; an
 * existing file is cut back to its size before the write, only if nothing was appended
 * after it (others' bytes are never cut). `before`: the file at its open; `len` the
 * bytes this call wrote (0: none yet). */
static void aos_fa__undo(int dir, const char *name, int fd, const struct stat *before, bool created, size_t len) {
  struct stat now;
  if (created) {
    if (fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == before->st_dev &&
        now.st_ino == before->st_ino) {
      unlinkat(dir, name, 0);
    }
    return;
  }
  off_t end = lseek(fd, 0, SEEK_CUR); /* O_APPEND: where this call's bytes ended */
  off_t start = end - (off_t)len;
  if (len > 0 && start >= 0 && fstat(fd, &now) == 0 && now.st_size == end) {
    int r;
    do {
      r = ftruncate(fd, start);
    } while (r != 0 && errno == EINTR);
  }
}

/* Flushes the file's data to stable storage (macOS: F_FULLFSYNC, falling back to
 * fsync where the filesystem refuses it). 0 or -errno. */
static int aos_fa__flush_data(int fd) {
  int r;
#if defined(__APPLE__) && defined(F_FULLFSYNC)
  do {
    r = fcntl(fd, F_FULLFSYNC);
  } while (r == -1 && errno == EINTR);
  if (r != -1) return 0;
#endif
  do {
#if defined(__linux__)
    r = fdatasync(fd);
#else
    r = fsync(fd);
#endif
  } while (r != 0 && errno == EINTR);
  return r == 0 ? 0 : -errno;
}

int aos_fa_append(const aos_fa_root *root, const char *const *segs, size_t count,
                  const uint8_t *data, size_t len, const aos_fa_append_opts *opts,
                  aos_fa_status *st) {
  /* No segments names the root itself: a directory. */
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, -1);
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  if (opts->mode > 0777) return aos_fa_fail(st, AOS_FA_INVALID_PATH, 0, -1);
  if (len > AOS_FA_APPEND_MAX) return aos_fa_fail(st, AOS_FA_HOST_IO, EFBIG, -1);
  if (len > 0 && data == NULL) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  if (opts->utf8 && !aos_fa_utf8_valid(data, len)) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  int last = (int)count - 1;

  int dir = root->fd;
  if (count > 1) {
    unsigned flags = (opts->durable ? AOS_FA_WALK_SYNC : 0u) | (opts->create_parents ? AOS_FA_WALK_CREATE : 0u);
    r = aos_fa_walk(root, segs, count - 1, flags, &dir, st);
    /* A missing parent is a host failure for a write, not an absent result. */
    if (r != 0 && st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO;
    if (r != 0) return r;
  } else {
    r = aos_fa_root_check(root->fd, st);
    if (r != 0) return r;
  }

  /* Confinement (posix_beneath.c): the parent is watched for moves from here on, and
   * checked to be beneath the root immediately before each change (the creation, the
   * write) and after the last; an append that may have landed outside is undone. */
  aos_fa_guard guard;
  aos_fa_guard_begin(&guard, root, dir, -1);
  int fd;
  bool created;
  r = aos_fa__beneath(root, dir, last, st);
  if (r != 0) goto out;
  r = aos_fa__append_open(dir, segs[last], (mode_t)opts->mode, last, &fd, &created, st);
  if (r != 0) goto out;
  struct stat sb;
  int e = aos_fa_posix_look_kind(fd, NULL, &sb);
  if (e != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, -e, last);
    goto out_fd;
  }
  if (!S_ISREG(sb.st_mode)) {
    r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, aos_fa_posix_kind_errno(sb.st_mode), last);
    goto out_fd;
  }
  if ((sb.st_mode & (S_ISUID | S_ISGID)) != 0 && fchmod(fd, sb.st_mode & 01777) != 0 && errno != EPERM) {
    /* EPERM: not the owner, and so (short of CAP_FOWNER without CAP_FSETID) one whose
     * write the kernel clears the bits for. */
    r = aos_fa_fail(st, AOS_FA_HOST_IO, errno, last);
    goto out_fd;
  }
  r = aos_fa__beneath(root, dir, last, st);
  if (r != 0) {
    if (created) aos_fa__undo(dir, segs[last], fd, &sb, created, 0);
    goto out_fd;
  }
  if (len > 0) {
    ssize_t n;
    do {
      n = write(fd, data, len);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, errno, last);
      goto out_fd;
    }
    if ((size_t)n != len) {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, aos_fa__short_write_errno(fd), last);
      goto out_fd;
    }
  }
  r = aos_fa__beneath(root, dir, last, st);
  if (r == 0 && aos_fa_guard_moved(&guard)) r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  if (r != 0) {
    /* Moved out (or out and back) meanwhile: the bytes may have landed outside. */
    aos_fa__undo(dir, segs[last], fd, &sb, created, len);
    if (st->kind != AOS_FA_HOST_IO) r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    goto out_fd;
  }
  if (opts->durable) {
    r = aos_fa__flush_data(fd);
    if (r == 0 && created) r = aos_fa_posix_flush_dir(dir);
    if (r != 0) {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
      goto out_fd;
    }
  }
  aos_fa_status_ok(st);
  r = 0;
out_fd:
  close(fd);
out:
  aos_fa_guard_end(&guard);
  if (dir != root->fd) close(dir);
  return r;
}
