/* dancer DIR: in DIR, the name `t` alternates between a regular file and a symlink to
 * an outside file by a dance of renames (park the file, link in, park the link, file
 * back), in a loop until killed; prints "go" once running. DIR holds `t` (the file) and
 * `l` (the symlink) at the start; `p` is the file's parking name. */
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  char t[4096], l[4096], p[4096];
  snprintf(t, sizeof t, "%s/t", argv[1]);
  snprintf(l, sizeof l, "%s/l", argv[1]);
  snprintf(p, sizeof p, "%s/p", argv[1]);
  for (unsigned long i = 0;; i++) {
    /* A rename may fail when a writer moved a name meanwhile: the dance goes on. */
    (void)rename(t, p);
    (void)rename(l, t);
    (void)rename(t, l);
    (void)rename(p, t);
    if (i == 0) {
      fputs("go\n", stdout);
      fflush(stdout);
    }
  }
}
