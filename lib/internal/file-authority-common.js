'use strict'
// Shared by file-authority (native) and file-authority/testing (in memory): the error
// class, the code table, and the argument rules (segments, byte budget, content).
// Both faces validate through these functions, so they cannot drift apart.

const { isUtf8, constants: { MAX_LENGTH } } = require('node:buffer')
const { isUint8Array } = require('node:util').types
const { formatMessage, messageParts, kMessage } = require('./message.js')
const args = require('./args.js')

const RECOVERABLE = Object.freeze({
  INVALID_PATH: 'yes',
  INVALID_OPTION: 'yes',
  INVALID_CONTENT: 'yes',
  UNSAFE_ENTRY: 'yes',
  UNSUPPORTED_BACKEND: 'no',
  AUTHORITY_CLOSED: 'no',
  ROOT_CHANGED: 'no',
  FILE_CHANGED: 'yes',
  OVER_BUDGET: 'yes',
  ENTRY_EXISTS: 'yes',
  HOST_IO: 'maybe'
})

const MAX_SEGMENTS = 255
const MAX_SEGMENT_BYTES = 255

function isCode (code) {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(RECOVERABLE, code)
}

// The message is lib/internal/message.js's one format:
//   <operation> failed: <CODE>[ at segment i][: <argument> <expected> | : <hint>][ (hostCode)]
// It names the operation, the segment index, the host code and, for a bad argument, the
// argument at fault and what it must be (fixed texts of this package); never a root, a
// segment's text, content or any value the caller passed. A host failure may carry a
// fixed hint of what to do (hintFor below).
const kReason = Symbol('reason')

// Fixed hints the contract allows ("a fixed hint of what to do"), by code, host code
// and operation. Both faces raise through fail(), so both give the same text.
const HINTS = Object.freeze({
  createParents: 'a parent directory is missing; createParents: true creates missing parents',
  parents: 'a parent directory is missing; parents: true creates missing parents',
  rootMissing: 'the root directory does not exist',
  renameMissing: 'the source or a parent directory of the target is missing',
  removeDirectory: 'the entry is a directory; { directory: true } removes an empty directory',
  isDirectory: 'the entry is a directory where a file is needed',
  link: 'the entry is a symbolic link, which is never followed',
  notDirectory: 'a parent is not a directory',
  replace: 'the target exists; { replace: true } replaces a regular file'
})
const WRITES = new Set(['writeText', 'writeBytes', 'appendText', 'appendBytes'])
function hintFor (code, operation, hostCode) {
  if (code === 'HOST_IO' && hostCode === 'ENOENT') {
    if (WRITES.has(operation)) return HINTS.createParents
    if (operation === 'makeDirectory') return HINTS.parents
    if (operation === 'openReadAuthority' || operation === 'openWriteAuthority') return HINTS.rootMissing
    if (operation === 'rename') return HINTS.renameMissing
    return undefined
  }
  if (code === 'UNSAFE_ENTRY') {
    if (hostCode === 'EISDIR') return operation === 'remove' ? HINTS.removeDirectory : HINTS.isDirectory
    if (hostCode === 'ELOOP') return HINTS.link
    if (hostCode === 'ENOTDIR') return HINTS.notDirectory
    return undefined
  }
  if (code === 'ENTRY_EXISTS' && operation === 'rename') return HINTS.replace
  return undefined
}

class FileAuthorityError extends Error {
  constructor (code, details) {
    if (!isCode(code)) {
      throw new TypeError('FileAuthorityError: unknown code')
    }
    let d
    try { // each detail read once, so a getter cannot change it between check and use
      const given = details === undefined || details === null ? {} : details
      const m = given[kMessage]
      d = {
        operation: given.operation,
        segmentIndex: given.segmentIndex,
        hostCode: given.hostCode,
        reason: given[kReason],
        argument: m !== undefined && m !== null ? m.argument : undefined,
        expected: m !== undefined && m !== null ? m.expected : undefined
      }
    } catch {
      throw new TypeError('FileAuthorityError: details could not be read')
    }
    const operation = typeof d.operation === 'string' ? d.operation : 'fileAuthority'
    const segmentIndex = Number.isSafeInteger(d.segmentIndex) && d.segmentIndex >= 0 ? d.segmentIndex : undefined
    const hostCode = typeof d.hostCode === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(d.hostCode) ? d.hostCode : undefined
    const argument = messageParts({ argument: d.argument }).argument
    const reason = typeof d.reason === 'string' ? d.reason : argument === undefined ? hintFor(code, operation, hostCode) : undefined
    super(formatMessage({ operation, code, segmentIndex, hostCode, reason, argument, expected: d.expected }, 'fileAuthority'))
    Object.defineProperty(this, 'name', { value: 'FileAuthorityError', enumerable: false, configurable: true, writable: true })
    this.code = code
    this.recoverable = RECOVERABLE[code]
    this.operation = operation
    if (segmentIndex !== undefined) this.segmentIndex = segmentIndex
    if (hostCode !== undefined) this.hostCode = hostCode
    if (argument !== undefined) this.argument = argument
  }
}

function fail (code, operation, segmentIndex, hostCode) {
  return new FileAuthorityError(code, { operation, segmentIndex, hostCode })
}

/** A bad argument: `argument` names it (`options.maxBytes`, `segments[2]`) and
 * `expected` says what it must be; both fixed texts of this package. A bad path (the
 * root, a segment list, the byte budget) is INVALID_PATH; every other bad argument or
 * option is INVALID_OPTION (contract 0.3). */
function invalid (operation, argument, expected, segmentIndex, code = 'INVALID_PATH') {
  return new FileAuthorityError(code, { operation, segmentIndex, [kMessage]: { argument, expected } })
}

function invalidOption (operation, argument, expected) {
  return invalid(operation, argument, expected, undefined, 'INVALID_OPTION')
}

/** The argument checker's raise (lib/internal/args.js) for this subpath. */
function raise (code, operation, argument, expected) {
  return invalid(operation, argument, expected, undefined, code)
}

/** UNSUPPORTED_BACKEND with a fixed, actionable reason (no caller data). */
function unsupported (operation, reason) {
  return new FileAuthorityError('UNSUPPORTED_BACKEND', { operation, [kReason]: reason })
}

const WINDOWS_RESERVED = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(\..*)?$/i
// Characters Windows never allows in a name (besides the separators and NUL, which are
// refused everywhere), and ':' which would name an alternate data stream.
const WINDOWS_FORBIDDEN = /[<>:"|?*\u0001-\u001f]/

/** True when `name` is one segment under this package's rules. */
function segmentProblem (name, windows) {
  if (typeof name !== 'string' || name.length === 0) return true
  if (name === '.' || name === '..') return true
  if (name.includes('/') || name.includes('\\') || name.includes('\0')) return true
  if (!name.isWellFormed()) return true
  if (Buffer.byteLength(name, 'utf8') > MAX_SEGMENT_BYTES) return true
  if (windows) {
    if (WINDOWS_FORBIDDEN.test(name)) return true
    if (/[. ]$/.test(name)) return true
    if (WINDOWS_RESERVED.test(name)) return true
  }
  return false
}

/**
 * Validates a segment list and returns a frozen copy of it, read exactly once (so a
 * caller's getter or proxy cannot change it between checking and use). Throws
 * INVALID_PATH naming the first bad segment.
 */
/** Array.isArray, but a revoked proxy (on which it throws) is simply not an array. */
function isArray (value) {
  try {
    return Array.isArray(value)
  } catch {
    return false
  }
}

const SEGMENTS_EXPECTED = `must be an array of at most ${MAX_SEGMENTS} path segments`
const SEGMENT_EXPECTED = 'must be one path segment (a non-empty name without a separator or NUL, not . or .., at most 255 UTF-8 bytes)'

/** `argument` names the list (`segments`, `from`, `to`); an error names `argument[i]`. */
function checkSegments (segments, operation, windows = process.platform === 'win32', argument = 'segments', indexBase = 0) {
  if (!isArray(segments)) throw invalid(operation, argument, SEGMENTS_EXPECTED)
  let length
  try {
    length = segments.length
  } catch {
    throw invalid(operation, argument, SEGMENTS_EXPECTED)
  }
  if (!Number.isSafeInteger(length) || length > MAX_SEGMENTS) throw invalid(operation, argument, SEGMENTS_EXPECTED)
  const out = new Array(length)
  for (let i = 0; i < length; i++) {
    let name
    try {
      name = segments[i]
    } catch {
      throw invalid(operation, `${argument}[${i}]`, SEGMENT_EXPECTED, indexBase + i)
    }
    if (segmentProblem(name, windows)) throw invalid(operation, `${argument}[${i}]`, SEGMENT_EXPECTED, indexBase + i)
    out[i] = name
  }
  return Object.freeze(out)
}

/**
 * The native face's form of checkSegments: the same rules, the same errors, each
 * element read exactly once; returns the segments joined with '/' (one string the
 * binding converts once and splits: no segment holds a '/'). Checked per segment:
 * the type, emptiness, '.' and '..', '/', and the UTF-8 length only when it could
 * pass 255 bytes; the rules that a joined string shows as well as its parts (a '\\',
 * a NUL, a lone surrogate) are checked once on it, and only when one fails are the
 * parts looked at one by one to name the first bad segment.
 */
const MAX_UTF16_SURELY_SHORT = Math.floor(MAX_SEGMENT_BYTES / 3) // <= 3 UTF-8 bytes per code unit

function joinedProblem (joined) {
  return joined.includes('\\') || joined.includes('\0') || !joined.isWellFormed()
}

/** The index of the first bad segment among the first `count` of `joined`, or -1. */
function firstBadJoined (joined, count, windows) {
  if (count === 0 || !joinedProblem(joined)) return -1
  const names = joined.split('/')
  for (let i = 0; i < count; i++) if (segmentProblem(names[i], windows)) return i
  return -1
}

function joinSegments (segments, operation, windows = process.platform === 'win32', argument = 'segments', indexBase = 0) {
  if (!isArray(segments)) throw invalid(operation, argument, SEGMENTS_EXPECTED)
  let length
  try {
    length = segments.length
  } catch {
    throw invalid(operation, argument, SEGMENTS_EXPECTED)
  }
  if (!Number.isSafeInteger(length) || length > MAX_SEGMENTS) throw invalid(operation, argument, SEGMENTS_EXPECTED)
  let joined = ''
  for (let i = 0; i < length; i++) {
    let name
    let bad = false
    try {
      name = segments[i]
    } catch {
      bad = true
    }
    if (bad || typeof name !== 'string' || name.length === 0 || name === '.' || name === '..' || name.includes('/') ||
        (name.length > MAX_UTF16_SURELY_SHORT && Buffer.byteLength(name, 'utf8') > MAX_SEGMENT_BYTES) ||
        (windows && segmentProblem(name, true))) {
      const earlier = firstBadJoined(joined, i, windows)
      const at = earlier >= 0 ? earlier : i
      throw invalid(operation, `${argument}[${at}]`, SEGMENT_EXPECTED, indexBase + at)
    }
    joined = i === 0 ? name : joined + '/' + name
  }
  const at = firstBadJoined(joined, length, windows)
  if (at >= 0) throw invalid(operation, `${argument}[${at}]`, SEGMENT_EXPECTED, indexBase + at)
  return joined
}

// ---- options: one spec per operation (lib/internal/args.js) ------------------------

const VERSION_SHAPE = /^[0-9a-f]{96}$/
// The byte budget is part of what the contract calls a path argument (INVALID_PATH);
// every other option is INVALID_OPTION.
const MAX_BYTES = args.safeInteger(0, MAX_LENGTH, 'buffer.constants.MAX_LENGTH', undefined, 'INVALID_PATH')
const COUNT = args.safeInteger(0, Number.MAX_SAFE_INTEGER, 'Number.MAX_SAFE_INTEGER')
const VERSION = args.custom('must be a version string (96 lowercase hex digits) from stat or readVersioned',
  (v) => typeof v === 'string' && VERSION_SHAPE.test(v))

// walk's exclude: an array of entry names, each one segment (read once, copied).
const EXCLUDE_EXPECTED = 'must be an array of entry names, each one path segment'
const EXCLUDE = args.rule(EXCLUDE_EXPECTED, (value, ctx) => {
  if (value === undefined) return Object.freeze([])
  let names
  try {
    names = Array.isArray(value) ? Array.from(value) : undefined
  } catch {} // a revoked proxy, or one whose trap throws
  if (names === undefined) throw ctx.bad(EXCLUDE_EXPECTED)
  const windows = process.platform === 'win32'
  for (const name of names) if (segmentProblem(name, windows)) throw ctx.bad(EXCLUDE_EXPECTED)
  return Object.freeze(names)
})

const budget = (name) => args.defineOptions(name, { maxBytes: MAX_BYTES }, { required: ['maxBytes'] })
const writeOptions = (name) => args.defineOptions(name, {
  createParents: args.bool(),
  mode: args.permissionBits(0o666),
  ifVersion: VERSION,
  ifAbsent: args.bool(),
  durable: args.bool(true)
})
const appendOptions = (name) => args.defineOptions(name, {
  createParents: args.bool(),
  mode: args.permissionBits(0o666),
  durable: args.bool(true)
})

const OPTIONS = Object.freeze({
  readBytes: budget('readBytes'),
  readVersioned: budget('readVersioned'),
  readText: budget('readText'),
  readRange: args.defineOptions('readRange', {
    offset: COUNT,
    length: args.safeInteger(0, MAX_LENGTH, 'buffer.constants.MAX_LENGTH')
  }, { required: ['offset', 'length'] }),
  walk: args.defineOptions('walk', {
    maxEntries: COUNT,
    maxDepth: args.safeInteger(0, Number.MAX_SAFE_INTEGER, 'Number.MAX_SAFE_INTEGER', -1),
    exclude: EXCLUDE,
    withStats: args.bool()
  }, { required: ['maxEntries'] }),
  writeText: writeOptions('writeText'),
  writeBytes: writeOptions('writeBytes'),
  appendText: appendOptions('appendText'),
  appendBytes: appendOptions('appendBytes'),
  list: args.defineOptions('list', { withStats: args.bool() }),
  remove: args.defineOptions('remove', { directory: args.bool() }),
  makeDirectory: args.defineOptions('makeDirectory', { parents: args.bool(), mode: args.permissionBits(0o777) }),
  rename: args.defineOptions('rename', { replace: args.bool() })
})

/** `{ maxBytes }` is required: a safe integer from 0 to buffer.constants.MAX_LENGTH. */
function checkMaxBytes (options, operation) {
  return OPTIONS[operation].read(options, raise).maxBytes
}

/** `WriteOptions`, each checked; ifAbsent with ifVersion is INVALID_OPTION. */
function checkWriteOptions (options, operation) {
  const o = OPTIONS[operation].read(options, raise)
  if (o.ifVersion !== undefined && o.ifAbsent) {
    throw invalidOption(operation, 'options.ifVersion', 'must be left out when options.ifAbsent is true')
  }
  return o
}

/** `{ offset, length }` of readRange: safe integers >= 0, length at most MAX_LENGTH. */
function checkRangeOptions (options, operation) {
  return OPTIONS[operation].read(options, raise)
}

/** `{ maxEntries, maxDepth?, exclude?, withStats? }` of walk: maxEntries required;
 * maxDepth -1 when left out (unlimited); exclude a frozen copy ([] when left out). */
function checkWalkOptions (options, operation) {
  return OPTIONS[operation].read(options, raise)
}

/** `{ createParents?, mode?, durable? }` of appendText / appendBytes. */
function checkAppendOptions (options, operation) {
  return OPTIONS[operation].read(options, raise)
}

// The most bytes one append writes: an append is one write(2), and Linux moves at most
// 0x7ffff000 bytes in one call (src/file_authority/fa.h AOS_FA_APPEND_MAX).
const APPEND_MAX = 0x7ffff000

/** An append's content (a Uint8Array), at most APPEND_MAX bytes (INVALID_OPTION naming
 * `argument`). A string's UTF-8 never passes it: the engine's longest string is about
 * 2 ** 29 code units, at most 3 bytes each. */
function checkAppendSize (bytes, operation, argument) {
  if (bytes.length > APPEND_MAX) {
    throw invalidOption(operation, argument, 'must be at most 2147479552 bytes (an append is one write)')
  }
  return bytes
}

/** An operation without an options argument: anything given there is refused. */
function checkNoOptions (value, operation) {
  args.noOptions(value, operation, raise)
}

/** rename's target segments: an error's segmentIndex counts after the source's. */
function checkTargetSegments (from, to, operation) {
  return checkSegments(to, operation, undefined, 'to', from.length)
}

/** True for a real Uint8Array (or Buffer); an object that only looks like one
 * (Object.create(Uint8Array.prototype), a Proxy around one) is not. */
function isBytes (value) {
  return isUint8Array(value)
}

/**
 * The bytes to write: a string must be well-formed UTF-16 and is encoded as UTF-8;
 * bytes must be valid UTF-8 and are copied (the caller may reuse its buffer while an
 * async write runs). Malformed text is INVALID_CONTENT; a value that is neither a
 * string nor a Uint8Array is a bad argument (INVALID_OPTION).
 */
function encodeText (text, operation) {
  if (typeof text === 'string') {
    if (!text.isWellFormed()) throw invalid(operation, 'text', 'must be well-formed UTF-16', undefined, 'INVALID_CONTENT')
    return Buffer.from(text, 'utf8')
  }
  if (isBytes(text)) {
    if (!isUtf8(text)) throw invalid(operation, 'text', 'must be valid UTF-8', undefined, 'INVALID_CONTENT')
    return Buffer.from(text)
  }
  throw invalidOption(operation, 'text', 'must be a string or a Uint8Array')
}

/** writeBytes' content: any real Uint8Array, copied at the call. */
function copyBytes (bytes, operation) {
  if (!isBytes(bytes)) throw invalidOption(operation, 'bytes', 'must be a Uint8Array')
  return Buffer.from(bytes)
}

/** A read's bytes as a Node Buffer over the same memory (contract 0.3: reads return
 * Buffers, so `bytes.toString('utf8')` works). */
function toBuffer (bytes) {
  if (bytes === undefined || Buffer.isBuffer(bytes)) return bytes
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/**
 * The operations of both faces, one row each: the method's name (also the error's
 * operation), which authority has it ('read', 'write' or 'both'), and the argument
 * check turning the caller's arguments into the list both faces run on. Each face
 * adds how it runs a row; the sync and async methods are generated from this table,
 * so the two faces validate identically and cannot drift apart.
 */
const OPERATIONS = Object.freeze([
  { name: 'readBytes', side: 'read', check: (o, segments, options) => [checkSegments(segments, o), checkMaxBytes(options, o)] },
  { name: 'readVersioned', side: 'read', check: (o, segments, options) => [checkSegments(segments, o), checkMaxBytes(options, o)] },
  { name: 'readText', side: 'read', check: (o, segments, options) => [checkSegments(segments, o), checkMaxBytes(options, o)] },
  { name: 'readRange', side: 'read', check: (o, segments, options) => [checkSegments(segments, o), checkRangeOptions(options, o)] },
  { name: 'list', side: 'read', check: (o, segments, options) => [checkSegments(segments, o), OPTIONS.list.read(options, raise).withStats] },
  { name: 'walk', side: 'read', check: (o, segments, options) => [checkSegments(segments, o), checkWalkOptions(options, o)] },
  { name: 'stat', side: 'both', check: (o, segments, options) => [checkSegments(segments, o), checkNoOptions(options, o)] },
  {
    name: 'writeText',
    side: 'write',
    check: (o, segments, text, options) => {
      const segs = checkSegments(segments, o)
      const bytes = encodeText(text, o)
      return [segs, bytes, checkWriteOptions(options, o), typeof text === 'string' ? text : undefined]
    }
  },
  {
    name: 'writeBytes',
    side: 'write',
    check: (o, segments, bytes, options) => {
      const segs = checkSegments(segments, o)
      const copy = copyBytes(bytes, o)
      return [segs, copy, checkWriteOptions(options, o)]
    }
  },
  {
    name: 'appendText',
    side: 'write',
    check: (o, segments, text, options) => {
      const segs = checkSegments(segments, o)
      const bytes = checkAppendSize(encodeText(text, o), o, 'text')
      return [segs, bytes, checkAppendOptions(options, o), typeof text === 'string' ? text : undefined]
    }
  },
  {
    name: 'appendBytes',
    side: 'write',
    check: (o, segments, bytes, options) => {
      const segs = checkSegments(segments, o)
      if (isBytes(bytes)) checkAppendSize(bytes, o, 'bytes')
      const copy = copyBytes(bytes, o)
      return [segs, copy, checkAppendOptions(options, o)]
    }
  },
  { name: 'remove', side: 'write', check: (o, segments, options) => [checkSegments(segments, o), OPTIONS.remove.read(options, raise).directory] },
  {
    name: 'makeDirectory',
    side: 'write',
    check: (o, segments, options) => {
      const segs = checkSegments(segments, o)
      const { parents, mode } = OPTIONS.makeDirectory.read(options, raise)
      return [segs, parents, mode]
    }
  },
  {
    name: 'rename',
    side: 'write',
    check: (o, from, to, options) => {
      const f = checkSegments(from, o, undefined, 'from')
      return [f, checkTargetSegments(f, to, o), OPTIONS.rename.read(options, raise).replace]
    }
  }
])

module.exports = {
  FileAuthorityError,
  HINTS,
  OPTIONS,
  raise,
  invalidOption,
  checkNoOptions,
  toBuffer,
  RECOVERABLE,
  MAX_SEGMENTS,
  MAX_SEGMENT_BYTES,
  fail,
  invalid,
  unsupported,
  checkSegments,
  joinSegments,
  segmentProblem,
  checkMaxBytes,
  checkWriteOptions,
  checkRangeOptions,
  checkWalkOptions,
  checkAppendOptions,
  checkAppendSize,
  APPEND_MAX,
  encodeText,
  copyBytes,
  isBytes,
  OPERATIONS
}
