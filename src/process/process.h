/* Killing a process tree: the plain C core of the `process` primitive.
 *
 * Knows nothing of Node-API. A tree is held from its root process (the spawned
 * child) and remembers every process it has signalled, each by an identity that a
 * recycled pid cannot take over (Linux: a pidfd; Windows: a process handle; macOS:
 * pid plus start time, see src/process/darwin.c for the residual race). Functions
 * return 0 or a negative errno value.
 *
 * A tree is used by one thread at a time. */
#ifndef AOS_PROCESS_PROCESS_H
#define AOS_PROCESS_PROCESS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct aos_proc_tree aos_proc_tree;

/* aos_proc_tree_open flags. */
enum {
  /* Linux only: identify processes by pid and start time instead of pidfds, the
   * fallback for kernels without pidfd_open. Lets the tests run that path. */
  AOS_PROC_NO_PIDFD = 1u << 0,
  /* Linux only: do not signal the group through the root's pidfd
   * (PIDFD_SIGNAL_PROCESS_GROUP, Linux 6.9+); the fallback for older kernels. */
  AOS_PROC_NO_PGROUP_FD = 1u << 1,
  /* `pid` is a child of this process that only the caller's thread reaps (a Node
   * ChildProcess), opened on that thread right after the caller checked that its
   * exit was not seen, outside any pass of that thread's reaping: so `pid` is still
   * the child's own at open. It is held by pidfd; where none can be taken it is left
   * to the caller to signal (aos_proc_tree_caller), since only the caller's thread
   * can tell whether it was reaped since. */
  AOS_PROC_CHILD = 1u << 2,
  /* With AOS_PROC_CHILD: the child's exit was seen before the tree was opened (it
   * was reaped while another child's exit was being emitted). Its pid may name
   * another process by now: it is never held or signalled. Its group is still ended,
   * under the checks of src/process/posix.c. */
  AOS_PROC_REAPED = 1u << 3
};

/* Whether `id` names a thread that is not its process's main thread (kill(2) of it
 * would end its whole process): 1 when it does, 0 otherwise (a process, or nothing),
 * or a negative errno when it cannot be told. Linux: the Tgid of /proc/<id>/status,
 * or, without /proc, pidfd_open refusing a thread that leads no thread group (EINVAL
 * before Linux 6.9, ENOENT since); macOS:
 * threads have no ids in the process id space; Windows: OpenThread on the id. */
int aos_proc_is_thread(int id);

/* Holds the process `pid` as the root of a tree. The caller guarantees that `pid`
 * still names the process it means (for a child spawned by this process: its exit
 * has not been reaped yet). A root that is already gone is not an error: the tree
 * then has no root and finds nothing from it. -EINVAL for pid <= 0 or the calling
 * process itself, -ENOMEM. */
int aos_proc_tree_open(int pid, unsigned flags, aos_proc_tree **out);

/* Sends `sig` to the tree: to the root's process group when that group is the root's
 * own (the root leads it) and not the caller's group, and to every process found by
 * walking parent links down from the root and from every process signalled earlier
 * that is still alive (plus the members of that group). The processes found are
 * stopped and the walk repeated until it finds nothing new, so a process forked
 * during the walk cannot slip past; `sig` is then sent, followed by SIGCONT unless
 * `sig` is SIGKILL or SIGSTOP. Never signals the calling process or its group.
 * On Windows every process found is terminated and `sig` is ignored.
 *
 * `*signalled` receives how many processes `sig` was delivered to in this call.
 * Returns 0, or a negative errno when the process table could not be read (the
 * processes already held were still signalled). */
int aos_proc_tree_signal(aos_proc_tree *tree, int sig, size_t *signalled);

/* What aos_proc_tree_caller reports: the root is the caller's to signal (a child held
 * without a pidfd, AOS_PROC_CHILD); and so is the root's group, by number, while the
 * root is not reaped (no process table to find its members in). */
enum { AOS_PROC_CALLER_ROOT = 1u << 0, AOS_PROC_CALLER_GROUP = 1u << 1 };

/* Which parts of the tree the caller signals itself (AOS_PROC_CALLER_* bits): the
 * caller sends them each signal of aos_proc_tree_signal, from its own thread, only
 * after checking that the root's exit has not been seen; SIGSTOP before the call (so
 * the root cannot fork while the tree is walked) and the signal itself, then SIGCONT,
 * after it. */
unsigned aos_proc_tree_caller(const aos_proc_tree *tree);

/* How many processes this tree signalled that have not exited yet (a zombie has
 * exited). Never blocks. Also watches the root's group: once it is seen empty it is
 * never signalled again (a later group with the same number is another one).
 * `root_reaped`: the caller saw the root's exit (its pid is free from then on). */
size_t aos_proc_tree_alive(aos_proc_tree *tree, bool root_reaped);

/* The check before settling: walks and signals the tree once more with `sig`
 * (anything started since the last walk, in the group or below a live member, is
 * found and signalled), then sets `*pending` to the number of signalled processes
 * still alive plus one when the root's group still has a live member. The tree may
 * settle only when `*pending` is 0. Returns as aos_proc_tree_signal. */
int aos_proc_tree_settle(aos_proc_tree *tree, int sig, bool root_reaped, size_t *pending);

/* Copies the pids of the processes this tree signalled (at most `cap`) into `pids`
 * and returns how many there are in total. */
size_t aos_proc_tree_pids(const aos_proc_tree *tree, int *pids, size_t cap);

/* Releases every identity the tree holds. `tree` may be NULL. */
void aos_proc_tree_close(aos_proc_tree *tree);

#endif
