/* The tree algorithm for POSIX systems, on top of the per-OS primitives of
 * src/process/platform.h: find the descendants of a process, freeze them, signal
 * them, and tell when the ones signalled are gone. */
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
  int group; /* the root's own process group to signal as a whole, or 0; when set,
               * members[0] is the root, which leads it */
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

int aos_proc_tree_open(int pid, unsigned flags, aos_proc_tree **out) {
  *out = NULL;
  if (pid <= 0 || pid == (int)getpid()) return -EINVAL;
  aos_proc_tree *t = calloc(1, sizeof *t);
  if (t == NULL) return -ENOMEM;
  t->flags = flags;
  t->self_pid = (int)getpid();
  t->self_pgid = (int)getpgrp();
  aos_proc__member root;
  int rc = aos_proc__hold(&root, pid, 0, (flags & AOS_PROC_NO_PIDFD) != 0);
  if (rc == -ESRCH) {
    *out = t; /* already gone: a tree with nothing to walk from */
    return 0;
  }
  if (rc < 0) {
    free(t);
    return rc;
  }
  rc = aos_proc__add(t, &root);
  if (rc < 0) {
    aos_proc__release(&root);
    free(t);
    return rc;
  }
  int pgid = aos_proc__pgid(&t->members[0]);
  if (pgid == pid && pgid != t->self_pgid) t->group = pgid;
  *out = t;
  return 0;
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

/* Whether a held process that is still alive is in the tree's group now. While one
 * is, the group's number cannot be given to another group. */
static bool aos_proc__group_vouched(aos_proc_tree *t) {
  if (t->group == 0) return false;
  for (size_t i = 0; i < t->count; i++) {
    aos_proc__member *m = &t->members[i];
    if (!m->gone && aos_proc__pgid(m) == t->group) return true;
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
    if (aos_proc__hold(&m, e[i].pid, e[i].start, (t->flags & AOS_PROC_NO_PIDFD) != 0) < 0) {
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

/* Sends `sig` to the tree's group, if it has one (never the caller's group). */
static void aos_proc__group(aos_proc_tree *t, int sig) {
  if (t->group == 0 || t->group == t->self_pgid || t->count == 0) return;
  (void)aos_proc__signal_group(&t->members[0], t->members + 1, t->count - 1, sig);
}

/* Sends `sig` to every live member; returns how many it reached. */
static size_t aos_proc__signal_members(aos_proc_tree *t, int sig, bool mark) {
  size_t reached = 0;
  for (size_t i = 0; i < t->count; i++) {
    aos_proc__member *m = &t->members[i];
    if (m->gone) continue;
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
    bool group_before = aos_proc__group_vouched(tree);
    int rc = aos_proc__scan(&entries, &n);
    if (rc < 0) {
      scan_rc = rc;
      n = 0;
    }
    bool group_ok = group_before && aos_proc__group_vouched(tree);
    int added = aos_proc__discover(tree, entries, n, group_ok);
    free(entries);
    if (added < 0) scan_rc = added;
    if ((round > 0 && added <= 0) || round == AOS_PROC__MAX_ROUNDS) break;
    /* Freeze what was found, then walk again: a stopped process cannot fork, so a
     * child forked before the stop is found by the next walk. */
    aos_proc__group(tree, SIGSTOP);
    for (size_t i = 0; i < tree->count; i++) {
      aos_proc__member *m = &tree->members[i];
      if (m->gone || m->stopped) continue;
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

size_t aos_proc_tree_alive(aos_proc_tree *tree) {
  size_t alive = 0;
  for (size_t i = 0; i < tree->count; i++) {
    aos_proc__member *m = &tree->members[i];
    /* The hold is kept until close: the root's handle still names its group. */
    if (!m->gone && aos_proc__gone(m)) m->gone = true;
    if (m->signalled && !m->gone) alive++;
  }
  return alive;
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
