/* file-authority: helpers shared by the POSIX core files (never included on Windows). */
#ifndef AOS_FILE_AUTHORITY_POSIX_H
#define AOS_FILE_AUTHORITY_POSIX_H

#include "file_authority/fa.h"

#include <sys/stat.h>

#ifdef __APPLE__
#define AOS_FA_MTIME_NS(sb) ((sb).st_mtimespec.tv_nsec)
#define AOS_FA_CTIME_NS(sb) ((sb).st_ctimespec.tv_nsec)
#else
#define AOS_FA_MTIME_NS(sb) ((sb).st_mtim.tv_nsec)
#define AOS_FA_CTIME_NS(sb) ((sb).st_ctim.tv_nsec)
#endif

/* The version of the entry `sb` describes (version.c). */
void aos_fa_posix_version(const struct stat *sb, aos_fa_version *v);

/* openat2(dirfd, path, flags) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS, EINTR and (bounded) EAGAIN retried: the descriptor, or a
 * negative errno (-ENOSYS where the build has no openat2) (posix_walk.c). */
int aos_fa_posix_openat2(int dirfd, const char *path, int flags);

/* Joins segs[0..count) with '/' into out[0..cap) with a NUL: 0, or -ENAMETOOLONG. */
int aos_fa_posix_join(const char *const *segs, size_t count, char *out, size_t cap);

#endif
