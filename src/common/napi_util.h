/* Node-API helpers shared by the three primitives' glue files.
 *
 * Every napi_* call in glue code goes through AOS_CALL: on failure it throws the
 * engine's last error (unless an exception is already pending) and returns `ret`
 * from the calling function. Nothing falls through a failed call. */
#ifndef AOS_COMMON_NAPI_UTIL_H
#define AOS_COMMON_NAPI_UTIL_H

#include <node_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void aos_napi_throw_last(napi_env env);

#define AOS_CALL(env, call, ret)                                                   \
  do {                                                                             \
    if ((call) != napi_ok) {                                                       \
      aos_napi_throw_last(env);                                                    \
      return ret;                                                                  \
    }                                                                              \
  } while (0)

/* Throws a TypeError whose `code` property is `code` (e.g. "ERR_INVALID_ARG_TYPE").
 * Always returns NULL so callers can `return aos_napi_throw_type(...)`. */
napi_value aos_napi_throw_type(napi_env env, const char *code, const char *message);

/* The raw failure a primitive's C core reported, as a plain Error carrying
 * `aosKind` (a primitive-defined short string, e.g. "UNSAFE_ENTRY"),
 * `hostCode` (an errno name such as "ELOOP", or absent), and `segmentIndex`
 * (absent when < 0). The primitive's JS layer turns it into its typed error and
 * composes the message; this object never leaves the package. */
napi_value aos_napi_raw_error(napi_env env, const char *kind, int host_errno,
                              int segment_index);

/* Sets `obj[name] = fn` for a C callback. Returns false with an exception pending
 * on failure. */
bool aos_napi_set_function(napi_env env, napi_value obj, const char *name,
                           napi_callback cb, void *data);

/* Reads a JS string argument as newly allocated UTF-8 (NUL-terminated, *len set to
 * the byte length). Returns NULL with a TypeError pending when `value` is not a
 * string, or with an error pending when memory runs out. Free with free(). */
char *aos_napi_get_utf8(napi_env env, napi_value value, size_t *len);

#endif
