/* scripts/platforms/glibc-stat.c: the stat family for the Linux prebuilds built with
 * `zig cc -target <arch>-linux-gnu.2.28` (scripts/platforms/cross-build.js links this
 * object before the C library; it is not part of the binding's sources).
 *
 * glibc before 2.33 exports stat, fstat, lstat and fstatat only as __xstat64,
 * __fxstat64, __lxstat64 and __fxstatat64 (with a version argument, _STAT_VER); the
 * plain names are small wrappers in libc_nonshared.a. Zig 0.11's libc_nonshared.a for
 * such a glibc instead holds glibc 2.33's own stat code, which makes the system call
 * itself and on failure sets `errno` through a thread-local `errno` object that Zig
 * links into the binary (csu/errno.c), not the C library's: the binding then reads a
 * stale errno (a missing file reported as HOST_IO with errno 0, ENXIO from an earlier
 * call). These wrappers are what glibc 2.28's own libc_nonshared.a does: they call the
 * C library, which sets the errno the binding reads; linked first, they keep Zig's
 * objects (and its errno) out of the binary. scripts/platforms/binaries.js fails a
 * Linux prebuild that has a thread-local storage segment, which Zig's errno brings. */
#include <sys/stat.h>

#if defined(__x86_64__)
#define AOS_STAT_VER 1 /* _STAT_VER_LINUX */
#elif defined(__aarch64__)
#define AOS_STAT_VER 0 /* _STAT_VER of the generic 64-bit ABI */
#else
#error "glibc-stat.c: _STAT_VER of this architecture is not known"
#endif

#define AOS_HIDDEN __attribute__((visibility("hidden")))

/* On both 64-bit ABIs struct stat and struct stat64 are one layout. */
extern int __xstat64(int ver, const char *path, struct stat *buf);
extern int __lxstat64(int ver, const char *path, struct stat *buf);
extern int __fxstat64(int ver, int fd, struct stat *buf);
extern int __fxstatat64(int ver, int dirfd, const char *path, struct stat *buf, int flags);

AOS_HIDDEN int stat(const char *path, struct stat *buf) { return __xstat64(AOS_STAT_VER, path, buf); }
AOS_HIDDEN int lstat(const char *path, struct stat *buf) { return __lxstat64(AOS_STAT_VER, path, buf); }
AOS_HIDDEN int fstat(int fd, struct stat *buf) { return __fxstat64(AOS_STAT_VER, fd, buf); }
AOS_HIDDEN int fstatat(int dirfd, const char *path, struct stat *buf, int flags) {
  return __fxstatat64(AOS_STAT_VER, dirfd, path, buf, flags);
}

/* The 64-bit names, which _FILE_OFFSET_BITS=64 code may call. */
AOS_HIDDEN int stat64(const char *path, struct stat *buf) { return __xstat64(AOS_STAT_VER, path, buf); }
AOS_HIDDEN int lstat64(const char *path, struct stat *buf) { return __lxstat64(AOS_STAT_VER, path, buf); }
AOS_HIDDEN int fstat64(int fd, struct stat *buf) { return __fxstat64(AOS_STAT_VER, fd, buf); }
AOS_HIDDEN int fstatat64(int dirfd, const char *path, struct stat *buf, int flags) {
  return __fxstatat64(AOS_STAT_VER, dirfd, path, buf, flags);
}
