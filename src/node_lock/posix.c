/* node-lock on POSIX (Linux, macOS): flock(2) on a descriptor opened without
 * following a link at the final component.
 *
 * flock locks belong to the open file description, so two descriptors opened here
 * exclude each other even in one process (threads, worker_threads), and the lock
 * ends when the last descriptor of that description is closed: when the holder
 * releases, exits or is killed. Every descriptor is O_CLOEXEC, so a child that
 * execs never inherits the lock. */
#if defined(__linux__) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
/* The build defines _GNU_SOURCE on Linux; compiled alone with -std=c11, ask glibc
 * for POSIX.1-2008 plus flock. */
#define _DEFAULT_SOURCE
#endif

#include "node_lock/node_lock.h"
#include "node_lock/record.h"
#include "common/fstype.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/sysmacros.h>
#endif

#ifndef O_NOFOLLOW
#error "node-lock needs O_NOFOLLOW"
#endif
#ifndef O_CLOEXEC
#error "node-lock needs O_CLOEXEC"
#endif

/* The table of who holds which lock: 0 not looked at yet, 1 the kernel's lock table
 * (/proc/locks) can be read, so no record is written; 2 it cannot, so the holder
 * records its pid in the guard file. Looked at once per process. */
#ifdef __linux__
static _Atomic int aos_lock__table_state;
#endif

void aos_lock_init(aos_lock *lock) {
  lock->fd = -1;
  lock->recorded = false;
}

/* errno values that an open with O_NOFOLLOW (or O_RDWR) reports for an entry that
 * is not a regular file: a symlink (ELOOP; EMLINK on FreeBSD, EFTYPE on NetBSD), a
 * directory (EISDIR), a socket (ENXIO), a device without its driver (ENODEV). */
static bool aos_lock__is_entry_errno(int err) {
  switch (err) {
    case ELOOP:
    case EMLINK:
    case EISDIR:
    case ENXIO:
    case ENODEV:
#ifdef EFTYPE
    case EFTYPE:
#endif
      return true;
    default:
      return false;
  }
}

static void aos_lock__unsafe(aos_lock_outcome *out, const struct stat *st, int err) {
  out->state = AOS_LOCK_UNSAFE;
  out->holder_pid = 0;
  if (err != 0) {
    out->host_errno = err;
  } else if (S_ISLNK(st->st_mode)) {
    out->host_errno = ELOOP;
  } else if (S_ISDIR(st->st_mode)) {
    out->host_errno = EISDIR;
  } else {
    out->host_errno = 0;
  }
}

static int aos_lock__flock(int fd, int op) {
  int r;
  do {
    r = flock(fd, op);
  } while (r == -1 && errno == EINTR);
  return r == -1 ? -errno : 0;
}

static int aos_lock__ftruncate0(int fd) {
  int r;
  do {
    r = ftruncate(fd, 0);
  } while (r == -1 && errno == EINTR);
  return r == -1 ? -errno : 0;
}

/* Closes a descriptor this file opened; close is never retried (the descriptor is
 * gone whatever it reports). Keeps the caller's errno. */
static void aos_lock__close(int fd) {
  int saved = errno;
  (void)close(fd);
  errno = saved;
}

/* Whether the holder records its pid in the guard file: not on Linux when the
 * kernel's lock table can be read (it names the holder itself); everywhere else. */
static bool aos_lock__records(void) {
#ifdef __linux__
  int state = aos_lock__table_state;
  if (state == 0) {
    int fd;
    do {
      fd = open("/proc/locks", O_RDONLY | O_CLOEXEC);
    } while (fd == -1 && errno == EINTR);
    char probe[1];
    ssize_t n = -1;
    if (fd >= 0) {
      do {
        n = read(fd, probe, 0);
      } while (n == -1 && errno == EINTR);
      aos_lock__close(fd);
    }
    state = n == 0 ? 1 : 2;
    aos_lock__table_state = state;
  }
  return state == 2;
#else
  return true;
#endif
}

#if defined(__linux__) && defined(STATX_MNT_ID)
/* The filesystem type of mount `mnt_id` as /proc/self/mountinfo names it, into type[cap]:
 * 0, or -1 when it cannot be read. */
static int aos_lock__mount_type(uint64_t mnt_id, char *type, size_t cap) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL) return -1;
  char line[4096];
  int found = -1;
  while (fgets(line, sizeof line, f) != NULL) {
    char *end = NULL;
    unsigned long long id = strtoull(line, &end, 10);
    if (end == line || id != mnt_id) continue;
    const char *sep = strstr(line, " - ");
    if (sep == NULL) break;
    sep += 3;
    size_t n = strcspn(sep, " \n");
    if (n == 0 || n >= cap) break;
    memcpy(type, sep, n);
    type[n] = '\0';
    found = 0;
    break;
  }
  fclose(f);
  return found;
}
#endif

/* 1 when `path` lies on a pseudo filesystem (procfs, sysfs, devtmpfs, cgroupfs, debugfs,
 * ...: content the kernel makes up, not stored), decided by the filesystem's type, never
 * by the path: a missing guard by its directory's. devtmpfs reports tmpfs's type, so a
 * tmpfs is told apart by its mount's type (Linux 5.8+ statx mount id; without /proc or
 * that, a tmpfs counts as one: /dev/shm is a tmpfs and holds data). 0 otherwise, -errno
 * when neither can be looked at. */
/* 1 when the entry `name` in the directory `dfd` (or, when it does not exist, the
 * directory itself, where it would be created) lives on a pseudo filesystem, 0 when
 * not, -errno. The entry is looked at through an O_PATH descriptor of its own (which
 * opens nothing: a device or a procfs file is not opened by it), so a mount over the
 * name is judged by the filesystem mounted there. */
static int aos_lock__pseudo(int dfd, const char *name, bool exists, dev_t entry_dev) {
  (void)name, (void)exists, (void)entry_dev; /* used where O_PATH exists */
  struct statfs sf;
  int r;
  int efd = -1;
#ifdef O_PATH
  /* An entry on the directory's own device shares its filesystem: the directory's
   * answer stands (one call fewer). A mount point at the name is judged by its own. */
  struct stat ds;
  bool own = exists && (fstat(dfd, &ds) != 0 || ds.st_dev != entry_dev);
  if (own) {
    do {
      efd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    } while (efd < 0 && errno == EINTR);
    if (efd < 0 && errno != ENOENT) return -errno;
  }
#endif
  int at = efd >= 0 ? efd : dfd;
  do {
    r = fstatfs(at, &sf);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    r = -errno;
    if (efd >= 0) close(efd);
    return r;
  }
  int pseudo = aos_fstype_pseudo(&sf) ? 1 : 0;
#if defined(__linux__) && defined(STATX_MNT_ID)
  if (pseudo == 0 && (unsigned long)sf.f_type == 0x01021994UL && exists) {
    struct statx sx;
    if (statx(at, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) == 0 &&
        (sx.stx_mask & STATX_MNT_ID) != 0) {
      char type[64];
      if (aos_lock__mount_type(sx.stx_mnt_id, type, sizeof type) == 0 &&
          strcmp(type, "devtmpfs") == 0) {
        pseudo = 1;
      }
    }
  }
#endif
  if (efd >= 0) close(efd);
  return pseudo;
}

/* Opens the guard file for the lock: read-write (so the holder can record its pid),
 * created if missing with 0666 less the umask, never through a symlink at the final
 * component, never blocking (a FIFO opened O_NONBLOCK returns at once), never as a
 * controlling terminal. An existing guard file this process may not write (another
 * user's, or on a read-only mount) is opened read-only: flock needs no write
 * access; the pid is then not recorded (and a stale record not cleared). */
/* open, EINTR retried; and EWOULDBLOCK: a non-blocking open for writing of a file
 * someone holds a read lease on fails so while the kernel asks the holder to let go (a
 * file-authority read of a guard file written lately holds one for microseconds); it
 * is tried again, for at most about 200 ms. */
#ifdef O_PATH
#define AOS_LOCK__DIR_FLAGS (O_PATH | O_DIRECTORY | O_CLOEXEC)
#else
#define AOS_LOCK__DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)
#endif

static int aos_lock__open_retry(int dfd, const char *name, int flags, mode_t mode) {
  for (int naps = 0;; naps++) {
    int fd = openat(dfd, name, flags, mode);
    if (fd >= 0) return fd;
    if (errno == EINTR) {
      naps--;
      continue;
    }
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || naps >= 4000) return -1;
    struct timespec nap = {0, 50 * 1000};
    while (nanosleep(&nap, &nap) != 0 && errno == EINTR) {
    }
  }
}

static int aos_lock__open(int dfd, const char *name, bool *writable) {
  const int base = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
  int fd = aos_lock__open_retry(dfd, name, O_RDWR | O_CREAT | base, 0666);
  if (fd >= 0) {
    *writable = true;
    return fd;
  }
  int err = errno;
  if (err != EACCES && err != EROFS && err != EPERM) return -err;
  do {
    fd = openat(dfd, name, O_RDONLY | base);
  } while (fd == -1 && errno == EINTR);
  if (fd == -1) return -err; /* the first refusal is the one that explains */
  *writable = false;
  return fd;
}

/* 1 when the path still names the file open at `fd` (same device and inode, and the
 * path itself is not a link now), 0 when it names something else or nothing, or
 * -errno when that cannot be told. */
static int aos_lock__still_at_path(const char *path, const struct stat *held) {
  struct stat now;
  if (lstat(path, &now) == -1) {
    return errno == ENOENT ? 0 : -errno;
  }
  if (!S_ISREG(now.st_mode)) return 0;
  return now.st_dev == held->st_dev && now.st_ino == held->st_ino ? 1 : 0;
}

static void aos_lock__record_pid(aos_lock *lock) {
  char text[AOS_LOCK_RECORD_MAX_BYTES + 1];
  int n = aos_lock_format_record(text, sizeof text, (int64_t)getpid());
  if (n <= 0) return;
  /* The file is empty or holds an earlier record (checked under the lock). */
  if (aos_lock__ftruncate0(lock->fd) != 0) return;
  lock->recorded = true;
  size_t done = 0;
  while (done < (size_t)n) {
    ssize_t w = pwrite(lock->fd, text + done, (size_t)n - done, (off_t)done);
    if (w == -1 && errno == EINTR) continue;
    if (w <= 0) return; /* the pid is advisory: the lock itself is held */
    done += (size_t)w;
  }
}

/* Reads the guard file open at `fd`, `size` bytes long by its fstat: 1 when it is a
 * holder record (*pid: the pid it names, 0 for none or a later record version), 0
 * when it is anything else, -errno when it cannot be read. An empty file is not a
 * record (the caller tells it apart by its size). */
static int aos_lock__read_record(int fd, off_t size, int64_t *pid) {
  *pid = 0;
  if (size <= 0 || size > AOS_LOCK_RECORD_MAX_BYTES) return 0;
  char text[AOS_LOCK_RECORD_MAX_BYTES + 1];
  ssize_t n;
  do {
    n = pread(fd, text, sizeof text, 0);
  } while (n == -1 && errno == EINTR);
  if (n < 0) return -errno;
  return aos_lock_parse_record(text, (size_t)n, pid) ? 1 : 0;
}

static bool aos_lock__pid_alive(int64_t pid) {
  if (pid <= 0) return false;
  if (kill((pid_t)pid, 0) == 0) return true;
  return errno == EPERM; /* exists, owned by someone we may not signal */
}

#ifdef __linux__
/* What the kernel's lock table says about one file. */
typedef struct aos_lock__table_match {
  int64_t exact;     /* the pid of the exclusive flock listed on the file's device and inode */
  int64_t by_inode;  /* the pid of the one such flock listed on another device, same inode */
  int inode_matches; /* how many flocks were listed on another device with that inode */
} aos_lock__table_match;

/* Reads one line of /proc/locks, "N: FLOCK  ADVISORY  WRITE pid MAJ:MIN:INO 0 EOF",
 * into *m when it is an exclusive flock on the inode `st` describes (waiters read
 * "N: -> FLOCK ..." and never match). The table shows the device of the file's
 * superblock: on btrfs that is not the subvolume device that stat reports, so a
 * line on another device with the same inode is kept apart as a candidate. */
static void aos_lock__locks_line(const char *line, const struct stat *st,
                                 aos_lock__table_match *m) {
  char type[16], mode[16], access[16];
  long long line_pid = 0;
  unsigned int maj = 0, min = 0;
  unsigned long long ino = 0;
  int n = sscanf(line, "%*d: %15s %15s %15s %lld %x:%x:%llu", type, mode, access,
                 &line_pid, &maj, &min, &ino);
  if (n != 7 || line_pid <= 0 || line_pid > INT_MAX) return;
  if (strcmp(type, "FLOCK") != 0 || strcmp(access, "WRITE") != 0) return;
  if (ino != (unsigned long long)st->st_ino) return;
  if (maj == major(st->st_dev) && min == minor(st->st_dev)) {
    m->exact = (int64_t)line_pid;
  } else {
    m->inode_matches++;
    m->by_inode = (int64_t)line_pid;
  }
}

/* Scans the kernel's lock table for the file `st` describes. Returns 0, or -1 when
 * the table cannot be read (no procfs). Stops at an exact match. This is the
 * kernel's own record of who locked, so it needs no help from the holder. Pids in
 * /proc/locks are those of the reader's pid namespace; a holder in another namespace
 * is not listed. */
static int aos_lock__scan_table(const struct stat *st, aos_lock__table_match *m) {
  int fd;
  do {
    fd = open("/proc/locks", O_RDONLY | O_CLOEXEC);
  } while (fd == -1 && errno == EINTR);
  if (fd == -1) return -1;
  char buf[8192];
  size_t have = 0;
  int result = 0;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
    if (n == -1 && errno == EINTR) continue;
    if (n < 0) {
      result = -1;
      break;
    }
    have += (size_t)n;
    buf[have] = '\0';
    char *line = buf;
    char *nl;
    while (m->exact == 0 && (nl = strchr(line, '\n')) != NULL) {
      *nl = '\0';
      aos_lock__locks_line(line, st, m);
      line = nl + 1;
    }
    if (m->exact != 0) break;
    size_t rest = have - (size_t)(line - buf);
    if (n == 0) {
      if (rest > 0) aos_lock__locks_line(line, st, m);
      break;
    }
    if (rest == sizeof buf - 1) rest = 0; /* a line longer than any the kernel writes */
    memmove(buf, line, rest);
    have = rest;
  }
  aos_lock__close(fd);
  return result;
}

/* The most descriptors of a holder looked at to confirm a lock-table line. */
#define AOS_LOCK__MAX_FDS_LOOKED 4096

/* 1 when process `pid` has the file `st` describes open (one of /proc/PID/fd/N,
 * followed, has its device and inode), 0 when it has not or that cannot be seen
 * (another user's process, for one that is not root). Bounded by the process's
 * descriptors (at most AOS_LOCK__MAX_FDS_LOOKED); used only to confirm a lock-table
 * line found by inode alone. */
static int aos_lock__has_open(int64_t pid, const struct stat *st) {
  char dir[40];
  snprintf(dir, sizeof dir, "/proc/%lld/fd", (long long)pid);
  int dfd;
  do {
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (dfd == -1 && errno == EINTR);
  if (dfd == -1) return 0;
  DIR *d = fdopendir(dfd);
  if (d == NULL) {
    aos_lock__close(dfd);
    return 0;
  }
  int found = 0;
  int looked = 0;
  struct dirent *e;
  /* Bounded: a holder with more descriptors than this is not confirmed (and the
   * record decides), so another process cannot make this caller wait long. */
  while (found == 0 && looked < AOS_LOCK__MAX_FDS_LOOKED && (e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    looked++;
    struct stat target;
    if (fstatat(dfd, e->d_name, &target, 0) == 0 && target.st_dev == st->st_dev &&
        target.st_ino == st->st_ino) {
      found = 1;
    }
  }
  (void)closedir(d); /* closes dfd */
  return found;
}
#endif

/* The holder's pid where it can be known, else 0. `fd` is this caller's own
 * (unlocked) descriptor of the guard file, `st` its identity. Never waits.
 * Linux: the kernel's lock table names the process that took the flock, matched by
 * device and inode; where the device differs (btrfs), by inode alone when exactly
 * one such lock is listed and that process has this very file open. Elsewhere, and
 * when the table has no match: the pid the guard file records, if it names a live
 * process. */
static int64_t aos_lock__holder_pid(int fd, const struct stat *st) {
#ifdef __linux__
  aos_lock__table_match m = {0, 0, 0};
  if (aos_lock__scan_table(st, &m) == 0) {
    if (m.exact > 0) return aos_lock__pid_alive(m.exact) ? m.exact : 0;
    if (m.inode_matches == 1 && aos_lock__has_open(m.by_inode, st)) {
      return aos_lock__pid_alive(m.by_inode) ? m.by_inode : 0;
    }
  }
#endif
  int64_t pid = 0;
  if (aos_lock__read_record(fd, st->st_size, &pid) != 1) return 0;
  return aos_lock__pid_alive(pid) ? pid : 0;
}

int aos_lock_holder(const char *path, int64_t *pid) {
  *pid = 0;
  struct stat st;
  if (lstat(path, &st) == -1) return -errno;
  if (!S_ISREG(st.st_mode)) return 0; /* never opened: not a guard */
  int fd;
  do {
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  } while (fd == -1 && errno == EINTR);
  if (fd == -1) return -errno;
  if (fstat(fd, &st) == -1) {
    int err = errno;
    aos_lock__close(fd);
    return -err;
  }
  if (S_ISREG(st.st_mode) && st.st_nlink == 1) {
    *pid = aos_lock__holder_pid(fd, &st);
    if (*pid == 0 && st.st_size == 0 && aos_lock__records()) *pid = -1;
  }
  aos_lock__close(fd); /* a descriptor of our own: closing it drops no one's flock */
  return 0;
}

int aos_lock_try_acquire(const char *path, bool want_holder, aos_lock *lock,
                         aos_lock_outcome *out) {
  aos_lock_init(lock);
  out->state = AOS_LOCK_HELD;
  out->holder_pid = 0;
  out->host_errno = 0;

  /* The directory part is resolved once per attempt (its links followed, as given),
   * and every look and the open go through that one descriptor: a directory on the
   * path swapped meanwhile (for a link to /proc/self, or to a directory of device
   * nodes) cannot make the look and the open see two different places. */
  const char *slash = strrchr(path, '/');
  if (slash == NULL || slash[1] == '\0') return -EINVAL; /* the JS layer refuses these */
  const char *name = slash + 1;
  char dir[PATH_MAX];
  size_t dlen = slash == path ? 1 : (size_t)(slash - path);
  if (dlen >= sizeof dir) return -ENAMETOOLONG;
  memcpy(dir, path, dlen);
  dir[dlen] = '\0';

  for (int attempt = 0; attempt <= AOS_LOCK_MAX_REPLACED_RETRIES; attempt++) {
    int dfd;
    do {
      dfd = open(dir, AOS_LOCK__DIR_FLAGS);
    } while (dfd < 0 && errno == EINTR);
    if (dfd < 0) return -errno;
    /* Refuse a non-regular entry before opening it: opening a device can have
     * effects of its own. The descriptor's own type is checked again below. */
    struct stat st;
    bool exists = false;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (!S_ISREG(st.st_mode)) {
        close(dfd);
        aos_lock__unsafe(out, &st, 0);
        return 0;
      }
      exists = true;
    } else if (errno != ENOENT) {
      int err = errno;
      close(dfd);
      return -err;
    }
    /* A guard must live where data is stored: a file on a pseudo filesystem
     * (/proc/self/mem reports a regular file) is never opened for writing. */
    int pseudo = aos_lock__pseudo(dfd, name, exists, st.st_dev);
    if (pseudo < 0) {
      close(dfd);
      return pseudo;
    }
    if (pseudo == 1) {
      close(dfd);
      memset(&st, 0, sizeof st);
      st.st_mode = S_IFREG;
      aos_lock__unsafe(out, &st, 0);
      return 0;
    }

    bool writable = false;
    int fd = aos_lock__open(dfd, name, &writable);
    close(dfd);
    if (fd < 0) {
      /* The open met another kind of entry (a link swapped in since the look is ELOOP
       * from O_NOFOLLOW): UNSAFE_ENTRY with that code, whatever the path holds by now. */
      if (aos_lock__is_entry_errno(-fd)) {
        memset(&st, 0, sizeof st);
        int e = -fd;
#ifdef EFTYPE
        if (e == EFTYPE) e = ELOOP;
#endif
        aos_lock__unsafe(out, &st, e == EMLINK ? ELOOP : e);
        return 0;
      }
      return fd;
    }

    int r = aos_lock__flock(fd, LOCK_EX | LOCK_NB);
    bool locked = r == 0;
    if (!locked && r != -EWOULDBLOCK && r != -EAGAIN) {
      aos_lock__close(fd);
      return r;
    }
    /* The descriptor's identity, type, link count and size, taken after the flock:
     * when locked, no participant writes the file from here on. */
    if (fstat(fd, &st) == -1) {
      int err = errno;
      aos_lock__close(fd);
      return -err;
    }
    if (!S_ISREG(st.st_mode)) {
      aos_lock__close(fd);
      aos_lock__unsafe(out, &st, 0);
      return 0;
    }

    int same = aos_lock__still_at_path(path, &st);
    if (same < 0) {
      aos_lock__close(fd); /* closing the only descriptor drops the lock */
      return same;
    }
    if (same == 0) {
      /* The path was replaced or removed between open and lock: this handle is
       * not the guard at lockPath. Drop it and look again. */
      aos_lock__close(fd);
      continue;
    }

    /* A file with another name (a hard link to a data file) is never a guard. */
    if (st.st_nlink > 1) {
      aos_lock__close(fd);
      aos_lock__unsafe(out, &st, 0);
      return 0;
    }

    if (!locked) {
      /* Held: the holder may be writing its record right now, so the content is
       * not judged here; it is only read for the holder's pid. */
      out->state = AOS_LOCK_HELD;
      out->holder_pid = want_holder ? aos_lock__holder_pid(fd, &st) : 0;
      aos_lock__close(fd);
      return 0;
    }

    /* Locked: the file must be empty or hold a holder record (a holder that died
     * left its own); anything else is not a guard and is left as it is. */
    bool stale_record = false;
    if (st.st_size != 0) {
      int64_t ignored;
      int rec = aos_lock__read_record(fd, st.st_size, &ignored);
      if (rec < 0) {
        aos_lock__close(fd);
        return rec;
      }
      if (rec == 0) {
        aos_lock__close(fd); /* unlocks: nothing was written */
        aos_lock__unsafe(out, &st, 0);
        return 0;
      }
      stale_record = true;
    }

    lock->fd = fd;
    if (writable && aos_lock__records()) {
      aos_lock__record_pid(lock);
    } else if (writable && stale_record) {
      /* No record is kept here: clear the one a dead holder left, so that no
       * later lookup believes it. */
      (void)aos_lock__ftruncate0(fd);
    }
    out->state = AOS_LOCK_ACQUIRED;
    return 0;
  }
  /* Replaced on every look: someone keeps swapping the path. Not acquired. */
  out->state = AOS_LOCK_HELD;
  out->holder_pid = 0;
  return 0;
}

/* Whether the guard file open at `fd` holds exactly the record this process wrote.
 * Only then is it cleared on release: a program that does not take part and wrote
 * into the held file meanwhile keeps its bytes (the package never truncates a file
 * that is not a guard). */
static bool aos_lock__own_record(int fd) {
  char want[AOS_LOCK_RECORD_MAX_BYTES + 1], got[AOS_LOCK_RECORD_MAX_BYTES + 2];
  int n = aos_lock_format_record(want, sizeof want, (int64_t)getpid());
  if (n <= 0) return false;
  ssize_t r;
  do {
    r = pread(fd, got, sizeof got, 0);
  } while (r == -1 && errno == EINTR);
  return r == n && memcmp(got, want, (size_t)n) == 0;
}

void aos_lock_release(aos_lock *lock) {
  if (lock->fd < 0) return;
  /* Clear the record while still holding the lock: after unlocking, the next
   * holder may already have written its own pid. */
  if (lock->recorded && aos_lock__own_record(lock->fd)) (void)aos_lock__ftruncate0(lock->fd);
  /* Unlock explicitly: should the description have been shared (a fork without
   * exec), closing this descriptor alone would not end the lock. */
  (void)aos_lock__flock(lock->fd, LOCK_UN);
  aos_lock__close(lock->fd);
  lock->fd = -1;
  lock->recorded = false;
}
