/* file-authority: when an entry's version can stand for one state only (POSIX).
 *
 * A version is the entry's identity, size, modification time and status-change time
 * (version.c). The times come from a clock that ticks: the kernel stamps a change with
 * its coarse clock (a jiffy, 1 to 10 ms; Linux 6.13+ hands out a finer stamp when the
 * old one was looked at, on ext4, tmpfs, xfs and btrfs) truncated to the filesystem's
 * granularity (1 ns; 1 s on ext2 and on ext4 with 128-byte inodes; 2 s on FAT). Two
 * changes within one tick leave the same stamps, and so does a file created in that
 * tick on a freed inode number of the same size (ext2 and ext4 hand the number out again
 * at once). So a version is handed out only once it is *settled*: the clock that stamps
 * changes has moved past its status-change time by the granularity (git's rule for a
 * "racy" index entry). Every later change, and every file created later, then carries a
 * later ctime, so no other state can have that version. A version observed earlier is
 * waited for (at most a tick plus the granularity) and observed again.
 *
 * Where the granularity is a second or more (the filesystem's type says so, or an
 * observed ctime has no sub-second part on a filesystem that does not always keep
 * nanoseconds) a same-size edit within that second cannot be told from the state
 * before it by anything the host reports (no fine timestamps, no change counter; the
 * inode generation tells only a reused number apart), and waiting a second or two on
 * every version is no answer: versions there are UNSUPPORTED_BACKEND, as on pseudo
 * filesystems (procfs, sysfs, ...), whose content changes without any stamp moving.
 * docs/security.md lists the filesystems.
 *
 * The clock: Linux compares with CLOCK_REALTIME_COARSE, the very clock the kernel
 * stamps with (or below the finer stamp it hands out); elsewhere CLOCK_REALTIME with a
 * margin of AOS_FA__SETTLE_MARGIN_NS for the host's own tick. A clock set back by more
 * than that (by an administrator) can make a version repeat; not in the threat model. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"
#include "common/fstype.h"

#include <errno.h>
#include <time.h>

/* Granularities above this are "coarse": versions are refused rather than waited for. */
#define AOS_FA__SETTLE_MAX_NS (100LL * 1000 * 1000)
/* The granularity assumed for a stamp with no sub-second part: FAT's two seconds. */
#define AOS_FA__COARSE_GRAN_NS (2000LL * 1000 * 1000)
#ifdef __linux__
#define AOS_FA__SETTLE_MARGIN_NS 0
#else
#define AOS_FA__SETTLE_MARGIN_NS (20LL * 1000 * 1000)
#endif
/* A ctime further ahead of the clock than this: the clock was set back. */
#define AOS_FA__FUTURE_NS (1000LL * 1000 * 1000)

int64_t aos_fa_posix_stamp_gran(const struct stat *sb) {
  long ns = AOS_FA_CTIME_NS(*sb);
  if (ns == 0) return AOS_FA__COARSE_GRAN_NS;
  int64_t g = 1;
  while (g < 100000000LL && ns % (g * 10) == 0) g *= 10;
  return g;
}

static int64_t aos_fa__clock_ns(void) {
  struct timespec ts;
#ifdef CLOCK_REALTIME_COARSE
  if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) == 0) return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
#endif
  if (clock_gettime(CLOCK_REALTIME, &ts) == 0) return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
  return 0; /* no clock: nothing is ever settled, and every version waits, then fails */
}

/* The resolution of the clock compared with (a jiffy for the coarse clock). */
static int64_t aos_fa__tick_ns(void) {
  struct timespec ts;
#ifdef CLOCK_REALTIME_COARSE
  if (clock_getres(CLOCK_REALTIME_COARSE, &ts) == 0) {
    int64_t t = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    if (t > 0 && t <= 100LL * 1000 * 1000) return t;
  }
#endif
  (void)ts;
  return 1000LL * 1000; /* 1 ms */
}

int aos_fa_posix_version_ready(int fd, const struct stat *sb, int64_t *wait_ns, aos_fa_status *st) {
  *wait_ns = 0;
  struct statfs sf;
  int r;
  do {
    r = fstatfs(fd, &sf);
  } while (r != 0 && errno == EINTR);
  if (r != 0) return aos_fa_fail(st, AOS_FA_HOST_IO, errno, -1);
  if (aos_fstype_pseudo(&sf) || aos_fstype_coarse_times(&sf)) {
    return aos_fa_fail(st, AOS_FA_UNSUPPORTED_BACKEND, 0, -1);
  }
  int64_t gran = aos_fstype_fine_times(&sf) ? 1 : aos_fa_posix_stamp_gran(sb);
  if (gran > AOS_FA__SETTLE_MAX_NS) return aos_fa_fail(st, AOS_FA_UNSUPPORTED_BACKEND, 0, -1);
  int64_t stamp = (int64_t)sb->st_ctime * 1000000000LL + AOS_FA_CTIME_NS(*sb);
  int64_t settled_at = stamp + gran + AOS_FA__SETTLE_MARGIN_NS;
  int64_t now = aos_fa__clock_ns();
  if (now < settled_at) {
    if (settled_at - now > AOS_FA__FUTURE_NS) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    /* The coarse clock moves a whole tick at a time: waiting less than one is useless. */
    int64_t tick = aos_fa__tick_ns();
    *wait_ns = settled_at - now > tick ? settled_at - now : tick;
  }
  aos_fa_status_ok(st);
  return 0;
}

void aos_fa_posix_sleep_ns(int64_t ns) {
  if (ns <= 0) return;
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}
