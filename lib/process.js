'use strict'
// @scope/agent-os/process: terminate a spawned process and all its descendants.
//
// The native part (src/process/) finds the descendants, holds each by an identity a
// recycled pid cannot take over, and signals them; this layer follows the contract's
// escalation: preKill, the initial signal, the grace period, SIGKILL, and settling on
// the child's real 'exit' once everything signalled is gone. See docs/process.md.

const os = require('node:os')
const binding = require('./binding.js')

const DEFAULT_KILL_GRACE_MS = 2000

// How often the processes signalled are checked for having exited (a non-blocking
// native call). The interval starts short, so a tree that obeys the signal settles
// quickly, and backs off.
const POLL_FIRST_MS = 2
const POLL_MAX_MS = 50

function typeError (code, message, cause) {
  const err = new TypeError(message, cause === undefined ? undefined : { cause })
  err.code = code
  return err
}

function plainError (code, message) {
  const err = new Error(message)
  err.code = code
  return err
}

function parseOptions (options) {
  if (options === undefined || options === null) {
    return { signal: 'SIGTERM', graceMs: DEFAULT_KILL_GRACE_MS, preKill: undefined }
  }
  if (typeof options !== 'object') {
    throw typeError('INVALID_OPTION', 'killProcessTree: options must be an object')
  }
  let signal, graceMs, preKill
  try {
    ({ signal = 'SIGTERM', graceMs = DEFAULT_KILL_GRACE_MS, preKill } = options)
  } catch (cause) { // a getter or proxy trap threw, or the proxy is revoked
    throw typeError('INVALID_OPTION', 'killProcessTree: options could not be read', cause)
  }
  if (typeof signal !== 'string' || !Object.prototype.hasOwnProperty.call(os.constants.signals, signal)) {
    throw typeError('INVALID_OPTION', 'killProcessTree: options.signal is not a known signal name')
  }
  if (typeof graceMs !== 'number' || !Number.isFinite(graceMs) || graceMs < 0) {
    throw typeError('INVALID_OPTION', 'killProcessTree: options.graceMs must be a finite number >= 0')
  }
  if (preKill !== undefined && typeof preKill !== 'function') {
    throw typeError('INVALID_OPTION', 'killProcessTree: options.preKill must be a function')
  }
  return { signal, graceMs, preKill }
}

function hasExited (child) {
  return (child.exitCode !== null && child.exitCode !== undefined) ||
    (child.signalCode !== null && child.signalCode !== undefined)
}

function checkChild (child) {
  let ok
  try {
    ok = child !== null && (typeof child === 'object' || typeof child === 'function') &&
      typeof child.once === 'function' && typeof child.removeListener === 'function'
  } catch (cause) { // a getter or proxy trap threw, or the proxy is revoked
    throw typeError('INVALID_OPTION', 'killProcessTree: child could not be read', cause)
  }
  if (!ok) throw typeError('INVALID_OPTION', 'killProcessTree: child is not a ChildProcessLike')
}

/**
 * Ends `child` and every descendant found; see the contract and docs/process.md.
 * @param {import('../index').ChildProcessLike} child
 * @param {import('../index').KillProcessTreeOptions} [options]
 * @returns {Promise<void>}
 */
function killProcessTree (child, options) {
  try {
    const opts = parseOptions(options)
    checkChild(child)
    let exited, pid
    try {
      exited = hasExited(child)
      pid = child.pid
    } catch (cause) { // a getter or proxy trap threw
      throw typeError('INVALID_OPTION', 'killProcessTree: child could not be read', cause)
    }
    if (exited) return Promise.resolve() // 1. nothing to do, no signal sent
    if (pid === undefined || pid === null) {
      throw typeError('NOT_SPAWNED', 'killProcessTree: the child was never spawned (no pid, no exit state)')
    }
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid > 0x7fffffff) {
      throw typeError('INVALID_OPTION', 'killProcessTree: child.pid is not a process id')
    }
    if (pid === process.pid) {
      throw typeError('INVALID_OPTION', 'killProcessTree: child.pid is the calling process')
    }
    if (pid === 1) {
      // Never a child this process spawned (init of this pid namespace); walking
      // from it would reach every process of the host.
      throw typeError('INVALID_OPTION', 'killProcessTree: child.pid is the init process')
    }
    const native = binding.part('process')
    if (native === undefined) {
      throw plainError('UNSUPPORTED_BACKEND',
        `killProcessTree: native binding unavailable: ${binding.loadFailure()}`)
    }
    return new Escalation(child, pid, opts, native).run()
  } catch (err) {
    return Promise.reject(err)
  }
}

class Escalation {
  constructor (child, pid, opts, native) {
    this.child = child
    this.pid = pid
    this.opts = opts
    this.native = native
    this.tree = undefined
    this.exited = false
    this.timer = undefined
    this.onWake = undefined
    this.onExit = () => {
      this.exited = true
      if (this.onWake !== undefined) this.onWake()
    }
  }

  async run () {
    const { child, native, opts } = this
    child.once('exit', this.onExit)
    try {
      // 2. preKill first; whatever it throws or rejects with is swallowed.
      if (opts.preKill !== undefined) {
        const preKill = opts.preKill
        try {
          await preKill()
        } catch {}
      }
      if (this.exited || hasExited(child)) return
      // The child's exit has not been seen on this thread, so Node has not reaped it
      // and its pid still names it: take hold of it now, synchronously.
      try {
        this.tree = native.open(this.pid, process.env.AGENT_OS_PROCESS_NO_PIDFD === '1')
      } catch (err) {
        throw plainError('HOST_IO', `killProcessTree: cannot hold the child process (${err.hostCode || err.code})`)
      }
      // 3. The initial signal: the child's group and every descendant found.
      await this.signal(os.constants.signals[opts.signal])
      // 4. After graceMs, SIGKILL if the child or anything signalled is still alive.
      if (!(await this.settled(opts.graceMs))) {
        await this.signal(os.constants.signals.SIGKILL)
        await this.settled(Infinity)
      }
      // 5. Settled: the child's 'exit' was seen and everything signalled is gone.
    } finally {
      this.stopTimer()
      this.onWake = undefined
      child.removeListener('exit', this.onExit)
      if (this.tree !== undefined) this.native.close(this.tree)
    }
  }

  async signal (signum) {
    try {
      await this.native.signal(this.tree, signum)
    } catch {
      // The work could not run (environment shutting down): what was held before is
      // still watched below; there is no failure to report for a kill.
    }
  }

  // Resolves true once the child's 'exit' was seen and every process signalled has
  // exited, or false when `ms` pass first.
  settled (ms) {
    const deadline = ms === Infinity ? Infinity : performance.now() + ms
    return new Promise((resolve) => {
      let delay = POLL_FIRST_MS
      const check = () => {
        this.stopTimer()
        if (this.exited && this.native.alive(this.tree) === 0) {
          this.onWake = undefined
          return resolve(true)
        }
        const left = deadline - performance.now()
        if (left <= 0) {
          this.onWake = undefined
          return resolve(false)
        }
        this.startTimer(check, Math.min(delay, left))
        delay = Math.min(delay * 2, POLL_MAX_MS)
      }
      this.onWake = check
      check()
    })
  }

  startTimer (fn, ms) {
    this.timer = setTimeout(fn, Math.max(1, Math.ceil(ms)))
    // Until the child's 'exit', the child itself keeps the event loop alive; after
    // it, the timer must, or a process that would otherwise exit would leave this
    // promise pending and the escalation undone.
    if (!this.exited) this.timer.unref()
  }

  stopTimer () {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }
}

module.exports = { DEFAULT_KILL_GRACE_MS, killProcessTree }
module.exports.openProcessScope = require('./internal/process-scope.js').openProcessScope
