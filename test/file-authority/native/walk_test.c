/* The file-authority walk core alone (src/file_authority/tree.c and the platform's
 * host calls), with no Node-API: built with the host compiler and run by
 * test/file-authority/walk-core.test.js.
 *
 * Usage: walk_test DIR checks      exclude, the budget and `truncated`, the segment
 *                                  limit, stats; one line per check
 *        walk_test DIR wide N K    a directory of N files, walked with maxEntries K in a
 *                                  child process; prints "wide N entries E truncated T
 *                                  ms M peak-kib P" (P: the child's peak resident set
 *                                  growth over the walk)
 *        walk_test DIR budget      a tree whose later directories the budget never
 *                                  reaches, walked with maxEntries 3 (run under strace
 *                                  by the test, which counts the directories read)
 * DIR: an empty directory. Exit status 0 when every check held. */
#include "file_authority/fa.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) failures++;
}

static char base[4096];

static const char *at(const char *name) {
  static char buf[2][8400];
  static int which;
  which ^= 1;
  snprintf(buf[which], sizeof buf[which], "%s/%s", base, name);
  return buf[which];
}

static void put(const char *name, const char *text) {
  FILE *f = fopen(at(name), "wb");
  if (f == NULL) return;
  fputs(text, f);
  fclose(f);
}

/* The walk's entry i as "path/of/it:kind" into out. */
static void path_of(const aos_fa_tree *t, size_t i, char *out, size_t cap) {
  const char *parts[AOS_FA_MAX_SEGMENTS + 1];
  uint32_t d = t->depths[i];
  parts[d] = t->entries[i].name;
  for (size_t j = i; j-- > 0 && d > 0;) {
    if (t->depths[j] == d - 1) parts[--d] = t->entries[j].name;
  }
  size_t used = 0;
  out[0] = '\0';
  for (uint32_t k = 0; k <= t->depths[i]; k++) {
    used += (size_t)snprintf(out + used, cap - used, "%s%s", k > 0 ? "/" : "", parts[k]);
    if (used >= cap) break;
  }
}

static const char *kind_letter(aos_fa_entry_kind k) {
  return k == AOS_FA_KIND_FILE ? "f" : k == AOS_FA_KIND_DIRECTORY ? "d" : k == AOS_FA_KIND_SYMLINK ? "l" : "o";
}

/* The walk as "a:f b:d b/c:f ..." */
static void describe(const aos_fa_tree *t, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < t->count && used < cap; i++) {
    char p[2048];
    path_of(t, i, p, sizeof p);
    used += (size_t)snprintf(out + used, cap - used, "%s%s:%s", i > 0 ? " " : "", p, kind_letter(t->entries[i].kind));
  }
}

static int walk_is(aos_fa_root *root, const char *const *segs, size_t count, aos_fa_walk_opts *o,
                   const char *expected, int truncated, size_t omitted, const char *what) {
  aos_fa_tree t;
  aos_fa_status st;
  int r = aos_fa_tree_walk(root, segs, count, o, &t, &st);
  char got[8192];
  if (r != 0) {
    printf("     walk failed: kind %d err %d\n", st.kind, st.err);
    check(0, what);
    return 0;
  }
  describe(&t, got, sizeof got);
  int ok = strcmp(got, expected) == 0 && (int)t.truncated == truncated && t.omitted == omitted;
  if (!ok) printf("     got \"%s\" truncated %d omitted %zu\n", got, (int)t.truncated, t.omitted);
  check(ok, what);
  aos_fa_tree_free(&t);
  return ok;
}

static aos_fa_walk_opts opts(uint64_t max, uint64_t depth) {
  aos_fa_walk_opts o;
  memset(&o, 0, sizeof o);
  o.max_entries = max;
  o.max_depth = depth;
  return o;
}

static void checks(aos_fa_root *root) {
  /* w/ a.txt b/ (c.txt node_modules/ (x) ) node_modules/ (y/ (z)) .git/ (HEAD) d/ (empty) */
  mkdir(at("w"), 0755);
  put("w/a.txt", "a");
  mkdir(at("w/b"), 0755);
  put("w/b/c.txt", "c");
  mkdir(at("w/b/node_modules"), 0755);
  put("w/b/node_modules/x", "x");
  mkdir(at("w/node_modules"), 0755);
  mkdir(at("w/node_modules/y"), 0755);
  put("w/node_modules/y/z", "z");
  mkdir(at("w/.git"), 0755);
  put("w/.git/HEAD", "h");
  mkdir(at("w/d"), 0755);
  put("w/\xff", "bad name");
  const char *w[1] = {"w"};
  const char *ex[2] = {"node_modules", ".git"};
  aos_fa_walk_opts o = opts(100, UINT64_MAX);
  walk_is(root, w, 1, &o,
          ".git:d .git/HEAD:f a.txt:f b:d b/c.txt:f b/node_modules:d b/node_modules/x:f d:d node_modules:d "
          "node_modules/y:d node_modules/y/z:f",
          0, 1, "the whole tree; the non-UTF-8 name omitted");
  o.exclude = ex;
  o.nexclude = 2;
  walk_is(root, w, 1, &o, "a.txt:f b:d b/c.txt:f d:d", 0, 1, "exclude: left out wherever they occur, with their subtrees");
  o.max_entries = 4;
  walk_is(root, w, 1, &o, "a.txt:f b:d b/c.txt:f d:d", 1, 1,
          "exclude: not counted in maxEntries; the last one listed a directory never read: truncated");
  o.max_entries = 5;
  walk_is(root, w, 1, &o, "a.txt:f b:d b/c.txt:f d:d", 0, 1, "room for one more: d read (empty), not truncated");
  o.max_entries = 2;
  walk_is(root, w, 1, &o, "a.txt:f b:d", 1, 1, "maxEntries 2: b found, not read: truncated");
  o.max_entries = 3;
  walk_is(root, w, 1, &o, "a.txt:f b:d b/c.txt:f", 1, 1, "maxEntries 3: d found, not listed: truncated");
  o.max_entries = 1;
  walk_is(root, w, 1, &o, "a.txt:f", 1, 1, "maxEntries 1");
  o.max_entries = 0;
  walk_is(root, w, 1, &o, "", 1, 0, "maxEntries 0: nothing read, truncated (the directory itself is not visited)");
  o = opts(100, 0);
  o.exclude = ex;
  o.nexclude = 2;
  walk_is(root, w, 1, &o, "a.txt:f b:d d:d", 0, 1, "maxDepth 0: the directory only; a depth bound is no truncation");
  o.max_entries = 3;
  walk_is(root, w, 1, &o, "a.txt:f b:d d:d", 0, 1, "maxDepth 0, exactly maxEntries: not truncated (nothing would be read)");
  const char *ex_b[1] = {"b"};
  o = opts(100, UINT64_MAX);
  o.exclude = ex_b;
  o.nexclude = 1;
  walk_is(root, w, 1, &o,
          ".git:d .git/HEAD:f a.txt:f d:d node_modules:d node_modules/y:d node_modules/y/z:f", 0, 1,
          "exclude of a directory name");
  const char *d[2] = {"w", "d"};
  o = opts(0, UINT64_MAX);
  walk_is(root, d, 2, &o, "", 1, 0, "maxEntries 0 of an empty directory: truncated (not read)");
  o = opts(5, UINT64_MAX);
  walk_is(root, d, 2, &o, "", 0, 0, "an empty directory");

  /* stats: each entry's stat is stat's */
  {
    aos_fa_walk_opts so = opts(100, UINT64_MAX);
    so.with_stats = true;
    so.exclude = ex;
    so.nexclude = 2;
    symlink("a.txt", at("w/b/link"));
    aos_fa_tree t;
    aos_fa_status st;
    int same = aos_fa_tree_walk(root, w, 1, &so, &t, &st) == 0 && t.count == 5;
    for (size_t i = 0; same && i < t.count; i++) {
      char p[1024];
      path_of(&t, i, p, sizeof p);
      const char *segs[4] = {"w"};
      size_t n = 1;
      char *save = NULL;
      for (char *tok = strtok_r(p, "/", &save); tok != NULL; tok = strtok_r(NULL, "/", &save)) segs[n++] = tok;
      aos_fa_stat_info s;
      const aos_fa_stat_info *e = t.entries[i].stat;
      same = e != NULL && aos_fa_stat(root, segs, n, &s, &st) == 0 && s.kind == e->kind && s.size == e->size &&
             s.mtime_ns == e->mtime_ns && s.mode == e->mode && aos_fa_version_equal(&s.version, &e->version) &&
             t.entries[i].kind == e->kind;
    }
    check(same, "withStats: every entry's stat is what stat returns; a link's own");
    if (t.count > 0) aos_fa_tree_free(&t);
    unlink(at("w/b/link"));
  }

  /* the segment limit: a chain of directories deeper than 255 segments */
  {
    char path[8400];
    snprintf(path, sizeof path, "%s/deep", base);
    mkdir(path, 0755);
    size_t len = strlen(path);
    for (int i = 0; i < 260; i++) {
      memcpy(path + len, "/d", 3);
      len += 2;
      if (mkdir(path, 0755) != 0) break;
    }
    const char *deep[1] = {"deep"};
    aos_fa_walk_opts lo = opts(1000, UINT64_MAX);
    aos_fa_tree t;
    aos_fa_status st;
    int r = aos_fa_tree_walk(root, deep, 1, &lo, &t, &st);
    uint32_t maxd = 0;
    for (size_t i = 0; r == 0 && i < t.count; i++) maxd = t.depths[i] > maxd ? t.depths[i] : maxd;
    /* from the root: "deep" plus depth + 1 segments; at most 255 */
    check(r == 0 && t.count == 254 && maxd == 253 && 1 + maxd + 1 == AOS_FA_MAX_SEGMENTS,
          "the segment limit: paths from the root stop at 255 segments");
    check(r == 0 && t.omitted == 1 && t.truncated, "the subtree the limit keeps out: omitted 1, truncated");
    if (r == 0) aos_fa_tree_free(&t);
    lo.max_depth = 10;
    r = aos_fa_tree_walk(root, deep, 1, &lo, &t, &st);
    check(r == 0 && t.count == 11 && t.omitted == 0 && !t.truncated, "a depth bound below the limit: no omission");
    if (r == 0) aos_fa_tree_free(&t);
  }
}

/* ---------------------------------------------------------------------- wide */

static long peak_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long v = -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "VmHWM:", 6) == 0) v = atol(line + 6);
  }
  fclose(f);
  return v;
}

static void wide(aos_fa_root *root, long n, uint64_t k) {
  mkdir(at("wide"), 0755);
  int dir = open(at("wide"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (long i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%07ld", (i * 7919) % n);
    int fd = openat(dir, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
  }
  close(dir);
  int p[2];
  if (pipe(p) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    long before = peak_kib();
    const char *segs[1] = {"wide"};
    aos_fa_walk_opts o = opts(k, UINT64_MAX);
    aos_fa_tree t;
    aos_fa_status st;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = aos_fa_tree_walk(root, segs, 1, &o, &t, &st);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long after = peak_kib();
    char out[256];
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    int len = snprintf(out, sizeof out, "wide %ld entries %zu truncated %d first %s ms %.1f peak-kib %ld\n", n,
                       r == 0 ? t.count : 0, r == 0 ? (int)t.truncated : -1, r == 0 && t.count > 0 ? t.entries[0].name : "-",
                       ms, after - before);
    ssize_t w = write(p[1], out, (size_t)len);
    (void)w;
    _exit(r == 0 ? 0 : 1);
  }
  close(p[1]);
  char buf[256] = {0};
  ssize_t got = read(p[0], buf, sizeof buf - 1);
  close(p[0]);
  int status;
  waitpid(pid, &status, 0);
  if (got > 0) fputs(buf, stdout);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the wide walk ran");
}

/* -------------------------------------------------------------------- budget */

static void budget(aos_fa_root *root) {
  /* t/ a/ (1 2) b/ (3) c/ (4) ... j/: with maxEntries 3 the walk lists a, a/1, a/2 and
   * reads only t and a. */
  mkdir(at("t"), 0755);
  const char *dirs = "abcdefghij";
  for (const char *c = dirs; *c != '\0'; c++) {
    char name[16];
    snprintf(name, sizeof name, "t/%c", *c);
    mkdir(at(name), 0755);
    snprintf(name, sizeof name, "t/%c/1", *c);
    put(name, "1");
    snprintf(name, sizeof name, "t/%c/2", *c);
    put(name, "2");
  }
  fflush(stdout);
  /* Marks what follows in the trace. */
  (void)access("/aos-walk-budget-start", F_OK);
  const char *t[1] = {"t"};
  aos_fa_walk_opts o = opts(3, UINT64_MAX);
  walk_is(root, t, 1, &o, "a:d a/1:f a/2:f", 1, 0, "maxEntries 3 over ten directories: truncated");
  (void)access("/aos-walk-budget-end", F_OK);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: walk_test DIR checks | wide N K | budget\n");
    return 2;
  }
  snprintf(base, sizeof base, "%s", argv[1]);
  int fd;
  aos_fa_status st;
  if (aos_fa_root_open(base, &fd, &st) != 0) {
    fprintf(stderr, "root open failed\n");
    return 2;
  }
  aos_fa_root root = {fd, AOS_FA_RESOLVE_PORTABLE, NULL};
  const char *resolver = getenv("WALK_TEST_RESOLVER");
  if (resolver != NULL && strcmp(resolver, "openat2") == 0) root.resolver = AOS_FA_RESOLVE_OPENAT2;
  if (strcmp(argv[2], "checks") == 0) {
    checks(&root);
  } else if (strcmp(argv[2], "wide") == 0 && argc > 4) {
    wide(&root, atol(argv[3]), (uint64_t)atoll(argv[4]));
  } else if (strcmp(argv[2], "budget") == 0) {
    budget(&root);
  } else {
    return 2;
  }
  aos_fa_root_close(fd);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
