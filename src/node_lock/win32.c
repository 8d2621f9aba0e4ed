/* node-lock on Windows: LockFileEx on a handle opened without following a reparse
 * point at the guard path.
 *
 * Byte-range locks on Windows belong to the handle (two handles in one process
 * exclude each other) and end when the handle is closed, which the system does for
 * a process that exits or is killed. Handles are opened with no security attributes,
 * so they are never inherited by a child process.
 *
 * Windows byte-range locks are mandatory for reads and writes of the bytes they
 * cover, so the lock covers one byte far beyond any content
 * (AOS_LOCK__RANGE_OFFSET): the pid record at offset 0 stays readable by a refused
 * caller.
 *
 * Participants open the guard file sharing read and write but not delete: while any
 * participant has it open, the file can be neither deleted, renamed, nor replaced by
 * a rename over its path. The identity check after locking is kept all the same. */
#include "node_lock/node_lock.h"
#include "node_lock/record.h"

#include <windows.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* The locked byte: offset 2^62, length 1. */
#define AOS_LOCK__RANGE_OFFSET_HIGH 0x40000000UL

void aos_lock_init(aos_lock *lock) {
  lock->handle = NULL;
  lock->recorded = false;
}

/* Windows error codes as errno values, for the `hostCode` of errors. */
static int aos_lock__errno(DWORD err) {
  switch (err) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_NET_NAME:
      return ENOENT;
    case ERROR_ACCESS_DENIED:
    case ERROR_PRIVILEGE_NOT_HELD:
      return EACCES;
    case ERROR_SHARING_VIOLATION:
    case ERROR_BUSY:
      return EBUSY;
    case ERROR_LOCK_VIOLATION:
      return EAGAIN;
    case ERROR_INVALID_NAME:
    case ERROR_BAD_PATHNAME:
    case ERROR_INVALID_PARAMETER:
    case ERROR_NO_UNICODE_TRANSLATION:
      return EINVAL;
    case ERROR_DIRECTORY:
      return ENOTDIR;
    case ERROR_FILENAME_EXCED_RANGE:
      return ENAMETOOLONG;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
      return ENOMEM;
    case ERROR_WRITE_PROTECT:
      return EROFS;
    case ERROR_TOO_MANY_OPEN_FILES:
      return EMFILE;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
      return ENOSPC;
    case ERROR_NOT_SUPPORTED:
    case ERROR_INVALID_FUNCTION:
      return ENOTSUP;
    case ERROR_CANT_RESOLVE_FILENAME:
      return ELOOP;
    default:
      return EIO;
  }
}

static int aos_lock__last_error(void) { return -aos_lock__errno(GetLastError()); }

/* The path as a newly allocated UTF-16 string, or NULL (errno-style code in *err). */
static wchar_t *aos_lock__wide(const char *path, int *err) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
  if (n <= 0) {
    *err = aos_lock__last_error();
    return NULL;
  }
  wchar_t *w = malloc((size_t)n * sizeof *w);
  if (w == NULL) {
    *err = -ENOMEM;
    return NULL;
  }
  if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n) != n) {
    *err = aos_lock__last_error();
    free(w);
    return NULL;
  }
  return w;
}

static void aos_lock__unsafe(aos_lock_outcome *out, DWORD attributes) {
  out->state = AOS_LOCK_UNSAFE;
  out->holder_pid = 0;
  if (attributes & FILE_ATTRIBUTE_REPARSE_POINT) {
    out->host_errno = ELOOP;
  } else if (attributes & FILE_ATTRIBUTE_DIRECTORY) {
    out->host_errno = EISDIR;
  } else {
    out->host_errno = 0;
  }
}

static bool aos_lock__regular(DWORD attributes) {
  return (attributes & (FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DIRECTORY)) == 0;
}

/* Opens the guard file: created if missing, never through a reparse point (the
 * point itself is opened and then refused), non-inheritable. An existing guard
 * file this process may not write is opened read-only (the pid is then not
 * recorded). */
static HANDLE aos_lock__open(const wchar_t *wpath, bool *writable, int *err) {
  const DWORD share = FILE_SHARE_READ | FILE_SHARE_WRITE;
  const DWORD flags = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT;
  HANDLE h = CreateFileW(wpath, GENERIC_READ | GENERIC_WRITE, share, NULL, OPEN_ALWAYS,
                         flags, NULL);
  if (h != INVALID_HANDLE_VALUE) {
    *writable = true;
    return h;
  }
  DWORD first = GetLastError();
  if (first == ERROR_ACCESS_DENIED || first == ERROR_WRITE_PROTECT) {
    h = CreateFileW(wpath, GENERIC_READ, share, NULL, OPEN_EXISTING, flags, NULL);
    if (h != INVALID_HANDLE_VALUE) {
      *writable = false;
      return h;
    }
  }
  *err = -aos_lock__errno(first);
  return INVALID_HANDLE_VALUE;
}

/* 1 when the path still names the file open at `held` (same volume and file index,
 * and not a reparse point or directory now), 0 when it names something else or
 * nothing, -errno when that cannot be told. */
static int aos_lock__still_at_path(const wchar_t *wpath,
                                   const BY_HANDLE_FILE_INFORMATION *held) {
  HANDLE h = CreateFileW(wpath, FILE_READ_ATTRIBUTES,
                         FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                         OPEN_EXISTING,
                         FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, NULL);
  if (h == INVALID_HANDLE_VALUE) {
    DWORD e = GetLastError();
    return e == ERROR_FILE_NOT_FOUND ? 0 : -aos_lock__errno(e);
  }
  BY_HANDLE_FILE_INFORMATION now;
  BOOL ok = GetFileInformationByHandle(h, &now);
  int r = ok ? 0 : aos_lock__last_error();
  CloseHandle(h);
  if (!ok) return r;
  if (!aos_lock__regular(now.dwFileAttributes)) return 0;
  return now.dwVolumeSerialNumber == held->dwVolumeSerialNumber &&
                 now.nFileIndexHigh == held->nFileIndexHigh &&
                 now.nFileIndexLow == held->nFileIndexLow
             ? 1
             : 0;
}

static BOOL aos_lock__truncate(HANDLE h) {
  FILE_END_OF_FILE_INFO eof;
  eof.EndOfFile.QuadPart = 0;
  return SetFileInformationByHandle(h, FileEndOfFileInfo, &eof, sizeof eof);
}

static void aos_lock__record_pid(aos_lock *lock) {
  char text[AOS_LOCK_RECORD_MAX_BYTES + 1];
  int n = aos_lock_format_record(text, sizeof text, (int64_t)GetCurrentProcessId());
  if (n <= 0) return;
  /* The file is empty or holds an earlier record (checked under the lock). */
  if (!aos_lock__truncate(lock->handle)) return;
  lock->recorded = true;
  OVERLAPPED at = {0};
  DWORD written = 0;
  /* The pid is advisory: the lock itself is held whatever this write does. */
  (void)WriteFile(lock->handle, text, (DWORD)n, &written, &at);
}

/* Reads the guard file open at `h`, `size` bytes long: 1 when it is a holder record
 * (*pid: the pid it names, 0 for none or a later version), 0 when it is anything
 * else, -errno when it cannot be read. An empty file is not a record. */
static int aos_lock__read_record(HANDLE h, uint64_t size, int64_t *pid) {
  *pid = 0;
  if (size == 0 || size > AOS_LOCK_RECORD_MAX_BYTES) return 0;
  char text[AOS_LOCK_RECORD_MAX_BYTES + 1];
  OVERLAPPED at = {0};
  DWORD n = 0;
  if (!ReadFile(h, text, (DWORD)sizeof text, &n, &at)) {
    DWORD e = GetLastError();
    if (e == ERROR_HANDLE_EOF) return 0;
    return -aos_lock__errno(e);
  }
  return aos_lock_parse_record(text, (size_t)n, pid) ? 1 : 0;
}

static uint64_t aos_lock__size(const BY_HANDLE_FILE_INFORMATION *info) {
  return ((uint64_t)info->nFileSizeHigh << 32) | info->nFileSizeLow;
}

static bool aos_lock__pid_alive(int64_t pid) {
  if (pid <= 0) return false;
  HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
  if (p == NULL) return GetLastError() == ERROR_ACCESS_DENIED; /* exists, not ours */
  DWORD code = 0;
  bool alive = GetExitCodeProcess(p, &code) && code == STILL_ACTIVE;
  CloseHandle(p);
  return alive;
}

static BOOL aos_lock__lock_range(HANDLE h) {
  OVERLAPPED at = {0};
  at.OffsetHigh = AOS_LOCK__RANGE_OFFSET_HIGH;
  return LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at);
}

static void aos_lock__unlock_range(HANDLE h) {
  OVERLAPPED at = {0};
  at.OffsetHigh = AOS_LOCK__RANGE_OFFSET_HIGH;
  (void)UnlockFileEx(h, 0, 1, 0, &at);
}

static int aos_lock__try(const wchar_t *wpath, bool want_holder, aos_lock *lock,
                         aos_lock_outcome *out) {
  for (int attempt = 0; attempt <= AOS_LOCK_MAX_REPLACED_RETRIES; attempt++) {
    DWORD attributes = GetFileAttributesW(wpath);
    if (attributes != INVALID_FILE_ATTRIBUTES) {
      if (!aos_lock__regular(attributes)) {
        aos_lock__unsafe(out, attributes);
        return 0;
      }
    } else if (GetLastError() != ERROR_FILE_NOT_FOUND) {
      return aos_lock__last_error();
    }

    bool writable = false;
    int err = 0;
    HANDLE h = aos_lock__open(wpath, &writable, &err);
    if (h == INVALID_HANDLE_VALUE) {
      attributes = GetFileAttributesW(wpath);
      if (attributes != INVALID_FILE_ATTRIBUTES && !aos_lock__regular(attributes)) {
        aos_lock__unsafe(out, attributes);
        return 0;
      }
      return err;
    }
    if (GetFileType(h) != FILE_TYPE_DISK) {
      CloseHandle(h);
      aos_lock__unsafe(out, 0);
      return 0;
    }

    bool locked = aos_lock__lock_range(h) != 0;
    if (!locked) {
      DWORD e = GetLastError();
      if (e != ERROR_LOCK_VIOLATION) {
        CloseHandle(h);
        return -aos_lock__errno(e);
      }
    }
    /* The handle's identity, attributes, link count and size, taken after the lock:
     * when locked, no participant writes the file from here on. */
    BY_HANDLE_FILE_INFORMATION info;
    if (!GetFileInformationByHandle(h, &info)) {
      int r = aos_lock__last_error();
      CloseHandle(h);
      return r;
    }
    if (!aos_lock__regular(info.dwFileAttributes)) {
      CloseHandle(h);
      aos_lock__unsafe(out, info.dwFileAttributes);
      return 0;
    }

    int same = aos_lock__still_at_path(wpath, &info);
    if (same <= 0) {
      CloseHandle(h); /* closing the handle drops its lock */
      if (same < 0) return same;
      continue;
    }

    /* A file with another name (a hard link to a data file) is never a guard. */
    if (info.nNumberOfLinks > 1) {
      CloseHandle(h);
      aos_lock__unsafe(out, info.dwFileAttributes);
      return 0;
    }

    if (!locked) {
      /* Held: the holder may be writing its record right now, so the content is
       * not judged here; it is only read for the holder's pid, once: refusing
       * never waits (an empty record reads as an unknown holder). */
      out->state = AOS_LOCK_HELD;
      if (want_holder) {
        int64_t pid = 0;
        if (aos_lock__read_record(h, aos_lock__size(&info), &pid) == 1 &&
            aos_lock__pid_alive(pid)) {
          out->holder_pid = pid;
        }
      }
      CloseHandle(h);
      return 0;
    }

    /* Locked: the file must be empty or hold a holder record (a holder that died
     * left its own); anything else is not a guard and is left as it is. */
    if (aos_lock__size(&info) != 0) {
      int64_t ignored;
      int rec = aos_lock__read_record(h, aos_lock__size(&info), &ignored);
      if (rec <= 0) {
        CloseHandle(h); /* drops the lock: nothing was written */
        if (rec < 0) return rec;
        aos_lock__unsafe(out, info.dwFileAttributes);
        return 0;
      }
    }

    lock->handle = h;
    if (writable) aos_lock__record_pid(lock);
    out->state = AOS_LOCK_ACQUIRED;
    return 0;
  }
  out->state = AOS_LOCK_HELD;
  out->holder_pid = 0;
  return 0;
}

int aos_lock_holder(const char *path, int64_t *pid) {
  *pid = 0;
  int err = 0;
  wchar_t *wpath = aos_lock__wide(path, &err);
  if (wpath == NULL) return err;
  /* Read access only, sharing what a holder's handle shares; a reparse point is
   * opened as itself (and is not a guard). */
  HANDLE h = CreateFileW(wpath, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                         OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
  free(wpath);
  if (h == INVALID_HANDLE_VALUE) return aos_lock__last_error();
  BY_HANDLE_FILE_INFORMATION info;
  if (!GetFileInformationByHandle(h, &info)) {
    int r = aos_lock__last_error();
    CloseHandle(h);
    return r;
  }
  if (aos_lock__regular(info.dwFileAttributes) && info.nNumberOfLinks == 1) {
    uint64_t size = aos_lock__size(&info);
    int64_t recorded = 0;
    if (size == 0) {
      *pid = -1; /* no record yet: every holder here writes one */
    } else if (aos_lock__read_record(h, size, &recorded) == 1 && aos_lock__pid_alive(recorded)) {
      *pid = recorded;
    }
  }
  CloseHandle(h);
  return 0;
}

int aos_lock_try_acquire(const char *path, bool want_holder, aos_lock *lock,
                         aos_lock_outcome *out) {
  aos_lock_init(lock);
  out->state = AOS_LOCK_HELD;
  out->holder_pid = 0;
  out->host_errno = 0;
  int err = 0;
  wchar_t *wpath = aos_lock__wide(path, &err);
  if (wpath == NULL) return err;
  int r = aos_lock__try(wpath, want_holder, lock, out);
  free(wpath);
  return r;
}

/* Whether the guard file open at `h` holds exactly the record this process wrote.
 * Only then is it cleared on release: a program that does not take part and wrote
 * into the held file meanwhile keeps its bytes (the package never truncates a file
 * that is not a guard). */
static bool aos_lock__own_record(HANDLE h) {
  char want[AOS_LOCK_RECORD_MAX_BYTES + 1], got[AOS_LOCK_RECORD_MAX_BYTES + 2];
  int n = aos_lock_format_record(want, sizeof want, (int64_t)GetCurrentProcessId());
  if (n <= 0) return false;
  OVERLAPPED at = {0};
  DWORD r = 0;
  if (!ReadFile(h, got, (DWORD)sizeof got, &r, &at)) return false;
  return r == (DWORD)n && memcmp(got, want, (size_t)n) == 0;
}

void aos_lock_release(aos_lock *lock) {
  if (lock->handle == NULL) return;
  HANDLE h = lock->handle;
  if (lock->recorded && aos_lock__own_record(h)) (void)aos_lock__truncate(h);
  aos_lock__unlock_range(h);
  CloseHandle(h);
  lock->handle = NULL;
  lock->recorded = false;
}
