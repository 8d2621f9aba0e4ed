/* file-authority: stat of one entry without following it or opening it for reading
 * (Windows). The entry is opened relative to its retained parent for attributes only
 * (FILE_READ_ATTRIBUTES, FILE_OPEN_REPARSE_POINT: a reparse point is looked at as
 * itself and reported as a link). */
#include "file_authority/fa.h"
#include "file_authority/win32.h"

#include <errno.h>
#include <string.h>

/* 100 ns intervals between 1601-01-01 and 1970-01-01. */
#define AOS_FA__EPOCH_DIFF 116444736000000000LL

static int aos_fa__fill(HANDLE h, aos_fa_stat_info *out) {
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  if (!ok) return aos_fa__win32_errno(GetLastError());
  FILE_STANDARD_INFO std;
  FILE_BASIC_INFO basic;
  if (!GetFileInformationByHandleEx(h, FileStandardInfo, &std, sizeof std) ||
      !GetFileInformationByHandleEx(h, FileBasicInfo, &basic, sizeof basic)) {
    return aos_fa__win32_errno(GetLastError());
  }
  int e = aos_fa__read_version(h, &out->version);
  if (e != 0) return e;
  if (attrs & FILE_ATTRIBUTE_REPARSE_POINT) {
    out->kind = AOS_FA_KIND_SYMLINK;
  } else if (attrs & FILE_ATTRIBUTE_DIRECTORY) {
    out->kind = AOS_FA_KIND_DIRECTORY;
  } else if ((attrs & FILE_ATTRIBUTE_DEVICE) || GetFileType(h) != FILE_TYPE_DISK) {
    out->kind = AOS_FA_KIND_OTHER;
  } else {
    out->kind = AOS_FA_KIND_FILE;
  }
  out->size = std.EndOfFile.QuadPart < 0 ? 0 : (uint64_t)std.EndOfFile.QuadPart;
  out->mtime_ns = (basic.LastWriteTime.QuadPart - AOS_FA__EPOCH_DIFF) * 100;
  /* Windows has no permission bits: the read-only attribute, as Node's fs.stat shows it. */
  out->mode = (attrs & FILE_ATTRIBUTE_READONLY) ? 0444u : 0666u;
  return 0;
}

int aos_fa_stat(const aos_fa_root *root, const char *const *segs, size_t count,
                aos_fa_stat_info *out, aos_fa_status *st) {
  memset(out, 0, sizeof *out);
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  HANDLE dir;
  r = aos_fa__parent(root, segs, count, 0, &dir, st);
  if (r != 0) return r;
  HANDLE rooth = AOS_FA__H(root->fd);
  int last = count == 0 ? -1 : (int)count - 1;
  int e;
  /* The version must be settled (win32.h, aos_fa__unsettled_ms): looked at again once
   * the clock's tick is over. */
  for (int tries = 0;; tries++) {
    if (count == 0) {
      e = aos_fa__fill(rooth, out);
    } else {
      HANDLE h;
      e = aos_fa__nt_open(dir, segs[last], FILE_READ_ATTRIBUTES | SYNCHRONIZE, AOS_FA__SHARE_ALL,
                          FILE_OPEN, AOS_FA__NO_FOLLOW, &h);
      if (e == 0) {
        e = aos_fa__fill(h, out);
        CloseHandle(h);
      }
    }
    if (e != 0) break;
    DWORD wait = aos_fa__unsettled_ms(&out->version);
    if (wait == 0) break;
    if (tries + 1 == AOS_FA__SETTLE_TRIES) {
      if (dir != rooth) CloseHandle(dir);
      return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    }
    Sleep(wait);
  }
  if (dir != rooth) CloseHandle(dir);
  if (e == ENOENT) return aos_fa_fail(st, AOS_FA_NOT_FOUND, ENOENT, last);
  if (e == ENOTDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, ENOTDIR, last);
  if (e != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  aos_fa_status_ok(st);
  return 0;
}
