/* Process scopes: the plain C core the Node-API glue (src/process/scope_napi.c) uses
 * on Linux, and what the helper program (src/process/scope_helper.c) shares with it.
 * Knows nothing of Node-API; functions return 0 (or a count) or a negative errno.
 * See docs/process-scopes.md. */
#ifndef AOS_PROCESS_SCOPE_H
#define AOS_PROCESS_SCOPE_H

#include <stddef.h>

/* The queued real-time signal Node sends a subreaper helper (R) to control it, with
 * a signal number as its value: 0 acknowledges the handshake (R may exit once its
 * part of the scope is empty), SIGKILL kills everything and makes R exit, any other
 * number is sent to every process below R. The kernel's number, above the signals
 * any C library reserves for itself. */
#define AOS_SCOPE_CTL_SIGNAL 40

/* Takes a pidfd of `pid` (O_CLOEXEC). -ESRCH when it is gone, -ENOSYS before 5.3. */
int aos_scope_pidfd_open(int pid, int *out_fd);

/* Whether this kernel has what the subreaper and cgroup backends need: pidfd_open
 * (Linux 5.3) and waitid(P_PIDFD) (5.4). 0 when both work; -ENOSYS when pidfd_open
 * is missing; -EINVAL (what waitid returns for an unknown idtype) when P_PIDFD is. */
int aos_scope_kernel_support(void);

/* Sends AOS_SCOPE_CTL_SIGNAL with value `value` through `pidfd`. 0, or -ESRCH when
 * the process is gone. */
int aos_scope_control(int pidfd, int value);

/* 1 when the process behind `pidfd` has exited (reaped or not), 0 while it runs.
 * An exited child of this process is reaped: call it only with the pidfd of a child
 * that libuv does not know (the subreaper helper's reaper), never with one of a
 * process Node spawned. Never blocks. */
int aos_scope_exited(int pidfd);

/* Pids of every live process below `pid` (not `pid` itself), read from
 * /proc/<pid>/task/<tid>/children transitively. Writes at most `cap` into `out` and
 * returns how many were found (capped at `cap`), or a negative errno. */
int aos_scope_descendants(int pid, int *out, size_t cap);

/* Sends `sig` to every process of the cgroup whose directory is `dir`, each through
 * a pidfd taken first and then checked against /proc/<pid>/cgroup (so a pid that was
 * reused by a process outside the cgroup is never signalled). `cgpath` is the
 * cgroup's path as /proc/<pid>/cgroup shows it ("/agent-os-..."). Returns how many
 * processes were signalled, or a negative errno when cgroup.procs cannot be read. */
int aos_scope_cg_signal(const char *dir, const char *cgpath, int sig);

#endif
