/* Node-API glue of process scopes: adds its functions to the `process` part's
 * exports (called from src/process/napi.c). */
#ifndef AOS_PROCESS_SCOPE_NAPI_H
#define AOS_PROCESS_SCOPE_NAPI_H

#include <node_api.h>
#include <stdbool.h>

/* Sets `exports.scope` to an object of the scope functions on Linux (nothing on
 * other hosts, whose scopes need no native help). false with an exception pending. */
bool aos_scope_napi_register(napi_env env, napi_value exports);

#endif
