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

/* posix_parent.c: the retained parent of segs[count - 1] (count >= 1), resolved as
 * aos_fa_walk does with `flags`: *dir is root->fd itself when count is 1 (after
 * aos_fa_root_check), else a new descriptor; release it with aos_fa_posix_parent_close. */
int aos_fa_posix_parent(const aos_fa_root *root, const char *const *segs, size_t count,
                        unsigned flags, int *dir, aos_fa_status *st);
void aos_fa_posix_parent_close(const aos_fa_root *root, int dir);

/* Flushes a directory descriptor; 0 or -errno (EINVAL/ENOTSUP, a filesystem that
 * cannot flush directories, counts as done). */
int aos_fa_posix_flush_dir(int dir);

/* posix_fdcache.c. Takes out the descriptor kept for `key` when it still reads the
 * regular file `look` found (same device, inode and ctime): the caller's until it gives
 * it back with aos_fa_fdcache_keep or closes it. -1 otherwise; a descriptor kept for
 * `key` that no longer matches (or look NULL: the name holds nothing readable) is
 * closed. */
int aos_fa_fdcache_take(aos_fa_fdcache *c, const char *key, const struct stat *look);
/* Keeps fd for `key` (shorter than AOS_FA_FDCACHE_KEY_MAX): a regular file whose
 * identity and ctime at the look before it was opened are `look`'s, just read whole
 * and consistent. Closes it instead when the process keeps enough (c NULL: always). */
void aos_fa_fdcache_keep(aos_fa_fdcache *c, const char *key, int fd, const struct stat *look);

/* The entry kind of a st_mode. */
aos_fa_entry_kind aos_fa_posix_kind(mode_t mode);

/* The host code of an UNSAFE_ENTRY refusal for an entry of this mode where a regular
 * file is needed: ELOOP for a link, EISDIR for a directory, 0 (none) otherwise. */
#define aos_fa_posix_kind_errno(mode) (S_ISLNK(mode) ? ELOOP : S_ISDIR(mode) ? EISDIR : 0)

#endif
