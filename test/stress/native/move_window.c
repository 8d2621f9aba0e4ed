/* move_window ROOT OUTSIDE OUT_US IN_US: moves ROOT/d to OUTSIDE/d and back in a loop
 * (OUT_US microseconds outside, IN_US inside), while an inotify watch on d records, in
 * the kernel's order, every entry created, removed or renamed in d. An event on a name
 * that is not one of the package's temporary names (".aos-...") while d is outside is a
 * change made outside the root. Prints "go" once running; on SIGTERM one line:
 *   cycles=N outside_changes=N inside_changes=N temp_events_outside=N overflows=N
 * (overflows: the event queue overflowed, events were lost and the figures are void)
 * then each name changed while d was outside, one per line (a name may repeat).
 * The state follows the watch's own IN_MOVE_SELF events (each move of d toggles it), so
 * it is the order the kernel saw, not the mover's idea of it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static char in_path[4096], out_path[4096];
static long out_us, in_us;
static unsigned long cycles;

static void spin(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *mover(void *arg) {
  (void)arg;
  while (!atomic_load(&stop)) {
    if (rename(in_path, out_path) != 0) break;
    spin(out_us);
    if (rename(out_path, in_path) != 0) break;
    cycles++;
    spin(in_us);
  }
  return NULL;
}

static void on_term(int sig) {
  (void)sig;
  atomic_store(&stop, 1);
}

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  snprintf(in_path, sizeof in_path, "%s/d", argv[1]);
  snprintf(out_path, sizeof out_path, "%s/d", argv[2]);
  out_us = atol(argv[3]);
  in_us = atol(argv[4]);
  int fd = inotify_init1(IN_CLOEXEC);
  if (fd < 0) return 3;
  if (inotify_add_watch(fd, in_path, IN_MOVE_SELF | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO) < 0) return 4;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  pthread_t t;
  if (pthread_create(&t, NULL, mover, NULL) != 0) return 5;
  fputs("go\n", stdout);
  fflush(stdout);
  unsigned long outside_changes = 0, inside_changes = 0, temp_outside = 0, overflows = 0;
  static char names[1 << 20];
  size_t names_len = 0;
  int outside = 0;
  char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
  while (!atomic_load(&stop)) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (char *p = buf; p < buf + n;) {
      struct inotify_event *ev = (struct inotify_event *)p;
      p += sizeof *ev + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) {
        overflows++; /* events were lost: the state can no longer be followed */
        continue;
      }
      if (ev->mask & IN_MOVE_SELF) {
        outside = !outside;
        continue;
      }
      if (ev->len == 0) continue;
      int temp = strncmp(ev->name, ".aos-", 5) == 0;
      if (outside) {
        if (temp) {
          temp_outside++;
        } else {
          outside_changes++;
          size_t l = strlen(ev->name);
          if (names_len + l + 1 < sizeof names) {
            memcpy(names + names_len, ev->name, l);
            names[names_len + l] = '\n';
            names_len += l + 1;
          }
        }
      } else if (!temp) {
        inside_changes++;
      }
    }
  }
  pthread_join(t, NULL);
  /* d back beneath the root for the caller. */
  if (access(in_path, F_OK) != 0) (void)rename(out_path, in_path);
  printf("cycles=%lu outside_changes=%lu inside_changes=%lu temp_events_outside=%lu overflows=%lu\n",
         cycles, outside_changes, inside_changes, temp_outside, overflows);
  fwrite(names, 1, names_len, stdout);
  return 0;
}
