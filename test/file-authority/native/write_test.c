/* The file-authority write core alone (src/file_authority/fa.h, aos_fa_write and its
 * options), with no Node-API: built against the POSIX core files with the host
 * compiler and run by test/file-authority/hardening-write-core.test.js, once as is and
 * once with AGENT_OS_FA_NO_RENAMEAT2=1 (the fallback without an atomic exchange).
 *
 * Usage: write_test DIR checks           the option checks; one line per check
 *        write_test DIR cas N            two processes each add 1 to a counter file N
 *                                        times by read-version + ifVersion write
 *                                        (retrying on FILE_CHANGED); prints
 *                                        "counter C of E"
 *        write_test DIR swap N           a second process exchanges the target (a
 *                                        regular file) with a symlink and with a FIFO
 *                                        over and over while this one writes N times;
 *                                        prints "writes OK/UNSAFE/CHANGED/OTHER" and
 *                                        "symlink kept K fifo kept F" (1 each: never
 *                                        replaced, though maybe renamed)
 * DIR: an empty directory. Exit status 0 when every check held. */
#include "file_authority/fa.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
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

static int write_opts(aos_fa_root *root, const char *name, const char *text,
                      const aos_fa_write_opts *o, aos_fa_status *st) {
  const char *segs[1] = {name};
  return aos_fa_write(root, segs, 1, (const uint8_t *)text, strlen(text), o, st);
}

static int version_of(aos_fa_root *root, const char *name, char out[AOS_FA_VERSION_CHARS + 1]) {
  const char *segs[1] = {name};
  uint8_t *data = NULL;
  size_t len = 0;
  aos_fa_version v;
  aos_fa_status st;
  int r = aos_fa_read(root, segs, 1, 1 << 20, &data, &len, &v, &st);
  free(data);
  if (r == 0) aos_fa_version_string(&v, out);
  return r;
}

static int count_temps(void) {
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '^\\.aos-' ", base);
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p != NULL) {
    if (fscanf(p, "%d", &n) != 1) n = -1;
    pclose(p);
  }
  return n;
}

static void checks(aos_fa_root *root) {
  aos_fa_write_opts o;
  aos_fa_status st;
  char v1[AOS_FA_VERSION_CHARS + 1], v2[AOS_FA_VERSION_CHARS + 1];

  /* mode: new files only, less the umask; a replaced file keeps mode & 0777. */
  umask(022);
  aos_fa_write_opts_init(&o);
  check(o.mode == 0666 && o.utf8 && !o.if_absent && o.if_version == NULL && !o.create_parents,
        "defaults: mode 0666, utf8, no condition");
  o.mode = 0640;
  check(write_opts(root, "m1", "x", &o, &st) == 0 && mode_of("m1") == 0640, "mode 0640 for a new file");
  o.mode = 0777;
  check(write_opts(root, "m2", "x", &o, &st) == 0 && mode_of("m2") == 0755, "mode 0777 less umask 022: 0755");
  umask(077);
  o.mode = 0666;
  check(write_opts(root, "m3", "x", &o, &st) == 0 && mode_of("m3") == 0600, "mode 0666 less umask 077: 0600");
  umask(022);
  o.mode = 0;
  check(write_opts(root, "m4", "x", &o, &st) == 0 && mode_of("m4") == 0, "mode 0");
  o.mode = 0600;
  chmod(at("m2"), 06777);
  check(write_opts(root, "m2", "y", &o, &st) == 0 && mode_of("m2") == 0777,
        "a replaced 06777 file: 0777 (no set-id bit), options.mode ignored");
  o.mode = 01000;
  check(write_opts(root, "m5", "x", &o, &st) != 0 && st.kind == AOS_FA_INVALID_PATH, "mode above 0777: INVALID_PATH");
  o.mode = 04755;
  check(write_opts(root, "m5", "x", &o, &st) != 0 && st.kind == AOS_FA_INVALID_PATH, "mode with set-uid: INVALID_PATH");
  check(access(at("m5"), F_OK) != 0, "nothing written for a bad mode");

  /* utf8 */
  aos_fa_write_opts_init(&o);
  check(write_opts(root, "u", "\xff", &o, &st) != 0 && st.kind == AOS_FA_INVALID_CONTENT, "utf8: invalid bytes refused");
  o.utf8 = false;
  check(write_opts(root, "u", "\xff", &o, &st) == 0 && content_is("u", "\xff"), "utf8 false: any bytes");

  /* if_absent */
  aos_fa_write_opts_init(&o);
  o.if_absent = true;
  check(write_opts(root, "a", "first", &o, &st) == 0 && content_is("a", "first"), "ifAbsent creates");
  check(write_opts(root, "a", "second", &o, &st) != 0 && st.kind == AOS_FA_ENTRY_EXISTS && st.err == EEXIST &&
            st.segment == 0 && content_is("a", "first"),
        "ifAbsent on an existing file: ENTRY_EXISTS, unchanged");
  symlink("nowhere", at("al"));
  check(write_opts(root, "al", "x", &o, &st) != 0 && st.kind == AOS_FA_ENTRY_EXISTS, "ifAbsent on a dangling symlink: ENTRY_EXISTS");
  mkdir(at("ad"), 0755);
  check(write_opts(root, "ad", "x", &o, &st) != 0 && st.kind == AOS_FA_ENTRY_EXISTS, "ifAbsent on a directory: ENTRY_EXISTS");
  {
    struct stat sb;
    check(lstat(at("al"), &sb) == 0 && S_ISLNK(sb.st_mode), "the symlink is untouched");
  }

  /* if_version */
  aos_fa_write_opts_init(&o);
  put("v", "one");
  check(version_of(root, "v", v1) == 0, "read the version");
  o.if_version = v1;
  check(write_opts(root, "v", "two", &o, &st) == 0 && content_is("v", "two"), "ifVersion of the current file: written");
  check(write_opts(root, "v", "three", &o, &st) != 0 && st.kind == AOS_FA_FILE_CHANGED && content_is("v", "two"),
        "ifVersion of a replaced file: FILE_CHANGED, unchanged");
  check(version_of(root, "v", v2) == 0 && strcmp(v1, v2) != 0, "a write gives another version");
  o.if_version = v2;
  check(write_opts(root, "gone", "x", &o, &st) != 0 && st.kind == AOS_FA_FILE_CHANGED && access(at("gone"), F_OK) != 0,
        "ifVersion with no target: FILE_CHANGED, nothing created");
  /* An in-place change keeping size and restoring mtime still changes ctime. */
  {
    struct stat sb;
    lstat(at("v"), &sb);
    struct timespec ts[2] = {sb.st_atim, sb.st_mtim};
    FILE *f = fopen(at("v"), "r+b");
    if (f != NULL) {
      fputs("TWO", f);
      fclose(f);
    }
    utimensat(AT_FDCWD, at("v"), ts, 0);
    check(write_opts(root, "v", "four", &o, &st) != 0 && st.kind == AOS_FA_FILE_CHANGED && content_is("v", "TWO"),
          "ifVersion after an in-place edit with mtime restored: FILE_CHANGED");
  }
  check(version_of(root, "v", v2) == 0, "read the version again");
  o.if_version = v2;
  o.if_absent = true;
  check(write_opts(root, "v", "x", &o, &st) != 0 && st.kind == AOS_FA_INVALID_PATH, "ifAbsent with ifVersion: INVALID_PATH");
  o.if_absent = false;
  o.if_version = "zz";
  check(write_opts(root, "v", "x", &o, &st) != 0 && st.kind == AOS_FA_INVALID_PATH, "a malformed version: INVALID_PATH");
  o.if_version = v2;
  unlink(at("v"));
  symlink("nowhere", at("v"));
  check(write_opts(root, "v", "x", &o, &st) != 0 && st.kind == AOS_FA_UNSAFE_ENTRY, "ifVersion on a symlink: UNSAFE_ENTRY");
  check(count_temps() == 0, "no temporary file left behind");
}

/* ---- cas: two processes, each adds 1 N times */

static int cas_add(aos_fa_root *root, long n, long *retries) {
  for (long i = 0; i < n; i++) {
    for (;;) {
      const char *segs[1] = {"counter"};
      uint8_t *data = NULL;
      size_t len = 0;
      aos_fa_version v;
      aos_fa_status st;
      if (aos_fa_read(root, segs, 1, 64, &data, &len, &v, &st) != 0) {
        free(data);
        if (st.kind == AOS_FA_FILE_CHANGED) continue;
        return -1;
      }
      char text[32];
      size_t k = len < sizeof text - 1 ? len : sizeof text - 1;
      memcpy(text, data, k);
      text[k] = '\0';
      free(data);
      char vs[AOS_FA_VERSION_CHARS + 1];
      aos_fa_version_string(&v, vs);
      snprintf(text, sizeof text, "%ld", atol(text) + 1);
      aos_fa_write_opts o;
      aos_fa_write_opts_init(&o);
      o.if_version = vs;
      if (aos_fa_write(root, segs, 1, (const uint8_t *)text, strlen(text), &o, &st) == 0) break;
      if (st.kind != AOS_FA_FILE_CHANGED) return -1;
      (*retries)++;
    }
  }
  return 0;
}

static int cas(aos_fa_root *root, long n) {
  put("counter", "0");
  pid_t child = fork();
  if (child == 0) {
    long retries = 0;
    _exit(cas_add(root, n, &retries) == 0 ? 0 : 1);
  }
  long retries = 0;
  int mine = cas_add(root, n, &retries);
  int status = 0;
  waitpid(child, &status, 0);
  long value = -1;
  char buf[32] = {0};
  FILE *f = fopen(at("counter"), "rb");
  if (f != NULL) {
    if (fread(buf, 1, sizeof buf - 1, f) > 0) value = atol(buf);
    fclose(f);
  }
  printf("counter %ld of %ld (retries here %ld)\n", value, 2 * n, retries);
  check(mine == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "both writers finished without a host failure");
  check(value == 2 * n, "no update lost");
  check(count_temps() == 0, "no temporary file left behind");
  return 0;
}

/* ---- swap: a second process exchanges the target with a symlink and a FIFO */

static int exchange(const char *a, const char *b) {
#if defined(__linux__) && defined(SYS_renameat2)
  return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */);
#else
  (void)a, (void)b;
  errno = ENOSYS;
  return -1;
#endif
}

static int swap(aos_fa_root *root, long n) {
  put("t", "start");
  symlink("/etc/passwd", at("side-link"));
  mkfifo(at("side-fifo"), 0644);
  pid_t child = fork();
  if (child == 0) {
    char t[4200], l[4200], p[4200];
    snprintf(t, sizeof t, "%s", at("t"));
    snprintf(l, sizeof l, "%s", at("side-link"));
    snprintf(p, sizeof p, "%s", at("side-fifo"));
    /* The target is a regular file most of the time, so that writes get past their
     * first look and meet the swap at the commit. */
    for (unsigned k = 0;; k++) {
      /* A writer's exchange-back that interleaved with ours can leave the regular file
       * on a side name: put it back at the target first. */
      struct stat sb;
      if (lstat(t, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (lstat(l, &sb) == 0 && S_ISREG(sb.st_mode)) exchange(t, l);
        else if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode)) exchange(t, p);
      }
      const char *side = (k & 1) ? p : l;
      exchange(t, side);
      exchange(t, side);
      for (volatile int spin = 0; spin < 400000; spin++) {
      }
    }
  }
  long ok = 0, unsafe = 0, changed = 0, other = 0;
  for (long i = 0; i < n; i++) {
    aos_fa_write_opts o;
    aos_fa_write_opts_init(&o);
    aos_fa_status st;
    const char *segs[1] = {"t"};
    if (aos_fa_write(root, segs, 1, (const uint8_t *)"data", 4, &o, &st) == 0) {
      ok++;
    } else if (st.kind == AOS_FA_UNSAFE_ENTRY) {
      unsafe++;
    } else if (st.kind == AOS_FA_FILE_CHANGED) {
      changed++;
    } else {
      other++;
    }
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  /* Every entry in the directory: an entry the writer exchanged back while the
   * attacker was exchanging too may sit under another name, but it must exist. */
  int links = 0, fifos = 0;
  DIR *d = opendir(base);
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    struct stat sb;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || lstat(at(e->d_name), &sb) != 0) continue;
    if (S_ISLNK(sb.st_mode)) links++;
    if (S_ISFIFO(sb.st_mode)) fifos++;
  }
  if (d != NULL) closedir(d);
  printf("writes %ld/%ld/%ld/%ld\n", ok, unsafe, changed, other);
  printf("symlink kept %d fifo kept %d\n", links, fifos);
  check(other == 0, "no outcome but ok, UNSAFE_ENTRY, FILE_CHANGED");
  check(links == 1 && fifos == 1, "neither the symlink nor the FIFO was ever replaced");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: write_test DIR checks | cas N | swap N\n");
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
  const char *resolver = getenv("WRITE_TEST_RESOLVER");
  if (resolver != NULL && strcmp(resolver, "openat2") == 0) root.resolver = AOS_FA_RESOLVE_OPENAT2;
  if (strcmp(argv[2], "checks") == 0) {
    checks(&root);
  } else if (strcmp(argv[2], "cas") == 0 && argc > 3) {
    cas(&root, atol(argv[3]));
  } else if (strcmp(argv[2], "swap") == 0 && argc > 3) {
    swap(&root, atol(argv[3]));
  } else {
    return 2;
  }
  aos_fa_root_close(fd);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
