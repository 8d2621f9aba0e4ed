/* move_window ROOT OUTSIDE OUT_US IN_US: moves ROOT/d to OUTSIDE/d and back in a loop
 * (OUT_US microseconds outside, IN_US inside). While d is outside the mover lists it
 * right after moving it out and again right before moving it back: a name (not one of
 * the package's temporary ".aos-" names) that appeared or went away between the two
 * listings was created, removed or renamed while d was outside the root, certainly
 * (d was outside the whole time between them). Prints "go" once running; on SIGTERM:
 *   cycles=N outside_changes=N
 * then each name changed while d was outside, one per line. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <stdlib.h>
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

/* The names in `path` (not "." or "..", not ".aos-..."), as one string "\nname\n...". */
static size_t list_names(const char *path, char *out, size_t cap) {
  DIR *d = opendir(path);
  size_t used = 0;
  if (d == NULL) return 0;
  out[used++] = '\n';
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    size_t l = strlen(e->d_name);
    if (used + l + 2 >= cap) break;
    memcpy(out + used, e->d_name, l);
    used += l;
    out[used++] = '\n';
  }
  closedir(d);
  out[used] = '\0';
  return used;
}

static char changed[1 << 20];
static size_t changed_len;
static unsigned long outside_changes;

/* Names of `a` not in `b` go to `changed`. */
static void diff(const char *a, const char *b) {
  for (const char *p = a + 1; *p != '\0';) {
    const char *nl = strchr(p, '\n');
    if (nl == NULL) break;
    size_t l = (size_t)(nl - p);
    char key[300];
    if (l + 3 < sizeof key) {
      key[0] = '\n';
      memcpy(key + 1, p, l);
      key[l + 1] = '\n';
      key[l + 2] = '\0';
      if (strstr(b, key) == NULL) {
        outside_changes++;
        if (changed_len + l + 1 < sizeof changed) {
          memcpy(changed + changed_len, p, l);
          changed[changed_len + l] = '\n';
          changed_len += l + 1;
        }
      }
    }
    p = nl + 1;
  }
}

static char first[1 << 20], second[1 << 20];

static void *mover(void *arg) {
  (void)arg;
  while (!atomic_load(&stop)) {
    if (rename(in_path, out_path) != 0) break;
    list_names(out_path, first, sizeof first);
    spin(out_us);
    list_names(out_path, second, sizeof second);
    if (rename(out_path, in_path) != 0) break;
    diff(first, second);
    diff(second, first);
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
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  pthread_t t;
  if (pthread_create(&t, NULL, mover, NULL) != 0) return 5;
  fputs("go\n", stdout);
  fflush(stdout);
  while (!atomic_load(&stop)) pause();
  pthread_join(t, NULL);
  /* d back beneath the root for the caller. */
  if (access(in_path, F_OK) != 0) (void)rename(out_path, in_path);
  printf("cycles=%lu outside_changes=%lu\n", cycles, outside_changes);
  fwrite(changed, 1, changed_len, stdout);
  return 0;
}
