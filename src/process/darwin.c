/* macOS primitives for src/process/posix.c: the process table from
 * sysctl(KERN_PROC_ALL), processes identified by pid plus start time.
 *
 * macOS has no pidfd. A held process is re-read (sysctl KERN_PROC_PID) immediately
 * before each kill(), and signalled only if its start time is still the one
 * recorded and it is not a zombie. Residual race, documented in docs/process.md:
 * the process exits, is reaped and its pid reused between that check and the
 * kill(). Built and tested in the project's release workflow. */
#include "process/platform.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/proc.h>
#include <sys/sysctl.h>
#include <sys/types.h>
#include <unistd.h>

static uint64_t aos_proc__start_of(const struct kinfo_proc *kp) {
  const struct timeval *tv = &kp->kp_proc.p_starttime;
  return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
}

static aos_proc__entry aos_proc__entry_of(const struct kinfo_proc *kp) {
  aos_proc__entry e = {.pid = kp->kp_proc.p_pid,
                       .ppid = kp->kp_eproc.e_ppid,
                       .pgid = kp->kp_eproc.e_pgid,
                       .start = aos_proc__start_of(kp),
                       .zombie = kp->kp_proc.p_stat == SZOMB};
  return e;
}

/* One process by pid. -ESRCH when there is none. */
static int aos_proc__read(int pid, aos_proc__entry *out) {
  int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, pid};
  struct kinfo_proc kp;
  size_t len = sizeof kp;
  memset(&kp, 0, sizeof kp);
  if (sysctl(mib, 4, &kp, &len, NULL, 0) < 0) return -errno;
  if (len == 0 || kp.kp_proc.p_pid != pid) return -ESRCH;
  *out = aos_proc__entry_of(&kp);
  return 0;
}

int aos_proc__scan(aos_proc__entry **out, size_t *count) {
  *out = NULL;
  *count = 0;
  int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_ALL, 0};
  struct kinfo_proc *kp = NULL;
  size_t len = 0;
  for (int attempt = 0; attempt < 8; attempt++) {
    if (sysctl(mib, 4, NULL, &len, NULL, 0) < 0) return -errno;
    len += len / 8 + sizeof *kp * 16; /* room for processes started meanwhile */
    struct kinfo_proc *buf = malloc(len);
    if (buf == NULL) return -ENOMEM;
    if (sysctl(mib, 4, buf, &len, NULL, 0) == 0) {
      kp = buf;
      break;
    }
    int err = errno;
    free(buf);
    if (err != ENOMEM) return -err;
  }
  if (kp == NULL) return -ENOMEM;
  size_t n = len / sizeof *kp;
  aos_proc__entry *e = malloc((n == 0 ? 1 : n) * sizeof *e);
  if (e == NULL) {
    free(kp);
    return -ENOMEM;
  }
  for (size_t i = 0; i < n; i++) e[i] = aos_proc__entry_of(&kp[i]);
  free(kp);
  *out = e;
  *count = n;
  return 0;
}

int aos_proc_is_thread(int id) {
  (void)id;
  return 0; /* thread ids are not in the process id space */
}

bool aos_proc__table_readable(void) { return true; /* sysctl answers for every process */ }

int aos_proc__hold(aos_proc__member *m, int pid, const aos_proc__entry *expect, unsigned flags) {
  (void)flags;
  *m = (aos_proc__member){.pid = pid, .fd = -1};
  aos_proc__entry e;
  int rc = aos_proc__read(pid, &e);
  if (rc < 0) return rc;
  if (expect != NULL && (e.start != expect->start || (e.ppid != expect->ppid && e.pgid != expect->pgid))) {
    return -ESRCH;
  }
  m->start = e.start;
  return 0;
}

/* 0 when the process at m->pid is still the one held and has not exited, -ESRCH
 * when it is not, another negative errno when it could not be read. */
static int aos_proc__check_same(const aos_proc__member *m, aos_proc__entry *e) {
  int rc = aos_proc__read(m->pid, e);
  if (rc < 0) return rc;
  return e->start == m->start && !e->zombie ? 0 : -ESRCH;
}

int aos_proc__signal(aos_proc__member *m, int sig) {
  aos_proc__entry e;
  int rc = aos_proc__check_same(m, &e);
  if (rc < 0) return rc;
  return kill(m->pid, sig) == 0 ? 0 : -errno;
}

int aos_proc__signal_group(aos_proc__member *leader, int sig, bool no_pgroup_fd) {
  /* No handle names a group here: src/process/posix.c signals it with a guarded
   * killpg(). */
  (void)leader, (void)sig, (void)no_pgroup_fd;
  return -ENOTSUP;
}

int aos_proc__probe(aos_proc__member *m) {
  aos_proc__entry e;
  int rc = aos_proc__read(m->pid, &e);
  if (rc == -ESRCH) return -ESRCH;
  if (rc < 0) return -ENOTSUP;
  return e.start == m->start ? 0 : -ESRCH; /* a zombie still occupies its pid */
}

bool aos_proc__gone(aos_proc__member *m) {
  aos_proc__entry e;
  int rc = aos_proc__read(m->pid, &e);
  if (rc == -ESRCH) return true;
  if (rc < 0) return false; /* cannot tell: counted alive */
  return e.start != m->start || e.zombie;
}

int aos_proc__pgid(aos_proc__member *m) {
  aos_proc__entry e;
  int rc = aos_proc__check_same(m, &e);
  return rc < 0 ? rc : e.pgid;
}

void aos_proc__release(aos_proc__member *m) { m->fd = -1; }
