/* file-authority: status helpers, the argument rules, checked again in C whatever
 * the JavaScript layer did (defense in depth; also the entry point of a future fuzz
 * target), and the order of names in a listing. Shared by every platform's core. */
#include "file_authority/fa.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void aos_fa_status_ok(aos_fa_status *st) {
  st->kind = AOS_FA_OK;
  st->err = 0;
  st->segment = -1;
}

int aos_fa_fail(aos_fa_status *st, aos_fa_kind kind, int err, int segment) {
  st->kind = kind;
  st->err = err;
  st->segment = segment;
  if (err != 0) return -err;
  switch (kind) {
    case AOS_FA_NOT_FOUND: return -ENOENT;
    case AOS_FA_INVALID_PATH: return -EINVAL;
    case AOS_FA_INVALID_CONTENT: return -EILSEQ;
    case AOS_FA_UNSAFE_ENTRY: return -ELOOP;
    case AOS_FA_OVER_BUDGET: return -EFBIG;
#ifdef ESTALE
    case AOS_FA_FILE_CHANGED: return -ESTALE;
    case AOS_FA_ROOT_CHANGED: return -ESTALE;
#endif
    default: return -EIO;
  }
}

bool aos_fa_utf8_valid(const uint8_t *s, size_t len) {
  size_t i = 0;
  while (i < len) {
    /* Runs of ASCII 32 then eight bytes at a time (a 4 KiB text is checked in
     * about 1 000 instructions instead of 25 000). */
    while (len - i >= 32) {
      uint64_t w[4];
      memcpy(w, s + i, sizeof w);
      if (((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ull) != 0) break;
      i += 32;
    }
    while (len - i >= 8) {
      uint64_t w;
      memcpy(&w, s + i, sizeof w);
      if ((w & 0x8080808080808080ull) != 0) break;
      i += 8;
    }
    if (i >= len) break;
    uint8_t c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t need;
    uint32_t cp;
    uint32_t min;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1, cp = c & 0x1Fu, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2, cp = c & 0x0Fu, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3, cp = c & 0x07u, min = 0x10000;
    } else {
      return false; /* continuation byte, C0/C1 overlong lead, or F5..FF */
    }
    if (len - i - 1 < need) return false;
    for (size_t k = 1; k <= need; k++) {
      uint8_t cc = s[i + k];
      if ((cc & 0xC0u) != 0x80u) return false;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += need + 1;
  }
  return true;
}

#if defined(_WIN32) || defined(AOS_FA_WINDOWS_SEGMENT_RULES)
/* Windows' own rules, the same as the JavaScript layer's (lib/internal/
 * file-authority-common.js): no character Windows forbids in a name, no ':' (which
 * names an alternate data stream), no trailing dot or space (which Windows strips, so
 * the name would reach another entry), and no reserved device name, with or without an
 * extension (CON, PRN, AUX, NUL, CONIN$, CONOUT$, COM0-9, LPT0-9 and COM/LPT with a
 * superscript digit, any case). AOS_FA_WINDOWS_SEGMENT_RULES lets the C test program
 * check these rules on any host. */
static char aos_fa__lower(char c) {
  return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* True when seg[0..n) equals the lowercase ASCII word w, ignoring ASCII case. */
static bool aos_fa__word(const char *seg, size_t n, const char *w) {
  if (strlen(w) != n) return false;
  for (size_t i = 0; i < n; i++) {
    if (aos_fa__lower(seg[i]) != w[i]) return false;
  }
  return true;
}

static bool aos_fa__windows_reserved(const char *seg, size_t len) {
  const char *dot = memchr(seg, '.', len);
  size_t stem = dot != NULL ? (size_t)(dot - seg) : len;
  static const char *const plain[] = {"con", "prn", "aux", "nul", "conin$", "conout$"};
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
    if (aos_fa__word(seg, stem, plain[i])) return true;
  }
  if (stem < 4 || !(aos_fa__word(seg, 3, "com") || aos_fa__word(seg, 3, "lpt"))) return false;
  const uint8_t *d = (const uint8_t *)seg + 3;
  if (stem == 4) return d[0] >= '0' && d[0] <= '9';
  /* U+00B9, U+00B2, U+00B3 (superscript one, two, three) in UTF-8 */
  return stem == 5 && d[0] == 0xC2 && (d[1] == 0xB9 || d[1] == 0xB2 || d[1] == 0xB3);
}

static bool aos_fa__windows_ok(const char *seg, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)seg[i];
    if (c < 0x20 || strchr("<>:\"|?*", c) != NULL) return false;
  }
  if (seg[len - 1] == '.' || seg[len - 1] == ' ') return false;
  return !aos_fa__windows_reserved(seg, len);
}
#endif

static bool aos_fa__segment_ok(const char *seg) {
  if (seg == NULL) return false;
  size_t len = strnlen(seg, AOS_FA_MAX_SEGMENT_BYTES + 1);
  if (len == 0 || len > AOS_FA_MAX_SEGMENT_BYTES) return false;
  if (strcmp(seg, ".") == 0 || strcmp(seg, "..") == 0) return false;
  if (memchr(seg, '/', len) != NULL || memchr(seg, '\\', len) != NULL) return false;
  if (!aos_fa_utf8_valid((const uint8_t *)seg, len)) return false;
#if defined(_WIN32) || defined(AOS_FA_WINDOWS_SEGMENT_RULES)
  if (!aos_fa__windows_ok(seg, len)) return false;
#endif
  return true;
}

int aos_fa_segments_check(const char *const *segs, size_t count, aos_fa_status *st) {
  if (count > AOS_FA_MAX_SEGMENTS || (count > 0 && segs == NULL)) {
    return aos_fa_fail(st, AOS_FA_INVALID_PATH, 0, -1);
  }
  for (size_t i = 0; i < count; i++) {
    if (!aos_fa__segment_ok(segs[i])) {
      return aos_fa_fail(st, AOS_FA_INVALID_PATH, 0, (int)i);
    }
  }
  aos_fa_status_ok(st);
  return 0;
}

/* A byte's rank in UTF-16 code-unit order. Valid UTF-8 compared byte by byte is code
 * point order, which agrees with UTF-16 code-unit order except between U+E000..U+FFFF
 * (lead bytes 0xEE, 0xEF) and the supplementary planes (lead bytes 0xF0..0xF4), whose
 * surrogates (0xD800..0xDFFF) sort before U+E000 in UTF-16. The first byte where two
 * names differ is either a lead (or ASCII) byte in both or a continuation byte in both
 * (their prefixes are the same characters), so ranking 0xEE and 0xEF above 0xF4
 * (0xF5 and 0xF6, which valid UTF-8 never holds) gives the UTF-16 order. */
static unsigned aos_fa__u16_rank(uint8_t b) {
  return b == 0xEE ? 0xF5u : b == 0xEF ? 0xF6u : b;
}

int aos_fa_name_compare(const char *a, size_t alen, const char *b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  const uint8_t *x = (const uint8_t *)a;
  const uint8_t *y = (const uint8_t *)b;
  size_t i = 0;
  /* Equal runs eight bytes at a time (names in one directory often share a prefix). */
  while (n - i >= 8) {
    uint64_t p, q;
    memcpy(&p, x + i, sizeof p);
    memcpy(&q, y + i, sizeof q);
    if (p != q) break;
    i += 8;
  }
  for (; i < n; i++) {
    if (x[i] != y[i]) return aos_fa__u16_rank(x[i]) < aos_fa__u16_rank(y[i]) ? -1 : 1;
  }
  return alen < blen ? -1 : alen > blen ? 1 : 0;
}

static int aos_fa__entry_compare(const void *pa, const void *pb) {
  const aos_fa_entry *a = pa;
  const aos_fa_entry *b = pb;
  return aos_fa_name_compare(a->name, a->len, b->name, b->len);
}

static int aos_fa__entry_ptr_compare(const void *pa, const void *pb) {
  const aos_fa_entry *a = *(const aos_fa_entry *const *)pa;
  const aos_fa_entry *b = *(const aos_fa_entry *const *)pb;
  return aos_fa_name_compare(a->name, a->len, b->name, b->len);
}

/* Sorts pointers to the entries (moved as one word each, where the entries
 * themselves would be copied with memcpy at every merge step), then lays the entries
 * out in that order; sorts the entries in place when there is no memory for that. */
void aos_fa_listing_sort(aos_fa_listing *listing) {
  size_t n = listing->count;
  if (n < 2) return;
  aos_fa_entry **order = malloc(n * sizeof *order);
  aos_fa_entry *sorted = order != NULL ? malloc(n * sizeof *sorted) : NULL;
  if (sorted == NULL) {
    free(order);
    qsort(listing->entries, n, sizeof listing->entries[0], aos_fa__entry_compare);
    return;
  }
  for (size_t i = 0; i < n; i++) order[i] = &listing->entries[i];
  qsort(order, n, sizeof *order, aos_fa__entry_ptr_compare);
  for (size_t i = 0; i < n; i++) sorted[i] = *order[i];
  free(order);
  free(listing->entries);
  listing->entries = sorted;
}

size_t aos_fa_utf8_ascii_prefix(const uint8_t *s, size_t len) {
  size_t i = 0;
  while (len - i >= 32) {
    uint64_t w[4];
    memcpy(w, s + i, sizeof w);
    if (((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ull) != 0) break;
    i += 32;
  }
  while (i < len && s[i] < 0x80) i++;
  return i;
}

size_t aos_fa_utf8_to_utf16(const uint8_t *s, size_t len, uint16_t *out) {
  size_t i = 0, o = 0;
  while (i < len) {
    /* ASCII eight bytes at a time, widened in place. */
    while (len - i >= 8) {
      uint64_t w;
      memcpy(&w, s + i, sizeof w);
      if ((w & 0x8080808080808080ull) != 0) break;
      for (int k = 0; k < 8; k++) out[o + (size_t)k] = s[i + (size_t)k];
      i += 8, o += 8;
    }
    if (i >= len) break;
    uint8_t c = s[i];
    if (c < 0x80) {
      out[o++] = c;
      i++;
      continue;
    }
    size_t need;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1, cp = c & 0x1Fu, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2, cp = c & 0x0Fu, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3, cp = c & 0x07u, min = 0x10000;
    } else {
      return SIZE_MAX;
    }
    if (len - i - 1 < need) return SIZE_MAX;
    for (size_t k = 1; k <= need; k++) {
      uint8_t cc = s[i + k];
      if ((cc & 0xC0u) != 0x80u) return SIZE_MAX;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return SIZE_MAX;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out[o++] = (uint16_t)(0xD800u + (cp >> 10));
      out[o++] = (uint16_t)(0xDC00u + (cp & 0x3FFu));
    } else {
      out[o++] = (uint16_t)cp;
    }
    i += need + 1;
  }
  return o;
}

bool aos_fa_entry_init(aos_fa_entry *e, const char *name, size_t len, aos_fa_entry_kind kind,
                       bool with_stat) {
  /* The name, then (aligned for it) the stat. */
  size_t at = (len + 1 + (_Alignof(aos_fa_stat_info) - 1)) & ~(size_t)(_Alignof(aos_fa_stat_info) - 1);
  char *block = malloc(with_stat ? at + sizeof(aos_fa_stat_info) : len + 1);
  if (block == NULL) return false;
  memcpy(block, name, len);
  block[len] = '\0';
  e->name = block;
  e->len = len;
  e->kind = kind;
  e->stat = with_stat ? (aos_fa_stat_info *)(void *)(block + at) : NULL;
  return true;
}
