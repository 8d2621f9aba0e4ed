/* Shared by the libFuzzer targets: an independent reference for the segment and
 * UTF-8 rules (written from the contract and Unicode's table 3-7, not from
 * src/file_authority/segments.c), and the input format that splits one fuzzer input
 * into a segment list. */
#ifndef AOS_FUZZ_COMMON_H
#define AOS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AOS_FUZZ_CHECK(cond, what)                                        \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", what,        \
              __FILE__, __LINE__);                                        \
      abort();                                                            \
    }                                                                     \
  } while (0)

/* Well-formed UTF-8 by Unicode table 3-7: the allowed byte ranges per position. */
static inline bool aos_fuzz_ref_utf8(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t b = s[i];
    uint8_t lo = 0x80, hi = 0xBF;
    size_t more;
    if (b <= 0x7F) { i++; continue; }
    else if (b >= 0xC2 && b <= 0xDF) more = 1;
    else if (b == 0xE0) { more = 2; lo = 0xA0; }
    else if (b >= 0xE1 && b <= 0xEC) more = 2;
    else if (b == 0xED) { more = 2; hi = 0x9F; }
    else if (b >= 0xEE && b <= 0xEF) more = 2;
    else if (b == 0xF0) { more = 3; lo = 0x90; }
    else if (b >= 0xF1 && b <= 0xF3) more = 3;
    else if (b == 0xF4) { more = 3; hi = 0x8F; }
    else return false;
    if (i + more >= n) return false; /* truncated sequence */
    if (s[i + 1] < lo || s[i + 1] > hi) return false;
    for (size_t k = 2; k <= more; k++) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return false;
    }
    i += more + 1;
  }
  return true;
}

/* One segment under the contract's rules (POSIX): non-empty, not "." or "..", no '/',
 * '\\' (NUL cannot occur in a C string), at most 255 bytes, well-formed UTF-8. */
static inline bool aos_fuzz_ref_segment(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 255) return false;
  if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return false;
  if (strchr(s, '/') != NULL || strchr(s, '\\') != NULL) return false;
  return aos_fuzz_ref_utf8((const uint8_t *)s, n);
}

/* Splits data at 0x00 bytes into NUL-terminated segments (at most `max`, each a
 * malloc'ed copy). The count can exceed 255 so the limit is exercised. */
typedef struct {
  char **segs;
  size_t count;
} aos_fuzz_list;

static inline void aos_fuzz_split(const uint8_t *data, size_t size, size_t max, aos_fuzz_list *out) {
  out->segs = NULL;
  out->count = 0;
  if (size == 0) return;
  size_t n = 1;
  for (size_t i = 0; i < size; i++) n += data[i] == 0;
  if (n > max) n = max;
  out->segs = calloc(n, sizeof *out->segs);
  AOS_FUZZ_CHECK(out->segs != NULL, "calloc");
  size_t start = 0;
  for (size_t i = 0; i <= size && out->count < n; i++) {
    if (i == size || data[i] == 0) {
      char *seg = malloc(i - start + 1);
      AOS_FUZZ_CHECK(seg != NULL, "malloc");
      memcpy(seg, data + start, i - start);
      seg[i - start] = '\0';
      out->segs[out->count++] = seg;
      start = i + 1;
    }
  }
}

static inline void aos_fuzz_free(aos_fuzz_list *l) {
  for (size_t i = 0; i < l->count; i++) free(l->segs[i]);
  free(l->segs);
  l->segs = NULL;
  l->count = 0;
}

#endif
