'use strict'
// NODE_DEBUG=agent-os: one line per operation, with its name, its outcome and how long
// it took, e.g.
//   AGENT-OS 4242: readBytes ok 0.084 ms
//   AGENT-OS 4242: acquire LOCK_TIMEOUT 1002.517 ms
// never a path, a segment, a payload or any other value passed in or returned.
//
// Zero cost when off: NODE_DEBUG is read once, at process start, so `enabled` is fixed
// for the process, and traceSync/traceAsync/traceMethods return or leave the original
// functions untouched when it is false: a hot path runs exactly the code it would run
// without this module.

const util = require('node:util')

const log = util.debuglog('agent-os')
/** Whether NODE_DEBUG names agent-os (fixed for the life of the process). */
const enabled = log.enabled

const OPERATION = /^[A-Za-z][A-Za-z0-9]{0,63}$/
const CODE = /^[A-Z][A-Z0-9_]{0,63}$/
const WORD = /^[a-z][a-z-]{0,31}$/

/** The outcome word of a failure: its `code` when it is a constant-like code
 * (INVALID_PATH, ERR_INVALID_ARG_TYPE), else its class name, else 'error'. */
function failureOutcome (err) {
  let code, name
  try {
    code = err !== null && typeof err === 'object' ? err.code : undefined
    name = err !== null && typeof err === 'object' ? err.name : undefined
  } catch {
    return 'error'
  }
  if (typeof code === 'string' && CODE.test(code)) return code
  if (typeof name === 'string' && OPERATION.test(name)) return name
  return 'error'
}

function line (operation, outcome, started) {
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  log('%s %s %s ms', operation, outcome, ms.toFixed(3))
}

/** The outcome of a success: 'ok', or a fixed word `outcome(result)` returns (e.g.
 * 'held' for a tryAcquire that got nothing); anything else it returns counts as 'ok'. */
function successOutcome (outcome, result) {
  if (outcome === undefined) return 'ok'
  let word
  try { word = outcome(result) } catch { return 'ok' }
  return typeof word === 'string' && WORD.test(word) ? word : 'ok'
}

function named (wrapper, fn) {
  Object.defineProperty(wrapper, 'name', { value: fn.name, configurable: true })
  Object.defineProperty(wrapper, 'length', { value: fn.length, configurable: true })
  return wrapper
}

function checkOperation (operation) {
  if (typeof operation !== 'string' || !OPERATION.test(operation)) throw new TypeError('debug: operation must be an identifier')
}

/** `fn` itself when tracing is off; else a function that calls it with the same `this`
 * and arguments, logs one line when it returns or throws, and returns or rethrows. */
function traceSync (operation, fn, { outcome } = {}) {
  checkOperation(operation)
  if (!enabled) return fn
  return named(function traced (...args) {
    const started = process.hrtime.bigint()
    let result
    try {
      result = Reflect.apply(fn, this, args)
    } catch (err) {
      line(operation, failureOutcome(err), started)
      throw err
    }
    line(operation, successOutcome(outcome, result), started)
    return result
  }, fn)
}

/** As traceSync for a function returning a promise: the line is logged when the promise
 * settles, and the caller gets that same promise (its identity and its rejection are
 * the caller's; the trace handles its own branch). */
function traceAsync (operation, fn, { outcome } = {}) {
  checkOperation(operation)
  if (!enabled) return fn
  return named(function traced (...args) {
    const started = process.hrtime.bigint()
    let promise
    try {
      promise = Reflect.apply(fn, this, args)
    } catch (err) {
      line(operation, failureOutcome(err), started)
      throw err
    }
    if (promise === null || (typeof promise !== 'object' && typeof promise !== 'function') || typeof promise.then !== 'function') {
      line(operation, successOutcome(outcome, promise), started)
      return promise
    }
    promise.then(
      (result) => line(operation, successOutcome(outcome, result), started),
      (err) => line(operation, failureOutcome(err), started)
    )
    return promise
  }, fn)
}

/** Replaces, when tracing is on, the named methods of `proto`: `{ readBytes: 'async',
 * readBytesSync: 'sync' }`. The logged operation is the method's name. */
function traceMethods (proto, methods) {
  for (const [name, kind] of Object.entries(methods)) {
    checkOperation(name)
    if (kind !== 'sync' && kind !== 'async') throw new TypeError('debug: a method is traced as sync or async')
    const desc = Object.getOwnPropertyDescriptor(proto, name)
    if (!desc || typeof desc.value !== 'function') throw new TypeError('debug: no such method')
    if (!enabled) continue
    const traced = (kind === 'sync' ? traceSync : traceAsync)(name, desc.value)
    Object.defineProperty(proto, name, { ...desc, value: traced })
  }
  return proto
}

module.exports = { enabled, traceSync, traceAsync, traceMethods }
