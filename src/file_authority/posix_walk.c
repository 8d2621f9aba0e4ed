/* file-authority: retained roots and resolution beneath them (POSIX).
 *
 * Two resolvers produce the same results. On Linux 5.6+ a directory below the root
 * is opened with one openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS) call; mount points are crossed (no RESOLVE_NO_XDEV: a
 * mount below the root is part of the tree its owner approved). Any openat2 failure
 * is resolved again by the portable walk, which names the exact segment and kind.
 * The portable walk opens one component at a time with openat(O_NOFOLLOW |
 * O_DIRECTORY) relative to the previous descriptor. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#endif

#ifdef O_PATH
#define AOS_FA__O_SEARCH O_PATH
#else
#define AOS_FA__O_SEARCH O_RDONLY
#endif

#define AOS_FA__OPENAT2_RETRIES 64
#define AOS_FA__CREATE_RETRIES 8

/* ------------------------------------------------------------------ openat2 */

#if defined(__linux__) && (defined(SYS_openat2) || defined(__NR_openat2) || defined(__x86_64__) || defined(__aarch64__))
#define AOS_FA__HAVE_OPENAT2 1
#ifndef SYS_openat2
#ifdef __NR_openat2
#define SYS_openat2 __NR_openat2
#else
#define SYS_openat2 437 /* the same number on every architecture */
#endif
#endif
/* struct open_how and the RESOLVE_* values of <linux/openat2.h>, which older C
 * libraries' headers lack; the kernel ABI is fixed. */
typedef struct {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
} aos_fa__open_how;
#define AOS_FA__RESOLVE_NO_MAGICLINKS 0x02u
#define AOS_FA__RESOLVE_NO_SYMLINKS 0x04u
#define AOS_FA__RESOLVE_BENEATH 0x08u

static int aos_fa__openat2(int dirfd, const char *path, int flags) {
  aos_fa__open_how how;
  memset(&how, 0, sizeof how);
  how.flags = (uint64_t)(unsigned)flags;
  how.resolve = AOS_FA__RESOLVE_BENEATH | AOS_FA__RESOLVE_NO_SYMLINKS |
                AOS_FA__RESOLVE_NO_MAGICLINKS;
  long r;
  do {
    r = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
  } while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : (int)r;
}
#endif

int aos_fa_posix_openat2(int dirfd, const char *path, int flags) {
#ifdef AOS_FA__HAVE_OPENAT2
  int fd = -EAGAIN;
  /* EAGAIN: a rename elsewhere on the system raced the lookup; bounded retry. */
  for (int tries = 0; fd == -EAGAIN && tries < AOS_FA__OPENAT2_RETRIES; tries++) {
    fd = aos_fa__openat2(dirfd, path, flags);
  }
  return fd;
#else
  (void)dirfd;
  (void)path;
  (void)flags;
  return -ENOSYS;
#endif
}

int aos_fa_posix_join(const char *const *segs, size_t count, char *out, size_t cap) {
  size_t used = 0;
  for (size_t i = 0; i < count; i++) {
    size_t n = strlen(segs[i]);
    if (used + n + 2 > cap) return -ENAMETOOLONG;
    if (i > 0) out[used++] = '/';
    memcpy(out + used, segs[i], n);
    used += n;
  }
  out[used] = '\0';
  return 0;
}

bool aos_fa_openat2_available(void) {
#ifdef AOS_FA__HAVE_OPENAT2
  int fd = aos_fa__openat2(AT_FDCWD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false; /* ENOSYS, EINVAL/E2BIG (flags unknown), EPERM (seccomp) */
  close(fd);
  return true;
#else
  return false;
#endif
}

/* ------------------------------------------------------------------- roots */

int aos_fa_root_open(const char *path, int *fd_out, aos_fa_status *st) {
  *fd_out = -1;
  int fd;
  do {
    fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int e = errno;
    if (e == ENOTDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, -1);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, -1);
  }
  *fd_out = fd;
  aos_fa_status_ok(st);
  return 0;
}

void aos_fa_root_close(int fd) {
  if (fd >= 0) close(fd);
}

int aos_fa_posix_look_kind(int dir, const char *name, struct stat *sb) {
#if defined(__linux__) && defined(STATX_BASIC_STATS)
  struct statx sx;
  int flags = AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT | (name == NULL ? AT_EMPTY_PATH : 0);
  unsigned mask = STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE | STATX_NLINK;
  if (statx(dir, name == NULL ? "" : name, flags, mask, &sx) == 0) {
    memset(sb, 0, sizeof *sb);
    sb->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    sb->st_ino = (ino_t)sx.stx_ino;
    sb->st_mode = (mode_t)sx.stx_mode;
    sb->st_size = (off_t)sx.stx_size;
    sb->st_nlink = (nlink_t)sx.stx_nlink;
    return 0;
  }
  if (errno != ENOSYS && errno != EPERM) return -errno; /* EPERM: a seccomp filter */
#endif
  int r = name == NULL ? fstat(dir, sb) : fstatat(dir, name, sb, AT_SYMLINK_NOFOLLOW);
  return r == 0 ? 0 : -errno;
}

int aos_fa_root_check(int fd, aos_fa_status *st) {
  struct stat sb;
  /* The link count only: a look that reads no timestamp (aos_fa_posix_look_kind). */
  int r = aos_fa_posix_look_kind(fd, NULL, &sb);
  if (r != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, -r, -1);
  if (sb.st_nlink == 0) return aos_fa_fail(st, AOS_FA_ROOT_CHANGED, 0, -1);
  aos_fa_status_ok(st);
  return 0;
}

int aos_fa_root_same(int fd_a, int fd_b, bool *same, aos_fa_status *st) {
  struct stat a, b;
  *same = false;
  if (fstat(fd_a, &a) != 0 || fstat(fd_b, &b) != 0) {
    return aos_fa_fail(st, AOS_FA_HOST_IO, errno, -1);
  }
  *same = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
  aos_fa_status_ok(st);
  return 0;
}

/* ------------------------------------------------------------- resolution */

static int aos_fa__open_dir(int dirfd, const char *name, int access) {
  int fd;
  do {
    fd = openat(dirfd, name, access | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd < 0 ? -errno : fd;
}

/* Why opening `name` below `dirfd` as a directory failed with ELOOP/ENOTDIR: a
 * symlink (ELOOP) or something else that is not a directory (ENOTDIR). */
static int aos_fa__classify(int dirfd, const char *name, int err) {
  struct stat sb;
  if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(sb.st_mode)) return ELOOP;
    if (!S_ISDIR(sb.st_mode)) return ENOTDIR;
  }
  return err;
}

void aos_fa_posix_undo_mkdir(int dir, const char *name, const struct stat *made) {
  if (made == NULL) return;
  /* rmdir removes only an empty directory; the look before it makes sure it is ours
   * (someone could have put another directory at the name in between: the window of
   * one call, and that one would have to be empty too). */
  struct stat now;
  if (fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == made->st_dev &&
      now.st_ino == made->st_ino) {
    (void)unlinkat(dir, name, AT_REMOVEDIR);
  }
}

static int aos_fa__walk_portable(const aos_fa_root *root, const char *const *segs, size_t count,
                                 unsigned flags, int *dir_out, aos_fa_status *st) {
  int rootfd = root->fd;
  int final_access = (flags & (AOS_FA_WALK_SYNC | AOS_FA_WALK_LIST)) ? O_RDONLY : AOS_FA__O_SEARCH;
  int cur = rootfd;
  if (count == 0) {
    int fd = aos_fa__open_dir(rootfd, ".", final_access);
    if (fd < 0) return aos_fa_fail(st, AOS_FA_HOST_IO, -fd, -1);
    *dir_out = fd;
    aos_fa_status_ok(st);
    return 0;
  }
  for (size_t i = 0; i < count; i++) {
    int access = i + 1 == count ? final_access : AOS_FA__O_SEARCH;
    int fd = aos_fa__open_dir(cur, segs[i], access);
    for (int tries = 0; fd == -ENOENT && (flags & AOS_FA_WALK_CREATE) &&
                        tries < AOS_FA__CREATE_RETRIES;
         tries++) {
      /* Confinement: the directory a missing one is made in is beneath the root just
       * before the mkdir, and after it; made outside (its parent moved out meanwhile),
       * it is removed again and the call is FILE_CHANGED (posix_beneath.c). */
      aos_fa_status bst;
      aos_fa_guard guard;
      aos_fa_guard_begin(&guard, root, cur, -1);
      if (aos_fa_beneath_dir(root, cur, &bst) != 0) {
        aos_fa_guard_end(&guard);
        if (cur != rootfd) close(cur);
        if (bst.kind == AOS_FA_FILE_CHANGED) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
        return aos_fa_fail(st, AOS_FA_HOST_IO, bst.err, (int)i);
      }
      int r;
      do {
        r = mkdirat(cur, segs[i], 0777);
      } while (r != 0 && errno == EINTR);
      if (r != 0 && errno != EEXIST) {
        fd = -errno;
        aos_fa_guard_end(&guard);
        break;
      }
      fd = aos_fa__open_dir(cur, segs[i], access);
      bool moved = r == 0 && aos_fa_beneath_dir(root, cur, &bst) != 0;
      if (r == 0 && !moved && aos_fa_guard_moved(&guard)) {
        moved = true;
        aos_fa_fail(&bst, AOS_FA_FILE_CHANGED, 0, -1);
      }
      aos_fa_guard_end(&guard);
      if (moved) {
        struct stat made;
        bool have = fd >= 0 && fstat(fd, &made) == 0;
        if (fd >= 0) close(fd);
        aos_fa_posix_undo_mkdir(cur, segs[i], have ? &made : NULL);
        if (cur != rootfd) close(cur);
        if (bst.kind == AOS_FA_FILE_CHANGED) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
        return aos_fa_fail(st, AOS_FA_HOST_IO, bst.err, (int)i);
      }
    }
    if (fd < 0) {
      int e = -fd;
      if (e == ELOOP || e == ENOTDIR) e = aos_fa__classify(cur, segs[i], e);
      if (cur != rootfd) close(cur);
      if (e == ENOENT) return aos_fa_fail(st, AOS_FA_NOT_FOUND, e, (int)i);
      if (e == ELOOP || e == ENOTDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, (int)i);
      return aos_fa_fail(st, AOS_FA_HOST_IO, e, (int)i);
    }
    if (cur != rootfd) close(cur);
    cur = fd;
  }
  *dir_out = cur;
  aos_fa_status_ok(st);
  return 0;
}

#ifdef AOS_FA__HAVE_OPENAT2
/* One openat2 call for the whole directory path. Returns the descriptor, or a
 * negative errno when the portable walk must decide (any failure). */
static int aos_fa__walk_openat2(int rootfd, const char *const *segs, size_t count,
                                unsigned flags) {
  char path[4096];
  int r = aos_fa_posix_join(segs, count, path, sizeof path);
  if (r != 0) return r;
  int access = (flags & (AOS_FA_WALK_SYNC | AOS_FA_WALK_LIST)) ? O_RDONLY : AOS_FA__O_SEARCH;
  return aos_fa_posix_openat2(rootfd, path, access | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}
#endif

/* A walk that failed: ROOT_CHANGED when the cause is that the root was removed (a
 * removed directory has no entries and cannot gain any, so a walk beneath it always
 * fails: the root's liveness need only be checked then), else the walk's own failure. */
static int aos_fa__walk_failed(int rootfd, int r, aos_fa_status *st) {
  aos_fa_status root_st;
  if (aos_fa_root_check(rootfd, &root_st) != 0 && root_st.kind == AOS_FA_ROOT_CHANGED) {
    return aos_fa_fail(st, AOS_FA_ROOT_CHANGED, 0, -1);
  }
  return r;
}

int aos_fa_walk(const aos_fa_root *root, const char *const *segs, size_t count,
                unsigned flags, int *dir_out, aos_fa_status *st) {
  *dir_out = -1;
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  if (count == 0) {
    /* The root itself opens even once removed: look. */
    r = aos_fa_root_check(root->fd, st);
    if (r != 0) return r;
  }
#ifdef AOS_FA__HAVE_OPENAT2
  if (root->resolver == AOS_FA_RESOLVE_OPENAT2 && count > 0) {
    int fd = aos_fa__walk_openat2(root->fd, segs, count, flags);
    if (fd >= 0) {
      *dir_out = fd;
      aos_fa_status_ok(st);
      return 0;
    }
    /* Fall through: the portable walk names the segment and the kind, or creates
     * the missing directories; it is as safe, only slower. */
  }
#endif
  r = aos_fa__walk_portable(root, segs, count, flags, dir_out, st);
  if (r != 0 && count > 0) r = aos_fa__walk_failed(root->fd, r, st);
  return r;
}
