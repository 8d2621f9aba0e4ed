/* file-authority: the walk's host calls on Windows (the walk itself is tree.c; reading
 * a directory is win32_list.c's). */
#include "file_authority/fa.h"
#include "file_authority/tree.h"
#include "file_authority/win32.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the walk's host calls (tree.h; the walk itself is tree.c). A child directory is
 * opened with NtCreateFile relative to its parent's handle (FILE_DIRECTORY_FILE |
 * FILE_OPEN_REPARSE_POINT), so a reparse point is never followed (listed as a link,
 * never entered); an entry is looked at by opening it for attributes only, relative
 * to the same handle. */

int aos_fa_tree_scan(int dir, aos_fa_scan_fn fn, void *ctx) {
  return aos_fa__scan_dir(AOS_FA__H(dir), fn, ctx, NULL);
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
