/* Node-API glue of process scopes: on Linux a thin layer over src/process/scope.h
 * (below), on Windows over src/process/scope_win32.h (further down).
 *
 *   pidfd(pid)              -> handle (opaque, type-tagged, finalizer closes it)
 *   control(handle, value)  -> 0, or the errno name (e.g. 'ESRCH') as a string
 *   signal(handle, signum)  -> 0, or the errno name: the signal itself, by pidfd
 *   exited(handle)          -> boolean; never blocks
 *   close(handle)           -> releases the pidfd (idempotent)
 *   descendants(pid)        -> number[]: live processes below pid
 *   cgSignal(dir, cgpath, signum) -> number of processes signalled (the cgroup and
 *                              every cgroup below it)
 *   cgRemove(dir, cgpath, waitMs) -> 0, or the errno name: kills what is left in the
 *                              cgroup and below, removes every directory
 *
 * No descriptor is ever visible to JavaScript. */
#include "process/scope_napi.h"

#include "common/napi_util.h"

#if defined(__linux__) || defined(_WIN32)
/* rc itself as a number when >= 0, else its errno's name (e.g. 'ESRCH') as a string. */
static napi_value aos_scope__errno_value(napi_env env, int rc) {
  napi_value out;
  if (rc >= 0) {
    AOS_CALL(env, napi_create_int32(env, rc, &out), NULL);
    return out;
  }
  napi_value err = aos_napi_raw_error(env, "HOST_IO", -rc, -1);
  if (err == NULL) return NULL;
  AOS_CALL(env, napi_get_named_property(env, err, "hostCode", &out), NULL);
  return out;
}

/* The native data of a handle object type-tagged with `tag`; anything else throws a
 * TypeError with `message`. */
static void *aos_scope__tagged(napi_env env, napi_value v, const napi_type_tag *tag, const char *message) {
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, v, &t), NULL);
  bool ok = false;
  if (t == napi_object) AOS_CALL(env, napi_check_object_type_tag(env, v, tag, &ok), NULL);
  if (!ok) {
    aos_napi_throw_type(env, "ERR_INVALID_ARG_TYPE", message);
    return NULL;
  }
  void *data = NULL;
  AOS_CALL(env, napi_unwrap(env, v, &data), NULL);
  return data;
}
#endif

#ifdef __linux__
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "process/scope.h"

static const napi_type_tag aos_scope__tag = {0x3f0b6c2d9e814a57ULL, 0xa4d2c81b5e7f3906ULL};

typedef struct {
  int fd;
} aos_scope__pidfd;

static void aos_scope__finalize(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  aos_scope__pidfd *h = data;
  if (h->fd >= 0) close(h->fd);
  free(h);
}

static bool aos_scope__args(napi_env env, napi_callback_info info, napi_value *argv, size_t want) {
  size_t argc = want;
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), false);
  if (argc < want) {
    aos_napi_throw_type(env, "ERR_MISSING_ARGS", "missing arguments");
    return false;
  }
  return true;
}

static bool aos_scope__int(napi_env env, napi_value v, int lo, int hi, int *out) {
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, v, &t), false);
  double d = 0;
  if (t == napi_number) AOS_CALL(env, napi_get_value_double(env, v, &d), false);
  if (t != napi_number || !(d >= lo && d <= hi) || d != (double)(int)d) {
    aos_napi_throw_type(env, "ERR_OUT_OF_RANGE", "integer argument out of range");
    return false;
  }
  *out = (int)d;
  return true;
}

static aos_scope__pidfd *aos_scope__unwrap(napi_env env, napi_value v) {
  return aos_scope__tagged(env, v, &aos_scope__tag, "expected a scope process handle");
}

static napi_value aos_scope__pidfd_open(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int pid;
  if (!aos_scope__args(env, info, argv, 1) || !aos_scope__int(env, argv[0], 1, 0x7fffffff, &pid)) {
    return NULL;
  }
  int fd = -1;
  int rc = aos_scope_pidfd_open(pid, &fd);
  if (rc < 0) {
    napi_value err = aos_napi_raw_error(env, "HOST_IO", -rc, -1);
    if (err != NULL) napi_throw(env, err);
    return NULL;
  }
  aos_scope__pidfd *h = malloc(sizeof *h);
  if (h == NULL) {
    close(fd);
    napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
    return NULL;
  }
  h->fd = fd;
  napi_value obj;
  if (napi_create_object(env, &obj) != napi_ok ||
      napi_type_tag_object(env, obj, &aos_scope__tag) != napi_ok ||
      napi_wrap(env, obj, h, aos_scope__finalize, NULL, NULL) != napi_ok) {
    close(fd);
    free(h);
    aos_napi_throw_last(env);
    return NULL;
  }
  return obj;
}

static napi_value aos_scope__control(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int value;
  if (!aos_scope__args(env, info, argv, 2)) return NULL;
  aos_scope__pidfd *h = aos_scope__unwrap(env, argv[0]);
  if (h == NULL || !aos_scope__int(env, argv[1], 0, 64, &value)) return NULL;
  if (h->fd < 0) return aos_scope__errno_value(env, -ESRCH);
  return aos_scope__errno_value(env, aos_scope_control(h->fd, value));
}

static napi_value aos_scope__signal(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int sig;
  if (!aos_scope__args(env, info, argv, 2)) return NULL;
  aos_scope__pidfd *h = aos_scope__unwrap(env, argv[0]);
  if (h == NULL || !aos_scope__int(env, argv[1], 1, 64, &sig)) return NULL;
  if (h->fd < 0) return aos_scope__errno_value(env, -ESRCH);
  return aos_scope__errno_value(env, aos_scope_pidfd_signal(h->fd, sig));
}

static napi_value aos_scope__exited(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!aos_scope__args(env, info, argv, 1)) return NULL;
  aos_scope__pidfd *h = aos_scope__unwrap(env, argv[0]);
  if (h == NULL) return NULL;
  napi_value out;
  AOS_CALL(env, napi_get_boolean(env, h->fd < 0 || aos_scope_exited(h->fd) != 0, &out), NULL);
  return out;
}

static napi_value aos_scope__close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!aos_scope__args(env, info, argv, 1)) return NULL;
  aos_scope__pidfd *h = aos_scope__unwrap(env, argv[0]);
  if (h == NULL) return NULL;
  if (h->fd >= 0) close(h->fd);
  h->fd = -1;
  return NULL;
}

static napi_value aos_scope__descendants(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int pid;
  if (!aos_scope__args(env, info, argv, 1) || !aos_scope__int(env, argv[0], 1, 0x7fffffff, &pid)) {
    return NULL;
  }
  aos_scope_pids found = {0};
  if (aos_scope_descendants(pid, &found) < 0) {
    aos_scope_pids_free(&found);
    napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
    return NULL;
  }
  napi_value arr;
  if (napi_create_array_with_length(env, found.n, &arr) != napi_ok) {
    aos_scope_pids_free(&found);
    aos_napi_throw_last(env);
    return NULL;
  }
  for (size_t i = 0; i < found.n; i++) {
    napi_value x;
    if (napi_create_int32(env, found.v[i], &x) != napi_ok || napi_set_element(env, arr, (uint32_t)i, x) != napi_ok) {
      aos_scope_pids_free(&found);
      aos_napi_throw_last(env);
      return NULL;
    }
  }
  aos_scope_pids_free(&found);
  return arr;
}

/* Two string arguments (a cgroup's directory and its path) and an integer. */
static bool aos_scope__cg_args(napi_env env, napi_callback_info info, int lo, int hi, char **dir, char **cgpath, int *n) {
  napi_value argv[3];
  *dir = *cgpath = NULL;
  if (!aos_scope__args(env, info, argv, 3) || !aos_scope__int(env, argv[2], lo, hi, n)) return false;
  size_t len;
  *dir = aos_napi_get_utf8(env, argv[0], &len);
  if (*dir == NULL) return false;
  *cgpath = aos_napi_get_utf8(env, argv[1], &len);
  if (*cgpath == NULL) {
    free(*dir);
    *dir = NULL;
    return false;
  }
  return true;
}

static napi_value aos_scope__cg_signal(napi_env env, napi_callback_info info) {
  char *dir, *cgpath;
  int sig;
  if (!aos_scope__cg_args(env, info, 1, 64, &dir, &cgpath, &sig)) return NULL;
  int rc = aos_scope_cg_signal(dir, cgpath, sig);
  free(dir);
  free(cgpath);
  return aos_scope__errno_value(env, rc);
}

static napi_value aos_scope__cg_remove(napi_env env, napi_callback_info info) {
  char *dir, *cgpath;
  int wait_ms;
  if (!aos_scope__cg_args(env, info, 0, 60000, &dir, &cgpath, &wait_ms)) return NULL;
  int rc = aos_scope_cg_remove(dir, cgpath, wait_ms);
  free(dir);
  free(cgpath);
  return aos_scope__errno_value(env, rc);
}

static napi_value aos_scope__kernel_support(napi_env env, napi_callback_info info) {
  (void)info;
  return aos_scope__errno_value(env, aos_scope_kernel_support());
}

bool aos_scope_napi_register(napi_env env, napi_value exports) {
  napi_value scope;
  AOS_CALL(env, napi_create_object(env, &scope), false);
  if (!aos_napi_set_function(env, scope, "pidfd", aos_scope__pidfd_open, NULL) ||
      !aos_napi_set_function(env, scope, "control", aos_scope__control, NULL) ||
      !aos_napi_set_function(env, scope, "signal", aos_scope__signal, NULL) ||
      !aos_napi_set_function(env, scope, "exited", aos_scope__exited, NULL) ||
      !aos_napi_set_function(env, scope, "close", aos_scope__close, NULL) ||
      !aos_napi_set_function(env, scope, "descendants", aos_scope__descendants, NULL) ||
      !aos_napi_set_function(env, scope, "cgSignal", aos_scope__cg_signal, NULL) ||
      !aos_napi_set_function(env, scope, "cgRemove", aos_scope__cg_remove, NULL) ||
      !aos_napi_set_function(env, scope, "kernelSupport", aos_scope__kernel_support, NULL)) {
    return false;
  }
  AOS_CALL(env, napi_set_named_property(env, exports, "scope", scope), false);
  return true;
}

#elif defined(_WIN32)
/* Windows: the `job` backend's Job Object (src/process/scope_win32.h).
 *
 *   jobCreate()           -> { handle, name }: a new kill-on-close job and its name
 *                            (handle opaque, type-tagged; its finalizer closes it)
 *   jobActive(handle)     -> number of processes in the job (0 once closed)
 *   jobPids(handle)       -> number[]: ids of the processes in the job
 *   jobTerminate(handle)  -> 0, or the errno name as a string
 *   jobClose(handle)      -> closes the job's handle (idempotent)
 *
 * No handle is ever visible to JavaScript. */
#include <errno.h>
#include <stdlib.h>
#include <wchar.h>

#include "process/scope_win32.h"

static const napi_type_tag aos_scope__job_tag = {0x5c83e1a0d94f2b67ULL, 0x1b7e4f9a03c6d258ULL};

typedef struct {
  aos_scope_job *job; /* NULL once closed */
} aos_scope__job_handle;

static void aos_scope__job_finalize(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  aos_scope__job_handle *h = data;
  aos_scope_job_close(h->job);
  free(h);
}

static aos_scope__job_handle *aos_scope__job_arg(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value v;
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, &v, NULL, NULL), NULL);
  return aos_scope__tagged(env, v, &aos_scope__job_tag, "expected a scope job handle");
}

static napi_value aos_scope__job_create(napi_env env, napi_callback_info info) {
  (void)info;
  wchar_t name[AOS_SCOPE_JOB_NAME_LEN];
  aos_scope_job *job = NULL;
  int rc = aos_scope_job_create(&job, name);
  if (rc < 0) {
    napi_value err = aos_napi_raw_error(env, "HOST_IO", -rc, -1);
    if (err != NULL) napi_throw(env, err);
    return NULL;
  }
  aos_scope__job_handle *h = malloc(sizeof *h);
  if (h == NULL) {
    aos_scope_job_close(job);
    napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
    return NULL;
  }
  h->job = job;
  napi_value obj, handle, jsname;
  if (napi_create_object(env, &handle) != napi_ok ||
      napi_type_tag_object(env, handle, &aos_scope__job_tag) != napi_ok ||
      napi_wrap(env, handle, h, aos_scope__job_finalize, NULL, NULL) != napi_ok) {
    aos_scope_job_close(job);
    free(h);
    aos_napi_throw_last(env);
    return NULL;
  }
  /* From here the finalizer owns the job. The name is plain ASCII. */
  char ascii[AOS_SCOPE_JOB_NAME_LEN];
  for (size_t i = 0; i < AOS_SCOPE_JOB_NAME_LEN; i++) ascii[i] = (char)name[i];
  AOS_CALL(env, napi_create_string_latin1(env, ascii, NAPI_AUTO_LENGTH, &jsname), NULL);
  AOS_CALL(env, napi_create_object(env, &obj), NULL);
  AOS_CALL(env, napi_set_named_property(env, obj, "handle", handle), NULL);
  AOS_CALL(env, napi_set_named_property(env, obj, "name", jsname), NULL);
  return obj;
}

static napi_value aos_scope__job_active(napi_env env, napi_callback_info info) {
  aos_scope__job_handle *h = aos_scope__job_arg(env, info);
  if (h == NULL) return NULL;
  unsigned long active = 0;
  if (h->job != NULL && aos_scope_job_active(h->job, &active) < 0) active = 0;
  napi_value out;
  AOS_CALL(env, napi_create_double(env, (double)active, &out), NULL);
  return out;
}

static napi_value aos_scope__job_pids(napi_env env, napi_callback_info info) {
  aos_scope__job_handle *h = aos_scope__job_arg(env, info);
  if (h == NULL) return NULL;
  enum { CAP = 65536 };
  size_t count = 0;
  unsigned long *pids = NULL;
  if (h->job != NULL) {
    pids = malloc(CAP * sizeof *pids);
    if (pids == NULL) {
      napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
      return NULL;
    }
    if (aos_scope_job_pids(h->job, pids, CAP, &count) < 0) count = 0;
    if (count > CAP) count = CAP;
  }
  napi_value arr = NULL;
  if (napi_create_array_with_length(env, count, &arr) != napi_ok) {
    free(pids);
    aos_napi_throw_last(env);
    return NULL;
  }
  for (size_t i = 0; i < count; i++) {
    napi_value x;
    if (napi_create_double(env, (double)pids[i], &x) != napi_ok || napi_set_element(env, arr, (uint32_t)i, x) != napi_ok) {
      free(pids);
      aos_napi_throw_last(env);
      return NULL;
    }
  }
  free(pids);
  return arr;
}

static napi_value aos_scope__job_terminate(napi_env env, napi_callback_info info) {
  aos_scope__job_handle *h = aos_scope__job_arg(env, info);
  if (h == NULL) return NULL;
  return aos_scope__errno_value(env, h->job == NULL ? -EBADF : aos_scope_job_terminate(h->job));
}

static napi_value aos_scope__job_close(napi_env env, napi_callback_info info) {
  aos_scope__job_handle *h = aos_scope__job_arg(env, info);
  if (h == NULL) return NULL;
  aos_scope_job_close(h->job);
  h->job = NULL;
  return NULL;
}

bool aos_scope_napi_register(napi_env env, napi_value exports) {
  napi_value scope;
  AOS_CALL(env, napi_create_object(env, &scope), false);
  if (!aos_napi_set_function(env, scope, "jobCreate", aos_scope__job_create, NULL) ||
      !aos_napi_set_function(env, scope, "jobActive", aos_scope__job_active, NULL) ||
      !aos_napi_set_function(env, scope, "jobPids", aos_scope__job_pids, NULL) ||
      !aos_napi_set_function(env, scope, "jobTerminate", aos_scope__job_terminate, NULL) ||
      !aos_napi_set_function(env, scope, "jobClose", aos_scope__job_close, NULL)) {
    return false;
  }
  AOS_CALL(env, napi_set_named_property(env, exports, "scope", scope), false);
  return true;
}

#else

bool aos_scope_napi_register(napi_env env, napi_value exports) {
  (void)env, (void)exports;
  return true; /* scopes on this host are built from spawn and killProcessTree alone */
}

#endif
