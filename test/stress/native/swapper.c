/* swapper rename|exchange A B TMP: swaps the names A and B (any two entries: a
 * directory and a symlink, a file and a symlink, two directories) until killed,
 * printing "go" once the loop runs.
 *   exchange  renameat2(A, B, RENAME_EXCHANGE): both names always exist
 *   rename    rename(A, TMP), rename(B, A), rename(A, B), rename(TMP, A): one name
 *             is briefly missing, and for a moment both name the same object */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  const char *a = argv[2], *b = argv[3], *tmp = argv[4];
  int exchange = strcmp(argv[1], "exchange") == 0;
  for (unsigned long i = 0;; i++) {
    if (exchange) {
      if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0) return 3;
    } else {
      if (rename(a, tmp) || rename(b, a) || rename(a, b) || rename(tmp, a)) return 4;
    }
    if (i == 0) {
      fputs("go\n", stdout);
      fflush(stdout);
    }
  }
}
