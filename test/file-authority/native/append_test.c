/* The file-authority append and listing cores alone (src/file_authority/fa.h:
 * aos_fa_append, aos_fa_list with stats), with no Node-API: built against the POSIX
 * core files with the host compiler and run by
 * test/file-authority/append-core.test.js.
 *
 * Usage: append_test DIR checks            the option checks and refusals; one line
 *                                          per check
 *        append_test DIR list              list with stats against stat, entry by entry
 *        append_test DIR stress P T N MAX  P processes of T threads each append N
 *                                          records of 1 ... MAX bytes (random) to one
 *                                          file; prints "records R whole W lost L
 *                                          duplicated D torn X"
 *        append_test DIR kill K            K times, a process appending records of up
 *                                          to 4 MiB is killed with SIGKILL at a random
 *                                          instant; prints "kills K whole W tails T
 *                                          bad B" (a tail: a prefix of the record being
 *                                          appended when the kill came)
 *        append_test DIR swap N            a second process exchanges the target (a
 *                                          regular file) with a symlink to a file
 *                                          outside the root and with a FIFO, over and
 *                                          over, while this one appends N times; prints
 *                                          "appends OK/UNSAFE/OTHER" and "outside
 *                                          changed C fifo bytes F" (0 each)
 * DIR: an empty directory. Exit status 0 when every check held. */
#include "file_authority/fa.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#endif

static int failures;

static void check(int ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) failures++;
}

static char base[4096];

static const char *at(const char *name) {
  static char buf[2][4200];
  static int which;
  which ^= 1;
  snprintf(buf[which], sizeof buf[which], "%s/%s", base, name);
  return buf[which];
}

static mode_t mode_of(const char *name) {
  struct stat sb;
  if (lstat(at(name), &sb) != 0) return (mode_t)-1;
  return sb.st_mode & 07777;
}

static void put(const char *name, const char *text) {
  FILE *f = fopen(at(name), "wb");
  if (f == NULL) return;
  fputs(text, f);
  fclose(f);
}

static int content_is(const char *name, const char *text) {
  char buf[256] = {0};
  FILE *f = fopen(at(name), "rb");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static int append1(aos_fa_root *root, const char *name, const char *text,
                   const aos_fa_append_opts *o, aos_fa_status *st) {
  const char *segs[1] = {name};
  return aos_fa_append(root, segs, 1, (const uint8_t *)text, strlen(text), o, st);
}

/* ------------------------------------------------------------------ checks */

/* A process blocked opening the FIFO `name` for reading: it reports on `report` when
 * its open returns, which only a writer's open can make happen. */
static pid_t fifo_reader(const char *name, int *report) {
  int p[2];
  if (pipe(p) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    int fd = open(at(name), O_RDONLY);
    if (fd >= 0) {
      ssize_t w = write(p[1], "opened", 6);
      (void)w;
    }
    _exit(0);
  }
  close(p[1]);
  *report = p[0];
  return pid;
}

static int reported(int fd, int ms) {
  struct pollfd pf = {fd, POLLIN, 0};
  char buf[8];
  return poll(&pf, 1, ms) == 1 && read(fd, buf, sizeof buf) > 0;
}

static void checks(aos_fa_root *root) {
  aos_fa_append_opts o;
  aos_fa_status st;

  aos_fa_append_opts_init(&o);
  check(o.mode == 0666 && o.utf8 && o.durable && !o.create_parents, "defaults: mode 0666, utf8, durable");

  /* creation: mode less the umask; an existing file keeps its mode */
  umask(022);
  o.mode = 0640;
  check(append1(root, "new", "a", &o, &st) == 0 && content_is("new", "a") && mode_of("new") == 0640,
        "a missing file is created with mode 0640");
  o.mode = 0777;
  check(append1(root, "new", "b", &o, &st) == 0 && content_is("new", "ab") && mode_of("new") == 0640,
        "an existing file keeps its mode; bytes go to the end");
  check(append1(root, "new2", "x", &o, &st) == 0 && mode_of("new2") == 0755, "mode 0777 less umask 022: 0755");
  umask(077);
  aos_fa_append_opts_init(&o);
  check(append1(root, "new3", "x", &o, &st) == 0 && mode_of("new3") == 0600, "mode 0666 less umask 077: 0600");
  umask(022);
  o.mode = 01000;
  check(append1(root, "new4", "x", &o, &st) != 0 && st.kind == AOS_FA_INVALID_PATH && access(at("new4"), F_OK) != 0,
        "mode above 0777: refused, nothing created");
  aos_fa_append_opts_init(&o);
  check(append1(root, "empty", "", &o, &st) == 0 && content_is("empty", ""), "an empty append creates the file");
  check(append1(root, "empty", "", &o, &st) == 0 && content_is("empty", ""), "an empty append to a file changes nothing");

  /* set-id bits are cleared before the first byte changes */
  put("setid", "s");
  chmod(at("setid"), 06755);
  check(append1(root, "setid", "t", &o, &st) == 0 && mode_of("setid") == 0755 && content_is("setid", "st"),
        "set-user-ID and set-group-ID bits cleared (06755 -> 0755)");
  chmod(at("setid"), 01644);
  check(append1(root, "setid", "u", &o, &st) == 0 && mode_of("setid") == 01644, "no set-id bit: mode untouched");

  /* content */
  check(append1(root, "u", "\xff", &o, &st) != 0 && st.kind == AOS_FA_INVALID_CONTENT && access(at("u"), F_OK) != 0,
        "utf8: invalid bytes refused, nothing created");
  o.utf8 = false;
  check(append1(root, "u", "\xff", &o, &st) == 0 && content_is("u", "\xff"), "utf8 false: any bytes");
  o.utf8 = true;
  {
    const char *segs[1] = {"huge"};
    uint8_t one = 'x';
    check(aos_fa_append(root, segs, 1, &one, AOS_FA_APPEND_MAX + 1, &o, &st) != 0 && st.kind == AOS_FA_HOST_IO &&
              st.err == EFBIG && access(at("huge"), F_OK) != 0,
          "more than AOS_FA_APPEND_MAX bytes: refused before anything is opened");
  }

  /* durable false */
  o.durable = false;
  check(append1(root, "vol", "v", &o, &st) == 0 && append1(root, "vol", "w", &o, &st) == 0 && content_is("vol", "vw"),
        "durable false: appended alike");
  o.durable = true;

  /* parents */
  {
    const char *segs[3] = {"p", "q", "log"};
    check(aos_fa_append(root, segs, 3, (const uint8_t *)"x", 1, &o, &st) != 0 && st.kind == AOS_FA_HOST_IO &&
              st.err == ENOENT && st.segment == 0,
          "a missing parent: HOST_IO ENOENT at its index");
    o.create_parents = true;
    check(aos_fa_append(root, segs, 3, (const uint8_t *)"x", 1, &o, &st) == 0 && content_is("p/q/log", "x"),
          "createParents: parents made, file created");
    o.create_parents = false;
    check(aos_fa_append(root, segs, 3, (const uint8_t *)"y", 1, &o, &st) == 0 && content_is("p/q/log", "xy"),
          "an append two levels down");
  }

  /* refusals: nothing followed, nothing opened */
  put("target", "T");
  symlink("target", at("link"));
  check(append1(root, "link", "x", &o, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY && st.err == ELOOP &&
            st.segment == 0 && content_is("target", "T"),
        "a symlink: UNSAFE_ENTRY ELOOP, its target untouched");
  symlink("nowhere", at("dangling"));
  check(append1(root, "dangling", "x", &o, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY && access(at("nowhere"), F_OK) != 0,
        "a dangling symlink: UNSAFE_ENTRY, nothing created through it");
  mkdir(at("dir"), 0755);
  check(append1(root, "dir", "x", &o, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY && st.err == EISDIR,
        "a directory: UNSAFE_ENTRY EISDIR");
  check(aos_fa_append(root, NULL, 0, (const uint8_t *)"x", 1, &o, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY &&
            st.err == EISDIR && st.segment == -1,
        "the root itself: UNSAFE_ENTRY EISDIR, no index");
  {
    const char *segs[2] = {"link", "x"};
    check(aos_fa_append(root, segs, 2, (const uint8_t *)"x", 1, &o, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY &&
              st.segment == 0,
          "below a symlink: UNSAFE_ENTRY at index 0");
    o.create_parents = true;
    const char *segs2[2] = {"target", "x"};
    check(aos_fa_append(root, segs2, 2, (const uint8_t *)"x", 1, &o, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY &&
              st.segment == 0 && content_is("target", "T"),
          "below a file with createParents: UNSAFE_ENTRY at index 0");
    o.create_parents = false;
  }
  mkfifo(at("fifo"), 0644);
  int report = -1;
  pid_t reader = fifo_reader("fifo", &report);
  usleep(100 * 1000); /* the reader is in its open */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int r = append1(root, "fifo", "x", &o, &st);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  check(r != 0 && st.kind == AOS_FA_UNSAFE_ENTRY && ms < 1000, "a FIFO: UNSAFE_ENTRY at once");
  check(!reported(report, 300), "a FIFO with a reader waiting: never opened (the reader's open still waits)");
  kill(reader, SIGKILL);
  waitpid(reader, NULL, 0);
  close(report);
  check(append1(root, "fifo", "x", &o, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY, "a FIFO without a reader: UNSAFE_ENTRY");
  if (geteuid() == 0 && mknod(at("dev"), S_IFCHR | 0666, makedev(1, 3)) == 0) { /* /dev/null */
    check(append1(root, "dev", "x", &o, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY && st.err == 0,
          "a device node: UNSAFE_ENTRY, no host code");
  }

  /* a removed root */
  {
    char sub[4300];
    snprintf(sub, sizeof sub, "%s/gone", base);
    mkdir(sub, 0755);
    int fd;
    if (aos_fa_root_open(sub, &fd, &st) == 0) {
      rmdir(sub);
      aos_fa_root gone = {fd, root->resolver, NULL};
      check(append1(&gone, "x", "x", &o, &st) != 0 && st.kind == AOS_FA_ROOT_CHANGED, "a removed root: ROOT_CHANGED");
      aos_fa_root_close(fd);
    }
  }
}

/* -------------------------------------------------------------- list stats */

static void list_checks(aos_fa_root *root) {
  put("f", "12345");
  mkdir(at("d"), 0750);
  symlink("f-target-that-is-long", at("l"));
  mkfifo(at("p"), 0600);
  put("\xff\xfe", "bad name");
  chmod(at("f"), 0604);
  aos_fa_listing l;
  aos_fa_status st;
  check(aos_fa_list(root, NULL, 0, true, &l, &st) == 0 && l.count == 4 && l.omitted == 1,
        "list with stats: 4 entries, the non-UTF-8 name omitted");
  aos_fa_listing_sort(&l);
  int same = 1;
  for (size_t i = 0; i < l.count; i++) {
    const char *segs[1] = {l.entries[i].name};
    aos_fa_stat_info s;
    const aos_fa_stat_info *e = l.entries[i].stat;
    if (e == NULL || aos_fa_stat(root, segs, 1, &s, &st) != 0 || s.kind != e->kind || s.size != e->size ||
        s.mtime_ns != e->mtime_ns || s.mode != e->mode || !aos_fa_version_equal(&s.version, &e->version) ||
        l.entries[i].kind != e->kind) {
      same = 0;
      printf("     differs: %s\n", l.entries[i].name);
    }
  }
  check(same, "each entry's stat is what stat returns (kind, size, mtime, mode, version)");
  check(l.count == 4 && l.entries[2].kind == AOS_FA_KIND_SYMLINK && l.entries[2].stat->size == 21,
        "a symlink: kind symlink, the link's own size");
  check(l.count == 4 && l.entries[1].stat->mode == 0604 && l.entries[1].stat->size == 5, "a file: its mode and size");
  check(l.count == 4 && l.entries[3].kind == AOS_FA_KIND_OTHER, "a FIFO: other (never opened)");
  aos_fa_listing_free(&l);
  check(aos_fa_list(root, NULL, 0, false, &l, &st) == 0 && l.count == 4 && l.entries[0].stat == NULL,
        "without stats: no stat");
  aos_fa_listing_free(&l);
  const char *segs[1] = {"f"};
  check(aos_fa_list(root, segs, 1, true, &l, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY, "a file: UNSAFE_ENTRY");
  const char *none[1] = {"none"};
  check(aos_fa_list(root, none, 1, true, &l, &st) != 0 && st.kind == AOS_FA_NOT_FOUND, "missing: NOT_FOUND");
}

/* ------------------------------------------------------------------ records */

/* A record: "AOSR", writer id, sequence number, payload length (each 4 bytes, little
 * endian), then the payload, each byte a function of writer, sequence and position. */
#define HDR 16

/* The kill rounds' records share one payload per writer (seq 0), so that their
 * appender spends its time writing, not making records: a kill then lands in a write
 * more often. */
static int same_payload;

static uint8_t payload_byte(uint32_t id, uint32_t seq, uint32_t k) {
  if (same_payload) seq = 0;
  uint32_t x = id * 2654435761u ^ seq * 40503u ^ k * 2246822519u;
  return (uint8_t)(x >> 13 ^ x);
}

static void make_header(uint8_t *buf, uint32_t id, uint32_t seq, uint32_t len) {
  memcpy(buf, "AOSR", 4);
  uint32_t h[3] = {id, seq, len};
  for (int i = 0; i < 3; i++) {
    for (int b = 0; b < 4; b++) buf[4 + 4 * i + b] = (uint8_t)(h[i] >> (8 * b));
  }
}

static size_t make_record(uint8_t *buf, uint32_t id, uint32_t seq, uint32_t len) {
  make_header(buf, id, seq, len);
  for (uint32_t k = 0; k < len; k++) buf[HDR + k] = payload_byte(id, seq, k);
  return HDR + len;
}

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The length of the whole, valid record at p[0..avail), or 0 when there is none. */
static size_t record_at(const uint8_t *p, size_t avail, uint32_t *id, uint32_t *seq) {
  if (avail < HDR || memcmp(p, "AOSR", 4) != 0) return 0;
  *id = rd32(p + 4);
  *seq = rd32(p + 8);
  uint32_t len = rd32(p + 12);
  if (avail - HDR < len) return 0;
  for (uint32_t k = 0; k < len; k++) {
    if (p[HDR + k] != payload_byte(*id, *seq, k)) return 0;
  }
  return HDR + len;
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n + 1);
  *len = fread(buf, 1, (size_t)n, f);
  fclose(f);
  return buf;
}

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

typedef struct {
  aos_fa_root *root;
  uint32_t id;
  long n;
  uint32_t max;
  int errors;
} writer_arg;

static void *writer_main(void *p) {
  writer_arg *a = p;
  uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)a->id << 32) ^ (uint64_t)getpid();
  uint8_t *buf = malloc(HDR + a->max);
  aos_fa_append_opts o;
  aos_fa_append_opts_init(&o);
  o.utf8 = false;
  o.durable = false;
  const char *segs[1] = {"log"};
  aos_fa_status st;
  for (long i = 0; i < a->n; i++) {
    uint32_t len = 1 + (uint32_t)(rng_next(&s) % a->max);
    size_t total = make_record(buf, a->id, (uint32_t)i, len);
    if (aos_fa_append(a->root, segs, 1, buf, total, &o, &st) != 0) a->errors++;
  }
  free(buf);
  return NULL;
}

static void stress(aos_fa_root *root, int procs, int threads, long n, uint32_t max) {
  pid_t pids[64];
  for (int p = 0; p < procs && p < 64; p++) {
    pids[p] = fork();
    if (pids[p] == 0) {
      pthread_t t[16];
      writer_arg a[16];
      int errors = 0;
      for (int k = 0; k < threads && k < 16; k++) {
        a[k] = (writer_arg){root, (uint32_t)(p * 16 + k), n, max, 0};
        pthread_create(&t[k], NULL, writer_main, &a[k]);
      }
      for (int k = 0; k < threads && k < 16; k++) {
        pthread_join(t[k], NULL);
        errors += a[k].errors;
      }
      _exit(errors == 0 ? 0 : 1);
    }
  }
  int failed = 0;
  for (int p = 0; p < procs && p < 64; p++) {
    int status;
    waitpid(pids[p], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
  }
  check(failed == 0, "every append succeeded");
  size_t len;
  uint8_t *data = slurp(at("log"), &len);
  long writers = (long)procs * threads;
  unsigned char *seen = calloc((size_t)(procs * 16) * (size_t)n, 1);
  long whole = 0, torn = 0;
  size_t off = 0;
  while (data != NULL && off < len) {
    uint32_t id, seq;
    size_t r = record_at(data + off, len - off, &id, &seq);
    if (r == 0 || id >= (uint32_t)(procs * 16) || seq >= (uint32_t)n) {
      torn++;
      /* resynchronise at the next whole record */
      off++;
      while (off < len && record_at(data + off, len - off, &id, &seq) == 0) off++;
      continue;
    }
    whole++;
    if (seen[(size_t)id * (size_t)n + seq] < 255) seen[(size_t)id * (size_t)n + seq]++;
    off += r;
  }
  long lost = 0, dup = 0;
  for (int p = 0; p < procs; p++) {
    for (int k = 0; k < threads; k++) {
      for (long i = 0; i < n; i++) {
        unsigned char c = seen[(size_t)(p * 16 + k) * (size_t)n + (size_t)i];
        if (c == 0) lost++;
        if (c > 1) dup += c - 1;
      }
    }
  }
  printf("records %ld whole %ld lost %ld duplicated %ld torn %ld bytes %zu\n", writers * n, whole, lost, dup, torn, len);
  check(whole == writers * n && lost == 0 && dup == 0 && torn == 0, "every record whole and exactly once");
  free(seen);
  free(data);
}

/* --------------------------------------------------------------------- kill */

static void kill_rounds(aos_fa_root *root, int rounds) {
  long whole = 0, tails = 0, bad = 0;
  same_payload = 1;
  uint64_t s = (uint64_t)time(NULL) * 0x2545F4914F6CDD1Dull | 1;
  for (int round = 0; round < rounds; round++) {
    char name[32];
    snprintf(name, sizeof name, "k%d", round);
    uint32_t seed = (uint32_t)rng_next(&s);
    pid_t pid = fork();
    if (pid == 0) {
      uint8_t *buf = malloc(HDR + (4u << 20));
      make_record(buf, 1, 0, 4u << 20);
      uint64_t cs = seed | 1;
      aos_fa_append_opts o;
      aos_fa_append_opts_init(&o);
      o.utf8 = false;
      o.durable = false;
      const char *segs[1] = {name};
      aos_fa_status st;
      for (uint32_t i = 0;; i++) {
        uint32_t len = 1 + (uint32_t)(rng_next(&cs) % (4u << 20));
        make_header(buf, 1, i, len);
        aos_fa_append(root, segs, 1, buf, HDR + len, &o, &st);
      }
    }
    usleep((useconds_t)(2000 + rng_next(&s) % 40000));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    size_t len;
    uint8_t *data = slurp(at(name), &len);
    size_t off = 0;
    uint32_t expect = 0;
    while (data != NULL && off < len) {
      uint32_t id, seq;
      size_t r = record_at(data + off, len - off, &id, &seq);
      if (r > 0 && id == 1 && seq == expect) {
        whole++;
        expect++;
        off += r;
        continue;
      }
      /* What is left must be a prefix of record `expect` (its length is unknown to
       * the parent unless its header is whole: then the bytes present must match). */
      size_t rest = len - off;
      uint8_t full[HDR];
      make_header(full, 1, expect, 0);
      size_t hdr = rest < 12 ? rest : 12;
      int ok = memcmp(data + off, full, hdr) == 0;
      if (ok && rest >= HDR) {
        uint32_t plen = rd32(data + off + 12);
        ok = rest - HDR < plen;
        for (size_t k = 0; ok && k < rest - HDR; k++) ok = data[off + HDR + k] == payload_byte(1, expect, (uint32_t)k);
      }
      if (ok) tails++;
      else bad++;
      break;
    }
    free(data);
    unlink(at(name));
  }
  printf("kills %d whole %ld tails %ld bad %ld\n", rounds, whole, tails, bad);
  check(bad == 0, "a killed appender leaves whole records and at most a prefix of its last one");
}

/* --------------------------------------------------------------------- swap */

#if defined(__linux__) && defined(SYS_renameat2)
#define RENAME_EXCHANGE_FLAG (1 << 1)
static void swap(aos_fa_root *root, long n) {
  put("t", "");
  char outside[4200];
  snprintf(outside, sizeof outside, "%s.outside", base);
  FILE *f = fopen(outside, "wb");
  if (f != NULL) {
    fputs("outside", f);
    fclose(f);
  }
  symlink(outside, at("lnk"));
  mkfifo(at("fifo"), 0644);
  /* The FIFO held open for reading and writing (so that a writer's open of it never
   * fails for want of a reader, wherever the swapper has moved it): whatever an append
   * wrote into it would be there to read at the end. */
  int fifo = open(at("fifo"), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  pid_t swapper = fork();
  if (swapper == 0) {
    for (;;) {
      syscall(SYS_renameat2, AT_FDCWD, at("t"), AT_FDCWD, at("lnk"), RENAME_EXCHANGE_FLAG);
      syscall(SYS_renameat2, AT_FDCWD, at("t"), AT_FDCWD, at("lnk"), RENAME_EXCHANGE_FLAG);
      syscall(SYS_renameat2, AT_FDCWD, at("t"), AT_FDCWD, at("fifo"), RENAME_EXCHANGE_FLAG);
      syscall(SYS_renameat2, AT_FDCWD, at("t"), AT_FDCWD, at("fifo"), RENAME_EXCHANGE_FLAG);
    }
  }
  aos_fa_append_opts o;
  aos_fa_append_opts_init(&o);
  o.durable = false;
  long ok = 0, unsafe = 0, other = 0;
  aos_fa_status st;
  for (long i = 0; i < n; i++) {
    int r = append1(root, "t", "x", &o, &st);
    if (r == 0) ok++;
    else if (st.kind == AOS_FA_UNSAFE_ENTRY) unsafe++;
    else other++;
  }
  kill(swapper, SIGKILL);
  waitpid(swapper, NULL, 0);
  char junk[4096];
  ssize_t got = fifo >= 0 ? read(fifo, junk, sizeof junk) : -1;
  long written = got > 0 ? (long)got : 0;
  if (fifo >= 0) close(fifo);
  int outside_changed = 0;
  size_t len;
  uint8_t *data = slurp(outside, &len);
  outside_changed = data == NULL || len != 7 || memcmp(data, "outside", 7) != 0;
  free(data);
  unlink(outside);
  printf("appends %ld/%ld/%ld (ok/UNSAFE_ENTRY/other)\n", ok, unsafe, other);
  printf("outside changed %d fifo bytes %ld\n", outside_changed, written);
  check(fifo >= 0, "the FIFO was opened by the test");
  check(!outside_changed, "the file outside, behind the swapped-in symlink, never appended to");
  check(written == 0, "nothing ever written into the swapped-in FIFO");
  check(other == 0, "every append either succeeded or was UNSAFE_ENTRY");
  check(ok > 0, "some appends found the file");
}
#endif

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: append_test DIR checks | list | stress P T N MAX | kill K | swap N\n");
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
  const char *resolver = getenv("APPEND_TEST_RESOLVER");
  if (resolver != NULL && strcmp(resolver, "openat2") == 0) root.resolver = AOS_FA_RESOLVE_OPENAT2;
  if (strcmp(argv[2], "checks") == 0) {
    checks(&root);
  } else if (strcmp(argv[2], "list") == 0) {
    list_checks(&root);
  } else if (strcmp(argv[2], "stress") == 0 && argc > 6) {
    stress(&root, atoi(argv[3]), atoi(argv[4]), atol(argv[5]), (uint32_t)atol(argv[6]));
  } else if (strcmp(argv[2], "kill") == 0 && argc > 3) {
    kill_rounds(&root, atoi(argv[3]));
#if defined(__linux__) && defined(SYS_renameat2)
  } else if (strcmp(argv[2], "swap") == 0 && argc > 3) {
    swap(&root, atol(argv[3]));
#endif
  } else {
    return 2;
  }
  aos_fa_root_close(fd);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
