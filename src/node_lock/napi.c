/* node-lock's Node-API glue: turns the C core (node_lock.h) into two functions for
 * lib/node-lock.js.
 *
 *   tryLock(path: string, wantHolder: boolean): Handle | number
 *     a type-tagged native handle when acquired; otherwise the holder's pid, or 0
 *     when it cannot be known. Unsafe entries and host failures throw the raw
 *     error of src/common/napi_util.h (aosKind UNSAFE_ENTRY / HOST_IO /
 *     INVALID_PATH) for the JS layer to type.
 *   release(handle: Handle): void      idempotent
 *
 * Ownership. Garbage collection never releases a lock: each held lock lives in a
 * per-environment registry, not in the JS object. A guard is freed when it is both
 * released (or torn down) and no longer wrapped:
 *   - release() unlocks, closes and unlists it;
 *   - the wrapper's finalizer only marks it unwrapped: a dropped, unreleased guard
 *     stays listed and held;
 *   - the environment's cleanup hook (process exit, or a worker thread ending)
 *     releases every guard still listed, since nothing can release them after, and
 *     frees the registry. It calls no JavaScript. */
#include "node_lock/napi.h"

#include <stdlib.h>
#include <string.h>

#include "common/napi_util.h"
#include "node_lock/node_lock.h"

typedef struct aos_lock__guard aos_lock__guard;

typedef struct aos_lock__registry {
  aos_lock__guard *head;
} aos_lock__registry;

struct aos_lock__guard {
  aos_lock lock;
  aos_lock__registry *listed_in; /* NULL once released or torn down */
  aos_lock__guard *prev;
  aos_lock__guard *next;
  bool wrapped; /* a JS handle still points here */
};

/* Marks native lock handles of this module (napi_type_tag_object). */
static const napi_type_tag aos_lock__handle_tag = {0x6e6f64652d6c6f63ULL,
                                                   0x6b2d68616e646c65ULL};

static void aos_lock__unlist(aos_lock__guard *g) {
  aos_lock__registry *reg = g->listed_in;
  if (reg == NULL) return;
  if (g->prev != NULL) {
    g->prev->next = g->next;
  } else {
    reg->head = g->next;
  }
  if (g->next != NULL) g->next->prev = g->prev;
  g->prev = g->next = NULL;
  g->listed_in = NULL;
}

static void aos_lock__registry_teardown(void *data) {
  aos_lock__registry *reg = data;
  aos_lock__guard *g = reg->head;
  while (g != NULL) {
    aos_lock__guard *next = g->next;
    aos_lock_release(&g->lock);
    g->listed_in = NULL;
    g->prev = g->next = NULL;
    if (!g->wrapped) free(g);
    g = next;
  }
  free(reg);
}

static void aos_lock__finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  aos_lock__guard *g = data;
  g->wrapped = false;
  if (g->listed_in == NULL) free(g); /* released already; else it stays held */
}

static napi_value aos_lock__throw_raw(napi_env env, const char *kind, int err) {
  napi_value e = aos_napi_raw_error(env, kind, err, -1);
  if (e != NULL) napi_throw(env, e);
  return NULL;
}

static napi_value aos_lock__try_lock(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  void *data = NULL;
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, &data), NULL);
  aos_lock__registry *reg = data;
  if (argc < 2) {
    return aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "tryLock(path, wantHolder)");
  }
  bool want_holder = false;
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, argv[1], &t), NULL);
  if (t != napi_boolean) {
    return aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "wantHolder must be a boolean");
  }
  AOS_CALL(env, napi_get_value_bool(env, argv[1], &want_holder), NULL);
  size_t len = 0;
  char *path = aos_napi_get_utf8(env, argv[0], &len);
  if (path == NULL) return NULL;
  if (len == 0 || strlen(path) != len) {
    free(path);
    return aos_lock__throw_raw(env, "INVALID_PATH", 0);
  }

  aos_lock__guard *g = calloc(1, sizeof *g);
  if (g == NULL) {
    free(path);
    napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
    return NULL;
  }
  aos_lock_outcome out;
  int r = aos_lock_try_acquire(path, want_holder, &g->lock, &out);
  free(path);
  if (r < 0) {
    free(g);
    return aos_lock__throw_raw(env, "HOST_IO", -r);
  }
  if (out.state == AOS_LOCK_UNSAFE) {
    free(g);
    return aos_lock__throw_raw(env, "UNSAFE_ENTRY", out.host_errno);
  }
  if (out.state == AOS_LOCK_HELD) {
    free(g);
    napi_value pid;
    AOS_CALL(env, napi_create_int64(env, out.holder_pid, &pid), NULL);
    return pid;
  }

  /* Acquired: list it first, so that from here on any failure still leaves a
   * guard the registry owns (and releases below). */
  g->listed_in = reg;
  g->next = reg->head;
  if (reg->head != NULL) reg->head->prev = g;
  reg->head = g;

  napi_value handle;
  if (napi_create_object(env, &handle) != napi_ok ||
      napi_type_tag_object(env, handle, &aos_lock__handle_tag) != napi_ok) {
    aos_lock_release(&g->lock);
    aos_lock__unlist(g);
    free(g);
    aos_napi_throw_last(env);
    return NULL;
  }
  if (napi_wrap(env, handle, g, aos_lock__finalize, NULL, NULL) != napi_ok) {
    aos_lock_release(&g->lock);
    aos_lock__unlist(g);
    free(g);
    aos_napi_throw_last(env);
    return NULL;
  }
  g->wrapped = true;
  return handle;
}

static napi_value aos_lock__release(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), NULL);
  if (argc < 1) {
    return aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "release(handle)");
  }
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, argv[0], &t), NULL);
  bool tagged = false;
  if (t == napi_object) {
    AOS_CALL(env, napi_check_object_type_tag(env, argv[0], &aos_lock__handle_tag, &tagged),
             NULL);
  }
  if (!tagged) {
    return aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "not a node-lock handle");
  }
  void *data = NULL;
  AOS_CALL(env, napi_unwrap(env, argv[0], &data), NULL);
  aos_lock__guard *g = data;
  aos_lock_release(&g->lock);
  aos_lock__unlist(g);
  return NULL;
}

napi_value aos_lock_napi_init(napi_env env) {
  aos_lock__registry *reg = calloc(1, sizeof *reg);
  if (reg == NULL) {
    napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
    return NULL;
  }
  if (napi_add_env_cleanup_hook(env, aos_lock__registry_teardown, reg) != napi_ok) {
    free(reg);
    aos_napi_throw_last(env);
    return NULL;
  }
  /* From here the cleanup hook owns `reg`. */
  napi_value exports;
  AOS_CALL(env, napi_create_object(env, &exports), NULL);
  if (!aos_napi_set_function(env, exports, "tryLock", aos_lock__try_lock, reg) ||
      !aos_napi_set_function(env, exports, "release", aos_lock__release, reg)) {
    return NULL;
  }
  return exports;
}
