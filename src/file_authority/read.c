/* file-authority: aos_fa_read, a read into a malloc'ed buffer, over each platform's
 * aos_fa_read_into (posix_read.c, win32.c). The async path and the fuzz targets use
 * it; the sync path reads straight into a buffer Node allocates. Also the defaults of
 * the write and append options (every platform). */
#include "file_authority/fa.h"

#include <stdlib.h>

static uint8_t *aos_fa__malloc_dest(void *ctx, size_t size) {
  (void)ctx;
  return malloc(size > 0 ? size : 1); /* never NULL for an empty file */
}

int aos_fa_read(const aos_fa_root *root, const char *const *segs, size_t count,
                uint64_t max_bytes, uint8_t **data, size_t *len, aos_fa_version *version,
                aos_fa_status *st) {
  uint8_t *buf = NULL;
  int r = aos_fa_read_into(root, segs, count, max_bytes, aos_fa__malloc_dest, NULL, &buf, len,
                           version, st);
  if (r != 0) {
    free(buf);
    buf = NULL;
  }
  *data = buf;
  return r;
}

void aos_fa_write_opts_init(aos_fa_write_opts *opts) {
  opts->create_parents = false;
  opts->utf8 = true;
  opts->mode = 0666;
  opts->if_absent = false;
  opts->if_version = NULL;
  opts->durable = true;
}

void aos_fa_append_opts_init(aos_fa_append_opts *opts) {
  opts->create_parents = false;
  opts->utf8 = true;
  opts->mode = 0666;
  opts->durable = true;
}
