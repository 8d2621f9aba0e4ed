/* file-authority: listing one directory (POSIX). */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static aos_fa_entry_kind aos_fa__kind_of_mode(mode_t mode) {
  if (S_ISREG(mode)) return AOS_FA_KIND_FILE;
  if (S_ISDIR(mode)) return AOS_FA_KIND_DIRECTORY;
  if (S_ISLNK(mode)) return AOS_FA_KIND_SYMLINK;
  return AOS_FA_KIND_OTHER;
}

/* The entry's kind without following links; 0, -ENOENT when it vanished, or -errno. */
static int aos_fa__kind_of(DIR *d, const struct dirent *ent, aos_fa_entry_kind *kind) {
#ifdef DT_UNKNOWN
  switch (ent->d_type) {
    case DT_REG: *kind = AOS_FA_KIND_FILE; return 0;
    case DT_DIR: *kind = AOS_FA_KIND_DIRECTORY; return 0;
    case DT_LNK: *kind = AOS_FA_KIND_SYMLINK; return 0;
    case DT_UNKNOWN: break;
    default: *kind = AOS_FA_KIND_OTHER; return 0;
  }
#endif
  struct stat sb;
  if (fstatat(dirfd(d), ent->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) return -errno;
  *kind = aos_fa__kind_of_mode(sb.st_mode);
  return 0;
}

void aos_fa_listing_free(aos_fa_listing *listing) {
  if (listing->entries != NULL) {
    for (size_t i = 0; i < listing->count; i++) free(listing->entries[i].name);
    free(listing->entries);
  }
  listing->entries = NULL;
  listing->count = 0;
  listing->omitted = 0;
}

static int aos_fa__push(aos_fa_listing *out, size_t *cap, const char *name, size_t len,
                        aos_fa_entry_kind kind) {
  if (out->count == *cap) {
    size_t ncap = *cap == 0 ? 16 : *cap * 2;
    aos_fa_entry *n = realloc(out->entries, ncap * sizeof *n);
    if (n == NULL) return -ENOMEM;
    out->entries = n;
    *cap = ncap;
  }
  char *copy = malloc(len + 1);
  if (copy == NULL) return -ENOMEM;
  memcpy(copy, name, len + 1);
  out->entries[out->count].name = copy;
  out->entries[out->count].len = len;
  out->entries[out->count].kind = kind;
  out->count++;
  return 0;
}

int aos_fa_list(const aos_fa_root *root, const char *const *segs, size_t count,
                aos_fa_listing *out, aos_fa_status *st) {
  memset(out, 0, sizeof *out);
  int fd;
  int r = aos_fa_walk(root, segs, count, AOS_FA_WALK_LIST, &fd, st);
  if (r != 0) return r;
  int at = count == 0 ? -1 : (int)count - 1;
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    int e = errno;
    close(fd);
    return aos_fa_fail(st, AOS_FA_HOST_IO, e, at);
  }
  size_t cap = 0;
  aos_fa_guard guard;
  aos_fa_guard_begin(&guard, root, count == 0 ? root->fd : dirfd(d), -1); /* [] is the root */
  for (;;) {
    errno = 0;
    struct dirent *ent = readdir(d);
    if (ent == NULL) {
      if (errno != 0) {
        r = aos_fa_fail(st, AOS_FA_HOST_IO, errno, at);
        goto done;
      }
      break;
    }
    const char *name = ent->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    size_t len = strlen(name);
    if (!aos_fa_utf8_valid((const uint8_t *)name, len)) {
      out->omitted++;
      continue;
    }
    aos_fa_entry_kind kind = AOS_FA_KIND_OTHER;
    int k = aos_fa__kind_of(d, ent, &kind);
    if (k == -ENOENT) continue; /* removed while listing */
    if (k != 0) {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, -k, at);
      goto done;
    }
    k = aos_fa__push(out, &cap, name, len, kind);
    if (k != 0) {
      r = aos_fa_fail(st, AOS_FA_HOST_IO, -k, at);
      goto done;
    }
  }
  /* Confinement: the directory is beneath the root after its entries were read (a
   * directory moved out while it was listed is FILE_CHANGED; posix_beneath.c). */
  r = aos_fa_beneath_dir(root, dirfd(d), st);
  /* Moved out and back while it was read: its entries may have been read outside. */
  if (r == 0 && aos_fa_guard_moved(&guard)) r = aos_fa_fail(st, AOS_FA_FILE_CHANGED, 0, -1);
  if (r == 0) aos_fa_status_ok(st);
done:
  aos_fa_guard_end(&guard);
  closedir(d);
  if (r != 0) aos_fa_listing_free(out);
  return r;
}
