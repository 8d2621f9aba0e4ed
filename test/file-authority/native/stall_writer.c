/* stall_writer FILE HOLD_SECONDS: a writer stalled in the middle of one write.
 *
 * One pwrite of two pages ('B' repeated) at offset 0 of FILE, whose source buffer's
 * second page is registered with userfaultfd and never supplied: the kernel copies
 * the first page, then waits on the missing one, holding the file's inode lock, with
 * the file's times already set (they are set when a write starts). Prints "go" once
 * the fault has arrived (the write is stalled mid-copy), then holds it HOLD_SECONDS
 * and exits, which ends the stall. Exit 3: userfaultfd is not available here. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fd;
static char *src;
static long page;

static void *writer(void *arg) {
  (void)arg;
  ssize_t n = pwrite(fd, src, (size_t)(2 * page), 0);
  (void)n;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  page = sysconf(_SC_PAGESIZE);
  fd = open(argv[1], O_WRONLY | O_CLOEXEC);
  if (fd < 0) return 2;
  int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  if (uffd < 0) {
    perror("userfaultfd");
    return 3;
  }
  struct uffdio_api api = {.api = UFFD_API};
  if (ioctl(uffd, UFFDIO_API, &api) != 0) {
    perror("UFFDIO_API");
    return 3;
  }
  src = mmap(NULL, (size_t)(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (src == MAP_FAILED) return 2;
  memset(src, 'B', (size_t)page); /* the first page is there; the second never comes */
  struct uffdio_register reg = {.range = {.start = (unsigned long)(src + page), .len = (unsigned long)page},
                                .mode = UFFDIO_REGISTER_MODE_MISSING};
  if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
    perror("UFFDIO_REGISTER");
    return 3;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, writer, NULL) != 0) return 2;
  struct pollfd p = {.fd = uffd, .events = POLLIN};
  if (poll(&p, 1, 10000) != 1) {
    fputs("no fault arrived\n", stderr);
    return 4;
  }
  struct uffd_msg msg;
  if (read(uffd, &msg, sizeof msg) != (ssize_t)sizeof msg || msg.event != UFFD_EVENT_PAGEFAULT) return 4;
  fputs("go\n", stdout);
  fflush(stdout);
  sleep((unsigned)atoi(argv[2]));
  _exit(0); /* the fault is never served: exiting ends the stalled write */
}
