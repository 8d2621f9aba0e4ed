/* file-authority: moving an entry within the root (Windows). Both parents are
 * resolved from the retained root; the source is opened relative to its parent for
 * DELETE without following it (FILE_OPEN_REPARSE_POINT: a link moves as itself), and
 * moved with NtSetInformationFile(FileRenameInformation) whose RootDirectory is the
 * target's parent handle. Without `replace`, ReplaceIfExists is FALSE: an entry that
 * appears at the target meanwhile is never replaced. With it, the target is looked at
 * first and only a regular file is replaced; Windows has no atomic exchange, so an
 * entry of another kind swapped in between that look and the rename is met by the
 * rename itself (NTFS refuses to replace a directory; a reparse point swapped in
 * would be replaced as an entry, never followed). */
#include "file_authority/fa.h"
#include "file_authority/win32.h"

#include <errno.h>

/* What is at `name` in `dir`, not followed: 0 and *attrs, or an errno (ENOENT: none). */
static int aos_fa__look(HANDLE dir, const char *name, DWORD *attrs) {
  HANDLE h;
  int e = aos_fa__nt_open(dir, name, FILE_READ_ATTRIBUTES | SYNCHRONIZE, AOS_FA__SHARE_ALL, FILE_OPEN,
                          AOS_FA__NO_FOLLOW, &h);
  if (e != 0) return e;
  bool ok;
  *attrs = aos_fa__attributes(h, &ok);
  if (!ok) e = aos_fa__win32_errno(GetLastError());
  CloseHandle(h);
  return e;
}

static bool aos_fa__regular(DWORD attrs) {
  return !(attrs & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DEVICE));
}

int aos_fa_rename(const aos_fa_root *root, const char *const *from, size_t nfrom,
                  const char *const *to, size_t nto, bool replace, aos_fa_status *st) {
  if (nfrom == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, -1);
  if (nto == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, (int)nfrom);
  int r = aos_fa_segments_check(from, nfrom, st);
  if (r != 0) return r;
  r = aos_fa_segments_check(to, nto, st);
  if (r != 0) {
    if (st->segment >= 0) st->segment += (int)nfrom;
    return r;
  }
  HANDLE rooth = AOS_FA__H(root->fd);
  HANDLE fdir, tdir;
  r = aos_fa__parent(root, from, nfrom, 0, &fdir, st);
  if (r != 0) {
    if (st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO; /* ENOENT at its index */
    return r;
  }
  r = aos_fa__parent(root, to, nto, 0, &tdir, st);
  if (r != 0) {
    if (fdir != rooth) CloseHandle(fdir);
    if (st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO;
    if (st->segment >= 0) st->segment += (int)nfrom;
    return r;
  }
  int flast = (int)nfrom - 1, tlast = (int)(nfrom + nto) - 1;
  const char *tname = to[nto - 1];
  HANDLE src = NULL;
  int e = aos_fa__nt_open(fdir, from[flast], DELETE | FILE_READ_ATTRIBUTES | SYNCHRONIZE, AOS_FA__SHARE_ALL,
                          FILE_OPEN, AOS_FA__NO_FOLLOW, &src);
  if (e != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, e, flast);
    goto done;
  }
  bool ok;
  DWORD sattrs = aos_fa__attributes(src, &ok);
  if (!ok) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, aos_fa__win32_errno(GetLastError()), flast);
    goto done;
  }
  bool src_dir = (sattrs & FILE_ATTRIBUTE_DIRECTORY) && !(sattrs & FILE_ATTRIBUTE_REPARSE_POINT);
  bool over = false;
  if (replace) {
    DWORD tattrs = 0;
    e = aos_fa__look(tdir, tname, &tattrs);
    if (e != 0 && e != ENOENT) {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, e, tlast);
      goto done;
    }
    if (e == 0) {
      if (!aos_fa__regular(tattrs)) {
        r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, (tattrs & FILE_ATTRIBUTE_REPARSE_POINT) ? ELOOP : 0, tlast);
        goto done;
      }
      if (src_dir) {
        r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, ENOTDIR, tlast); /* a directory over a file */
        goto done;
      }
      over = true;
    }
  }
  e = aos_fa__rename_to(src, tdir, tname, over);
  if (e == EEXIST && replace && !over) {
    /* Something appeared at the target since the look: replaced only if it is a
     * regular file and the source is not a directory. */
    DWORD tattrs = 0;
    e = aos_fa__look(tdir, tname, &tattrs);
    if (e == 0 && (!aos_fa__regular(tattrs) || src_dir)) {
      r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, tlast);
      goto done;
    }
    if (e == 0 || e == ENOENT) e = aos_fa__rename_to(src, tdir, tname, e == 0);
  }
  if (e == EEXIST && !replace) {
    r = aos_fa_fail(st, AOS_FA_ENTRY_EXISTS, EEXIST, tlast);
    goto done;
  }
  if (e == EISDIR || e == ENOTDIR || e == ENOTEMPTY || e == EACCES) {
    /* A directory swapped in at the target is refused by the host (ACCESS_DENIED). */
    DWORD tattrs = 0;
    if (aos_fa__look(tdir, tname, &tattrs) == 0 && !aos_fa__regular(tattrs)) {
      r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, tlast);
      goto done;
    }
  }
  if (e != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, e, e == ENOENT ? flast : -1);
    goto done;
  }
  /* NTFS journals the rename; a directory handle cannot be flushed (see win32.c). */
  aos_fa_status_ok(st);
  r = 0;
done:
  if (src != NULL) CloseHandle(src);
  if (fdir != rooth) CloseHandle(fdir);
  if (tdir != rooth) CloseHandle(tdir);
  return r;
}
