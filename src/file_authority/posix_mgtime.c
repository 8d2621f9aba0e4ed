/* file-authority: filesystems whose timestamps can tell every observed state apart
 * (Linux 6.13+ multigrain timestamps).
 *
 * Since Linux 6.13, ext4, xfs, btrfs and tmpfs stamp a change with a fine-grained time
 * whenever the old ctime was observed (any stat of the inode marks it so), and keep a
 * system-wide floor so that no later stamp, fine or coarse, is ever earlier than one
 * handed out (the kernel's Documentation/filesystems/multigrain-ts.rst). So once a
 * version has been read through a stat, every later change of that inode carries
 * another ctime, and so does a file created later on its freed inode number: the
 * unlink that freed it stamped the observed inode with a fine time, raising the floor
 * above the version's ctime. A version read there is settled as soon as it is read;
 * elsewhere it waits for the coarse clock to pass it (posix_settle.c).
 *
 * Measured on this project's test machine (Linux 6.18, ext4 and tmpfs): 0 of 10 000
 * writes after a stat kept the ctime the stat saw.
 *
 * ext2, ext3 and ext4 share one magic number, and only the ext4 type has multigrain
 * stamps (an ext2 or ext3 volume mounted by the ext4 driver keeps its own type's
 * flags), so for that magic the mount's type is read from /proc/self/mountinfo, by the
 * device, once per device. Anything unknown counts as not multigrain: the version then
 * waits, which is only slower. */
#include "file_authority/fa.h"
#include "file_authority/posix.h"

#if defined(__linux__)
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/vfs.h>

#define AOS_FA__MG_CACHE 16

static pthread_once_t aos_fa__mg_once = PTHREAD_ONCE_INIT;
static bool aos_fa__mg_kernel; /* the running kernel is 6.13 or later */
static pthread_mutex_t aos_fa__mg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  dev_t dev;
  bool ext4;
} aos_fa__mg_seen[AOS_FA__MG_CACHE];
static size_t aos_fa__mg_count;

static void aos_fa__mg_init(void) {
  struct utsname u;
  if (uname(&u) != 0) return;
  char *end = NULL;
  long major = strtol(u.release, &end, 10);
  long minor = (end != NULL && *end == '.') ? strtol(end + 1, NULL, 10) : 0;
  aos_fa__mg_kernel = major > 6 || (major == 6 && minor >= 13);
}

/* Whether the mount of device `dev` is of type "ext4" (mountinfo's fields: the fourth
 * is major:minor, the type follows " - "). */
static bool aos_fa__mount_is_ext4(dev_t dev) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (f == NULL) return false;
  char line[4096];
  bool ext4 = false;
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned maj = 0, min = 0;
    if (sscanf(line, "%*s %*s %u:%u", &maj, &min) != 2) continue;
    if (maj != major(dev) || min != minor(dev)) continue;
    const char *sep = strstr(line, " - ");
    if (sep != NULL) {
      ext4 = strncmp(sep + 3, "ext4 ", 5) == 0;
      break;
    }
  }
  fclose(f);
  return ext4;
}

bool aos_fa_posix_multigrain(const struct statfs *sf, dev_t dev) {
  pthread_once(&aos_fa__mg_once, aos_fa__mg_init);
  if (!aos_fa__mg_kernel) return false;
  switch ((unsigned long)sf->f_type) {
    case 0x01021994UL: /* tmpfs */
    case 0x58465342UL: /* xfs */
    case 0x9123683eUL: /* btrfs */
      return true;
    case 0xef53UL: /* ext2, ext3, ext4: by the mount's type */
      break;
    default:
      return false;
  }
  pthread_mutex_lock(&aos_fa__mg_lock);
  for (size_t i = 0; i < aos_fa__mg_count; i++) {
    if (aos_fa__mg_seen[i].dev == dev) {
      bool ext4 = aos_fa__mg_seen[i].ext4;
      pthread_mutex_unlock(&aos_fa__mg_lock);
      return ext4;
    }
  }
  pthread_mutex_unlock(&aos_fa__mg_lock);
  bool ext4 = aos_fa__mount_is_ext4(dev);
  pthread_mutex_lock(&aos_fa__mg_lock);
  if (aos_fa__mg_count < AOS_FA__MG_CACHE) {
    aos_fa__mg_seen[aos_fa__mg_count].dev = dev;
    aos_fa__mg_seen[aos_fa__mg_count].ext4 = ext4;
    aos_fa__mg_count++;
  }
  pthread_mutex_unlock(&aos_fa__mg_lock);
  return ext4;
}
#else
bool aos_fa_posix_multigrain(const struct statfs *sf, dev_t dev) {
  (void)sf, (void)dev;
  return false;
}
#endif
