/* Node-API glue of the `process` primitive: a thin layer over src/process/process.h.
 *
 *   open(pid, flags)     -> tree handle (an opaque, type-tagged object); sync, never
 *                           blocks: takes hold of the root process only. `flags`: the
 *                           AOS_PROC_* bits of src/process/process.h
 *   caller(tree)         -> the AOS_PROC_CALLER_* bits: what the caller signals itself
 *   isThread(id)         -> true when id names a thread that is not its process's
 *                           main thread (sync, never blocks)
 *   signal(tree, signum) -> Promise<number>: walk, freeze and signal, off the JS thread
 *   settle(tree, signum, rootReaped) -> Promise<number>: walk and signal once more,
 *                           then how many processes still keep the tree from settling
 *                           (0: settle). rootReaped: the caller saw the root's exit
 *   alive(tree, rootReaped) -> number of signalled processes not exited yet; never
 *                           blocks
 *   pids(tree)           -> number[]: pids of the processes signalled (tests, demo)
 *   close(tree)          -> releases every identity held (also done by a finalizer)
 *
 * A tree is used by one operation at a time: while a signal() is in flight the other
 * calls throw, except close(), which is deferred until the operation ends. No pid
 * identity (pidfd, handle) is ever visible to JavaScript. */
#include "process/napi.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/napi_util.h"
#include "process/process.h"
#include "process/scope_napi.h"

static const napi_type_tag aos_proc__tag = {0x6a1c5e0f3b7d4a92ULL, 0x8e2f61c4d7b35a08ULL};

typedef struct {
  aos_proc_tree *tree;
  bool busy;          /* a signal() is in flight on a worker thread */
  bool close_pending; /* close() was asked while busy */
} aos_proc__handle;

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  napi_ref handle_ref; /* keeps the handle (and its tree) alive during the work */
  aos_proc__handle *h;
  int sig;
  bool settle;      /* settle() rather than signal() */
  bool root_reaped; /* settle(): the caller saw the root's exit */
  size_t signalled; /* signal(): how many were signalled; settle(): how many pending */
} aos_proc__signal_req;

static void aos_proc__finalize(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  aos_proc__handle *h = data;
  aos_proc_tree_close(h->tree); /* never busy here: the work holds a reference */
  free(h);
}

static napi_value aos_proc__throw_host(napi_env env, int rc) {
  napi_value err = aos_napi_raw_error(env, "HOST_IO", -rc, -1);
  if (err != NULL) napi_throw(env, err);
  return NULL;
}

/* Unwraps argument `v` as a tree handle; NULL with a TypeError pending otherwise. */
static aos_proc__handle *aos_proc__unwrap(napi_env env, napi_value v) {
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, v, &t), NULL);
  bool ok = false;
  if (t == napi_object) AOS_CALL(env, napi_check_object_type_tag(env, v, &aos_proc__tag, &ok), NULL);
  if (!ok) {
    aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "expected a process tree handle");
    return NULL;
  }
  void *data = NULL;
  AOS_CALL(env, napi_unwrap(env, v, &data), NULL);
  return data;
}

static aos_proc__handle *aos_proc__idle_arg(napi_env env, napi_callback_info info,
                                            napi_value *argv, size_t want) {
  size_t argc = want;
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), NULL);
  if (argc < want) {
    aos_napi_throw_type(env, "ERR_MISSING_ARGS", "missing arguments");
    return NULL;
  }
  aos_proc__handle *h = aos_proc__unwrap(env, argv[0]);
  if (h == NULL) return NULL;
  if (h->busy) {
    napi_throw_error(env, "ERR_AGENT_OS_BUSY", "process tree operation already in flight");
    return NULL;
  }
  return h;
}

static napi_value aos_proc__open(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), NULL);
  if (argc < 2) return aos_napi_throw_type(env, "ERR_MISSING_ARGS", "missing arguments");
  napi_valuetype t0, t1;
  AOS_CALL(env, napi_typeof(env, argv[0], &t0), NULL);
  AOS_CALL(env, napi_typeof(env, argv[1], &t1), NULL);
  if (t0 != napi_number || t1 != napi_number) {
    return aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "expected (pid, flags)");
  }
  double pid_d = 0;
  uint32_t flags = 0;
  AOS_CALL(env, napi_get_value_double(env, argv[0], &pid_d), NULL);
  AOS_CALL(env, napi_get_value_uint32(env, argv[1], &flags), NULL);
  if (!(pid_d >= 1 && pid_d <= 2147483647.0) || pid_d != (double)(int)pid_d) {
    return aos_napi_throw_type(env, "ERR_OUT_OF_RANGE", "pid out of range");
  }
  const uint32_t known = AOS_PROC_NO_PIDFD | AOS_PROC_NO_PGROUP_FD | AOS_PROC_CHILD | AOS_PROC_REAPED;
  if ((flags & ~known) != 0) return aos_napi_throw_type(env, "ERR_OUT_OF_RANGE", "unknown flags");
  aos_proc__handle *h = calloc(1, sizeof *h);
  if (h == NULL) return aos_proc__throw_host(env, -ENOMEM);
  int rc = aos_proc_tree_open((int)pid_d, (unsigned)flags, &h->tree);
  if (rc < 0) {
    free(h);
    return aos_proc__throw_host(env, rc);
  }
  napi_value obj;
  if (napi_create_object(env, &obj) != napi_ok ||
      napi_type_tag_object(env, obj, &aos_proc__tag) != napi_ok ||
      napi_wrap(env, obj, h, aos_proc__finalize, NULL, NULL) != napi_ok) {
    aos_proc_tree_close(h->tree);
    free(h);
    aos_napi_throw_last(env);
    return NULL;
  }
  return obj;
}

static void aos_proc__signal_execute(napi_env env, void *data) {
  (void)env;
  aos_proc__signal_req *req = data;
  /* A failed walk still signalled what the tree already held; the count says what
   * was reached, which is all the JS layer needs. */
  if (req->settle) {
    (void)aos_proc_tree_settle(req->h->tree, req->sig, req->root_reaped, &req->signalled);
  } else {
    (void)aos_proc_tree_signal(req->h->tree, req->sig, &req->signalled);
  }
}

static void aos_proc__signal_complete(napi_env env, napi_status status, void *data) {
  aos_proc__signal_req *req = data;
  aos_proc__handle *h = req->h;
  h->busy = false;
  if (h->close_pending) {
    aos_proc_tree_close(h->tree);
    h->tree = NULL;
  }
  napi_value result = NULL;
  if (status == napi_ok && napi_create_double(env, (double)req->signalled, &result) == napi_ok) {
    napi_resolve_deferred(env, req->deferred, result);
  } else {
    napi_value msg = NULL, err = NULL;
    if (napi_create_string_utf8(env, "signal: operation cancelled", NAPI_AUTO_LENGTH, &msg) ==
            napi_ok &&
        napi_create_error(env, NULL, msg, &err) == napi_ok) {
      napi_reject_deferred(env, req->deferred, err);
    }
  }
  napi_delete_reference(env, req->handle_ref);
  napi_delete_async_work(env, req->work);
  free(req);
}

/* An optional boolean argument; false when absent. */
static bool aos_proc__flag_arg(napi_env env, napi_callback_info info, size_t index, bool *out) {
  size_t argc = 3;
  napi_value argv[3];
  *out = false;
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), false);
  if (argc <= index) return true;
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, argv[index], &t), false);
  if (t == napi_undefined) return true;
  if (t != napi_boolean) {
    aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "expected a boolean");
    return false;
  }
  AOS_CALL(env, napi_get_value_bool(env, argv[index], out), false);
  return true;
}

static napi_value aos_proc__queue(napi_env env, napi_callback_info info, bool settle) {
  napi_value argv[2];
  bool root_reaped = false;
  if (settle && !aos_proc__flag_arg(env, info, 2, &root_reaped)) return NULL;
  aos_proc__handle *h = aos_proc__idle_arg(env, info, argv, 2);
  if (h == NULL) return NULL;
  if (h->tree == NULL) {
    return aos_napi_throw_type(env, "ERR_INVALID_STATE", "process tree handle is closed");
  }
  int32_t sig = 0;
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, argv[1], &t), NULL);
  if (t != napi_number) return aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", "expected a signal number");
  AOS_CALL(env, napi_get_value_int32(env, argv[1], &sig), NULL);
  if (sig < 1 || sig > 64) return aos_napi_throw_type(env, "ERR_OUT_OF_RANGE", "signal number out of range");

  aos_proc__signal_req *req = calloc(1, sizeof *req);
  if (req == NULL) return aos_proc__throw_host(env, -ENOMEM);
  req->h = h;
  req->sig = sig;
  req->settle = settle;
  req->root_reaped = root_reaped;
  napi_value promise, name;
  if (napi_create_reference(env, argv[0], 1, &req->handle_ref) != napi_ok) {
    free(req);
    aos_napi_throw_last(env);
    return NULL;
  }
  if (napi_create_string_utf8(env, "agent-os:killProcessTree", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, aos_proc__signal_execute, aos_proc__signal_complete,
                             req, &req->work) != napi_ok) {
    napi_delete_reference(env, req->handle_ref);
    free(req);
    aos_napi_throw_last(env);
    return NULL;
  }
  if (napi_create_promise(env, &req->deferred, &promise) != napi_ok) {
    napi_delete_async_work(env, req->work);
    napi_delete_reference(env, req->handle_ref);
    free(req);
    aos_napi_throw_last(env);
    return NULL;
  }
  if (napi_queue_async_work(env, req->work) != napi_ok) {
    /* The deferred must settle: reject it, then drop the request. */
    napi_value msg = NULL, err = NULL;
    if (napi_create_string_utf8(env, "signal: could not queue work", NAPI_AUTO_LENGTH, &msg) ==
            napi_ok &&
        napi_create_error(env, NULL, msg, &err) == napi_ok) {
      napi_reject_deferred(env, req->deferred, err);
    }
    napi_delete_async_work(env, req->work);
    napi_delete_reference(env, req->handle_ref);
    free(req);
    return promise;
  }
  h->busy = true;
  return promise;
}

static napi_value aos_proc__signal(napi_env env, napi_callback_info info) {
  return aos_proc__queue(env, info, false);
}

static napi_value aos_proc__settle(napi_env env, napi_callback_info info) {
  return aos_proc__queue(env, info, true);
}

static napi_value aos_proc__alive(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  bool root_reaped = false;
  if (!aos_proc__flag_arg(env, info, 1, &root_reaped)) return NULL;
  aos_proc__handle *h = aos_proc__idle_arg(env, info, argv, 1);
  if (h == NULL) return NULL;
  size_t alive = h->tree == NULL ? 0 : aos_proc_tree_alive(h->tree, root_reaped);
  napi_value out;
  AOS_CALL(env, napi_create_double(env, (double)alive, &out), NULL);
  return out;
}

static napi_value aos_proc__caller(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  aos_proc__handle *h = aos_proc__idle_arg(env, info, argv, 1);
  if (h == NULL) return NULL;
  napi_value out;
  AOS_CALL(env, napi_create_uint32(env, h->tree == NULL ? 0 : aos_proc_tree_caller(h->tree), &out), NULL);
  return out;
}

static napi_value aos_proc__is_thread(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), NULL);
  napi_valuetype t = napi_undefined;
  if (argc >= 1) AOS_CALL(env, napi_typeof(env, argv[0], &t), NULL);
  double id = 0;
  if (t == napi_number) AOS_CALL(env, napi_get_value_double(env, argv[0], &id), NULL);
  if (t != napi_number || !(id >= 1 && id <= 2147483647.0) || id != (double)(int)id) {
    return aos_napi_throw_type(env, "ERR_OUT_OF_RANGE", "id out of range");
  }
  int rc = aos_proc_is_thread((int)id);
  if (rc < 0) return aos_proc__throw_host(env, rc);
  napi_value out;
  AOS_CALL(env, napi_get_boolean(env, rc == 1, &out), NULL);
  return out;
}

static napi_value aos_proc__pids(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  aos_proc__handle *h = aos_proc__idle_arg(env, info, argv, 1);
  if (h == NULL) return NULL;
  size_t n = h->tree == NULL ? 0 : aos_proc_tree_pids(h->tree, NULL, 0);
  int *pids = NULL;
  if (n > 0) {
    pids = malloc(n * sizeof *pids);
    if (pids == NULL) return aos_proc__throw_host(env, -ENOMEM);
    aos_proc_tree_pids(h->tree, pids, n);
  }
  napi_value arr;
  if (napi_create_array_with_length(env, n, &arr) != napi_ok) {
    free(pids);
    aos_napi_throw_last(env);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    napi_value v;
    if (napi_create_int32(env, pids[i], &v) != napi_ok ||
        napi_set_element(env, arr, (uint32_t)i, v) != napi_ok) {
      free(pids);
      aos_napi_throw_last(env);
      return NULL;
    }
  }
  free(pids);
  return arr;
}

static napi_value aos_proc__close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), NULL);
  if (argc < 1) return aos_napi_throw_type(env, "ERR_MISSING_ARGS", "missing arguments");
  aos_proc__handle *h = aos_proc__unwrap(env, argv[0]);
  if (h == NULL) return NULL;
  if (h->busy) {
    h->close_pending = true;
  } else {
    aos_proc_tree_close(h->tree);
    h->tree = NULL;
  }
  return NULL;
}

napi_value aos_proc_napi_init(napi_env env) {
  napi_value exports;
  AOS_CALL(env, napi_create_object(env, &exports), NULL);
  if (!aos_napi_set_function(env, exports, "open", aos_proc__open, NULL) ||
      !aos_napi_set_function(env, exports, "signal", aos_proc__signal, NULL) ||
      !aos_napi_set_function(env, exports, "settle", aos_proc__settle, NULL) ||
      !aos_napi_set_function(env, exports, "alive", aos_proc__alive, NULL) ||
      !aos_napi_set_function(env, exports, "caller", aos_proc__caller, NULL) ||
      !aos_napi_set_function(env, exports, "isThread", aos_proc__is_thread, NULL) ||
      !aos_napi_set_function(env, exports, "pids", aos_proc__pids, NULL) ||
      !aos_napi_set_function(env, exports, "close", aos_proc__close, NULL) ||
      !aos_scope_napi_register(env, exports)) {
    return NULL;
  }
  return exports;
}
