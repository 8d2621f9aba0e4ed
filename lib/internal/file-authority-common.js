'use strict'
// Shared by file-authority (native) and file-authority/testing (in memory): the error
// class, the code table, and the argument rules (segments, byte budget, content).
// Both faces validate through these functions, so they cannot drift apart.

const { isUtf8, constants: { MAX_LENGTH } } = require('node:buffer')

const RECOVERABLE = Object.freeze({
  INVALID_PATH: 'yes',
  INVALID_CONTENT: 'yes',
  UNSAFE_ENTRY: 'yes',
  UNSUPPORTED_BACKEND: 'no',
  AUTHORITY_CLOSED: 'no',
  ROOT_CHANGED: 'no',
  FILE_CHANGED: 'yes',
  OVER_BUDGET: 'yes',
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

/** `{ createParents?: boolean }`. */
function checkWriteOptions (options, operation) {
  const createParents = readOption(options, 'createParents', operation)
  if (createParents !== undefined && typeof createParents !== 'boolean') {
    throw fail('INVALID_PATH', operation)
  }
  return createParents === true
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
  let bytes = false
  try {
    bytes = text instanceof Uint8Array // a revoked proxy throws here: not bytes
  } catch {}
  if (bytes) {
    if (!isUtf8(text)) throw fail('INVALID_CONTENT', operation)
    return Buffer.from(text)
  }
  throw fail('INVALID_PATH', operation)
}

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
  encodeText,
  readOption
}
