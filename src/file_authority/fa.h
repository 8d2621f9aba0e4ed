/* file-authority: the C core. Rooted file access through a retained directory
 * descriptor, resolving every path component by component beneath it without
 * following links. Knows nothing of Node-API.
 *
 * Every aos_fa_* function that can fail returns 0 or a negative errno and fills an
 * aos_fa_status with the outcome's kind, the host errno to report (0: none) and the
 * index of the segment where it was met (-1: none). The caller composes messages;
 * nothing here ever prints or returns a path or a segment's text. */
#ifndef AOS_FILE_AUTHORITY_FA_H
#define AOS_FILE_AUTHORITY_FA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AOS_FA_MAX_SEGMENTS 255
#define AOS_FA_MAX_SEGMENT_BYTES 255

typedef enum {
  AOS_FA_OK = 0,
  AOS_FA_NOT_FOUND,       /* the entry or one of its parents does not exist */
  AOS_FA_INVALID_PATH,    /* a segment list the core refuses (defense in depth) */
  AOS_FA_INVALID_CONTENT, /* bytes to write that are not valid UTF-8 */
  AOS_FA_UNSAFE_ENTRY,    /* a link, a non-directory parent, a non-regular final entry */
  AOS_FA_OVER_BUDGET,     /* more bytes than the budget allows */
  AOS_FA_FILE_CHANGED,    /* changed while read, or the committed name was replaced */
  AOS_FA_ROOT_CHANGED,    /* the retained root was removed, or is not the expected one */
  AOS_FA_ENTRY_EXISTS,    /* create-only (ifAbsent, rename, makeDirectory) met an entry */
  AOS_FA_HOST_IO,         /* any other host failure; err says which */
  AOS_FA_UNSUPPORTED_BACKEND /* the filesystem cannot uphold this (versions where no
                                stamp or counter tells two states apart) */
} aos_fa_kind;

typedef struct {
  aos_fa_kind kind;
  int err;     /* positive errno to report as the host code, or 0 */
  int segment; /* segment index, or -1 */
} aos_fa_status;

/* Which host features an authority uses. */
typedef enum {
  /* Linux: openat2 (5.6+) resolves a path's directories in one RESOLVE_BENEATH |
   * RESOLVE_NO_SYMLINKS call; writes stage content in an O_TMPFILE file (3.11+). */
  AOS_FA_RESOLVE_OPENAT2 = 0,
  /* POSIX.1-2008 only: openat(O_NOFOLLOW|O_DIRECTORY) one component at a time; writes
   * stage content in a file created O_EXCL under a random name. */
  AOS_FA_RESOLVE_PORTABLE = 1
} aos_fa_resolver;

/* ---- posix_fdcache.c / win32.c: descriptors a ReadAuthority keeps of files it read
 * (posix_fdcache.c says when one is reused). */
typedef struct aos_fa_fdcache aos_fa_fdcache;

#define AOS_FA_FDCACHE_SLOTS 4         /* per authority */
#define AOS_FA_FDCACHE_PROCESS_MAX 64  /* in the whole process */
#define AOS_FA_FDCACHE_KEY_MAX 512     /* the longest path kept, NUL included */

/* A new, empty cache; NULL when there is no memory, and on Windows, where none is kept. */
aos_fa_fdcache *aos_fa_fdcache_new(void);
/* Closes every descriptor kept and frees the cache (NULL: nothing). No read may be
 * using it. */
void aos_fa_fdcache_free(aos_fa_fdcache *c);
/* How many descriptors the cache holds now. */
int aos_fa_fdcache_count(aos_fa_fdcache *c);

/* A retained root: the directory descriptor, the resolver its operations use, and the
 * descriptors its reads keep (NULL: none kept). */
typedef struct {
  int fd;
  aos_fa_resolver resolver;
  aos_fa_fdcache *fdcache;
} aos_fa_root;

/* ---- segments.c: status helpers and argument rules (every platform). */

void aos_fa_status_ok(aos_fa_status *st);
/* Fills *st and returns -err, or a representative -errno for the kind when err is 0. */
int aos_fa_fail(aos_fa_status *st, aos_fa_kind kind, int err, int segment);

/* True when `s[0..len)` is well-formed UTF-8 (no overlong forms, no surrogates, no
 * code point above U+10FFFF). */
bool aos_fa_utf8_valid(const uint8_t *s, size_t len);

/* Checks `count` NUL-terminated segments: at most AOS_FA_MAX_SEGMENTS of them, each
 * non-empty, not "." or "..", without '/', '\\' or NUL, at most
 * AOS_FA_MAX_SEGMENT_BYTES bytes of valid UTF-8. Returns 0, or -EINVAL with
 * AOS_FA_INVALID_PATH and the first bad index (-1 when the count is wrong). */
int aos_fa_segments_check(const char *const *segs, size_t count, aos_fa_status *st);

/* ---- version.c: an entry's version (every platform).
 *
 * The identity (device or volume, inode or file id), size, modification time and
 * status-change time of one entry, as the host reports them through a descriptor or
 * handle. Two versions are equal only when all six fields are. Its string form
 * (aos_fa_version_string) is AOS_FA_VERSION_CHARS lowercase hex digits: each field
 * through a fixed bijective scramble, so the string is opaque to callers yet equal
 * exactly when the versions are (no digest, no collision), the same in every process
 * of a host. */
typedef struct {
  uint64_t dev;
  uint64_t ino;    /* POSIX: st_ino; Windows: the low half of the 128-bit file id */
  uint64_t ino_hi; /* POSIX: 0; Windows: the high half of the file id */
  uint64_t size;
  int64_t mtime_ns;
  int64_t ctime_ns; /* the status-change time (Windows: ChangeTime) */
} aos_fa_version;

#define AOS_FA_VERSION_CHARS 96 /* six 64-bit fields, 16 hex digits each */

/* Writes the version's string form and a NUL into out[0..AOS_FA_VERSION_CHARS]. */
void aos_fa_version_string(const aos_fa_version *v, char out[AOS_FA_VERSION_CHARS + 1]);

/* True when both name the same entry with the same size and times. */
bool aos_fa_version_equal(const aos_fa_version *a, const aos_fa_version *b);

/* True when s[0..len) has the shape of a version string (AOS_FA_VERSION_CHARS
 * lowercase hex digits); says nothing of whether any entry has it. */
bool aos_fa_version_string_valid(const char *s, size_t len);

/* True when v's string form is s (which must have the shape above). */
bool aos_fa_version_matches(const aos_fa_version *v, const char *s);

/* ---- posix_walk.c / win32.c: roots and resolution. A root descriptor is a file
 * descriptor on POSIX and a HANDLE on Windows (whose values fit in 32 bits). */

/* True when this kernel offers openat2 with the resolve flags this core needs. */
bool aos_fa_openat2_available(void);

/* Opens the directory `path` (absolute; symlinks in it are followed once, here) as
 * a retained root. Missing: HOST_IO ENOENT. Not a directory: UNSAFE_ENTRY. */
int aos_fa_root_open(const char *path, int *fd_out, aos_fa_status *st);

/* Closes a retained root descriptor (never retried). */
void aos_fa_root_close(int fd);

/* ROOT_CHANGED when the retained root has been removed (its link count is 0). */
int aos_fa_root_check(int fd, aos_fa_status *st);

/* *same = whether both descriptors name the same directory object (dev, ino). */
int aos_fa_root_same(int fd_a, int fd_b, bool *same, aos_fa_status *st);

/* Flags for aos_fa_walk. */
#define AOS_FA_WALK_CREATE 1u /* create missing directories (mode 0777 less umask) */
#define AOS_FA_WALK_SYNC 2u   /* the result must accept fsync (not an O_PATH descriptor) */
#define AOS_FA_WALK_LIST 4u   /* the result must accept getdents (readable) */

/* Resolves segs[0..count) beneath the root, each a directory, none a link, and
 * returns a new descriptor for the last one in *dir_out (count == 0: a new
 * descriptor for the root itself). A missing component: NOT_FOUND (ENOENT) at its
 * index, unless AOS_FA_WALK_CREATE. A symlink: UNSAFE_ENTRY (ELOOP); a
 * non-directory: UNSAFE_ENTRY (ENOTDIR). */
int aos_fa_walk(const aos_fa_root *root, const char *const *segs, size_t count,
                unsigned flags, int *dir_out, aos_fa_status *st);

/* ---- posix_read.c / win32.c (aos_fa_read_into); segments.c (aos_fa_read) */

/* A read's destination: returns `size` writable bytes (size may be 0; then any
 * pointer, NULL included, will do), or NULL when it cannot (the read then fails with
 * HOST_IO ENOMEM). `ctx` is the caller's. */
typedef uint8_t *(*aos_fa_alloc)(void *ctx, size_t size);

/* Reads the regular file segs[0..count) whole (count 0, the root: UNSAFE_ENTRY), if it
 * holds at most max_bytes bytes, into a buffer obtained from alloc(ctx, size): called
 * at most once, from the calling thread, once the file is open and its size is known
 * to be within the budget. *data is what alloc returned, on failure too (so the caller
 * can release it), or NULL when alloc was not called; on success *len bytes of it hold
 * the file's content. NOT_FOUND when it or a parent is missing; UNSAFE_ENTRY for
 * anything but a regular file (never opened in a way that blocks); OVER_BUDGET;
 * FILE_CHANGED when identity, size or mtime moved (these two concern the file, not a
 * segment: no segment index). */
int aos_fa_read_into(const aos_fa_root *root, const char *const *segs, size_t count,
                     uint64_t max_bytes, aos_fa_alloc alloc, void *ctx, uint8_t **data,
                     size_t *len, aos_fa_version *version, aos_fa_status *st);
/* `version` (may be NULL): on success, the version of exactly the bytes returned. */

/* aos_fa_read_into with malloc: on success *data is a malloc'ed buffer of *len bytes
 * (never NULL, even for an empty file); free it with free(). On failure *data is NULL. */
int aos_fa_read(const aos_fa_root *root, const char *const *segs, size_t count,
                uint64_t max_bytes, uint8_t **data, size_t *len, aos_fa_version *version,
                aos_fa_status *st);

/* Reads at most `length` bytes of the regular file segs[0..count) from `offset`
 * (fewer at end of file, none past it) into a buffer from alloc(ctx, n), n being the
 * count that will be read (called at most once, as for aos_fa_read_into). On success
 * *len is the count read, *size the file's size and *version its version at that
 * read, under the same consistency rule as aos_fa_read_into (FILE_CHANGED). Never
 * OVER_BUDGET: a file larger than `length` is read in part. */
int aos_fa_read_range(const aos_fa_root *root, const char *const *segs, size_t count,
                      uint64_t offset, uint64_t length, aos_fa_alloc alloc, void *ctx,
                      uint8_t **data, size_t *len, uint64_t *size, aos_fa_version *version,
                      aos_fa_status *st);

/* ---- posix_list.c */

typedef enum {
  AOS_FA_KIND_FILE = 0,
  AOS_FA_KIND_DIRECTORY = 1,
  AOS_FA_KIND_SYMLINK = 2,
  AOS_FA_KIND_OTHER = 3
} aos_fa_entry_kind;

typedef struct {
  char *name; /* NUL-terminated, valid UTF-8 */
  size_t len;
  aos_fa_entry_kind kind;
} aos_fa_entry;

typedef struct {
  aos_fa_entry *entries;
  size_t count;
  size_t omitted; /* names that are not valid UTF-8, left out */
} aos_fa_listing;

/* Lists the directory segs[0..count) (count 0: the root), without "." and "..",
 * unsorted. NOT_FOUND when it is missing; UNSAFE_ENTRY when it is not a directory. */
int aos_fa_list(const aos_fa_root *root, const char *const *segs, size_t count,
                aos_fa_listing *out, aos_fa_status *st);
void aos_fa_listing_free(aos_fa_listing *listing);

/* ---- segments.c: the order of a listing (every platform). */

/* Compares two valid UTF-8 names in the order of their UTF-16 code units (the order of
 * JavaScript's `<` on strings; not UTF-8 byte order): <0, 0 or >0. */
int aos_fa_name_compare(const char *a, size_t alen, const char *b, size_t blen);

/* Sorts a listing's entries by name with aos_fa_name_compare. */
void aos_fa_listing_sort(aos_fa_listing *listing);

/* ---- posix_write.c / win32.c */

/* How a write commits. aos_fa_write_opts_init gives the defaults. */
typedef struct {
  bool create_parents; /* create missing parent directories, none through a link */
  bool utf8;           /* the bytes must be valid UTF-8 (writeText), else INVALID_CONTENT */
  uint32_t mode;       /* a new file's permission bits (0 ... 0777), less the umask */
  bool if_absent;      /* create only: any entry at the name is ENTRY_EXISTS */
  /* NULL, or a version string (aos_fa_version_string_valid): replace only a regular
   * file of that version at the commit, else FILE_CHANGED (a missing target too). */
  const char *if_version;
} aos_fa_write_opts;

/* create_parents false, utf8 true, mode 0666, if_absent false, if_version NULL. */
void aos_fa_write_opts_init(aos_fa_write_opts *opts);

/* Atomically replaces (or creates) the regular file segs[0..count) (count 0, the
 * root: UNSAFE_ENTRY) with data[0..len): exclusive owner-only temporary file in the
 * retained parent, written, flushed, given its final permission bits (a replaced
 * file's mode & 0777, never set-id bits; a new file: opts->mode less the umask),
 * committed relative to the parent without ever replacing an entry of another kind,
 * parent flushed, committed name checked against the temporary file's identity. */
int aos_fa_write(const aos_fa_root *root, const char *const *segs, size_t count,
                 const uint8_t *data, size_t len, const aos_fa_write_opts *opts,
                 aos_fa_status *st);

/* ---- the 0.2 operations: one concern per file (posix_stat.c, posix_remove.c,
 * posix_mkdir.c, posix_rename.c, posix_tree.c). Each resolves its parent from the
 * retained root like aos_fa_walk and acts relative to that parent descriptor. */

/* What stat reports of one entry, observed without following it. */
typedef struct {
  aos_fa_entry_kind kind;
  uint64_t size;    /* bytes; a symlink: the link's own size */
  int64_t mtime_ns; /* modification time, nanoseconds since the epoch */
  uint32_t mode;    /* permission bits only (mode & 0777) */
  aos_fa_version version;
} aos_fa_stat_info;

/* Looks at segs[0..count) (count 0: the root) without following it and without
 * opening it for reading. NOT_FOUND when it or a parent is missing. */
int aos_fa_stat(const aos_fa_root *root, const char *const *segs, size_t count,
                aos_fa_stat_info *out, aos_fa_status *st);

/* Removes the entry segs[0..count) as an entry (a link is never followed): a
 * directory only when `directory` (and empty: HOST_IO ENOTEMPTY), else UNSAFE_ENTRY
 * (EISDIR). *removed: whether it removed one (false: nothing had that name, or a
 * parent was missing). count 0: UNSAFE_ENTRY. The parent is flushed. */
int aos_fa_remove(const aos_fa_root *root, const char *const *segs, size_t count,
                  bool directory, bool *removed, aos_fa_status *st);

/* Creates the directory segs[0..count) with `mode` (0 ... 0777, less the umask);
 * `parents`: each missing parent too, one by one, none through a link (else a missing
 * parent is HOST_IO ENOENT at its index). *created: whether it created the last one
 * (false: a directory was there; count 0, the root, is one). An existing link:
 * UNSAFE_ENTRY (ELOOP); any other existing entry: ENTRY_EXISTS (EEXIST). The parent
 * is flushed. */
int aos_fa_make_directory(const aos_fa_root *root, const char *const *segs, size_t count,
                          bool parents, uint32_t mode, bool *created, aos_fa_status *st);

/* Moves the entry from[0..nfrom) to to[0..nto), both parents resolved from the root.
 * A missing source: HOST_IO ENOENT. An existing target: ENTRY_EXISTS unless
 * `replace`, which replaces only a regular file (another kind: UNSAFE_ENTRY).
 * Segment indexes of failures on the target side are offset by nfrom (the target's
 * segments follow the source's). Both parents are flushed. */
int aos_fa_rename(const aos_fa_root *root, const char *const *from, size_t nfrom,
                  const char *const *to, size_t nto, bool replace, aos_fa_status *st);

/* One entry of a bounded walk, in walk order: its name (valid UTF-8), its kind and
 * its depth (0: a child of the walked directory); an entry's path is the names of the
 * last entry of each smaller depth before it, then its own. */
typedef struct {
  aos_fa_entry *entries;
  uint32_t *depths;
  size_t count;
  size_t omitted;  /* names not valid UTF-8 and directories replaced before entry */
  bool truncated;  /* more entries existed than max_entries */
} aos_fa_tree;

/* Walks beneath the directory segs[0..count), depth-first, each directory's entries
 * in code-unit order, a directory before its contents, never following a link and
 * never descending by path (each child directory is opened from its parent's
 * descriptor with O_NOFOLLOW | O_DIRECTORY). At most max_entries entries; descends
 * while depth < max_depth, and never deeper than a path of AOS_FA_MAX_SEGMENTS
 * segments from the root. NOT_FOUND / UNSAFE_ENTRY as aos_fa_list. */
int aos_fa_tree_walk(const aos_fa_root *root, const char *const *segs, size_t count,
                     uint64_t max_entries, uint64_t max_depth, aos_fa_tree *out,
                     aos_fa_status *st);
void aos_fa_tree_free(aos_fa_tree *tree);

#endif
