#include "common/napi_util.h"

#include "common/errname.h"

#include <stdlib.h>

void aos_napi_throw_last(napi_env env) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending) return;
  const napi_extended_error_info *info = NULL;
  const char *msg = "Node-API call failed";
  if (napi_get_last_error_info(env, &info) == napi_ok && info != NULL &&
      info->error_message != NULL) {
    msg = info->error_message;
  }
  napi_throw_error(env, "ERR_AGENT_OS_NAPI", msg);
}

napi_value aos_napi_throw_type(napi_env env, const char *code, const char *message) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending) return NULL;
  napi_throw_type_error(env, code, message);
  return NULL;
}

static bool set_string(napi_env env, napi_value obj, const char *key, const char *s) {
  napi_value v;
  return napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v) == napi_ok &&
         napi_set_named_property(env, obj, key, v) == napi_ok;
}

napi_value aos_napi_raw_error(napi_env env, const char *kind, int host_errno,
                              int segment_index) {
  napi_value msg, err;
  if (napi_create_string_utf8(env, "agent-os native failure", NAPI_AUTO_LENGTH, &msg) !=
          napi_ok ||
      napi_create_error(env, NULL, msg, &err) != napi_ok) {
    aos_napi_throw_last(env);
    return NULL;
  }
  bool ok = set_string(env, err, "aosKind", kind);
  if (ok && host_errno != 0) {
    const char *name = aos_errno_name(host_errno);
    ok = set_string(env, err, "hostCode", name);
  }
  if (ok && segment_index >= 0) {
    napi_value idx;
    ok = napi_create_int32(env, segment_index, &idx) == napi_ok &&
         napi_set_named_property(env, err, "segmentIndex", idx) == napi_ok;
  }
  if (!ok) {
    aos_napi_throw_last(env);
    return NULL;
  }
  return err;
}

bool aos_napi_set_function(napi_env env, napi_value obj, const char *name,
                           napi_callback cb, void *data) {
  napi_value fn;
  if (napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, data, &fn) != napi_ok ||
      napi_set_named_property(env, obj, name, fn) != napi_ok) {
    aos_napi_throw_last(env);
    return false;
  }
  return true;
}

char *aos_napi_get_utf8(napi_env env, napi_value value, size_t *len) {
  napi_valuetype t;
  if (napi_typeof(env, value, &t) != napi_ok) {
    aos_napi_throw_last(env);
    return NULL;
  }
  if (t != napi_string) {
    aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "expected a string");
    return NULL;
  }
  size_t n = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &n) != napi_ok) {
    aos_napi_throw_last(env);
    return NULL;
  }
  char *buf = malloc(n + 1);
  if (buf == NULL) {
    napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
    return NULL;
  }
  if (napi_get_value_string_utf8(env, value, buf, n + 1, &n) != napi_ok) {
    free(buf);
    aos_napi_throw_last(env);
    return NULL;
  }
  if (len != NULL) *len = n;
  return buf;
}
