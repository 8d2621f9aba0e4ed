/* rewriter MODE FILE SIZE CHUNK: changes FILE in place until killed, printing "go"
 * once the loop runs. Every complete version of FILE is one letter repeated, and the
 * file is only ever between versions in the middle of one system call:
 *   pwrite   one pwrite of SIZE bytes of the next letter at offset 0 (same size)
 *   append   CHUNK bytes of the current letter appended; past 4*SIZE the file is
 *            truncated back to SIZE and the letter changes (complete versions:
 *            SIZE + k*CHUNK bytes of one letter) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  const char *mode = argv[1];
  size_t size = (size_t)atol(argv[3]), chunk = (size_t)atol(argv[4]);
  int fd = open(argv[2], O_WRONLY | O_CLOEXEC);
  if (fd < 0) return 3;
  char *buf = malloc(size > chunk ? size : chunk);
  if (buf == NULL) return 4;
  char letter = 'A';
  off_t len = (off_t)size;
  for (unsigned long i = 0;; i++) {
    if (strcmp(mode, "pwrite") == 0) {
      letter = (char)('A' + (i % 26));
      memset(buf, letter, size);
      if (pwrite(fd, buf, size, 0) != (ssize_t)size) return 5;
    } else {
      memset(buf, letter, chunk);
      if (pwrite(fd, buf, chunk, len) != (ssize_t)chunk) return 5;
      len += (off_t)chunk;
      if (len > (off_t)(4 * size)) {
        letter = letter == 'Z' ? 'A' : (char)(letter + 1);
        memset(buf, letter, size);
        /* Truncated: SIZE bytes of the old letter (a complete version), then one pwrite. */
        if (ftruncate(fd, (off_t)size) != 0 || pwrite(fd, buf, size, 0) != (ssize_t)size) return 6;
        len = (off_t)size;
      }
    }
    if (i == 0) {
      fputs("go\n", stdout);
      fflush(stdout);
    }
  }
}
