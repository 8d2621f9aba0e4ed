/* Windows implementation of src/process/process.h.
 *
 * Windows has no graceful signal for a console-less tree, so every "signal" ends
 * the processes found at once with TerminateProcess; `sig` is ignored. Processes are
 * found from a Toolhelp snapshot by their parent process id and held by a process
 * handle (OpenProcess), which keeps the pid from being reused while it is open: a
 * handle always names the process it was opened on. A parent id in the snapshot may
 * be stale (the parent exited and its id was reused), so a process counts as a
 * descendant only if it was created after the held parent it names. */
#include "process/process.h"

#include <windows.h>
#include <tlhelp32.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#define AOS_PROC__MAX_ROUNDS 32

typedef struct {
  DWORD pid;
  HANDLE handle;
  ULONGLONG created; /* creation time, 100 ns units */
  bool signalled; /* terminated by some call */
  bool hit;       /* terminated by the current call */
  bool gone;
} aos_proc__wmember;

struct aos_proc_tree {
  DWORD self;
  aos_proc__wmember *members;
  size_t count;
  size_t cap;
};

typedef struct {
  DWORD pid;
  DWORD ppid;
} aos_proc__wentry;

static int aos_proc__errno(DWORD err) {
  switch (err) {
    case ERROR_INVALID_PARAMETER: /* no process with that id */
      return -ESRCH;
    case ERROR_ACCESS_DENIED:
      return -EPERM;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
      return -ENOMEM;
    default:
      return -EIO;
  }
}

static bool aos_proc__exited(HANDLE h) { return WaitForSingleObject(h, 0) == WAIT_OBJECT_0; }

static int aos_proc__hold(DWORD pid, aos_proc__wmember *m) {
  *m = (aos_proc__wmember){.pid = pid};
  HANDLE h = OpenProcess(PROCESS_TERMINATE | SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION,
                         FALSE, pid);
  if (h == NULL) return aos_proc__errno(GetLastError());
  FILETIME created, exited, kernel, user;
  if (!GetProcessTimes(h, &created, &exited, &kernel, &user)) {
    int rc = aos_proc__errno(GetLastError());
    CloseHandle(h);
    return rc;
  }
  if (aos_proc__exited(h)) {
    CloseHandle(h);
    return -ESRCH;
  }
  m->handle = h;
  m->created = ((ULONGLONG)created.dwHighDateTime << 32) | created.dwLowDateTime;
  return 0;
}

static int aos_proc__add(aos_proc_tree *t, const aos_proc__wmember *m) {
  if (t->count == t->cap) {
    size_t cap = t->cap == 0 ? 16 : t->cap * 2;
    aos_proc__wmember *grown = realloc(t->members, cap * sizeof *grown);
    if (grown == NULL) return -ENOMEM;
    t->members = grown;
    t->cap = cap;
  }
  t->members[t->count++] = *m;
  return 0;
}

int aos_proc_tree_open(int pid, unsigned flags, aos_proc_tree **out) {
  *out = NULL;
  if (pid <= 0 || (DWORD)pid == GetCurrentProcessId()) return -EINVAL;
  aos_proc_tree *t = calloc(1, sizeof *t);
  if (t == NULL) return -ENOMEM;
  t->self = GetCurrentProcessId();
  if (flags & AOS_PROC_REAPED) {
    *out = t; /* its id may name another process by now; no groups to end here */
    return 0;
  }
  aos_proc__wmember root;
  int rc = aos_proc__hold((DWORD)pid, &root);
  if (rc == 0) {
    rc = aos_proc__add(t, &root);
    if (rc < 0) CloseHandle(root.handle);
  } else if (rc == -ESRCH) {
    rc = 0; /* already gone: nothing to walk from */
  }
  if (rc < 0) {
    free(t);
    return rc;
  }
  *out = t;
  return 0;
}

static int aos_proc__snapshot(aos_proc__wentry **out, size_t *count) {
  *out = NULL;
  *count = 0;
  HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
  if (snap == INVALID_HANDLE_VALUE) return aos_proc__errno(GetLastError());
  PROCESSENTRY32W pe;
  pe.dwSize = sizeof pe;
  aos_proc__wentry *e = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (BOOL more = Process32FirstW(snap, &pe); more; more = Process32NextW(snap, &pe)) {
    if (n == cap) {
      size_t ncap = cap == 0 ? 256 : cap * 2;
      aos_proc__wentry *grown = realloc(e, ncap * sizeof *grown);
      if (grown == NULL) {
        rc = -ENOMEM;
        break;
      }
      e = grown;
      cap = ncap;
    }
    e[n++] = (aos_proc__wentry){.pid = pe.th32ProcessID, .ppid = pe.th32ParentProcessID};
  }
  CloseHandle(snap);
  if (rc < 0) {
    free(e);
    return rc;
  }
  *out = e;
  *count = n;
  return 0;
}

static bool aos_proc__held(const aos_proc_tree *t, DWORD pid) {
  for (size_t i = 0; i < t->count; i++) {
    if (!t->members[i].gone && t->members[i].pid == pid) return true;
  }
  return false;
}

/* Holds every process of the snapshot whose parent is a live member and that was
 * created after it, repeating until nothing new is found. Returns how many were
 * added, or a negative errno. */
static int aos_proc__discover(aos_proc_tree *t, const aos_proc__wentry *e, size_t n) {
  int added = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; i++) {
      if (e[i].pid == t->self || e[i].pid == 0 || aos_proc__held(t, e[i].pid)) continue;
      for (size_t j = 0; j < t->count; j++) {
        aos_proc__wmember *parent = &t->members[j];
        if (parent->gone || parent->pid != e[i].ppid) continue;
        aos_proc__wmember m;
        if (aos_proc__hold(e[i].pid, &m) < 0) break;
        if (m.created < parent->created) { /* stale parent id: not its child */
          CloseHandle(m.handle);
          break;
        }
        int rc = aos_proc__add(t, &m);
        if (rc < 0) {
          CloseHandle(m.handle);
          return rc;
        }
        added++;
        changed = true;
        break;
      }
    }
  }
  return added;
}

int aos_proc_tree_signal(aos_proc_tree *tree, int sig, size_t *signalled) {
  (void)sig;
  *signalled = 0;
  int scan_rc = 0;
  for (int round = 0; round < AOS_PROC__MAX_ROUNDS; round++) {
    aos_proc__wentry *e = NULL;
    size_t n = 0;
    int rc = aos_proc__snapshot(&e, &n);
    if (rc < 0) scan_rc = rc;
    int added = rc < 0 ? 0 : aos_proc__discover(tree, e, n);
    free(e);
    if (added < 0) scan_rc = added;
    if (round > 0 && added <= 0) break;
    /* Children first (they were added after their parents); a terminated process
     * cannot start another, so the next snapshot finds whatever started meanwhile. */
    for (size_t i = tree->count; i-- > 0;) {
      aos_proc__wmember *m = &tree->members[i];
      if (m->gone || m->hit) continue;
      if (TerminateProcess(m->handle, 1)) {
        (*signalled)++;
        m->signalled = true;
        m->hit = true;
      } else if (aos_proc__exited(m->handle)) {
        m->gone = true;
      }
    }
  }
  for (size_t i = 0; i < tree->count; i++) tree->members[i].hit = false;
  return scan_rc;
}

int aos_proc_is_thread(int id) {
  if (id <= 0) return 0;
  /* Process and thread ids come from one pool: an id OpenThread accepts names a
   * thread, never a process. */
  HANDLE h = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)id);
  if (h == NULL) return 0;
  CloseHandle(h);
  return 1;
}

unsigned aos_proc_tree_caller(const aos_proc_tree *tree) {
  (void)tree;
  return 0; /* a process handle holds every process here */
}

size_t aos_proc_tree_alive(aos_proc_tree *tree, bool root_reaped) {
  (void)root_reaped; /* the root's handle tells */
  size_t alive = 0;
  for (size_t i = 0; i < tree->count; i++) {
    aos_proc__wmember *m = &tree->members[i];
    if (!m->gone && aos_proc__exited(m->handle)) m->gone = true;
    if (m->signalled && !m->gone) alive++;
  }
  return alive;
}

int aos_proc_tree_settle(aos_proc_tree *tree, int sig, bool root_reaped, size_t *pending) {
  /* No process groups here: walking once more terminates anything started below a
   * live member since the last walk. */
  size_t signalled = 0;
  int rc = aos_proc_tree_signal(tree, sig, &signalled);
  *pending = aos_proc_tree_alive(tree, root_reaped);
  return rc;
}

size_t aos_proc_tree_pids(const aos_proc_tree *tree, int *pids, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < tree->count; i++) {
    if (!tree->members[i].signalled) continue;
    if (n < cap) pids[n] = (int)tree->members[i].pid;
    n++;
  }
  return n;
}

void aos_proc_tree_close(aos_proc_tree *tree) {
  if (tree == NULL) return;
  for (size_t i = 0; i < tree->count; i++) CloseHandle(tree->members[i].handle);
  free(tree->members);
  free(tree);
}
