/* file-authority: appending to one regular file through its retained parent (Windows).
 *
 * The file is opened relative to the parent handle with NtCreateFile (FILE_WRITE_DATA |
 * FILE_APPEND_DATA, FILE_OPEN_IF, FILE_NON_DIRECTORY_FILE, FILE_OPEN_REPARSE_POINT): a
 * link or any other reparse point is opened as itself and closed unwritten, a directory
 * is refused by the open itself, and a new file is created with the parent's
 * inheritable ACL (Windows has no permission bits: `mode` has no effect, as for
 * writes). The bytes of one call are one WriteFile at the end of the file (the offset
 * FILE_WRITE_TO_END_OF_FILE), made while holding an exclusive byte-range lock
 * (LockFileEx) on one byte at offset 2^63 - 2, far past any file's end: Windows does
 * not promise that two writers' appends never interleave on every filesystem (wine
 * splits them: measured, 1 004 whole records of 1 200), so this package's appenders,
 * from any process or thread (each call has its own handle; byte-range locks are held
 * by a handle), take turns. The lock covers no byte of the file, so nothing else is
 * held up by it; another program that holds it (it must have the file open) is waited
 * for up to AOS_FA__APPEND_LOCK_MS, then the append fails HOST_IO EBUSY. A program
 * that does not take the lock is not kept out of the file. The open shares reading,
 * writing and deleting; a reader of this package denies write sharing while it reads,
 * so an append meanwhile (or a read during an append) fails with a sharing violation
 * (HOST_IO EBUSY). durable: FlushFileBuffers; the parent directory is not flushed
 * separately (NTFS journals the creation). */
#include "file_authority/fa.h"
#include "file_authority/win32.h"

#include <errno.h>
#include <string.h>

/* How long an append waits for the byte-range lock another appender holds (one write
 * of at most AOS_FA_APPEND_MAX bytes) before it fails HOST_IO EBUSY. */
#define AOS_FA__APPEND_LOCK_MS 10000

/* The locked byte: 2^63 - 2, past the end of any file. */
#define AOS_FA__APPEND_LOCK_LOW 0xFFFFFFFEu
#define AOS_FA__APPEND_LOCK_HIGH 0x7FFFFFFFu

/* Takes the appenders' byte-range lock on h, waiting up to AOS_FA__APPEND_LOCK_MS. 0
 * or an errno (EBUSY: still held at the bound). */
static int aos_fa__append_lock(HANDLE h) {
  ULONGLONG start = GetTickCount64();
  for (DWORD spins = 0;; spins++) {
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.Offset = AOS_FA__APPEND_LOCK_LOW;
    ov.OffsetHigh = AOS_FA__APPEND_LOCK_HIGH;
    if (LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) return 0;
    DWORD e = GetLastError();
    if (e != ERROR_LOCK_VIOLATION && e != ERROR_IO_PENDING) return aos_fa__win32_errno(e);
    if (GetTickCount64() - start > AOS_FA__APPEND_LOCK_MS) return EBUSY;
    Sleep(spins < 16 ? 0 : 1);
  }
}

static void aos_fa__append_unlock(HANDLE h) {
  OVERLAPPED ov;
  memset(&ov, 0, sizeof ov);
  ov.Offset = AOS_FA__APPEND_LOCK_LOW;
  ov.OffsetHigh = AOS_FA__APPEND_LOCK_HIGH;
  UnlockFileEx(h, 0, 1, 0, &ov);
}

/* NtCreateFile of `name` in `dir` for appending, creating it when missing. 0 or an
 * errno. */
static int aos_fa__append_open(HANDLE dir, const char *name, HANDLE *out) {
  WCHAR wname[AOS_FA_MAX_SEGMENT_BYTES + 1];
  int n = aos_fa__wide(name, wname, AOS_FA_MAX_SEGMENT_BYTES);
  if (n < 0) return EINVAL;
  UNICODE_STRING us;
  us.Buffer = wname;
  us.Length = (USHORT)(n * sizeof(WCHAR));
  us.MaximumLength = us.Length;
  OBJECT_ATTRIBUTES oa;
  InitializeObjectAttributes(&oa, &us, OBJ_CASE_INSENSITIVE, dir, NULL);
  IO_STATUS_BLOCK iosb;
  memset(&iosb, 0, sizeof iosb);
  HANDLE h = NULL;
  NTSTATUS s = NtCreateFile(&h, FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE, &oa, &iosb, NULL,
                            FILE_ATTRIBUTE_NORMAL, AOS_FA__SHARE_ALL, FILE_OPEN_IF,
                            FILE_NON_DIRECTORY_FILE | AOS_FA__NO_FOLLOW, NULL, 0);
  if (!NT_SUCCESS(s)) return aos_fa__nt_errno(s);
  *out = h;
  return 0;
}

int aos_fa_append(const aos_fa_root *root, const char *const *segs, size_t count,
                  const uint8_t *data, size_t len, const aos_fa_append_opts *opts,
                  aos_fa_status *st) {
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, -1);
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  if (opts->mode > 0777) return aos_fa_fail(st, AOS_FA_INVALID_PATH, 0, -1);
  if (len > AOS_FA_APPEND_MAX) return aos_fa_fail(st, AOS_FA_HOST_IO, EFBIG, -1);
  if (len > 0 && data == NULL) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  if (opts->utf8 && !aos_fa_utf8_valid(data, len)) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  int last = (int)count - 1;
  HANDLE dir;
  r = aos_fa__parent(root, segs, count, opts->create_parents ? AOS_FA_WALK_CREATE : 0u, &dir, st);
  if (r != 0 && st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO;
  if (r != 0) return r;
  HANDLE h = NULL;
  int e = aos_fa__append_open(dir, segs[last], &h);
  if (e != 0) {
    r = e == EISDIR ? aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, last) : aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    goto out;
  }
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  if (!ok) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, aos_fa__win32_errno(GetLastError()), last);
    goto out_h;
  }
  if ((attrs & FILE_ATTRIBUTE_REPARSE_POINT) || (attrs & FILE_ATTRIBUTE_DIRECTORY) ||
      GetFileType(h) != FILE_TYPE_DISK) {
    int code = (attrs & FILE_ATTRIBUTE_REPARSE_POINT) ? ELOOP : (attrs & FILE_ATTRIBUTE_DIRECTORY) ? EISDIR : 0;
    r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, code, last);
    goto out_h;
  }
  if (len > 0) {
    e = aos_fa__append_lock(h);
    if (e != 0) {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
      goto out_h;
    }
    DWORD n = 0;
    OVERLAPPED at_end;
    memset(&at_end, 0, sizeof at_end);
    at_end.Offset = 0xFFFFFFFFu; /* FILE_WRITE_TO_END_OF_FILE */
    at_end.OffsetHigh = 0xFFFFFFFFu;
    BOOL wrote = WriteFile(h, data, (DWORD)len, &n, &at_end);
    DWORD we = wrote ? 0 : GetLastError();
    aos_fa__append_unlock(h);
    if (!wrote) {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, aos_fa__win32_errno(we), last);
      goto out_h;
    }
    if ((size_t)n != len) {
      /* Never continued: a second write could land after another append. */
      r = aos_fa_fail(st, AOS_FA_HOST_IO, ENOSPC, last);
      goto out_h;
    }
  }
  if (opts->durable && !FlushFileBuffers(h)) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, aos_fa__win32_errno(GetLastError()), last);
    goto out_h;
  }
  aos_fa_status_ok(st);
  r = 0;
out_h:
  CloseHandle(h);
out:
  if (dir != AOS_FA__H(root->fd)) CloseHandle(dir);
  return r;
}
