/* file-authority: directory reading and the bounded walk beneath a directory (Windows).
 *
 * Depth-first, each directory's entries sorted in code-unit order, a directory
 * before its contents. It never resolves a path below the walked directory: each
 * child directory is opened with NtCreateFile relative to its parent's handle
 * (FILE_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT), so a reparse point is never
 * followed (listed as a link, never entered) and a directory renamed or swapped while
 * the walk runs is entered only if it is a directory at that name in a directory the
 * walk holds open. Holds one handle per level. */
#include "file_authority/fa.h"
#include "file_authority/win32.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int aos_fa__read_dir(HANDLE h, aos_fa_listing *out, size_t *omitted) {
  memset(out, 0, sizeof *out);
  size_t cap = 0;
  enum { BUF = 64 * 1024 };
  uint8_t *buf = malloc(BUF);
  if (buf == NULL) return ENOMEM;
  int r = 0;
  for (;;) {
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
        int n = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, wlen, NULL, 0, NULL, NULL);
        if (n <= 0) {
          (*omitted)++; /* not well-formed UTF-16: no UTF-8 name exists for it */
        } else {
          if (out->count == cap) {
            size_t ncap = cap == 0 ? 16 : cap * 2;
            aos_fa_entry *ne = realloc(out->entries, ncap * sizeof *ne);
            if (ne == NULL) {
              r = ENOMEM;
              goto done;
            }
            out->entries = ne;
            cap = ncap;
          }
          char *name = malloc((size_t)n + 1);
          if (name == NULL) {
            r = ENOMEM;
            goto done;
          }
          WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, wlen, name, n, NULL, NULL);
          name[n] = '\0';
          aos_fa_entry_kind kind = AOS_FA_KIND_FILE;
          if (info->FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) {
            kind = AOS_FA_KIND_SYMLINK;
          } else if (info->FileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
            kind = AOS_FA_KIND_DIRECTORY;
          } else if (info->FileAttributes & FILE_ATTRIBUTE_DEVICE) {
            kind = AOS_FA_KIND_OTHER;
          }
          out->entries[out->count].name = name;
          out->entries[out->count].len = (size_t)n;
          out->entries[out->count].kind = kind;
          out->entries[out->count].stat = NULL;
          out->count++;
        }
      }
      if (info->NextEntryOffset == 0) break;
      off += info->NextEntryOffset;
    }
  }
done:
  free(buf);
  if (r != 0) aos_fa_listing_free(out);
  return r;
}

typedef struct {
  aos_fa_listing listing; /* the directory's entries, sorted */
  size_t next;            /* the next entry to report */
} aos_fa__frame;

void aos_fa_tree_free(aos_fa_tree *tree) {
  if (tree->entries != NULL) {
    for (size_t i = 0; i < tree->count; i++) free(tree->entries[i].name);
  }
  free(tree->entries);
  free(tree->depths);
  tree->entries = NULL;
  tree->depths = NULL;
  tree->count = 0;
}

/* Appends one entry (taking its name) at `depth`. 0 or ENOMEM. */
static int aos_fa__emit(aos_fa_tree *out, size_t *cap, aos_fa_entry *e, uint32_t depth) {
  if (out->count == *cap) {
    size_t ncap = *cap == 0 ? 64 : *cap * 2;
    aos_fa_entry *n = realloc(out->entries, ncap * sizeof *n);
    if (n == NULL) return ENOMEM;
    out->entries = n;
    uint32_t *dn = realloc(out->depths, ncap * sizeof *dn);
    if (dn == NULL) return ENOMEM;
    out->depths = dn;
    *cap = ncap;
  }
  out->entries[out->count] = *e;
  out->depths[out->count] = depth;
  out->count++;
  e->name = NULL;
  return 0;
}

/* Opens the child directory `name` of `dir` without following it: 0, or an errno
 * (ELOOP: a reparse point; ENOTDIR: no longer a directory). */
static int aos_fa__open_child(HANDLE dir, const char *name, HANDLE *out) {
  HANDLE h;
  int e = aos_fa__nt_open(dir, name, AOS_FA__DIR_ACCESS, AOS_FA__SHARE_ALL, FILE_OPEN,
                          FILE_DIRECTORY_FILE | AOS_FA__NO_FOLLOW, &h);
  if (e != 0) return e;
  bool ok;
  DWORD attrs = aos_fa__attributes(h, &ok);
  if (!ok || (attrs & FILE_ATTRIBUTE_REPARSE_POINT)) {
    e = ok ? ELOOP : aos_fa__win32_errno(GetLastError());
    CloseHandle(h);
    return e;
  }
  *out = h;
  return 0;
}

int aos_fa_tree_walk(const aos_fa_root *root, const char *const *segs, size_t count,
                     uint64_t max_entries, uint64_t max_depth, aos_fa_tree *out,
                     aos_fa_status *st) {
  memset(out, 0, sizeof *out);
  int at = count == 0 ? -1 : (int)count - 1;
  int fd;
  int r = aos_fa_walk(root, segs, count, AOS_FA_WALK_LIST, &fd, st);
  if (r != 0) return r;
  uint64_t limit = count >= AOS_FA_MAX_SEGMENTS - 1 ? 0 : AOS_FA_MAX_SEGMENTS - 1 - count;
  if (max_depth > limit) max_depth = limit;
  aos_fa__frame stack[AOS_FA_MAX_SEGMENTS];
  HANDLE dirs[AOS_FA_MAX_SEGMENTS]; /* each open frame's directory, to open children from */
  size_t top = 0, cap = 0;
  for (size_t i = 0; i < AOS_FA_MAX_SEGMENTS; i++) dirs[i] = NULL;
  dirs[0] = AOS_FA__H(fd);
  r = aos_fa__read_dir(dirs[0], &stack[0].listing, &out->omitted);
  if (r != 0) {
    CloseHandle(dirs[0]);
    return aos_fa_fail(st, AOS_FA_HOST_IO, r, at);
  }
  aos_fa_listing_sort(&stack[0].listing);
  stack[0].next = 0;
  for (;;) {
    aos_fa__frame *f = &stack[top];
    if (f->next == f->listing.count) {
      aos_fa_listing_free(&f->listing);
      CloseHandle(dirs[top]);
      dirs[top] = NULL;
      if (top == 0) break;
      top--;
      continue;
    }
    aos_fa_entry *e = &f->listing.entries[f->next++];
    HANDLE child = NULL;
    if (e->kind == AOS_FA_KIND_DIRECTORY && top < max_depth) {
      /* Opened before it is reported: one replaced by another kind since the
       * listing is left out with its subtree, as the contract says. */
      int ce = aos_fa__open_child(dirs[top], e->name, &child);
      if (ce == ENOENT) continue; /* removed meanwhile */
      if (ce == ELOOP || ce == ENOTDIR) {
        out->omitted++;
        continue;
      }
      if (ce != 0) {
        r = ce;
        break;
      }
    }
    if (out->count == max_entries) {
      if (child != NULL) CloseHandle(child);
      out->truncated = true;
      break;
    }
    r = aos_fa__emit(out, &cap, e, (uint32_t)top);
    if (r != 0) {
      if (child != NULL) CloseHandle(child);
      break;
    }
    if (child == NULL) continue;
    aos_fa__frame *nf = &stack[top + 1];
    r = aos_fa__read_dir(child, &nf->listing, &out->omitted);
    if (r != 0) {
      CloseHandle(child);
      break;
    }
    aos_fa_listing_sort(&nf->listing);
    nf->next = 0;
    top++;
    dirs[top] = child;
  }
  if (r != 0 || out->truncated) {
    for (size_t i = 0; i <= top; i++) {
      aos_fa_listing_free(&stack[i].listing);
      if (dirs[i] != NULL) CloseHandle(dirs[i]);
    }
  }
  if (r != 0) {
    aos_fa_tree_free(out);
    return aos_fa_fail(st, AOS_FA_HOST_IO, r, at);
  }
  aos_fa_status_ok(st);
  return 0;
}
