/* file-authority: the descriptors a ReadAuthority keeps of files it has read (POSIX).
 *
 * A read opens the file, checks its descriptor, reads and checks again: six calls where
 * fs.openSync + readSync + closeSync make three. Reading the same unchanged file again
 * (an agent paging through one log with readRange, re-reading a file it watches) need
 * not open it again: after a read that succeeded, the descriptor is kept here under the
 * path it was read by, with the identity (device, inode) and status-change time the look
 * before its open saw. The next read of that path still looks at the name first (with
 * the openat2 resolver an O_PATH openat2 of the whole path beneath the root and an fstat
 * of it; with the portable one fstatat in the parent resolved for this call, without
 * following it), and takes the kept descriptor only when the look finds that same inode
 * with that same ctime:
 *
 * - the same inode: the name resolves now, through this call's own resolution, to the
 *   file the descriptor reads (an open descriptor pins its inode, whose number cannot
 *   be reused while it is held); a name swapped for a link, FIFO or another file is a
 *   miss, handled as a first read is. The openat2 look also puts the file beneath the
 *   root at that instant (posix_read.c);
 * - the same ctime: nothing that decides whether an open would be allowed (mode, owner,
 *   ACL or security label) and nothing of its content (every write sets the ctime,
 *   before its first byte) has changed since the descriptor was opened; the parent's
 *   search permission is checked by the look itself. Timestamps come from a coarse
 *   clock (a tick; a second on some filesystems), so a change just after the open could
 *   carry the same ctime as one just before it: only files whose ctime is over a second
 *   older than the open are kept, and every later change then carries a later ctime;
 *   or, where stamps are multigrain (every change after a stat carries a later ctime
 *   than the stat saw: posix_mgtime.c), any file read consistently (posix_read.c).
 *
 * Then the read is that of a first read from the look on: the consistency check compares
 * the look with an fstat after the read (identity, size, mtime, ctime). A hit makes
 * five calls (openat2, fstat, close, preadv, fstat) where a first read makes eight.
 *
 * Bounds: AOS_FA_FDCACHE_SLOTS descriptors per authority (the least recently used is
 * closed), AOS_FA_FDCACHE_PROCESS_MAX in the whole process, paths up to
 * AOS_FA_FDCACHE_KEY_MAX bytes. A kept descriptor is closed when the authority is
 * closed or collected, when its path is read again and names another file or nothing,
 * or when it is evicted. Until then it holds the inode open, as any open descriptor
 * does: the space of a file removed by another process after it was read is released
 * then (docs/file-authority.md). Descriptors are O_CLOEXEC, taken out of the cache while
 * a read uses them (two threads never share one), and never used for anything but
 * positional reads and fstat, so no file offset carries from one read to the next.
 *
 * Not on Windows (win32.c): a read there holds its handle denying write sharing, which
 * a kept handle would impose on every writer. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  int fd; /* -1: an empty slot */
  dev_t dev;
  ino_t ino;
  time_t ctime;
  long ctime_ns;
  uint64_t used; /* the cache's clock at its last keep */
  char key[AOS_FA_FDCACHE_KEY_MAX];
} aos_fa__kept;

struct aos_fa_fdcache {
  pthread_mutex_t mu;
  uint64_t clock;
  aos_fa__kept slot[AOS_FA_FDCACHE_SLOTS];
};

/* Descriptors kept in every cache of the process (not those taken out by a read). */
static atomic_int aos_fa__fdcache_total;

aos_fa_fdcache *aos_fa_fdcache_new(void) {
  aos_fa_fdcache *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  if (pthread_mutex_init(&c->mu, NULL) != 0) {
    free(c);
    return NULL;
  }
  for (int i = 0; i < AOS_FA_FDCACHE_SLOTS; i++) c->slot[i].fd = -1;
  return c;
}

void aos_fa_fdcache_free(aos_fa_fdcache *c) {
  if (c == NULL) return;
  for (int i = 0; i < AOS_FA_FDCACHE_SLOTS; i++) {
    if (c->slot[i].fd >= 0) {
      close(c->slot[i].fd);
      atomic_fetch_sub(&aos_fa__fdcache_total, 1);
    }
  }
  pthread_mutex_destroy(&c->mu);
  free(c);
}

/* Empties slot `s` (the caller holds the lock): its descriptor, now the caller's. */
static int aos_fa__fdcache_vacate(aos_fa__kept *s) {
  int fd = s->fd;
  s->fd = -1;
  s->key[0] = '\0';
  atomic_fetch_sub(&aos_fa__fdcache_total, 1);
  return fd;
}

int aos_fa_fdcache_take(aos_fa_fdcache *c, const char *key, const struct stat *look) {
  if (c == NULL) return -1;
  int fd = -1;
  bool same = false;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < AOS_FA_FDCACHE_SLOTS; i++) {
    aos_fa__kept *s = &c->slot[i];
    if (s->fd < 0 || strcmp(s->key, key) != 0) continue;
    same = look != NULL && S_ISREG(look->st_mode) && s->dev == look->st_dev &&
           s->ino == look->st_ino && s->ctime == look->st_ctime &&
           s->ctime_ns == AOS_FA_CTIME_NS(*look);
    fd = aos_fa__fdcache_vacate(s);
    break;
  }
  pthread_mutex_unlock(&c->mu);
  if (fd >= 0 && !same) {
    close(fd); /* the path names another file, or nothing, or the file changed */
    fd = -1;
  }
  return fd;
}

void aos_fa_fdcache_keep(aos_fa_fdcache *c, const char *key, int fd, const struct stat *look) {
  if (c == NULL) {
    close(fd);
    return;
  }
  int drop = -1;
  pthread_mutex_lock(&c->mu);
  aos_fa__kept *s = NULL;
  for (int i = 0; i < AOS_FA_FDCACHE_SLOTS && s == NULL; i++) {
    /* Another read of this path kept one meanwhile: this one replaces it. */
    if (c->slot[i].fd >= 0 && strcmp(c->slot[i].key, key) == 0) s = &c->slot[i];
  }
  for (int i = 0; i < AOS_FA_FDCACHE_SLOTS && s == NULL; i++) {
    if (c->slot[i].fd < 0) s = &c->slot[i];
  }
  if (s == NULL) { /* full: the least recently kept gives way */
    s = &c->slot[0];
    for (int i = 1; i < AOS_FA_FDCACHE_SLOTS; i++) {
      if (c->slot[i].used < s->used) s = &c->slot[i];
    }
  }
  if (s->fd >= 0) drop = aos_fa__fdcache_vacate(s);
  if (atomic_fetch_add(&aos_fa__fdcache_total, 1) >= AOS_FA_FDCACHE_PROCESS_MAX) {
    atomic_fetch_sub(&aos_fa__fdcache_total, 1);
    pthread_mutex_unlock(&c->mu);
    if (drop >= 0) close(drop);
    close(fd); /* the process keeps enough already */
    return;
  }
  s->fd = fd;
  s->dev = look->st_dev;
  s->ino = look->st_ino;
  s->ctime = look->st_ctime;
  s->ctime_ns = AOS_FA_CTIME_NS(*look);
  s->used = ++c->clock;
  size_t n = strlen(key);
  memcpy(s->key, key, n + 1); /* the caller checked n < AOS_FA_FDCACHE_KEY_MAX */
  pthread_mutex_unlock(&c->mu);
  if (drop >= 0) close(drop);
}

int aos_fa_fdcache_count(aos_fa_fdcache *c) {
  if (c == NULL) return 0;
  int n = 0;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < AOS_FA_FDCACHE_SLOTS; i++) n += c->slot[i].fd >= 0;
  pthread_mutex_unlock(&c->mu);
  return n;
}
