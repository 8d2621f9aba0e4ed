'use strict'
// Shared by file-authority (native) and file-authority/testing (in memory): the error
// class, the code table, and the argument rules (segments, byte budget, content).
// Both faces validate through these functions, so they cannot drift apart.

const { isUtf8, constants: { MAX_LENGTH } } = require('node:buffer')
const { isUint8Array } = require('node:util').types

const RECOVERABLE = Object.freeze({
  INVALID_PATH: 'yes',
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

// A message names only the operation, the segment index and the host code; never a
// root, a segment's text or content. `reason` is an internal, fixed text used only for
// UNSUPPORTED_BACKEND (why the binding is unusable), never caller data.
function composeMessage (code, operation, segmentIndex, hostCode, reason) {
  let msg = `${operation} failed: ${code}`
  if (segmentIndex !== undefined) msg += ` at segment ${segmentIndex}`
  if (hostCode !== undefined) msg += ` (${hostCode})`
  if (reason !== undefined) msg += `: ${reason}`
  return msg
}

const kReason = Symbol('reason')

class FileAuthorityError extends Error {
  constructor (code, details) {
    if (!isCode(code)) {
      throw new TypeError('FileAuthorityError: unknown code')
    }
    let d
    try { // each detail read once, so a getter cannot change it between check and use
      const given = details === undefined || details === null ? {} : details
      d = { operation: given.operation, segmentIndex: given.segmentIndex, hostCode: given.hostCode, reason: given[kReason] }
    } catch {
      throw new TypeError('FileAuthorityError: details could not be read')
    }
    const operation = typeof d.operation === 'string' ? d.operation : 'fileAuthority'
    const segmentIndex = Number.isSafeInteger(d.segmentIndex) && d.segmentIndex >= 0 ? d.segmentIndex : undefined
    const hostCode = typeof d.hostCode === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(d.hostCode) ? d.hostCode : undefined
    const reason = typeof d.reason === 'string' ? d.reason : undefined
    super(composeMessage(code, operation, segmentIndex, hostCode, reason))
    Object.defineProperty(this, 'name', { value: 'FileAuthorityError', enumerable: false, configurable: true, writable: true })
    this.code = code
    this.recoverable = RECOVERABLE[code]
    this.operation = operation
    if (segmentIndex !== undefined) this.segmentIndex = segmentIndex
    if (hostCode !== undefined) this.hostCode = hostCode
  }
}

function fail (code, operation, segmentIndex, hostCode) {
  return new FileAuthorityError(code, { operation, segmentIndex, hostCode })
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

function checkSegments (segments, operation, windows = process.platform === 'win32') {
  if (!isArray(segments)) throw fail('INVALID_PATH', operation)
  let length
  try {
    length = segments.length
  } catch {
    throw fail('INVALID_PATH', operation)
  }
  if (!Number.isSafeInteger(length) || length > MAX_SEGMENTS) throw fail('INVALID_PATH', operation)
  const out = new Array(length)
  for (let i = 0; i < length; i++) {
    let name
    try {
      name = segments[i]
    } catch {
      throw fail('INVALID_PATH', operation, i)
    }
    if (segmentProblem(name, windows)) throw fail('INVALID_PATH', operation, i)
    out[i] = name
  }
  return Object.freeze(out)
}

function readOption (options, key, operation, code = 'INVALID_PATH') {
  if (options === undefined || options === null) return undefined
  if (typeof options !== 'object') throw fail(code, operation)
  try {
    return options[key]
  } catch {
    throw fail(code, operation)
  }
}

/** `{ maxBytes }` is required: a safe integer from 0 to buffer.constants.MAX_LENGTH. */
function checkMaxBytes (options, operation) {
  if (options === undefined || options === null || typeof options !== 'object') {
    throw fail('INVALID_PATH', operation)
  }
  const maxBytes = readOption(options, 'maxBytes', operation)
  if (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 0 || maxBytes > MAX_LENGTH) {
    throw fail('INVALID_PATH', operation)
  }
  return maxBytes
}

/** An optional boolean option (undefined: false). */
function boolOption (options, key, operation) {
  const value = readOption(options, key, operation)
  if (value !== undefined && typeof value !== 'boolean') throw fail('INVALID_PATH', operation)
  return value === true
}

/** An optional permission-bits option: an integer 0 ... 0o777 (set-id and sticky
 * bits, fractions, anything else: INVALID_PATH). */
function modeOption (options, key, operation, fallback) {
  const value = readOption(options, key, operation)
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0o777) {
    throw fail('INVALID_PATH', operation)
  }
  return value
}

/** A required (or, with `fallback`, optional) safe integer >= 0, at most `max`. */
function countOption (options, key, operation, max, fallback) {
  const value = readOption(options, key, operation)
  if (value === undefined && fallback !== undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > max) {
    throw fail('INVALID_PATH', operation)
  }
  return value
}

function requiredOptions (options, operation) {
  if (options === undefined || options === null || typeof options !== 'object') {
    throw fail('INVALID_PATH', operation)
  }
  return options
}

const VERSION_SHAPE = /^[0-9a-f]{96}$/

/** `WriteOptions`: { createParents, mode, ifVersion, ifAbsent }, each checked; ifVersion
 * a version string's shape (96 lowercase hex digits); ifAbsent with ifVersion is
 * INVALID_PATH. */
function checkWriteOptions (options, operation) {
  const createParents = boolOption(options, 'createParents', operation)
  const mode = modeOption(options, 'mode', operation, 0o666)
  const ifAbsent = boolOption(options, 'ifAbsent', operation)
  const ifVersion = readOption(options, 'ifVersion', operation)
  if (ifVersion !== undefined && (typeof ifVersion !== 'string' || !VERSION_SHAPE.test(ifVersion) || ifAbsent)) {
    throw fail('INVALID_PATH', operation)
  }
  return { createParents, mode, ifAbsent, ifVersion }
}

/** `{ offset, length }` of readRange: safe integers >= 0, length at most MAX_LENGTH. */
function checkRangeOptions (options, operation) {
  requiredOptions(options, operation)
  const offset = countOption(options, 'offset', operation, Number.MAX_SAFE_INTEGER)
  const length = countOption(options, 'length', operation, MAX_LENGTH)
  return { offset, length }
}

/** `{ maxEntries, maxDepth? }` of walk: maxEntries required; maxDepth -1 when left out
 * (unlimited). */
function checkWalkOptions (options, operation) {
  requiredOptions(options, operation)
  const maxEntries = countOption(options, 'maxEntries', operation, Number.MAX_SAFE_INTEGER)
  const maxDepth = countOption(options, 'maxDepth', operation, Number.MAX_SAFE_INTEGER, -1)
  return { maxEntries, maxDepth }
}

/** rename's target segments: an error's segmentIndex counts after the source's. */
function checkTargetSegments (from, to, operation) {
  try {
    return checkSegments(to, operation)
  } catch (err) {
    if (err.segmentIndex === undefined) throw err
    throw fail(err.code, operation, from.length + err.segmentIndex)
  }
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
 * string nor a Uint8Array is an invalid argument (INVALID_PATH).
 */
function encodeText (text, operation) {
  if (typeof text === 'string') {
    if (!text.isWellFormed()) throw fail('INVALID_CONTENT', operation)
    return Buffer.from(text, 'utf8')
  }
  if (isBytes(text)) {
    if (!isUtf8(text)) throw fail('INVALID_CONTENT', operation)
    return Buffer.from(text)
  }
  throw fail('INVALID_PATH', operation)
}

/** writeBytes' content: any real Uint8Array, copied at the call. */
function copyBytes (bytes, operation) {
  if (!isBytes(bytes)) throw fail('INVALID_PATH', operation)
  return Buffer.from(bytes)
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
  { name: 'readRange', side: 'read', check: (o, segments, options) => [checkSegments(segments, o), checkRangeOptions(options, o)] },
  { name: 'list', side: 'read', check: (o, segments) => [checkSegments(segments, o)] },
  { name: 'walk', side: 'read', check: (o, segments, options) => [checkSegments(segments, o), checkWalkOptions(options, o)] },
  { name: 'stat', side: 'both', check: (o, segments) => [checkSegments(segments, o)] },
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
  { name: 'remove', side: 'write', check: (o, segments, options) => [checkSegments(segments, o), boolOption(options, 'directory', o)] },
  {
    name: 'makeDirectory',
    side: 'write',
    check: (o, segments, options) => [checkSegments(segments, o), boolOption(options, 'parents', o), modeOption(options, 'mode', o, 0o777)]
  },
  {
    name: 'rename',
    side: 'write',
    check: (o, from, to, options) => {
      const f = checkSegments(from, o)
      return [f, checkTargetSegments(f, to, o), boolOption(options, 'replace', o)]
    }
  }
])

module.exports = {
  FileAuthorityError,
  RECOVERABLE,
  MAX_SEGMENTS,
  MAX_SEGMENT_BYTES,
  fail,
  unsupported,
  checkSegments,
  segmentProblem,
  checkMaxBytes,
  checkWriteOptions,
  checkRangeOptions,
  checkWalkOptions,
  encodeText,
  copyBytes,
  isBytes,
  readOption,
  OPERATIONS
}
