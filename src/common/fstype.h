/* Filesystem types the primitives treat specially, by the type the host reports for a
 * descriptor (Linux: statfs f_type; macOS: f_fstypename), never by path. Header only:
 * file-authority (versions) and node-lock (guards) each include it. */
#ifndef AOS_COMMON_FSTYPE_H
#define AOS_COMMON_FSTYPE_H

#include <stdbool.h>
#include <string.h>

#if defined(__linux__)
#include <sys/vfs.h>

/* Pseudo filesystems: their files' content is made up by the kernel when read or written
 * (procfs, sysfs, debugfs, tracefs, cgroup, ...), not stored; their timestamps say
 * nothing of it. devtmpfs reports tmpfs's type: tell it by the mount (node-lock). */
static inline bool aos_fstype_pseudo(const struct statfs *s) {
  switch ((unsigned long)s->f_type) {
    case 0x9fa0UL:      /* proc */
    case 0x62656572UL:  /* sysfs */
    case 0x64626720UL:  /* debugfs */
    case 0x74726163UL:  /* tracefs */
    case 0x27e0ebUL:    /* cgroup */
    case 0x63677270UL:  /* cgroup2 */
    case 0x73636673UL:  /* securityfs */
    case 0xcafe4a11UL:  /* bpf */
    case 0x6165676cUL:  /* pstore */
    case 0x62656570UL:  /* configfs */
    case 0xde5e81e4UL:  /* efivarfs */
    case 0x1cd1UL:      /* devpts */
    case 0x65735543UL:  /* fusectl */
    case 0x19800202UL:  /* mqueue */
    case 0xf97cff8cUL:  /* selinuxfs */
    case 0x43415d53UL:  /* smackfs */
    case 0x42494e4dUL:  /* binfmt_misc */
    case 0x6e736673UL:  /* nsfs */
    case 0x7655821UL:   /* resctrl */
    case 0x50495045UL:  /* pipefs */
    case 0x534f434bUL:  /* sockfs */
    case 0x09041934UL:  /* anon inodes */
      return true;
    default:
      return false;
  }
}

/* Filesystems whose timestamps are always whole seconds or coarser (FAT: 2 s, exFAT,
 * HFS/HFS+ (1 s), ...): no two states within that span can be told apart by time. */
static inline bool aos_fstype_coarse_times(const struct statfs *s) {
  switch ((unsigned long)s->f_type) {
    case 0x4d44UL:      /* msdos / vfat */
    case 0x2011bab0UL:  /* exfat */
    case 0x4244UL:      /* hfs */
    case 0x482bUL:      /* hfsplus */
    case 0x137dUL:      /* ext (the first) */
    case 0x012ff7b7UL:  /* coherent */
    case 0x9660UL:      /* iso9660 */
    case 0x15013346UL:  /* udf */
      return true;
    default:
      return false;
  }
}

/* Filesystems known to keep nanosecond timestamps in every inode (a ctime whose
 * nanoseconds happen to be 0 is then no sign of coarse ones). */
static inline bool aos_fstype_fine_times(const struct statfs *s) {
  switch ((unsigned long)s->f_type) {
    case 0x01021994UL:  /* tmpfs */
    case 0x9123683eUL:  /* btrfs */
    case 0x58465342UL:  /* xfs */
    case 0x2fc12fc1UL:  /* zfs */
    case 0xf2f52010UL:  /* f2fs */
    case 0x794c7630UL:  /* overlayfs: its upper and lower layers' own, usually fine */
      return true;
    default:
      return false;
  }
}

#elif defined(__APPLE__)
#include <sys/mount.h>
#include <sys/param.h>

static inline bool aos_fstype_pseudo(const struct statfs *s) {
  return strcmp(s->f_fstypename, "devfs") == 0 || strcmp(s->f_fstypename, "fdesc") == 0 ||
         strcmp(s->f_fstypename, "autofs") == 0 || strcmp(s->f_fstypename, "nullfs") == 0;
}
static inline bool aos_fstype_coarse_times(const struct statfs *s) {
  return strcmp(s->f_fstypename, "msdos") == 0 || strcmp(s->f_fstypename, "exfat") == 0 ||
         strcmp(s->f_fstypename, "hfs") == 0 || strcmp(s->f_fstypename, "cd9660") == 0 ||
         strcmp(s->f_fstypename, "udf") == 0;
}
static inline bool aos_fstype_fine_times(const struct statfs *s) {
  return strcmp(s->f_fstypename, "apfs") == 0;
}

#elif !defined(_WIN32)
#include <sys/mount.h>
#include <sys/param.h>

static inline bool aos_fstype_pseudo(const struct statfs *s) {
  (void)s;
  return false;
}
static inline bool aos_fstype_coarse_times(const struct statfs *s) {
  (void)s;
  return false;
}
static inline bool aos_fstype_fine_times(const struct statfs *s) {
  (void)s;
  return false;
}
#endif

#endif
