/* Placeholder until this primitive lands: an empty exports object. */
#include "process/napi.h"
#include "common/napi_util.h"

napi_value aos_proc_napi_init(napi_env env) {
  napi_value exports;
  AOS_CALL(env, napi_create_object(env, &exports), NULL);
  return exports;
}
