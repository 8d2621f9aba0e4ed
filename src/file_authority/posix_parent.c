/* file-authority: the retained parent of an entry, and flushing it (POSIX). Shared by
 * the per-operation files (stat, remove, mkdir, rename). */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <unistd.h>

int aos_fa_posix_parent(const aos_fa_root *root, const char *const *segs, size_t count,
                        unsigned flags, int *dir, aos_fa_status *st) {
  *dir = -1;
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  if (count <= 1) {
    r = aos_fa_root_check(root->fd, st);
    if (r == 0) *dir = root->fd;
    return r;
  }
  return aos_fa_walk(root, segs, count - 1, flags, dir, st);
}

void aos_fa_posix_parent_close(const aos_fa_root *root, int dir) {
  if (dir >= 0 && dir != root->fd) close(dir);
}

int aos_fa_posix_flush_dir(int dir) {
  int r;
  do {
    r = fsync(dir);
  } while (r != 0 && errno == EINTR);
  if (r == 0) return 0;
  if (errno == EINVAL || errno == ENOTSUP) return 0; /* cannot flush a directory here */
  return -errno;
}

aos_fa_entry_kind aos_fa_posix_kind(mode_t mode) {
  if (S_ISREG(mode)) return AOS_FA_KIND_FILE;
  if (S_ISDIR(mode)) return AOS_FA_KIND_DIRECTORY;
  if (S_ISLNK(mode)) return AOS_FA_KIND_SYMLINK;
  return AOS_FA_KIND_OTHER;
}
