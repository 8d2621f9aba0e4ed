'use strict'
// The package's one argument checker, shared by all three subpaths and the in-memory
// stand-in of file-authority/testing.
//
// An operation's options are described once, as a spec: each key it knows and the rule
// its value must follow. Reading options through a spec
//   - refuses an options argument that is not an object (null and undefined mean "no
//     options" unless the spec requires some);
//   - refuses every key the operation does not know, never ignores it (a `{ flag: 'a' }`
//     must not turn an append into a replace): the message names the key only when it
//     is a plain identifier of at most 32 characters, otherwise it says "an unknown
//     option";
//   - reads each known key exactly once (a getter or a proxy cannot change a value
//     between its check and its use) and checks it, returning plain, checked values.
// Every refusal is made by the subpath's own `raise(code, operation, argument,
// expected)` (its error class), with `argument` naming what is at fault
// (`options.mode`) and `expected` a fixed text of this package saying what it must be.
// The code is INVALID_OPTION unless the rule says otherwise (file-authority's byte
// budget `maxBytes` is INVALID_PATH, as the contract divides them).

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]{0,31}$/
const hasOwn = (object, key) => Object.prototype.hasOwnProperty.call(object, key)
const NONE = Object.freeze({})

/**
 * A rule: `check(value, ctx)` returns the checked value (or the default when `value`
 * is undefined); `ctx.bad(expected, code?)` throws the subpath's error for this
 * option. `expected` is the rule's text, used for a required key that is missing.
 */
function rule (expected, check, code) {
  return Object.freeze({ expected, check, code })
}

/** An optional boolean (`fallback` when left out). */
function bool (fallback = false) {
  return rule('must be a boolean', (value, ctx) => {
    if (value === undefined) return fallback
    if (typeof value !== 'boolean') throw ctx.bad('must be a boolean')
    return value
  })
}

/** A safe integer from `min` to `max` (`maxText` names the bound); required unless a
 * `fallback` is given. */
function safeInteger (min, max, maxText, fallback, code) {
  const expected = `must be a safe integer from ${min} to ${maxText}`
  return rule(expected, (value, ctx) => {
    if (value === undefined && fallback !== undefined) return fallback
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) throw ctx.bad(expected)
    return value
  }, code)
}

/** Permission bits: an integer from 0 to 0o777 (no set-id or sticky bit). */
function permissionBits (fallback) {
  const expected = 'must be an integer from 0 to 0o777 (permission bits only)'
  return rule(expected, (value, ctx) => {
    if (value === undefined) return fallback
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0o777) throw ctx.bad(expected)
    return value
  })
}

/** A finite number >= 0 (`fallback` when left out). */
function nonNegative (fallback) {
  const expected = 'must be a finite number >= 0'
  return rule(expected, (value, ctx) => {
    if (value === undefined) return fallback
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw ctx.bad(expected)
    return value
  })
}

/** A signal name, a key of os.constants.signals ('SIGTERM'), `fallback` when left out. */
function signalName (fallback) {
  const { signals } = require('node:os').constants
  const expected = "must be a known signal name (a key of os.constants.signals, such as 'SIGTERM' or 'SIGKILL')"
  return rule(expected, (value, ctx) => {
    if (value === undefined) return fallback
    if (typeof value !== 'string' || !hasOwn(signals, value)) throw ctx.bad(expected)
    return value
  })
}

/** An optional function. */
function func () {
  return rule('must be a function', (value, ctx) => {
    if (value !== undefined && typeof value !== 'function') throw ctx.bad('must be a function')
    return value
  })
}

/** An optional value accepted by `test` (which never throws), `expected` saying what. */
function custom (expected, test, code) {
  return rule(expected, (value, ctx) => {
    if (value !== undefined && !test(value)) throw ctx.bad(expected)
    return value
  }, code)
}

/**
 * The options of `operation`: `rules` maps each known key to its rule; `required`
 * lists the keys that must be given (in the order they are reported when missing).
 * `ownKeys`: only the object's own enumerable keys are options (as child_process.spawn
 * copies them); otherwise inherited enumerable keys count too, as a plain `options.key`
 * read (Node's fs) would see them. Returns `read(options, raise)`.
 */
function defineOptions (operation, rules, { required = [], ownKeys = false } = {}) {
  const keys = Object.freeze(Object.keys(rules))
  const known = keys.length === 0 ? 'takes no options' : `takes ${keys.join(', ')}`
  const requiredSet = new Set(required)

  function refuseKey (key, raise) {
    if (IDENTIFIER.test(key)) {
      return raise('INVALID_OPTION', operation, `options.${key}`, `is not an option of ${operation} (it ${known})`)
    }
    return raise('INVALID_OPTION', operation, 'options', `has an unknown option (${operation} ${known})`)
  }

  function read (options, raise) {
    let given = options
    if (given === undefined || given === null) {
      if (required.length > 0) {
        const key = required[0]
        const r = rules[key]
        throw raise(r.code || 'INVALID_OPTION', operation, `options.${key}`, r.expected)
      }
      given = NONE
    } else if (typeof given !== 'object') {
      throw raise('INVALID_OPTION', operation, 'options', required.length > 0 ? `must be an object with ${required.join(' and ')}` : 'must be an object')
    }
    if (given !== NONE) {
      let unknown
      try {
        const names = ownKeys ? Object.keys(given) : undefined
        if (names !== undefined) {
          for (let i = 0; i < names.length && unknown === undefined; i++) if (!hasOwn(rules, names[i])) unknown = names[i]
        } else {
          for (const key in given) {
            if (!hasOwn(rules, key)) {
              unknown = key
              break
            }
          }
        }
      } catch {
        throw raise('INVALID_OPTION', operation, 'options', 'could not be read')
      }
      if (unknown !== undefined) throw refuseKey(unknown, raise)
    }
    const out = {}
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]
      const r = rules[key]
      const argument = `options.${key}`
      let value
      try {
        value = ownKeys && !hasOwn(given, key) ? undefined : given[key]
      } catch {
        throw raise(r.code || 'INVALID_OPTION', operation, argument, 'could not be read')
      }
      if (value === undefined && requiredSet.has(key)) throw raise(r.code || 'INVALID_OPTION', operation, argument, r.expected)
      out[key] = r.check(value, {
        bad: (expected, code) => raise(code || r.code || 'INVALID_OPTION', operation, argument, expected)
      })
    }
    return out
  }

  return Object.freeze({ operation, keys, read })
}

/**
 * An operation that takes no options argument at all (`stat`, `tryAcquire`): anything
 * but undefined in that place is refused, so a misplaced options object is never
 * silently ignored.
 */
function noOptions (value, operation, raise, argument = 'options') {
  if (value !== undefined) throw raise('INVALID_OPTION', operation, argument, `must be left out (${operation} takes no options)`)
}

/**
 * Makes a rejection's stack name the caller's own frame, as fs/promises does: attached
 * as the last step of the promise returned to the caller, the handler runs in a
 * reaction whose promise the caller awaits, so the stack captured there holds the
 * awaiting function's frame (V8's async stack traces follow a chain of promises that
 * each have one reaction). Only errors the package made (`isOurs`) are touched: a
 * caller's own error passing through (withLock's fn) keeps its stack, and so do the
 * package's errors made synchronously in the caller's stack (rejectNow).
 */
function withCallerStack (promise, isOurs) {
  return promise.then(undefined, function restack (err) {
    if (err instanceof Error && !hasOwn(err, kStackNamesCaller) && isOurs(err)) Error.captureStackTrace(err, restack)
    throw err
  })
}

// Set on errors made synchronously in the caller's stack (their stack already names it).
const kStackNamesCaller = Symbol('stack names the caller')
function markSync (err) {
  if (err !== null && typeof err === 'object') {
    try {
      Object.defineProperty(err, kStackNamesCaller, { value: true })
    } catch {}
  }
  return err
}

/** A rejection of an error thrown synchronously inside an async method: its stack
 * already names the caller. */
function rejectNow (err) {
  return Promise.reject(markSync(err))
}

module.exports = {
  IDENTIFIER,
  defineOptions,
  noOptions,
  rule,
  bool,
  safeInteger,
  permissionBits,
  nonNegative,
  signalName,
  func,
  custom,
  withCallerStack,
  rejectNow,
  markSync
}
