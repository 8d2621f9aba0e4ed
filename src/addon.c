/* Module registration: the one file that names all three primitives.
 *
 * The binding's exports hold one function per primitive. A primitive's part of the
 * binding (its classes, type tags, per-instance state) is built the first time its
 * function is called, i.e. when its subpath is first required, and cached per
 * Node-API environment (main thread and each worker have their own). */
#include <stdlib.h>

#include "common/napi_util.h"
#include "file_authority/napi.h"
#include "node_lock/napi.h"
#include "process/napi.h"

typedef napi_value (*aos_part_init)(napi_env env);

enum { AOS_PART_FILE_AUTHORITY, AOS_PART_NODE_LOCK, AOS_PART_PROCESS, AOS_PART_COUNT };

static const struct {
  const char *name;
  aos_part_init init;
} aos__parts[AOS_PART_COUNT] = {
    [AOS_PART_FILE_AUTHORITY] = {"fileAuthority", aos_fa_napi_init},
    [AOS_PART_NODE_LOCK] = {"nodeLock", aos_lock_napi_init},
    [AOS_PART_PROCESS] = {"process", aos_proc_napi_init},
};

typedef struct {
  napi_ref parts[AOS_PART_COUNT];
} aos_instance;

static void aos__instance_free(napi_env env, void *data, void *hint) {
  (void)hint;
  aos_instance *inst = data;
  for (int i = 0; i < AOS_PART_COUNT; i++) {
    if (inst->parts[i] != NULL) napi_delete_reference(env, inst->parts[i]);
  }
  free(inst);
}

static napi_value aos__get_part(napi_env env, napi_callback_info info) {
  void *data = NULL;
  AOS_CALL(env, napi_get_cb_info(env, info, NULL, NULL, NULL, &data), NULL);
  int part = (int)(intptr_t)data;
  aos_instance *inst = NULL;
  AOS_CALL(env, napi_get_instance_data(env, (void **)&inst), NULL);
  napi_value exports = NULL;
  if (inst->parts[part] != NULL) {
    AOS_CALL(env, napi_get_reference_value(env, inst->parts[part], &exports), NULL);
    if (exports != NULL) return exports;
  }
  exports = aos__parts[part].init(env);
  if (exports == NULL) return NULL; /* the part threw */
  AOS_CALL(env, napi_create_reference(env, exports, 1, &inst->parts[part]), NULL);
  return exports;
}

/* loadedParts(): the names of the parts built so far in this environment. Not public
 * API: the package's tests use it to check that requiring one subpath sets up nothing
 * of another. */
static napi_value aos__loaded_parts(napi_env env, napi_callback_info info) {
  (void)info;
  aos_instance *inst = NULL;
  AOS_CALL(env, napi_get_instance_data(env, (void **)&inst), NULL);
  napi_value list;
  AOS_CALL(env, napi_create_array(env, &list), NULL);
  uint32_t n = 0;
  for (int i = 0; i < AOS_PART_COUNT; i++) {
    if (inst->parts[i] == NULL) continue;
    napi_value name;
    AOS_CALL(env, napi_create_string_utf8(env, aos__parts[i].name, NAPI_AUTO_LENGTH, &name),
             NULL);
    AOS_CALL(env, napi_set_element(env, list, n++, name), NULL);
  }
  return list;
}

static napi_value aos__init(napi_env env, napi_value exports) {
  aos_instance *inst = calloc(1, sizeof *inst);
  if (inst == NULL) {
    napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
    return NULL;
  }
  if (napi_set_instance_data(env, inst, aos__instance_free, NULL) != napi_ok) {
    free(inst);
    aos_napi_throw_last(env);
    return NULL;
  }
  for (int i = 0; i < AOS_PART_COUNT; i++) {
    if (!aos_napi_set_function(env, exports, aos__parts[i].name, aos__get_part,
                               (void *)(intptr_t)i)) {
      return NULL;
    }
  }
  if (!aos_napi_set_function(env, exports, "loadedParts", aos__loaded_parts, NULL)) {
    return NULL;
  }
  return exports;
}

NAPI_MODULE_INIT() { return aos__init(env, exports); }
