/* rewriter MODE FILE SIZE CHUNK [PAUSE_US]: changes FILE in place until killed, printing
 * "go" once the loop runs (PAUSE_US: a pause between changes, so reads also find the
 * file at rest). Every complete version of FILE is one letter repeated, and the
 * file is only ever between versions in the middle of one system call:
 *   pwrite   one pwrite of SIZE bytes of the next letter at offset 0 (same size)
 *   flip     as pwrite, with two letters only (A, B, A, ...): two reads torn one write
 *            apart can tear alike
 *   restore  as pwrite, then the modification time set back to the file's time at
 *            the start (futimens, as touch -r, rsync --inplace -t or an editor that
 *            keeps the time would): only the status-change time shows the edit
 *   append   CHUNK bytes of the current letter appended; past 4*SIZE the file is
 *            truncated back to SIZE and the letter changes (complete versions:
 *            SIZE + k*CHUNK bytes of one letter) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 5 && argc != 6) return 2;
  long pause_us = argc == 6 ? atol(argv[5]) : 0;
  const char *mode = argv[1];
  size_t size = (size_t)atol(argv[3]), chunk = (size_t)atol(argv[4]);
  int fd = open(argv[2], O_WRONLY | O_CLOEXEC);
  if (fd < 0) return 3;
  char *buf = malloc(size > chunk ? size : chunk);
  if (buf == NULL) return 4;
  struct stat at_start;
  if (fstat(fd, &at_start) != 0) return 3;
  struct timespec keep[2] = {{0, UTIME_OMIT}, at_start.st_mtim};
  char letter = 'A';
  off_t len = (off_t)size;
  for (unsigned long i = 0;; i++) {
    if (strcmp(mode, "pwrite") == 0 || strcmp(mode, "restore") == 0 || strcmp(mode, "flip") == 0) {
      letter = (char)('A' + (mode[0] == 'f' ? i % 2 : i % 26));
      memset(buf, letter, size);
      if (pwrite(fd, buf, size, 0) != (ssize_t)size) return 5;
      if (mode[0] == 'r' && futimens(fd, keep) != 0) return 7;
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
    if (pause_us > 0) usleep((useconds_t)pause_us);
  }
}
