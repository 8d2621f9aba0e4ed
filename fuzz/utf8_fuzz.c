/* libFuzzer target: aos_fa_utf8_valid (src/file_authority/segments.c) against the
 * independent reference of fuzz_common.h, on arbitrary bytes. Any disagreement, or
 * any memory error the sanitizers see, is a crash. */
#include "file_authority/fa.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bool core = aos_fa_utf8_valid(data, size);
  bool ref = aos_fuzz_ref_utf8(data, size);
  AOS_FUZZ_CHECK(core == ref, "aos_fa_utf8_valid disagrees with the reference");
  /* Every prefix of a valid string that ends on a boundary is valid too; a sequence
   * cut inside a character is not. Check the last cut point. */
  if (core && size > 0) {
    size_t cut = size - 1;
    while (cut > 0 && (data[cut] & 0xC0u) == 0x80u) cut--;
    AOS_FUZZ_CHECK(aos_fa_utf8_valid(data, cut), "a valid string's prefix is invalid");
    if (cut + 1 < size) AOS_FUZZ_CHECK(!aos_fa_utf8_valid(data, size - 1), "a cut character is valid");
  }
  return 0;
}
