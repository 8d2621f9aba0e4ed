/* file-authority: confinement under moves (POSIX). Whether a descriptor an operation
 * acts through is still beneath the retained root.
 *
 * Resolution (posix_walk.c) opens every directory beneath the root, but a directory
 * the operation then holds can be renamed out of the root by anyone who may write its
 * parent and a directory outside; the descriptor follows it. Every operation therefore
 * asks here, at the moments posix_*.c say, whether the descriptor it acts through is
 * beneath the root at that instant.
 *
 * Linux: readlink of /proc/self/fd/<n> returns the descriptor's path as the kernel
 * computes it (d_path, under the rename seqlock: the whole chain of names at one
 * instant, in one system call). The root's own path is read the same way before and
 * after it; the descriptor is beneath the root when the root's path, unchanged across
 * the check, is a whole-component prefix of its path. A snapshot that does not show it
 * beneath is taken again (the root itself may have been renamed during it: renaming the
 * root's pathname changes nothing for an authority), a bounded number of times; then
 * the ".." walk below decides, by identity. What
 * this cannot see: a process that may rename the root itself (or one of its ancestors)
 * and does so twice within the check, renaming it away and back, while the descriptor
 * sits in a directory outside that took the root's old path meanwhile (docs/security.md).
 * A path longer than the buffer, or no /proc: the portable check below.
 *
 * macOS: fcntl(F_GETPATH), the same prefix test (the name cache's path of the vnode).
 *
 * Elsewhere (and as the fallback): the ".." chain of the directory is followed up
 * (openat(".."), fstat) until the root's identity (device, inode) is met (beneath) or
 * the filesystem's top is (not beneath). Several calls, not one snapshot: a directory
 * moved out and back while the chain is walked can pass (docs/security.md).
 *
 * A file (aos_fa_beneath_file): Linux and macOS read the path of the file's own
 * descriptor (the name it was opened by, wherever that now is); the fallback checks
 * its directory as above and that the name still names the file. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __APPLE__
#include <sys/param.h>
#endif
#include <stdint.h>
#include <unistd.h>

#ifdef O_PATH
#define AOS_FA__O_UP (O_PATH | O_DIRECTORY | O_CLOEXEC)
#elif defined(O_SEARCH)
#define AOS_FA__O_UP (O_SEARCH | O_DIRECTORY | O_CLOEXEC)
#else
#define AOS_FA__O_UP (O_RDONLY | O_DIRECTORY | O_CLOEXEC)
#endif

/* Directories the ".." walk climbs at most (a path of 4096 single-byte components). */
#define AOS_FA__UP_MAX 2048
/* Path snapshots taken before the ".." walk decides (posix_beneath.c). */
#define AOS_FA__ROOT_TRIES 4
/* The longest path read from the host: d_path fills one page on Linux; macOS MAXPATHLEN. */
#define AOS_FA__PATH_MAX 4096

#if defined(__linux__) || (defined(__APPLE__) && defined(F_GETPATH))
#define AOS_FA__HAVE_FD_PATH 1
/* The path of descriptor fd into buf (NUL-terminated): its length, or -errno (-ENOENT
 * without /proc, -ENAMETOOLONG when it does not fit). */
static ssize_t aos_fa__fd_path(int fd, char *buf, size_t cap) {
#ifdef __linux__
  char proc[40];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  ssize_t n;
  do {
    n = readlink(proc, buf, cap);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  if ((size_t)n >= cap) return -ENAMETOOLONG;
  buf[n] = '\0';
  if (n == 0 || buf[0] != '/') return -ENOENT; /* not a path (an anonymous inode) */
  return n;
#else
  if (cap < MAXPATHLEN) return -ENAMETOOLONG;
  int r;
  do {
    r = fcntl(fd, F_GETPATH, buf);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return -errno;
  size_t n = strnlen(buf, cap);
  if (n == 0 || n >= cap || buf[0] != '/') return -ENOENT;
  return (ssize_t)n;
#endif
}

/* True when `p` is the root path `root` or lies beneath it by whole components. */
static bool aos_fa__under(const char *root, size_t rlen, const char *p, size_t plen) {
  if (rlen == 1 && root[0] == '/') return true; /* the root is "/": every path */
  if (plen < rlen || memcmp(p, root, rlen) != 0) return false;
  return plen == rlen || p[rlen] == '/';
}

/* 1 beneath; -EAGAIN when no snapshot showed it beneath (the caller decides by the ".."
 * walk, by identity); -errno when the paths cannot be read (the same fallback). A
 * snapshot counts only when the root's path is the same just before and just after the
 * target's; any snapshot that shows the target beneath proves it was at that instant.
 * One that does not may have been taken while the root itself was being renamed (its
 * pathname may change at any time, even away and back between the two looks at it), so
 * a "not beneath" is never concluded from paths: it is taken again, and after
 * AOS_FA__ROOT_TRIES such snapshots the ".." walk decides. */
static int aos_fa__beneath_by_path(int rootfd, int fd) {
  char before[AOS_FA__PATH_MAX], target[AOS_FA__PATH_MAX], after[AOS_FA__PATH_MAX];
  ssize_t rb = aos_fa__fd_path(rootfd, before, sizeof before);
  if (rb < 0) return (int)rb;
  for (int tries = 0; tries < AOS_FA__ROOT_TRIES; tries++) {
    ssize_t t = aos_fa__fd_path(fd, target, sizeof target);
    if (t < 0) return (int)t;
    ssize_t ra = aos_fa__fd_path(rootfd, after, sizeof after);
    if (ra < 0) return (int)ra;
    if (ra == rb && memcmp(before, after, (size_t)rb) == 0 &&
        aos_fa__under(before, (size_t)rb, target, (size_t)t)) {
      return 1;
    }
    memcpy(before, after, (size_t)ra + 1);
    rb = ra;
  }
  return -EAGAIN;
}
#endif

/* The ".." walk: 1 beneath, 0 not, -errno. */
static int aos_fa__beneath_by_dotdot(int rootfd, int dir) {
  struct stat rs, cs, ps;
  if (fstat(rootfd, &rs) != 0) return -errno;
  int cur;
  do {
    cur = openat(dir, ".", AOS_FA__O_UP);
  } while (cur < 0 && errno == EINTR);
  if (cur < 0) return -errno;
  int r = 0;
  for (int up = 0; up < AOS_FA__UP_MAX; up++) {
    if (fstat(cur, &cs) != 0) {
      r = -errno;
      break;
    }
    if (cs.st_dev == rs.st_dev && cs.st_ino == rs.st_ino) {
      r = 1;
      break;
    }
    int parent;
    do {
      parent = openat(cur, "..", AOS_FA__O_UP);
    } while (parent < 0 && errno == EINTR);
    if (parent < 0) {
      r = -errno;
      break;
    }
    if (fstat(parent, &ps) != 0) {
      r = -errno;
      close(parent);
      break;
    }
    close(cur);
    cur = parent;
    if (ps.st_dev == cs.st_dev && ps.st_ino == cs.st_ino) break; /* the top: not beneath */
  }
  close(cur);
  return r;
}

/* The answer as a status: 1 → 0, 0 → FILE_CHANGED, -errno → HOST_IO. */
static int aos_fa__beneath_status(int r, aos_fa_status *st) {
  if (r == 1) {
    aos_fa_status_ok(st);
    return 0;
  }
  if (r == 0) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  return aos_fa_fail(st, AOS_FA_HOST_IO, -r, -1);
}

int aos_fa_beneath_dir(const aos_fa_root *root, int dir, aos_fa_status *st) {
  if (dir == root->fd) {
    aos_fa_status_ok(st);
    return 0;
  }
  int r = -ENOENT;
#ifdef AOS_FA__HAVE_FD_PATH
  r = aos_fa__beneath_by_path(root->fd, dir);
#endif
  if (r < 0) r = aos_fa__beneath_by_dotdot(root->fd, dir);
  return aos_fa__beneath_status(r, st);
}

int aos_fa_beneath_dir_at(const aos_fa_root *root, int dir, const char *const *segs, size_t count,
                          aos_fa_status *st) {
  if (dir == root->fd) {
    aos_fa_status_ok(st);
    return 0;
  }
#ifdef O_PATH
  /* The openat2 resolver: the directory's own path resolved again beneath the root (the
   * kernel checks the result beneath the root under its rename lock) names this very
   * directory (a directory has one name: same device and inode), so it is beneath the
   * root at that instant. One openat2 and two statx (no timestamps read: they would make
   * the next change in the directory stamp a fine time) where the path snapshots take
   * three readlink of /proc. Anything else (the directory renamed within the root, a
   * failure): the snapshots decide, as without a path. */
  char path[4096];
  if (root->resolver == AOS_FA_RESOLVE_OPENAT2 && count > 0 &&
      aos_fa_posix_join(segs, count, path, sizeof path) == 0) {
    int fd = aos_fa_posix_openat2(root->fd, path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      struct stat a, b;
      bool same = aos_fa_posix_look_kind(fd, NULL, &a) == 0 &&
                  aos_fa_posix_look_kind(dir, NULL, &b) == 0 && a.st_dev == b.st_dev &&
                  a.st_ino == b.st_ino;
      close(fd);
      if (same) {
        aos_fa_status_ok(st);
        return 0;
      }
    }
  }
#else
  (void)segs, (void)count;
#endif
  return aos_fa_beneath_dir(root, dir, st);
}

int aos_fa_beneath_file(const aos_fa_root *root, int dir, const char *name, int fd,
                        aos_fa_status *st) {
  int r = -ENOENT;
#ifdef AOS_FA__HAVE_FD_PATH
  r = aos_fa__beneath_by_path(root->fd, fd);
#endif
  if (r >= 0) return aos_fa__beneath_status(r, st);
  /* The fallback: the directory is beneath the root, and the name in it still names
   * the file (two looks, each at its own instant). */
  if (dir < 0) return aos_fa_fail(st, AOS_FA_HOST_IO, -r, -1);
  r = dir == root->fd ? 1 : aos_fa__beneath_by_dotdot(root->fd, dir);
  if (r == 1) {
    struct stat a, b;
    if (fstat(fd, &a) != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, errno, -1);
    if (fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return aos_fa_fail(st, AOS_FA_HOST_IO, errno, -1);
      r = 0;
    } else if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
      r = 0;
    }
  }
  return aos_fa__beneath_status(r, st);
}

/* ---- moves of one directory during a call (Linux: inotify IN_MOVE_SELF).
 *
 * The path checks above see where a directory is at two instants; a directory moved out
 * of the root and back between them passes both (measured: test/stress/
 * fa-move-window.stress.js). A watch set on the directory before the first check and
 * read after the last one sees every move of it in between: the kernel queues the event
 * of a rename before that rename returns, so a move out is queued before the move back
 * can begin. It sees moves of that directory only, not of one above it (the stated
 * residual, docs/security.md). Where no watch can be set (no inotify or /proc, no read
 * permission on the directory, the per-user limit of instances or watches reached) the
 * check is the path checks alone. */
#ifdef __linux__
#include <pthread.h>
#include <stdlib.h>
#include <sys/inotify.h>

/* One inotify instance per thread, made on first use and closed when the thread ends:
 * closing an instance that had watches waits for an RCU grace period (about 2.6 ms
 * measured here), while adding and removing a watch costs about 7 us. Calls on one
 * thread run one at a time, so the instance's events are this call's (and leftovers of
 * earlier calls, drained at the start of each guard). */
static pthread_key_t aos_fa__watch_key;
static pthread_once_t aos_fa__watch_once = PTHREAD_ONCE_INIT;
static bool aos_fa__watch_key_ok;

/* A thread's instance and what the events read on it so far said and nobody asked yet
 * (a directory moved, a file written or its metadata changed). Kept with the thread's
 * key, not in a thread-local variable: the binding is loaded with dlopen and its
 * prebuilds carry no TLS segment (test/packaging/prebuilds.spec.js). */
typedef struct {
  int fd;
  unsigned seen;
} aos_fa__watch_state;
#define AOS_FA__SEEN_MOVED 1u
#define AOS_FA__SEEN_CHANGED 2u

static void aos_fa__watch_release(void *v) {
  aos_fa__watch_state *ws = v;
  if (ws == NULL) return;
  close(ws->fd);
  free(ws);
}

static void aos_fa__watch_key_init(void) {
  aos_fa__watch_key_ok = pthread_key_create(&aos_fa__watch_key, aos_fa__watch_release) == 0;
}

/* This thread's state, when its instance is `w` (NULL otherwise). */
static aos_fa__watch_state *aos_fa__watch_state_of(int w) {
  if (!aos_fa__watch_key_ok || w < 0) return NULL;
  aos_fa__watch_state *ws = pthread_getspecific(aos_fa__watch_key);
  return ws != NULL && ws->fd == w ? ws : NULL;
}

/* Reads and drops every queued event, noting what they say (events lost count as
 * both). */
static void aos_fa__watch_drain(int w) {
  aos_fa__watch_state *ws = aos_fa__watch_state_of(w);
  char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
  for (;;) {
    ssize_t n;
    do {
      n = read(w, buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) break;
    for (char *p = buf; p < buf + n;) {
      const struct inotify_event *ev = (const struct inotify_event *)p;
      p += sizeof *ev + ev->len;
      if (ws == NULL) continue;
      if (ev->mask & (IN_MOVE_SELF | IN_Q_OVERFLOW)) ws->seen |= AOS_FA__SEEN_MOVED;
      if (ev->mask & (IN_MODIFY | IN_ATTRIB | IN_Q_OVERFLOW)) ws->seen |= AOS_FA__SEEN_CHANGED;
    }
  }
}

int aos_fa_watch_open(void) {
  pthread_once(&aos_fa__watch_once, aos_fa__watch_key_init);
  if (!aos_fa__watch_key_ok) return -1;
  aos_fa__watch_state *ws = pthread_getspecific(aos_fa__watch_key);
  if (ws != NULL) {
    aos_fa__watch_drain(ws->fd); /* earlier calls' leftovers */
    ws->seen = 0;
    return ws->fd;
  }
  ws = malloc(sizeof *ws);
  if (ws == NULL) return -1;
  ws->seen = 0;
  ws->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (ws->fd < 0 || pthread_setspecific(aos_fa__watch_key, ws) != 0) {
    if (ws->fd >= 0) close(ws->fd);
    free(ws);
    return -1;
  }
  return ws->fd;
}

int aos_fa_watch_add(int w, int dir) {
  if (w < 0) return -1;
  char proc[40];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", dir);
  int wd = inotify_add_watch(w, proc, IN_MOVE_SELF);
  return wd < 0 ? -1 : wd;
}

bool aos_fa_watch_moved(int w) {
  if (w < 0) return false;
  aos_fa__watch_drain(w);
  aos_fa__watch_state *ws = aos_fa__watch_state_of(w);
  /* Without this thread's state the events could not be told: count as moved. */
  if (ws == NULL) return true;
  bool moved = (ws->seen & AOS_FA__SEEN_MOVED) != 0;
  ws->seen &= ~AOS_FA__SEEN_MOVED;
  return moved;
}

int aos_fa_watch_add_file(int w, int fd) {
  if (w < 0) return -1;
  char proc[40];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  int wd = inotify_add_watch(w, proc, IN_MODIFY | IN_ATTRIB);
  return wd < 0 ? -1 : wd;
}

bool aos_fa_watch_changed(int w) {
  if (w < 0) return false;
  aos_fa__watch_drain(w);
  aos_fa__watch_state *ws = aos_fa__watch_state_of(w);
  if (ws == NULL) return true;
  bool changed = (ws->seen & AOS_FA__SEEN_CHANGED) != 0;
  ws->seen &= ~AOS_FA__SEEN_CHANGED;
  return changed;
}

void aos_fa_watch_remove(int w, int wd) {
  if (w >= 0 && wd >= 0) (void)inotify_rm_watch(w, wd);
}

void aos_fa_watch_close(int w) {
  (void)w; /* the thread's instance stays for its next call */
}
#else
int aos_fa_watch_open(void) {
  return -1;
}
int aos_fa_watch_add(int w, int dir) {
  (void)w, (void)dir;
  return -1;
}
bool aos_fa_watch_moved(int w) {
  (void)w;
  return false;
}
int aos_fa_watch_add_file(int w, int fd) {
  (void)w, (void)fd;
  return -1;
}
bool aos_fa_watch_changed(int w) {
  (void)w;
  return false;
}
void aos_fa_watch_remove(int w, int wd) {
  (void)w, (void)wd;
}
void aos_fa_watch_close(int w) {
  (void)w;
}
#endif

int aos_fa_guard_begin(aos_fa_guard *g, const aos_fa_root *root, int dir_a, int dir_b) {
  /* The root itself is never watched: its pathname may be renamed at any time without
   * changing anything for the authority, and nothing of it is ever outside itself. */
  if (dir_a == root->fd) dir_a = -1;
  if (dir_b == root->fd || dir_b == dir_a) dir_b = -1;
  g->w = dir_a >= 0 || dir_b >= 0 ? aos_fa_watch_open() : -1;
  g->wd_a = dir_a >= 0 ? aos_fa_watch_add(g->w, dir_a) : -1;
  g->wd_b = dir_b >= 0 ? aos_fa_watch_add(g->w, dir_b) : -1;
  return 0;
}

bool aos_fa_guard_moved(aos_fa_guard *g) {
  return aos_fa_watch_moved(g->w);
}

void aos_fa_guard_end(aos_fa_guard *g) {
  aos_fa_watch_remove(g->w, g->wd_a);
  aos_fa_watch_remove(g->w, g->wd_b);
  aos_fa_watch_close(g->w);
  g->w = -1;
  g->wd_a = g->wd_b = -1;
}
