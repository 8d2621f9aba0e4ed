/* file-authority: Node-API glue over the C core (fa.h).
 *
 * An authority's native side is a handle: an empty object, napi_wrap'ped with an
 * aos_fa__handle and type-tagged, that lib/file-authority.js keeps in a private
 * field. Each operation has a sync entry point and an async one (napi_async_work);
 * both call the same C function (reads: aos_fa_read_into, into an ArrayBuffer that
 * Node allocates when sync, into a malloc'ed buffer through aos_fa_read when async,
 * since the worker thread cannot create JavaScript values). The core reports a kind,
 * an errno and a segment index; this file turns that into a raw error
 * (aos_napi_raw_error) which the JS layer turns into a FileAuthorityError. No path or segment text ever enters a message.
 *
 * Descriptor lifetime: an async operation holds its handle (in_flight count and a
 * strong reference) from queueing until completion. close marks the handle closed
 * and releases the descriptor at once when nothing is in flight, otherwise the last
 * completing operation releases it, so no operation can act on a reused number. A
 * handle garbage-collected unclosed releases its descriptor in its finalizer (an
 * in-flight operation's strong reference keeps it alive until then; at environment
 * teardown, when finalizers run regardless, the last completion frees it).
 *
 * Per-environment state (resolver mode, openat2 availability, teardown flag) lives in
 * an aos_fa__env passed as callback data; nothing mutable is static. */
#include "file_authority/napi.h"

#include "common/napi_util.h"
#include "file_authority/fa.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The type tag of authority handles (constant; identifies this module's handles). */
static const napi_type_tag aos_fa__handle_tag = {0x6167656e74254f53ull, 0x6661686e646c3031ull};

typedef struct {
  int refs;          /* 1 for the environment, plus one per queued operation */
  bool tearing_down; /* set by the cleanup hook: no more calls into JavaScript */
  bool openat2;      /* this kernel has openat2 with the needed resolve flags */
  aos_fa_resolver resolver; /* for authorities opened from now on */
  void *bound; /* the callback data of the operation rows' functions (aos_fa_napi_init) */
} aos_fa__env;

typedef struct {
  aos_fa_root root;
  int in_flight; /* queued async operations using root.fd */
  bool closed;   /* close was called */
  bool gone;     /* the JS object was finalized */
  bool writable; /* a WriteAuthority's handle (only these may write) */
} aos_fa__handle;

static void aos_fa__env_unref(aos_fa__env *e) {
  if (--e->refs == 0) {
    free(e->bound);
    free(e);
  }
}

static void aos_fa__env_cleanup(void *arg) {
  aos_fa__env *e = arg;
  e->tearing_down = true;
  aos_fa__env_unref(e);
}

/* Releases the descriptor once closed or dropped and nothing is in flight; frees the
 * handle once its object is gone too. */
static void aos_fa__handle_settle(aos_fa__handle *h) {
  if (h->in_flight > 0) return;
  if ((h->closed || h->gone) && h->root.fd >= 0) {
    aos_fa_fdcache_free(h->root.fdcache);
    h->root.fdcache = NULL;
    aos_fa_root_close(h->root.fd);
    h->root.fd = -1;
  }
  if (h->gone) free(h);
}

static void aos_fa__handle_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  aos_fa__handle *h = data;
  h->gone = true;
  aos_fa__handle_settle(h);
}

/* ------------------------------------------------------------------ helpers */

static const char *aos_fa__kind_name(aos_fa_kind k) {
  switch (k) {
    case AOS_FA_INVALID_PATH: return "INVALID_PATH";
    case AOS_FA_INVALID_CONTENT: return "INVALID_CONTENT";
    case AOS_FA_UNSAFE_ENTRY: return "UNSAFE_ENTRY";
    case AOS_FA_OVER_BUDGET: return "OVER_BUDGET";
    case AOS_FA_FILE_CHANGED: return "FILE_CHANGED";
    case AOS_FA_ROOT_CHANGED: return "ROOT_CHANGED";
    case AOS_FA_ENTRY_EXISTS: return "ENTRY_EXISTS";
    case AOS_FA_UNSUPPORTED_BACKEND: return "UNSUPPORTED_BACKEND";
    case AOS_FA_NOT_FOUND: /* callers turn it into undefined; a write never has it */
    case AOS_FA_HOST_IO:
    default: return "HOST_IO";
  }
}

static napi_value aos_fa__status_error(napi_env env, const aos_fa_status *st) {
  return aos_napi_raw_error(env, aos_fa__kind_name(st->kind), st->err, st->segment);
}

static napi_value aos_fa__kind_error(napi_env env, const char *kind) {
  return aos_napi_raw_error(env, kind, 0, -1);
}

static napi_value aos_fa__throw(napi_env env, napi_value err) {
  if (err != NULL) napi_throw(env, err);
  return NULL;
}

static napi_value aos_fa__undefined(napi_env env) {
  napi_value u = NULL;
  AOS_CALL(env, napi_get_undefined(env, &u), NULL);
  return u;
}

/* The handle wrapped in `value`, or NULL (no exception) when it is not one. */
static aos_fa__handle *aos_fa__handle_of(napi_env env, napi_value value) {
  napi_valuetype t;
  if (napi_typeof(env, value, &t) != napi_ok || t != napi_object) return NULL;
  bool tagged = false;
  if (napi_check_object_type_tag(env, value, &aos_fa__handle_tag, &tagged) != napi_ok ||
      !tagged) {
    return NULL;
  }
  void *h = NULL;
  if (napi_unwrap(env, value, &h) != napi_ok) return NULL;
  return h;
}

/* An open handle argument; throws (and returns NULL) when it is not one or closed. */
static aos_fa__handle *aos_fa__open_handle_arg(napi_env env, napi_value value) {
  aos_fa__handle *h = aos_fa__handle_of(env, value);
  if (h == NULL) {
    aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
    return NULL;
  }
  if (h->closed || h->root.fd < 0) {
    aos_fa__throw(env, aos_fa__kind_error(env, "AUTHORITY_CLOSED"));
    return NULL;
  }
  return h;
}

/* Segments arrive in one of two forms.
 *
 * The JS layer's form: one string, the segments joined with '/' (it checked that no
 * segment holds a '/', and that each is a well-formed string, which C cannot see
 * once V8 has converted a lone surrogate). It is converted once, into a buffer on
 * the stack for a sync call (AOS_FA__SEGS_STACK bytes; allocated when longer, or
 * for an async call), and split in place. Every piece is then checked by the core
 * like any segment (aos_fa_segments_check), so a misuse of the form can only make
 * more segments, each still a single checked name. A NUL inside a piece is
 * INVALID_PATH at that index; a string longer than 255 segments of 255 bytes could
 * be is INVALID_PATH without one (the JS layer then names the segment at fault).
 *
 * An array of strings: one allocation holding the pointer array and a fixed slot of
 * AOS_FA__SEG_SLOT bytes per segment, each copied with one napi call (no length query
 * first): a segment that fills its slot is longer than AOS_FA_MAX_SEGMENT_BYTES.
 *
 * Either form throws INVALID_PATH (naming the index where known) for anything but
 * at most 255 segments of at most that many bytes; `base` offsets the index
 * (rename's target). */
#define AOS_FA__SEG_SLOT (AOS_FA_MAX_SEGMENT_BYTES + 2)
#define AOS_FA__JOINED_MAX (AOS_FA_MAX_SEGMENTS * (AOS_FA_MAX_SEGMENT_BYTES + 1) - 1)
#define AOS_FA__SEGS_STACK 1024

typedef struct {
  char **v;
  size_t n;
  void *heap; /* the allocation to free, or NULL */
} aos_fa__segs;

/* Room on the stack for a sync call's joined segments. */
typedef struct {
  char *v[AOS_FA_MAX_SEGMENTS];
  char text[AOS_FA__SEGS_STACK];
} aos_fa__segs_scratch;

static bool aos_fa__bad_segments(napi_env env, int index) {
  aos_fa__throw(env, aos_napi_raw_error(env, "INVALID_PATH", 0, index));
  return false;
}

/* Splits text[0..len) (NUL-terminated) at each '/' into v. */
static bool aos_fa__split_segments(napi_env env, char *text, size_t len, char **v,
                                   aos_fa__segs *out, int base) {
  size_t n = 0;
  if (len > 0) {
    char *p = text;
    char *end = text + len;
    for (;;) {
      if (n == AOS_FA_MAX_SEGMENTS) return aos_fa__bad_segments(env, -1);
      char *slash = memchr(p, '/', (size_t)(end - p));
      char *stop = slash != NULL ? slash : end;
      if (memchr(p, '\0', (size_t)(stop - p)) != NULL) return aos_fa__bad_segments(env, base + (int)n);
      v[n++] = p;
      if (slash == NULL) break;
      *slash = '\0';
      p = slash + 1;
    }
  }
  out->v = v;
  out->n = n;
  return true;
}

static bool aos_fa__get_joined(napi_env env, napi_value str, aos_fa__segs *out, int base,
                               aos_fa__segs_scratch *scratch) {
  size_t len = 0;
  if (scratch != NULL) {
    AOS_CALL(env, napi_get_value_string_utf8(env, str, scratch->text, sizeof scratch->text, &len), false);
    if (len + 1 < sizeof scratch->text) {
      return aos_fa__split_segments(env, scratch->text, len, scratch->v, out, base);
    }
  }
  AOS_CALL(env, napi_get_value_string_utf8(env, str, NULL, 0, &len), false);
  if (len > AOS_FA__JOINED_MAX) return aos_fa__bad_segments(env, -1);
  size_t ptrs = sizeof(char *) * AOS_FA_MAX_SEGMENTS;
  char **v = malloc(ptrs + len + 1);
  if (v == NULL) {
    aos_fa__throw(env, aos_napi_raw_error(env, "HOST_IO", ENOMEM, -1));
    return false;
  }
  out->heap = v;
  char *text = (char *)v + ptrs;
  size_t got = 0;
  AOS_CALL(env, napi_get_value_string_utf8(env, str, text, len + 1, &got), false);
  return aos_fa__split_segments(env, text, got, v, out, base);
}

/* The segments argument `arr` (either form) into *out; on failure (an exception
 * pending) whatever was allocated is in out->heap for the caller to free. */
static bool aos_fa__get_segments(napi_env env, napi_value arr, aos_fa__segs *out, int base,
                                 aos_fa__segs_scratch *scratch) {
  out->v = NULL;
  out->n = 0;
  out->heap = NULL;
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, arr, &t), false);
  if (t == napi_string) return aos_fa__get_joined(env, arr, out, base, scratch);
  bool is_array = false;
  uint32_t n = 0;
  AOS_CALL(env, napi_is_array(env, arr, &is_array), false);
  if (is_array) AOS_CALL(env, napi_get_array_length(env, arr, &n), false);
  if (!is_array || n > AOS_FA_MAX_SEGMENTS) {
    aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
    return false;
  }
  size_t slots = n ? n : 1;
  char **v = malloc(sizeof(char *) * slots + (size_t)n * AOS_FA__SEG_SLOT);
  if (v == NULL) {
    aos_fa__throw(env, aos_napi_raw_error(env, "HOST_IO", ENOMEM, -1));
    return false;
  }
  out->heap = v;
  char *p = (char *)(v + slots);
  for (uint32_t i = 0; i < n; i++, p += AOS_FA__SEG_SLOT) {
    napi_value item;
    size_t got = 0;
    napi_status s = napi_get_element(env, arr, i, &item);
    if (s == napi_ok) s = napi_get_value_string_utf8(env, item, p, AOS_FA__SEG_SLOT, &got);
    if (s == napi_string_expected || (s == napi_ok && got > AOS_FA_MAX_SEGMENT_BYTES)) {
      return aos_fa__bad_segments(env, base + (int)i);
    }
    if (s != napi_ok) {
      aos_napi_throw_last(env);
      return false;
    }
    v[i] = p;
  }
  out->v = v;
  out->n = n;
  return true;
}

static napi_value aos_fa__make_buffer(napi_env env, uint8_t *data, size_t len);
static napi_value aos_fa__make_listing(napi_env env, aos_fa_listing *listing);

static void aos_fa__free_data(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

/* Async reads: hands `data` (malloc'ed, len bytes) to JavaScript as a plain Uint8Array,
 * without a copy where the runtime allows external array buffers, with one otherwise. Frees
 * `data` on every path (or gives it to the array buffer's finalizer). */
static napi_value aos_fa__make_buffer(napi_env env, uint8_t *data, size_t len) {
  napi_value ab = NULL, arr = NULL;
  napi_status s = napi_generic_failure;
  if (len > 0) {
    s = napi_create_external_arraybuffer(env, data, len, aos_fa__free_data, NULL, &ab);
    if (s == napi_ok) {
      data = NULL; /* owned by the array buffer now */
    } else if (s != napi_no_external_buffers_allowed) {
      free(data);
      aos_napi_throw_last(env);
      return NULL;
    }
  }
  if (data != NULL) {
    void *dest = NULL;
    s = napi_create_arraybuffer(env, len, &dest, &ab);
    if (s == napi_ok && len > 0) memcpy(dest, data, len);
    free(data);
    AOS_CALL(env, s, NULL);
  }
  AOS_CALL(env, napi_create_typedarray(env, napi_uint8_array, len, ab, 0, &arr), NULL);
  return arr;
}

/* [names, kinds (Uint8Array), omitted], in the listing's order. `names` is one
 * string, the names joined with '/' (no name holds a '/' or a NUL), which the JS
 * layer splits: one string made here instead of one string and one element store
 * per entry (about 1 000 instructions an entry). Empty listing: "". */
static napi_value aos_fa__make_listing(napi_env env, aos_fa_listing *l) {
  napi_value out, names, kinds_ab, kinds, omitted;
  void *kind_bytes = NULL;
  size_t total = 0;
  for (size_t i = 0; i < l->count; i++) total += l->entries[i].len + 1;
  char *joined = malloc(total > 0 ? total : 1);
  if (joined == NULL) {
    aos_fa_listing_free(l);
    return aos_fa__throw(env, aos_napi_raw_error(env, "HOST_IO", ENOMEM, -1));
  }
  size_t at = 0;
  for (size_t i = 0; i < l->count; i++) {
    if (i > 0) joined[at++] = '/';
    memcpy(joined + at, l->entries[i].name, l->entries[i].len);
    at += l->entries[i].len;
  }
  napi_status s = napi_create_array_with_length(env, 3, &out);
  if (s == napi_ok) s = napi_create_string_utf8(env, joined, at, &names);
  free(joined);
  if (s == napi_ok) s = napi_create_arraybuffer(env, l->count, &kind_bytes, &kinds_ab);
  if (s == napi_ok) s = napi_create_typedarray(env, napi_uint8_array, l->count, kinds_ab, 0, &kinds);
  for (size_t i = 0; s == napi_ok && i < l->count; i++) {
    ((uint8_t *)kind_bytes)[i] = (uint8_t)l->entries[i].kind;
  }
  if (s == napi_ok) s = napi_create_double(env, (double)l->omitted, &omitted);
  if (s == napi_ok) s = napi_set_element(env, out, 0, names);
  if (s == napi_ok) s = napi_set_element(env, out, 1, kinds);
  if (s == napi_ok) s = napi_set_element(env, out, 2, omitted);
  aos_fa_listing_free(l);
  AOS_CALL(env, s, NULL);
  return out;
}

/* A new handle object for a freshly opened root descriptor (closed on failure). */
static napi_value aos_fa__new_handle(napi_env env, int fd, aos_fa_resolver resolver,
                                     bool writable) {
  aos_fa__handle *h = calloc(1, sizeof *h);
  if (h == NULL) {
    aos_fa_root_close(fd);
    return aos_fa__throw(env, aos_napi_raw_error(env, "HOST_IO", ENOMEM, -1));
  }
  h->root.fd = fd;
  h->root.resolver = resolver;
  /* A reader keeps descriptors of files it read (none without memory: reads open). */
  h->root.fdcache = writable ? NULL : aos_fa_fdcache_new();
  h->writable = writable;
  napi_value obj;
  if (napi_create_object(env, &obj) != napi_ok ||
      napi_type_tag_object(env, obj, &aos_fa__handle_tag) != napi_ok ||
      napi_wrap(env, obj, h, aos_fa__handle_finalize, NULL, NULL) != napi_ok) {
    aos_fa_fdcache_free(h->root.fdcache);
    aos_fa_root_close(fd);
    free(h);
    aos_napi_throw_last(env);
    return NULL;
  }
  return obj;
}

/* ---------------------------------------------------------------- operations
 *
 * Every operation is one row of aos_fa__rows: its name on the binding object, its
 * argument count (the handle first, the async flag last), whether it needs a writer,
 * whether NOT_FOUND resolves undefined, and three functions: decode (the arguments
 * between the segments and the async flag, into the op), run (the core call, on the
 * worker thread when async) and result (the op's JavaScript value). One entry point,
 * aos_fa__dispatch, serves every row in both forms; the async form goes through the
 * one completion, aos_fa__complete. Adding an operation is a core function and a row. */

typedef struct aos_fa__op aos_fa__op;

typedef struct {
  const char *name;
  size_t argc;          /* handle, segments, ..., async */
  bool writer;          /* only a WriteAuthority's handle */
  bool absent_undefined; /* NOT_FOUND resolves undefined */
  bool (*decode)(napi_env env, napi_value *argv, aos_fa__op *op);
  void (*run)(aos_fa__op *op);
  napi_value (*result)(napi_env env, aos_fa__op *op);
} aos_fa__row;

/* A read's destination. Sync reads of up to AOS_FA__SYNC_AB_MAX bytes go straight
 * into a JavaScript ArrayBuffer of the read's size (no external buffer or finalizer
 * per read, the cost that dominated small reads). Up to AOS_FA__SYNC_ZEROED_MAX bytes
 * it is a plain ArrayBuffer, which V8 zero-fills; above, the ArrayBuffer of a Node
 * Buffer, which is not zero-filled (the memset dominated 64 KiB range reads, while
 * the Buffer object costs more than zero-filling a few KiB). Either way the result is
 * a plain Uint8Array over it. Larger sync reads, and every async read (whose worker
 * thread cannot create JavaScript values), go into a malloc'ed buffer handed over as
 * an external buffer: not zero-filled, and an allocation that fails is HOST_IO ENOMEM
 * (V8 aborts the process when it cannot allocate an ArrayBuffer's memory). */
#define AOS_FA__SYNC_AB_MAX ((size_t)64 * 1024)
#define AOS_FA__SYNC_ZEROED_MAX ((size_t)8 * 1024)

typedef struct {
  napi_env env;  /* set for a sync read: small results may be ArrayBuffers */
  napi_value ab; /* the ArrayBuffer, or NULL */
  uint8_t *heap; /* the malloc'ed buffer, or NULL */
  /* A sync readRange's destination made by the JS layer (lib/file-authority.js
   * readRangeSync), used when the read fits: the bytes land in memory allocated the
   * way Buffer.allocUnsafe allocates it, with no object made here. */
  uint8_t *given;
  size_t given_len;
  bool used_given;
} aos_fa__dest;

static uint8_t *aos_fa__dest_alloc(void *ctx, size_t size) {
  aos_fa__dest *d = ctx;
  if (d->env != NULL && d->given != NULL && size <= d->given_len) {
    d->used_given = true;
    return d->given;
  }
  if (d->env == NULL || size > AOS_FA__SYNC_AB_MAX) {
    d->heap = malloc(size > 0 ? size : 1);
    return d->heap;
  }
  void *dest = NULL;
  napi_status s;
  if (size <= AOS_FA__SYNC_ZEROED_MAX) {
    s = napi_create_arraybuffer(d->env, size, &dest, &d->ab);
  } else {
    napi_value buf;
    size_t offset = 0;
    s = napi_create_buffer(d->env, size, &dest, &buf);
    if (s == napi_ok) s = napi_get_typedarray_info(d->env, buf, NULL, NULL, NULL, &d->ab, &offset);
    if (s == napi_ok && offset != 0) s = napi_generic_failure;
  }
  if (s != napi_ok) {
    napi_value ignored;
    napi_get_and_clear_last_exception(d->env, &ignored); /* reported as ENOMEM */
    d->ab = NULL;
    return NULL;
  }
  return dest;
}

struct aos_fa__op {
  const aos_fa__row *row;
  /* inputs */
  aos_fa__handle *h;        /* the authority; open: sameRootAs or NULL */
  char *path;               /* open */
  aos_fa_resolver resolver; /* open */
  bool writable;            /* open */
  aos_fa__segs segs;
  aos_fa__segs segs2;       /* rename's target */
  uint64_t a, b;            /* maxBytes / offset, length / maxEntries, maxDepth */
  bool flag;                /* read: versioned; remove: directory; mkdir: parents; rename: replace */
  aos_fa_write_opts wo;
  uint32_t mode;
  char if_version[AOS_FA_VERSION_CHARS + 1];
  const uint8_t *bytes;
  size_t nbytes;
  /* outputs */
  int rc;
  aos_fa_status st;
  int fd;
  aos_fa__dest dest;
  size_t len;
  uint64_t size;
  aos_fa_version version;
  aos_fa_listing listing;
  aos_fa_tree tree;
  aos_fa_stat_info info;
  bool done; /* remove: removed; mkdir: created */
  /* async only */
  aos_fa__env *envst;
  napi_async_work work;
  napi_deferred deferred;
  napi_ref handle_ref; /* keeps the authority's handle object alive while queued */
  napi_ref bytes_ref;  /* keeps the bytes to write alive while queued */
  char *text;          /* write: the text converted here (owned), or NULL */
};

#define AOS_FA__SEGS(op) ((const char *const *)(op)->segs.v), (op)->segs.n

/* Frees what `op` holds (not op itself). */
static void aos_fa__op_clear(aos_fa__op *op) {
  free(op->path);
  free(op->text);
  free(op->segs.heap);
  free(op->segs2.heap);
  free(op->dest.heap);
  aos_fa_listing_free(&op->listing);
  aos_fa_tree_free(&op->tree);
  if (op->fd >= 0) aos_fa_root_close(op->fd);
}

static void aos_fa__op_free(aos_fa__op *op) {
  aos_fa__op_clear(op);
  free(op);
}

/* ---- argument decoding helpers (each throws INVALID_PATH on a wrong type) */

static bool aos_fa__arg_bool(napi_env env, napi_value v, bool *out) {
  if (napi_get_value_bool(env, v, out) == napi_ok) return true;
  aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
  return false;
}

/* A number the JS layer checked to be a safe integer >= 0 (-1 in JS: unlimited). */
static bool aos_fa__arg_u64(napi_env env, napi_value v, uint64_t *out) {
  double d = -1;
  if (napi_get_value_double(env, v, &d) != napi_ok || !(d >= -1) || d > 9007199254740991.0) {
    aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
    return false;
  }
  *out = d < 0 ? UINT64_MAX : (uint64_t)d;
  return true;
}

/* ---- rows */

static napi_value aos_fa__result_undefined(napi_env env, aos_fa__op *op) {
  (void)op;
  return aos_fa__undefined(env);
}

static napi_value aos_fa__result_done(napi_env env, aos_fa__op *op) {
  napi_value out;
  AOS_CALL(env, napi_get_boolean(env, op->done, &out), NULL);
  return out;
}

static napi_value aos_fa__version_value(napi_env env, const aos_fa_version *v) {
  char s[AOS_FA_VERSION_CHARS + 1];
  aos_fa_version_string(v, s);
  napi_value out;
  AOS_CALL(env, napi_create_string_latin1(env, s, AOS_FA_VERSION_CHARS, &out), NULL);
  return out;
}

/* The bytes a read produced, as a Uint8Array covering its whole buffer. */
static napi_value aos_fa__bytes_value(napi_env env, aos_fa__op *op) {
  if (op->dest.ab != NULL) {
    napi_value arr = NULL;
    AOS_CALL(env, napi_create_typedarray(env, napi_uint8_array, op->len, op->dest.ab, 0, &arr), NULL);
    return arr;
  }
  uint8_t *data = op->dest.heap;
  op->dest.heap = NULL;
  if (data == NULL) data = malloc(1); /* alloc was not needed (an empty range) */
  if (data == NULL) return aos_fa__throw(env, aos_napi_raw_error(env, "HOST_IO", ENOMEM, -1));
  return aos_fa__make_buffer(env, data, op->len);
}

/* open(root, sameRootAs | undefined, writable, async): decoded by aos_fa__open. */
static void aos_fa__run_open(aos_fa__op *op) {
  op->fd = -1;
  op->rc = aos_fa_root_open(op->path, &op->fd, &op->st);
  if (op->rc != 0 || op->h == NULL) return;
  /* sameRootAs: the retained root must still exist and be this very directory. */
  bool same = false;
  op->rc = aos_fa_root_check(op->h->root.fd, &op->st);
  if (op->rc == 0) op->rc = aos_fa_root_same(op->h->root.fd, op->fd, &same, &op->st);
  if (op->rc == 0 && !same) op->rc = aos_fa_fail(&op->st, AOS_FA_ROOT_CHANGED, 0, -1);
  if (op->rc != 0) {
    aos_fa_root_close(op->fd);
    op->fd = -1;
  }
}

static napi_value aos_fa__result_open(napi_env env, aos_fa__op *op) {
  int fd = op->fd;
  op->fd = -1;
  return aos_fa__new_handle(env, fd, op->resolver, op->writable);
}

static const aos_fa__row aos_fa__open_row = {"open", 4, false, false, NULL, aos_fa__run_open,
                                             aos_fa__result_open};

/* read(h, segs, maxBytes, versioned, async) -> bytes | [bytes, version] */
static bool aos_fa__decode_read(napi_env env, napi_value *argv, aos_fa__op *op) {
  return aos_fa__arg_u64(env, argv[2], &op->a) && aos_fa__arg_bool(env, argv[3], &op->flag);
}

static void aos_fa__run_read(aos_fa__op *op) {
  uint8_t *data = NULL;
  /* A version only for readVersioned: one must be settled (posix_settle.c). */
  op->rc = aos_fa_read_into(&op->h->root, AOS_FA__SEGS(op), op->a, aos_fa__dest_alloc,
                            &op->dest, &data, &op->len, op->flag ? &op->version : NULL, &op->st);
  (void)data; /* op->dest holds it */
}

static napi_value aos_fa__result_read(napi_env env, aos_fa__op *op) {
  napi_value bytes = aos_fa__bytes_value(env, op);
  if (bytes == NULL || !op->flag) return bytes;
  napi_value out[2] = {bytes, aos_fa__version_value(env, &op->version)}, arr;
  if (out[1] == NULL) return NULL;
  AOS_CALL(env, napi_create_array_with_length(env, 2, &arr), NULL);
  AOS_CALL(env, napi_set_element(env, arr, 0, out[0]), NULL);
  AOS_CALL(env, napi_set_element(env, arr, 1, out[1]), NULL);
  return arr;
}

/* readRange(h, segs, offset, length, async, dest?) -> [bytes, size, version], or
 * [count, size, version] when the bytes went into `dest` (a Uint8Array, sync only:
 * an async read allocates its own, since its worker thread must not write into a JS
 * buffer). */
static bool aos_fa__decode_range(napi_env env, napi_value *argv, aos_fa__op *op) {
  if (!aos_fa__arg_u64(env, argv[2], &op->a) || !aos_fa__arg_u64(env, argv[3], &op->b)) {
    return false;
  }
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, argv[5], &t), false);
  if (t == napi_undefined) return true;
  bool is = false;
  napi_typedarray_type type = napi_int8_array;
  void *data = NULL;
  size_t len = 0;
  if (napi_is_typedarray(env, argv[5], &is) != napi_ok || !is ||
      napi_get_typedarray_info(env, argv[5], &type, &len, &data, NULL, NULL) != napi_ok ||
      type != napi_uint8_array) {
    aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
    return false;
  }
  op->dest.given = data;
  op->dest.given_len = len;
  return true;
}

static void aos_fa__run_range(aos_fa__op *op) {
  uint8_t *data = NULL;
  op->rc = aos_fa_read_range(&op->h->root, AOS_FA__SEGS(op), op->a, op->b, aos_fa__dest_alloc,
                             &op->dest, &data, &op->len, &op->size, &op->version, &op->st);
  (void)data; /* op->dest holds it */
}

static napi_value aos_fa__result_range(napi_env env, aos_fa__op *op) {
  napi_value v[3], arr;
  if (op->dest.used_given) {
    AOS_CALL(env, napi_create_double(env, (double)op->len, &v[0]), NULL);
  } else {
    v[0] = aos_fa__bytes_value(env, op);
    if (v[0] == NULL) return NULL;
  }
  AOS_CALL(env, napi_create_double(env, (double)op->size, &v[1]), NULL);
  v[2] = aos_fa__version_value(env, &op->version);
  if (v[2] == NULL) return NULL;
  AOS_CALL(env, napi_create_array_with_length(env, 3, &arr), NULL);
  for (uint32_t i = 0; i < 3; i++) AOS_CALL(env, napi_set_element(env, arr, i, v[i]), NULL);
  return arr;
}

/* list(h, segs, async) -> [names, kinds, omitted] */
static void aos_fa__run_list(aos_fa__op *op) {
  op->rc = aos_fa_list(&op->h->root, AOS_FA__SEGS(op), &op->listing, &op->st);
  /* Sorted here, off the JavaScript thread for list(). */
  if (op->rc == 0) aos_fa_listing_sort(&op->listing);
}

static napi_value aos_fa__result_list(napi_env env, aos_fa__op *op) {
  return aos_fa__make_listing(env, &op->listing);
}

/* stat(h, segs, async) -> [kind, size, mtimeMs, mode, version] */
static void aos_fa__run_stat(aos_fa__op *op) {
  op->rc = aos_fa_stat(&op->h->root, AOS_FA__SEGS(op), &op->info, &op->st);
}

static napi_value aos_fa__result_stat(napi_env env, aos_fa__op *op) {
  napi_value v[5], arr;
  AOS_CALL(env, napi_create_uint32(env, (uint32_t)op->info.kind, &v[0]), NULL);
  AOS_CALL(env, napi_create_double(env, (double)op->info.size, &v[1]), NULL);
  AOS_CALL(env, napi_create_double(env, (double)op->info.mtime_ns / 1e6, &v[2]), NULL);
  AOS_CALL(env, napi_create_uint32(env, op->info.mode, &v[3]), NULL);
  v[4] = aos_fa__version_value(env, &op->info.version);
  if (v[4] == NULL) return NULL;
  AOS_CALL(env, napi_create_array_with_length(env, 5, &arr), NULL);
  for (uint32_t i = 0; i < 5; i++) AOS_CALL(env, napi_set_element(env, arr, i, v[i]), NULL);
  return arr;
}

/* walk(h, segs, maxEntries, maxDepth (-1: unlimited), async)
 *   -> [names, kinds (Uint8Array), depths (Uint32Array), omitted, truncated] */
static bool aos_fa__decode_walk(napi_env env, napi_value *argv, aos_fa__op *op) {
  return aos_fa__arg_u64(env, argv[2], &op->a) && aos_fa__arg_u64(env, argv[3], &op->b);
}

static void aos_fa__run_walk(aos_fa__op *op) {
  op->rc = aos_fa_tree_walk(&op->h->root, AOS_FA__SEGS(op), op->a, op->b, &op->tree, &op->st);
}

static napi_value aos_fa__result_walk(napi_env env, aos_fa__op *op) {
  aos_fa_tree *t = &op->tree;
  napi_value v[5], kinds_ab, depths_ab, arr;
  void *kinds = NULL, *depths = NULL;
  napi_status s = napi_create_array_with_length(env, t->count, &v[0]);
  if (s == napi_ok) s = napi_create_arraybuffer(env, t->count, &kinds, &kinds_ab);
  if (s == napi_ok) s = napi_create_typedarray(env, napi_uint8_array, t->count, kinds_ab, 0, &v[1]);
  if (s == napi_ok) s = napi_create_arraybuffer(env, t->count * sizeof(uint32_t), &depths, &depths_ab);
  if (s == napi_ok) s = napi_create_typedarray(env, napi_uint32_array, t->count, depths_ab, 0, &v[2]);
  for (size_t i = 0; s == napi_ok && i < t->count; i++) {
    napi_value name;
    s = napi_create_string_utf8(env, t->entries[i].name, t->entries[i].len, &name);
    if (s == napi_ok) s = napi_set_element(env, v[0], (uint32_t)i, name);
    if (s == napi_ok) ((uint8_t *)kinds)[i] = (uint8_t)t->entries[i].kind;
    if (s == napi_ok) ((uint32_t *)depths)[i] = t->depths[i];
  }
  if (s == napi_ok) s = napi_create_double(env, (double)t->omitted, &v[3]);
  if (s == napi_ok) s = napi_get_boolean(env, t->truncated, &v[4]);
  if (s == napi_ok) s = napi_create_array_with_length(env, 5, &arr);
  for (uint32_t i = 0; s == napi_ok && i < 5; i++) s = napi_set_element(env, arr, i, v[i]);
  AOS_CALL(env, s, NULL);
  return arr;
}

/* write(h, segs, bytes, flags (1 createParents, 2 utf8, 4 ifAbsent), mode,
 *       ifVersion | undefined, async) */
#define AOS_FA__W_PARENTS 1u
#define AOS_FA__W_UTF8 2u
#define AOS_FA__W_ABSENT 4u

/* A text to write, given as the JS string itself (the JS layer checked it is
 * well-formed): converted once to UTF-8 into a buffer the op owns, with no JS Buffer
 * in between (UTF-8 takes at most three bytes per UTF-16 code unit). The core checks
 * the bytes as UTF-8 again. */
static bool aos_fa__text_arg(napi_env env, napi_value v, aos_fa__op *op) {
  size_t units = 0;
  AOS_CALL(env, napi_get_value_string_utf16(env, v, NULL, 0, &units), false);
  if (units > (SIZE_MAX - 1) / 3) {
    aos_fa__throw(env, aos_napi_raw_error(env, "HOST_IO", ENOMEM, -1));
    return false;
  }
  op->text = malloc(units * 3 + 1);
  if (op->text == NULL) {
    aos_fa__throw(env, aos_napi_raw_error(env, "HOST_IO", ENOMEM, -1));
    return false;
  }
  size_t n = 0;
  AOS_CALL(env, napi_get_value_string_utf8(env, v, op->text, units * 3 + 1, &n), false);
  op->bytes = (const uint8_t *)op->text;
  op->nbytes = n;
  return true;
}

static bool aos_fa__decode_write(napi_env env, napi_value *argv, aos_fa__op *op) {
  uint32_t flags = 0, mode = 0;
  if (napi_get_value_uint32(env, argv[3], &flags) != napi_ok ||
      napi_get_value_uint32(env, argv[4], &mode) != napi_ok || mode > 0777) {
    aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
    return false;
  }
  napi_valuetype vt;
  AOS_CALL(env, napi_typeof(env, argv[2], &vt), false);
  if (vt == napi_string && (flags & AOS_FA__W_UTF8) != 0) {
    if (!aos_fa__text_arg(env, argv[2], op)) return false;
  } else {
    bool is_typed = false;
    AOS_CALL(env, napi_is_typedarray(env, argv[2], &is_typed), false);
    napi_typedarray_type tt = napi_int8_array;
    size_t n = 0, offset = 0;
    void *bytes = NULL;
    napi_value ab;
    if (is_typed) AOS_CALL(env, napi_get_typedarray_info(env, argv[2], &tt, &n, &bytes, &ab, &offset), false);
    if (!is_typed || tt != napi_uint8_array) {
      aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
      return false;
    }
    op->bytes = bytes;
    op->nbytes = n;
  }
  aos_fa_write_opts_init(&op->wo);
  op->wo.create_parents = (flags & AOS_FA__W_PARENTS) != 0;
  op->wo.utf8 = (flags & AOS_FA__W_UTF8) != 0;
  op->wo.if_absent = (flags & AOS_FA__W_ABSENT) != 0;
  op->wo.mode = mode;
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, argv[5], &t), false);
  if (t != napi_undefined) {
    size_t got = 0;
    if (napi_get_value_string_latin1(env, argv[5], op->if_version, sizeof op->if_version, &got) != napi_ok ||
        !aos_fa_version_string_valid(op->if_version, got) || op->wo.if_absent) {
      aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
      return false;
    }
    op->wo.if_version = op->if_version;
  }
  return true;
}

static void aos_fa__run_write(aos_fa__op *op) {
  op->rc = aos_fa_write(&op->h->root, AOS_FA__SEGS(op), op->bytes, op->nbytes, &op->wo, &op->st);
}

/* remove(h, segs, directory, async) -> boolean */
static bool aos_fa__decode_flag(napi_env env, napi_value *argv, aos_fa__op *op) {
  return aos_fa__arg_bool(env, argv[2], &op->flag);
}

static void aos_fa__run_remove(aos_fa__op *op) {
  op->rc = aos_fa_remove(&op->h->root, AOS_FA__SEGS(op), op->flag, &op->done, &op->st);
}

/* mkdir(h, segs, parents, mode, async) -> boolean */
static bool aos_fa__decode_mkdir(napi_env env, napi_value *argv, aos_fa__op *op) {
  if (!aos_fa__arg_bool(env, argv[2], &op->flag)) return false;
  if (napi_get_value_uint32(env, argv[3], &op->mode) != napi_ok || op->mode > 0777) {
    aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
    return false;
  }
  return true;
}

static void aos_fa__run_mkdir(aos_fa__op *op) {
  op->rc = aos_fa_make_directory(&op->h->root, AOS_FA__SEGS(op), op->flag, op->mode, &op->done,
                                 &op->st);
}

/* rename(h, from, to, replace, async) */
static bool aos_fa__decode_rename(napi_env env, napi_value *argv, aos_fa__op *op) {
  return aos_fa__get_segments(env, argv[2], &op->segs2, (int)op->segs.n, NULL) &&
         aos_fa__arg_bool(env, argv[3], &op->flag);
}

static void aos_fa__run_rename(aos_fa__op *op) {
  op->rc = aos_fa_rename(&op->h->root, AOS_FA__SEGS(op), (const char *const *)op->segs2.v,
                         op->segs2.n, op->flag, &op->st);
}

static const aos_fa__row aos_fa__rows[] = {
    /* name      argc writer absent->undefined decode run result */
    {"read", 5, false, true, aos_fa__decode_read, aos_fa__run_read, aos_fa__result_read},
    {"readRange", 5, false, true, aos_fa__decode_range, aos_fa__run_range, aos_fa__result_range},
    {"list", 3, false, true, NULL, aos_fa__run_list, aos_fa__result_list},
    {"stat", 3, false, true, NULL, aos_fa__run_stat, aos_fa__result_stat},
    {"walk", 5, false, true, aos_fa__decode_walk, aos_fa__run_walk, aos_fa__result_walk},
    {"write", 7, true, false, aos_fa__decode_write, aos_fa__run_write, aos_fa__result_undefined},
    {"remove", 4, true, false, aos_fa__decode_flag, aos_fa__run_remove, aos_fa__result_done},
    {"mkdir", 5, true, false, aos_fa__decode_mkdir, aos_fa__run_mkdir, aos_fa__result_done},
    {"rename", 5, true, false, aos_fa__decode_rename, aos_fa__run_rename, aos_fa__result_undefined},
};
#define AOS_FA__ROW_COUNT (sizeof aos_fa__rows / sizeof aos_fa__rows[0])
#define AOS_FA__MAX_ARGC 7

/* ---- running: one result builder, one sync path, one completion */

/* The operation's JS result: a value, or NULL with *err set to the error to throw or
 * reject with (or NULL with an exception pending when Node-API itself failed). */
static napi_value aos_fa__op_result(napi_env env, aos_fa__op *op, napi_value *err) {
  *err = NULL;
  if (op->rc != 0) {
    if (op->st.kind == AOS_FA_NOT_FOUND && op->row->absent_undefined) return aos_fa__undefined(env);
    *err = aos_fa__status_error(env, &op->st);
    return NULL;
  }
  return op->row->result(env, op);
}

static void aos_fa__op_init(aos_fa__op *op, const aos_fa__row *row) {
  memset(op, 0, sizeof *op);
  op->row = row;
  op->fd = -1;
  aos_fa_status_ok(&op->st);
}

static aos_fa__op *aos_fa__op_new(napi_env env, const aos_fa__row *row) {
  aos_fa__op *op = malloc(sizeof *op);
  if (op == NULL) {
    aos_fa__throw(env, aos_napi_raw_error(env, "HOST_IO", ENOMEM, -1));
    return NULL;
  }
  aos_fa__op_init(op, row);
  return op;
}

/* Runs `op` now (sync entry points) and returns its result or throws. Frees what op
 * holds (the caller frees op itself, if allocated). */
static napi_value aos_fa__run_sync(napi_env env, aos_fa__op *op) {
  op->dest.env = env;
  op->row->run(op);
  napi_value err = NULL;
  napi_value result = aos_fa__op_result(env, op, &err);
  aos_fa__op_clear(op);
  if (result == NULL && err != NULL) return aos_fa__throw(env, err);
  return result;
}

static void aos_fa__execute(napi_env env, void *data) {
  (void)env;
  aos_fa__op *op = data;
  op->row->run(op);
}

/* The one completion for every async operation. */
static void aos_fa__complete(napi_env env, napi_status status, void *data) {
  aos_fa__op *op = data;
  aos_fa__env *envst = op->envst;
  if (op->h != NULL) {
    op->h->in_flight--;
    aos_fa__handle_settle(op->h);
    op->h = NULL;
  }
  if (!envst->tearing_down) {
    napi_value err = NULL;
    napi_value result = NULL;
    if (status == napi_ok) {
      result = aos_fa__op_result(env, op, &err);
    } else {
      err = aos_napi_raw_error(env, "HOST_IO", ECANCELED, -1);
    }
    if (result == NULL && err == NULL) {
      /* Node-API itself failed: reject with the pending exception. */
      napi_get_and_clear_last_exception(env, &err);
      if (err == NULL) err = aos_napi_raw_error(env, "HOST_IO", EIO, -1);
    }
    if (result != NULL) {
      napi_resolve_deferred(env, op->deferred, result);
    } else if (err != NULL) {
      napi_reject_deferred(env, op->deferred, err);
    }
    if (op->handle_ref != NULL) napi_delete_reference(env, op->handle_ref);
    if (op->bytes_ref != NULL) napi_delete_reference(env, op->bytes_ref);
    napi_delete_async_work(env, op->work);
  }
  aos_fa__op_free(op);
  aos_fa__env_unref(envst);
}

/* Queues `op` (which holds `handle_obj`'s handle, if any) and returns its promise.
 * On failure, frees op and returns NULL with an exception pending. */
static napi_value aos_fa__queue(napi_env env, aos_fa__env *envst, aos_fa__op *op,
                                napi_value handle_obj, napi_value bytes_obj) {
  napi_value promise, name;
  napi_status s = napi_create_promise(env, &op->deferred, &promise);
  if (s == napi_ok) s = napi_create_string_utf8(env, "agent-os:file-authority", NAPI_AUTO_LENGTH, &name);
  if (s == napi_ok && handle_obj != NULL) s = napi_create_reference(env, handle_obj, 1, &op->handle_ref);
  if (s == napi_ok && bytes_obj != NULL) s = napi_create_reference(env, bytes_obj, 1, &op->bytes_ref);
  if (s == napi_ok) {
    s = napi_create_async_work(env, NULL, name, aos_fa__execute, aos_fa__complete, op,
                               &op->work);
  }
  if (s == napi_ok) s = napi_queue_async_work(env, op->work);
  if (s != napi_ok) {
    aos_napi_throw_last(env);
    if (op->work != NULL) napi_delete_async_work(env, op->work);
    if (op->handle_ref != NULL) napi_delete_reference(env, op->handle_ref);
    if (op->bytes_ref != NULL) napi_delete_reference(env, op->bytes_ref);
    /* The deferred, if created, is dropped with its promise, never settled. */
    aos_fa__op_free(op);
    return NULL;
  }
  if (op->h != NULL) op->h->in_flight++;
  op->envst = envst;
  envst->refs++;
  return promise;
}

/* ------------------------------------------------------------- entry points */

/* What a row's binding function gets as its callback data. */
typedef struct {
  aos_fa__env *envst;
  const aos_fa__row *row;
} aos_fa__bound;

/* The one entry point of every row: fn(handle, segments, ...row arguments, async). */
static napi_value aos_fa__dispatch(napi_env env, napi_callback_info info) {
  size_t argc = AOS_FA__MAX_ARGC;
  napi_value argv[AOS_FA__MAX_ARGC];
  void *cbdata = NULL;
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, &cbdata), NULL);
  const aos_fa__bound *bound = cbdata;
  const aos_fa__row *row = bound->row;
  if (argc < row->argc) return aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
  aos_fa__handle *h = aos_fa__open_handle_arg(env, argv[0]);
  if (h == NULL) return NULL;
  if (row->writer && !h->writable) return aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
  bool async = false;
  if (!aos_fa__arg_bool(env, argv[row->argc - 1], &async)) return NULL;
  if (!async) {
    /* A sync call's operation and segments live on this stack frame. */
    aos_fa__op op;
    aos_fa__segs_scratch scratch;
    aos_fa__op_init(&op, row);
    if (!aos_fa__get_segments(env, argv[1], &op.segs, 0, &scratch) ||
        (row->decode != NULL && !row->decode(env, argv, &op))) {
      aos_fa__op_clear(&op);
      return NULL;
    }
    op.h = h;
    return aos_fa__run_sync(env, &op);
  }
  aos_fa__op *op = aos_fa__op_new(env, row);
  if (op == NULL) return NULL;
  if (!aos_fa__get_segments(env, argv[1], &op->segs, 0, NULL) ||
      (row->decode != NULL && !row->decode(env, argv, op))) {
    aos_fa__op_free(op);
    return NULL;
  }
  op->h = h;
  return aos_fa__queue(env, bound->envst, op, argv[0],
                      op->bytes != NULL && op->text == NULL ? argv[2] : NULL);
}

#define AOS_FA__ARGS(n)                                                              \
  size_t argc = (n);                                                                 \
  napi_value argv[(n) > 0 ? (n) : 1];                                                \
  void *cbdata = NULL;                                                               \
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, &cbdata), NULL);      \
  aos_fa__env *envst = cbdata;                                                       \
  (void)envst;                                                                       \
  if (argc < (n)) return aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"))

/* open(root: string, sameRootAs: handle | undefined, writable: boolean, async: boolean) */
static napi_value aos_fa__open(napi_env env, napi_callback_info info) {
  AOS_FA__ARGS(4);
  bool writable = false, async = false;
  AOS_CALL(env, napi_get_value_bool(env, argv[2], &writable), NULL);
  AOS_CALL(env, napi_get_value_bool(env, argv[3], &async), NULL);
  napi_valuetype t;
  AOS_CALL(env, napi_typeof(env, argv[1], &t), NULL);
  aos_fa__handle *same = NULL;
  if (t != napi_undefined) {
    same = aos_fa__open_handle_arg(env, argv[1]);
    if (same == NULL) return NULL;
  }
  size_t len = 0;
  char *path = aos_napi_get_utf8(env, argv[0], &len);
  if (path == NULL) return NULL;
#ifdef _WIN32
  bool absolute = len >= 3 || (len >= 2 && (path[0] == '\\' || path[0] == '/'));
#else
  bool absolute = len >= 1 && path[0] == '/';
#endif
  /* The JS layer checks the form of the path; this only refuses what no OS call may get. */
  if (len == 0 || strlen(path) != len || !absolute) {
    free(path);
    return aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
  }
  aos_fa__op *op = aos_fa__op_new(env, &aos_fa__open_row);
  if (op == NULL) {
    free(path);
    return NULL;
  }
  op->path = path;
  op->h = same;
  op->writable = writable;
  op->resolver = envst->openat2 ? envst->resolver : AOS_FA_RESOLVE_PORTABLE;
  if (!async) {
    napi_value result = aos_fa__run_sync(env, op);
    free(op);
    return result;
  }
  return aos_fa__queue(env, envst, op, same != NULL ? argv[1] : NULL, NULL);
}

/* close(handle): idempotent; the descriptor goes now, or after the last in-flight
 * operation. Not a handle: INVALID_PATH. */
static napi_value aos_fa__close(napi_env env, napi_callback_info info) {
  AOS_FA__ARGS(1);
  aos_fa__handle *h = aos_fa__handle_of(env, argv[0]);
  if (h == NULL) return aos_fa__throw(env, aos_fa__kind_error(env, "INVALID_PATH"));
  h->closed = true;
  aos_fa__handle_settle(h);
  return aos_fa__undefined(env);
}

/* sameRoot(a, b): whether both open handles retain the same directory object. */
static napi_value aos_fa__same_root(napi_env env, napi_callback_info info) {
  AOS_FA__ARGS(2);
  aos_fa__handle *a = aos_fa__open_handle_arg(env, argv[0]);
  if (a == NULL) return NULL;
  aos_fa__handle *b = aos_fa__open_handle_arg(env, argv[1]);
  if (b == NULL) return NULL;
  bool same = false;
  aos_fa_status st;
  if (aos_fa_root_same(a->root.fd, b->root.fd, &same, &st) != 0) {
    return aos_fa__throw(env, aos_fa__status_error(env, &st));
  }
  napi_value out;
  AOS_CALL(env, napi_get_boolean(env, same, &out), NULL);
  return out;
}

/* Test hook (not public API): resolver(mode?) sets the resolver of authorities
 * opened from now on in this environment ('openat2' or 'portable') and returns the
 * one they will use ('portable' when the kernel lacks openat2). */
static napi_value aos_fa__resolver(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *cbdata = NULL;
  AOS_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, &cbdata), NULL);
  aos_fa__env *envst = cbdata;
  if (argc >= 1) {
    napi_valuetype t;
    AOS_CALL(env, napi_typeof(env, argv[0], &t), NULL);
    if (t == napi_string) {
      char mode[16];
      size_t n = 0;
      AOS_CALL(env, napi_get_value_string_utf8(env, argv[0], mode, sizeof mode, &n), NULL);
      if (strcmp(mode, "portable") == 0) {
        envst->resolver = AOS_FA_RESOLVE_PORTABLE;
      } else if (strcmp(mode, "openat2") == 0) {
        envst->resolver = AOS_FA_RESOLVE_OPENAT2;
      } else {
        return aos_napi_throw_type(env, "ERR_INVALID_ARG_VALUE", "unknown resolver");
      }
    }
  }
  const char *now =
      envst->openat2 && envst->resolver == AOS_FA_RESOLVE_OPENAT2 ? "openat2" : "portable";
  napi_value out;
  AOS_CALL(env, napi_create_string_utf8(env, now, NAPI_AUTO_LENGTH, &out), NULL);
  return out;
}

napi_value aos_fa_napi_init(napi_env env) {
  aos_fa__env *envst = calloc(1, sizeof *envst);
  if (envst == NULL) {
    napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
    return NULL;
  }
  envst->refs = 1;
  envst->openat2 = aos_fa_openat2_available();
  envst->resolver = AOS_FA_RESOLVE_OPENAT2;
  if (napi_add_env_cleanup_hook(env, aos_fa__env_cleanup, envst) != napi_ok) {
    free(envst);
    aos_napi_throw_last(env);
    return NULL;
  }
  napi_value exports;
  AOS_CALL(env, napi_create_object(env, &exports), NULL);
  static const struct {
    const char *name;
    napi_callback cb;
  } fns[] = {
      {"open", aos_fa__open}, {"close", aos_fa__close}, {"sameRoot", aos_fa__same_root},
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    if (!aos_napi_set_function(env, exports, fns[i].name, fns[i].cb, envst)) return NULL;
  }
  aos_fa__bound *bound = calloc(AOS_FA__ROW_COUNT, sizeof *bound);
  if (bound == NULL) {
    napi_throw_error(env, "ERR_AGENT_OS_NOMEM", "out of memory");
    return NULL;
  }
  envst->bound = bound;
  for (size_t i = 0; i < AOS_FA__ROW_COUNT; i++) {
    bound[i].envst = envst;
    bound[i].row = &aos_fa__rows[i];
    if (!aos_napi_set_function(env, exports, aos_fa__rows[i].name, aos_fa__dispatch, &bound[i])) {
      return NULL;
    }
  }
  /* The resolver switch: non-enumerable, for the project's tests only. */
  napi_property_descriptor hook = {"resolver", NULL, aos_fa__resolver, NULL, NULL, NULL,
                                   napi_default, envst};
  AOS_CALL(env, napi_define_properties(env, exports, 1, &hook), NULL);
  return exports;
}
