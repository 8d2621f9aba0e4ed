/* The C core's segment rules alone (aos_fa_segments_check in
 * src/file_authority/segments.c), run by test/file-authority/hardening-write-core.test.js:
 * built with -DAOS_FA_WINDOWS_SEGMENT_RULES on any host (or for Windows with mingw-w64),
 * it checks that the core refuses every Windows-only name the JavaScript layer refuses
 * (issue 12 finding 10), and still accepts ordinary names. Prints "0 failure(s)". */
#include "file_authority/fa.h"

#include <stdio.h>

static int failures;

static void expect(const char *seg, int ok) {
  const char *segs[2] = {"fine", seg};
  aos_fa_status st;
  int r = aos_fa_segments_check(segs, 2, &st);
  int good = ok ? r == 0 : (r != 0 && st.kind == AOS_FA_INVALID_PATH && st.segment == 1);
  printf("%s %s %s\n", good ? "ok  " : "FAIL", ok ? "accepts" : "refuses", seg);
  if (!good) failures++;
}

int main(void) {
  const char *refused[] = {"a:b", "file.txt:stream", ":", "a<b", "a>b", "a\"b", "a|b", "a?b", "a*b",
                           "a\x01" "b", "tab\tname", "dot.", "space ", "x. ", "CON", "con", "Con.txt",
                           "nul", "NUL.tar.gz", "prn", "aux.c", "COM1", "com9.log", "lpt0", "LPT5.x",
                           "conin$", "CONOUT$.txt", "com\xc2\xb9", "LPT\xc2\xb3.txt", "com\xc2\xb2"};
  const char *accepted[] = {"console", "con_", "nul1", "com10", "lpt", "com", "a.b", ".hidden", "x y",
                            "\xc3\xa9t\xc3\xa9", "com\xc2\xb9x", "auxiliary.txt", "a..b"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) expect(refused[i], 0);
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) expect(accepted[i], 1);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
