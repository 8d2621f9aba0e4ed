/* file-authority: stat of one entry without following or opening it (POSIX). On
 * Linux statx (AT_SYMLINK_NOFOLLOW, only the fields needed) where the kernel has it,
 * fstatat otherwise. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"
#include "common/fstype.h" /* struct statfs */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/sysmacros.h>
#endif

static void aos_fa__fill(const struct stat *sb, aos_fa_stat_info *out) {
  out->kind = aos_fa_posix_kind(sb->st_mode);
  out->size = sb->st_size < 0 ? 0 : (uint64_t)sb->st_size;
  out->mtime_ns = (int64_t)sb->st_mtime * 1000000000LL + AOS_FA_MTIME_NS(*sb);
  out->mode = (uint32_t)(sb->st_mode & 0777);
  aos_fa_posix_version(sb, &out->version);
}

/* fstatat(dir, name, AT_SYMLINK_NOFOLLOW) or, for name NULL, fstat(dir); statx where
 * it exists (its fields mapped back into a struct stat). 0 or -errno. */
static int aos_fa__look(int dir, const char *name, struct stat *sb) {
#if defined(__linux__) && defined(STATX_BASIC_STATS)
  struct statx sx;
  int flags = AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT | (name == NULL ? AT_EMPTY_PATH : 0);
  unsigned mask = STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE | STATX_MTIME | STATX_CTIME;
  if (statx(dir, name == NULL ? "" : name, flags, mask, &sx) == 0) {
    memset(sb, 0, sizeof *sb);
    sb->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    sb->st_ino = (ino_t)sx.stx_ino;
    sb->st_mode = (mode_t)sx.stx_mode;
    sb->st_size = (off_t)sx.stx_size;
    sb->st_mtim.tv_sec = (time_t)sx.stx_mtime.tv_sec;
    sb->st_mtim.tv_nsec = (long)sx.stx_mtime.tv_nsec;
    sb->st_ctim.tv_sec = (time_t)sx.stx_ctime.tv_sec;
    sb->st_ctim.tv_nsec = (long)sx.stx_ctime.tv_nsec;
    sb->st_nlink = (nlink_t)sx.stx_nlink;
    return 0;
  }
  if (errno != ENOSYS && errno != EPERM) return -errno; /* EPERM: a seccomp filter */
#endif
  int r = name == NULL ? fstat(dir, sb) : fstatat(dir, name, sb, AT_SYMLINK_NOFOLLOW);
  return r == 0 ? 0 : -errno;
}

/* The filesystem the entry `name` in `dir` lives on is dir's unless it is a mount point
 * (its device differs): then a descriptor of its own, opened without following it and
 * without reading (O_PATH; elsewhere the directory's answer stands). -1: use dir. */
static int aos_fa__own_fs(int dir, const char *name, const struct stat *sb) {
#ifdef O_PATH
  struct stat ds;
  if (name == NULL || fstat(dir, &ds) != 0 || ds.st_dev == sb->st_dev) return -1;
  int fd;
  do {
    fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd;
#else
  (void)dir, (void)name, (void)sb;
  return -1;
#endif
}

int aos_fa_posix_stat_entries(int dir, aos_fa_entry *entries, size_t *count, aos_fa_status *st) {
  size_t n = *count;
  aos_fa_status_ok(st);
  if (n == 0) return 0;
  struct stat ds;
  struct statfs dfs; /* the directory's filesystem, which its entries share but mounts */
  int fr;
  do {
    fr = fstatfs(dir, &dfs);
  } while (fr != 0 && errno == EINTR);
  if (fr != 0 || fstat(dir, &ds) != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, errno, -1);
  /* 0: to look at; 1: settled; 2: gone. */
  uint8_t *state = calloc(n, 1);
  struct stat *sb = malloc(n * sizeof *sb);
  if (state == NULL || sb == NULL) {
    free(state);
    free(sb);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, -1);
  }
  int r = 0;
  for (int tries = 0;; tries++) {
    int64_t wait = 0;
    for (size_t i = 0; i < n && r == 0; i++) {
      if (state[i] != 0) continue;
      int e = aos_fa__look(dir, entries[i].name, &sb[i]);
      if (e == -ENOENT) {
        state[i] = 2;
        continue;
      }
      if (e != 0) {
        r = aos_fa_fail(st, AOS_FA_HOST_IO, -e, -1);
        break;
      }
      /* An entry on another filesystem (a mount point) is judged by that filesystem. */
      int fs = sb[i].st_dev == ds.st_dev ? -1 : aos_fa__own_fs(dir, entries[i].name, &sb[i]);
      int64_t w;
      r = fs >= 0 ? aos_fa_posix_version_ready(fs, &sb[i], &w, st) : aos_fa_posix_version_ready_on(&dfs, &sb[i], &w, st);
      if (fs >= 0) close(fs);
      if (r != 0) break;
      if (w == 0) {
        state[i] = 1;
        aos_fa__fill(&sb[i], entries[i].stat);
        entries[i].kind = entries[i].stat->kind;
      } else if (w > wait) {
        wait = w;
      }
    }
    if (r != 0 || wait == 0) break;
    if (tries + 1 == AOS_FA_SETTLE_TRIES) {
      r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
      break;
    }
    aos_fa_posix_sleep_ns(wait);
  }
  if (r == 0) {
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
      if (state[i] == 2) {
        free(entries[i].name);
        continue;
      }
      entries[kept++] = entries[i];
    }
    *count = kept;
    aos_fa_status_ok(st);
  }
  free(state);
  free(sb);
  return r;
}

int aos_fa_stat(const aos_fa_root *root, const char *const *segs, size_t count,
                aos_fa_stat_info *out, aos_fa_status *st) {
  memset(out, 0, sizeof *out);
  int dir;
  int r = aos_fa_posix_parent(root, segs, count, 0, &dir, st);
  if (r != 0) return r;
  int last = count == 0 ? -1 : (int)count - 1;
  const char *name = count == 0 ? NULL : segs[last];
  struct stat sb;
  /* The version must be settled (posix_settle.c): a look within its tick is made again
   * once the tick is over; where versions cannot tell states apart, UNSUPPORTED_BACKEND. */
  for (int tries = 0;; tries++) {
    r = aos_fa__look(dir, name, &sb);
    if (r != 0) break;
    int fs = aos_fa__own_fs(dir, name, &sb);
    int64_t wait_ns;
    r = aos_fa_posix_version_ready(fs >= 0 ? fs : dir, &sb, &wait_ns, st);
    if (fs >= 0) close(fs);
    if (r != 0) {
      aos_fa_posix_parent_close(root, dir);
      return r;
    }
    if (wait_ns == 0) break;
    if (tries + 1 == AOS_FA_SETTLE_TRIES) {
      aos_fa_posix_parent_close(root, dir);
      return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    }
    aos_fa_posix_sleep_ns(wait_ns);
  }
  aos_fa_posix_parent_close(root, dir);
  if (r == -ENOENT) return aos_fa_fail(st, AOS_FA_NOT_FOUND, ENOENT, last);
  if (r == -ENOTDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, ENOTDIR, last);
  if (r != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
  aos_fa__fill(&sb, out);
  aos_fa_status_ok(st);
  return 0;
}
