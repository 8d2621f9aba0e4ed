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
#else
#include <sys/stat.h>
#include <unistd.h>
#define aos_test_getpid() ((long)getpid())
#define aos_test_mkdir(p) mkdir((p), 0755)
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
  char guard[1024], sub[1024], missing[1024], text[64], own[32];
  snprintf(guard, sizeof guard, "%s/guard.lock", argv[1]);
  snprintf(sub, sizeof sub, "%s/a-directory", argv[1]);
  snprintf(missing, sizeof missing, "%s/no-such-dir/guard.lock", argv[1]);
  snprintf(own, sizeof own, "%ld\n", aos_test_getpid());

  aos_lock a, b;
  aos_lock_outcome out;
  int r = aos_lock_try_acquire(guard, false, &a, &out);
  check(r == 0 && out.state == AOS_LOCK_ACQUIRED, "a free guard is acquired (and created)");
  read_file(guard, text, sizeof text);
  check(strcmp(text, own) == 0, "the holder's pid is recorded");

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
