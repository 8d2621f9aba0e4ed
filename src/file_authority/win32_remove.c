/* file-authority: removing one entry relative to its retained parent (Windows). The
 * entry is opened for DELETE with FILE_OPEN_REPARSE_POINT (a link or junction is
 * removed as itself, never followed) and deleted through that handle
 * (FileDispositionInfoEx with POSIX semantics where the host has it, else
 * FileDispositionInfo): what is removed is exactly the entry that was looked at. */
#include "file_authority/fa.h"
#include "file_authority/win32.h"

#include <errno.h>

/* FILE_DISPOSITION_INFO_EX (class 21), which older SDK targets do not declare. */
typedef struct {
  DWORD Flags;
} aos_fa__disposition_ex;
#define AOS_FA__FILE_DISPOSITION_INFO_EX ((FILE_INFO_BY_HANDLE_CLASS)21)
#define AOS_FA__DISPOSITION_DELETE 0x1u
#define AOS_FA__DISPOSITION_POSIX 0x2u

/* Marks the entry `h` is open on for deletion. 0 or an errno. */
static int aos_fa__delete(HANDLE h) {
  aos_fa__disposition_ex dx;
  dx.Flags = AOS_FA__DISPOSITION_DELETE | AOS_FA__DISPOSITION_POSIX;
  if (SetFileInformationByHandle(h, AOS_FA__FILE_DISPOSITION_INFO_EX, &dx, sizeof dx)) return 0;
  DWORD e = GetLastError();
  if (e != ERROR_INVALID_PARAMETER && e != ERROR_INVALID_FUNCTION && e != ERROR_NOT_SUPPORTED) {
    return aos_fa__win32_errno(e);
  }
  FILE_DISPOSITION_INFO d;
  d.DeleteFile = TRUE;
  if (SetFileInformationByHandle(h, FileDispositionInfo, &d, sizeof d)) return 0;
  return aos_fa__win32_errno(GetLastError());
}

int aos_fa_remove(const aos_fa_root *root, const char *const *segs, size_t count,
                  bool directory, bool *removed, aos_fa_status *st) {
  *removed = false;
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, -1);
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  HANDLE dir;
  r = aos_fa__parent(root, segs, count, 0, &dir, st);
  if (r != 0) {
    if (st->kind == AOS_FA_NOT_FOUND) {
      aos_fa_status_ok(st); /* a missing parent: no such entry */
      return 0;
    }
    return r;
  }
  HANDLE rooth = AOS_FA__H(root->fd);
  int last = (int)count - 1;
  HANDLE h;
  int e = aos_fa__nt_open(dir, segs[last], DELETE | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
                          AOS_FA__SHARE_ALL, FILE_OPEN, AOS_FA__NO_FOLLOW, &h);
  if (dir != rooth) CloseHandle(dir);
  if (e == ENOENT) {
    aos_fa_status_ok(st);
    return 0;
  }
  if (e != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  if (!ok) {
    e = aos_fa__win32_errno(GetLastError());
    CloseHandle(h);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  /* A reparse point is removed as an entry (as unlinkat removes a symlink), even a
   * directory junction; only a real directory needs `directory`. */
  bool is_dir = (attrs & FILE_ATTRIBUTE_DIRECTORY) && !(attrs & FILE_ATTRIBUTE_REPARSE_POINT);
  if (is_dir && !directory) {
    CloseHandle(h);
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, last);
  }
  e = aos_fa__delete(h);
  CloseHandle(h);
  if (e == ENOENT) {
    aos_fa_status_ok(st); /* already being deleted by someone else */
    return 0;
  }
  if (e != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  /* NTFS journals the deletion; a directory handle cannot be flushed (see win32.c). */
  *removed = true;
  aos_fa_status_ok(st);
  return 0;
}
