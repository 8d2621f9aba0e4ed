/* An ifVersion write whose target changes between its last check and its exchange
 * (issue 25, low item: the post-exchange check compared identity, size and mtime but
 * not the ctime, so a chmod, or a same-size in-place edit whose mtime was set back,
 * made in that instant was replaced without FILE_CHANGED).
 *
 * The moment is made deterministic: this driver is linked with -Wl,--wrap=syscall, so
 * the core's syscall(SYS_renameat2, ..., RENAME_EXCHANGE) comes here first; on the
 * first exchange of a run the change is made to the target, then the exchange goes on
 * exactly as the core asked. The write must then fail with FILE_CHANGED and leave the
 * target as the change left it (content and mode), with no temporary name behind.
 *
 * Usage: ifversion_exchange_test DIR     prints one line per case; exit 0 when all hold.
 * Linux only (RENAME_EXCHANGE). */
#include "file_authority/fa.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

long __real_syscall(long number, ...);

enum change { NONE, CHMOD, EDIT_MTIME_RESTORED, APPEND_TRUNCATE_BACK };
static enum change pending = NONE;
static char target_path[4400];
static int exchanges;

/* The change an attacker makes to the target in the instant before the exchange. */
static void make_change(enum change what) {
  if (what == CHMOD) {
    if (chmod(target_path, 0600) != 0) perror("chmod");
    return;
  }
  int fd = open(target_path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    perror("open");
    return;
  }
  struct stat before;
  if (fstat(fd, &before) != 0) perror("fstat");
  if (what == EDIT_MTIME_RESTORED) {
    /* Same size, other bytes, the modification time set back as it was. */
    if (pwrite(fd, "EDIT", 4, 0) != 4) perror("pwrite");
  } else {
    /* Grown, then cut back to its size: same size and (restored) mtime, new bytes. */
    if (pwrite(fd, "EDITED-MORE", 11, 0) != 11) perror("pwrite");
    if (ftruncate(fd, before.st_size) != 0) perror("ftruncate");
  }
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  if (futimens(fd, times) != 0) perror("futimens");
  close(fd);
}

long __wrap_syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
  long a4 = va_arg(ap, long), a5 = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_renameat2 && (a5 & RENAME_EXCHANGE) != 0) {
    exchanges++;
    if (pending != NONE) {
      enum change what = pending;
      pending = NONE;
      make_change(what);
    }
  }
  return __real_syscall(number, a1, a2, a3, a4, a5);
}

static int failures;
static char base[4096];

static void check(int ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) failures++;
}

static void put(const char *text) {
  int fd = open(target_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) perror("put");
  if (fd >= 0) close(fd);
  chmod(target_path, 0644);
}

static int holds(const char *text) {
  char buf[256];
  int fd = open(target_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  return n == (ssize_t)strlen(text) && memcmp(buf, text, (size_t)n) == 0;
}

static mode_t mode_now(void) {
  struct stat sb;
  return stat(target_path, &sb) == 0 ? (sb.st_mode & 0777) : (mode_t)-1;
}

static char parent_path[4200];

static int temps_left(void) {
  DIR *d = opendir(parent_path);
  int n = 0;
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, ".aos-", 5) == 0) n++;
  }
  if (d != NULL) closedir(d);
  return n;
}

static const char *segs[2];
static size_t nsegs;

static void run_case(aos_fa_root *root, enum change what, const char *name) {
  put("ORIGINAL");
  /* The version a caller read a while ago (the file at rest). */
  uint8_t *data = NULL;
  size_t len = 0;
  aos_fa_version v;
  aos_fa_status st;
  struct timespec rest = {0, 20 * 1000 * 1000};
  nanosleep(&rest, NULL);
  if (aos_fa_read(root, segs, nsegs, 1 << 20, &data, &len, &v, &st) != 0) {
    check(0, "read the version");
    return;
  }
  free(data);
  char version[AOS_FA_VERSION_CHARS + 1];
  aos_fa_version_string(&v, version);
  aos_fa_write_opts o;
  aos_fa_write_opts_init(&o);
  o.if_version = version;
  int before = exchanges;
  pending = what;
  int r = aos_fa_write(root, segs, nsegs, (const uint8_t *)"REPLACED", 8, &o, &st);
  pending = NONE;
  char line[256];
  snprintf(line, sizeof line, "%s: the exchange ran (%d)", name, exchanges - before);
  check(exchanges > before, line);
  if (what == NONE) {
    snprintf(line, sizeof line, "%s: nothing changed, the write commits (r=%d)", name, r);
    check(r == 0 && holds("REPLACED") && temps_left() == 0, line);
    return;
  }
  snprintf(line, sizeof line, "%s: FILE_CHANGED (r=%d kind=%d)", name, r, (int)st.kind);
  check(r != 0 && st.kind == AOS_FA_FILE_CHANGED, line);
  snprintf(line, sizeof line, "%s: the changed file kept, not replaced", name);
  check(!holds("REPLACED"), line);
  if (what == CHMOD) {
    snprintf(line, sizeof line, "%s: its new mode kept (0%o)", name, (unsigned)mode_now());
    check(mode_now() == 0600, line);
  } else {
    snprintf(line, sizeof line, "%s: its edited bytes kept", name);
    check(holds(what == EDIT_MTIME_RESTORED ? "EDITINAL" : "EDITED-M"), line);
  }
  snprintf(line, sizeof line, "%s: no temporary name left", name);
  check(temps_left() == 0, line);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: ifversion_exchange_test DIR\n");
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
  umask(022);
  /* A file directly in the root, and one in a directory below it. */
  for (int nested = 0; nested < 2; nested++) {
    nsegs = nested ? 2 : 1;
    segs[0] = nested ? "d" : "t";
    segs[1] = "t";
    snprintf(parent_path, sizeof parent_path, nested ? "%s/d" : "%s", base);
    snprintf(target_path, sizeof target_path, "%s/t", parent_path);
    if (nested) mkdir(parent_path, 0755);
    printf("-- %s\n", nested ? "in a directory below the root" : "in the root");
    run_case(&root, CHMOD, "a chmod just before the exchange");
    run_case(&root, EDIT_MTIME_RESTORED, "a same-size edit, mtime set back");
    run_case(&root, APPEND_TRUNCATE_BACK, "grown and cut back, mtime set back");
    /* The control: nothing changes, the write commits. */
    run_case(&root, NONE, "control");
  }
  aos_fa_root_close(fd);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
