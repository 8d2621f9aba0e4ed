'use strict'
// @scope/agent-os/node-lock: a nonblocking lock for cooperating processes, carried by
// an operating-system lock on an open handle (flock / LockFileEx). The native part
// (src/node_lock/) does every host step; this file checks arguments, types errors and
// runs the bounded retry loop of acquire(). See docs/node-lock.md.

const binding = require('./binding.js')
const debug = require('./internal/debug.js')
const { formatMessage, messageParts, kMessage } = require('./internal/message.js')
const args = require('./internal/args.js')

const CODES = new Set(['INVALID_PATH', 'INVALID_OPTION', 'UNSAFE_ENTRY', 'LOCK_HELD', 'LOCK_TIMEOUT', 'UNSUPPORTED_BACKEND', 'HOST_IO'])

const kReason = Symbol('reason')
const UNSAFE_REASON = 'the entry at the lock path is not a guard file; it was left as it was'
// Fixed hints (the contract allows "a fixed hint of what to do").
const MISSING_DIRECTORY = "the lock file's directory does not exist (the lock file itself is created)"
function hintFor (code, hostCode) {
  if (code === 'UNSAFE_ENTRY') return UNSAFE_REASON
  if (code === 'HOST_IO' && hostCode === 'ENOENT') return MISSING_DIRECTORY
  return undefined
}

// The message is lib/internal/message.js's one format:
//   <operation> failed: <CODE>[: <argument> <expected> | : held by pid N ...][ (hostCode)]
// It names the operation, the code, the holder's pid, the host code and, for a bad
// argument, the argument at fault and what it must be; never the lock path or anything
// else the caller passed in.
class NodeLockError extends Error {
  constructor (code, details) {
    if (!CODES.has(code)) throw new TypeError('NodeLockError: unknown code')
    let d
    try { // each detail read once, so a getter cannot change it between check and use
      const given = details === undefined || details === null ? {} : details
      const m = given[kMessage]
      d = {
        operation: given.operation,
        holderPid: given.holderPid,
        hostCode: given.hostCode,
        reason: given[kReason],
        argument: m !== undefined && m !== null ? m.argument : undefined,
        expected: m !== undefined && m !== null ? m.expected : undefined
      }
    } catch {
      throw new TypeError('NodeLockError: details could not be read')
    }
    const operation = typeof d.operation === 'string' ? d.operation : 'nodeLock'
    const holderPid = Number.isSafeInteger(d.holderPid) && d.holderPid > 0 ? d.holderPid : undefined
    const hostCode = typeof d.hostCode === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(d.hostCode) ? d.hostCode : undefined
    const argument = messageParts({ argument: d.argument }).argument
    const reason = d.reason !== undefined ? d.reason : hintFor(code, hostCode)
    super(formatMessage({ operation, code, holderPid, hostCode, reason, argument, expected: d.expected }, 'nodeLock'))
    Object.defineProperty(this, 'name', { value: 'NodeLockError', enumerable: false, configurable: true, writable: true })
    this.code = code
    this.operation = operation
    if (holderPid !== undefined) this.holderPid = holderPid
    if (hostCode !== undefined) this.hostCode = hostCode
    if (argument !== undefined) this.argument = argument
  }
}

let native
function nativePart (operation) {
  if (native === undefined) native = binding.part('nodeLock')
  if (native === undefined) {
    throw new NodeLockError('UNSUPPORTED_BACKEND', { operation, [kReason]: binding.loadFailure() })
  }
  return native
}

const isWindows = process.platform === 'win32'

/** A bad argument: `argument` names it, `expected` says what it must be (fixed texts).
 * A bad lockPath is INVALID_PATH; every other bad argument or option INVALID_OPTION. */
function raise (code, operation, argument, expected) {
  return new NodeLockError(code, { operation, [kMessage]: { argument, expected } })
}

function invalidOption (operation, argument, expected) {
  return raise('INVALID_OPTION', operation, argument, expected)
}

// A lone surrogate could only be written as another name (U+FFFD): refused, so a
// lock is never taken on a file other than the one named.
function checkPath (lockPath, operation) {
  const ok = typeof lockPath === 'string' && lockPath.length > 0 && !lockPath.includes('\0') && lockPath.isWellFormed() &&
    (isWindows
      ? /^(?:[A-Za-z]:[\\/]|[\\/]{2}[^\\/])/.test(lockPath) && !/[\\/]$/.test(lockPath)
      // Absolute, and not ending in a separator (a name that does can never be a file).
      : lockPath.charCodeAt(0) === 0x2f && lockPath.charCodeAt(lockPath.length - 1) !== 0x2f)
  if (!ok) throw raise('INVALID_PATH', operation, 'lockPath', 'must be an absolute path to a file (a well-formed string without NUL, not ending in a separator)')
}

const kMake = Symbol('make')

class LockGuard {
  // The native guard's id (a number > 0), 0 once released.
  #id

  constructor (token, id) {
    if (token !== kMake) throw new TypeError('LockGuard is not constructible; use tryAcquire, acquire or withLock')
    this.#id = id
  }

  get released () {
    return this.#id === 0
  }

  release () {
    const id = this.#id
    if (id === 0) return
    this.#id = 0
    native.release(id)
  }

  [Symbol.dispose] () {
    this.release()
  }

  get [Symbol.toStringTag] () {
    return 'LockGuard'
  }

  [Symbol.for('nodejs.util.inspect.custom')] () {
    return `LockGuard { released: ${this.released} }`
  }
}

// One attempt, never waiting: a guard, or the holder's pid (0 when unknown). The
// binding returns a guard's id (> 0) or minus the holder's pid (<= 0).
function attempt (lockPath, operation, wantHolder) {
  checkPath(lockPath, operation)
  const part = native !== undefined ? native : nativePart(operation)
  let r
  try {
    r = part.tryLock(lockPath, wantHolder)
  } catch (err) {
    throw typed(err, operation)
  }
  if (r > 0) return new LockGuard(kMake, r)
  return -r
}

function typed (err, operation) {
  if (err !== null && typeof err === 'object' && typeof err.aosKind === 'string' && CODES.has(err.aosKind)) {
    return new NodeLockError(err.aosKind, { operation, hostCode: err.hostCode })
  }
  return err
}

/** Takes the lock at once or returns undefined when it is held. Never waits. */
function tryAcquire (lockPath, options) {
  checkPath(lockPath, 'tryAcquire')
  args.noOptions(options, 'tryAcquire', raise)
  const r = attempt(lockPath, 'tryAcquire', false)
  return typeof r === 'number' ? undefined : r
}

const DEFAULT_TIMEOUT_MS = 10000
const FIRST_DELAY_MS = 2
const MAX_DELAY_MS = 100

function isAbortSignal (value) {
  try {
    return value instanceof AbortSignal
  } catch {
    return false // a revoked proxy
  }
}

const waitOptions = (operation) => args.defineOptions(operation, {
  timeoutMs: args.nonNegative(undefined),
  signal: args.custom('must be an AbortSignal', isAbortSignal)
})
const ACQUIRE_OPTIONS = waitOptions('acquire')
const WITH_LOCK_OPTIONS = waitOptions('withLock')

// Reads acquire's (and withLock's) options through the package's argument checker
// (lib/internal/args.js): each option read once, unknown keys refused. `waits` tells
// whether the caller asked for a wait at all (withLock waits only then).
function checkAcquireOptions (options, operation) {
  const o = (operation === 'acquire' ? ACQUIRE_OPTIONS : WITH_LOCK_OPTIONS).read(options, raise)
  const waits = o.timeoutMs !== undefined || o.signal !== undefined
  return { timeoutMs: o.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : o.timeoutMs, signal: o.signal, waits }
}

// An aborted wait rejects with the signal's reason itself (the contract's line, and the
// web platform's convention: fetch, signal.throwIfAborted()); `controller.abort()` with
// no argument makes that reason a DOMException named 'AbortError'. Its stack is the
// caller's own business and is never touched.
/** The errors this module makes (whose stack may be re-captured at the caller). */
function isOurs (err) {
  return err instanceof NodeLockError
}

// Waits `ms`, or rejects with the signal's reason as soon as it aborts.
function pause (ms, signal) {
  return new Promise((resolve, reject) => {
    let onAbort
    const timer = setTimeout(() => {
      if (signal !== undefined) signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    if (signal !== undefined) {
      onAbort = () => {
        clearTimeout(timer)
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
    }
  })
}

// The pid a refusal reports. A refused attempt names the holder from the kernel's lock
// table (Linux) or from the record the holder writes into the guard just after it
// locks (elsewhere). In that instant the record is still empty and the attempt, which
// never waits, names no one; so before a refusal is reported, an unnamed holder is
// asked for again (native holder(): it reads, never locks) after 1, 2, 4 and 8 ms,
// while the guard still shows no record. The JavaScript thread never sleeps: these
// are timers.
const NAME_DELAYS_MS = [1, 2, 4, 8]

async function nameHolder (lockPath, pid) {
  if (pid !== 0 || native === undefined || typeof native.holder !== 'function') return pid
  for (const ms of NAME_DELAYS_MS) {
    await pause(ms)
    let h
    try {
      h = native.holder(lockPath)
    } catch {
      return 0
    }
    if (h >= 0) return h // named, or unknown for good
  }
  return 0
}

// The bounded retry loop of acquire (and of withLock when asked to wait).
async function waitFor (lockPath, operation, timeoutMs, signal) {
  if (signal !== undefined && signal.aborted) throw signal.reason
  const deadline = performance.now() + timeoutMs
  let delay = FIRST_DELAY_MS
  for (;;) {
    const r = attempt(lockPath, operation, true)
    if (typeof r !== 'number') return r
    const left = deadline - performance.now()
    if (left <= 0) throw new NodeLockError('LOCK_TIMEOUT', { operation, holderPid: await nameHolder(lockPath, r) })
    // Full jitter over the upper half, so contenders that were refused together do
    // not retry together.
    const wait = Math.min(left, delay / 2 + Math.random() * (delay / 2))
    await pause(Math.max(1, Math.ceil(wait)), signal)
    delay = Math.min(MAX_DELAY_MS, delay * 2)
  }
}

/** Retries tryAcquire with growing, jittered pauses until it succeeds, `timeoutMs`
 * passes (LOCK_TIMEOUT) or `signal` aborts (its reason).
 * A failure decided after the call returned has a stack naming the caller's frame. */
function acquire (lockPath, options) {
  try {
    checkPath(lockPath, 'acquire')
    const { timeoutMs, signal } = checkAcquireOptions(options, 'acquire')
    nativePart('acquire')
    return args.withCallerStack(waitFor(lockPath, 'acquire', timeoutMs, signal), isOurs)
  } catch (err) {
    return args.rejectNow(err)
  }
}

/** Runs `fn` holding the lock, and releases after `fn` settles, however it settles.
 * Without options, LOCK_HELD at once when the lock is held; with `timeoutMs` or
 * `signal`, waits as acquire does. */
function withLock (lockPath, fn, options) {
  try {
    checkPath(lockPath, 'withLock')
    if (typeof fn !== 'function') throw invalidOption('withLock', 'fn', 'must be a function')
    const o = checkAcquireOptions(options, 'withLock')
    return args.withCallerStack(runLocked(lockPath, fn, o), isOurs)
  } catch (err) {
    return args.rejectNow(err)
  }
}

async function runLocked (lockPath, fn, { timeoutMs, signal, waits }) {
  let guard
  if (waits) {
    nativePart('withLock')
    guard = await waitFor(lockPath, 'withLock', timeoutMs, signal)
  } else {
    const r = attempt(lockPath, 'withLock', true)
    if (typeof r === 'number') throw new NodeLockError('LOCK_HELD', { operation: 'withLock', holderPid: await nameHolder(lockPath, r) })
    guard = r
  }
  try {
    return await fn()
  } finally {
    guard.release()
  }
}

// NODE_DEBUG=agent-os: one line per call (lib/internal/debug.js); a tryAcquire that
// found the lock held logs 'held'. With it off, these are the functions themselves.
// The plain object literal stays as it is so that ES modules can import each name.
module.exports = { tryAcquire, acquire, withLock, NodeLockError }
if (debug.enabled) {
  module.exports.tryAcquire = debug.traceSync('tryAcquire', tryAcquire, { outcome: (r) => (r === undefined ? 'held' : 'ok') })
  module.exports.acquire = debug.traceAsync('acquire', acquire)
  module.exports.withLock = debug.traceAsync('withLock', withLock)
}
