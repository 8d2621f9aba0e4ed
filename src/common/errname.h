/* errno (POSIX) or mapped Windows status names, for the `hostCode` of errors. */
#ifndef AOS_COMMON_ERRNAME_H
#define AOS_COMMON_ERRNAME_H

/* Returns the symbolic name of a positive errno value ("ENOENT"), or "EUNKNOWN"
 * for a value this table does not know. Negative values are negated first. */
const char *aos_errno_name(int err);

#endif
