'use strict'
// @scope/agent-os/node-lock: a nonblocking lock for cooperating processes, carried by
// an operating-system lock on an open handle (flock / LockFileEx). The native part
// (src/node_lock/) does every host step; this file checks arguments, types errors and
// runs the bounded retry loop of acquire(). See docs/node-lock.md.

const binding = require('./binding.js')
const debug = require('./internal/debug.js')
const { formatMessage, kMessage } = require('./internal/message.js')

const CODES = new Set(['INVALID_PATH', 'UNSAFE_ENTRY', 'LOCK_HELD', 'LOCK_TIMEOUT', 'UNSUPPORTED_BACKEND', 'HOST_IO'])

const kReason = Symbol('reason')
const UNSAFE_REASON = 'the entry at the lock path is not a guard file; it was left as it was'

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
    const reason = d.reason !== undefined ? d.reason : code === 'UNSAFE_ENTRY' ? UNSAFE_REASON : undefined
    super(formatMessage({ operation, code, holderPid, hostCode, reason, argument: d.argument, expected: d.expected }, 'nodeLock'))
    Object.defineProperty(this, 'name', { value: 'NodeLockError', enumerable: false, configurable: true, writable: true })
    this.code = code
    this.operation = operation
    if (holderPid !== undefined) this.holderPid = holderPid
    if (hostCode !== undefined) this.hostCode = hostCode
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

/** A bad argument: `argument` names it, `expected` says what it must be (fixed texts). */
function invalid (operation, argument, expected) {
  return new NodeLockError('INVALID_PATH', { operation, [kMessage]: { argument, expected } })
}

function checkPath (lockPath, operation) {
  const ok = typeof lockPath === 'string' && lockPath.length > 0 && !lockPath.includes('\0') &&
    (isWindows
      ? /^(?:[A-Za-z]:[\\/]|[\\/]{2}[^\\/])/.test(lockPath) && !/[\\/]$/.test(lockPath)
      // Absolute, and not ending in a separator (a name that does can never be a file).
      : lockPath.charCodeAt(0) === 0x2f && lockPath.charCodeAt(lockPath.length - 1) !== 0x2f)
  if (!ok) throw invalid(operation, 'lockPath', 'must be an absolute path to a file (a string without NUL, not ending in a separator)')
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
function tryAcquire (lockPath) {
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

// Reads acquire's (and withLock's) options. Each option is read once, so a getter
// cannot change it between check and use. `waits` tells whether the caller asked
// for a wait at all (withLock waits only then).
function checkAcquireOptions (options, operation) {
  if (options === undefined || options === null) return { timeoutMs: DEFAULT_TIMEOUT_MS, signal: undefined, waits: false }
  if (typeof options !== 'object') throw invalid(operation, 'options', 'must be an object')
  let given, signal
  try {
    given = options.timeoutMs
    signal = options.signal
  } catch {
    throw invalid(operation, 'options', 'could not be read') // a getter or proxy trap threw
  }
  if (given !== undefined && (typeof given !== 'number' || !Number.isFinite(given) || given < 0)) {
    throw invalid(operation, 'options.timeoutMs', 'must be a finite number >= 0')
  }
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw invalid(operation, 'options.signal', 'must be an AbortSignal')
  }
  return { timeoutMs: given === undefined ? DEFAULT_TIMEOUT_MS : given, signal, waits: given !== undefined || signal !== undefined }
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
 * passes (LOCK_TIMEOUT) or `signal` aborts (its reason). */
async function acquire (lockPath, options) {
  checkPath(lockPath, 'acquire')
  const { timeoutMs, signal } = checkAcquireOptions(options, 'acquire')
  nativePart('acquire')
  return waitFor(lockPath, 'acquire', timeoutMs, signal)
}

/** Runs `fn` holding the lock, and releases after `fn` settles, however it settles.
 * Without options, LOCK_HELD at once when the lock is held; with `timeoutMs` or
 * `signal`, waits as acquire does. */
async function withLock (lockPath, fn, options) {
  checkPath(lockPath, 'withLock')
  if (typeof fn !== 'function') throw invalid('withLock', 'fn', 'must be a function')
  const { timeoutMs, signal, waits } = checkAcquireOptions(options, 'withLock')
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
