/* Reads one hex-encoded segment per line on stdin and prints, per line, "1" when
 * aos_fa_segments_check (src/file_authority/segments.c) accepts it as a one-segment
 * list and "0" when it refuses it: the C half of the C-versus-JavaScript comparison
 * of the segment rules (test/stress/fuzz-regressions.test.js). */
#include "file_authority/fa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

int main(void) {
  static char line[4096];
  static char seg[2048];
  while (fgets(line, sizeof line, stdin) != NULL) {
    size_t n = strcspn(line, "\n");
    if (n % 2 != 0 || n / 2 >= sizeof seg) return 2;
    for (size_t i = 0; i < n / 2; i++) {
      int hi = hexval(line[2 * i]), lo = hexval(line[2 * i + 1]);
      if (hi < 0 || lo < 0) return 2;
      seg[i] = (char)(hi * 16 + lo);
    }
    seg[n / 2] = '\0';
    const char *segs[1] = { seg };
    aos_fa_status st;
    fputs(aos_fa_segments_check(segs, 1, &st) == 0 ? "1\n" : "0\n", stdout);
  }
  return 0;
}
