'use strict'
// The one message format of every error the package throws, in all three subpaths:
//
//   <operation> failed: <CODE>[ at segment <i>][: <detail>][ (<hostCode>)]
//
// where <detail> is, at most one of, in this order of preference:
//   - the argument at fault and what it must be:  options.maxBytes must be a safe integer from 0 to buffer.constants.MAX_LENGTH
//   - who holds a lock:                           held by pid 23569 (LOCK_HELD)
//                                                 held by pid 23569 when the time ran out (LOCK_TIMEOUT)
//                                                 still held when the time ran out (LOCK_TIMEOUT, holder unknown)
//   - a fixed reason written in this package:     no prebuilt binary for linux-riscv64 and none compiled
// e.g.
//   readBytes failed: INVALID_PATH: options.maxBytes must be a safe integer from 0 to buffer.constants.MAX_LENGTH
//   readBytes failed: UNSAFE_ENTRY at segment 1 (ELOOP)
//   writeText failed: HOST_IO at segment 0 (ENOSPC)
//   acquire failed: LOCK_TIMEOUT: held by pid 23569 when the time ran out
//   killProcessTree failed: INVALID_OPTION: options.graceMs must be a finite number >= 0
//
// A message never holds a value the caller passed (a path, a segment's text, content,
// an option's value): `argument` is a name (`options.maxBytes`, `segments[2]`) checked
// to be one, `expected` and `reason` must be fixed texts of this package (never built
// from caller data), hostCode is an errno-like constant, segmentIndex and holderPid are
// integers. A part that fails its check is left out, never echoed.

const OPERATION = /^[A-Za-z][A-Za-z0-9]{0,63}$/
const CODE = /^[A-Z][A-Z0-9_]{0,63}$/
const HOST_CODE = /^[A-Z][A-Z0-9_]{0,63}$/
// options.maxBytes, segments[2], child.pid, lockPath, text
const ARGUMENT = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}(?:\.[A-Za-z_$][A-Za-z0-9_$]{0,63}|\[\d{1,6}\]){0,4}$/

/** Internal details an error class reads besides its public ones: pass as
 * `{ operation, ..., [kMessage]: { argument, expected, reason } }`. */
const kMessage = Symbol('agent-os message details')

function text (value) {
  return typeof value === 'string' && value.length > 0 && value.length <= 400 && !/[\r\n]/.test(value) ? value : undefined
}

/** The parts of a message, each checked; what fails its check is undefined. */
function messageParts ({ operation, code, argument, expected, segmentIndex, hostCode, holderPid, reason } = {}) {
  return {
    operation: typeof operation === 'string' && OPERATION.test(operation) ? operation : undefined,
    code: typeof code === 'string' && CODE.test(code) ? code : undefined,
    argument: typeof argument === 'string' && ARGUMENT.test(argument) ? argument : undefined,
    expected: text(expected),
    segmentIndex: Number.isSafeInteger(segmentIndex) && segmentIndex >= 0 ? segmentIndex : undefined,
    hostCode: typeof hostCode === 'string' && HOST_CODE.test(hostCode) ? hostCode : undefined,
    holderPid: Number.isSafeInteger(holderPid) && holderPid > 0 ? holderPid : undefined,
    reason: text(reason)
  }
}

function detailOf (p) {
  if (p.argument !== undefined) return `${p.argument} ${p.expected !== undefined ? p.expected : 'is not valid'}`
  if (p.code === 'LOCK_TIMEOUT') {
    return p.holderPid !== undefined ? `held by pid ${p.holderPid} when the time ran out` : 'still held when the time ran out'
  }
  if (p.holderPid !== undefined) return `held by pid ${p.holderPid}`
  return p.reason
}

/** The message for `details` (see the format above). `fallbackOperation` names the
 * subpath when the operation is missing or not an identifier. */
function formatMessage (details, fallbackOperation = 'agentOs') {
  const p = messageParts(details)
  let msg = `${p.operation !== undefined ? p.operation : fallbackOperation} failed: ${p.code !== undefined ? p.code : 'ERROR'}`
  if (p.segmentIndex !== undefined) msg += ` at segment ${p.segmentIndex}`
  const detail = detailOf(p)
  if (detail !== undefined) msg += `: ${detail}`
  if (p.hostCode !== undefined) msg += ` (${p.hostCode})`
  return msg
}

module.exports = { formatMessage, messageParts, kMessage }
