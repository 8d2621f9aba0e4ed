/* file-authority: removing one entry relative to its retained parent (POSIX). */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int aos_fa_remove(const aos_fa_root *root, const char *const *segs, size_t count,
                  bool directory, bool *removed, aos_fa_status *st) {
  *removed = false;
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, -1);
  int dir;
  int r = aos_fa_posix_parent(root, segs, count, AOS_FA_WALK_SYNC, &dir, st);
  if (r != 0) {
    if (st->kind == AOS_FA_NOT_FOUND) {
      aos_fa_status_ok(st); /* a missing parent: no such entry */
      return 0;
    }
    return r;
  }
  int last = (int)count - 1;
  struct stat sb;
  if (fstatat(dir, segs[last], &sb, AT_SYMLINK_NOFOLLOW) != 0) {
    int e = errno;
    aos_fa_posix_parent_close(root, dir);
    if (e == ENOENT) {
      aos_fa_status_ok(st);
      return 0;
    }
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  bool is_dir = S_ISDIR(sb.st_mode);
  if (is_dir && !directory) {
    aos_fa_posix_parent_close(root, dir);
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, last);
  }
  /* unlinkat never follows a link. If the entry is swapped for another kind between
   * the look and the unlink, the kernel refuses (EISDIR / ENOTDIR): nothing is
   * removed that the look did not allow. */
  if (unlinkat(dir, segs[last], is_dir ? AT_REMOVEDIR : 0) != 0) {
    int e = errno;
    if (e == EPERM && !is_dir) {
      /* EPERM: Linux's unlink of a directory (one swapped in since the look). */
      struct stat now;
      if (fstatat(dir, segs[last], &now, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(now.st_mode)) e = EISDIR;
    }
    aos_fa_posix_parent_close(root, dir);
    if (e == ENOENT) {
      aos_fa_status_ok(st);
      return 0;
    }
    if (e == EEXIST) e = ENOTEMPTY;
    if (e == EISDIR || e == ENOTDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, last);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  r = aos_fa_posix_flush_dir(dir);
  aos_fa_posix_parent_close(root, dir);
  *removed = true;
  if (r != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
  aos_fa_status_ok(st);
  return 0;
}
