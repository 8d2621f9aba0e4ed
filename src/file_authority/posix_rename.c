/* file-authority: moving an entry within the root (POSIX). Both parents are resolved
 * from the retained root; the move is one rename relative to them:
 *
 * - without `replace`, an exclusive rename (Linux renameat2 RENAME_NOREPLACE, macOS
 *   renameatx_np RENAME_EXCL), so an entry that appears at the target meanwhile is never
 *   replaced; a host with neither refuses (HOST_IO ENOSYS);
 * - with `replace` over an existing regular file, an atomic exchange (RENAME_EXCHANGE /
 *   RENAME_SWAP) of source and target, then a look at what now sits at the source's
 *   name, i.e. the entry actually replaced: the regular file looked at before is
 *   removed; anything else (a FIFO, socket, link or directory swapped in at the target
 *   meanwhile) is exchanged back, never replaced, and the move is UNSAFE_ENTRY. Hosts
 *   without an exchange use one renameat right after the look (the window
 *   docs/file-authority.md states).
 *
 * Confinement (posix_beneath.c): both parents are checked immediately before the move
 * and again after it; a parent moved out of the root in between makes the move
 * FILE_CHANGED, and the move is undone (renamed back, or exchanged back). */
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
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int aos_fa_posix_rename2(int fdir, const char *fname, int tdir, const char *tname, bool exchange) {
  int r;
#if defined(__linux__) && defined(SYS_renameat2)
  unsigned flags = exchange ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  do {
    r = (int)syscall(SYS_renameat2, fdir, fname, tdir, tname, flags);
  } while (r != 0 && errno == EINTR);
  if (r != 0 && (errno == ENOSYS || (errno == EINVAL && exchange))) return -ENOSYS;
#elif defined(__APPLE__) && defined(RENAME_EXCL) && defined(RENAME_SWAP)
  do {
    r = renameatx_np(fdir, fname, tdir, tname, exchange ? RENAME_SWAP : RENAME_EXCL);
  } while (r != 0 && errno == EINTR);
  if (r != 0 && (errno == ENOTSUP || errno == ENOSYS || (errno == EINVAL && exchange))) return -ENOSYS;
#else
  (void)fdir, (void)fname, (void)tdir, (void)tname, (void)exchange;
  errno = ENOSYS;
  r = -1;
#endif
  return r == 0 ? 0 : -errno;
}

/* Both parents beneath the root (the first failure fills *st). */
static int aos_fa__both_beneath(const aos_fa_root *root, int fdir, int tdir, aos_fa_status *st) {
  int r = aos_fa_beneath_dir(root, fdir, st);
  if (r == 0 && tdir != fdir) r = aos_fa_beneath_dir(root, tdir, st);
  return r;
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
  struct stat src, tgt;
  int e = 0, at = -1;
  bool exchanged = false;
  if (fstatat(fdir, fname, &src, AT_SYMLINK_NOFOLLOW) != 0) {
    e = errno;
    at = flast;
    goto failed;
  }
  /* An existing target that replace allows: a regular file (looked at here; what the
   * exchange actually meets is looked at again below). */
  bool over = false;
  if (replace) {
    if (fstatat(tdir, tname, &tgt, AT_SYMLINK_NOFOLLOW) == 0) {
      if (!S_ISREG(tgt.st_mode)) {
        r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, S_ISLNK(tgt.st_mode) ? ELOOP : 0, tlast);
        goto done;
      }
      over = true;
    } else if (errno != ENOENT) {
      e = errno;
      at = tlast;
      goto failed;
    }
  }
  for (int attempt = 0; attempt < 8; attempt++) {
    r = aos_fa__both_beneath(root, fdir, tdir, st);
    if (r != 0) goto done;
    if (!over) {
      e = -aos_fa_posix_rename2(fdir, fname, tdir, tname, false);
      if (e == EEXIST && replace) {
        /* A target appeared meanwhile: only a regular file may be replaced. */
        if (fstatat(tdir, tname, &tgt, AT_SYMLINK_NOFOLLOW) == 0) {
          if (!S_ISREG(tgt.st_mode)) {
            r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, S_ISLNK(tgt.st_mode) ? ELOOP : 0, tlast);
            goto done;
          }
          over = true;
        }
        continue;
      }
      if (e == EEXIST) {
        r = aos_fa_fail(st, AOS_FA_ENTRY_EXISTS, EEXIST, tlast);
        goto done;
      }
      break;
    }
    /* Replacing a regular file: a directory never replaces one (as rename(2) refuses). */
    if (S_ISDIR(src.st_mode)) {
      e = ENOTDIR;
      break;
    }
    e = -aos_fa_posix_rename2(fdir, fname, tdir, tname, true);
    if (e == ENOSYS) {
      /* No exchange here: one rename right after the look (the stated window). */
      e = renameat(fdir, fname, tdir, tname) == 0 ? 0 : errno;
      break;
    }
    if (e == ENOENT) {
      /* The target went away meanwhile (or the source: reported below). */
      struct stat again;
      if (fstatat(fdir, fname, &again, AT_SYMLINK_NOFOLLOW) != 0) break;
      over = false;
      continue;
    }
    if (e != 0) break;
    exchanged = true;
    /* The entry replaced now sits at the source's name: it must be the regular file
     * looked at (same identity), and what moved to the target the source looked at. */
    struct stat displaced, moved;
    bool ok = fstatat(fdir, fname, &displaced, AT_SYMLINK_NOFOLLOW) == 0 &&
              S_ISREG(displaced.st_mode) &&
              fstatat(tdir, tname, &moved, AT_SYMLINK_NOFOLLOW) == 0 &&
              moved.st_dev == src.st_dev && moved.st_ino == src.st_ino;
    if (!ok) {
      (void)aos_fa_posix_rename2(fdir, fname, tdir, tname, true); /* put both back */
      bool kind = fstatat(tdir, tname, &tgt, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(tgt.st_mode);
      r = kind ? aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, S_ISLNK(tgt.st_mode) ? ELOOP : 0, tlast)
               : aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
      goto done;
    }
    break;
  }
  if (e != 0) goto failed;
  /* Confinement: both parents still beneath the root after the move; if not, it may
   * have moved an entry out of the root or into it: undone, FILE_CHANGED. */
  if (aos_fa__both_beneath(root, fdir, tdir, st) != 0) {
    if (exchanged) {
      (void)aos_fa_posix_rename2(fdir, fname, tdir, tname, true);
    } else if (aos_fa_posix_rename2(tdir, tname, fdir, fname, false) == -ENOSYS) {
      (void)renameat(tdir, tname, fdir, fname);
    }
    r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    goto done;
  }
  if (exchanged && unlinkat(fdir, fname, 0) != 0 && errno != ENOENT) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, errno, flast);
    goto done;
  }
  r = aos_fa_posix_flush_dir(fdir);
  if (r == 0 && tdir != fdir) r = aos_fa_posix_flush_dir(tdir);
  if (r != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, -r, -1);
  } else {
    aos_fa_status_ok(st);
  }
  goto done;
failed:
  if (e == ENOENT && at < 0) at = flast; /* the source went away meanwhile */
  if (e == EISDIR || e == ENOTDIR || e == ENOTEMPTY) {
    r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, tlast); /* a kind swapped in at the target */
  } else {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, e, at);
  }
done:
  aos_fa_posix_parent_close(root, fdir);
  aos_fa_posix_parent_close(root, tdir);
  return r;
}
