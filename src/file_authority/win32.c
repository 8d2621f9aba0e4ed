/* file-authority: the C core on Windows.
 *
 * The root is a directory HANDLE (kept in the int of aos_fa_root: Windows handle
 * values have 32 significant bits). Every component is opened with NtCreateFile
 * relative to the previous directory handle (OBJECT_ATTRIBUTES.RootDirectory) with
 * FILE_OPEN_REPARSE_POINT, so a symlink, junction or any other reparse point is opened
 * as itself, never followed, and refused. Reads open the file denying write sharing.
 * Writes create an exclusive temporary file in the retained parent, flush it, rename it
 * over the target with NtSetInformationFile(FileRenameInformation) relative to the same
 * parent handle, and compare the committed name's file id with the temporary file's.
 * Host failures are reported as errno values (mapped from NTSTATUS / Win32 errors). */
#include "file_authority/fa.h"
#include "file_authority/win32.h"

#include <windows.h>
#include <winternl.h>
#include <aclapi.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define AOS_FA__TEMP_TRIES 16

/* ------------------------------------------------------------ error mapping */

int aos_fa__win32_errno(DWORD e) {
  switch (e) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_NET_NAME:
    case ERROR_DELETE_PENDING: return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_PRIVILEGE_NOT_HELD: return EACCES;
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION: return EBUSY;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS: return EEXIST;
    case ERROR_DIRECTORY: return ENOTDIR;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL: return ENOSPC;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY: return ENOMEM;
    case ERROR_TOO_MANY_OPEN_FILES: return EMFILE;
    case ERROR_FILENAME_EXCED_RANGE: return ENAMETOOLONG;
    case ERROR_INVALID_NAME:
    case ERROR_INVALID_PARAMETER: return EINVAL;
    case ERROR_WRITE_PROTECT: return EROFS;
    case ERROR_DIR_NOT_EMPTY: return ENOTEMPTY;
    case ERROR_NOT_SUPPORTED:
    case ERROR_INVALID_FUNCTION: return ENOTSUP;
    case ERROR_CANT_RESOLVE_FILENAME: return ELOOP;
    default: return EIO;
  }
}

int aos_fa__nt_errno(NTSTATUS s) {
  switch ((ULONG)s) {
    case 0xC0000034UL: /* STATUS_OBJECT_NAME_NOT_FOUND */
    case 0xC000003AUL: /* STATUS_OBJECT_PATH_NOT_FOUND */
    case 0xC0000056UL: /* STATUS_DELETE_PENDING */
      return ENOENT;
    case 0xC0000103UL: return ENOTDIR; /* STATUS_NOT_A_DIRECTORY */
    case 0xC00000BAUL: return EISDIR;  /* STATUS_FILE_IS_A_DIRECTORY */
    case 0x8000002DUL:                 /* STATUS_STOPPED_ON_SYMLINK */
    case 0xC000050BUL:                 /* STATUS_REPARSE_POINT_ENCOUNTERED */
      return ELOOP;
    case 0xC0000035UL: return EEXIST; /* STATUS_OBJECT_NAME_COLLISION */
    default: return aos_fa__win32_errno(RtlNtStatusToDosError(s));
  }
}

/* ------------------------------------------------------------------ helpers */

/* UTF-8 (a checked segment) to UTF-16; returns the length in WCHARs, or -1. */
int aos_fa__wide(const char *s, WCHAR *out, int cap) {
  int n = (int)strlen(s);
  if (n == 0) return 0;
  int w = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, n, out, cap);
  return w > 0 ? w : -1;
}

/* NtCreateFile of one segment relative to `dir`; returns 0 or an errno. */
int aos_fa__nt_open(HANDLE dir, const char *seg, ACCESS_MASK access, ULONG share,
                           ULONG disposition, ULONG options, HANDLE *out) {
  WCHAR name[AOS_FA_MAX_SEGMENT_BYTES + 1];
  int n = aos_fa__wide(seg, name, AOS_FA_MAX_SEGMENT_BYTES);
  if (n < 0) return EINVAL;
  UNICODE_STRING us;
  us.Buffer = name;
  us.Length = (USHORT)(n * sizeof(WCHAR));
  us.MaximumLength = us.Length;
  OBJECT_ATTRIBUTES oa;
  InitializeObjectAttributes(&oa, &us, OBJ_CASE_INSENSITIVE, dir, NULL);
  IO_STATUS_BLOCK iosb;
  HANDLE h = NULL;
  NTSTATUS s = NtCreateFile(&h, access, &oa, &iosb, NULL, FILE_ATTRIBUTE_NORMAL, share,
                            disposition, options, NULL, 0);
  if (!NT_SUCCESS(s)) return aos_fa__nt_errno(s);
  *out = h;
  return 0;
}

DWORD aos_fa__attributes(HANDLE h, bool *ok) {
  FILE_ATTRIBUTE_TAG_INFO info;
  *ok = GetFileInformationByHandleEx(h, FileAttributeTagInfo, &info, sizeof info) != 0;
  return *ok ? info.FileAttributes : 0;
}

typedef struct {
  ULONGLONG volume;
  BYTE id[16];
  LONGLONG size;
  LONGLONG mtime;
} aos_fa__ident;

static int aos_fa__identify(HANDLE h, aos_fa__ident *out) {
  memset(out, 0, sizeof *out);
  FILE_ID_INFO id;
  BY_HANDLE_FILE_INFORMATION bh;
  if (!GetFileInformationByHandle(h, &bh)) return aos_fa__win32_errno(GetLastError());
  if (GetFileInformationByHandleEx(h, FileIdInfo, &id, sizeof id)) {
    out->volume = id.VolumeSerialNumber;
    memcpy(out->id, &id.FileId, sizeof out->id);
  } else {
    out->volume = bh.dwVolumeSerialNumber;
    memcpy(out->id, &bh.nFileIndexLow, sizeof bh.nFileIndexLow);
    memcpy(out->id + 4, &bh.nFileIndexHigh, sizeof bh.nFileIndexHigh);
  }
  out->size = (LONGLONG)(((ULONGLONG)bh.nFileSizeHigh << 32) | bh.nFileSizeLow);
  out->mtime = (LONGLONG)(((ULONGLONG)bh.ftLastWriteTime.dwHighDateTime << 32) |
                          bh.ftLastWriteTime.dwLowDateTime);
  return 0;
}

static bool aos_fa__same_object(const aos_fa__ident *a, const aos_fa__ident *b) {
  return a->volume == b->volume && memcmp(a->id, b->id, sizeof a->id) == 0;
}

/* ------------------------------------------------------------------- roots */

bool aos_fa_openat2_available(void) { return false; }

int aos_fa_root_open(const char *path, int *fd_out, aos_fa_status *st) {
  *fd_out = -1;
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
  if (n <= 0) return aos_fa_fail(st, AOS_FA_INVALID_PATH, 0, -1);
  WCHAR *wpath = malloc((size_t)n * sizeof(WCHAR));
  if (wpath == NULL) return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, -1);
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wpath, n);
  /* Links in the root path itself are followed, once, here. */
  HANDLE h = CreateFileW(wpath, AOS_FA__DIR_ACCESS, AOS_FA__SHARE_ALL, NULL, OPEN_EXISTING,
                         FILE_FLAG_BACKUP_SEMANTICS, NULL);
  DWORD e = GetLastError();
  free(wpath);
  if (h == INVALID_HANDLE_VALUE) {
    int err = aos_fa__win32_errno(e);
    if (err == ENOTDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, err, -1);
    return aos_fa_fail(st, AOS_FA_HOST_IO, err, -1);
  }
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  if (!ok || !(attrs & FILE_ATTRIBUTE_DIRECTORY)) {
    int err = ok ? 0 : aos_fa__win32_errno(GetLastError());
    CloseHandle(h);
    return ok ? aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, ENOTDIR, -1)
              : aos_fa_fail(st, AOS_FA_HOST_IO, err, -1);
  }
  *fd_out = AOS_FA__FD(h);
  aos_fa_status_ok(st);
  return 0;
}

void aos_fa_root_close(int fd) {
  if (fd != -1) CloseHandle(AOS_FA__H(fd));
}

int aos_fa_root_check(int fd, aos_fa_status *st) {
  FILE_STANDARD_INFO info;
  if (!GetFileInformationByHandleEx(AOS_FA__H(fd), FileStandardInfo, &info, sizeof info)) {
    return aos_fa_fail(st, AOS_FA_HOST_IO, aos_fa__win32_errno(GetLastError()), -1);
  }
  if (info.DeletePending) return aos_fa_fail(st, AOS_FA_ROOT_CHANGED, 0, -1);
  aos_fa_status_ok(st);
  return 0;
}

int aos_fa_root_same(int fd_a, int fd_b, bool *same, aos_fa_status *st) {
  aos_fa__ident a, b;
  *same = false;
  int e = aos_fa__identify(AOS_FA__H(fd_a), &a);
  if (e == 0) e = aos_fa__identify(AOS_FA__H(fd_b), &b);
  if (e != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, e, -1);
  *same = aos_fa__same_object(&a, &b);
  aos_fa_status_ok(st);
  return 0;
}

/* ------------------------------------------------------------- resolution */

/* Why `seg` below `dir` could not be opened as a directory: a reparse point (ELOOP)
 * or something else that is not a directory (ENOTDIR). */
static int aos_fa__classify(HANDLE dir, const char *seg, int err) {
  HANDLE h;
  if (aos_fa__nt_open(dir, seg, FILE_READ_ATTRIBUTES | SYNCHRONIZE, AOS_FA__SHARE_ALL,
                      FILE_OPEN, AOS_FA__NO_FOLLOW, &h) != 0) {
    return err;
  }
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  CloseHandle(h);
  if (ok && (attrs & FILE_ATTRIBUTE_REPARSE_POINT)) return ELOOP;
  if (ok && !(attrs & FILE_ATTRIBUTE_DIRECTORY)) return ENOTDIR;
  return err;
}

int aos_fa_walk(const aos_fa_root *root, const char *const *segs, size_t count,
                unsigned flags, int *dir_out, aos_fa_status *st) {
  *dir_out = -1;
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  r = aos_fa_root_check(root->fd, st);
  if (r != 0) return r;
  HANDLE rooth = AOS_FA__H(root->fd);
  if (count == 0) {
    /* A new handle of its own (its own enumeration position for listings). */
    HANDLE h = ReOpenFile(rooth, AOS_FA__DIR_ACCESS, AOS_FA__SHARE_ALL, FILE_FLAG_BACKUP_SEMANTICS);
    if (h == INVALID_HANDLE_VALUE) {
      return aos_fa_fail(st, AOS_FA_HOST_IO, aos_fa__win32_errno(GetLastError()), -1);
    }
    *dir_out = AOS_FA__FD(h);
    aos_fa_status_ok(st);
    return 0;
  }
  HANDLE cur = rooth;
  for (size_t i = 0; i < count; i++) {
    HANDLE next = NULL;
    ULONG disposition = (flags & AOS_FA_WALK_CREATE) ? FILE_OPEN_IF : FILE_OPEN;
    int e = aos_fa__nt_open(cur, segs[i], AOS_FA__DIR_ACCESS, AOS_FA__SHARE_ALL, disposition,
                            FILE_DIRECTORY_FILE | AOS_FA__NO_FOLLOW, &next);
    if (e == 0) {
      bool ok;
      DWORD attrs = aos_fa__attributes(next, &ok);
      if (!ok) {
        e = aos_fa__win32_errno(GetLastError());
        CloseHandle(next);
      } else if (attrs & FILE_ATTRIBUTE_REPARSE_POINT) {
        e = ELOOP;
        CloseHandle(next);
      }
    } else if (e == ENOTDIR || e == ELOOP) {
      e = aos_fa__classify(cur, segs[i], e);
    }
    if (e != 0) {
      if (cur != rooth) CloseHandle(cur);
      if (e == ENOENT) return aos_fa_fail(st, AOS_FA_NOT_FOUND, e, (int)i);
      if (e == ELOOP || e == ENOTDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, (int)i);
      return aos_fa_fail(st, AOS_FA_HOST_IO, e, (int)i);
    }
    if (cur != rooth) CloseHandle(cur);
    cur = next;
  }
  *dir_out = AOS_FA__FD(cur);
  aos_fa_status_ok(st);
  return 0;
}

/* The directory holding segs[count-1]: the root itself, or a new handle. */
int aos_fa__parent(const aos_fa_root *root, const char *const *segs, size_t count,
                          unsigned flags, HANDLE *dir, aos_fa_status *st) {
  *dir = AOS_FA__H(root->fd);
  if (count > 1) {
    int fd;
    int r = aos_fa_walk(root, segs, count - 1, flags, &fd, st);
    if (r != 0) return r;
    *dir = AOS_FA__H(fd);
    return 0;
  }
  return aos_fa_root_check(root->fd, st);
}

/* -------------------------------------------------------------------- read */

/* The version of the open file: identity (volume, 128-bit id), size, last-write time
 * and ChangeTime (which no caller can set back), in 100 ns units. Returns 0 or errno. */
int aos_fa__read_version(HANDLE h, aos_fa_version *v) {
  memset(v, 0, sizeof *v);
  BY_HANDLE_FILE_INFORMATION bh;
  FILE_BASIC_INFO basic;
  FILE_ID_INFO id;
  if (!GetFileInformationByHandle(h, &bh) ||
      !GetFileInformationByHandleEx(h, FileBasicInfo, &basic, sizeof basic)) {
    return aos_fa__win32_errno(GetLastError());
  }
  if (GetFileInformationByHandleEx(h, FileIdInfo, &id, sizeof id)) {
    v->dev = id.VolumeSerialNumber;
    memcpy(&v->ino, id.FileId.Identifier, sizeof v->ino);
    memcpy(&v->ino_hi, id.FileId.Identifier + 8, sizeof v->ino_hi);
  } else {
    v->dev = bh.dwVolumeSerialNumber;
    v->ino = ((uint64_t)bh.nFileIndexHigh << 32) | bh.nFileIndexLow;
  }
  v->size = ((uint64_t)bh.nFileSizeHigh << 32) | bh.nFileSizeLow;
  v->mtime_ns = basic.LastWriteTime.QuadPart; /* 100 ns units: compared, never shown */
  v->ctime_ns = basic.ChangeTime.QuadPart;
  return 0;
}

/* Opens the regular file segs[0..count) for reading, denying write sharing for as
 * long as the handle is open; *opened is its version at the open. */
static int aos_fa__read_open(const aos_fa_root *root, const char *const *segs, size_t count,
                             HANDLE *out, aos_fa_version *opened, aos_fa_status *st) {
  *out = NULL;
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, -1); /* the root itself */
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  int last = (int)count - 1;
  HANDLE dir;
  r = aos_fa__parent(root, segs, count, 0, &dir, st);
  if (r != 0) return r;
  HANDLE h = NULL;
  int e = aos_fa__nt_open(dir, segs[last], FILE_READ_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
                          FILE_SHARE_READ | FILE_SHARE_DELETE, FILE_OPEN,
                          FILE_NON_DIRECTORY_FILE | AOS_FA__NO_FOLLOW, &h);
  if (dir != AOS_FA__H(root->fd)) CloseHandle(dir);
  if (e == ENOENT) return aos_fa_fail(st, AOS_FA_NOT_FOUND, e, last);
  if (e == EISDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, last);
  if (e != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  if (!ok || (attrs & FILE_ATTRIBUTE_REPARSE_POINT) || GetFileType(h) != FILE_TYPE_DISK) {
    e = ok ? 0 : aos_fa__win32_errno(GetLastError());
    CloseHandle(h);
    if (!ok) return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, (attrs & FILE_ATTRIBUTE_REPARSE_POINT) ? ELOOP : 0, last);
  }
  e = aos_fa__read_version(h, opened);
  if (e == 0 && opened->size > (uint64_t)INT64_MAX) e = EOVERFLOW;
  if (e != 0) {
    CloseHandle(h);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  *out = h;
  return 0;
}

/* Reads up to `want` bytes from `offset` into buf (fewer only at end of file);
 * *got is the count. Returns 0 or an errno. */
static int aos_fa__read_at(HANDLE h, uint8_t *buf, size_t want, uint64_t offset, size_t *got) {
  *got = 0;
  while (*got < want) {
    DWORD chunk = (DWORD)((want - *got) > 0x40000000u ? 0x40000000u : (want - *got));
    uint64_t at = offset + *got;
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.Offset = (DWORD)at;
    ov.OffsetHigh = (DWORD)(at >> 32);
    DWORD n = 0;
    if (!ReadFile(h, buf + *got, chunk, &n, &ov)) {
      DWORD e = GetLastError();
      if (e == ERROR_HANDLE_EOF) break;
      return aos_fa__win32_errno(e);
    }
    if (n == 0) break;
    *got += n;
  }
  return 0;
}

/* Reads [offset, offset + size) into buf and, for a whole read (`probe`), one byte
 * past it; then the version must be what it was at the open. Closes h. */
static int aos_fa__read_checked(HANDLE h, uint8_t *buf, size_t size, uint64_t offset, bool probe,
                                uint64_t max_bytes, const aos_fa_version *opened, int last,
                                aos_fa_status *st) {
  size_t got = 0;
  int e = aos_fa__read_at(h, buf, size, offset, &got);
  size_t extra = 0;
  uint8_t byte;
  if (e == 0 && got == size && probe) e = aos_fa__read_at(h, &byte, 1, offset + size, &extra);
  aos_fa_version after;
  if (e == 0) e = aos_fa__read_version(h, &after);
  CloseHandle(h);
  if (e != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  if (extra > 0 && (uint64_t)size + 1 > max_bytes) return aos_fa_fail(st, AOS_FA_OVER_BUDGET, 0, -1);
  if (got != size || extra > 0 || !aos_fa_version_equal(opened, &after)) {
    return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  return 0;
}

/* No descriptors are kept here: a read holds its handle denying write sharing (the
 * consistency rule), which a kept handle would go on imposing on every writer. */
aos_fa_fdcache *aos_fa_fdcache_new(void) { return NULL; }
void aos_fa_fdcache_free(aos_fa_fdcache *c) { (void)c; }
int aos_fa_fdcache_count(aos_fa_fdcache *c) {
  (void)c;
  return 0;
}

DWORD aos_fa__unsettled_ms(const aos_fa_version *v) {
  FILETIME ft;
  GetSystemTimeAsFileTime(&ft); /* the clock file times are stamped from, 100 ns units */
  int64_t now = (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
  int64_t settled_at = v->ctime_ns + 20LL * 10000; /* a tick and a margin: 20 ms */
  if (now >= settled_at) return 0;
  int64_t ms = (settled_at - now + 9999) / 10000;
  return ms > 1000 ? 1000 : (DWORD)ms; /* a ChangeTime far ahead: the clock was set back */
}

/* Opens the file for a read that returns a version: once that version is settled (the
 * handle denies write sharing, so the content cannot change while it is held; a version
 * observed within the clock's tick is observed again after it). */
static int aos_fa__read_open_settled(const aos_fa_root *root, const char *const *segs,
                                     size_t count, HANDLE *out, aos_fa_version *opened,
                                     aos_fa_status *st) {
  for (int tries = 0;; tries++) {
    int r = aos_fa__read_open(root, segs, count, out, opened, st);
    if (r != 0) return r;
    DWORD wait = aos_fa__unsettled_ms(opened);
    if (wait == 0) return 0;
    CloseHandle(*out);
    *out = NULL;
    if (tries + 1 == AOS_FA__SETTLE_TRIES) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    Sleep(wait);
  }
}

int aos_fa_read_into(const aos_fa_root *root, const char *const *segs, size_t count,
                     uint64_t max_bytes, aos_fa_alloc alloc, void *ctx, uint8_t **data,
                     size_t *len, aos_fa_version *version, aos_fa_status *st) {
  *data = NULL;
  *len = 0;
  if (version != NULL) memset(version, 0, sizeof *version);
  HANDLE h;
  aos_fa_version opened;
  int r = version != NULL ? aos_fa__read_open_settled(root, segs, count, &h, &opened, st)
                          : aos_fa__read_open(root, segs, count, &h, &opened, st);
  if (r != 0) return r;
  int last = (int)count - 1;
  if (opened.size > max_bytes) {
    CloseHandle(h);
    return aos_fa_fail(st, AOS_FA_OVER_BUDGET, 0, -1);
  }
  if (opened.size > (uint64_t)SIZE_MAX - 1) {
    CloseHandle(h);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }
  size_t size = (size_t)opened.size;
  /* The caller's destination, exactly the size; a one-byte probe past it sees growth. */
  uint8_t *buf = alloc(ctx, size);
  *data = buf;
  if (buf == NULL && size > 0) {
    CloseHandle(h);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }
  r = aos_fa__read_checked(h, buf, size, 0, true, max_bytes, &opened, last, st);
  if (r != 0) return r;
  *len = size;
  if (version != NULL) *version = opened;
  aos_fa_status_ok(st);
  return 0;
}

int aos_fa_read_range(const aos_fa_root *root, const char *const *segs, size_t count,
                      uint64_t offset, uint64_t length, aos_fa_alloc alloc, void *ctx,
                      uint8_t **data, size_t *len, uint64_t *size, aos_fa_version *version,
                      aos_fa_status *st) {
  *data = NULL;
  *len = 0;
  *size = 0;
  if (version != NULL) memset(version, 0, sizeof *version);
  HANDLE h;
  aos_fa_version opened;
  int r = aos_fa__read_open_settled(root, segs, count, &h, &opened, st);
  if (r != 0) return r;
  int last = (int)count - 1;
  uint64_t want = offset < opened.size ? opened.size - offset : 0;
  if (want > length) want = length;
  if (want > (uint64_t)SIZE_MAX - 1) {
    CloseHandle(h);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }
  size_t n = (size_t)want;
  uint8_t *buf = alloc(ctx, n);
  *data = buf;
  if (buf == NULL && n > 0) {
    CloseHandle(h);
    return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  }
  r = aos_fa__read_checked(h, buf, n, offset, false, UINT64_MAX, &opened, last, st);
  if (r != 0) return r;
  *len = n;
  *size = opened.size;
  if (version != NULL) *version = opened;
  aos_fa_status_ok(st);
  return 0;
}

/* ------------------------------------------------------------------- write */

static void aos_fa__temp_name(char name[48]) {
  static const char hex[] = "0123456789abcdef";
  LARGE_INTEGER qpc;
  QueryPerformanceCounter(&qpc);
  uint64_t x = (uint64_t)qpc.QuadPart ^ ((uint64_t)GetCurrentProcessId() << 32) ^
               ((uint64_t)GetCurrentThreadId() << 16) ^ (uint64_t)(uintptr_t)&qpc;
  memcpy(name, ".aos-", 5);
  for (size_t i = 0; i < 32; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    name[5 + i] = hex[x & 15];
  }
  memcpy(name + 37, ".tmp", 5);
}

/* Deletes the temporary file through its own handle (never another file by name). */
static void aos_fa__discard(HANDLE tmp) {
  FILE_DISPOSITION_INFO d;
  d.DeleteFile = TRUE;
  SetFileInformationByHandle(tmp, FileDispositionInfo, &d, sizeof d);
  CloseHandle(tmp);
}

/* Creates the temporary file `name` exclusively in `dir`, without following a
 * reparse point, with the security descriptor `sd` (NULL: the parent's inheritable
 * entries, as a new file gets). */
static int aos_fa__create_temp(HANDLE dir, const char *name, PSECURITY_DESCRIPTOR sd, HANDLE *out) {
  WCHAR wname[AOS_FA_MAX_SEGMENT_BYTES + 1];
  int n = aos_fa__wide(name, wname, AOS_FA_MAX_SEGMENT_BYTES);
  if (n < 0) return EINVAL;
  UNICODE_STRING us;
  us.Buffer = wname;
  us.Length = (USHORT)(n * sizeof(WCHAR));
  us.MaximumLength = us.Length;
  OBJECT_ATTRIBUTES oa;
  InitializeObjectAttributes(&oa, &us, OBJ_CASE_INSENSITIVE, dir, sd);
  IO_STATUS_BLOCK iosb;
  HANDLE h = NULL;
  NTSTATUS s = NtCreateFile(&h, GENERIC_WRITE | DELETE | FILE_READ_ATTRIBUTES | SYNCHRONIZE, &oa, &iosb,
                            NULL, FILE_ATTRIBUTE_NORMAL, 0, FILE_CREATE,
                            FILE_NON_DIRECTORY_FILE | AOS_FA__NO_FOLLOW, NULL, 0);
  if (!NT_SUCCESS(s)) return aos_fa__nt_errno(s);
  *out = h;
  return 0;
}

/* The target as the write found it: its kind, version and discretionary ACL. */
typedef struct {
  bool exists;
  bool regular;
  bool reparse;
  bool directory;
  aos_fa_version version;
  PSECURITY_DESCRIPTOR sd;       /* LocalFree; a DACL-only descriptor for the temporary file */
  PSECURITY_DESCRIPTOR sd_owner; /* LocalFree; GetSecurityInfo's, which holds that DACL */
} aos_fa__target;

/* The version of the file `h` is open on (the fields aos_fa_read_into reports). */
static int aos_fa__handle_version(HANDLE h, aos_fa_version *v) {
  aos_fa__ident id;
  int e = aos_fa__identify(h, &id);
  if (e != 0) return e;
  FILE_BASIC_INFO basic;
  if (!GetFileInformationByHandleEx(h, FileBasicInfo, &basic, sizeof basic)) {
    return aos_fa__win32_errno(GetLastError());
  }
  v->dev = id.volume;
  memcpy(&v->ino, id.id, sizeof v->ino);
  memcpy(&v->ino_hi, id.id + 8, sizeof v->ino_hi);
  v->size = (uint64_t)id.size;
  v->mtime_ns = id.mtime;
  v->ctime_ns = basic.ChangeTime.QuadPart;
  return 0;
}

/* Looks at the target without following it. `want_sd`: also read its DACL (kept on the
 * replacement: a restrictive ACL on a replaced file must not be lost, nor be absent
 * from the temporary file for a moment). 0 or an errno (ENOENT: none). */
static int aos_fa__look_target(HANDLE dir, const char *target, bool want_sd, aos_fa__target *t) {
  memset(t, 0, sizeof *t);
  HANDLE h;
  int e = aos_fa__nt_open(dir, target, FILE_READ_ATTRIBUTES | READ_CONTROL | SYNCHRONIZE, AOS_FA__SHARE_ALL,
                          FILE_OPEN, AOS_FA__NO_FOLLOW, &h);
  if (e != 0) return e;
  t->exists = true;
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  DWORD type = GetFileType(h);
  if (!ok) {
    e = aos_fa__win32_errno(GetLastError());
    CloseHandle(h);
    return e;
  }
  t->reparse = (attrs & FILE_ATTRIBUTE_REPARSE_POINT) != 0;
  t->directory = !t->reparse && (attrs & FILE_ATTRIBUTE_DIRECTORY) != 0;
  t->regular = !(attrs & (FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DIRECTORY)) && type == FILE_TYPE_DISK;
  if (t->regular) e = aos_fa__handle_version(h, &t->version);
  if (e == 0 && t->regular && want_sd) {
    PACL dacl = NULL;
    PSECURITY_DESCRIPTOR got = NULL;
    DWORD r = GetSecurityInfo(h, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &dacl, NULL, &got);
    if (r != ERROR_SUCCESS) {
      e = aos_fa__win32_errno(r);
    } else {
      /* A descriptor holding only that DACL, with its protection (inheritance) flag:
       * the owner of the new file is the writer. */
      SECURITY_DESCRIPTOR_CONTROL control = 0;
      DWORD revision = 0;
      GetSecurityDescriptorControl(got, &control, &revision);
      t->sd = LocalAlloc(LPTR, SECURITY_DESCRIPTOR_MIN_LENGTH);
      if (t->sd == NULL || !InitializeSecurityDescriptor(t->sd, SECURITY_DESCRIPTOR_REVISION) ||
          !SetSecurityDescriptorDacl(t->sd, dacl != NULL, dacl, FALSE) ||
          !SetSecurityDescriptorControl(t->sd, SE_DACL_PROTECTED, control & SE_DACL_PROTECTED)) {
        e = ENOMEM;
        if (t->sd != NULL) LocalFree(t->sd);
        t->sd = NULL;
        LocalFree(got);
      } else {
        /* The DACL lives inside `got`; keep both, freed together. */
        t->sd_owner = got;
      }
    }
  }
  CloseHandle(h);
  return e;
}

static void aos_fa__target_free(aos_fa__target *t) {
  if (t->sd != NULL) LocalFree(t->sd);
  if (t->sd_owner != NULL) LocalFree(t->sd_owner);
  t->sd = t->sd_owner = NULL;
}

/* 0 when the target `t` may be replaced under opts; else the refusal in *st. */
static int aos_fa__target_refusal(const aos_fa__target *t, const aos_fa_write_opts *opts, int last,
                                  aos_fa_status *st) {
  if (!t->exists) {
    return opts->if_version != NULL ? aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1) : 0;
  }
  if (opts->if_absent) return aos_fa_fail(st, AOS_FA_ENTRY_EXISTS, EEXIST, last);
  if (!t->regular) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, t->reparse ? ELOOP : t->directory ? EISDIR : 0, last);
  if (opts->if_version != NULL && !aos_fa_version_matches(&t->version, opts->if_version)) {
    return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  return 0;
}

/* Renames the temporary file to the target, relative to `dir`; `replace`: over an
 * existing file, else never replacing anything. 0 or an errno. */
int aos_fa__rename_to(HANDLE tmp, HANDLE dir, const char *target, bool replace) {
  WCHAR wname[AOS_FA_MAX_SEGMENT_BYTES + 1];
  int wlen = aos_fa__wide(target, wname, AOS_FA_MAX_SEGMENT_BYTES);
  if (wlen <= 0) return EINVAL;
  size_t isize = sizeof(aos_fa__rename_info) + (size_t)wlen * sizeof(WCHAR);
  aos_fa__rename_info *ri = calloc(1, isize);
  if (ri == NULL) return ENOMEM;
  ri->ReplaceIfExists = replace ? TRUE : FALSE;
  ri->RootDirectory = dir;
  ri->FileNameLength = (ULONG)((size_t)wlen * sizeof(WCHAR));
  memcpy(ri->FileName, wname, (size_t)wlen * sizeof(WCHAR));
  IO_STATUS_BLOCK iosb;
  NTSTATUS rs = NtSetInformationFile(tmp, &iosb, ri, (ULONG)isize, AOS_FA__FILE_RENAME_INFORMATION);
  free(ri);
  return NT_SUCCESS(rs) ? 0 : aos_fa__nt_errno(rs);
}

int aos_fa_write(const aos_fa_root *root, const char *const *segs, size_t count,
                 const uint8_t *data, size_t len, const aos_fa_write_opts *opts,
                 aos_fa_status *st) {
  bool create_parents = opts->create_parents;
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, -1); /* the root itself */
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  if (opts->mode > 0777 || (opts->if_absent && opts->if_version != NULL) ||
      (opts->if_version != NULL &&
       !aos_fa_version_string_valid(opts->if_version, strnlen(opts->if_version, AOS_FA_VERSION_CHARS + 1)))) {
    return aos_fa_fail(st, AOS_FA_INVALID_PATH, 0, -1);
  }
  if (len > 0 && data == NULL) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  if (opts->utf8 && !aos_fa_utf8_valid(data, len)) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  int last = (int)count - 1;
  const char *target = segs[last];
  HANDLE dir;
  r = aos_fa__parent(root, segs, count, create_parents ? AOS_FA_WALK_CREATE : 0u, &dir, st);
  if (r != 0 && st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO;
  if (r != 0) return r;
  HANDLE tmp = NULL;
  int e;

  /* The existing target: a regular file (its DACL is kept), or none. `mode` has no
   * Windows meaning: a new file gets the parent's inheritable ACL. */
  aos_fa__target existing;
  e = aos_fa__look_target(dir, target, true, &existing);
  if (e != 0 && e != ENOENT) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    goto out;
  }
  r = aos_fa__target_refusal(&existing, opts, last, st);
  if (r != 0) goto out;

  char tmpname[48];
  e = EEXIST;
  for (int tries = 0; e == EEXIST && tries < AOS_FA__TEMP_TRIES; tries++) {
    aos_fa__temp_name(tmpname);
    e = aos_fa__create_temp(dir, tmpname, existing.sd, &tmp);
  }
  if (e != 0) {
    tmp = NULL;
    r = aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    goto out;
  }
  size_t done = 0;
  while (done < len) {
    DWORD n = 0;
    DWORD want = (DWORD)((len - done) > 0x40000000u ? 0x40000000u : (len - done));
    if (!WriteFile(tmp, data + done, want, &n, NULL)) {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, aos_fa__win32_errno(GetLastError()), last);
      goto fail_temp;
    }
    done += n;
  }
  if (opts->durable && !FlushFileBuffers(tmp)) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, aos_fa__win32_errno(GetLastError()), last);
    goto fail_temp;
  }
  aos_fa__ident ours, committed;
  e = aos_fa__identify(tmp, &ours);
  if (e != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    goto fail_temp;
  }

  /* The commit, relative to the same parent handle. A new target: a rename that never
   * replaces (an entry that appeared meanwhile is looked at, as an existing one). An
   * existing target: looked at again immediately before a replacing rename. Windows
   * has no atomic exchange: an entry swapped in between that look and the rename is
   * replaced (the window docs/security.md states). */
  bool replacing = existing.exists;
  for (int attempt = 0;; attempt++) {
    if (attempt == 8) {
      r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
      goto fail_temp;
    }
    if (replacing) {
      aos_fa__target now;
      e = aos_fa__look_target(dir, target, false, &now);
      if (e != 0 && e != ENOENT) {
        r = aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
        goto fail_temp;
      }
      r = aos_fa__target_refusal(&now, opts, last, st);
      if (r != 0) goto fail_temp;
      replacing = now.exists;
    }
    e = aos_fa__rename_to(tmp, dir, target, replacing);
    if (e == 0) break;
    if (e == EEXIST && !replacing) {
      if (opts->if_absent) {
        r = aos_fa_fail(st, AOS_FA_ENTRY_EXISTS, EEXIST, last);
        goto fail_temp;
      }
      replacing = true;
      continue;
    }
    if (e == ENOENT && replacing && opts->if_version == NULL) {
      replacing = false;
      continue;
    }
    r = aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    goto fail_temp;
  }
  /* NTFS journals the rename; a directory handle opened for listing cannot be
   * flushed, so the parent is not flushed separately here. A conditional write is
   * decided at its commit (see posix_write.c): no re-check. */
  if (opts->if_version == NULL && !opts->if_absent) {
    HANDLE check;
    e = aos_fa__nt_open(dir, target, FILE_READ_ATTRIBUTES | SYNCHRONIZE, AOS_FA__SHARE_ALL,
                        FILE_OPEN, AOS_FA__NO_FOLLOW, &check);
    if (e == 0) {
      e = aos_fa__identify(check, &committed);
      CloseHandle(check);
    }
    if (e != 0 || !aos_fa__same_object(&ours, &committed)) {
      CloseHandle(tmp);
      tmp = NULL;
      r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
      goto out;
    }
  }
  CloseHandle(tmp);
  tmp = NULL;
  aos_fa_status_ok(st);
  r = 0;
  goto out;

fail_temp:
  if (tmp != NULL) aos_fa__discard(tmp);
  tmp = NULL;
out:
  aos_fa__target_free(&existing);
  if (dir != AOS_FA__H(root->fd)) CloseHandle(dir);
  return r;
}
