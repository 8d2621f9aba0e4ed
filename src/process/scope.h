/* Process scopes: the plain C core the Node-API glue (src/process/scope_napi.c) uses
 * on Linux, and what the helper program (src/process/scope_helper.c) shares with it.
 * Knows nothing of Node-API; functions return 0 (or a count) or a negative errno.
 * See docs/process-scopes.md. */
#ifndef AOS_PROCESS_SCOPE_H
#define AOS_PROCESS_SCOPE_H

#include <stddef.h>

/* The queued real-time signal Node sends a scope's reaper (R) to control it, with a
 * signal number as its value: 0 acknowledges the handshake (R may exit once its part
 * of the scope is empty), SIGKILL kills everything and makes R exit, any other number
 * is sent to every process below R. The kernel's number, above the signals any C
 * library reserves for itself. R acts on it only from its parent (the Node process),
 * with SI_QUEUE; a process inside the scope that forges one can only ask R to signal
 * or end the scope it is in. */
#define AOS_SCOPE_CTL_SIGNAL 40

/* A growable list of pids (free with aos_scope_pids_free). */
typedef struct {
  int *v;
  size_t n;
  size_t cap;
} aos_scope_pids;

void aos_scope_pids_free(aos_scope_pids *p);

/* Takes a pidfd of `pid` (O_CLOEXEC). -ESRCH when it is gone, -ENOSYS before 5.3. */
int aos_scope_pidfd_open(int pid, int *out_fd);

/* Whether this kernel has what the subreaper and cgroup backends need: pidfd_open
 * (Linux 5.3) and waitid(P_PIDFD) (5.4). 0 when both work; -ENOSYS when pidfd_open
 * is missing; -EINVAL (what waitid returns for an unknown idtype) when P_PIDFD is. */
int aos_scope_kernel_support(void);

/* Sends AOS_SCOPE_CTL_SIGNAL with value `value` through `pidfd`. 0, or -ESRCH when
 * the process is gone. */
int aos_scope_control(int pidfd, int value);

/* Sends `sig` to the process behind `pidfd` (pidfd_send_signal). 0, or -errno. */
int aos_scope_pidfd_signal(int pidfd, int sig);

/* 1 when the process behind `pidfd` has exited (reaped or not), 0 while it runs.
 * An exited child of this process is reaped: call it only with the pidfd of a child
 * that libuv does not know (a scope's reaper, cloned with CLONE_PARENT), never with
 * one of a process Node spawned. Never blocks. */
int aos_scope_exited(int pidfd);

/* Appends to `out` the pids of every live process below `pid` (not `pid` itself),
 * read from /proc/<pid>/task/<tid>/children transitively, with no bound but memory.
 * 0, or -ENOMEM. */
int aos_scope_descendants(int pid, aos_scope_pids *out);

/* Sends `sig` to every process below the calling process (a child subreaper). Each
 * is taken hold of by a pidfd first, then its parent is read again from /proc: it
 * counts only if its parent is still the process it was listed under, and that one
 * is the caller or a process held the same way that has not exited; so a pid that
 * was reaped and reused is never signalled. Returns how many were signalled, or
 * -ENOMEM. */
int aos_scope_signal_below(int sig);

/* The same, calling `hook` (the project's tests only) with each list of children
 * read, before any of them is taken hold of: the moment a listed pid can be reaped
 * and given to another process. */
typedef void (*aos_scope_list_hook)(const int *pids, size_t n, void *ctx);
int aos_scope_signal_below_hooked(int sig, aos_scope_list_hook hook, void *ctx);

/* Sends `sig` to every process of the cgroup whose directory is `dir` and of every
 * cgroup below it, each through a pidfd taken first and then checked against
 * /proc/<pid>/cgroup (so a pid that was reused by a process outside the cgroup is
 * never signalled). `cgpath` is the cgroup's path as /proc/<pid>/cgroup shows it
 * ("/agent-os-..."). Returns how many processes were signalled, or a negative errno
 * when cgroup.procs cannot be read. */
int aos_scope_cg_signal(const char *dir, const char *cgpath, int sig);

/* Ends the cgroup `dir` and every cgroup a member made below it: SIGKILLs what is in
 * them (cgroup.kill, Linux 5.14+, else each member through a pidfd, round after
 * round), waits up to `wait_ms` for them to empty, and removes the directories,
 * deepest first. 0 once `dir` is gone; -EBUSY when something was still in them after
 * `wait_ms`; another negative errno when a directory could not be removed. */
int aos_scope_cg_remove(const char *dir, const char *cgpath, int wait_ms);

#endif
