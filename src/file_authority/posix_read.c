/* Placeholder until this primitive lands. */
typedef int aos_placeholder_posix_read;
