/* file-authority: atomic replacement of one file through its retained parent (POSIX).
 *
 * A write stages its bytes in a temporary file created owner-only (0600) and
 * exclusively in the retained parent, flushes it, gives it its final permission bits
 * (a replaced file's mode & 0777, never a set-id bit; a new file's opts->mode less the
 * umask) just before the commit, and commits it relative to the same parent:
 *
 * - no target (or if_absent): an exclusive rename (Linux renameat2 RENAME_NOREPLACE,
 *   macOS renameatx_np RENAME_EXCL) that never replaces an entry which appeared
 *   meanwhile;
 * - an existing regular file: an atomic exchange (RENAME_EXCHANGE / RENAME_SWAP), then a
 *   look at what now sits at the temporary name, i.e. the entry actually replaced: a
 *   regular file (with if_version: the one that was checked, same identity, size and
 *   mtime) is unlinked; anything else is exchanged back, never lost, and the write fails
 *   UNSAFE_ENTRY / FILE_CHANGED.
 *
 * Where the host has no such rename (an old kernel, a filesystem that refuses the flag
 * with EINVAL, or the private switch AGENT_OS_FA_NO_RENAMEAT2=1 read once per process),
 * a new file is committed with linkat (which never replaces either) and an existing one
 * with a check of the target immediately followed by renameat: in that fallback an
 * entry swapped in between the check and the rename is replaced (the window
 * docs/security.md states). */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/random.h>
#include <sys/syscall.h>
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#endif

#define AOS_FA__TEMP_TRIES 16

static void aos_fa__random(uint8_t *out, size_t n) {
#if defined(__linux__)
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(out + got, n - got, GRND_NONBLOCK);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += (size_t)r;
  }
  if (got == n) return;
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
  arc4random_buf(out, n);
  return;
#endif
  /* No entropy source answered: the name only needs to be unlikely to collide (the
   * file is created exclusively, so a collision is retried, never shared). */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
               ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&ts;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    out[i] = (uint8_t)x;
  }
}

/* ".aos-<32 hex>.tmp": a name no segment rule stops a caller from using, but one
 * that is never reused: each attempt is random and created exclusively. */
void aos_fa_posix_temp_name(char name[48]) {
  static const char hex[] = "0123456789abcdef";
  uint8_t r[16];
  aos_fa__random(r, sizeof r);
  memcpy(name, ".aos-", 5);
  for (size_t i = 0; i < sizeof r; i++) {
    name[5 + 2 * i] = hex[r[i] >> 4];
    name[6 + 2 * i] = hex[r[i] & 15];
  }
  memcpy(name + 5 + 2 * sizeof r, ".tmp", 5);
}

static int aos_fa__write_all(int fd, const uint8_t *data, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, data + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    done += (size_t)n;
  }
  return 0;
}

/* A file is flushed to stable storage. macOS: fsync only hands the data to the drive,
 * whose cache may lose it; F_FULLFSYNC asks the drive to flush too. Filesystems that
 * refuse F_FULLFSYNC (some network and FAT volumes answer ENOTSUP / EINVAL) get fsync,
 * as durable as they make it. */
static int aos_fa__fsync(int fd, bool directory) {
  int r;
#if defined(__APPLE__) && defined(F_FULLFSYNC)
  do {
    r = fcntl(fd, F_FULLFSYNC);
  } while (r == -1 && errno == EINTR);
  if (r != -1) return 0;
#endif
  do {
    r = fsync(fd);
  } while (r != 0 && errno == EINTR);
  if (r == 0) return 0;
  /* Some filesystems cannot flush a directory descriptor; the rename is then as
   * durable as that filesystem makes it. */
  if (directory && (errno == EINVAL || errno == ENOTSUP)) return 0;
  return -errno;
}

/* The process's umask, without changing it where the host can say (Linux 4.7+:
 * /proc/self/status). Elsewhere it is read by setting it, briefly, to 0077: a file
 * another thread creates in that instant gets fewer permissions, never more. */
static mode_t aos_fa__umask(void) {
#if defined(__linux__)
  int fd;
  do {
    fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  } while (fd < 0 && errno == EINTR);
  if (fd >= 0) {
    char buf[1024];
    size_t got = 0;
    while (got < sizeof buf - 1) {
      ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    const char *u = strstr(buf, "\nUmask:");
    if (u != NULL) {
      u += 7;
      while (*u == ' ' || *u == '\t') u++;
      mode_t m = 0;
      int digits = 0;
      for (; *u >= '0' && *u <= '7' && digits < 6; u++, digits++) m = (mode_t)(m * 8 + (mode_t)(*u - '0'));
      if (digits > 0 && *u == '\n') return m & 0777;
    }
  }
#endif
  mode_t m = umask(0077);
  umask(m);
  return m & 0777;
}

/* Removes the temporary name if it still names our file (never someone else's). */
static void aos_fa__remove_temp(int dir, const char *name, const struct stat *ours) {
  struct stat sb;
  if (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && sb.st_dev == ours->st_dev &&
      sb.st_ino == ours->st_ino) {
    unlinkat(dir, name, 0);
  }
}

/* A staged temporary file: complete, flushed, with its final permission bits, and
 * named `name` in the parent directory. */
typedef struct {
  char name[48];
  struct stat id;
  int fd;      /* the staged file, open until the write ends (its bits can still change) */
  mode_t mode; /* the permission bits it was given */
} aos_fa__staged;

/* aos_fa__stage's answer when an unnamed file could not be given a name: stage again
 * the classic way. */
#define AOS_FA__STAGE_NAMED 1

#if defined(__linux__) && defined(O_TMPFILE)
/* Names an O_TMPFILE file exclusively (linkat never replaces): through AT_EMPTY_PATH
 * (needs CAP_DAC_READ_SEARCH) or /proc/self/fd. 0, -EEXIST, or AOS_FA__STAGE_NAMED. */
static int aos_fa__name_unnamed(int tmp, int dir, char name[48]) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", tmp);
  for (int tries = 0; tries < AOS_FA__TEMP_TRIES; tries++) {
    aos_fa_posix_temp_name(name);
    int r = linkat(tmp, "", dir, name, AT_EMPTY_PATH);
    if (r != 0 && errno != EEXIST) r = linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW);
    if (r == 0) return 0;
    if (errno != EEXIST) return AOS_FA__STAGE_NAMED;
  }
  return -EEXIST;
}
#endif

/* Writes data[0..len) into a new file in `dir`, created owner-only (0600): on Linux an
 * O_TMPFILE file that gets its name only once complete (a writer killed while writing
 * leaves nothing behind); otherwise, or when `unnamed` is false, a file created
 * exclusively under a random name without following links. Once the bytes are written
 * the file gets `final_mode` (fchmod) and, when `durable`, is flushed, so nobody whom
 * the finished file would not admit can ever open it. Returns 0, -errno (nothing left
 * behind), or AOS_FA__STAGE_NAMED. */
static int aos_fa__stage(int dir, const uint8_t *data, size_t len, mode_t final_mode,
                         bool unnamed, bool durable, aos_fa__staged *out) {
  int tmp = -1;
  bool named = false;
#if defined(__linux__) && defined(O_TMPFILE)
  if (unnamed) {
    do {
      tmp = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    } while (tmp < 0 && errno == EINTR);
  }
#else
  (void)unnamed;
#endif
  if (tmp < 0) {
    for (int tries = 0; tmp < 0 && tries < AOS_FA__TEMP_TRIES; tries++) {
      aos_fa_posix_temp_name(out->name);
      do {
        tmp = openat(dir, out->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      } while (tmp < 0 && errno == EINTR);
      if (tmp < 0 && errno != EEXIST) break;
    }
    if (tmp < 0) return -errno;
    named = true;
  }
  int r = 0;
  if (fstat(tmp, &out->id) != 0) {
    r = -errno;
    close(tmp);
    /* The name was created exclusively a moment ago; without its identity, remove it
     * by name rather than leave it behind. */
    if (named) unlinkat(dir, out->name, 0);
    return r;
  }
  r = aos_fa__write_all(tmp, data, len);
  if (r == 0 && fchmod(tmp, final_mode) != 0) r = -errno;
  if (r == 0 && durable) r = aos_fa__fsync(tmp, false);
#if defined(__linux__) && defined(O_TMPFILE)
  if (r == 0 && !named) {
    r = aos_fa__name_unnamed(tmp, dir, out->name);
    named = r == 0;
  }
#endif
  if (r != 0) {
    close(tmp);
    if (named) aos_fa__remove_temp(dir, out->name, &out->id);
    return r;
  }
  /* Kept open: a chmod of the target made while this write runs is carried to the
   * staged file through it (aos_fa__carry_mode). Its bytes are flushed already. */
  out->fd = tmp;
  out->mode = final_mode;
  return 0;
}

/* ---- the commit */

static pthread_once_t aos_fa__switch_once = PTHREAD_ONCE_INIT;
static bool aos_fa__no_atomic_rename;

static void aos_fa__read_switch(void) {
  /* Private: the project's tests force the fallback with it; not public API. */
  const char *v = getenv("AGENT_OS_FA_NO_RENAMEAT2");
  aos_fa__no_atomic_rename = v != NULL && strcmp(v, "1") == 0;
}

typedef enum { AOS_FA__NOREPLACE, AOS_FA__EXCHANGE } aos_fa__how;

/* Renames `from` to `to` in `dir` exclusively or by exchange: 0, -errno, or -ENOSYS
 * when this host or filesystem has no such rename (then: the fallback). */
static int aos_fa__rename_atomic(int dir, const char *from, const char *to, aos_fa__how how) {
  pthread_once(&aos_fa__switch_once, aos_fa__read_switch);
  if (aos_fa__no_atomic_rename) return -ENOSYS;
#if defined(__linux__) && defined(SYS_renameat2)
  unsigned flags = how == AOS_FA__NOREPLACE ? RENAME_NOREPLACE : RENAME_EXCHANGE;
  if (syscall(SYS_renameat2, dir, from, dir, to, flags) == 0) return 0;
  /* EINVAL: a filesystem that does not implement the flag. */
  if (errno == ENOSYS || errno == EINVAL) return -ENOSYS;
  return -errno;
#elif defined(__APPLE__) && defined(RENAME_SWAP) && defined(RENAME_EXCL)
  unsigned flags = how == AOS_FA__NOREPLACE ? RENAME_EXCL : RENAME_SWAP;
  if (renameatx_np(dir, from, dir, to, flags) == 0) return 0;
  if (errno == ENOTSUP || errno == EINVAL || errno == ENOSYS) return -ENOSYS;
  return -errno;
#else
  (void)dir, (void)from, (void)to, (void)how;
  return -ENOSYS;
#endif
}

/* One commit: the staged file `tmp` and the `target`, both names in `dir`. */
typedef struct {
  const aos_fa_root *root;
  int dir;
  const char *tmp;
  const char *target;
  int last;
  const aos_fa_write_opts *opts;
  const struct stat *ours;
  aos_fa__staged *staged;
  int watch; /* the watch on the file an ifVersion write replaces (in the guard's instance), or -1 */
  aos_fa_guard *guard; /* watches the parent for moves through the commit */
  const char *const *segs; /* the path: segs[0..count - 1) names dir beneath the root */
  size_t count;
} aos_fa__commit_ctx;

static bool aos_fa__is_ours(const aos_fa__commit_ctx *c, const struct stat *sb) {
  return sb->st_dev == c->ours->st_dev && sb->st_ino == c->ours->st_ino;
}

/* Gives the staged file the permission bits `sb` (the target, as just seen) has, when a
 * chmod changed them after the look the staged bits came from: a chmod made while a
 * write runs is not reverted by its commit. */
static void aos_fa__carry_mode(const aos_fa__commit_ctx *c, const struct stat *sb) {
  mode_t want = sb->st_mode & 0777;
  if (!S_ISREG(sb->st_mode) || want == c->staged->mode) return;
  if (fchmod(c->staged->fd, want) == 0) c->staged->mode = want;
}

/* How often, and at most how long in all (about), a displaced entry is offered back to
 * a target name another entry holds meanwhile. */
#define AOS_FA__PUT_BACK_TRIES 4096
#define AOS_FA__PUT_BACK_NAP_NS (20LL * 1000)

/* Undoes an exchange: puts the entry it displaced (at c->tmp) back at c->target and
 * removes the staged file, whatever a racing renamer did to either name meanwhile
 * (moved ours away, put another entry at the target): the displaced entry is put back
 * only where that replaces nothing (exchanged with our own file, or renamed without
 * replacing), offered again while the target holds an entry of someone else's (a
 * renamer that moves it on leaves the name free for an instant). Never replaces or
 * removes anything but our own file. */
static void aos_fa__put_back(const aos_fa__commit_ctx *c) {
  for (int tries = 0; tries < AOS_FA__PUT_BACK_TRIES; tries++) {
    struct stat at_tmp, at_target;
    if (fstatat(c->dir, c->tmp, &at_tmp, AT_SYMLINK_NOFOLLOW) != 0) break; /* taken away */
    if (aos_fa__is_ours(c, &at_tmp)) {
      unlinkat(c->dir, c->tmp, 0);
      return;
    }
    /* Someone else's entry sits at our temporary name: back to the target, replacing
     * nothing. */
    int r = aos_fa__rename_atomic(c->dir, c->tmp, c->target, AOS_FA__NOREPLACE);
    if (r == 0) break;
    if (r == -ENOSYS) {
      /* No exclusive rename here: a link never replaces (a directory cannot be linked,
       * and is left, as without this). */
      if (linkat(c->dir, c->tmp, c->dir, c->target, 0) == 0) {
        unlinkat(c->dir, c->tmp, 0);
        break;
      }
      if (errno != EEXIST) break;
    } else if (r != -EEXIST) {
      break;
    }
    if (fstatat(c->dir, c->target, &at_target, AT_SYMLINK_NOFOLLOW) == 0 &&
        aos_fa__is_ours(c, &at_target)) {
      /* Ours holds the target: exchanged, ours is at the temporary name (removed above). */
      (void)aos_fa__rename_atomic(c->dir, c->tmp, c->target, AOS_FA__EXCHANGE);
      continue;
    }
    if (tries < 256) {
      sched_yield();
    } else {
      aos_fa_posix_sleep_ns(AOS_FA__PUT_BACK_NAP_NS);
    }
  }
  aos_fa__remove_temp(c->dir, c->target, c->ours);
}

/* Confinement (posix_beneath.c): the parent is beneath the root immediately before a
 * commit changes it. */
static int aos_fa__pre_check(const aos_fa__commit_ctx *c, aos_fa_status *st) {
  int r = aos_fa_beneath_dir_at(c->root, c->dir, c->segs, c->count - 1, st);
  if (r != 0 && st->kind == AOS_FA_HOST_IO) st->segment = c->last;
  return r;
}

/* ... and again after it: 0 when it still is; otherwise FILE_CHANGED (the caller undoes
 * what the commit did). */
static int aos_fa__post_check(const aos_fa__commit_ctx *c, aos_fa_status *st) {
  int r = aos_fa__pre_check(c, st);
  /* Beneath now, but moved meanwhile (out and back): the change may have landed outside. */
  if (r == 0 && aos_fa_guard_moved(c->guard)) r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  return r;
}



/* True when `now` (the entry the commit replaced, seen after the exchange) may be
 * replaced: a regular file, and with if_version the very file that was checked. The
 * exchange itself moved the entry, which sets its status-change time, so the entry is
 * recognised by identity, size and mtime; its whole version, ctime included, was
 * checked just before the exchange. */
static bool aos_fa__may_replace(const aos_fa__commit_ctx *c, const struct stat *now,
                                const struct stat *checked) {
  if (!S_ISREG(now->st_mode)) return false;
  if (c->opts->if_version == NULL) return true;
  aos_fa_version a, b;
  aos_fa_posix_version(now, &a);
  aos_fa_posix_version(checked, &b);
  /* The ctime itself cannot be compared (the exchange set it); what a change between
   * the check and the exchange would leave is: the watch's events (a write, a chmod,
   * chown, utimes, link or unlink of it), and without a watch the fields below. */
  return a.dev == b.dev && a.ino == b.ino && a.size == b.size && a.mtime_ns == b.mtime_ns &&
         now->st_mode == checked->st_mode && now->st_uid == checked->st_uid &&
         now->st_gid == checked->st_gid && now->st_nlink == checked->st_nlink &&
         !(c->watch >= 0 && aos_fa_watch_changed(c->guard->w));
}

/* The refusal for an entry that may not be replaced. */
static int aos_fa__refuse(const aos_fa__commit_ctx *c, const struct stat *sb, aos_fa_status *st) {
  if (!S_ISREG(sb->st_mode)) {
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, aos_fa_posix_kind_errno(sb->st_mode), c->last);
  }
  return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
}

/* Checks the entry at the target before a commit that may replace it. 0: it may be
 * replaced (*sb describes it); -ENOENT: none; else the refusal, *st filled. */
static int aos_fa__check_target(const aos_fa__commit_ctx *c, struct stat *sb, aos_fa_status *st) {
  if (fstatat(c->dir, c->target, sb, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return -ENOENT;
    return aos_fa_fail(st, AOS_FA_HOST_IO, errno, c->last);
  }
  if (c->opts->if_absent) return aos_fa_fail(st, AOS_FA_ENTRY_EXISTS, EEXIST, c->last);
  if (!S_ISREG(sb->st_mode)) return aos_fa__refuse(c, sb, st);
  if (c->opts->if_version != NULL) {
    /* Where versions cannot tell states apart, no version can be trusted to name the
     * file (posix_settle.c): UNSUPPORTED_BACKEND, nothing written. (A version handed out
     * elsewhere was settled, so a target matching it is in that very state.) */
    int64_t wait_ns;
    int r = aos_fa_posix_version_ready(c->dir, sb, &wait_ns, st);
    if (r != 0) {
      if (st->kind == AOS_FA_FILE_CHANGED) return r;
      return aos_fa_fail(st, st->kind, st->err, st->kind == AOS_FA_HOST_IO ? c->last : -1);
    }
    aos_fa_version v;
    aos_fa_posix_version(sb, &v);
    if (!aos_fa_version_matches(&v, c->opts->if_version)) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  return 0;
}

static int aos_fa__rename_failed(const aos_fa__commit_ctx *c, int e, aos_fa_status *st) {
  if (e == EISDIR || e == ENOTDIR || e == ENOTEMPTY) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, c->last);
  return aos_fa_fail(st, AOS_FA_HOST_IO, e, c->last);
}

/* Without an atomic exchange, writers of this package still exclude one another from
 * the check-then-rename of one file: the file about to be replaced (`checked`, just
 * checked as a regular file) is opened without following or blocking and locked with
 * a non-blocking flock, and the name is checked again under the lock. Another of this
 * package's writers committing over the same file holds that lock until its rename is
 * done, and its rename replaces the file: so a second writer either fails the lock or
 * finds another file at the name, FILE_CHANGED either way, and no write that checked
 * a version replaces content it never saw. (Writers that do not take the lock are the
 * window docs/file-authority.md states.) On success *lk is the locked descriptor, to
 * close after the rename. An entry swapped in between the check and the open is
 * opened without blocking, found not to be the checked file, and closed. */
static int aos_fa__lock_replaced(const aos_fa__commit_ctx *c, const struct stat *checked, int *lk,
                                 aos_fa_status *st) {
  int fd;
  do {
    fd = openat(c->dir, c->target, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (errno == ELOOP || errno == ENXIO) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, errno, c->last);
    if (errno == ENOENT) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    /* A file this writer may replace but not read (another user's, mode 0), or one
     * another process holds a lease on (EAGAIN): no lock, the commit as without one. */
    *lk = -1;
    return 0;
  }
  struct stat held, now;
  int r;
  do {
    r = flock(fd, LOCK_EX | LOCK_NB);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    int e = errno;
    close(fd);
    if (e == EWOULDBLOCK) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1); /* being replaced */
    if (e == ENOLCK || e == EINVAL || e == EOPNOTSUPP) { /* no flock here: the plain window */
      *lk = -1;
      return 0;
    }
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, c->last);
  }
  if (fstat(fd, &held) != 0 || held.st_dev != checked->st_dev || held.st_ino != checked->st_ino ||
      fstatat(c->dir, c->target, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != checked->st_dev ||
      now.st_ino != checked->st_ino) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  if (c->opts->if_version != NULL) {
    aos_fa_version v;
    aos_fa_posix_version(&now, &v);
    if (!aos_fa_version_matches(&v, c->opts->if_version)) {
      close(fd);
      return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    }
  }
  *lk = fd;
  return 0;
}

/* The fallback for a new file: linkat never replaces an entry; where the filesystem
 * has no hard links, a check immediately followed by renameat (the window). */
static int aos_fa__create_fallback(const aos_fa__commit_ctx *c) {
  if (linkat(c->dir, c->tmp, c->dir, c->target, 0) == 0) {
    unlinkat(c->dir, c->tmp, 0);
    return 0;
  }
  int e = errno;
  if (e != EPERM && e != ENOTSUP && e != EOPNOTSUPP && e != EMLINK && e != ENOSYS) return -e;
  struct stat sb;
  if (fstatat(c->dir, c->target, &sb, AT_SYMLINK_NOFOLLOW) == 0) return -EEXIST;
  if (errno != ENOENT) return -errno;
  if (renameat(c->dir, c->tmp, c->dir, c->target) != 0) return -errno;
  return 0;
}

/* The commit over an existing entry (`checked`, as last checked): the atomic exchange and
 * the look at what it replaced, or the fallback. `locked`: the caller holds the lock on
 * the replaced file already. Returns 0, a failure with *st filled, or 1 when the target
 * went away meanwhile (a plain write then commits as a new file). */
static int aos_fa__commit_over(const aos_fa__commit_ctx *c, struct stat *checked, bool locked,
                               aos_fa_status *st) {
  int r;
  /* A chmod of the target since the look: the staged file takes its bits now, so the
   * commit never shows the new content with the bits the target no longer has. */
  struct stat look;
  if (c->opts->if_version == NULL && fstatat(c->dir, c->target, &look, AT_SYMLINK_NOFOLLOW) == 0) {
    aos_fa__carry_mode(c, &look);
  }
  r = aos_fa__pre_check(c, st);
  if (r != 0) return r;
  r = aos_fa__rename_atomic(c->dir, c->tmp, c->target, AOS_FA__EXCHANGE);
  if (r == -ENOSYS) {
    /* Fallback: the check immediately followed by the rename. */
    r = aos_fa__check_target(c, checked, st);
    if (r == -ENOENT) {
      if (c->opts->if_version != NULL) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
      return 1;
    }
    if (r != 0) return r;
    int lk = -1;
    if (!locked) {
      r = aos_fa__lock_replaced(c, checked, &lk, st);
      if (r != 0) return r;
    }
    aos_fa__carry_mode(c, checked);
    r = aos_fa__pre_check(c, st);
    if (r == 0 && renameat(c->dir, c->tmp, c->dir, c->target) != 0) {
      r = aos_fa__rename_failed(c, errno, st);
    }
    if (lk >= 0) close(lk);
    if (r != 0) return r;
    /* Moved out of the root meanwhile: the entry replaced is gone (no exchange to undo
     * it with); ours is taken away again and the write is FILE_CHANGED. */
    if (aos_fa__post_check(c, st) != 0) {
      aos_fa__remove_temp(c->dir, c->target, c->ours);
      return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    }
    return 0;
  }
  if (r == -ENOENT) {
    /* The target went away meanwhile. */
    if (c->opts->if_version != NULL) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    return 1;
  }
  if (r != 0) return aos_fa__rename_failed(c, -r, st);
  /* Exchanged: the entry that was replaced now sits at the temporary name. */
  struct stat now;
  if (fstatat(c->dir, c->tmp, &now, AT_SYMLINK_NOFOLLOW) != 0) {
    /* Someone else took the replaced entry away from the temporary name in that
     * instant: nothing is left to put back or to check. */
    if (c->opts->if_version == NULL && aos_fa__post_check(c, st) == 0) return 0;
    aos_fa__remove_temp(c->dir, c->target, c->ours);
    return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  /* Confinement: the parent was beneath the root just before the exchange; if it is
   * not now, the exchange may have landed outside: undone, FILE_CHANGED. */
  if (aos_fa__post_check(c, st) != 0) {
    aos_fa__put_back(c);
    return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  if (aos_fa__may_replace(c, &now, checked)) {
    /* The bits of the file actually replaced (a chmod made just before the exchange). */
    if (c->opts->if_version == NULL) aos_fa__carry_mode(c, &now);
    if (unlinkat(c->dir, c->tmp, 0) != 0 && errno != ENOENT) {
      return aos_fa_fail(st, AOS_FA_HOST_IO, errno, c->last);
    }
    return 0;
  }
  /* Not ours to replace: put it back where it was, never lost. */
  aos_fa__put_back(c);
  return aos_fa__refuse(c, &now, st);
}

/* Commits the staged file at c->tmp to c->target. `expected`: the target as checked
 * before staging (NULL: there was none). Returns 0 or a failure with *st filled; on
 * failure the staged file is still at c->tmp, unless the failure says otherwise. */
#define AOS_FA__COMMIT_TRIES 8
static int aos_fa__commit(aos_fa__commit_ctx *c, const struct stat *expected, aos_fa_status *st) {
  struct stat checked;
  bool replacing = expected != NULL;
  if (replacing) checked = *expected;
  for (int attempt = 0; attempt < AOS_FA__COMMIT_TRIES; attempt++) {
    int r;
    if (!replacing) {
      r = aos_fa__pre_check(c, st);
      if (r != 0) return r;
      r = aos_fa__rename_atomic(c->dir, c->tmp, c->target, AOS_FA__NOREPLACE);
      /* linkat is as exclusive as RENAME_NOREPLACE (its last resort is not). */
      if (r == -ENOSYS) r = aos_fa__create_fallback(c);
      if (r == 0) {
        /* Confinement: created outside the root (its parent moved out meanwhile)? Then
         * taken away again, FILE_CHANGED. */
        if (aos_fa__post_check(c, st) != 0) {
          aos_fa__remove_temp(c->dir, c->target, c->ours);
          return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
        }
        return 0;
      }
      if (r != -EEXIST) return aos_fa__rename_failed(c, -r, st);
      /* An entry appeared at the name meanwhile. */
      if (c->opts->if_absent) return aos_fa_fail(st, AOS_FA_ENTRY_EXISTS, EEXIST, c->last);
      r = aos_fa__check_target(c, &checked, st);
      if (r == -ENOENT) continue;
      if (r != 0) return r;
      replacing = true;
      continue;
    }
    /* An ifVersion write holds a lock on the file it replaces through its whole commit
     * (aos_fa__lock_replaced): two of this package's writers of one version never
     * exchange at once, so neither sees the other's entry at the name for the instant
     * before it is exchanged back (a dirty read that once left a temporary file behind
     * and could lose an update). It also watches that file (inotify, Linux) from before
     * a last check of its version until after the exchange: a write or chmod by anyone
     * in between makes it FILE_CHANGED, though the exchange itself resets the ctime. */
    int lk = -1;
    if (c->opts->if_version != NULL) {
      r = aos_fa__lock_replaced(c, &checked, &lk, st);
      if (r != 0) return r;
      if (lk >= 0) {
        /* The guard has no watch instance when the parent is the root itself (nothing
         * of the root can move out of it); the replaced file is watched all the same. */
        if (c->guard->w < 0) c->guard->w = aos_fa_watch_open();
        c->watch = aos_fa_watch_add_file(c->guard->w, lk);
        struct stat held;
        aos_fa_version v;
        if (fstat(lk, &held) == 0) aos_fa_posix_version(&held, &v);
        if (fstat(lk, &held) != 0 || !aos_fa_version_matches(&v, c->opts->if_version)) {
          aos_fa_watch_remove(c->guard->w, c->watch);
          c->watch = -1;
          close(lk);
          return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
        }
        checked = held;
      }
    }
    r = aos_fa__commit_over(c, &checked, lk >= 0 || c->opts->if_version != NULL, st);
    aos_fa_watch_remove(c->guard->w, c->watch);
    c->watch = -1;
    if (lk >= 0) close(lk);
    if (r != 1) return r;
    replacing = false; /* the target went away meanwhile: commit as a new file */
  }
  return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
}

int aos_fa_write(const aos_fa_root *root, const char *const *segs, size_t count,
                 const uint8_t *data, size_t len, const aos_fa_write_opts *opts,
                 aos_fa_status *st) {
  bool create_parents = opts->create_parents;
  /* No segments names the root itself: a directory, never replaced. */
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, -1); /* the root itself */
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  if (opts->mode > 0777 || (opts->if_absent && opts->if_version != NULL) ||
      (opts->if_version != NULL &&
       !aos_fa_version_string_valid(opts->if_version, strnlen(opts->if_version, AOS_FA_VERSION_CHARS + 1)))) {
    return aos_fa_fail(st, AOS_FA_INVALID_PATH, 0, -1);
  }
  if (len > 0 && data == NULL) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  if (opts->utf8 && !aos_fa_utf8_valid(data, len)) return aos_fa_fail(st, AOS_FA_INVALID_CONTENT, 0, -1);
  int last = (int)count - 1;
  const char *target = segs[last];

  int dir = root->fd;
  if (count > 1) {
    unsigned flags = AOS_FA_WALK_SYNC | (create_parents ? AOS_FA_WALK_CREATE : 0u);
    r = aos_fa_walk(root, segs, count - 1, flags, &dir, st);
    /* A missing parent is a host failure for a write, not an absent result. */
    if (r != 0 && st->kind == AOS_FA_NOT_FOUND) st->kind = AOS_FA_HOST_IO;
    if (r != 0) return r;
  } else {
    r = aos_fa_root_check(root->fd, st);
    if (r != 0) return r;
  }

  int staged_fd = -1;
  aos_fa__commit_ctx c = {root, dir, NULL, target, last, opts, NULL, NULL, -1, NULL, segs, count};
  /* The existing target: a regular file (its permission bits are kept), or none;
   * checked now so that a refused write writes nothing, and again at the commit. */
  struct stat existing;
  r = aos_fa__check_target(&c, &existing, st);
  bool replacing = r == 0;
  if (r == -ENOENT && opts->if_version != NULL) r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  if (r != 0 && r != -ENOENT) goto out;


  /* Final permission bits: never a set-id or sticky bit. */
  mode_t final_mode = replacing ? (existing.st_mode & 0777) : ((mode_t)opts->mode & 0777 & ~aos_fa__umask());
  aos_fa__staged staged;
  /* The portable mode (no Linux-only features) stages under a name from the start. */
  bool unnamed = root->resolver != AOS_FA_RESOLVE_PORTABLE;
  r = aos_fa__stage(dir, data, len, final_mode, unnamed, opts->durable, &staged);
  if (r == AOS_FA__STAGE_NAMED) r = aos_fa__stage(dir, data, len, final_mode, false, opts->durable, &staged);
  if (r != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
    goto out;
  }
  staged_fd = staged.fd;
  const struct stat ours = staged.id;
  c.tmp = staged.name;
  c.ours = &ours;
  c.staged = &staged;

  aos_fa_guard guard;
  aos_fa_guard_begin(&guard, root, dir, -1);
  c.guard = &guard;
  r = aos_fa__commit(&c, replacing ? &existing : NULL, st);
  aos_fa_guard_end(&guard);
  if (r != 0) goto fail_temp;
  r = opts->durable ? aos_fa__fsync(dir, true) : 0;
  if (r != 0) {
    r = aos_fa_fail(st, AOS_FA_HOST_IO, -r, last);
    goto out;
  }
  /* The committed name must still be the file just written. A conditional write is
   * decided at its commit (the exchange checked the entry it replaced; the exclusive
   * rename or link replaced none): a writer who replaced it since committed after it,
   * and reporting FILE_CHANGED here would make the caller retry a write that took
   * effect (an ifVersion loop would count twice). */
  bool decided = opts->if_version != NULL || opts->if_absent;
  struct stat committed;
  if (!decided && (fstatat(dir, target, &committed, AT_SYMLINK_NOFOLLOW) != 0 ||
                   committed.st_dev != ours.st_dev || committed.st_ino != ours.st_ino)) {
    r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    goto out;
  }
  aos_fa_status_ok(st);
  r = 0;
  goto out;

fail_temp:
  aos_fa__remove_temp(dir, staged.name, &ours);
out:
  if (staged_fd >= 0) close(staged_fd);
  if (dir != root->fd) close(dir);
  return r;
}
