/* file-authority: bounded, consistent reads of one regular file (POSIX).
 *
 * Opening. With the openat2 resolver the file is opened by its whole path in one
 * openat2 from the root (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS):
 * first O_PATH, a look that opens nothing (an fstat of that descriptor: a FIFO, socket
 * or device is refused without being opened), then O_RDONLY | O_NOFOLLOW | O_NONBLOCK
 * | O_NOCTTY: an entry swapped in between is opened without blocking, found not regular
 * by the fstat that follows, and closed unread. The kernel checks the result of a
 * RESOLVE_BENEATH lookup against the root under its rename lock, so the file is
 * beneath the root at the instant of the open, and no directory on the way is held
 * that a rename could take out of the root: the read is confined by the open, and the
 * fstat after the read (same version as at the open) says the bytes are what the file
 * held then. The sequence (a file at rest, first read): openat2 O_PATH, fstat, openat2,
 * close of the O_PATH descriptor, fstat, one preadv into the caller's buffer plus a
 * probe byte past its end (growth), fstat, close. Any failure of the two openat2 calls
 * goes to the component walk, which reports the segment and the kind. The portable
 * resolver (and a path too long to join) resolves the parent (aos_fa_walk), looks at
 * the name with fstatat without following it, opens it with openat, and after the read
 * checks that the file is still beneath the root (posix_beneath.c: a directory on the
 * way moved out makes the read FILE_CHANGED).
 *
 * Kept descriptors. A ReadAuthority keeps the descriptor after a consistent read, and
 * a later read of the same path whose look finds that same file unchanged (identity
 * and ctime) reads through it: openat2 O_PATH, fstat, close, preadv, fstat
 * (posix_fdcache.c says why that is the same read; the look's instant confines it).
 *
 * Consistency. A read is returned only if the file's identity, size, modification time
 * and status-change time are the same before and after it. The ctime is what a writer
 * cannot set back (utimensat, touch -r, rsync -t restore the mtime and move the ctime).
 * That alone misses one case: the kernel sets both times when a write *starts*, so an
 * in-place write already under way at the open changes bytes under the read while the
 * times stay put. A file whose modification or status-change time is recent (within
 * AOS_FA__RACY_NS of the open, or in the future) is therefore "racy", as git calls an
 * index entry it cannot trust by time alone, and is read one of two ways:
 *  - under a read lease (aos_fa__lease, Linux): granted only while no descriptor of any
 *    process has the file open for writing, and holding back every open for writing and
 *    truncate until the descriptor is closed: no write is under way, none starts, and
 *    one read is consistent. Refused for a file of another owner (without CAP_LEASE),
 *    one open for writing, a filesystem without leases: then
 *  - twice, and the two reads must agree byte for byte, with the same metadata; reads
 *    that differ are retried a bounded number of times, then reported as FILE_CHANGED.
 *    A write still copying across both reads (its writer merely preempted, or stalled)
 *    leaves the same torn bytes for both; so on Linux a racy read waits between its two
 *    reads, for at most AOS_FA__BARRIER_NS, for the inode lock that ext4, tmpfs and
 *    btrfs writers hold from before they set the times until their last byte is copied
 *    (lseek(SEEK_DATA) takes it). That lseek cannot be interrupted, so it runs on a
 *    helper thread (on a dup of the descriptor; at most AOS_FA__BARRIER_THREADS at once,
 *    kept for AOS_FA__BARRIER_IDLE_NS after their last wait, so a burst of such reads
 *    does not start a thread each): a writer that does not finish within the bound makes
 *    the read FILE_CHANGED, and only the helper, never the caller's thread, waits for
 *    that writer (docs/file-authority.md states what remains). The bound counts only
 *    while the helper sleeps in its lseek (state and system call in /proc); a helper that
 *    a loaded machine has not yet given a CPU extends it, up to AOS_FA__BARRIER_CAP_NS in
 *    all, so a file written a moment ago and long finished is not FILE_CHANGED under load.
 * A racy file read consistently is kept too where every change after a stat carries a
 * later ctime (multigrain stamps, aos_fa__keepable); files not written recently cost
 * one read and no wait. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/vfs.h>
#endif

#if defined(__linux__) && defined(SEEK_DATA)
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#define AOS_FA__HAVE_BARRIER 1
#endif

#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif

/* A write that began up to this long before the open may still be copying bytes; and
 * a change this close to the open may share its ctime with a later one (timestamps
 * are taken from a clock that ticks coarsely, a second on some filesystems), so a
 * descriptor is kept only of a file not changed for this long. (The C core's own
 * tests build with a shorter one.) */
#ifndef AOS_FA__RACY_NS
#define AOS_FA__RACY_NS (1000LL * 1000 * 1000)
#endif
/* Consecutive re-reads that may disagree before the read is FILE_CHANGED. */
#define AOS_FA__RACY_RETRIES 4
#define AOS_FA__READ_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
/* The longest joined path the openat2 open takes (longer: the component walk). */
#define AOS_FA__PATH_BUF 4096

static int64_t aos_fa__ns(time_t sec, long nsec) {
  return (int64_t)sec * 1000000000LL + nsec;
}

/* Identity, size, modification time and status-change time (ns). */
static bool aos_fa__same_version(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtime == b->st_mtime && AOS_FA_MTIME_NS(*a) == AOS_FA_MTIME_NS(*b) &&
         a->st_ctime == b->st_ctime && AOS_FA_CTIME_NS(*a) == AOS_FA_CTIME_NS(*b);
}

static int64_t aos_fa__now_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return INT64_MAX; /* unknown: racy */
  return aos_fa__ns(ts.tv_sec, ts.tv_nsec);
}

/* True when `sb`'s modification or status-change time is not clearly older than
 * `open_ns`. */
static bool aos_fa__racy(const struct stat *sb, int64_t open_ns) {
  int64_t mtime_ns = aos_fa__ns(sb->st_mtime, AOS_FA_MTIME_NS(*sb));
  int64_t ctime_ns = aos_fa__ns(sb->st_ctime, AOS_FA_CTIME_NS(*sb));
  int64_t latest = mtime_ns > ctime_ns ? mtime_ns : ctime_ns;
  /* A stamp stands for any instant of the tick it truncates: a write that began at
   * S.999 on a filesystem of one-second stamps shows S. The window therefore spans the
   * timestamps' granularity too (one second and more on ext2, FAT, HFS+). */
  return open_ns == INT64_MAX || latest + aos_fa_posix_stamp_gran(sb) > open_ns - AOS_FA__RACY_NS;
}

#ifdef AOS_FA__HAVE_BARRIER
/* How long a racy read waits for a write under way to finish copying. */
#define AOS_FA__BARRIER_NS (100LL * 1000 * 1000)
/* How long in all it waits while the helper thread is not blocked on the inode lock but
 * merely not given a CPU yet (a loaded machine): past this it is FILE_CHANGED too. */
#define AOS_FA__BARRIER_CAP_NS (5000LL * 1000 * 1000)
/* Helper threads that may wait at once (each holds a dup of a descriptor). */
#define AOS_FA__BARRIER_THREADS 8

typedef struct {
  int fd;         /* the helper's own descriptor (a dup), closed by the helper */
  bool done;      /* the lseek returned */
  pid_t tid;      /* the helper's thread id, set just before its lseek (0: not run yet) */
  int refs;       /* the helper plus each reader waiting; the last one frees the job */
  pthread_cond_t cv;
  int slot;       /* its place in aos_fa__barrier_files */
} aos_fa__barrier_job;

/* Guards every field of the jobs and of aos_fa__barrier_files. */
static pthread_mutex_t aos_fa__barrier_mu = PTHREAD_MUTEX_INITIALIZER;
/* The file each running helper waits on (job NULL: a free slot). Readers of a file that
 * already has a helper wait on that helper's job instead of starting another. */
static struct {
  aos_fa__barrier_job *job;
  dev_t dev;
  ino_t ino;
} aos_fa__barrier_files[AOS_FA__BARRIER_THREADS];

/* Drops one reference (the mutex held); frees the job with the last. */
static void aos_fa__barrier_unref(aos_fa__barrier_job *job) {
  if (--job->refs > 0) return;
  pthread_cond_destroy(&job->cv);
  free(job);
}

/* How long a helper thread with nothing to do waits for the next barrier before it
 * ends: a burst of reads of files written lately starts at most
 * AOS_FA__BARRIER_THREADS threads, not one per read. */
#define AOS_FA__BARRIER_IDLE_NS (2000LL * 1000 * 1000)

/* A helper thread: waits on `wake` for a job while idle (on the idle list). */
typedef struct aos_fa__barrier_worker {
  pthread_cond_t wake;
  aos_fa__barrier_job *job;             /* the job handed to it, or NULL */
  struct aos_fa__barrier_worker *next;  /* the next idle worker */
} aos_fa__barrier_worker;
static aos_fa__barrier_worker *aos_fa__barrier_idle; /* guarded by aos_fa__barrier_mu */

/* Removes w from the idle list (the mutex held). */
static void aos_fa__barrier_unidle(aos_fa__barrier_worker *w) {
  for (aos_fa__barrier_worker **p = &aos_fa__barrier_idle; *p != NULL; p = &(*p)->next) {
    if (*p == w) {
      *p = w->next;
      return;
    }
  }
}

static void *aos_fa__barrier_main(void *arg) {
  aos_fa__barrier_worker *w = arg;
  pid_t tid = (pid_t)syscall(SYS_gettid);
  pthread_mutex_lock(&aos_fa__barrier_mu);
  for (;;) {
    if (w->job == NULL) {
      struct timespec until;
      clock_gettime(CLOCK_MONOTONIC, &until);
      int64_t end = aos_fa__ns(until.tv_sec, until.tv_nsec) + AOS_FA__BARRIER_IDLE_NS;
      until.tv_sec = (time_t)(end / 1000000000LL);
      until.tv_nsec = (long)(end % 1000000000LL);
      while (w->job == NULL) {
        if (pthread_cond_timedwait(&w->wake, &aos_fa__barrier_mu, &until) == ETIMEDOUT &&
            w->job == NULL) {
          aos_fa__barrier_unidle(w);
          pthread_mutex_unlock(&aos_fa__barrier_mu);
          pthread_cond_destroy(&w->wake);
          free(w);
          return NULL;
        }
      }
    }
    aos_fa__barrier_job *job = w->job;
    job->tid = tid;
    pthread_mutex_unlock(&aos_fa__barrier_mu);
    (void)lseek(job->fd, 0, SEEK_DATA); /* returns once no write holds the inode lock */
    close(job->fd);
    pthread_mutex_lock(&aos_fa__barrier_mu);
    job->done = true;
    aos_fa__barrier_files[job->slot].job = NULL;
    pthread_cond_broadcast(&job->cv);
    aos_fa__barrier_unref(job);
    w->job = NULL;
    w->next = aos_fa__barrier_idle;
    aos_fa__barrier_idle = w;
  }
}

/* A child of fork has none of its parent's helper threads: it starts with none (their
 * records are dropped, not freed: another thread may have held the mutex at the fork,
 * so it is made anew too). */
static void aos_fa__barrier_after_fork(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  aos_fa__barrier_mu = fresh;
  aos_fa__barrier_idle = NULL;
  for (int i = 0; i < AOS_FA__BARRIER_THREADS; i++) aos_fa__barrier_files[i].job = NULL;
}
static pthread_once_t aos_fa__barrier_once = PTHREAD_ONCE_INIT;
static void aos_fa__barrier_init(void) {
  (void)pthread_atfork(NULL, NULL, aos_fa__barrier_after_fork);
}

/* Hands `job` to an idle helper, or to a new one: false when neither can be had. The
 * mutex held (the helper cannot take the job before the caller has published it). */
static bool aos_fa__barrier_hand(aos_fa__barrier_job *job) {
  aos_fa__barrier_worker *w = aos_fa__barrier_idle;
  if (w != NULL) {
    aos_fa__barrier_idle = w->next;
    w->job = job;
    pthread_cond_signal(&w->wake);
    return true;
  }
  w = calloc(1, sizeof *w);
  if (w == NULL) return false;
  pthread_condattr_t ca;
  bool cv_ok = false;
  if (pthread_condattr_init(&ca) == 0) {
    cv_ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
            pthread_cond_init(&w->wake, &ca) == 0;
    pthread_condattr_destroy(&ca);
  }
  if (!cv_ok) {
    free(w);
    return false;
  }
  w->job = job;
  pthread_t t;
  pthread_attr_t ta;
  bool started = false;
  if (pthread_attr_init(&ta) == 0) {
    started = pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED) == 0 &&
              pthread_attr_setstacksize(&ta, 64 * 1024) == 0 &&
              pthread_create(&t, &ta, aos_fa__barrier_main, w) == 0;
    pthread_attr_destroy(&ta);
  }
  if (!started) {
    pthread_cond_destroy(&w->wake);
    free(w);
  }
  return started;
}

/* A new job for fd handed to a helper thread, or NULL (no memory, descriptor or
 * thread). refs counts the helper and the caller. Called with the mutex held. */
static aos_fa__barrier_job *aos_fa__barrier_start(int fd, int slot) {
  aos_fa__barrier_job *job = calloc(1, sizeof *job);
  if (job == NULL) return NULL;
  job->slot = slot;
  job->refs = 2;
  job->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  pthread_condattr_t ca;
  bool cv_ok = false;
  if (pthread_condattr_init(&ca) == 0) {
    cv_ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
            pthread_cond_init(&job->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
  }
  if (job->fd < 0 || !cv_ok || !aos_fa__barrier_hand(job)) {
    if (job->fd >= 0) close(job->fd);
    if (cv_ok) pthread_cond_destroy(&job->cv);
    free(job);
    return NULL;
  }
  return job;
}

/* Waits, for at most AOS_FA__BARRIER_NS, until no write holds the inode lock of fd
 * (the file `sb` describes). 1: none does (a write begun before has finished
 * copying); 0: one still did at the bound; -1: no helper could be had (all waiting on
 * other files, no memory or thread). Concurrent readers of one file share its helper. */
/* Reads the small /proc file `name` of this process's thread `tid` into buf (NUL
 * terminated); the count read, or -1. */
static ssize_t aos_fa__task_file(pid_t tid, const char *name, char *buf, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%ld/%s", (long)tid, name);
  int fd;
  do {
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return -1;
  ssize_t n;
  do {
    n = read(fd, buf, size - 1);
  } while (n < 0 && errno == EINTR);
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

/* True when the helper thread `tid` is asleep in its lseek (uninterruptibly: on the
 * inode lock a writer holds), or when that cannot be told (no /proc: the answer that
 * fails the read). False while it waits for a CPU, or sleeps elsewhere first (a page
 * fault on its fresh stack under memory pressure, say). */
static bool aos_fa__thread_blocked(pid_t tid) {
  char buf[512];
  if (aos_fa__task_file(tid, "stat", buf, sizeof buf) <= 0) return true;
  const char *paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
  if (paren == NULL || paren[1] != ' ') return true;
  if (paren[2] != 'D') return false;
  /* In which system call: "<nr> <args...>", "running", or "-1 ..." (not in one). */
  if (aos_fa__task_file(tid, "syscall", buf, sizeof buf) <= 0) return true;
  char *end = NULL;
  long nr = strtol(buf, &end, 10);
  if (end == buf) return false; /* "running" */
  return nr == SYS_lseek;
}

static int aos_fa__barrier(int fd, const struct stat *sb) {
  pthread_once(&aos_fa__barrier_once, aos_fa__barrier_init);
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  int64_t end = aos_fa__ns(deadline.tv_sec, deadline.tv_nsec) + AOS_FA__BARRIER_NS;
  deadline.tv_sec = (time_t)(end / 1000000000LL);
  deadline.tv_nsec = (long)(end % 1000000000LL);

  pthread_mutex_lock(&aos_fa__barrier_mu);
  aos_fa__barrier_job *job = NULL;
  int free_slot = -1;
  for (int i = 0; i < AOS_FA__BARRIER_THREADS; i++) {
    aos_fa__barrier_job *j = aos_fa__barrier_files[i].job;
    if (j == NULL) {
      if (free_slot < 0) free_slot = i;
    } else if (aos_fa__barrier_files[i].dev == sb->st_dev &&
               aos_fa__barrier_files[i].ino == sb->st_ino) {
      job = j;
    }
  }
  if (job != NULL) {
    job->refs++;
  } else if (free_slot >= 0) {
    job = aos_fa__barrier_start(fd, free_slot);
    if (job != NULL) {
      aos_fa__barrier_files[free_slot].job = job;
      aos_fa__barrier_files[free_slot].dev = sb->st_dev;
      aos_fa__barrier_files[free_slot].ino = sb->st_ino;
    }
  }
  if (job == NULL) {
    pthread_mutex_unlock(&aos_fa__barrier_mu);
    return -1;
  }
  int64_t waited = 0;
  while (!job->done) {
    if (pthread_cond_timedwait(&job->cv, &aos_fa__barrier_mu, &deadline) != ETIMEDOUT) continue;
    /* The bound is for a writer holding the lock, not for the scheduler: while the helper
     * has not run, or runs without sleeping on the lock, the bound starts again, up to
     * AOS_FA__BARRIER_CAP_NS in all. */
    waited += AOS_FA__BARRIER_NS;
    pid_t tid = job->tid;
    if (waited >= AOS_FA__BARRIER_CAP_NS) break;
    pthread_mutex_unlock(&aos_fa__barrier_mu);
    bool blocked = tid != 0 && aos_fa__thread_blocked(tid);
    pthread_mutex_lock(&aos_fa__barrier_mu);
    if (blocked) break;
    end += AOS_FA__BARRIER_NS;
    deadline.tv_sec = (time_t)(end / 1000000000LL);
    deadline.tv_nsec = (long)(end % 1000000000LL);
  }
  bool done = job->done;
  aos_fa__barrier_unref(job);
  pthread_mutex_unlock(&aos_fa__barrier_mu);
  return done ? 1 : 0;
}
#endif

#if defined(__linux__) && defined(F_SETLEASE) && defined(F_SETSIG)
#include <signal.h>
/* Takes a read lease on fd (open for reading only): true when it was granted, which
 * the kernel does only while no descriptor (of any process) has the file open for
 * writing, and then holds back every open for writing and every truncate of the file
 * (their callers wait, a non-blocking open fails with EWOULDBLOCK) until the lease goes
 * with the descriptor's close; an open that meets it signals the holder, so the lease
 * is taken with the signal set to SIGURG, which a process ignores unless it asks for it
 * (the default SIGIO would end it). Refused (false: the caller reads twice, behind the
 * barrier) for a file of another owner without CAP_LEASE, one open for writing, or a
 * filesystem without leases. */
static bool aos_fa__lease(int fd, bool *writer) {
  *writer = false;
  if (fcntl(fd, F_SETSIG, SIGURG) != 0) return false;
  int r;
  do {
    r = fcntl(fd, F_SETLEASE, F_RDLCK);
  } while (r != 0 && errno == EINTR);
  /* EAGAIN: a descriptor somewhere has the file open for writing (or a lease of
   * another's conflicts). */
  if (r != 0 && errno == EAGAIN) *writer = true;
  return r == 0;
}
#else
static bool aos_fa__lease(int fd, bool *writer) {
  (void)fd;
  *writer = false;
  return false;
}
#endif

/* Reads buf[0..size) from `offset` and, when `extra` is given, one byte more into
 * *extra, with preadv (one call for a file that holds still); fewer only at end of
 * file. Returns the count read (size + 1: the file has grown) or -errno. */
static ssize_t aos_fa__read_span(int fd, uint8_t *buf, size_t size, uint64_t offset,
                                 uint8_t *extra) {
  size_t want = size + (extra != NULL ? 1 : 0);
  size_t got = 0;
  while (got < want) {
    struct iovec iov[2];
    int n = 0;
    if (got < size) {
      iov[n].iov_base = buf + got;
      iov[n].iov_len = size - got;
      n++;
    }
    if (extra != NULL) {
      iov[n].iov_base = extra;
      iov[n].iov_len = 1;
      n++;
    }
    ssize_t r = preadv(fd, iov, n, (off_t)(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) break;
    got += (size_t)r;
    /* A short read of a regular file met its end: once the buffer is full, no second
     * call to find the probe empty (growth after it shows in the fstat). */
    if (got >= size && got < want) break;
  }
  return (ssize_t)got;
}

/* One pass over the open file: reads `size` bytes from `offset` into buf, for a whole
 * read (`probe`) one more into a byte of its own (buf is exactly the caller's
 * destination), then fstats. Returns 0 when exactly `size` bytes came back and the
 * metadata still matches `opened`; otherwise fails *st (HOST_IO, OVER_BUDGET,
 * FILE_CHANGED). */
/* Where a pass reads from: the file, the directory it was opened in and its name there
 * (for the confinement check), the root. */
typedef struct {
  const aos_fa_root *root;
  int fd;
  int dir;
  const char *name;
  bool confined; /* the open itself proved the file beneath the root (aos_fa__open_path) */
} aos_fa__source;

static int aos_fa__read_pass(const aos_fa__source *src, uint8_t *buf, size_t size,
                             uint64_t offset, bool probe, uint64_t max_bytes,
                             const struct stat *opened, int last, aos_fa_status *st) {
  int fd = src->fd;
  uint8_t extra;
  ssize_t got = aos_fa__read_span(fd, buf, size, offset, probe ? &extra : NULL);
  if (got < 0) return aos_fa_fail(st, AOS_FA_HOST_IO, (int)-got, last);
  if ((size_t)got < size) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1); /* shrank */
  if ((size_t)got > size) {
    /* Grew: a byte beyond the budget is over budget; otherwise it changed. */
    if ((uint64_t)size + 1 > max_bytes) return aos_fa_fail(st, AOS_FA_OVER_BUDGET, 0, -1);
    return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  /* Confinement: the file is beneath the root now (its path, one snapshot), and the
   * fstat below finds it unchanged since the open; so the bytes just read were its
   * content at this instant, beneath the root. A directory on the way moved out of the
   * root makes the read FILE_CHANGED (posix_beneath.c). A file opened by one openat2
   * from the root needs no snapshot: it was beneath the root at the open (or at the
   * look that found a kept descriptor's file), and the same fstat finds it unchanged
   * since that instant. */
  if (!src->confined) {
    int b = aos_fa_beneath_file(src->root, src->dir, src->name, fd, st);
    if (b != 0) return b;
  }
  struct stat after;
  if (fstat(fd, &after) != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, errno, last);
  if (!aos_fa__same_version(opened, &after)) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  return 0;
}

/* Reads the racy file again until two consecutive passes agree byte for byte.
 * `buf` holds the first pass; on success it holds bytes that two passes saw. */
static int aos_fa__confirm(const aos_fa__source *src, uint8_t *buf, size_t size,
                           uint64_t offset, bool probe, uint64_t max_bytes,
                           const struct stat *opened, int last, int w, int wd,
                           aos_fa_status *st) {
  uint8_t *again = malloc(size > 0 ? size : 1);
  if (again == NULL) return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
  int r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  for (int i = 0; i < AOS_FA__RACY_RETRIES; i++) {
#ifdef AOS_FA__HAVE_BARRIER
    /* Between two passes: a write that was copying during the previous pass has
     * finished before the next starts, so the next cannot repeat the previous one's
     * torn bytes (a write still copying after the bound: FILE_CHANGED). A single wait
     * before the first pass was not enough: a writer that began after it and was
     * preempted mid-copy across both passes, its time updates falling in one coarse
     * clock tick (ctime unchanged), gave two identical torn passes
     * (test/stress/torn-read.stress.js, restore mode, on a loaded machine). */
    if (aos_fa__barrier(src->fd, opened) == 0) {
      r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
      break;
    }
#endif
    int p = aos_fa__read_pass(src, again, size, offset, probe, max_bytes, opened, last, st);
    if (p != 0) {
      r = p;
      break;
    }
    /* Two passes alike are one state only if no write ended between the watch (set
     * before the first pass) and now: where stamps are coarse, a writer that
     * alternates contents (A, B, A, ...) can tear two passes at the same byte with the
     * same two states, one write apart (red team: 11 of 198 000 reads on ext4 with
     * 1 s stamps); the barrier makes each such write end, and its end queues an
     * inotify IN_MODIFY before the next pass. */
    bool written = wd >= 0 && aos_fa_watch_changed(w);
    if (!written && (size == 0 || memcmp(buf, again, size) == 0)) {
      r = 0;
      break;
    }
    memcpy(buf, again, size);
    r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  }
  free(again);
  return r;
}

/* The open's failure as a read reports it. */
static int aos_fa__open_failed(int e, int last, aos_fa_status *st) {
  if (e == ENOENT) return aos_fa_fail(st, AOS_FA_NOT_FOUND, e, last);
  if (e == ELOOP || e == ENXIO || e == EISDIR) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, e, last);
  return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
}

/* The descriptor just opened must be a regular file (an entry swapped in after the
 * look was opened without blocking: it is closed unread). Closes fd on failure. */
static int aos_fa__opened(int fd, struct stat *opened, int last, aos_fa_status *st) {
  if (fstat(fd, opened) != 0) {
    int e = errno;
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, last);
  }
  if (!S_ISREG(opened->st_mode)) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, 0, last);
  }
  if (opened->st_size < 0) {
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, EOVERFLOW, last);
  }
  return 0;
}

/* A regular file open for one read. */
typedef struct {
  int fd;
  int dir;            /* the directory it was opened in (root->fd itself, or its own) */
  const char *name;   /* its name there */
  struct stat opened; /* its metadata at the open (a kept descriptor: at the look) */
  int64_t open_ns;    /* the time just before the open (a kept descriptor: the look) */
  bool keep;          /* after a consistent read, keep fd for `key` (with `look`) */
  bool confined;      /* opened by aos_fa__open_path: beneath the root at the open */
  bool leased;        /* read under a lease (aos_fa__lease): released before it is kept */
  bool kept;          /* the root's cache kept it (taken at the look) */
  bool keep_racy;     /* the look found it changed lately: kept only where stamps tell
                         every later change (aos_fa__keepable) */
  struct stat look;   /* the look before the open */
  char key[AOS_FA_FDCACHE_KEY_MAX];
} aos_fa__file;

#ifdef O_PATH
/* The openat2 resolver's open: the whole path resolved beneath the root in one call, so
 * the file is beneath the root at the instant the open completes (the kernel checks the
 * result against the root under its rename lock: RESOLVE_BENEATH), and no directory is
 * held meanwhile that a move could take out. First an O_PATH look (nothing is opened
 * that is not a regular file: a FIFO, socket or device is refused from its fstat),
 * then, unless the root's cache keeps a descriptor of the very file the look found
 * unchanged (identity and ctime: posix_fdcache.c), the open for reading. 1: *f holds
 * the file; -1: refused (*st); 0: not done (any failure of the two calls, which may be
 * a swap between them: the component walk reports it with its segment index). */
static int aos_fa__open_path(const aos_fa_root *root, const char *path, int last, bool cached,
                             aos_fa__file *f, aos_fa_status *st) {
  int64_t look_ns = cached ? aos_fa__now_ns() : 0;
  int fp = aos_fa_posix_openat2(root->fd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fp < 0) return 0;
  if (fstat(fp, &f->look) != 0) {
    close(fp);
    return 0;
  }
  if (cached) {
    int fd = aos_fa_fdcache_take(root->fdcache, f->key, &f->look); /* closes one not matching */
    if (fd >= 0) {
      close(fp);
      f->fd = fd;
      f->opened = f->look;
      f->open_ns = look_ns;
      f->keep = true;
      f->kept = true;
      f->confined = true;
      return 1;
    }
  }
  if (!S_ISREG(f->look.st_mode)) {
    close(fp);
    aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, aos_fa_posix_kind_errno(f->look.st_mode), last);
    return -1;
  }
  f->open_ns = aos_fa__now_ns();
  int fd = aos_fa_posix_openat2(root->fd, path, AOS_FA__READ_FLAGS);
  close(fp);
  if (fd < 0) return 0;
  /* A regular file swapped in between the look and the open is a file beneath the root
   * all the same; anything else was opened without blocking and is closed unread. */
  if (aos_fa__opened(fd, &f->opened, last, st) != 0) return -1;
  f->fd = fd;
  f->confined = true;
  f->keep = cached && f->opened.st_dev == f->look.st_dev && f->opened.st_ino == f->look.st_ino &&
            f->opened.st_ctime == f->look.st_ctime &&
            AOS_FA_CTIME_NS(f->opened) == AOS_FA_CTIME_NS(f->look);
  f->keep_racy = aos_fa__racy(&f->look, f->open_ns);
  return 1;
}
#endif

/* Opens the regular file segs[0..count) for reading into *f (a descriptor the root's
 * cache kept, when the look finds the file it reads unchanged). Fails *st otherwise. */
static int aos_fa__open_regular(const aos_fa_root *root, const char *const *segs, size_t count,
                                aos_fa__file *f, aos_fa_status *st) {
  f->fd = -1;
  f->dir = -1;
  f->name = NULL;
  f->keep = false;
  f->confined = false;
  f->leased = false;
  f->kept = false;
  f->keep_racy = false;
  /* No segments names the root itself: a directory, never a regular file. */
  if (count == 0) return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, EISDIR, -1); /* the root itself */
  int r = aos_fa_segments_check(segs, count, st);
  if (r != 0) return r;
  char path[AOS_FA__PATH_BUF];
  bool joined = aos_fa_posix_join(segs, count, path, sizeof path) == 0;
  size_t plen = joined ? strlen(path) : 0;
  bool cached = root->fdcache != NULL && joined && plen < sizeof f->key;
  if (cached) memcpy(f->key, path, plen + 1);
#ifdef O_PATH
  if (joined && root->resolver == AOS_FA_RESOLVE_OPENAT2) {
    r = aos_fa__open_path(root, path, (int)count - 1, cached, f, st);
    if (r != 0) {
      if (r > 0) f->name = segs[count - 1];
      return r > 0 ? 0 : -1;
    }
  }
#endif

  int last = (int)count - 1;
  int dir = root->fd;
  if (count > 1) {
    r = aos_fa_walk(root, segs, count - 1, 0, &dir, st);
    if (r != 0) return r;
  }
  /* Look before opening: a FIFO, socket or device is refused without being opened. */
  int64_t look_ns = cached ? aos_fa__now_ns() : 0;
  struct stat *before = &f->look;
  if (fstatat(dir, segs[last], before, AT_SYMLINK_NOFOLLOW) != 0) {
    int e = errno;
    if (dir != root->fd) close(dir);
    if (cached) (void)aos_fa_fdcache_take(root->fdcache, f->key, NULL); /* closes one kept */
    if (e == ENOENT && count == 1) {
      r = aos_fa_root_check(root->fd, st); /* a removed root: ROOT_CHANGED */
      if (r != 0) return r;
    }
    return aos_fa__open_failed(e, last, st);
  }
  if (cached) {
    /* The file a kept descriptor reads, unchanged since it was opened: read it again
     * (posix_fdcache.c). Any other entry closes the kept descriptor. */
    int fd = aos_fa_fdcache_take(root->fdcache, f->key, before);
    if (fd >= 0) {
      f->dir = dir;
      f->name = segs[last];
      f->fd = fd;
      f->opened = *before;
      f->open_ns = look_ns;
      f->keep = true;
      f->kept = true;
      return 0;
    }
  }
  if (!S_ISREG(before->st_mode)) {
    if (dir != root->fd) close(dir);
    return aos_fa_fail(st, AOS_FA_UNSAFE_ENTRY, aos_fa_posix_kind_errno(before->st_mode), last);
  }
  /* The entry may be swapped between the look and the open: the open still never
   * follows a link and never blocks, and the descriptor is checked again. */
  f->open_ns = aos_fa__now_ns();
  int fd;
  do {
    fd = openat(dir, segs[last], AOS_FA__READ_FLAGS);
  } while (fd < 0 && errno == EINTR);
  int open_err = fd < 0 ? errno : 0;
  if (fd < 0) {
    if (dir != root->fd) close(dir);
    return aos_fa__open_failed(open_err, last, st);
  }
  r = aos_fa__opened(fd, &f->opened, last, st);
  if (r != 0) {
    if (dir != root->fd) close(dir);
    return r;
  }
  f->fd = fd;
  f->dir = dir;
  f->name = segs[last];
  /* Kept only when the descriptor reads what the look saw, unchanged since, and that
   * not changed lately: a ctime taken in the same clock tick as the open could be
   * shared by a change just after it (a chmod that the kept descriptor would then
   * outlive); one older than AOS_FA__RACY_NS is followed by later ones only. */
  f->keep = cached && f->opened.st_dev == before->st_dev && f->opened.st_ino == before->st_ino &&
            f->opened.st_ctime == before->st_ctime &&
            AOS_FA_CTIME_NS(f->opened) == AOS_FA_CTIME_NS(*before);
  f->keep_racy = aos_fa__racy(before, f->open_ns);
  return 0;
}

/* Whether the file just read consistently may be kept. One not changed lately may: a
 * ctime older than AOS_FA__RACY_NS is followed by later ones only, so a later read's
 * look sees any change. One changed lately may only where every change after a stat
 * carries a later ctime than the stat saw (multigrain stamps: posix_mgtime.c); where
 * stamps tick coarsely, a change in the same tick as the open (a chmod, say) would keep
 * the ctime the look compares. A lease is released first. */
static bool aos_fa__keepable(const aos_fa__file *f) {
  if (f->keep_racy) {
#ifdef __linux__
    struct statfs sf;
    int r;
    do {
      r = fstatfs(f->fd, &sf);
    } while (r != 0 && errno == EINTR);
    /* Multigrain, and stamps with a sub-second part: ext4 made with 128-byte inodes
     * mounts as ext4 but has whole-second stamps only. */
    if (r != 0 || !aos_fa_posix_multigrain(&sf, f->opened.st_dev) ||
        aos_fa_posix_stamp_gran(&f->opened) >= 1000000000LL) {
      return false;
    }
#else
    return false;
#endif
  }
#ifdef F_SETLEASE
  if (f->leased && fcntl(f->fd, F_SETLEASE, F_UNLCK) != 0) return false;
#endif
  return true;
}

/* Done with the file: kept after a consistent read (ok) when it may be, else closed. */
static void aos_fa__file_done(const aos_fa_root *root, aos_fa__file *f, bool ok) {
  if (f->dir >= 0 && f->dir != root->fd) close(f->dir);
  f->dir = -1;
  if (f->fd < 0) return;
  if (ok && f->keep && aos_fa__keepable(f)) {
    aos_fa_fdcache_keep(root->fdcache, f->key, f->fd, &f->look);
  } else {
    close(f->fd);
  }
  f->fd = -1;
}

/* What a read says of the version it returns. */
typedef enum {
  AOS_FA__VERSION_NONE,     /* none returned (readBytes) */
  AOS_FA__VERSION_REQUIRED, /* readVersioned: settled, or UNSUPPORTED_BACKEND */
  AOS_FA__VERSION_OPAQUE    /* readRange: settled where versions work, else one that
                               matches nothing (the read itself is not refused) */
} aos_fa__version_use;

/* read_consistent's answer when the version was not settled yet: wait *wait_ns, read
 * again. */
#define AOS_FA__READ_AGAIN 1

/* Reads [offset, offset + size) of the open file into the caller's buffer under the
 * consistency rule; `probe` for a whole read (growth past the end is seen). Keeps or
 * closes the file. With a version to return, the version must be settled
 * (posix_settle.c): otherwise AOS_FA__READ_AGAIN with *wait_ns; *unmatchable when
 * versions do not work on this filesystem and the use allows that. */
static int aos_fa__read_consistent(const aos_fa_root *root, aos_fa__file *f, uint8_t *buf,
                                   size_t size, uint64_t offset, bool probe, uint64_t max_bytes,
                                   int last, aos_fa__version_use use, int64_t *wait_ns,
                                   bool *unmatchable, aos_fa_status *st) {
  /* A kept descriptor is read once: its file was read consistently when it was kept,
   * and any change since (a write's first act is to stamp the times) shows in a ctime
   * other than the one it was kept with (aos_fa__keepable), which its look compares
   * before the read and the fstat after it. */
  bool racy = !f->kept && aos_fa__racy(&f->opened, f->open_ns);
  /* A file opened for this read is offered a read lease: granted, no one has it open
   * for writing, so no write can be under way (every write goes through a descriptor
   * open for writing) and none can begin until the descriptor is closed; it is read
   * once. Refused because someone has it open for writing, the file is racy whatever
   * its times say: a write that began more than AOS_FA__RACY_NS ago may still be
   * copying (a writer stalled, or a large write from slow memory; red team: a write
   * stalled 2 s mid-copy was read half done, 9 of 9 on ext4 and on tmpfs). A kept
   * descriptor needs none (its file was read so when it was kept, and any change since
   * moves the ctime its look compares). */
  bool writer = false;
  f->leased = !f->kept && aos_fa__lease(f->fd, &writer);
  if (writer) racy = true;
  bool leased = f->leased;
  /* Otherwise it is read twice; a watch for writes ending (inotify IN_MODIFY) is set
   * before the first read (aos_fa__confirm says why). */
  int w = -1, wd = -1;
  if (racy && !leased) {
    w = aos_fa_watch_open();
    wd = aos_fa_watch_add_file(w, f->fd);
  }
  aos_fa__source src = {root, f->fd, f->dir, f->name, f->confined};
  int r = aos_fa__read_pass(&src, buf, size, offset, probe, max_bytes, &f->opened, last, st);
  if (r == 0 && racy && !leased) {
    r = aos_fa__confirm(&src, buf, size, offset, probe, max_bytes, &f->opened, last, w, wd, st);
  }
  if (wd >= 0) aos_fa_watch_remove(w, wd);
  aos_fa_watch_close(w);
  *wait_ns = 0;
  *unmatchable = false;
  if (r == 0 && use != AOS_FA__VERSION_NONE) {
    aos_fa_status vst;
    if (aos_fa_posix_version_ready(f->fd, &f->opened, wait_ns, &vst) != 0) {
      if (vst.kind == AOS_FA_UNSUPPORTED_BACKEND && use == AOS_FA__VERSION_OPAQUE) {
        *unmatchable = true;
      } else {
        *st = vst;
        r = -1;
      }
    } else if (*wait_ns > 0) {
      aos_fa__file_done(root, f, true);
      return AOS_FA__READ_AGAIN;
    }
  }
  aos_fa__file_done(root, f, r == 0);
  return r;
}

/* A version that equals no other: for a read whose filesystem cannot tell states apart
 * (readRange there). POSIX versions have ino_hi 0; this one has 64 random bits there. */
static void aos_fa__unmatchable(aos_fa_version *v) {
  /* Unique in this process (a counter) and across processes of the host (the pid and
   * the time of the first use), mixed so that no field shows through. */
  static _Atomic uint64_t counter;
  uint64_t n = atomic_fetch_add(&counter, 1);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t x = ((uint64_t)getpid() << 40) ^ (n << 1) ^ ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  v->ino_hi = x | 1;
}

int aos_fa_read_into(const aos_fa_root *root, const char *const *segs, size_t count,
                     uint64_t max_bytes, aos_fa_alloc alloc, void *ctx, uint8_t **data,
                     size_t *len, aos_fa_version *version, aos_fa_status *st) {
  *data = NULL;
  *len = 0;
  if (version != NULL) memset(version, 0, sizeof *version);
  aos_fa__file f;
  int r;
  uint8_t *buf = NULL;
  bool unmatchable = false;
  for (int tries = 0;; tries++) {
    r = aos_fa__open_regular(root, segs, count, &f, st);
    if (r != 0) return r;
    int last = (int)count - 1;
    if ((uint64_t)f.opened.st_size > max_bytes) {
      aos_fa__file_done(root, &f, false);
      return aos_fa_fail(st, AOS_FA_OVER_BUDGET, 0, -1);
    }
    if ((uint64_t)f.opened.st_size > (uint64_t)SIZE_MAX - 1) {
      aos_fa__file_done(root, &f, false);
      return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
    }
    size_t size = (size_t)f.opened.st_size;
    /* The caller's destination, exactly the size (the growth probe has its own byte).
     * A read that waits for its version to settle reads again into the same buffer when
     * the size is the same; otherwise it is FILE_CHANGED (alloc is called once). */
    if (buf == NULL) {
      buf = alloc(ctx, size);
      *data = buf;
      if (buf == NULL && size > 0) {
        aos_fa__file_done(root, &f, false);
        return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
      }
      *len = size;
    } else if (size != *len) {
      aos_fa__file_done(root, &f, false);
      *len = 0;
      return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    }
    int64_t wait_ns;
    r = aos_fa__read_consistent(root, &f, buf, size, 0, true, max_bytes, last,
                                version != NULL ? AOS_FA__VERSION_REQUIRED : AOS_FA__VERSION_NONE,
                                &wait_ns, &unmatchable, st);
    if (r == AOS_FA__READ_AGAIN && tries + 1 < AOS_FA_SETTLE_TRIES) {
      aos_fa_posix_sleep_ns(wait_ns);
      continue;
    }
    if (r == AOS_FA__READ_AGAIN) r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    if (r != 0) {
      *len = 0;
      return r;
    }
  break;
  }
  if (version != NULL) aos_fa_posix_version(&f.opened, version);
  aos_fa_status_ok(st);
  return 0;
}

int aos_fa_read_range(const aos_fa_root *root, const char *const *segs, size_t count,
                      uint64_t offset, uint64_t length, aos_fa_alloc alloc, void *ctx,
                      uint8_t **data, size_t *len, uint64_t *size, aos_fa_version *version,
                      aos_fa_status *st) {
  *data = NULL;
  *len = 0;
  *size = 0;
  if (version != NULL) memset(version, 0, sizeof *version);
  aos_fa__file f;
  int r;
  bool unmatchable = false;
  uint8_t *buf = NULL;
  size_t have = 0;
  uint64_t file_size;
  int last = (int)count - 1;
  for (int tries = 0;; tries++) {
    r = aos_fa__open_regular(root, segs, count, &f, st);
    if (r != 0) return r;
    file_size = (uint64_t)f.opened.st_size;
    uint64_t want = offset < file_size ? file_size - offset : 0;
    if (want > length) want = length;
    if (want > (uint64_t)SIZE_MAX - 1) {
      aos_fa__file_done(root, &f, false);
      return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
    }
    size_t n = (size_t)want;
    if (tries == 0) {
      buf = alloc(ctx, n);
      *data = buf;
      if (buf == NULL && n > 0) {
        aos_fa__file_done(root, &f, false);
        return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, last);
      }
      have = n;
    } else if (n != have) {
      aos_fa__file_done(root, &f, false);
      return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    }
    /* No probe: a file that grows or shrinks changes its size, which the fstat after
     * the read compares. */
    int64_t wait_ns;
    r = aos_fa__read_consistent(root, &f, buf, n, offset, false, UINT64_MAX, last,
                                AOS_FA__VERSION_OPAQUE, &wait_ns, &unmatchable, st);
    if (r == AOS_FA__READ_AGAIN && tries + 1 < AOS_FA_SETTLE_TRIES) {
      aos_fa_posix_sleep_ns(wait_ns);
      continue;
    }
    if (r == AOS_FA__READ_AGAIN) r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    if (r != 0) return r;
    break;
  }
  *len = have;
  *size = file_size;
  if (version != NULL) {
    aos_fa_posix_version(&f.opened, version);
    if (unmatchable) aos_fa__unmatchable(version);
  }
  aos_fa_status_ok(st);
  return 0;
}
