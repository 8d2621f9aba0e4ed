/* The tree algorithm for POSIX systems, on top of the per-OS primitives of
 * src/process/platform.h: find the descendants of a process, freeze them, signal
 * them, and tell when the ones signalled are gone.
 *
 * The root's process group. A group id is the pid of the process that created the
 * group, and the kernel never hands that number to a new process while any process
 * still has it as its pid, its group id or its session id. So while the group has a
 * member, kill(-pgid) reaches that group and no other; the danger is only a group
 * that emptied, whose number went round the pid space to a new process that made
 * its own group. Members of the group are counted as such (from a snapshot of the
 * process table, taken between two checks) and the group is signalled by number only
 * when one of these holds at that moment (aos_proc__group_ours):
 *   - the root still occupies its pid (alive, or a zombie not reaped yet: checked
 *     through its pidfd, or by pid and start time), so the number is pinned by the
 *     root itself;
 *   - a held process that is alive is a member of the group now;
 *   - no process has the number as its pid and the group is not empty: the root
 *     was reaped, and the number has been pinned by the group's members ever since
 *     the last check (made at least every 50 ms by the JS poll, and at every walk);
 *     a stranger's group with this number would need the number to go round the
 *     whole pid space, be taken by a new process that made a group and then exited,
 *     all between two checks.
 * A root seen reaped while a process has its pid (the number was reused), or a
 * group seen empty, ends the group for the tree: it is never signalled again.
 * Linux 6.9+ signals the group through the root's pidfd instead
 * (PIDFD_SIGNAL_PROCESS_GROUP), which names it for good; the checks above still
 * decide which processes of a snapshot count as group members. */
#include "process/process.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "process/platform.h"

/* Upper bound on freeze-and-rewalk rounds in one signal call. Each round stops every
 * process found so far; a stopped process cannot fork, so the walk converges in two
 * or three rounds unless processes keep appearing from outside the tree. */
#define AOS_PROC__MAX_ROUNDS 32

struct aos_proc_tree {
  unsigned flags;
  int self_pid;
  int self_pgid;
  bool has_root;   /* members[0] is the root (false: it was gone or reaped at open) */
  bool group_gone; /* the root's group was seen empty or its number reused */
  bool scan_ok;    /* the last read of the process table succeeded: group members
                    * are held one by one, and kill(-group) is not needed */
  int group; /* the number of the root's own process group, or 0: the root's pid,
               * when the root led a group (or may have: it exited before it could be
               * asked) */
  aos_proc__member *members;
  size_t count;
  size_t cap;
};

static int aos_proc__add(aos_proc_tree *t, const aos_proc__member *m) {
  if (t->count == t->cap) {
    size_t cap = t->cap == 0 ? 16 : t->cap * 2;
    aos_proc__member *grown = realloc(t->members, cap * sizeof *grown);
    if (grown == NULL) return -ENOMEM;
    t->members = grown;
    t->cap = cap;
  }
  t->members[t->count++] = *m;
  return 0;
}

/* Whether a process has `pid` as its pid now (kill with signal 0 sends nothing). */
static bool aos_proc__pid_taken(int pid) { return kill(pid, 0) == 0 || errno == EPERM; }

/* Whether the root still occupies its pid. A root left to the caller is asked only
 * through the process table (by start time: reading it signals nothing), and is
 * reaped for good once the caller said so. */
static int aos_proc__root_probe(aos_proc_tree *t) {
  aos_proc__member *root = &t->members[0];
  if (!root->by_caller) return aos_proc__probe(root);
  if (root->gone) return -ESRCH;
  return root->start == 0 ? -ENOTSUP : aos_proc__probe(root);
}

/* See the head of this file: whether the root's group, and no other process, has the
 * number right now. Latches group_gone. */
static bool aos_proc__group_ours(aos_proc_tree *t) {
  if (t->group == 0 || t->group_gone || t->group == t->self_pgid) return false;
  if (kill(-t->group, 0) < 0 && errno == ESRCH) {
    t->group_gone = true; /* empty: a group never gains members again */
    return false;
  }
  int probe = -ESRCH;
  if (t->has_root) {
    probe = aos_proc__root_probe(t);
    if (probe == 0) return true; /* the root pins the number */
  }
  for (size_t i = t->has_root ? 1 : 0; i < t->count; i++) {
    aos_proc__member *m = &t->members[i];
    if (!m->gone && aos_proc__pgid(m) == t->group) return true;
  }
  if (probe == -ENOTSUP) return false; /* cannot tell the root's pid from a reuse */
  if (aos_proc__pid_taken(t->group)) {
    t->group_gone = true; /* the root was reaped and its number reused */
    return false;
  }
  return true;
}

int aos_proc_tree_open(int pid, unsigned flags, aos_proc_tree **out) {
  *out = NULL;
  if (pid <= 1 || pid == (int)getpid()) return -EINVAL;
  aos_proc_tree *t = calloc(1, sizeof *t);
  if (t == NULL) return -ENOMEM;
  t->flags = flags;
  t->self_pid = (int)getpid();
  t->self_pgid = (int)getpgrp();
  if ((flags & AOS_PROC_CHILD) && (flags & AOS_PROC_REAPED)) {
    /* Reaped: its pid may name another process (a new child of the caller's, even):
     * never held. Its group may live on without it. */
    if (pid != t->self_pgid) t->group = pid;
    (void)aos_proc__group_ours(t); /* first check: a process with the pid ends it */
    *out = t;
    return 0;
  }
  aos_proc__member root;
  int rc = aos_proc__hold(&root, pid, NULL, flags);
  if (rc < 0 && rc != -ESRCH && rc != -ENOMEM && (flags & AOS_PROC_CHILD)) {
    /* No pidfd and no process table: the caller's child, unreaped (the caller
     * checked), is still named by its pid; the caller signals it. */
    root = (aos_proc__member){.pid = pid, .fd = -1};
    rc = 0;
  }
  if (rc == -ESRCH || rc == -ENOTSUP) {
    *out = t; /* already gone, or nothing can name it: a tree with nothing to walk from */
    return 0;
  }
  if (rc < 0) {
    free(t);
    return rc;
  }
  root.by_caller = (flags & AOS_PROC_CHILD) && root.fd < 0;
  rc = aos_proc__add(t, &root);
  if (rc < 0) {
    aos_proc__release(&root);
    free(t);
    return rc;
  }
  t->has_root = true;
  int pgid;
  if (root.by_caller) {
    /* Not reaped (the caller checked, on the thread that reaps it, in this call):
     * the pid is the child's. */
    pid_t g = getpgid(pid);
    pgid = g < 0 ? -errno : (int)g;
  } else {
    pgid = aos_proc__pgid(&t->members[0]);
  }
  /* A root that exited before it could be asked may have led a group: the group
   * checks find out (the zombie pins the number meanwhile). */
  if ((pgid == pid || pgid == -ESRCH) && pid != t->self_pgid) t->group = pid;
  *out = t;
  return 0;
}

unsigned aos_proc_tree_caller(const aos_proc_tree *tree) {
  if (!tree->has_root || !tree->members[0].by_caller) return 0;
  unsigned bits = AOS_PROC_CALLER_ROOT;
  if (tree->group != 0 && !aos_proc__table_readable()) bits |= AOS_PROC_CALLER_GROUP;
  return bits;
}

static int aos_proc__cmp_entry(const void *a, const void *b) {
  int x = ((const aos_proc__entry *)a)->pid, y = ((const aos_proc__entry *)b)->pid;
  return (x > y) - (x < y);
}

static const aos_proc__entry *aos_proc__find(const aos_proc__entry *e, size_t n, int pid) {
  aos_proc__entry key = {.pid = pid};
  return bsearch(&key, e, n, sizeof *e, aos_proc__cmp_entry);
}

static bool aos_proc__is_member(const aos_proc_tree *t, const aos_proc__entry *e) {
  for (size_t i = 0; i < t->count; i++) {
    const aos_proc__member *m = &t->members[i];
    if (!m->gone && m->pid == e->pid && m->start == e->start) return true;
  }
  return false;
}

/* Marks in `in` the entries of the snapshot that belong to the tree: the live
 * members themselves, the members of the tree's group (when `group_ok`: a held
 * member was in the group before and after the snapshot, so the number in the
 * snapshot is that group's), and, transitively, every process whose parent is
 * marked. Then holds each marked process that is not a member yet. Returns how many
 * were added, or -ENOMEM. */
static int aos_proc__discover(aos_proc_tree *t, aos_proc__entry *e, size_t n, bool group_ok) {
  if (n == 0) return 0;
  qsort(e, n, sizeof *e, aos_proc__cmp_entry);
  bool *in = calloc(n, sizeof *in);
  if (in == NULL) return -ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if (e[i].zombie || e[i].pid == t->self_pid) continue;
    in[i] = aos_proc__is_member(t, &e[i]) || (group_ok && e[i].pgid == t->group);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; i++) {
      if (in[i] || e[i].zombie || e[i].pid == t->self_pid) continue;
      const aos_proc__entry *parent = aos_proc__find(e, n, e[i].ppid);
      if (parent != NULL && in[parent - e]) {
        in[i] = true;
        changed = true;
      }
    }
  }
  int added = 0;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (!in[i] || aos_proc__is_member(t, &e[i])) continue;
    aos_proc__member m;
    if (aos_proc__hold(&m, e[i].pid, &e[i], t->flags & AOS_PROC_NO_PIDFD) < 0) {
      continue; /* gone since the snapshot, or not the process it showed */
    }
    rc = aos_proc__add(t, &m);
    if (rc < 0) {
      aos_proc__release(&m);
    } else {
      added++;
    }
  }
  free(in);
  return rc < 0 ? rc : added;
}

/* Sends `sig` to the tree's group, if it has one (never the caller's group), as a
 * whole where a handle names it. Otherwise its members, found in the process table,
 * are signalled one by one with the other members of the tree; only without a
 * process table is the group signalled by number (by the caller while the root is
 * the caller's and not reaped, see the head of this file). */
static void aos_proc__group(aos_proc_tree *t, int sig) {
  if (t->group == 0 || t->group_gone || t->group == t->self_pgid) return;
  aos_proc__member *root = t->has_root ? &t->members[0] : NULL;
  if (root != NULL && !root->by_caller) {
    int rc = aos_proc__signal_group(root, sig, (t->flags & AOS_PROC_NO_PGROUP_FD) != 0);
    if (rc == -ESRCH) t->group_gone = true; /* the group the handle names is empty */
    if (rc != -ENOTSUP) return;
  }
  if (t->scan_ok) return;
  if (root != NULL && root->by_caller && !root->gone) return;
  if (aos_proc__group_ours(t)) (void)kill(-t->group, sig);
}

/* Sends `sig` to every live member; returns how many it reached. */
static size_t aos_proc__signal_members(aos_proc_tree *t, int sig, bool mark) {
  size_t reached = 0;
  for (size_t i = 0; i < t->count; i++) {
    aos_proc__member *m = &t->members[i];
    if (m->gone || m->by_caller) continue;
    int rc = aos_proc__signal(m, sig);
    if (rc == -ESRCH) {
      m->gone = true;
    } else if (rc == 0) {
      reached++;
      if (mark) m->signalled = true;
    }
  }
  return reached;
}

int aos_proc_tree_signal(aos_proc_tree *tree, int sig, size_t *signalled) {
  *signalled = 0;
  int scan_rc = 0;
  for (int round = 0;; round++) {
    aos_proc__entry *entries = NULL;
    size_t n = 0;
    bool group_before = aos_proc__group_ours(tree);
    int rc = aos_proc__scan(&entries, &n);
    tree->scan_ok = rc == 0 && n > 0; /* an empty /proc (hidden) lists nothing, not even this process */
    if (rc < 0) {
      scan_rc = rc;
      n = 0;
    }
    bool group_ok = group_before && aos_proc__group_ours(tree);
    int added = aos_proc__discover(tree, entries, n, group_ok);
    free(entries);
    if (added < 0) scan_rc = added;
    if ((round > 0 && added <= 0) || round == AOS_PROC__MAX_ROUNDS) break;
    /* Freeze what was found, then walk again: a stopped process cannot fork, so a
     * child forked before the stop is found by the next walk. */
    aos_proc__group(tree, SIGSTOP);
    for (size_t i = 0; i < tree->count; i++) {
      aos_proc__member *m = &tree->members[i];
      if (m->gone || m->stopped || m->by_caller) continue;
      int src = aos_proc__signal(m, SIGSTOP);
      if (src == 0) m->stopped = true;
      if (src == -ESRCH) m->gone = true;
    }
  }
  aos_proc__group(tree, sig);
  *signalled = aos_proc__signal_members(tree, sig, true);
  if (sig != SIGKILL && sig != SIGSTOP) {
    aos_proc__group(tree, SIGCONT);
    aos_proc__signal_members(tree, SIGCONT, false);
  }
  for (size_t i = 0; i < tree->count; i++) tree->members[i].stopped = false;
  return scan_rc;
}

size_t aos_proc_tree_alive(aos_proc_tree *tree, bool root_reaped) {
  size_t alive = 0;
  if (root_reaped && tree->has_root && tree->members[0].by_caller) tree->members[0].gone = true;
  for (size_t i = 0; i < tree->count; i++) {
    aos_proc__member *m = &tree->members[i];
    /* The hold is kept until close: the root's handle still names its group. */
    if (!m->gone && aos_proc__gone(m)) m->gone = true;
    if (m->signalled && !m->gone) alive++;
  }
  (void)aos_proc__group_ours(tree); /* the periodic check the group reasoning needs */
  return alive;
}

/* Whether the root's group has a member that has not exited. Zombies count as
 * exited (their parent, maybe not in the tree, may never reap them). Without a
 * process table, a group that is not empty counts as live. */
static bool aos_proc__group_live(aos_proc_tree *t) {
  if (!aos_proc__group_ours(t)) return false;
  aos_proc__entry *e = NULL;
  size_t n = 0;
  if (aos_proc__scan(&e, &n) < 0 || n == 0) {
    free(e);
    return aos_proc__group_ours(t);
  }
  bool live = false;
  for (size_t i = 0; i < n && !live; i++) {
    live = e[i].pgid == t->group && !e[i].zombie && e[i].pid != t->self_pid;
  }
  free(e);
  return live && aos_proc__group_ours(t);
}

int aos_proc_tree_settle(aos_proc_tree *tree, int sig, bool root_reaped, size_t *pending) {
  size_t signalled = 0;
  if (root_reaped && tree->has_root && tree->members[0].by_caller) tree->members[0].gone = true;
  int rc = aos_proc_tree_signal(tree, sig, &signalled);
  *pending = aos_proc_tree_alive(tree, root_reaped) + (aos_proc__group_live(tree) ? 1 : 0);
  return rc;
}

size_t aos_proc_tree_pids(const aos_proc_tree *tree, int *pids, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < tree->count; i++) {
    if (!tree->members[i].signalled) continue;
    if (n < cap) pids[n] = tree->members[i].pid;
    n++;
  }
  return n;
}

void aos_proc_tree_close(aos_proc_tree *tree) {
  if (tree == NULL) return;
  for (size_t i = 0; i < tree->count; i++) aos_proc__release(&tree->members[i]);
  free(tree->members);
  free(tree);
}
