/* file-authority: creating a directory relative to its retained parent (POSIX). */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int aos_fa_make_directory(const aos_fa_root *root, const char *const *segs, size_t count,
                          bool parents, uint32_t mode, bool *created, aos_fa_status *st) {
  *created = false;
  if (mode > 0777) return aos_fa_fail(st, AOS_FA_INVALID_PATH, EINVAL, -1);
  if (count == 0) {
    int r = aos_fa_segments_check(segs, count, st);
    if (r == 0) r = aos_fa_root_check(root->fd, st);
    return r; /* the root: a directory already there */
  }
  int dir;
  unsigned flags = AOS_FA_WALK_SYNC | (parents ? AOS_FA_WALK_CREATE : 0);
  int r = aos_fa_posix_parent(root, segs, count, flags, &dir, st);
  if (r != 0) {
    if (st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO; /* ENOENT at its index */
    return r;
  }
  int last = (int)count - 1;
  /* Confinement: the parent is beneath the root immediately before the mkdir, and
   * after it; a parent moved out in between gets the new directory taken away again
   * (only if it is still the one made here, and empty) and the call is FILE_CHANGED. */
  aos_fa_guard guard;
  aos_fa_guard_begin(&guard, root, dir, -1);
  r = aos_fa_beneath_dir(root, dir, st);
  if (r != 0) {
    aos_fa_guard_end(&guard);
    aos_fa_posix_parent_close(root, dir);
    return r;
  }
  int made_r = mkdirat(dir, segs[last], (mode_t)mode);
  int made_e = errno;
  bool moved = made_r == 0 && aos_fa_beneath_dir(root, dir, st) != 0;
  if (made_r == 0 && !moved) moved = aos_fa_guard_moved(&guard);
  aos_fa_guard_end(&guard);
  errno = made_e;
  if (made_r == 0) {
    struct stat made;
    bool have = fstatat(dir, segs[last], &made, AT_SYMLINK_NOFOLLOW) == 0;
    if (moved) {
      aos_fa_posix_undo_mkdir(dir, segs[last], have ? &made : NULL);
      aos_fa_posix_parent_close(root, dir);
      return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    }
    r = aos_fa_posix_flush_dir(dir);
    aos_fa_posix_parent_close(root, dir);
    *created = true;
    if (r != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
    aos_fa_status_ok(st);
    return 0;
  }
  int e = errno;
  if (e == EEXIST) {
    struct stat sb;
    int s = fstatat(dir, segs[last], &sb, AT_SYMLINK_NOFOLLOW);
    int se = errno;
    aos_fa_posix_parent_close(root, dir);
    if (s != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, se == ENOENT ? EEXIST : se, last);
    if (S_ISDIR(sb.st_mode)) {
      aos_fa_status_ok(st);
      return 0;
    }
    if (S_ISLNK(sb.st_mode)) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, ELOOP, last);
    return aos_fa_fail(st, AOS_FA_ENTRY_EXISTS, EEXIST, last);
  }
  aos_fa_posix_parent_close(root, dir);
  return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
}
