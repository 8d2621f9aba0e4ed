/* scripts/platforms/reparse-probe.c: which reparse points a Windows host (here: wine)
 * makes and honours. Built with x86_64-w64-mingw32-gcc and run under wine by
 * `node scripts/platforms/reparse-probe.js`; prints one line per attempt:
 *   junction   FSCTL_SET_REPARSE_POINT with IO_REPARSE_TAG_MOUNT_POINT on an empty
 *              directory (what mklink /J and libuv's fs.symlink(..., 'junction') do)
 *   symlink    CreateSymbolicLinkW (file and directory, unprivileged flag)
 *   mountpoint SetVolumeMountPointW on an empty directory, to the C: volume
 * and for each made entry whether GetFileAttributesW reports
 * FILE_ATTRIBUTE_REPARSE_POINT and FSCTL_GET_REPARSE_POINT reads a tag back.
 * Usage: reparse-probe.exe DIR (an existing, empty scratch directory). */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <winioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#ifndef SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE
#define SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE 0x2
#endif

typedef struct {
  ULONG ReparseTag;
  USHORT ReparseDataLength;
  USHORT Reserved;
  USHORT SubstituteNameOffset;
  USHORT SubstituteNameLength;
  USHORT PrintNameOffset;
  USHORT PrintNameLength;
  WCHAR PathBuffer[1];
} mount_point_buffer;

static void report (const wchar_t *what, BOOL ok, const wchar_t *at) {
  DWORD err = ok ? 0 : GetLastError();
  DWORD attrs = GetFileAttributesW(at);
  int reparse = attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_REPARSE_POINT);
  ULONG tag = 0;
  HANDLE h = CreateFileW(at, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                         FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
  if (h != INVALID_HANDLE_VALUE) {
    union { mount_point_buffer b; char raw[MAXIMUM_REPARSE_DATA_BUFFER_SIZE]; } *buf = malloc(sizeof *buf);
    DWORD got = 0;
    if (buf && DeviceIoControl(h, FSCTL_GET_REPARSE_POINT, NULL, 0, buf, sizeof *buf, &got, NULL)) tag = buf->b.ReparseTag;
    free(buf);
    CloseHandle(h);
  }
  wprintf(L"%ls: %ls (error %lu); exists %ls; FILE_ATTRIBUTE_REPARSE_POINT %ls; reparse tag 0x%08lx\n", what,
          ok ? L"made" : L"failed", (unsigned long)err, attrs == INVALID_FILE_ATTRIBUTES ? L"no" : L"yes",
          reparse ? L"yes" : L"no", (unsigned long)tag);
}

static BOOL junction (const wchar_t *at, const wchar_t *target_nt) {
  if (!CreateDirectoryW(at, NULL)) return FALSE;
  HANDLE h = CreateFileW(at, GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                         FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
  if (h == INVALID_HANDLE_VALUE) return FALSE;
  size_t n = wcslen(target_nt);
  size_t path_bytes = (n + 1 + 1) * sizeof(WCHAR); /* substitute name, NUL, empty print name, NUL */
  size_t size = offsetof(mount_point_buffer, PathBuffer) + path_bytes;
  mount_point_buffer *b = calloc(1, size);
  BOOL ok = FALSE;
  if (b) {
    b->ReparseTag = IO_REPARSE_TAG_MOUNT_POINT;
    b->ReparseDataLength = (USHORT)(size - offsetof(mount_point_buffer, SubstituteNameOffset));
    b->SubstituteNameOffset = 0;
    b->SubstituteNameLength = (USHORT)(n * sizeof(WCHAR));
    b->PrintNameOffset = (USHORT)((n + 1) * sizeof(WCHAR));
    b->PrintNameLength = 0;
    memcpy(b->PathBuffer, target_nt, n * sizeof(WCHAR));
    DWORD got = 0;
    ok = DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, b, (DWORD)size, NULL, 0, &got, NULL);
    DWORD err = GetLastError();
    free(b);
    SetLastError(err);
  }
  DWORD err = GetLastError();
  CloseHandle(h);
  SetLastError(err);
  return ok;
}

int wmain (int argc, wchar_t **argv) {
  if (argc != 2) {
    fwprintf(stderr, L"usage: reparse-probe.exe DIR\n");
    return 2;
  }
  wchar_t target[MAX_PATH], target_nt[MAX_PATH + 8], at[MAX_PATH], file[MAX_PATH];
  _snwprintf(target, MAX_PATH, L"%ls\\target", argv[1]);
  _snwprintf(file, MAX_PATH, L"%ls\\target\\file", argv[1]);
  if (!CreateDirectoryW(target, NULL)) return 3;
  HANDLE f = CreateFileW(file, GENERIC_WRITE, 0, NULL, CREATE_NEW, 0, NULL);
  if (f == INVALID_HANDLE_VALUE) return 3;
  CloseHandle(f);
  wchar_t full[MAX_PATH];
  if (!GetFullPathNameW(target, MAX_PATH, full, NULL)) return 3;
  _snwprintf(target_nt, MAX_PATH + 8, L"\\??\\%ls", full);

  _snwprintf(at, MAX_PATH, L"%ls\\junction", argv[1]);
  report(L"junction", junction(at, target_nt), at);

  _snwprintf(at, MAX_PATH, L"%ls\\symlink-dir", argv[1]);
  report(L"symlink (directory)", CreateSymbolicLinkW(at, full, SYMBOLIC_LINK_FLAG_DIRECTORY | SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE), at);
  _snwprintf(at, MAX_PATH, L"%ls\\symlink-file", argv[1]);
  report(L"symlink (file)", CreateSymbolicLinkW(at, file, SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE), at);

  _snwprintf(at, MAX_PATH, L"%ls\\mountpoint\\", argv[1]);
  CreateDirectoryW(at, NULL);
  wchar_t volume[MAX_PATH];
  BOOL ok = GetVolumeNameForVolumeMountPointW(L"C:\\", volume, MAX_PATH);
  if (ok) ok = SetVolumeMountPointW(at, volume);
  report(L"mount point", ok, at);
  return 0;
}
