/* Internal: what src/process/posix.c needs from each POSIX operating system
 * (src/process/linux.c, src/process/darwin.c). Not included outside src/process. */
#ifndef AOS_PROCESS_PLATFORM_H
#define AOS_PROCESS_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One process of a process-table snapshot. `start` is the start time in the
 * operating system's own unit; with `pid` it names one process for good. */
typedef struct {
  int pid;
  int ppid;
  int pgid;
  uint64_t start;
  bool zombie;
} aos_proc__entry;

/* A process held by a tree. */
typedef struct {
  int pid;
  uint64_t start;
  int fd;          /* Linux pidfd, or -1 when identified by pid + start only */
  bool signalled;  /* `sig` of some aos_proc_tree_signal call was delivered */
  bool stopped;    /* SIGSTOP delivered during the current signal call */
  bool gone;       /* seen exited; stays true */
} aos_proc__member;

/* Reads the whole process table. On success *out is a malloc'ed array of *count
 * entries (free it with free()). */
int aos_proc__scan(aos_proc__entry **out, size_t *count);

/* Takes hold of process `pid`. When `expect_start` is non-zero the process must still
 * be the one with that start time, else -ESRCH; when zero, whatever process `pid`
 * names now is taken and its start time recorded. -ESRCH when it is gone. Sets every
 * field of `m` (the flags false). */
int aos_proc__hold(aos_proc__member *m, int pid, uint64_t expect_start, bool no_pidfd);

/* Sends `sig` to the held process. 0, or -ESRCH when it is gone (nothing sent). */
int aos_proc__signal(aos_proc__member *m, int sig);

/* Sends `sig` to the process group `pgid` led (or once led) by the held process
 * `leader` (leader->pid == pgid). `members` (`count` of them) are other held
 * processes that can vouch that the group still exists where the operating system
 * cannot signal a group through the leader's handle. 0, or -ESRCH when the group is
 * empty or cannot be vouched for (nothing sent). */
int aos_proc__signal_group(aos_proc__member *leader, aos_proc__member *members,
                           size_t count, int sig);

/* Whether the held process has exited (a zombie has). Never blocks. */
bool aos_proc__gone(aos_proc__member *m);

/* The current process group of the held process, or a negative errno. */
int aos_proc__pgid(aos_proc__member *m);

/* Releases the hold. Idempotent. */
void aos_proc__release(aos_proc__member *m);

#endif
