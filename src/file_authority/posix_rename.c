/* file-authority: moving an entry within the root (POSIX). Both parents are resolved
 * from the retained root; the move is one rename relative to them:
 *
 * - without `replace`, an exclusive rename (Linux renameat2 RENAME_NOREPLACE, macOS
 *   renameatx_np RENAME_EXCL), so an entry that appears at the target meanwhile is never
 *   replaced; a host with neither refuses (HOST_IO ENOSYS);
 * - with `replace` over an existing regular file, the source is moved (exclusively) to
 *   a fresh ".aos-<hex>.tmp" name beside the target, then exchanged with the target
 *   (RENAME_EXCHANGE / RENAME_SWAP): the entry that comes out at the temporary name is
 *   the one actually replaced. A regular file is removed; anything else (a FIFO,
 *   socket, link or directory exchanged in at the target meanwhile) is put back, never
 *   replaced, the source goes back to its name, and the move is UNSAFE_ENTRY. Hosts
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
#include <sched.h>
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

/* After a move: both parents beneath the root, and neither moved since the guard was
 * set (a move out and back between the checks). */
static int aos_fa__both_stayed(const aos_fa_root *root, int fdir, int tdir, aos_fa_guard *g,
                               aos_fa_status *st) {
  int r = aos_fa__both_beneath(root, fdir, tdir, st);
  if (r == 0 && aos_fa_guard_moved(g)) r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  return r;
}

static bool aos_fa__same(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

#define AOS_FA__UNDO_TRIES 4096

/* Undoes the exchange of `tmp` (which held the source, `src`) and `tname` in tdir: the
 * entry it displaced goes back to tname and the source to tmp, whatever a racing
 * renamer did to either name meanwhile; the displaced entry is put back only where that
 * replaces nothing but the source (by exchange) or nothing at all. */
static void aos_fa__unexchange(int tdir, const char *tmp, const char *tname, const struct stat *src) {
  for (int tries = 0; tries < AOS_FA__UNDO_TRIES; tries++) {
    struct stat at_tmp, at_target;
    if (fstatat(tdir, tmp, &at_tmp, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (aos_fa__same(&at_tmp, src)) return; /* undone */
    int r = aos_fa_posix_rename2(tdir, tmp, tdir, tname, false);
    if (r == 0 || (r != -EEXIST && r != -ENOSYS)) return;
    if (r == -ENOSYS) {
      if (linkat(tdir, tmp, tdir, tname, 0) == 0) {
        unlinkat(tdir, tmp, 0);
        return;
      }
      if (errno != EEXIST) return;
    }
    if (fstatat(tdir, tname, &at_target, AT_SYMLINK_NOFOLLOW) == 0 && aos_fa__same(&at_target, src)) {
      (void)aos_fa_posix_rename2(tdir, tmp, tdir, tname, true);
      continue;
    }
    if (tries < 256) {
      sched_yield();
    } else {
      aos_fa_posix_sleep_ns(20LL * 1000);
    }
  }
}

/* Moves the source back from `tmp` to its own name (replacing nothing; offered again
 * while another entry holds the name). */
static void aos_fa__source_back(int fdir, const char *fname, int tdir, const char *tmp,
                                const struct stat *src) {
  for (int tries = 0; tries < AOS_FA__UNDO_TRIES; tries++) {
    struct stat at_tmp;
    if (fstatat(tdir, tmp, &at_tmp, AT_SYMLINK_NOFOLLOW) != 0 || !aos_fa__same(&at_tmp, src)) return;
    int r = aos_fa_posix_rename2(tdir, tmp, fdir, fname, false);
    if (r != -EEXIST) return;
    if (tries < 256) {
      sched_yield();
    } else {
      aos_fa_posix_sleep_ns(20LL * 1000);
    }
  }
}

/* rename with replace over an existing regular file, where the host can exchange: the
 * source is first moved (exclusively) to a fresh temporary name beside the target, then
 * exchanged with the target; the entry that comes out is the one actually replaced. A
 * regular file is removed; anything else (a FIFO, socket, link or directory exchanged in
 * at the target meanwhile) goes back, and so does everything when a parent is found
 * moved out of the root. 0 with *done; -ENOSYS (no exchange here: the caller's plain
 * rename); or a failure with *st filled. */
static int aos_fa__replace(const aos_fa_root *root, int fdir, const char *fname, int tdir,
                           const char *tname, const struct stat *src, int flast, int tlast,
                           aos_fa_guard *g, aos_fa_status *st) {
  char tmp[48];
  int e = EEXIST;
  for (int tries = 0; tries < 16 && e == EEXIST; tries++) {
    aos_fa_posix_temp_name(tmp);
    e = -aos_fa_posix_rename2(fdir, fname, tdir, tmp, false);
  }
  if (e == ENOSYS) return -ENOSYS;
  if (e != 0) {
    if (e == ENOENT) return aos_fa_fail(st, AOS_FA_HOST_IO, ENOENT, flast);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, e == EXDEV ? tlast : flast);
  }
  struct stat moved;
  if (fstatat(tdir, tmp, &moved, AT_SYMLINK_NOFOLLOW) != 0 || !aos_fa__same(&moved, src)) {
    /* Not the entry looked at (swapped at the source's name meanwhile): back. */
    if (fstatat(tdir, tmp, &moved, AT_SYMLINK_NOFOLLOW) == 0) aos_fa__source_back(fdir, fname, tdir, tmp, &moved);
    return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  for (int attempt = 0; attempt < 8; attempt++) {
    if (aos_fa__both_beneath(root, fdir, tdir, st) != 0) break;
    e = -aos_fa_posix_rename2(tdir, tmp, tdir, tname, true);
    if (e == ENOENT) {
      /* The target went away meanwhile: the move replaces nothing now. */
      e = -aos_fa_posix_rename2(tdir, tmp, tdir, tname, false);
      if (e == EEXIST) continue;
      if (e != 0) {
        aos_fa_fail(st, AOS_FA_HOST_IO, e, tlast);
        break;
      }
      if (aos_fa__both_stayed(root, fdir, tdir, g, st) != 0) {
        if (aos_fa_posix_rename2(tdir, tname, tdir, tmp, false) == 0) break;
        return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
      }
      aos_fa_status_ok(st);
      return 0;
    }
    if (e != 0) {
      aos_fa_fail(st, e == EISDIR || e == ENOTDIR ? AOS_FA_UNSAFE_ENTRY : AOS_FA_HOST_IO, e, tlast);
      break;
    }
    /* Exchanged: the entry replaced now sits at the temporary name. */
    struct stat displaced;
    bool regular = fstatat(tdir, tmp, &displaced, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(displaced.st_mode);
    if (aos_fa__both_stayed(root, fdir, tdir, g, st) != 0) {
      aos_fa__unexchange(tdir, tmp, tname, src);
      break;
    }
    if (!regular) {
      aos_fa__unexchange(tdir, tmp, tname, src);
      aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, aos_fa_posix_kind_errno(displaced.st_mode), tlast);
      break;
    }
    if (unlinkat(tdir, tmp, 0) != 0 && errno != ENOENT) return aos_fa_fail(st, AOS_FA_HOST_IO, errno, tlast);
    aos_fa_status_ok(st);
    return 0;
  }
  /* Failed (st says how): the source goes back to its name. */
  aos_fa_status keep = *st;
  aos_fa__source_back(fdir, fname, tdir, tmp, src);
  *st = keep;
  if (st->kind == AOS_FA_OK) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  return -1;
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
  aos_fa_guard guard = {-1, -1, -1};
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
        r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, aos_fa_posix_kind_errno(tgt.st_mode), tlast);
        goto done;
      }
      over = true;
    } else if (errno != ENOENT) {
      e = errno;
      at = tlast;
      goto failed;
    }
  }
  aos_fa_guard_begin(&guard, root, fdir, tdir);
  for (int attempt = 0; attempt < 8; attempt++) {
    r = aos_fa__both_beneath(root, fdir, tdir, st);
    if (r != 0) goto done;
    if (!over) {
      e = -aos_fa_posix_rename2(fdir, fname, tdir, tname, false);
      if (e == EEXIST && replace) {
        /* A target appeared meanwhile: only a regular file may be replaced. */
        if (fstatat(tdir, tname, &tgt, AT_SYMLINK_NOFOLLOW) == 0) {
          if (!S_ISREG(tgt.st_mode)) {
            r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, aos_fa_posix_kind_errno(tgt.st_mode), tlast);
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
    r = aos_fa__replace(root, fdir, fname, tdir, tname, &src, flast, tlast, &guard, st);
    if (r != -ENOSYS) {
      if (r == 0) goto flush;
      goto done;
    }
    /* No exchange here: one rename right after the look (the stated window). */
    e = renameat(fdir, fname, tdir, tname) == 0 ? 0 : errno;
    break;
  }
  if (e != 0) goto failed;
  /* Confinement: both parents still beneath the root after the move, and not moved
   * meanwhile; if not, it may have moved an entry out of the root or into it: undone,
   * FILE_CHANGED. */
  if (aos_fa__both_stayed(root, fdir, tdir, &guard, st) != 0) {
    if (aos_fa_posix_rename2(tdir, tname, fdir, fname, false) == -ENOSYS) {
      (void)renameat(tdir, tname, fdir, fname);
    }
    r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    goto done;
  }
flush:
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
  aos_fa_guard_end(&guard);
  aos_fa_posix_parent_close(root, fdir);
  aos_fa_posix_parent_close(root, tdir);
  return r;
}
