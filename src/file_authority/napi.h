/* Node-API glue of this primitive: the only symbol src/addon.c needs from it. */
#ifndef AOS_FILE_AUTHORITY_NAPI_H
#define AOS_FILE_AUTHORITY_NAPI_H

#include <node_api.h>

/* Builds this primitive's exports object for `env` (called once per environment,
 * when its subpath is first required). Returns NULL with an exception pending on
 * failure. */
napi_value aos_fa_napi_init(napi_env env);

#endif
