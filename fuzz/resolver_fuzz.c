/* libFuzzer target: the resolver, reads and listings of the C core
 * (src/file_authority/posix_walk.c, posix_read.c, posix_list.c) on a real directory
 * tree with hostile links, built once in a temporary directory:
 *
 *   base/root/f            "INSIDE"        base/outside/secret  "OUTSIDE"
 *   base/root/empty        ""              base/root/l1 -> ../outside
 *   base/root/a/b/f        "INSIDE"        base/root/abs -> base/outside
 *   base/root/a/hard       hard link of root/f (an ordinary entry)
 *   base/root/a/b/up -> ../../..           base/root/a/l2 -> /
 *   base/root/a/l3 -> b                    base/root/fifo (a FIFO, no writer)
 *
 * Input: byte 0 picks the resolver (bit 0), the operation (bits 1-2: walk, read,
 * list) and the read budget (bits 3-7); the rest is split at 0x00 into segments, and a
 * one-byte segment 0x01..0x10 stands for a name of the dictionary below (so the fuzzer
 * reaches real entries quickly). Invariants: a walk's result is a directory under the
 * root (its inode is one recorded at build time); a read returns only "INSIDE" or
 * "" (never "OUTSIDE"); a listing names only entries of the tree (never "secret");
 * nothing blocks on the FIFO; no descriptor is leaked. */
#include "file_authority/fa.h"
#include "fuzz_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const kDict[] = {
  "a", "b", "f", "empty", "l1", "abs", "hard", "up", "l2", "l3", "fifo",
  "..", ".", "outside", "secret", "missing"
};
#define DICT_LEN (sizeof kDict / sizeof kDict[0])

#define MAX_INODES 64
static struct {
  char base[PATH_MAX];
  int root_fd;
  dev_t dev[MAX_INODES];
  ino_t ino[MAX_INODES];
  bool is_dir[MAX_INODES];
  size_t n;
} g;

static void record(const char *path) {
  struct stat sb;
  AOS_FUZZ_CHECK(lstat(path, &sb) == 0, "lstat during setup");
  AOS_FUZZ_CHECK(g.n < MAX_INODES, "too many inodes");
  g.dev[g.n] = sb.st_dev;
  g.ino[g.n] = sb.st_ino;
  g.is_dir[g.n] = S_ISDIR(sb.st_mode);
  g.n++;
}

static void put(const char *rel, const char *content) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/%s", g.base, rel);
  FILE *f = fopen(p, "w");
  AOS_FUZZ_CHECK(f != NULL, "create fixture file");
  fputs(content, f);
  fclose(f);
}

static void path_of(char *out, size_t size, const char *rel) {
  snprintf(out, size, "%s/%s", g.base, rel);
}

static void cleanup(void) {
  char cmd[PATH_MAX + 16];
  if (g.base[0] == '\0') return;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g.base);
  if (system(cmd) != 0) fprintf(stderr, "could not remove the fuzz tree\n");
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  const char *tmp = getenv("TMPDIR");
  snprintf(g.base, sizeof g.base, "%s/aos-resolver-fuzz-XXXXXX", tmp ? tmp : "/tmp");
  AOS_FUZZ_CHECK(mkdtemp(g.base) != NULL, "mkdtemp");
  atexit(cleanup);
  char p[PATH_MAX], q[PATH_MAX];
  const char *dirs[] = { "root", "outside", "root/a", "root/a/b" };
  for (size_t i = 0; i < 4; i++) {
    path_of(p, sizeof p, dirs[i]);
    AOS_FUZZ_CHECK(mkdir(p, 0755) == 0, "mkdir");
  }
  put("outside/secret", "OUTSIDE");
  put("root/f", "INSIDE");
  put("root/empty", "");
  put("root/a/b/f", "INSIDE");
  path_of(p, sizeof p, "root/f");
  path_of(q, sizeof q, "root/a/hard");
  AOS_FUZZ_CHECK(link(p, q) == 0, "link");
  path_of(p, sizeof p, "root/l1");
  AOS_FUZZ_CHECK(symlink("../outside", p) == 0, "symlink l1");
  path_of(p, sizeof p, "root/abs");
  path_of(q, sizeof q, "outside");
  AOS_FUZZ_CHECK(symlink(q, p) == 0, "symlink abs");
  path_of(p, sizeof p, "root/a/b/up");
  AOS_FUZZ_CHECK(symlink("../../..", p) == 0, "symlink up");
  path_of(p, sizeof p, "root/a/l2");
  AOS_FUZZ_CHECK(symlink("/", p) == 0, "symlink l2");
  path_of(p, sizeof p, "root/a/l3");
  AOS_FUZZ_CHECK(symlink("b", p) == 0, "symlink l3");
  path_of(p, sizeof p, "root/fifo");
  AOS_FUZZ_CHECK(mkfifo(p, 0644) == 0, "mkfifo");
  const char *inside[] = { "root", "root/a", "root/a/b", "root/f", "root/empty", "root/a/b/f",
                           "root/l1", "root/abs", "root/a/b/up", "root/a/l2", "root/a/l3", "root/fifo" };
  for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++) {
    path_of(p, sizeof p, inside[i]);
    record(p);
  }
  path_of(p, sizeof p, "root");
  aos_fa_status st;
  AOS_FUZZ_CHECK(aos_fa_root_open(p, &g.root_fd, &st) == 0, "root open");
  return 0;
}

static bool known_dir(int fd) {
  struct stat sb;
  AOS_FUZZ_CHECK(fstat(fd, &sb) == 0, "fstat of a walk result");
  for (size_t i = 0; i < g.n; i++) {
    if (g.dev[i] == sb.st_dev && g.ino[i] == sb.st_ino) return g.is_dir[i];
  }
  return false;
}

static bool known_name(const char *name) {
  static const char *const names[] = { "a", "b", "f", "empty", "hard", "l1", "abs", "up",
                                       "l2", "l3", "fifo" };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strcmp(name, names[i]) == 0) return true;
  }
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  uint8_t ctl = data[0];
  aos_fa_root root = { g.root_fd, (ctl & 1u) ? AOS_FA_RESOLVE_PORTABLE : AOS_FA_RESOLVE_OPENAT2, NULL };
  if (root.resolver == AOS_FA_RESOLVE_OPENAT2 && !aos_fa_openat2_available()) {
    root.resolver = AOS_FA_RESOLVE_PORTABLE;
  }
  unsigned op = (ctl >> 1) & 3u;
  uint64_t budget = (uint64_t)(ctl >> 3) * 2u; /* 0..62: below and above 6 bytes */

  aos_fuzz_list l;
  aos_fuzz_split(data + 1, size - 1, 300, &l);
  for (size_t i = 0; i < l.count; i++) {
    unsigned char c = (unsigned char)l.segs[i][0];
    if (c >= 1 && c <= DICT_LEN && l.segs[i][1] == '\0') {
      free(l.segs[i]);
      l.segs[i] = strdup(kDict[c - 1]);
      AOS_FUZZ_CHECK(l.segs[i] != NULL, "strdup");
    }
  }
  const char *const *segs = (const char *const *)l.segs;
  aos_fa_status st;
  /* The lowest free descriptor before the operation: a leak would change it. */
  int before = fcntl(0, F_DUPFD_CLOEXEC, 0);
  AOS_FUZZ_CHECK(before >= 0, "probe");
  close(before);
  if (op == 0 || op == 3) {
    int fd = -1;
    unsigned flags = op == 3 ? AOS_FA_WALK_LIST : 0;
    int r = aos_fa_walk(&root, segs, l.count, flags, &fd, &st);
    if (r == 0) {
      AOS_FUZZ_CHECK(fd >= 0, "walk succeeded without a descriptor");
      AOS_FUZZ_CHECK(known_dir(fd), "walk escaped the root (unknown or non-directory inode)");
      close(fd);
    } else {
      AOS_FUZZ_CHECK(fd == -1, "failed walk returned a descriptor");
      AOS_FUZZ_CHECK(st.kind != AOS_FA_OK, "failure without a kind");
    }
  } else if (op == 1) {
    /* Three reads: without kept descriptors, then twice through a cache of them (the
     * third takes the descriptor the second kept); all three must agree. The cache is
     * freed before the leak probe below. */
    aos_fa_root kept = root;
    kept.fdcache = aos_fa_fdcache_new();
    AOS_FUZZ_CHECK(kept.fdcache != NULL, "cache");
    int first = 0;
    for (int pass = 0; pass < 3; pass++) {
      uint8_t *bytes = NULL;
      size_t len = 0;
      int r = aos_fa_read(pass == 0 ? &root : &kept, segs, l.count, budget, &bytes, &len, NULL, &st);
      if (pass == 0) first = r;
      AOS_FUZZ_CHECK(r == first, "a read through a kept descriptor differs from a first read");
      if (r == 0) {
        AOS_FUZZ_CHECK(bytes != NULL, "read succeeded without a buffer");
        AOS_FUZZ_CHECK(len <= budget, "read beyond the budget");
        AOS_FUZZ_CHECK(len == 0 || (len == 6 && memcmp(bytes, "INSIDE", 6) == 0),
                       "read returned bytes from outside the root");
        free(bytes);
      } else {
        AOS_FUZZ_CHECK(bytes == NULL, "failed read returned a buffer");
        AOS_FUZZ_CHECK(st.kind != AOS_FA_OK, "failure without a kind");
      }
    }
    aos_fa_fdcache_free(kept.fdcache);
  } else {
    aos_fa_listing listing;
    memset(&listing, 0, sizeof listing);
    int r = aos_fa_list(&root, segs, l.count, false, &listing, &st);
    if (r == 0) {
      for (size_t i = 0; i < listing.count; i++) {
        AOS_FUZZ_CHECK(known_name(listing.entries[i].name), "listing escaped the root");
        AOS_FUZZ_CHECK(strlen(listing.entries[i].name) == listing.entries[i].len, "entry length");
      }
      aos_fa_listing_free(&listing);
    } else {
      AOS_FUZZ_CHECK(st.kind != AOS_FA_OK, "failure without a kind");
    }
  }
  aos_fuzz_free(&l);
  int probe = fcntl(0, F_DUPFD_CLOEXEC, 0);
  AOS_FUZZ_CHECK(probe == before, "a descriptor leaked");
  close(probe);
  return 0;
}
