/* node-lock's Node-API glue: turns the C core (node_lock.h) into two functions for
 * lib/node-lock.js.
 *
 *   tryLock(path: string, wantHolder: boolean): number
 *     > 0: acquired, the guard's id (a slot in this environment's registry and
 *     that slot's generation); <= 0: held, minus the holder's pid (0 when it cannot
 *     be known). Unsafe entries and host failures throw the raw error of
 *     src/common/napi_util.h (aosKind UNSAFE_ENTRY / HOST_IO / INVALID_PATH) for
 *     the JS layer to type.
 *   release(id: number): void      idempotent; an id that names no held guard
 *     (released already, or never issued) does nothing
 *
 * Ownership. Garbage collection never releases a lock: each held lock lives in a
 * slot of a per-environment registry, and JavaScript holds only the slot's id (a
 * number: no object, wrap, type tag or finalizer per guard). An id carries its
 * slot's generation, bumped at every release, so a stale id can never name the
 * guard that reuses its slot.
 *   - release() unlocks, closes and frees the slot;
 *   - a dropped, unreleased guard stays in its slot, held;
 *   - the environment's cleanup hook (process exit, or a worker thread ending)
 *     releases every guard still held, since nothing can release them after, and
 *     frees the registry. It calls no JavaScript. */
#include "node_lock/napi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/napi_util.h"
#include "node_lock/node_lock.h"

/* Ids are generation * 2^24 + slot: at most 2^24 guards held at once, generations
 * 1 .. 2^29 - 1 (then back to 1), so every id is an integer below 2^53, and > 0. */
#define AOS_LOCK__SLOT_BITS 24
#define AOS_LOCK__MAX_SLOTS (1u << AOS_LOCK__SLOT_BITS)
#define AOS_LOCK__MAX_GEN ((1u << 29) - 1)

typedef struct {
  aos_lock lock;
  uint32_t gen;       /* this slot's generation (>= 1) */
  uint32_t next_free; /* the next free slot + 1 (0: none), while free */
  bool held;
} aos_lock__slot;

typedef struct {
  aos_lock__slot *slots;
  uint32_t cap;       /* slots allocated */
  uint32_t used;      /* slots ever handed out (0 .. used-1 are initialised) */
  uint32_t free_head; /* the first free slot below `used` + 1 (0: none) */
} aos_lock__registry;

static void aos_lock__registry_teardown(void *data) {
  aos_lock__registry *reg = data;
  for (uint32_t i = 0; i < reg->used; i++) {
    if (reg->slots[i].held) aos_lock_release(&reg->slots[i].lock);
  }
  free(reg->slots);
  free(reg);
}

/* A free slot (its index), or -1 when there is no memory or room for one. */
static int64_t aos_lock__slot_take(aos_lock__registry *reg) {
  if (reg->free_head != 0) {
    uint32_t i = reg->free_head - 1;
    reg->free_head = reg->slots[i].next_free;
    return i;
  }
  if (reg->used == reg->cap) {
    if (reg->cap >= AOS_LOCK__MAX_SLOTS) return -1;
    uint32_t cap = reg->cap ? reg->cap * 2 : 16;
    aos_lock__slot *grown = realloc(reg->slots, (size_t)cap * sizeof *grown);
    if (grown == NULL) return -1;
    reg->slots = grown;
    reg->cap = cap;
  }
  uint32_t i = reg->used++;
  reg->slots[i].gen = 1;
  reg->slots[i].held = false;
  aos_lock_init(&reg->slots[i].lock);
  return i;
}

static void aos_lock__slot_put(aos_lock__registry *reg, uint32_t i) {
  aos_lock__slot *s = &reg->slots[i];
  s->held = false;
  s->gen = s->gen >= AOS_LOCK__MAX_GEN ? 1 : s->gen + 1;
  s->next_free = reg->free_head;
  reg->free_head = i + 1;
}

static napi_value aos_lock__throw_raw(napi_env env, const char *kind, int err) {
  napi_value e = aos_napi_raw_error(env, kind, err, -1);
  if (e != NULL) napi_throw(env, e);
  return NULL;
}

/* Paths up to this many bytes are converted into a buffer on the stack, in one
 * call; longer ones are allocated. */
#define AOS_LOCK__PATH_STACK 1024

/* The path argument `v` as UTF-8 in `stack` (AOS_LOCK__PATH_STACK bytes) or, when
 * longer, an allocated copy (free it when it is not `stack`). NULL with an exception
 * pending when it is not a string, is empty or holds a NUL. */
static char *aos_lock__path_arg(napi_env env, napi_value v, char *stack) {
  size_t len = 0;
  char *path = stack;
  napi_status s = napi_get_value_string_utf8(env, v, stack, AOS_LOCK__PATH_STACK, &len);
  if (s == napi_string_expected) {
    aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "path must be a string");
    return NULL;
  }
  AOS_CALL(env, s, NULL);
  if (len + 1 >= AOS_LOCK__PATH_STACK) { /* may not have fitted: the allocated copy */
    path = aos_napi_get_utf8(env, v, &len);
    if (path == NULL) return NULL;
  }
  if (len == 0 || strlen(path) != len) {
    if (path != stack) free(path);
    aos_lock__throw_raw(env, "INVALID_PATH", 0);
    return NULL;
  }
  return path;
}

/* holder(path) -> the holder's pid (> 0), 0 when it cannot be known, -1 when the
 * guard holds no record yet (a holder between its lock and its record, where holders
 * record themselves). Never takes the lock. */
static napi_value aos_lock__holder(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), NULL);
  if (argc < 1) return aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "holder(path)");
  char stack[AOS_LOCK__PATH_STACK];
  char *path = aos_lock__path_arg(env, argv[0], stack);
  if (path == NULL) return NULL;
  int64_t pid = 0;
  int r = aos_lock_holder(path, &pid);
  if (path != stack) free(path);
  napi_value out;
  AOS_CALL(env, napi_create_double(env, r < 0 ? 0.0 : (double)pid, &out), NULL);
  return out;
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
  if (napi_get_value_bool(env, argv[1], &want_holder) != napi_ok) {
    return aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "wantHolder must be a boolean");
  }
  char stack[AOS_LOCK__PATH_STACK];
  char *path = aos_lock__path_arg(env, argv[0], stack);
  if (path == NULL) return NULL;

  int64_t slot = aos_lock__slot_take(reg);
  if (slot < 0) {
    if (path != stack) free(path);
    return aos_lock__throw_raw(env, "HOST_IO", ENOMEM);
  }
  aos_lock__slot *g = &reg->slots[slot];
  aos_lock_outcome out;
  int r = aos_lock_try_acquire(path, want_holder, &g->lock, &out);
  if (path != stack) free(path);
  if (r < 0 || out.state != AOS_LOCK_ACQUIRED) {
    aos_lock__slot_put(reg, (uint32_t)slot);
    if (r < 0) return aos_lock__throw_raw(env, "HOST_IO", -r);
    if (out.state == AOS_LOCK_UNSAFE) return aos_lock__throw_raw(env, "UNSAFE_ENTRY", out.host_errno);
    napi_value held;
    AOS_CALL(env, napi_create_double(env, -(double)out.holder_pid, &held), NULL);
    return held;
  }
  /* Acquired: the slot owns it from here (the cleanup hook releases it if need be). */
  g->held = true;
  napi_value id;
  double v = (double)(((uint64_t)g->gen << AOS_LOCK__SLOT_BITS) | (uint64_t)slot);
  AOS_CALL(env, napi_create_double(env, v, &id), NULL);
  return id;
}

static napi_value aos_lock__release(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *data = NULL;
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, &data), NULL);
  aos_lock__registry *reg = data;
  double v = 0;
  if (argc < 1 || napi_get_value_double(env, argv[0], &v) != napi_ok) {
    return aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "release(id)");
  }
  if (!(v >= 1 && v < 9007199254740992.0)) return NULL;
  uint64_t id = (uint64_t)v;
  if ((double)id != v) return NULL;
  uint64_t slot = id & (AOS_LOCK__MAX_SLOTS - 1);
  uint64_t gen = id >> AOS_LOCK__SLOT_BITS;
  if (slot >= reg->used) return NULL;
  aos_lock__slot *g = &reg->slots[slot];
  if (!g->held || g->gen != gen) return NULL; /* released already: idempotent */
  aos_lock_release(&g->lock);
  aos_lock__slot_put(reg, (uint32_t)slot);
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
      !aos_napi_set_function(env, exports, "release", aos_lock__release, reg) ||
      !aos_napi_set_function(env, exports, "holder", aos_lock__holder, reg)) {
    return NULL;
  }
  return exports;
}
