/* file-authority: reading a directory, and the list operation (Windows). The walk's
 * host calls (win32_tree.c) read directories through aos_fa__scan_dir; this file uses
 * only the handle helpers of win32.c and win32_stat.c, so every include and call among
 * the Windows files points one way: win32.c, then win32_stat.c, win32_list.c, then
 * win32_tree.c. */
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
int aos_fa__scan_dir(HANDLE h, aos_fa_scan_fn fn, void *ctx, size_t *omitted) {
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
  int r = aos_fa__scan_dir(h, aos_fa__collect_one, &c, omitted);
  if (r != 0) aos_fa_listing_free(out);
  return r;
}

void aos_fa_listing_free(aos_fa_listing *listing) {
  if (listing->entries != NULL) {
    for (size_t i = 0; i < listing->count; i++) free(listing->entries[i].name);
    free(listing->entries);
  }
  listing->entries = NULL;
  listing->count = 0;
  listing->omitted = 0;
}

/* With stats: each entry of `out` given room for its stat (a new allocation, the name
 * copied), then looked at relative to the listed directory's handle as aos_fa_stat
 * looks (aos_fa__stat_entries); one gone meanwhile is left out. */
static int aos_fa__list_stats(HANDLE dir, aos_fa_listing *out, aos_fa_status *st) {
  for (size_t i = 0; i < out->count; i++) {
    aos_fa_entry *en = &out->entries[i];
    aos_fa_entry moved;
    if (!aos_fa_entry_init(&moved, en->name, en->len, en->kind, true)) return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, -1);
    free(en->name);
    *en = moved;
  }
  return aos_fa__stat_entries(dir, out->entries, &out->count, st);
}

int aos_fa_list(const aos_fa_root *root, const char *const *segs, size_t count, bool with_stats,
                aos_fa_listing *out, aos_fa_status *st) {
  memset(out, 0, sizeof *out);
  int fd;
  int r = aos_fa_walk(root, segs, count, AOS_FA_WALK_LIST, &fd, st);
  if (r != 0) return r;
  int at = count == 0 ? -1 : (int)count - 1;
  size_t omitted = 0;
  int e = aos_fa__read_dir(AOS_FA__H(fd), out, &omitted);
  if (e == 0 && with_stats && aos_fa__list_stats(AOS_FA__H(fd), out, st) != 0) {
    CloseHandle(AOS_FA__H(fd));
    aos_fa_listing_free(out);
    return st->kind == AOS_FA_HOST_IO ? aos_fa_fail(st, AOS_FA_HOST_IO, st->err, at) : -EIO;
  }
  CloseHandle(AOS_FA__H(fd));
  if (e != 0) {
    aos_fa_listing_free(out);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, at);
  }
  out->omitted = omitted;
  aos_fa_status_ok(st);
  return 0;
}
