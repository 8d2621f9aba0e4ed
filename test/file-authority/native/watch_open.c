/* An attacker for test/file-authority/hardening-write.test.js (Linux): run as another
 * user, it watches DIR with inotify and opens every entry created or moved in there
 * (the write's temporary files) for reading the moment it appears, keeping each
 * descriptor. When stdin ends it reads every descriptor it holds and prints
 * "opened O leaked L": O opens that succeeded, L of them that now read MARKER (the
 * content of a file the attacker was never allowed to read).
 *
 * Usage: watch_open DIR MARKER    prints "watching" once the watch is set */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define MAX_HELD 4096

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (dir < 0 || in < 0 || inotify_add_watch(in, argv[1], IN_CREATE | IN_MOVED_TO) < 0) return 2;
  printf("watching\n");
  fflush(stdout);
  static int held[MAX_HELD];
  int nheld = 0, opened = 0;
  char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
  struct pollfd p[2] = {{in, POLLIN, 0}, {0, POLLIN, 0}};
  for (;;) {
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 2;
    }
    if (p[0].revents & POLLIN) {
      ssize_t n = read(in, buf, sizeof buf);
      for (char *q = buf; n > 0 && q < buf + n;) {
        struct inotify_event *ev = (struct inotify_event *)q;
        if (ev->len > 0) {
          int fd = openat(dir, ev->name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
          if (fd >= 0) {
            opened++;
            if (nheld < MAX_HELD) {
              held[nheld++] = fd;
            } else {
              close(fd);
            }
          }
        }
        q += sizeof *ev + ev->len;
      }
    }
    if (p[1].revents & (POLLIN | POLLHUP)) {
      char c[256];
      ssize_t n = read(0, c, sizeof c);
      if (n <= 0) break;
    }
  }
  int leaked = 0;
  size_t mlen = strlen(argv[2]);
  for (int i = 0; i < nheld; i++) {
    char data[256];
    ssize_t n = pread(held[i], data, sizeof data, 0);
    if (n >= (ssize_t)mlen && memcmp(data, argv[2], mlen) == 0) leaked++;
    close(held[i]);
  }
  printf("opened %d leaked %d\n", opened, leaked);
  return 0;
}
