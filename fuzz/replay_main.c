/* A main() for the libFuzzer targets without libFuzzer: runs each file named on the
 * command line through LLVMFuzzerTestOneInput once, so committed regressions and the
 * seed corpus replay in the default test suite with any C compiler. A broken
 * invariant aborts (non-zero exit). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (f == NULL) {
      perror("open");
      return 2;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
      if (len == cap) {
        cap = cap ? cap * 2 : 4096;
        uint8_t *next = realloc(buf, cap);
        if (next == NULL) return 2;
        buf = next;
      }
      size_t n = fread(buf + len, 1, cap - len, f);
      if (n == 0) break;
      len += n;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
  }
  printf("replayed %d\n", argc - 1);
  return 0;
}
