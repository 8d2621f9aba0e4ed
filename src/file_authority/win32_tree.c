/* file-authority: reading a directory, for list and for the walk's host calls
 * (Windows; the walk itself is tree.c). */
#include "file_authority/fa.h"
#include "file_authority/tree.h"
#include "file_authority/win32.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Scans the directory `h` from its enumeration position: fn(ctx, name, kind) for each
 * entry but "." and "..", its name as UTF-8; a name that is not well-formed UTF-16 has
 * no UTF-8 form: counted in *omitted, or (omitted NULL) passed as fn(ctx, NULL, 0, ...).
 * 0 or an errno. */
static int aos_fa__scan(HANDLE h, aos_fa_scan_fn fn, void *ctx, size_t *omitted) {
  enum { BUF = 64 * 1024 };
  uint8_t *buf = malloc(BUF);
  char *name = malloc(AOS_FA_MAX_SEGMENT_BYTES * 3 + 4);
  if (buf == NULL || name == NULL) {
    free(buf);
    free(name);
    return ENOMEM;
  }
  int r = 0;
  while (r == 0) {
    if (!GetFileInformationByHandleEx(h, FileIdBothDirectoryInfo, buf, BUF)) {
      DWORD e = GetLastError();
      if (e != ERROR_NO_MORE_FILES) r = aos_fa__win32_errno(e);
      break;
    }
    size_t off = 0;
    for (;;) {
      FILE_ID_BOTH_DIR_INFO *info = (FILE_ID_BOTH_DIR_INFO *)(buf + off);
      int wlen = (int)(info->FileNameLength / sizeof(WCHAR));
      const WCHAR *w = info->FileName;
      bool dot = (wlen == 1 && w[0] == L'.') || (wlen == 2 && w[0] == L'.' && w[1] == L'.');
      if (!dot) {
        int n = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, wlen, name,
                                    AOS_FA_MAX_SEGMENT_BYTES * 3 + 3, NULL, NULL);
        if (n <= 0) {
          /* not well-formed UTF-16: no UTF-8 name exists for it */
          if (omitted != NULL) (*omitted)++;
          else r = fn(ctx, NULL, 0, AOS_FA_KIND_OTHER);
          if (r != 0) break;
        } else {
          aos_fa_entry_kind kind = AOS_FA_KIND_FILE;
          if (info->FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) {
            kind = AOS_FA_KIND_SYMLINK;
          } else if (info->FileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
            kind = AOS_FA_KIND_DIRECTORY;
          } else if (info->FileAttributes & FILE_ATTRIBUTE_DEVICE) {
            kind = AOS_FA_KIND_OTHER;
          }
          name[n] = '\0';
          r = fn(ctx, name, (size_t)n, kind);
          if (r != 0) break;
        }
      }
      if (info->NextEntryOffset == 0) break;
      off += info->NextEntryOffset;
    }
  }
  free(name);
  free(buf);
  return r;
}

typedef struct {
  aos_fa_listing *out;
  size_t cap;
} aos_fa__collect;

static int aos_fa__collect_one(void *ctx, const char *name, size_t len, aos_fa_entry_kind kind) {
  aos_fa__collect *c = ctx;
  aos_fa_listing *out = c->out;
  if (out->count == c->cap) {
    size_t ncap = c->cap == 0 ? 16 : c->cap * 2;
    aos_fa_entry *ne = realloc(out->entries, ncap * sizeof *ne);
    if (ne == NULL) return ENOMEM;
    out->entries = ne;
    c->cap = ncap;
  }
  if (!aos_fa_entry_init(&out->entries[out->count], name, len, kind, false)) return ENOMEM;
  out->count++;
  return 0;
}

int aos_fa__read_dir(HANDLE h, aos_fa_listing *out, size_t *omitted) {
  memset(out, 0, sizeof *out);
  aos_fa__collect c = {out, 0};
  int r = aos_fa__scan(h, aos_fa__collect_one, &c, omitted);
  if (r != 0) aos_fa_listing_free(out);
  return r;
}

/* ---- the walk's host calls (tree.h; the walk itself is tree.c). A child directory is
 * opened with NtCreateFile relative to its parent's handle (FILE_DIRECTORY_FILE |
 * FILE_OPEN_REPARSE_POINT), so a reparse point is never followed (listed as a link,
 * never entered); an entry is looked at by opening it for attributes only, relative
 * to the same handle. */

int aos_fa_tree_scan(int dir, aos_fa_scan_fn fn, void *ctx) {
  return aos_fa__scan(AOS_FA__H(dir), fn, ctx, NULL);
}

int aos_fa_tree_open_child(int dir, const char *name, int *child) {
  HANDLE h;
  int e = aos_fa__nt_open(AOS_FA__H(dir), name, AOS_FA__DIR_ACCESS, AOS_FA__SHARE_ALL, FILE_OPEN,
                          FILE_DIRECTORY_FILE | AOS_FA__NO_FOLLOW, &h);
  if (e != 0) return e;
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  if (!ok || (attrs & FILE_ATTRIBUTE_REPARSE_POINT)) {
    e = ok ? ELOOP : aos_fa__win32_errno(GetLastError());
    CloseHandle(h);
    return e;
  }
  *child = AOS_FA__FD(h);
  return 0;
}

int aos_fa_tree_kind_at(int dir, const char *name, aos_fa_entry_kind *kind) {
  aos_fa_stat_info info;
  int e = aos_fa__stat_at(AOS_FA__H(dir), name, &info);
  if (e == 0) *kind = info.kind;
  return e;
}

int aos_fa_tree_stat_entries(int dir, aos_fa_entry *entries, size_t *count, aos_fa_status *st) {
  return aos_fa__stat_entries(AOS_FA__H(dir), entries, count, st);
}

/* Confinement under moves is not done on Windows yet (docs/security.md): no watch, no
 * check, as every other Windows operation. */
int aos_fa_tree_watch_open(void) {
  return -1;
}

int aos_fa_tree_watch(int w, int dir) {
  (void)w;
  (void)dir;
  return -1;
}

int aos_fa_tree_confined(const aos_fa_root *root, int w, int wd, int dir, aos_fa_status *st) {
  (void)root;
  (void)w;
  (void)wd;
  (void)dir;
  aos_fa_status_ok(st);
  return 0;
}

void aos_fa_tree_unwatch(int w, int wd) {
  (void)w;
  (void)wd;
}

void aos_fa_tree_watch_close(int w) {
  (void)w;
}

void aos_fa_tree_close(int dir) {
  if (dir != -1) CloseHandle(AOS_FA__H(dir));
}
