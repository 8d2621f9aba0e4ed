/* file-authority: an entry's version and its string form (every platform).
 *
 * The string is exact, not a digest: each of the six 64-bit fields goes through a
 * bijective scramble (xor with a per-field constant, then xorshift and odd multiplies,
 * each invertible) and is written as 16 hex digits. Equal strings therefore mean equal
 * fields, and the string shows no inode number, size or time a caller could parse. */
#include "file_authority/fa.h"

#include <string.h>

static uint64_t aos_fa__scramble(uint64_t x, unsigned field) {
  static const uint64_t salt[6] = {0x9e3779b97f4a7c15ull, 0xbf58476d1ce4e5b9ull,
                                   0x94d049bb133111ebull, 0x2545f4914f6cdd1dull,
                                   0xd6e8feb86659fd93ull, 0xa0761d6478bd642full};
  x ^= salt[field];
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  x ^= x >> 33;
  return x;
}

void aos_fa_version_string(const aos_fa_version *v, char out[AOS_FA_VERSION_CHARS + 1]) {
  static const char hex[] = "0123456789abcdef";
  const uint64_t fields[6] = {v->dev,      v->ino,      v->ino_hi,
                              v->size,     (uint64_t)v->mtime_ns, (uint64_t)v->ctime_ns};
  for (unsigned f = 0; f < 6; f++) {
    uint64_t x = aos_fa__scramble(fields[f], f);
    for (int d = 15; d >= 0; d--) {
      out[f * 16 + (unsigned)d] = hex[x & 0xf];
      x >>= 4;
    }
  }
  out[AOS_FA_VERSION_CHARS] = '\0';
}

bool aos_fa_version_equal(const aos_fa_version *a, const aos_fa_version *b) {
  return a->dev == b->dev && a->ino == b->ino && a->ino_hi == b->ino_hi && a->size == b->size &&
         a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

bool aos_fa_version_string_valid(const char *s, size_t len) {
  if (s == NULL || len != AOS_FA_VERSION_CHARS) return false;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool aos_fa_version_matches(const aos_fa_version *v, const char *s) {
  char mine[AOS_FA_VERSION_CHARS + 1];
  aos_fa_version_string(v, mine);
  return memcmp(mine, s, AOS_FA_VERSION_CHARS) == 0;
}

#ifndef _WIN32
#include "file_authority/posix.h"

void aos_fa_posix_version(const struct stat *sb, aos_fa_version *v) {
  v->dev = (uint64_t)sb->st_dev;
  v->ino = (uint64_t)sb->st_ino;
  v->ino_hi = 0;
  v->size = (uint64_t)sb->st_size;
  v->mtime_ns = (int64_t)sb->st_mtime * 1000000000LL + AOS_FA_MTIME_NS(*sb);
  v->ctime_ns = (int64_t)sb->st_ctime * 1000000000LL + AOS_FA_CTIME_NS(*sb);
}
#endif
