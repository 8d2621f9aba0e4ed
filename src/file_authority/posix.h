/* file-authority: helpers shared by the POSIX core files (never included on Windows). */
#ifndef AOS_FILE_AUTHORITY_POSIX_H
#define AOS_FILE_AUTHORITY_POSIX_H

#include "file_authority/fa.h"

#include <sys/stat.h>

#ifdef __APPLE__
#define AOS_FA_MTIME_NS(sb) ((sb).st_mtimespec.tv_nsec)
#define AOS_FA_CTIME_NS(sb) ((sb).st_ctimespec.tv_nsec)
#else
#define AOS_FA_MTIME_NS(sb) ((sb).st_mtim.tv_nsec)
#define AOS_FA_CTIME_NS(sb) ((sb).st_ctim.tv_nsec)
#endif

/* The version of the entry `sb` describes (version.c). */
void aos_fa_posix_version(const struct stat *sb, aos_fa_version *v);

#endif
