/* file-authority: the walk's host calls on POSIX (tree.h; the walk itself is tree.c).
 *
 * A directory is scanned from its descriptor without a second one: on Linux with
 * getdents64 straight into a buffer (the descriptor stays usable to open children by),
 * elsewhere with readdir on a descriptor of the same directory opened for it. A child
 * directory is opened relative to its parent's descriptor with O_NOFOLLOW |
 * O_DIRECTORY; entries are looked at with fstatat / statx (AT_SYMLINK_NOFOLLOW)
 * relative to it, never through a pathname. Confinement is posix_beneath.c's: an
 * inotify watch on each directory while it is read, and its path checked after. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"
#include "file_authority/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

static aos_fa_entry_kind aos_fa__dtype_kind(unsigned char t) {
#ifdef DT_UNKNOWN
  switch (t) {
    case DT_REG: return AOS_FA_KIND_FILE;
    case DT_DIR: return AOS_FA_KIND_DIRECTORY;
    case DT_LNK: return AOS_FA_KIND_SYMLINK;
    case DT_UNKNOWN: return AOS_FA_KIND_UNKNOWN;
    default: return AOS_FA_KIND_OTHER;
  }
#else
  (void)t;
  return AOS_FA_KIND_UNKNOWN;
#endif
}

#if defined(__linux__) && defined(SYS_getdents64)
/* struct linux_dirent64 of the kernel ABI. */
struct aos_fa__dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

#define AOS_FA__SCAN_BUF (64 * 1024)

int aos_fa_tree_scan(int dir, aos_fa_scan_fn fn, void *ctx) {
  char *buf = malloc(AOS_FA__SCAN_BUF);
  if (buf == NULL) return ENOMEM;
  int e = 0;
  for (;;) {
    long n;
    do {
      n = syscall(SYS_getdents64, dir, buf, AOS_FA__SCAN_BUF);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      e = errno;
      break;
    }
    if (n == 0) break;
    for (long off = 0; off < n && e == 0;) {
      const struct aos_fa__dirent64 *d = (const struct aos_fa__dirent64 *)(const void *)(buf + off);
      e = fn(ctx, d->d_name, strlen(d->d_name), aos_fa__dtype_kind(d->d_type));
      off += d->d_reclen;
    }
    if (e != 0) break;
  }
  free(buf);
  return e;
}
#else
int aos_fa_tree_scan(int dir, aos_fa_scan_fn fn, void *ctx) {
  /* readdir takes its descriptor over: a second one of the same directory. */
  int fd;
  do {
    fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno;
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    int e = errno;
    close(fd);
    return e;
  }
  int e = 0;
  for (;;) {
    errno = 0;
    struct dirent *ent = readdir(d);
    if (ent == NULL) {
      e = errno;
      break;
    }
#ifdef DT_UNKNOWN
    e = fn(ctx, ent->d_name, strlen(ent->d_name), aos_fa__dtype_kind(ent->d_type));
#else
    e = fn(ctx, ent->d_name, strlen(ent->d_name), AOS_FA_KIND_UNKNOWN);
#endif
    if (e != 0) break;
  }
  closedir(d);
  return e;
}
#endif

int aos_fa_tree_open_child(int dir, const char *name, int *child) {
  int fd;
  do {
    fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno;
  *child = fd;
  return 0;
}

int aos_fa_tree_kind_at(int dir, const char *name, aos_fa_entry_kind *kind) {
  struct stat sb;
  if (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) return errno;
  *kind = aos_fa_posix_kind(sb.st_mode);
  return 0;
}

int aos_fa_tree_stat_entries(int dir, aos_fa_entry *entries, size_t *count, aos_fa_status *st) {
  return aos_fa_posix_stat_entries(dir, entries, count, st);
}

int aos_fa_tree_watch_open(void) {
  return aos_fa_watch_open();
}

int aos_fa_tree_watch(int w, int dir) {
  return aos_fa_watch_add(w, dir);
}

int aos_fa_tree_confined(const aos_fa_root *root, int w, int wd, int dir, aos_fa_status *st) {
  int r = aos_fa_beneath_dir(root, dir, st);
  /* Moved out and back while it was read: its entries may have been read outside. */
  if (r == 0 && aos_fa_watch_moved(w)) r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  aos_fa_watch_remove(w, wd);
  return r;
}

void aos_fa_tree_unwatch(int w, int wd) {
  aos_fa_watch_remove(w, wd);
}

void aos_fa_tree_watch_close(int w) {
  aos_fa_watch_close(w);
}

void aos_fa_tree_close(int dir) {
  if (dir >= 0) close(dir);
}
