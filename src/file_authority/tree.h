/* file-authority: what the walk (tree.c, every platform) needs of each platform
 * (posix_tree.c, win32_tree.c). Directories are the int descriptors of aos_fa_root (a
 * HANDLE's value on Windows). Each primitive returns 0 or a positive errno; none
 * composes a message. */
#ifndef AOS_FILE_AUTHORITY_TREE_H
#define AOS_FILE_AUTHORITY_TREE_H

#include "file_authority/fa.h"

/* A kind the directory listing did not give (DT_UNKNOWN): looked at only for entries
 * the walk reaches. */
#define AOS_FA_KIND_UNKNOWN ((aos_fa_entry_kind)4)

/* Called for each entry of a directory ("." and ".." may come too): its name (not yet
 * checked as UTF-8; name[len] is a NUL) and its kind as the listing gives it (or
 * AOS_FA_KIND_UNKNOWN); name NULL for a name that has no UTF-8 form at all (Windows:
 * not well-formed UTF-16). Returns 0, or a positive errno to stop the scan with. */
typedef int (*aos_fa_scan_fn)(void *ctx, const char *name, size_t len, aos_fa_entry_kind kind);

/* Reads every entry of the directory `dir` (from its start; `dir` stays open and its
 * descriptor usable to open children by). 0, the callback's errno, or the host's. */
int aos_fa_tree_scan(int dir, aos_fa_scan_fn fn, void *ctx);

/* Opens the child directory `name` of `dir` without following it, for scanning and
 * for opening its own children: 0 with *child, or ENOENT (gone), ELOOP (a link or
 * reparse point), ENOTDIR (not a directory any more), or another errno. */
int aos_fa_tree_open_child(int dir, const char *name, int *child);

/* The kind of `name` in `dir`, observed without following it. 0 or an errno (ENOENT:
 * gone). */
int aos_fa_tree_kind_at(int dir, const char *name, aos_fa_entry_kind *kind);

/* Each entry's stat (made with room for one) as aos_fa_stat reports it, observed
 * relative to `dir` without following it (never through a pathname), versions settled
 * as stat's are; each kind becomes its stat's; entries gone meanwhile are dropped
 * (*count lowered). 0, or a failure with *st filled (no segment index). */
int aos_fa_tree_stat_entries(int dir, aos_fa_entry *entries, size_t *count, aos_fa_status *st);

/* Confinement under moves (posix_beneath.c on POSIX): a watch instance for the walk
 * (-1: none), a watch on `dir` set before its entries are scanned (-1: none), and after
 * the scan the check that `dir` is beneath the retained root and was not moved while it
 * was read (out and back included): 0, or the failure with *st filled (FILE_CHANGED for
 * a move); the watch is removed either way. The watch instance ends with the walk. */
int aos_fa_tree_watch_open(void);
int aos_fa_tree_watch(int w, int dir);
int aos_fa_tree_confined(const aos_fa_root *root, int w, int wd, int dir, aos_fa_status *st);
void aos_fa_tree_unwatch(int w, int wd); /* a watch removed without the check */
void aos_fa_tree_watch_close(int w);

/* Closes a directory the walk opened (never retried). */
void aos_fa_tree_close(int dir);

#endif
