/* libFuzzer target: aos_fa_segments_check (src/file_authority/segments.c). The input
 * is split at 0x00 bytes into a segment list (up to 300 segments, so the 255 limit is
 * crossed); the verdict and the index of the first bad segment must equal the
 * reference rules of fuzz_common.h. */
#include "file_authority/fa.h"
#include "fuzz_common.h"

#include <errno.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  aos_fuzz_list l;
  aos_fuzz_split(data, size, 300, &l);
  aos_fa_status st;
  int r = aos_fa_segments_check((const char *const *)l.segs, l.count, &st);
  int want = -1; /* first bad index, -1: none */
  bool too_many = l.count > 255;
  if (!too_many) {
    for (size_t i = 0; i < l.count; i++) {
      if (!aos_fuzz_ref_segment(l.segs[i])) {
        want = (int)i;
        break;
      }
    }
  }
  if (too_many) {
    AOS_FUZZ_CHECK(r == -EINVAL && st.kind == AOS_FA_INVALID_PATH && st.segment == -1,
                   "more than 255 segments accepted or misreported");
  } else if (want >= 0) {
    AOS_FUZZ_CHECK(r == -EINVAL && st.kind == AOS_FA_INVALID_PATH, "a bad segment accepted");
    AOS_FUZZ_CHECK(st.segment == want, "wrong segment index for the first bad segment");
  } else {
    AOS_FUZZ_CHECK(r == 0 && st.kind == AOS_FA_OK && st.segment == -1, "a good list refused");
  }
  aos_fuzz_free(&l);
  return 0;
}
