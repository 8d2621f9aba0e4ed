/* The node-lock C core alone (src/node_lock/node_lock.h), with no Node-API: built
 * against src/node_lock/posix.c with the host compiler, or against
 * src/node_lock/win32.c with mingw-w64 and run under wine. Driven by
 * test/node-lock/core.test.js.
 *
 * Usage: core_test DIR           the checks in one process (DIR: an empty directory);
 *                                prints one line per check, exits 0 when all hold
 *        core_test DIR hold      takes DIR/shared.lock, prints "held PID", keeps it
 *                                until stdin ends, releases, exits 0
 *        core_test DIR probe     tries DIR/shared.lock once and prints
 *                                "acquired" or "held PID" (PID 0: unknown) */
#include "node_lock/node_lock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef _WIN32
#include <direct.h>
#include <process.h>
#define aos_test_getpid() ((long)_getpid())
#define aos_test_mkdir(p) _mkdir(p)
#include <windows.h>
#define aos_test_link(from, to) (CreateHardLinkA((to), (from), NULL) ? 0 : -1)
#else
#include <sys/stat.h>
#include <unistd.h>
#define aos_test_getpid() ((long)getpid())
#define aos_test_mkdir(p) mkdir((p), 0755)
#define aos_test_link(from, to) link((from), (to))
#endif

static int failures;

static void check(int ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) failures++;
}

static void read_file(const char *path, char *buf, size_t size) {
  buf[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (f == NULL) return;
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = '\0';
  fclose(f);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return;
  fputs(text, f);
  fclose(f);
}

static int hold_or_probe(const char *dir, bool hold) {
  char shared[1024];
  snprintf(shared, sizeof shared, "%s/shared.lock", dir);
  aos_lock lock;
  aos_lock_outcome out;
  int r = aos_lock_try_acquire(shared, true, &lock, &out);
  if (r < 0) {
    printf("error %d\n", -r);
    return 1;
  }
  if (out.state == AOS_LOCK_HELD) {
    printf("held %lld\n", (long long)out.holder_pid);
    return hold ? 1 : 0;
  }
  if (out.state != AOS_LOCK_ACQUIRED) {
    printf("unsafe\n");
    return 1;
  }
  if (!hold) {
    printf("acquired\n");
    aos_lock_release(&lock);
    return 0;
  }
  printf("held %ld\n", aos_test_getpid());
  fflush(stdout);
  while (getchar() != EOF) {
  }
  aos_lock_release(&lock);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && (strcmp(argv[2], "hold") == 0 || strcmp(argv[2], "probe") == 0)) {
    return hold_or_probe(argv[1], strcmp(argv[2], "hold") == 0);
  }
  if (argc != 2) {
    fprintf(stderr, "usage: core_test DIR [hold|probe]\n");
    return 2;
  }
  char guard[1024], sub[1024], missing[1024], text[128], own[64];
  snprintf(guard, sizeof guard, "%s/guard.lock", argv[1]);
  snprintf(sub, sizeof sub, "%s/a-directory", argv[1]);
  snprintf(missing, sizeof missing, "%s/no-such-dir/guard.lock", argv[1]);
  snprintf(own, sizeof own, "agent-os-lock/1 %ld\n", aos_test_getpid());

  aos_lock a, b;
  aos_lock_outcome out;
  int r = aos_lock_try_acquire(guard, false, &a, &out);
  check(r == 0 && out.state == AOS_LOCK_ACQUIRED, "a free guard is acquired (and created)");
  read_file(guard, text, sizeof text);
#ifdef __linux__
  /* Linux: the kernel's lock table names the holder; nothing is written. */
  check(text[0] == '\0', "no record is written (Linux: the lock table names the holder)");
#else
  check(strcmp(text, own) == 0, "the holder's pid is recorded");
#endif

  r = aos_lock_try_acquire(guard, true, &b, &out);
  check(r == 0 && out.state == AOS_LOCK_HELD, "a second handle in the same process is refused");
  check(out.holder_pid == aos_test_getpid(), "the refusal names the live holder's pid");
  r = aos_lock_try_acquire(guard, false, &b, &out);
  check(r == 0 && out.state == AOS_LOCK_HELD && out.holder_pid == 0,
        "without want_holder no pid is looked up");

  aos_lock_release(&a);
  read_file(guard, text, sizeof text);
  check(text[0] == '\0', "release clears the record, the file stays");
  aos_lock_release(&a);
  check(1, "a second release is harmless");

  r = aos_lock_try_acquire(guard, false, &b, &out);
  check(r == 0 && out.state == AOS_LOCK_ACQUIRED, "acquired again after release");
  aos_lock_release(&b);

  /* Files that are not guards: refused, left byte for byte as they were. */
  static const char *const not_guards[] = {"{\"important\": true}", "123\n", "agent-os-lock/1 12x\n",
                                           "agent-os-lock/ 1\n", "agent-os-lock/1 1"};
  for (size_t i = 0; i < sizeof not_guards / sizeof not_guards[0]; i++) {
    char data[1024];
    snprintf(data, sizeof data, "%s/data-%u", argv[1], (unsigned)i);
    write_file(data, not_guards[i]);
    r = aos_lock_try_acquire(data, false, &a, &out);
    read_file(data, text, sizeof text);
    check(r == 0 && out.state == AOS_LOCK_UNSAFE && strcmp(text, not_guards[i]) == 0,
          "a file holding something other than a record is unsafe and left as it was");
  }
  char linked[1024], other[1024];
  snprintf(linked, sizeof linked, "%s/linked.lock", argv[1]);
  snprintf(other, sizeof other, "%s/other-name", argv[1]);
  write_file(linked, "");
  check(aos_test_link(linked, other) == 0, "(setup) a second name for an empty file");
  r = aos_lock_try_acquire(linked, false, &a, &out);
  check(r == 0 && out.state == AOS_LOCK_UNSAFE, "a file with two links is unsafe");
  /* Records of this and of a later version are guards: used, record replaced. */
  char recorded[1024];
  snprintf(recorded, sizeof recorded, "%s/recorded.lock", argv[1]);
  write_file(recorded, "agent-os-lock/7 anything a later version writes\n");
  r = aos_lock_try_acquire(recorded, false, &a, &out);
  check(r == 0 && out.state == AOS_LOCK_ACQUIRED, "a later version's record is a guard");
  aos_lock_release(&a);
  read_file(recorded, text, sizeof text);
  check(text[0] == '\0', "its record is cleared once used");
  write_file(recorded, "agent-os-lock/1 1\n");
  r = aos_lock_try_acquire(recorded, false, &a, &out);
  check(r == 0 && out.state == AOS_LOCK_ACQUIRED, "a stale version 1 record is a guard");
  aos_lock_release(&a);

  check(aos_test_mkdir(sub) == 0, "(setup) a directory");
  r = aos_lock_try_acquire(sub, false, &a, &out);
  check(r == 0 && out.state == AOS_LOCK_UNSAFE && out.host_errno == EISDIR,
        "a directory at the path is unsafe (EISDIR)");

  r = aos_lock_try_acquire(missing, false, &a, &out);
  check(r == -ENOENT, "a missing directory is a host failure (ENOENT)");

#ifndef _WIN32
  char link[1024];
  snprintf(link, sizeof link, "%s/link.lock", argv[1]);
  check(symlink(guard, link) == 0, "(setup) a symlink to the guard file");
  r = aos_lock_try_acquire(link, false, &a, &out);
  check(r == 0 && out.state == AOS_LOCK_UNSAFE && out.host_errno == ELOOP,
        "a symlink at the path is unsafe (ELOOP)");
#endif

  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
