/* file-authority: the bounded walk beneath a directory (POSIX).
 *
 * Depth-first, each directory's entries sorted in code-unit order, a directory
 * before its contents. It never resolves a path below the walked directory: each
 * child directory is opened from its parent's descriptor with O_NOFOLLOW |
 * O_DIRECTORY, so a link is never followed and a directory renamed or swapped while
 * the walk runs is entered only if it is a directory at that name in a directory
 * already entered (one the walk holds open). Holds one descriptor per level. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  aos_fa_listing listing; /* the directory's entries, sorted */
  size_t next;            /* the next entry to report */
} aos_fa__frame;

void aos_fa_tree_free(aos_fa_tree *tree) {
  if (tree->entries != NULL) {
    for (size_t i = 0; i < tree->count; i++) free(tree->entries[i].name);
  }
  free(tree->entries);
  free(tree->depths);
  tree->entries = NULL;
  tree->depths = NULL;
  tree->count = 0;
}

/* Reads the directory `fd` (taken over and closed) into *out, unsorted: names not
 * valid UTF-8 are counted in *omitted. 0 or -errno. */
static int aos_fa__read_dir(int fd, aos_fa_listing *out, size_t *omitted) {
  memset(out, 0, sizeof *out);
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    int e = errno;
    close(fd);
    return -e;
  }
  size_t cap = 0;
  int r = 0;
  for (;;) {
    errno = 0;
    struct dirent *ent = readdir(d);
    if (ent == NULL) {
      r = errno != 0 ? -errno : 0;
      break;
    }
    const char *name = ent->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    size_t len = strlen(name);
    if (!aos_fa_utf8_valid((const uint8_t *)name, len)) {
      (*omitted)++;
      continue;
    }
    aos_fa_entry_kind kind = AOS_FA_KIND_OTHER;
    bool known = false;
#ifdef DT_UNKNOWN
    known = ent->d_type != DT_UNKNOWN;
    if (ent->d_type == DT_REG) kind = AOS_FA_KIND_FILE;
    else if (ent->d_type == DT_DIR) kind = AOS_FA_KIND_DIRECTORY;
    else if (ent->d_type == DT_LNK) kind = AOS_FA_KIND_SYMLINK;
#endif
    if (!known) {
      struct stat sb;
      if (fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue; /* removed while listing */
        r = -errno;
        break;
      }
      kind = aos_fa_posix_kind(sb.st_mode);
    }
    if (out->count == cap) {
      size_t ncap = cap == 0 ? 16 : cap * 2;
      aos_fa_entry *n = realloc(out->entries, ncap * sizeof *n);
      if (n == NULL) {
        r = -ENOMEM;
        break;
      }
      out->entries = n;
      cap = ncap;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL) {
      r = -ENOMEM;
      break;
    }
    memcpy(copy, name, len + 1);
    out->entries[out->count].name = copy;
    out->entries[out->count].len = len;
    out->entries[out->count].kind = kind;
    out->count++;
  }
  closedir(d);
  if (r != 0) aos_fa_listing_free(out);
  return r;
}

/* Appends one entry (taking its name) at `depth`. 0 or -ENOMEM. */
static int aos_fa__emit(aos_fa_tree *out, size_t *cap, aos_fa_entry *e, uint32_t depth) {
  if (out->count == *cap) {
    size_t ncap = *cap == 0 ? 64 : *cap * 2;
    aos_fa_entry *n = realloc(out->entries, ncap * sizeof *n);
    if (n == NULL) return -ENOMEM;
    out->entries = n;
    uint32_t *dn = realloc(out->depths, ncap * sizeof *dn);
    if (dn == NULL) return -ENOMEM;
    out->depths = dn;
    *cap = ncap;
  }
  out->entries[out->count] = *e;
  out->depths[out->count] = depth;
  out->count++;
  e->name = NULL;
  return 0;
}

int aos_fa_tree_walk(const aos_fa_root *root, const char *const *segs, size_t count,
                     uint64_t max_entries, uint64_t max_depth, aos_fa_tree *out,
                     aos_fa_status *st) {
  memset(out, 0, sizeof *out);
  int at = count == 0 ? -1 : (int)count - 1;
  int fd;
  int r = aos_fa_walk(root, segs, count, AOS_FA_WALK_LIST, &fd, st);
  if (r != 0) return r;
  /* Paths below stay usable as segment lists: at most AOS_FA_MAX_SEGMENTS in all
   * (an entry at depth d has count + d + 1 segments). */
  uint64_t limit = count >= AOS_FA_MAX_SEGMENTS - 1 ? 0 : AOS_FA_MAX_SEGMENTS - 1 - count;
  if (max_depth > limit) max_depth = limit;
  aos_fa__frame stack[AOS_FA_MAX_SEGMENTS];
  int fds[AOS_FA_MAX_SEGMENTS]; /* each open frame's directory, to open children from */
  size_t top = 0, cap = 0;
  bool moved = false; /* a directory was found moved out of the root */
  for (size_t i = 0; i < AOS_FA_MAX_SEGMENTS; i++) fds[i] = -1;
  /* A second descriptor of the same directory object (fdopendir takes the first). */
  do {
    fds[0] = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fds[0] < 0 && errno == EINTR);
  if (fds[0] < 0) {
    int e = errno;
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, at);
  }
  /* One watch instance for the walk: a watch on each directory while it is read (a
   * move out and back between reading it and its check is seen; posix_beneath.c). */
  int watch = aos_fa_watch_open();
  int wd = count == 0 ? -1 : aos_fa_watch_add(watch, fds[0]); /* [] is the root: never watched */
  r = aos_fa__read_dir(fd, &stack[0].listing, &out->omitted);
  if (r != 0) {
    aos_fa_watch_remove(watch, wd);
    aos_fa_watch_close(watch);
    close(fds[0]);
    return aos_fa_fail(st, AOS_FA_HOST_IO, -r, at);
  }
  /* Confinement: each directory is beneath the root once its entries are read (its
   * own path, one snapshot, which holds every directory above it); a directory moved
   * out of the root while the walk runs makes it FILE_CHANGED (posix_beneath.c). */
  if (aos_fa_beneath_dir(root, fds[0], st) != 0 ||
      (aos_fa_watch_moved(watch) && aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1) != 0)) {
    aos_fa_listing_free(&stack[0].listing);
    aos_fa_watch_remove(watch, wd);
    aos_fa_watch_close(watch);
    close(fds[0]);
    return st->kind == AOS_FA_FILE_CHANGED ? aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1) : aos_fa_fail(st, AOS_FA_HOST_IO, st->err, at);
  }
  aos_fa_watch_remove(watch, wd);
  wd = -1;
  aos_fa_listing_sort(&stack[0].listing);
  stack[0].next = 0;
  r = 0;
  for (;;) {
    aos_fa__frame *f = &stack[top];
    if (f->next == f->listing.count) {
      aos_fa_listing_free(&f->listing);
      close(fds[top]);
      fds[top] = -1;
      if (top == 0) break;
      top--;
      continue;
    }
    aos_fa_entry *e = &f->listing.entries[f->next++];
    int child = -1;
    if (e->kind == AOS_FA_KIND_DIRECTORY && top < max_depth) {
      /* Opened before it is reported: one replaced by another kind since the
       * listing is left out with its subtree, as the contract says. */
      do {
        child = openat(fds[top], e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      } while (child < 0 && errno == EINTR);
      if (child < 0) {
        int ce = errno;
        if (ce == ENOENT) continue; /* removed meanwhile */
        if (ce == ELOOP || ce == ENOTDIR) {
          out->omitted++;
          continue;
        }
        r = -ce;
        break;
      }
    }
    if (out->count == max_entries) {
      if (child >= 0) close(child);
      out->truncated = true;
      break;
    }
    r = aos_fa__emit(out, &cap, e, (uint32_t)top);
    if (r != 0) {
      if (child >= 0) close(child);
      break;
    }
    if (child < 0) continue;
    int dup_fd;
    do {
      dup_fd = openat(child, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } while (dup_fd < 0 && errno == EINTR);
    if (dup_fd < 0) {
      r = -errno;
      close(child);
      break;
    }
    aos_fa__frame *nf = &stack[top + 1];
    wd = aos_fa_watch_add(watch, child);
    r = aos_fa__read_dir(dup_fd, &nf->listing, &out->omitted);
    if (r != 0) {
      close(child);
      break;
    }
    if (aos_fa_beneath_dir(root, child, st) != 0 ||
        (aos_fa_watch_moved(watch) && aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1) != 0)) {
      aos_fa_listing_free(&nf->listing);
      close(child);
      moved = true;
      r = st->kind == AOS_FA_FILE_CHANGED ? -ESTALE : -st->err;
      break;
    }
    aos_fa_watch_remove(watch, wd);
    wd = -1;
    aos_fa_listing_sort(&nf->listing);
    nf->next = 0;
    top++;
    fds[top] = child;
  }
  aos_fa_watch_remove(watch, wd); /* a directory whose reading failed */
  aos_fa_watch_close(watch);
  if (r != 0 || out->truncated) {
    for (size_t i = 0; i <= top; i++) {
      aos_fa_listing_free(&stack[i].listing);
      if (fds[i] >= 0) close(fds[i]);
    }
  }
  if (r != 0) {
    aos_fa_tree_free(out);
    if (moved) return aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
    return aos_fa_fail(st, AOS_FA_HOST_IO, -r, at);
  }
  aos_fa_status_ok(st);
  return 0;
}
