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

/* posix_beneath.c: confinement under moves. 0 when the directory descriptor `dir` (the
 * root's own included) is beneath the retained root at one instant of the call;
 * FILE_CHANGED when it is not (a directory on the way was moved out); HOST_IO when that
 * cannot be told. Every operation calls it on each directory it acts through: reads and
 * listings after the act (their result is returned only if it was beneath the root at
 * that instant), changes immediately before the act and again after it (undoing what
 * landed outside). */
int aos_fa_beneath_dir(const aos_fa_root *root, int dir, aos_fa_status *st);
/* The same for the directory `dir` that segs[0..count) names beneath the root: with
 * the openat2 resolver first by resolving that path again and comparing identities
 * (cheaper than the path snapshots; they decide when it does not match). */
int aos_fa_beneath_dir_at(const aos_fa_root *root, int dir, const char *const *segs, size_t count,
                          aos_fa_status *st);
/* The same for the open file `fd`, opened as `name` in the directory `dir` (which the
 * fallback without descriptor paths checks, with the name; -1 when not at hand). */
int aos_fa_beneath_file(const aos_fa_root *root, int dir, const char *name, int fd,
                        aos_fa_status *st);

/* posix_beneath.c: moves of a directory during a call (Linux inotify; elsewhere none
 * are seen). The calling thread's watch instance (-1: none; leftover events dropped), a
 * watch on directory `dir` in it (-1: none), whether any watched directory was moved
 * since its watch was set (events read and dropped), a watch removed, done with the
 * instance (it stays with the thread). */
int aos_fa_watch_open(void);
int aos_fa_watch_add(int w, int dir);
bool aos_fa_watch_moved(int w);
/* A watch on the open file `fd` for writes and metadata changes (-1: none), and whether
 * such a change happened since (events read, noted, dropped). */
int aos_fa_watch_add_file(int w, int fd);
bool aos_fa_watch_changed(int w);
void aos_fa_watch_remove(int w, int wd);
void aos_fa_watch_close(int w);
/* The guard a change takes around its checks: watches on the one or two directories it
 * acts in, set before the check before the change; aos_fa_guard_moved after the check
 * after it says whether either was moved meanwhile (out and back included). */
typedef struct {
  int w, wd_a, wd_b;
} aos_fa_guard;
int aos_fa_guard_begin(aos_fa_guard *g, const aos_fa_root *root, int dir_a, int dir_b);
bool aos_fa_guard_moved(aos_fa_guard *g);
void aos_fa_guard_end(aos_fa_guard *g);

/* posix_write.c: a fresh ".aos-<32 random hex>.tmp" name (never reused: random, and
 * every use creates it exclusively). */
void aos_fa_posix_temp_name(char name[48]);

/* posix_rename.c: renameat2 with RENAME_NOREPLACE (`exchange` false) or RENAME_EXCHANGE
 * (true) on Linux, renameatx_np RENAME_EXCL / RENAME_SWAP on macOS: 0, -errno, or
 * -ENOSYS where the host or filesystem has no such rename. EINTR retried. */
int aos_fa_posix_rename2(int fdir, const char *fname, int tdir, const char *tname, bool exchange);

/* posix_walk.c: removes the directory `name` in `dir` just made by this call (`made`:
 * its identity, NULL when unknown: then it is left) if it still is that one, and empty. */
void aos_fa_posix_undo_mkdir(int dir, const char *name, const struct stat *made);

/* posix_settle.c: whether a version can stand for one state only (see there). The
 * granularity of an entry's timestamps as its ctime shows it (ns; 2 s when it has no
 * sub-second part). */
int64_t aos_fa_posix_stamp_gran(const struct stat *sb);
/* For the entry `sb` on the filesystem of descriptor `fd`: UNSUPPORTED_BACKEND where
 * versions cannot tell states apart (pseudo filesystems, second-granularity
 * timestamps); else 0 with *wait_ns 0 when `sb`'s version is settled, or the time to
 * wait before observing it again; FILE_CHANGED for a ctime far in the future. */
int aos_fa_posix_version_ready(int fd, const struct stat *sb, int64_t *wait_ns, aos_fa_status *st);
/* The same with the filesystem's statfs already at hand (a listing's entries share
 * their directory's: one fstatfs for all). */
struct statfs;
int aos_fa_posix_version_ready_on(const struct statfs *fs, const struct stat *sb, int64_t *wait_ns,
                                  aos_fa_status *st);
/* Sleeps ns nanoseconds (EINTR resumed). */
void aos_fa_posix_sleep_ns(int64_t ns);
/* Observations of an unsettled version before FILE_CHANGED. */
#define AOS_FA_SETTLE_TRIES 8

/* posix_mgtime.c: whether the filesystem `sf` describes (device `dev`) stamps every
 * change made after a stat with a later ctime (Linux 6.13+ multigrain timestamps on
 * ext4, xfs, btrfs, tmpfs): a version read there is settled at once. */
struct statfs;
bool aos_fa_posix_multigrain(const struct statfs *sf, dev_t dev);

/* posix_stat.c: fills each entry's stat (made with room for one, aos_fa_entry_init) with
 * what aos_fa_stat reports of that name in `dir`, observed without following it
 * relative to `dir` (statx where the kernel has it, else fstatat), versions settled as
 * stat's are (one wait for all the entries that need one); each entry's kind becomes
 * its stat's. Entries gone meanwhile are dropped (their names freed, the rest kept in
 * order, *count lowered). 0, or a failure with *st filled (no segment index):
 * UNSUPPORTED_BACKEND where versions cannot tell states apart, FILE_CHANGED for a
 * version that would not settle, HOST_IO. */
int aos_fa_posix_stat_entries(int dir, aos_fa_entry *entries, size_t *count, aos_fa_status *st);

/* posix_walk.c: fstatat(dir, name, AT_SYMLINK_NOFOLLOW), or fstat(dir) for name NULL,
 * for the kind, mode, identity, size and link count only: on Linux a statx that asks
 * for no timestamp, so it does not mark the ctime as seen (with multigrain stamps, a
 * stat that reads the ctime makes the next write stamp a fine time and dirty the
 * inode: about 2 us per append measured on ext4). The times in *sb are 0 when statx
 * answered. 0 or -errno. */
int aos_fa_posix_look_kind(int dir, const char *name, struct stat *sb);

/* The entry kind of a st_mode. */
aos_fa_entry_kind aos_fa_posix_kind(mode_t mode);

/* The host code of an UNSAFE_ENTRY refusal for an entry of this mode where a regular
 * file is needed: ELOOP for a link, EISDIR for a directory, 0 (none) otherwise. */
#define aos_fa_posix_kind_errno(mode) (S_ISLNK(mode) ? ELOOP : S_ISDIR(mode) ? EISDIR : 0)

#endif
