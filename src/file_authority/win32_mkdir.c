/* file-authority: creating a directory relative to its retained parent (Windows):
 * NtCreateFile(FILE_CREATE, FILE_DIRECTORY_FILE) with the parent handle as
 * RootDirectory; an existing entry is looked at without following it. `mode` has no
 * Windows meaning: the new directory gets its parent's inheritable ACL. */
#include "file_authority/fa.h"
#include "file_authority/win32.h"

#include <errno.h>

int aos_fa_make_directory(const aos_fa_root *root, const char *const *segs, size_t count,
                          bool parents, uint32_t mode, bool *created, aos_fa_status *st) {
  *created = false;
  if (mode > 0777) return aos_fa_fail(st, AOS_FA_INVALID_PATH, EINVAL, -1);
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  if (count == 0) return aos_fa_root_check(root->fd, st); /* the root: a directory already there */
  HANDLE dir;
  r = aos_fa__parent(root, segs, count, parents ? AOS_FA_WALK_CREATE : 0u, &dir, st);
  if (r != 0) {
    if (st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO; /* ENOENT at its index */
    return r;
  }
  HANDLE rooth = AOS_FA__H(root->fd);
  int last = (int)count - 1;
  HANDLE h;
  int e = aos_fa__nt_open(dir, segs[last], FILE_LIST_DIRECTORY | SYNCHRONIZE, AOS_FA__SHARE_ALL,
                          FILE_CREATE, FILE_DIRECTORY_FILE | AOS_FA__NO_FOLLOW, &h);
  if (e == 0) {
    CloseHandle(h);
    if (dir != rooth) CloseHandle(dir);
    *created = true;
    aos_fa_status_ok(st);
    return 0;
  }
  if (e != EEXIST) {
    if (dir != rooth) CloseHandle(dir);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  e = aos_fa__nt_open(dir, segs[last], FILE_READ_ATTRIBUTES | SYNCHRONIZE, AOS_FA__SHARE_ALL,
                      FILE_OPEN, AOS_FA__NO_FOLLOW, &h);
  if (dir != rooth) CloseHandle(dir);
  if (e != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, e == ENOENT ? EEXIST : e, last);
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  if (!ok) e = aos_fa__win32_errno(GetLastError());
  CloseHandle(h);
  if (!ok) return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  if (attrs & FILE_ATTRIBUTE_REPARSE_POINT) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, ELOOP, last);
  if (attrs & FILE_ATTRIBUTE_DIRECTORY) {
    aos_fa_status_ok(st);
    return 0;
  }
  return aos_fa_fail(st, AOS_FA_ENTRY_EXISTS, EEXIST, last);
}
