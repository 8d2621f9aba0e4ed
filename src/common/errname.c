#include "common/errname.h"

#include <errno.h>
#include <stddef.h>

#define AOS_ERRNO(name) {name, #name},

static const struct {
  int value;
  const char *name;
} aos__errnos[] = {
    AOS_ERRNO(EPERM) AOS_ERRNO(ENOENT) AOS_ERRNO(ESRCH) AOS_ERRNO(EINTR)
    AOS_ERRNO(EIO) AOS_ERRNO(ENXIO) AOS_ERRNO(E2BIG) AOS_ERRNO(EBADF)
    AOS_ERRNO(ECHILD) AOS_ERRNO(EAGAIN) AOS_ERRNO(ENOMEM) AOS_ERRNO(EACCES)
    AOS_ERRNO(EFAULT) AOS_ERRNO(EBUSY) AOS_ERRNO(EEXIST) AOS_ERRNO(EXDEV)
    AOS_ERRNO(ENODEV) AOS_ERRNO(ENOTDIR) AOS_ERRNO(EISDIR) AOS_ERRNO(EINVAL)
    AOS_ERRNO(ENFILE) AOS_ERRNO(EMFILE) AOS_ERRNO(ETXTBSY) AOS_ERRNO(EFBIG)
    AOS_ERRNO(ENOSPC) AOS_ERRNO(ESPIPE) AOS_ERRNO(EROFS) AOS_ERRNO(EMLINK)
    AOS_ERRNO(EPIPE) AOS_ERRNO(ERANGE) AOS_ERRNO(EDEADLK) AOS_ERRNO(ENAMETOOLONG)
    AOS_ERRNO(ENOLCK) AOS_ERRNO(ENOSYS) AOS_ERRNO(ENOTEMPTY) AOS_ERRNO(ELOOP)
    AOS_ERRNO(EOVERFLOW) AOS_ERRNO(ENOTSUP) AOS_ERRNO(ETIMEDOUT)
    AOS_ERRNO(ECANCELED) AOS_ERRNO(EILSEQ)
#ifdef EDQUOT
    AOS_ERRNO(EDQUOT)
#endif
#ifdef ESTALE
    AOS_ERRNO(ESTALE)
#endif
#ifdef EOPNOTSUPP
#if EOPNOTSUPP != ENOTSUP
    AOS_ERRNO(EOPNOTSUPP)
#endif
#endif
#if defined(EWOULDBLOCK) && EWOULDBLOCK != EAGAIN
    AOS_ERRNO(EWOULDBLOCK)
#endif
};

const char *aos_errno_name(int err) {
  if (err < 0) err = -err;
  for (size_t i = 0; i < sizeof aos__errnos / sizeof aos__errnos[0]; i++) {
    if (aos__errnos[i].value == err) return aos__errnos[i].name;
  }
  return "EUNKNOWN";
}
