'use strict'
// @scope/agent-os/file-authority: rooted file access that a path swap cannot redirect.
//
// A thin layer over the native part (src/file_authority/): it checks arguments with the
// rules shared with file-authority/testing, keeps each authority's native handle in a
// private field, and turns the native side's raw failures (kind, errno name, segment
// index) into FileAuthorityError. When the binding cannot load, every call fails with
// UNSUPPORTED_BACKEND; there is no pathname fallback.
//
// Every operation checks, in this order: the receiver, the arguments, the closed
// state; then it runs. The async forms report every failure as a rejection.

const { inspect } = require('node:util')
const binding = require('./binding.js')
const debug = require('./internal/debug.js')
const args = require('./internal/args.js')
const {
  FileAuthorityError,
  fail,
  invalidOption,
  raise,
  unsupported,
  toBuffer,
  joinSegments,
  checkMaxBytes,
  encodeText,
  copyBytes,
  isBytes,
  checkWriteOptions,
  checkAppendOptions,
  checkAppendSize,
  checkRangeOptions,
  OPERATIONS
} = require('./internal/file-authority-common.js')

const { toSegments } = require('./internal/to-segments.js')

const native = binding.part('fileAuthority')
// The project's tests run the whole suite with the portable resolver too; not public.
if (native !== undefined && process.env.AGENT_OS_FA_RESOLVER === 'portable') {
  native.resolver('portable')
}

const KINDS = Object.freeze(['file', 'directory', 'symlink', 'other'])
const rejectNow = args.rejectNow
const invalidPath = (operation, argument, expected) => raise('INVALID_PATH', operation, argument, expected)
const kConstruct = Symbol('FileAuthority')

/** A native raw failure (or anything unexpected) as the typed error of `operation`. */
function toError (err, operation) {
  if (err instanceof FileAuthorityError) return err
  if (err !== null && typeof err === 'object' && typeof err.aosKind === 'string') {
    try {
      return fail(err.aosKind, operation, err.segmentIndex, err.hostCode)
    } catch {
      return fail('HOST_IO', operation)
    }
  }
  // A Node-API failure or an engine error (out of memory): never its text.
  return fail('HOST_IO', operation)
}

function requireNative (operation) {
  if (native === undefined) throw unsupported(operation, binding.loadFailure())
  return native
}

let stateOf // (authority) => state | undefined, defined inside the class body

class Authority {
  // { handle, writable, closed, inFlight: Set<Promise> }; unreachable from outside
  // this module.
  #state

  constructor (token, handle, writable) {
    if (token !== kConstruct) throw new TypeError('Illegal constructor')
    this.#state = { handle, writable, closed: false, inFlight: new Set() }
  }

  static {
    stateOf = (a) => (a !== null && typeof a === 'object' && #state in a ? a.#state : undefined)
  }

  get closed () {
    const state = stateOf(this)
    if (state === undefined) throw invalidOption('closed', 'this', 'must be a file authority')
    return state.closed
  }

  sharesRootWith (other) {
    const operation = 'sharesRootWith'
    const mine = receiver(this, operation)
    const theirs = stateOf(other)
    if (theirs === undefined) throw invalidOption(operation, 'other', 'must be a file authority of this module')
    live(mine, operation)
    live(theirs, operation)
    try {
      return requireNative(operation).sameRoot(mine.handle, theirs.handle)
    } catch (err) {
      throw toError(err, operation)
    }
  }

  closeSync () {
    closeNow(receiver(this, 'close'))
  }

  close () {
    return closeAsync(this)
  }

  [Symbol.dispose] () {
    closeNow(receiver(this, 'close'))
  }

  [Symbol.asyncDispose] () {
    return closeAsync(this)
  }

  [inspect.custom] (depth, options) {
    const state = stateOf(this)
    const name = this.constructor.name
    if (state === undefined) return name
    const closed = String(state.closed)
    const shown = options && typeof options.stylize === 'function' ? options.stylize(closed, 'boolean') : closed
    return `${name} { closed: ${shown} }`
  }
}

/** The state of `self`, which must be an authority (of the given kind, if any). */
function receiver (self, operation, writable) {
  const state = stateOf(self)
  if (state === undefined) throw invalidOption(operation, 'this', 'must be a file authority')
  if (writable !== undefined && state.writable !== writable) {
    throw invalidOption(operation, 'this', writable ? 'must be a WriteAuthority' : 'must be a ReadAuthority')
  }
  return state
}

function live (state, operation) {
  if (state.closed) throw fail('AUTHORITY_CLOSED', operation)
  return state.handle
}

/** close(): resolves once the operations that were in flight have finished (the
 * descriptor is released by the last of them). */
function closeAsync (self) {
  let state
  try {
    state = receiver(self, 'close')
    closeNow(state)
  } catch (err) {
    return Promise.reject(err)
  }
  return Promise.allSettled([...state.inFlight]).then(() => undefined)
}

function closeNow (state) {
  if (state.closed) return
  state.closed = true
  try {
    requireNative('close').close(state.handle)
  } catch (err) {
    throw toError(err, 'close')
  }
}

/**
 * Starts an async operation and tracks it until it settles (close waits for it).
 * Returns the promise the caller gets: one reaction on the binding's promise converts
 * the result (`convert`) or the failure. That promise has no other reaction than the
 * caller's, so an error made in the reaction has a stack that names the awaiting
 * caller's frame (V8's async stack traces; fs/promises does the same), at no cost on
 * success. The in-flight set tracks the binding's promise itself.
 */
function track (state, operation, started, convert) {
  state.inFlight.add(started)
  const done = () => { state.inFlight.delete(started) }
  started.then(done, done)
  return started.then(convert, (err) => { throw toError(err, operation) })
}

/** Any failure of `body` (argument checks included) as a rejection. */
function promised (operation, body) {
  try {
    return body()
  } catch (err) {
    return args.rejectNow(toError(err, operation))
  }
}

function runAsync (state, operation, fn, convert) {
  const handle = live(state, operation)
  return track(state, operation, fn(requireNative(operation), handle), convert)
}

const VERSION_CHARS = 96

/** Entry i's stat from the binding's stats arrays: [sizes, mtimeMs, modes, versions
 * (one string, 96 characters each)] at raw[at...]. */
function statAt (raw, at, kind, i) {
  return {
    kind,
    size: raw[at][i],
    mtimeMs: raw[at + 1][i],
    mode: raw[at + 2][i],
    version: raw[at + 3].slice(i * VERSION_CHARS, (i + 1) * VERSION_CHARS)
  }
}

/** The binding's [names joined with '/', kinds, omitted] (and with stats [..., sizes,
 * mtimeMs, modes, versions]), names already in code-unit order (sorted in C, as
 * JavaScript compares strings; not UTF-8 byte order), as plain `{ name, kind }`
 * objects (and `stat`), like the in-memory face's. No name holds a '/'. */
function toListing (raw) {
  const [joined, kinds, omitted] = raw
  const count = kinds.length
  const names = count === 0 ? [] : joined.split('/')
  const entries = new Array(count)
  if (raw.length > 3) {
    for (let i = 0; i < count; i++) {
      const kind = KINDS[kinds[i]]
      entries[i] = { name: names[i], kind, stat: statAt(raw, 3, kind, i) }
    }
  } else {
    for (let i = 0; i < count; i++) entries[i] = { name: names[i], kind: KINDS[kinds[i]] }
  }
  Object.defineProperty(entries, 'omitted', { value: omitted, enumerable: false, writable: false, configurable: false })
  return entries
}

/** The binding's [names joined with '/', kinds, depths, omitted, truncated] (walk
 * order) as entries whose `path` is the names of the enclosing directories, then the
 * entry's own. */
function toWalkListing (raw) {
  const [joined, kinds, depths, omitted, truncated] = raw
  const count = kinds.length
  const names = count === 0 ? [] : joined.split('/')
  const entries = new Array(count)
  const prefix = []
  const stats = raw.length > 5
  for (let i = 0; i < count; i++) {
    const depth = depths[i]
    prefix.length = depth
    const path = prefix.slice()
    path.push(names[i])
    const kind = KINDS[kinds[i]]
    entries[i] = stats ? { path, kind, stat: statAt(raw, 5, kind, i) } : { path, kind }
    prefix.push(names[i])
  }
  Object.defineProperty(entries, 'omitted', { value: omitted, enumerable: false, writable: false, configurable: false })
  Object.defineProperty(entries, 'truncated', { value: truncated, enumerable: false, writable: false, configurable: false })
  return entries
}

function toStat (raw) {
  return { kind: KINDS[raw[0]], size: raw[1], mtimeMs: raw[2], mode: raw[3], version: raw[4] }
}

const same = (raw) => raw
const toRange = (raw) => (raw === undefined ? undefined : { bytes: toBuffer(raw[0]), size: raw[1], version: raw[2] })
const optional = (convert) => (raw) => (raw === undefined ? undefined : convert(raw))
const nothing = () => undefined
const W_PARENTS = 1
const W_UTF8 = 2
const W_ABSENT = 4
const W_VOLATILE = 8 // durable: false
function writeFlags (o, utf8) {
  return (o.createParents ? W_PARENTS : 0) | (utf8 ? W_UTF8 : 0) | (o.ifAbsent ? W_ABSENT : 0) | (o.durable ? 0 : W_VOLATILE)
}
/** walk's exclude for the binding: undefined, or the names joined with '/' (none holds
 * one). */
const excludeArg = (exclude) => (exclude.length === 0 ? undefined : exclude.join('/'))

// How this face runs each row of OPERATIONS: the binding call (one per operation; the
// last argument says async) and the conversion of its raw result.
const NATIVE = {
  readBytes: { call: (n, h, [segs, max], async) => n.read(h, segs, max, false, async), result: toBuffer },
  readVersioned: {
    call: (n, h, [segs, max], async) => n.read(h, segs, max, true, async),
    result: optional((raw) => ({ bytes: toBuffer(raw[0]), version: raw[1] }))
  },
  readRange: {
    call: (n, h, [segs, r], async) => n.readRange(h, segs, r.offset, r.length, async),
    result: toRange
  },
  readText: { call: (n, h, [segs, max], async) => n.readText(h, segs, max, async), result: same },
  list: { call: (n, h, [segs, withStats], async) => n.list(h, segs, withStats, async), result: optional(toListing) },
  walk: {
    call: (n, h, [segs, w], async) => n.walk(h, segs, w.maxEntries, w.maxDepth, excludeArg(w.exclude), w.withStats, async),
    result: optional(toWalkListing)
  },
  stat: { call: (n, h, [segs], async) => n.stat(h, segs, async), result: optional(toStat) },
  writeText: {
    call: (n, h, [segs, bytes, o], async) => n.write(h, segs, bytes, writeFlags(o, true), o.mode, o.ifVersion, async),
    result: nothing
  },
  writeBytes: {
    call: (n, h, [segs, bytes, o], async) => n.write(h, segs, bytes, writeFlags(o, false), o.mode, o.ifVersion, async),
    result: nothing
  },
  appendText: {
    call: (n, h, [segs, bytes, o], async) => n.append(h, segs, bytes, writeFlags(o, true), o.mode, async),
    result: nothing
  },
  appendBytes: {
    call: (n, h, [segs, bytes, o], async) => n.append(h, segs, bytes, writeFlags(o, false), o.mode, async),
    result: nothing
  },
  remove: { call: (n, h, [segs, directory], async) => n.remove(h, segs, directory, async), result: same },
  makeDirectory: { call: (n, h, [segs, parents, mode], async) => n.mkdir(h, segs, parents, mode, async), result: same },
  rename: { call: (n, h, [from, to, replace], async) => n.rename(h, from, to, replace, async), result: nothing }
}

class ReadAuthority extends Authority {}
class WriteAuthority extends Authority {}

/** Defines `name` (async) and `nameSync` on the authority classes of the row's side:
 * receiver, arguments, closed state, then one binding call. */
function defineOperation (row) {
  const { name, side, check } = row
  const { call, result } = NATIVE[name]
  const writable = side === 'read' ? false : side === 'write' ? true : undefined
  const methods = {
    [name] (a, b, c) {
      try {
        const state = receiver(this, name, writable)
        const args = check(name, a, b, c)
        const handle = live(state, name)
        return track(state, name, call(requireNative(name), handle, args, true), result)
      } catch (err) {
        return rejectNow(toError(err, name))
      }
    },
    [`${name}Sync`] (a, b, c) {
      const state = receiver(this, name, writable)
      const args = check(name, a, b, c)
      const handle = live(state, name)
      let raw
      try {
        raw = call(requireNative(name), handle, args, false)
      } catch (err) {
        throw toError(err, name)
      }
      return result(raw)
    }
  }
  const classes = side === 'read' ? [ReadAuthority] : side === 'write' ? [WriteAuthority] : [ReadAuthority, WriteAuthority]
  for (const Class of classes) {
    for (const key of Object.keys(methods)) {
      Object.defineProperty(Class.prototype, key, { value: methods[key], writable: true, enumerable: false, configurable: true })
    }
  }
}

for (const row of OPERATIONS) defineOperation(row)

// The hot operations once more, written out: the same checks in the same order
// (receiver, arguments, closed state) and the same binding call, with no per-call
// closure, argument array or frozen copy of the segments; the segments go to the
// binding as one string (joinSegments), converted once in C. The rows above stay the
// definition of every other operation.
function readState (self, operation) {
  const state = stateOf(self)
  if (state === undefined || state.writable !== false) return receiver(self, operation, false)
  return state
}

function writeState (self, operation) {
  const state = stateOf(self)
  if (state === undefined || state.writable !== true) return receiver(self, operation, true)
  return state
}

function nativeFor (state, operation) {
  if (state.closed) throw fail('AUTHORITY_CLOSED', operation)
  if (native === undefined) throw unsupported(operation, binding.loadFailure())
  return native
}

function readBytesSync (segments, options) {
  const state = readState(this, 'readBytes')
  const joined = joinSegments(segments, 'readBytes')
  const maxBytes = checkMaxBytes(options, 'readBytes')
  const n = nativeFor(state, 'readBytes')
  try {
    return toBuffer(n.read(state.handle, joined, maxBytes, false, false))
  } catch (err) {
    throw toError(err, 'readBytes')
  }
}

function readBytes (segments, options) {
  try {
    const state = readState(this, 'readBytes')
    const joined = joinSegments(segments, 'readBytes')
    const maxBytes = checkMaxBytes(options, 'readBytes')
    const n = nativeFor(state, 'readBytes')
    return track(state, 'readBytes', n.read(state.handle, joined, maxBytes, false, true), toBuffer)
  } catch (err) {
    return rejectNow(toError(err, 'readBytes'))
  }
}

// A sync readRange of at most this many bytes reads into memory allocated here, the
// way Buffer.allocUnsafe allocates it (an ArrayBuffer that is not zero-filled, made
// without a call into C++); the result is a plain Uint8Array over it, or a copy of the
// bytes read when the file ended first (no result keeps memory it does not show).
const RANGE_DEST_MAX = 64 * 1024
const RANGE_DEST_MIN = 8 * 1024 + 1 // smaller ones: a zero-filled ArrayBuffer made in C

function readRangeSync (segments, options) {
  const state = readState(this, 'readRange')
  const joined = joinSegments(segments, 'readRange')
  const { offset, length } = checkRangeOptions(options, 'readRange')
  const n = nativeFor(state, 'readRange')
  const dest = length >= RANGE_DEST_MIN && length <= RANGE_DEST_MAX ? Buffer.allocUnsafeSlow(length) : undefined
  let raw
  try {
    raw = n.readRange(state.handle, joined, offset, length, false, dest)
  } catch (err) {
    throw toError(err, 'readRange')
  }
  if (raw === undefined || typeof raw[0] !== 'number') return toRange(raw)
  const count = raw[0]
  let bytes = dest
  if (count !== length) {
    bytes = Buffer.allocUnsafeSlow(count)
    dest.copy(bytes, 0, 0, count)
  }
  return { bytes, size: raw[1], version: raw[2] }
}

function readRange (segments, options) {
  try {
    const state = readState(this, 'readRange')
    const joined = joinSegments(segments, 'readRange')
    const { offset, length } = checkRangeOptions(options, 'readRange')
    const n = nativeFor(state, 'readRange')
    return track(state, 'readRange', n.readRange(state.handle, joined, offset, length, true), toRange)
  } catch (err) {
    return rejectNow(toError(err, 'readRange'))
  }
}

function readTextSync (segments, options) {
  const state = readState(this, 'readText')
  const joined = joinSegments(segments, 'readText')
  const maxBytes = checkMaxBytes(options, 'readText')
  const n = nativeFor(state, 'readText')
  try {
    return n.readText(state.handle, joined, maxBytes, false)
  } catch (err) {
    throw toError(err, 'readText')
  }
}

function readText (segments, options) {
  try {
    const state = readState(this, 'readText')
    const joined = joinSegments(segments, 'readText')
    const maxBytes = checkMaxBytes(options, 'readText')
    const n = nativeFor(state, 'readText')
    return track(state, 'readText', n.readText(state.handle, joined, maxBytes, true), same)
  } catch (err) {
    return rejectNow(toError(err, 'readText'))
  }
}

/** writeText's content for the binding: a well-formed string as it is (the binding
 * converts it to UTF-8 once, with no Buffer in between), bytes checked and copied. */
function textArg (text, operation) {
  if (typeof text === 'string' && text.isWellFormed()) return text
  return encodeText(text, operation)
}

function writeSync (self, operation, segments, bytes, options, utf8) {
  const state = writeState(self, operation)
  const joined = joinSegments(segments, operation)
  const data = utf8 ? textArg(bytes, operation) : copyBytes(bytes, operation)
  const o = checkWriteOptions(options, operation)
  const n = nativeFor(state, operation)
  try {
    n.write(state.handle, joined, data, writeFlags(o, utf8), o.mode, o.ifVersion, false)
  } catch (err) {
    throw toError(err, operation)
  }
}

function writeAsync (self, operation, segments, bytes, options, utf8) {
  try {
    const state = writeState(self, operation)
    const joined = joinSegments(segments, operation)
    const data = utf8 ? textArg(bytes, operation) : copyBytes(bytes, operation)
    const o = checkWriteOptions(options, operation)
    const n = nativeFor(state, operation)
    return track(state, operation, n.write(state.handle, joined, data, writeFlags(o, utf8), o.mode, o.ifVersion, true), nothing)
  } catch (err) {
    return rejectNow(toError(err, operation))
  }
}

/** An append's content for the binding: appendText's as textArg (a string as it is;
 * bytes checked as UTF-8 and copied), appendBytes' copied; bytes at most APPEND_MAX
 * (checkAppendSize: a string's UTF-8 never passes it). */
function appendArg (data, operation, utf8) {
  if (!utf8) {
    if (isBytes(data)) checkAppendSize(data, operation, 'bytes')
    return copyBytes(data, operation)
  }
  const arg = textArg(data, operation)
  return typeof arg === 'string' ? arg : checkAppendSize(arg, operation, 'text')
}

function appendSync (self, operation, segments, data, options, utf8) {
  const state = writeState(self, operation)
  const joined = joinSegments(segments, operation)
  const arg = appendArg(data, operation, utf8)
  const o = checkAppendOptions(options, operation)
  const n = nativeFor(state, operation)
  try {
    n.append(state.handle, joined, arg, writeFlags(o, utf8), o.mode, false)
  } catch (err) {
    throw toError(err, operation)
  }
}

function appendAsync (self, operation, segments, data, options, utf8) {
  try {
    const state = writeState(self, operation)
    const joined = joinSegments(segments, operation)
    const arg = appendArg(data, operation, utf8)
    const o = checkAppendOptions(options, operation)
    const n = nativeFor(state, operation)
    return track(state, operation, n.append(state.handle, joined, arg, writeFlags(o, utf8), o.mode, true), nothing)
  } catch (err) {
    return rejectNow(toError(err, operation))
  }
}

const HOT = {
  readBytesSync,
  readBytes,
  readTextSync,
  readText,
  readRangeSync,
  readRange,
  writeTextSync (segments, text, options) { writeSync(this, 'writeText', segments, text, options, true) },
  writeText (segments, text, options) { return writeAsync(this, 'writeText', segments, text, options, true) },
  writeBytesSync (segments, bytes, options) { writeSync(this, 'writeBytes', segments, bytes, options, false) },
  writeBytes (segments, bytes, options) { return writeAsync(this, 'writeBytes', segments, bytes, options, false) },
  appendTextSync (segments, text, options) { appendSync(this, 'appendText', segments, text, options, true) },
  appendText (segments, text, options) { return appendAsync(this, 'appendText', segments, text, options, true) },
  appendBytesSync (segments, bytes, options) { appendSync(this, 'appendBytes', segments, bytes, options, false) },
  appendBytes (segments, bytes, options) { return appendAsync(this, 'appendBytes', segments, bytes, options, false) }
}
for (const key of Object.keys(HOT)) {
  const Class = key.startsWith('read') ? ReadAuthority : WriteAuthority
  Object.defineProperty(Class.prototype, key, { value: HOT[key], writable: true, enumerable: false, configurable: true })
}

// NODE_DEBUG=agent-os: one line per operation (lib/internal/debug.js); with it off,
// nothing is wrapped.
if (debug.enabled) {
  for (const { name, side } of OPERATIONS) {
    const classes = side === 'read' ? [ReadAuthority] : side === 'write' ? [WriteAuthority] : [ReadAuthority, WriteAuthority]
    for (const Class of classes) debug.traceMethods(Class.prototype, { [name]: 'async', [`${name}Sync`]: 'sync' })
  }
}

const ROOT_EXPECTED = 'must be an absolute path to a directory (a well-formed string without NUL)'

/** `root`: an absolute path, a well-formed string without NUL. */
function checkRoot (root, operation) {
  if (typeof root !== 'string' || root.length === 0 || root.includes('\0') || !root.isWellFormed()) {
    throw invalidPath(operation, 'root', ROOT_EXPECTED)
  }
  // Absolute: '/...' on POSIX; a drive ('C:\\...') or UNC ('\\\\server\\share') path on Windows.
  const absolute = process.platform === 'win32' ? /^(?:[A-Za-z]:[\\/]|[\\/]{2}[^\\/])/.test(root) : root.startsWith('/')
  if (!absolute) throw invalidPath(operation, 'root', ROOT_EXPECTED)
  return root
}

const OPEN_OPTIONS = {
  openReadAuthority: args.defineOptions('openReadAuthority', { sameRootAs: args.custom('must be a file authority of this module', (v) => stateOf(v) !== undefined) }),
  openWriteAuthority: args.defineOptions('openWriteAuthority', { sameRootAs: args.custom('must be a file authority of this module', (v) => stateOf(v) !== undefined) })
}

/** `{ sameRootAs?: FileAuthority }`: the state of that authority, or undefined. */
function checkOpenOptions (options, operation) {
  const same = OPEN_OPTIONS[operation].read(options, raise).sameRootAs
  return same === undefined ? undefined : stateOf(same)
}

function openSync (operation, Class, root, options) {
  const path = checkRoot(root, operation)
  const same = checkOpenOptions(options, operation)
  const n = requireNative(operation)
  if (same !== undefined) live(same, operation)
  let handle
  try {
    handle = n.open(path, same === undefined ? undefined : same.handle, Class === WriteAuthority, false)
  } catch (err) {
    throw toError(err, operation)
  }
  return new Class(kConstruct, handle, Class === WriteAuthority)
}

function openAsync (operation, Class, root, options) {
  return promised(operation, () => {
    const path = checkRoot(root, operation)
    const same = checkOpenOptions(options, operation)
    const n = requireNative(operation)
    const writable = Class === WriteAuthority
    if (same === undefined) {
      return n.open(path, undefined, writable, true).then(
        (handle) => new Class(kConstruct, handle, writable),
        (err) => { throw toError(err, operation) })
    }
    // Held like any operation on `same`: its descriptor stays open until this settles.
    return runAsync(same, operation, (nat, h) => nat.open(path, h, writable, true),
      (handle) => new Class(kConstruct, handle, writable))
  })
}

function openReadAuthority (root, options) {
  return openAsync('openReadAuthority', ReadAuthority, root, options)
}

function openReadAuthoritySync (root, options) {
  return openSync('openReadAuthority', ReadAuthority, root, options)
}

function openWriteAuthority (root, options) {
  return openAsync('openWriteAuthority', WriteAuthority, root, options)
}

function openWriteAuthoritySync (root, options) {
  return openSync('openWriteAuthority', WriteAuthority, root, options)
}

module.exports = {
  openReadAuthority,
  openReadAuthoritySync,
  openWriteAuthority,
  openWriteAuthoritySync,
  toSegments,
  FileAuthorityError
}
// NODE_DEBUG=agent-os (lib/internal/debug.js). The plain object literal above stays as
// it is so that ES modules can import each name (Node's CommonJS export detection).
if (debug.enabled) {
  module.exports.openReadAuthority = debug.traceAsync('openReadAuthority', openReadAuthority)
  module.exports.openReadAuthoritySync = debug.traceSync('openReadAuthoritySync', openReadAuthoritySync)
  module.exports.openWriteAuthority = debug.traceAsync('openWriteAuthority', openWriteAuthority)
  module.exports.openWriteAuthoritySync = debug.traceSync('openWriteAuthoritySync', openWriteAuthoritySync)
}
