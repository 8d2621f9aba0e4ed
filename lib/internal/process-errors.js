'use strict'
// The error classes of the process subpath, shared by killProcessTree
// (lib/internal/process-kill.js) and process scopes (lib/internal/process-scope.js);
// lib/process.js exports them. Neither of those modules imports the other's entry.

const { formatMessage, kMessage } = require('./message.js')

const CODES = new Set(['NOT_SPAWNED', 'INVALID_OPTION', 'HOST_IO', 'UNSUPPORTED_BACKEND', 'SCOPE_CLOSED'])
// The operations whose errors these classes carry: killProcessTree, and process
// scopes' (lib/internal/process-scope.js passes its own through kMessage).
const OPERATIONS = new Set(['killProcessTree', 'openProcessScope', 'spawn', 'kill'])
const TYPE_CODES = new Set(['NOT_SPAWNED', 'INVALID_OPTION'])
const kProcessTreeError = Symbol('ProcessTreeError')

// Shared by both classes: `killProcessTree failed: CODE: what`, where `what` names the
// argument at fault (`options.graceMs`) or the host code, never a value passed.
function setUp (err, code, details) {
  Object.defineProperty(err, kProcessTreeError, { value: true })
  err.code = code
  err.operation = details.operation
  if (details.argument !== undefined) err.argument = details.argument
  if (details.hostCode !== undefined) err.hostCode = details.hostCode
}

// lib/internal/message.js's one format: `killProcessTree failed: CODE[: argument
// expected | : reason][ (hostCode)]`.
function composeMessage (code, details) {
  return formatMessage({
    operation: details.operation,
    code,
    argument: details.expected !== undefined ? details.argument : undefined,
    expected: details.expected,
    reason: details.reason,
    hostCode: details.hostCode
  }, 'killProcessTree')
}

function readDetails (code, details) {
  if (!CODES.has(code)) throw new TypeError('ProcessTreeError: unknown code')
  try { // each detail read once
    const given = details === undefined || details === null ? {} : details
    // `target.pid`, `options.graceMs`, `options.<an unknown key>` (an identifier of at
    // most 32 characters, lib/internal/process-spawn.js)
    const argument = typeof given.argument === 'string' && /^[A-Za-z_$][A-Za-z0-9_$]{0,31}(?:\.[A-Za-z_$][A-Za-z0-9_$]{0,31}){0,2}$/.test(given.argument) ? given.argument : undefined
    const hostCode = typeof given.hostCode === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(given.hostCode) ? given.hostCode : undefined
    const reason = typeof given.reason === 'string' ? given.reason : undefined
    const m = given[kMessage]
    const expected = m !== undefined && m !== null && typeof m.expected === 'string' ? m.expected : undefined
    const operation = m !== undefined && m !== null && OPERATIONS.has(m.operation) ? m.operation : 'killProcessTree'
    return { argument, hostCode, reason, expected, operation }
  } catch {
    throw new TypeError('ProcessTreeError: details could not be read')
  }
}

/**
 * The error of the process subpath: `code` (NOT_SPAWNED, INVALID_OPTION, HOST_IO,
 * UNSUPPORTED_BACKEND, SCOPE_CLOSED), `operation` ('killProcessTree', or a process
 * scope's 'openProcessScope', 'spawn', 'kill'), `argument` for a bad
 * argument, `hostCode` for a host failure. NOT_SPAWNED and INVALID_OPTION are
 * ProcessTreeTypeError, which is also a TypeError; `instanceof ProcessTreeError`
 * holds for both classes.
 */
class ProcessTreeError extends Error {
  constructor (code, details) {
    if (TYPE_CODES.has(code)) throw new TypeError('ProcessTreeError: use ProcessTreeTypeError for this code')
    const d = readDetails(code, details)
    super(composeMessage(code, d))
    Object.defineProperty(this, 'name', { value: 'ProcessTreeError', enumerable: false, configurable: true, writable: true })
    setUp(this, code, d)
  }

  static [Symbol.hasInstance] (value) {
    return value !== null && (typeof value === 'object' || typeof value === 'function') &&
      Object.prototype.hasOwnProperty.call(value, kProcessTreeError)
  }
}

class ProcessTreeTypeError extends TypeError {
  constructor (code, details) {
    if (!TYPE_CODES.has(code)) throw new TypeError('ProcessTreeTypeError: use ProcessTreeError for this code')
    const d = readDetails(code, details)
    super(composeMessage(code, d))
    // name stays 'TypeError', as for Node's own argument errors.
    setUp(this, code, d)
  }
}

/** A bad argument of `operation`: `argument` names it, `expected` says what it must
 * be (fixed texts); NOT_SPAWNED gives a `reason` instead. `cause`, when given, is
 * kept as the error's `cause` (a getter or proxy trap that threw). */
function typeError (code, operation, argument, expected, { cause, reason } = {}) {
  const err = new ProcessTreeTypeError(code, { argument, reason, [kMessage]: { expected, operation } })
  if (cause !== undefined) Object.defineProperty(err, 'cause', { value: cause, configurable: true, writable: true })
  return err
}

/** A refusal or host failure of `operation` (HOST_IO, UNSUPPORTED_BACKEND,
 * SCOPE_CLOSED): a ProcessTreeError. */
function plainError (code, operation, reason, hostCode) {
  return new ProcessTreeError(code, { reason, hostCode, [kMessage]: { operation } })
}

/** The package's argument checker's raise (lib/internal/args.js) for this subpath: a bad
 * argument is a ProcessTreeTypeError with code INVALID_OPTION. */
function raise (code, operation, argument, expected) {
  return typeError(code, operation, argument, expected)
}

module.exports = { ProcessTreeError, ProcessTreeTypeError, typeError, plainError, raise }
