/* file-authority: the bounded walk beneath a directory (every platform; the host calls
 * are tree.h's primitives, in posix_tree.c and win32_tree.c).
 *
 * Depth-first, each directory's entries in code-unit order, a directory before its
 * contents. It never resolves a path below the walked directory: each child directory
 * is opened from its parent's descriptor without following it, so a link is never
 * followed and a directory renamed or swapped while the walk runs is entered only if
 * it is a directory at that name in a directory the walk holds open. Holds one
 * descriptor per level.
 *
 * The budget bounds the work as well as the result:
 * - Once max_entries entries are listed, no further directory is read.
 * - A directory is read (every name looked at: in code-unit order any name could come
 *   first) keeping only the `room` smallest names, room being the entries that could
 *   still be listed when it is read: the names are offered to a bounded max-heap, so a
 *   directory of n names costs n comparisons and room allocations, not n of each and a
 *   sort of n. Excluded names and names that are not UTF-8 are never kept.
 * - An entry's kind, when the listing did not give it, is looked at only when the walk
 *   reaches it; with stats, a directory's kept entries are looked at together once it
 *   is read (one wait for the versions that must settle).
 * Confinement: each directory is watched while it is read, then checked to be beneath
 * the root and not moved meanwhile (FILE_CHANGED otherwise; tree.h).
 * `truncated` is set when the walk stops with anything it found not visited: a kept
 * entry not yet listed, a name not kept, or the last entry listed being a directory the
 * walk would have read (found, not read: not visited, empty or not); and for a subtree
 * the segment limit keeps it out of. */
#include "file_authority/fa.h"
#include "file_authority/tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void aos_fa_tree_free(aos_fa_tree *tree) {
  if (tree->entries != NULL) {
    for (size_t i = 0; i < tree->count; i++) free(tree->entries[i].name);
  }
  free(tree->entries);
  free(tree->depths);
  tree->entries = NULL;
  tree->depths = NULL;
  tree->count = 0;
}

/* ---- the excluded names: sorted by length then bytes, looked up by bisection */

static int aos_fa__excl_cmp(const char *a, size_t alen, const char *b, size_t blen) {
  if (alen != blen) return alen < blen ? -1 : 1;
  return memcmp(a, b, alen);
}

static int aos_fa__excl_sort(const void *pa, const void *pb) {
  const char *a = *(const char *const *)pa;
  const char *b = *(const char *const *)pb;
  return aos_fa__excl_cmp(a, strlen(a), b, strlen(b));
}

typedef struct {
  const char **v;
  size_t *lens;
  size_t n;
} aos_fa__excludes;

static bool aos_fa__excluded(const aos_fa__excludes *x, const char *name, size_t len) {
  size_t lo = 0, hi = x->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = aos_fa__excl_cmp(x->v[mid], x->lens[mid], name, len);
    if (c == 0) return true;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/* ---- one directory's kept names: a bounded selection of the smallest */

typedef struct {
  aos_fa_entry *v; /* kept entries; a max-heap by name once `heap` */
  size_t n, cap;
  uint64_t room;   /* the most names kept */
  size_t dropped;  /* names found (valid, not excluded) but not kept */
  bool heap;
  bool with_stats;
  const aos_fa__excludes *x;
  size_t *omitted;
} aos_fa__sel;

static int aos_fa__name_cmp(const aos_fa_entry *a, const aos_fa_entry *b) {
  return aos_fa_name_compare(a->name, a->len, b->name, b->len);
}

static void aos_fa__sift_down(aos_fa_entry *v, size_t n, size_t i) {
  for (;;) {
    size_t big = i, l = 2 * i + 1, r = l + 1;
    if (l < n && aos_fa__name_cmp(&v[l], &v[big]) > 0) big = l;
    if (r < n && aos_fa__name_cmp(&v[r], &v[big]) > 0) big = r;
    if (big == i) return;
    aos_fa_entry t = v[i];
    v[i] = v[big];
    v[big] = t;
    i = big;
  }
}

static int aos_fa__offer(void *ctx, const char *name, size_t len, aos_fa_entry_kind kind) {
  aos_fa__sel *s = ctx;
  if (name == NULL) {
    (*s->omitted)++;
    return 0;
  }
  if (len == 1 && name[0] == '.') return 0;
  if (len == 2 && name[0] == '.' && name[1] == '.') return 0;
  if (!aos_fa_utf8_valid((const uint8_t *)name, len)) {
    (*s->omitted)++;
    return 0;
  }
  if (s->x->n > 0 && aos_fa__excluded(s->x, name, len)) return 0;
  if (s->room == 0) {
    s->dropped++;
    return 0;
  }
  if (s->n < s->room) {
    if (s->n == s->cap) {
      size_t ncap = s->cap == 0 ? 16 : s->cap * 2;
      if ((uint64_t)ncap > s->room) ncap = (size_t)s->room;
      aos_fa_entry *nv = realloc(s->v, ncap * sizeof *nv);
      if (nv == NULL) return ENOMEM;
      s->v = nv;
      s->cap = ncap;
    }
    if (!aos_fa_entry_init(&s->v[s->n], name, len, kind, s->with_stats)) return ENOMEM;
    s->n++;
    return 0;
  }
  /* Full: keep the name only if it comes before the greatest kept one. */
  if (!s->heap) {
    for (size_t i = s->n / 2; i-- > 0;) aos_fa__sift_down(s->v, s->n, i);
    s->heap = true;
  }
  s->dropped++;
  if (aos_fa_name_compare(name, len, s->v[0].name, s->v[0].len) >= 0) return 0;
  aos_fa_entry e;
  if (!aos_fa_entry_init(&e, name, len, kind, s->with_stats)) return ENOMEM;
  free(s->v[0].name);
  s->v[0] = e;
  aos_fa__sift_down(s->v, s->n, 0);
  return 0;
}

static void aos_fa__sel_free(aos_fa__sel *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i].name);
  free(s->v);
  s->v = NULL;
  s->n = s->cap = 0;
}

/* ---- the walk */

typedef struct {
  int dir;         /* this directory, open (to open children and look at entries by) */
  aos_fa_entry *v; /* its kept entries, sorted */
  size_t n, next;
  size_t dropped;  /* names found but not kept */
} aos_fa__frame;

/* Reads the directory `dir` into frame f with room for `room` names, watched while it
 * is read and checked after (tree.h); with stats, the kept entries' stats. 0, or the
 * failure with *st filled. On failure `dir` is not taken (the caller closes it). */
static int aos_fa__read(const aos_fa_root *root, int watch, bool watched, const aos_fa__excludes *x, bool with_stats,
                        int dir, uint64_t room, size_t *omitted, aos_fa__frame *f, aos_fa_status *st) {
  aos_fa__sel s = {NULL, 0, 0, room, 0, false, with_stats, x, omitted};
  int wd = watched ? aos_fa_tree_watch(watch, dir) : -1;
  int e = aos_fa_tree_scan(dir, aos_fa__offer, &s);
  int r;
  if (e == 0) {
    r = aos_fa_tree_confined(root, watch, wd, dir, st);
  } else {
    aos_fa_tree_unwatch(watch, wd);
    r = aos_fa_fail(st, AOS_FA_HOST_IO, e, -1);
  }
  if (r == 0) {
    aos_fa_listing l = {s.v, s.n, 0};
    aos_fa_listing_sort(&l);
    s.v = l.entries;
    if (with_stats) r = aos_fa_tree_stat_entries(dir, s.v, &s.n, st);
  }
  if (r != 0) {
    aos_fa__sel_free(&s);
    return r;
  }
  f->dir = dir;
  f->v = s.v;
  f->n = s.n;
  f->next = 0;
  f->dropped = s.dropped;
  return 0;
}

static void aos_fa__frame_free(aos_fa__frame *f) {
  for (size_t i = f->next; i < f->n; i++) free(f->v[i].name);
  free(f->v);
  f->v = NULL;
  f->n = f->next = 0;
  if (f->dir >= 0) aos_fa_tree_close(f->dir);
  f->dir = -1;
}

/* Appends one entry (taking its name) at `depth`. 0 or ENOMEM. */
static int aos_fa__emit(aos_fa_tree *out, size_t *cap, aos_fa_entry *e, uint32_t depth) {
  if (out->count == *cap) {
    size_t ncap = *cap == 0 ? 64 : *cap * 2;
    aos_fa_entry *n = realloc(out->entries, ncap * sizeof *n);
    if (n == NULL) return ENOMEM;
    out->entries = n;
    uint32_t *dn = realloc(out->depths, ncap * sizeof *dn);
    if (dn == NULL) return ENOMEM;
    out->depths = dn;
    *cap = ncap;
  }
  out->entries[out->count] = *e;
  out->depths[out->count] = depth;
  out->count++;
  e->name = NULL;
  return 0;
}

/* Whether anything found is left unvisited in the frames 0..top. */
static bool aos_fa__unvisited(const aos_fa__frame *stack, size_t top) {
  for (size_t i = 0; i <= top; i++) {
    if (stack[i].next < stack[i].n || stack[i].dropped > 0) return true;
  }
  return false;
}

int aos_fa_tree_walk(const aos_fa_root *root, const char *const *segs, size_t count,
                     const aos_fa_walk_opts *opts, aos_fa_tree *out, aos_fa_status *st) {
  memset(out, 0, sizeof *out);
  int at = count == 0 ? -1 : (int)count - 1;
  int fd;
  int r = aos_fa_walk(root, segs, count, AOS_FA_WALK_LIST, &fd, st);
  if (r != 0) return r;
  uint64_t max_entries = opts->max_entries;
  if (max_entries == 0) {
    /* Nothing may be listed, so nothing is read: the walked directory itself is found
     * and not visited. */
    aos_fa_tree_close(fd);
    out->truncated = true;
    aos_fa_status_ok(st);
    return 0;
  }
  /* Paths stay usable as segment lists: at most AOS_FA_MAX_SEGMENTS from the root (an
   * entry at depth d has count + d + 1 segments), so a directory at depth d is entered
   * only while d < limit. */
  uint64_t limit = count >= AOS_FA_MAX_SEGMENTS - 1 ? 0 : AOS_FA_MAX_SEGMENTS - 1 - count;
  aos_fa__excludes x = {NULL, NULL, 0};
  if (opts->nexclude > 0) {
    x.v = malloc(opts->nexclude * sizeof *x.v);
    x.lens = malloc(opts->nexclude * sizeof *x.lens);
    if (x.v == NULL || x.lens == NULL) {
      free(x.v);
      free(x.lens);
      aos_fa_tree_close(fd);
      return aos_fa_fail(st, AOS_FA_HOST_IO, ENOMEM, at);
    }
    memcpy(x.v, opts->exclude, opts->nexclude * sizeof *x.v);
    qsort(x.v, opts->nexclude, sizeof *x.v, aos_fa__excl_sort);
    for (size_t i = 0; i < opts->nexclude; i++) x.lens[i] = strlen(x.v[i]);
    x.n = opts->nexclude;
  }
  aos_fa__frame stack[AOS_FA_MAX_SEGMENTS];
  size_t top = 0, cap = 0;
  int e = 0;
  aos_fa_status fst; /* the failure of a directory's read, when e says so */
  /* One watch instance for the walk; [] is the root, never watched (a move of the
   * root's own pathname changes nothing for the authority). */
  int watch = aos_fa_tree_watch_open();
  if (aos_fa__read(root, watch, count > 0, &x, opts->with_stats, fd, max_entries, &out->omitted, &stack[0], &fst) != 0) {
    aos_fa_tree_watch_close(watch);
    aos_fa_tree_close(fd);
    free(x.v);
    free(x.lens);
    if (fst.kind == AOS_FA_HOST_IO) return aos_fa_fail(st, AOS_FA_HOST_IO, fst.err, at);
    *st = fst;
    return -EIO;
  }
  for (;;) {
    aos_fa__frame *f = &stack[top];
    if (f->next == f->n) {
      aos_fa__frame_free(f);
      if (top == 0) break;
      top--;
      continue;
    }
    aos_fa_entry *en = &f->v[f->next];
    /* The entry's kind, looked at now that the walk reached it (with stats it is the
     * stat's already). */
    int le = 0;
    if (en->kind == AOS_FA_KIND_UNKNOWN) le = aos_fa_tree_kind_at(f->dir, en->name, &en->kind);
    if (le == ENOENT) { /* removed meanwhile */
      free(en->name);
      f->next++;
      continue;
    }
    if (le != 0) {
      e = le;
      break;
    }
    bool is_dir = en->kind == AOS_FA_KIND_DIRECTORY && top < opts->max_depth;
    bool beyond = is_dir && top >= limit; /* the segment limit: not entered */
    bool last = out->count + 1 == max_entries;
    int child = -1;
    if (is_dir && !beyond && !last) {
      /* Opened before it is listed: one replaced by another kind since the listing is
       * left out with its subtree, as the contract says. */
      int ce = aos_fa_tree_open_child(f->dir, en->name, &child);
      if (ce == ENOENT || ce == ELOOP || ce == ENOTDIR) {
        if (ce != ENOENT) out->omitted++;
        free(en->name);
        f->next++;
        continue;
      }
      if (ce != 0) {
        e = ce;
        break;
      }
    }
    f->next++;
    e = aos_fa__emit(out, &cap, en, (uint32_t)top);
    if (e != 0) {
      free(en->name);
      if (child >= 0) aos_fa_tree_close(child);
      break;
    }
    if (beyond) {
      out->omitted++;
      out->truncated = true;
    }
    if (last) {
      /* The budget is spent: no further directory is read. */
      if ((is_dir && !beyond) || aos_fa__unvisited(stack, top)) out->truncated = true;
      break;
    }
    if (child < 0) continue;
    aos_fa__frame *nf = &stack[top + 1];
    if (aos_fa__read(root, watch, true, &x, opts->with_stats, child, max_entries - out->count, &out->omitted, nf, &fst) != 0) {
      aos_fa_tree_close(child);
      e = -1; /* fst says what */
      break;
    }
    top++;
  }
  for (size_t i = 0; i <= top; i++) {
    if (stack[i].v != NULL || stack[i].dir >= 0) aos_fa__frame_free(&stack[i]);
  }
  aos_fa_tree_watch_close(watch);
  free(x.v);
  free(x.lens);
  if (e != 0) {
    aos_fa_tree_free(out);
    if (e > 0) return aos_fa_fail(st, AOS_FA_HOST_IO, e, at);
    /* A directory's read failed: moved out (FILE_CHANGED, no index), versions that
     * cannot be told apart, or the host (at the walked directory's index). */
    if (fst.kind == AOS_FA_HOST_IO) return aos_fa_fail(st, AOS_FA_HOST_IO, fst.err, at);
    *st = fst;
    return -EIO;
  }
  aos_fa_status_ok(st);
  return 0;
}
