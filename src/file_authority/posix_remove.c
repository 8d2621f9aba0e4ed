/* file-authority: removing one entry relative to its retained parent (POSIX).
 *
 * The entry is looked at (fstatat, no follow), then taken off its name by an exclusive
 * rename to a fresh ".aos-<hex>.tmp" name in the same directory, then the parent is
 * checked to be beneath the root (posix_beneath.c), then the temporary name is
 * unlinked. The change a caller sees (the name no longer naming the entry) is the
 * rename, made while the parent was beneath the root by the check right after it: a
 * parent moved out of the root in between gets the entry back under its name (renamed
 * back, never replacing anything) and the call is FILE_CHANGED. What the rename moved
 * must be of the kind the look allowed (a directory only with `directory`), else it is
 * put back and the call is UNSAFE_ENTRY, so nothing the look did not allow is removed.
 * A directory that is not empty is put back too (HOST_IO ENOTEMPTY). Hosts without an
 * exclusive rename unlink the name directly after the check (the window
 * docs/security.md states). */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#define AOS_FA__REMOVE_TEMP_TRIES 16
#define AOS_FA__PUT_BACK_TRIES 256

/* Puts the entry at `tmp` back at `name` without replacing anything (waiting, a bounded
 * number of times, while another entry holds the name). */
static void aos_fa__put_back(int dir, const char *tmp, const char *name) {
  for (int tries = 0; tries < AOS_FA__PUT_BACK_TRIES; tries++) {
    int r = aos_fa_posix_rename2(dir, tmp, dir, name, false);
    if (r != -EEXIST) return;
    sched_yield();
  }
}

int aos_fa_remove(const aos_fa_root *root, const char *const *segs, size_t count,
                  bool directory, bool *removed, aos_fa_status *st) {
  *removed = false;
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, -1);
  int dir;
  int r = aos_fa_posix_parent(root, segs, count, AOS_FA_WALK_SYNC, &dir, st);
  if (r != 0) {
    if (st->kind == AOS_FA_NOT_FOUND) {
      aos_fa_status_ok(st); /* a missing parent: no such entry */
      return 0;
    }
    return r;
  }
  int last = (int)count - 1;
  const char *name = segs[last];
  struct stat sb;
  if (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
    int e = errno;
    aos_fa_posix_parent_close(root, dir);
    if (e == ENOENT) {
      aos_fa_status_ok(st);
      return 0;
    }
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  bool is_dir = S_ISDIR(sb.st_mode);
  if (is_dir && !directory) {
    aos_fa_posix_parent_close(root, dir);
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, last);
  }
  int e = 0;
  aos_fa_guard guard;
  aos_fa_guard_begin(&guard, root, dir, -1);
  r = aos_fa_beneath_dir(root, dir, st);
  if (r != 0) goto out;
  char tmp[48];
  for (int tries = 0; tries < AOS_FA__REMOVE_TEMP_TRIES; tries++) {
    aos_fa_posix_temp_name(tmp);
    e = -aos_fa_posix_rename2(dir, name, dir, tmp, false);
    if (e != EEXIST) break;
  }
  if (e == ENOSYS) {
    /* No exclusive rename on this host: the unlink right after the check. */
    r = aos_fa_beneath_dir(root, dir, st);
    if (r != 0) goto out;
    e = unlinkat(dir, name, is_dir ? AT_REMOVEDIR : 0) == 0 ? 0 : errno;
  } else if (e == 0) {
    /* Off its name. What moved must be what the look allowed (a directory swapped in
     * for a file, or the reverse, goes back), and the parent must be beneath the root. */
    struct stat moved;
    bool same_kind = fstatat(dir, tmp, &moved, AT_SYMLINK_NOFOLLOW) == 0 &&
                     S_ISDIR(moved.st_mode) == is_dir;
    if (aos_fa_beneath_dir(root, dir, st) != 0 ||
        (aos_fa_guard_moved(&guard) && aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1) != 0)) {
      aos_fa__put_back(dir, tmp, name);
      r = st->kind == AOS_FA_FILE_CHANGED ? aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1)
                                          : aos_fa_fail(st, AOS_FA_HOST_IO, st->err, last);
      goto out;
    }
    if (!same_kind) {
      aos_fa__put_back(dir, tmp, name);
      e = is_dir ? ENOTDIR : EISDIR;
    } else if (unlinkat(dir, tmp, is_dir ? AT_REMOVEDIR : 0) != 0) {
      e = errno;
      aos_fa__put_back(dir, tmp, name);
    }
  }
  if (e != 0) {
    if (e == ENOENT) {
      aos_fa_status_ok(st);
      r = 0;
      goto out;
    }
    if (e == EPERM && !is_dir) {
      /* EPERM: Linux's unlink of a directory (one swapped in since the look). */
      struct stat now;
      if (fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(now.st_mode)) e = EISDIR;
    }
    if (e == EEXIST) e = ENOTEMPTY;
    if (e == EISDIR || e == ENOTDIR) {
      r = aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, last);
    } else {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
    }
    goto out;
  }
  *removed = true;
  r = aos_fa_posix_flush_dir(dir);
  if (r != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
  } else {
    aos_fa_status_ok(st);
  }
out:
  aos_fa_guard_end(&guard);
  aos_fa_posix_parent_close(root, dir);
  return r;
}
