/* file-authority: helpers shared by the Windows core files (win32.c and the
 * per-operation win32_*.c files; never included on POSIX). All take and return
 * handles and errno values; none composes a message. */
#ifndef AOS_FILE_AUTHORITY_WIN32_H
#define AOS_FILE_AUTHORITY_WIN32_H

#include "file_authority/fa.h"
#include "file_authority/tree.h"

#include <windows.h>
#include <winternl.h>

/* Values of the NT API that not every SDK's winternl.h defines. */
#ifndef NT_SUCCESS
#define NT_SUCCESS(status) (((NTSTATUS)(status)) >= 0)
#endif
#ifndef FILE_OPEN
#define FILE_OPEN 0x00000001
#endif
#ifndef FILE_CREATE
#define FILE_CREATE 0x00000002
#endif
#ifndef FILE_DIRECTORY_FILE
#define FILE_DIRECTORY_FILE 0x00000001
#endif
#ifndef FILE_SYNCHRONOUS_IO_NONALERT
#define FILE_SYNCHRONOUS_IO_NONALERT 0x00000020
#endif
#ifndef FILE_OPEN_REPARSE_POINT
#define FILE_OPEN_REPARSE_POINT 0x00200000
#endif
#ifndef FILE_OPEN_FOR_BACKUP_INTENT
#define FILE_OPEN_FOR_BACKUP_INTENT 0x00004000
#endif
#ifndef FILE_NON_DIRECTORY_FILE
#define FILE_NON_DIRECTORY_FILE 0x00000040
#endif
#ifndef FILE_OPEN_IF
#define FILE_OPEN_IF 0x00000003
#endif
#ifndef OBJ_CASE_INSENSITIVE
#define OBJ_CASE_INSENSITIVE 0x00000040L
#endif

/* FILE_RENAME_INFORMATION for NtSetInformationFile (class 10), which the SDK's
 * winternl.h does not declare. */
typedef struct {
  BOOLEAN ReplaceIfExists;
  HANDLE RootDirectory;
  ULONG FileNameLength;
  WCHAR FileName[1];
} aos_fa__rename_info;
#define AOS_FA__FILE_RENAME_INFORMATION ((FILE_INFORMATION_CLASS)10)
NTSTATUS NTAPI NtSetInformationFile(HANDLE FileHandle, PIO_STATUS_BLOCK IoStatusBlock,
                                    PVOID FileInformation, ULONG Length,
                                    FILE_INFORMATION_CLASS FileInformationClass);

#define AOS_FA__H(fd) ((HANDLE)(intptr_t)(fd))
#define AOS_FA__FD(h) ((int)(intptr_t)(h))
#define AOS_FA__SHARE_ALL (FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
#define AOS_FA__DIR_ACCESS (FILE_LIST_DIRECTORY | FILE_TRAVERSE | FILE_READ_ATTRIBUTES | SYNCHRONIZE)
#define AOS_FA__NO_FOLLOW \
  (FILE_SYNCHRONOUS_IO_NONALERT | FILE_OPEN_REPARSE_POINT | FILE_OPEN_FOR_BACKUP_INTENT)

/* A Win32 error / an NTSTATUS as an errno value. */
int aos_fa__win32_errno(DWORD e);
int aos_fa__nt_errno(NTSTATUS s);

/* UTF-8 (a checked segment) to UTF-16; returns the length in WCHARs, or -1. */
int aos_fa__wide(const char *s, WCHAR *out, int cap);

/* NtCreateFile of one segment relative to `dir`; returns 0 or an errno. */
int aos_fa__nt_open(HANDLE dir, const char *seg, ACCESS_MASK access, ULONG share,
                    ULONG disposition, ULONG options, HANDLE *out);

/* The handle's attributes (FileAttributeTagInfo); *ok false on failure (GetLastError). */
DWORD aos_fa__attributes(HANDLE h, bool *ok);

/* The directory holding segs[count-1]: the root handle itself (count <= 1), or a new
 * handle from aos_fa_walk with `flags` (close it unless it is the root's). */
int aos_fa__parent(const aos_fa_root *root, const char *const *segs, size_t count,
                   unsigned flags, HANDLE *dir, aos_fa_status *st);

/* The version of the entry `h` is open on (as a read reports it). 0 or an errno. */
int aos_fa__read_version(HANDLE h, aos_fa_version *v);

/* Milliseconds to wait before version `v` is settled (0: it is): NTFS stamps changes
 * from the system clock, which ticks (about 1 to 16 ms), so a version is handed out only
 * once that clock has passed its ChangeTime by more than a tick (posix_settle.c says
 * why). Observations of an unsettled version before FILE_CHANGED: AOS_FA__SETTLE_TRIES. */
DWORD aos_fa__unsettled_ms(const aos_fa_version *v);
#define AOS_FA__SETTLE_TRIES 8

/* Renames the entry `h` is open on (with DELETE access) to `target` relative to `dir`
 * (FileRenameInformation with RootDirectory); `replace`: ReplaceIfExists. 0 or an
 * errno (EEXIST: an entry is at the target and `replace` is false). */
int aos_fa__rename_to(HANDLE h, HANDLE dir, const char *target, bool replace);

/* win32_stat.c: what aos_fa_stat reports of `name` in `dir`, opened for attributes only
 * without following it. 0 or an errno. */
int aos_fa__stat_at(HANDLE dir, const char *name, aos_fa_stat_info *out);
/* Fills each entry's stat (made with room for one) as aos_fa__stat_at does, versions
 * settled as stat's are (one wait for all that need one); each entry's kind becomes
 * its stat's; entries gone meanwhile are dropped (names freed, *count lowered). 0, or
 * a failure with *st filled (no segment index). */
int aos_fa__stat_entries(HANDLE dir, aos_fa_entry *entries, size_t *count, aos_fa_status *st);

/* win32_list.c: reads the directory `h` from its current enumeration position into
 * *out, unsorted, without "." and ".."; names that are not well-formed UTF-16 are
 * counted in *omitted. 0 or an errno (out freed on failure). */
int aos_fa__read_dir(HANDLE h, aos_fa_listing *out, size_t *omitted);
/* win32_list.c: fn(ctx, name, len, kind) for each entry of `h` from its enumeration
 * position but "." and ".." (a name with no UTF-8 form: counted in *omitted, or with
 * omitted NULL passed as fn(ctx, NULL, 0, ...)). 0 or an errno. */
int aos_fa__scan_dir(HANDLE h, aos_fa_scan_fn fn, void *ctx, size_t *omitted);

#endif
