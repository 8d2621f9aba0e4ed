/* file-authority: moving an entry within the root (POSIX). Both parents are resolved
 * from the retained root; the move is one renameat relative to them: without
 * `replace`, an exclusive rename (Linux renameat2 RENAME_NOREPLACE, macOS
 * renameatx_np RENAME_EXCL), so an entry that appears at the target meanwhile is
 * never replaced; a host with neither refuses (HOST_IO ENOSYS). */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/syscall.h>
#endif

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* An exclusive rename: 0 or -errno (EEXIST when the target exists). */
static int aos_fa__rename_excl(int fdir, const char *fname, int tdir, const char *tname) {
  int r;
#if defined(__linux__) && defined(SYS_renameat2)
  do {
    r = (int)syscall(SYS_renameat2, fdir, fname, tdir, tname, RENAME_NOREPLACE);
  } while (r != 0 && errno == EINTR);
#elif defined(__APPLE__) && defined(RENAME_EXCL)
  do {
    r = renameatx_np(fdir, fname, tdir, tname, RENAME_EXCL);
  } while (r != 0 && errno == EINTR);
#else
  (void)fdir, (void)fname, (void)tdir, (void)tname;
  errno = ENOSYS;
  r = -1;
#endif
  return r == 0 ? 0 : -errno;
}

int aos_fa_rename(const aos_fa_root *root, const char *const *from, size_t nfrom,
                  const char *const *to, size_t nto, bool replace, aos_fa_status *st) {
  if (nfrom == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, -1);
  if (nto == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, (int)nfrom);
  int fdir, tdir;
  int r = aos_fa_posix_parent(root, from, nfrom, AOS_FA_WALK_SYNC, &fdir, st);
  if (r != 0) {
    if (st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO; /* ENOENT at its index */
    return r;
  }
  r = aos_fa_posix_parent(root, to, nto, AOS_FA_WALK_SYNC, &tdir, st);
  if (r != 0) {
    aos_fa_posix_parent_close(root, fdir);
    if (st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO;
    if (st->segment >= 0) st->segment += (int)nfrom;
    return r;
  }
  int flast = (int)nfrom - 1, tlast = (int)(nfrom + nto) - 1;
  const char *fname = from[flast], *tname = to[nto - 1];
  struct stat sb;
  int e = 0, at = -1;
  if (fstatat(fdir, fname, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
    e = errno;
    at = flast;
  } else if (!replace) {
    e = -aos_fa__rename_excl(fdir, fname, tdir, tname);
    if (e == EEXIST) {
      r = aos_fa_fail(st, AOS_FA_ENTRY_EXISTS, EEXIST, tlast);
      goto done;
    }
  } else if (fstatat(tdir, tname, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) {
      e = errno;
      at = tlast;
    } else {
      /* No target: create it exclusively, so nothing that appeared meanwhile is
       * replaced unchecked (a regular file that appeared is replaced, below). */
      e = -aos_fa__rename_excl(fdir, fname, tdir, tname);
      if (e == EEXIST) {
        if (fstatat(tdir, tname, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode)) {
          e = renameat(fdir, fname, tdir, tname) == 0 ? 0 : errno;
        } else {
          r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, tlast);
          goto done;
        }
      }
    }
  } else if (!S_ISREG(sb.st_mode)) {
    r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, aos_fa_posix_kind_errno(sb.st_mode), tlast);
    goto done;
  } else {
    /* Replaces the regular file atomically (one rename over it). */
    e = renameat(fdir, fname, tdir, tname) == 0 ? 0 : errno;
  }
  if (e != 0) {
    if (e == ENOENT && at < 0) at = flast; /* the source went away meanwhile */
    if (e == EISDIR || e == ENOTDIR || e == ENOTEMPTY) {
      r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, tlast); /* a kind swapped in at the target */
    } else {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, e, at);
    }
    goto done;
  }
  r = aos_fa_posix_flush_dir(fdir);
  if (r == 0 && tdir != fdir) r = aos_fa_posix_flush_dir(tdir);
  if (r != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, -r, -1);
  } else {
    aos_fa_status_ok(st);
  }
done:
  aos_fa_posix_parent_close(root, fdir);
  aos_fa_posix_parent_close(root, tdir);
  return r;
}
