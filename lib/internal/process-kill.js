'use strict'
// killProcessTree: terminate a spawned process and all its descendants
// (lib/process.js exports it).
//
// The native part (src/process/) finds the descendants, holds each by an identity a
// recycled pid cannot take over, and signals them; this layer follows the contract's
// escalation: preKill, the initial signal, the grace period, SIGKILL, and settling on
// the child's real 'exit' once everything signalled is gone. See docs/process.md.

const os = require('node:os')
const { ChildProcess } = require('node:child_process')
const binding = require('../binding.js')
const errors = require('./process-errors.js')
const args = require('./args.js')

const DEFAULT_KILL_GRACE_MS = 2000

// How often the processes signalled are checked for having exited (a non-blocking
// native call). The interval starts short, so a tree that obeys the signal settles
// quickly, and backs off.
const POLL_FIRST_MS = 2
const POLL_MAX_MS = 50

// The native open() flags (src/process/process.h).
const FLAG_NO_PIDFD = 1
const FLAG_NO_PGROUP_FD = 2
const FLAG_CHILD = 4
const FLAG_REAPED = 8
// What native.caller() reports: the root (and, without a process table, its group) is
// this layer's to signal (src/process/process.h, aos_proc_tree_caller).
const CALLER_ROOT = 1
const CALLER_GROUP = 2
const { SIGSTOP, SIGCONT, SIGKILL } = os.constants.signals

// Resolves in the check phase of the event loop. libuv reaps children in one pass
// (uv__wait_children: waitpid for every process handle, then each exit callback in
// turn, and Node emits 'exit' inside it); JavaScript runs inside such a pass only in
// an exit listener and the microtasks after it. A setImmediate callback never does:
// there, a real ChildProcess whose exit state is unset has not been reaped, so its pid
// is still its own until this thread reaps it.
function checkPhase () {
  return new Promise((resolve) => setImmediate(resolve))
}

// Private switches that force a fallback path on a host that has the feature, so
// that the tests run every path (docs/process.md, "Fallback paths"). Read once, here.
//   AGENT_OS_PROCESS_FORCE=no-pidfd       identities by pid + start time (kernels
//                                         before 5.3; the path macOS takes)
//   AGENT_OS_PROCESS_FORCE=no-pgroup-fd   no PIDFD_SIGNAL_PROCESS_GROUP (before 6.9)
// (AGENT_OS_PROCESS_NO_PIDFD=1 is the older spelling of no-pidfd.)
const FORCED = (() => {
  const names = String(process.env.AGENT_OS_PROCESS_FORCE || '').split(',').map((s) => s.trim())
  let flags = 0
  if (names.includes('no-pidfd') || process.env.AGENT_OS_PROCESS_NO_PIDFD === '1') flags |= FLAG_NO_PIDFD | FLAG_NO_PGROUP_FD
  if (names.includes('no-pgroup-fd')) flags |= FLAG_NO_PGROUP_FD
  return flags
})()

/** A bad argument of killProcessTree: `argument` names it and `expected` says what it
 * must be (fixed texts); NOT_SPAWNED gives a `reason` instead. */
function typeError (code, argument, expected, cause, reason) {
  return errors.typeError(code, 'killProcessTree', argument, expected, { cause, reason })
}

function plainError (code, hostCode, reason) {
  return errors.plainError(code, 'killProcessTree', reason, hostCode)
}

const KILL_OPTIONS = args.defineOptions('killProcessTree', {
  signal: args.signalName('SIGTERM'),
  graceMs: args.nonNegative(DEFAULT_KILL_GRACE_MS),
  preKill: args.func()
})

/** { signal, graceMs, preKill } through the package's argument checker: unknown keys
 * (`{ timeout }`) refused, each option read once. */
function parseOptions (options) {
  return KILL_OPTIONS.read(options, errors.raise)
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
    throw typeError('INVALID_OPTION', 'target', 'could not be read', cause)
  }
  if (!ok) throw typeError('INVALID_OPTION', 'target', 'must be a ChildProcessLike or a process id')
}

// A pid target (the number itself, or a ChildProcessLike's pid): a positive integer,
// not this process, not 1 (init: a walk from it would reach the whole host).
function checkPid (pid, argument) {
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0 || pid > 0x7fffffff) {
    throw typeError('INVALID_OPTION', argument, 'must be a process id (a positive integer)')
  }
  if (pid === process.pid) throw typeError('INVALID_OPTION', argument, 'must not be the calling process')
  if (pid === 1) throw typeError('INVALID_OPTION', argument, 'must not be the init process')
}

// The id of a thread that is not its process's main thread: kill(2) of it would end
// its whole process (contract 0.3). Where it cannot be told (no /proc and no pidfd),
// nothing can be held either, so nothing is signalled.
function checkNotThread (native, id, argument) {
  let thread = false
  try {
    thread = native.isThread(id)
  } catch {}
  if (thread) throw typeError('INVALID_OPTION', argument, 'must be a process id, not the id of a thread within a process')
}

function nativePart () {
  const native = binding.part('process')
  if (native === undefined) {
    throw plainError('UNSUPPORTED_BACKEND', undefined, `native binding unavailable: ${binding.loadFailure()}`)
  }
  return native
}

/**
 * Ends `target` and every descendant found; see the contract and docs/process.md.
 * @param {import('../../index').ChildProcessLike | number} target
 * @param {import('../../index').KillProcessTreeOptions} [options]
 * @returns {Promise<void>}
 */
function killProcessTree (target, options) {
  try {
    // The target's shape first, then the options (both before the "already exited"
    // shortcut): arguments passed the wrong way round name the target.
    if (typeof target === 'number') checkPid(target, 'target')
    else checkChild(target)
    const opts = parseOptions(options)
    if (typeof target === 'number') {
      checkPid(target, 'target')
      const native = nativePart()
      checkNotThread(native, target, 'target')
      // A pid that names no process resolves at once (signal 0 sends nothing).
      try { process.kill(target, 0) } catch (err) { if (err.code === 'ESRCH') return Promise.resolve() }
      return new Escalation(undefined, target, opts, native, FORCED).run()
    }
    const child = target
    checkChild(child)
    let exited, pid
    try {
      exited = hasExited(child)
      pid = child.pid
    } catch (cause) { // a getter or proxy trap threw
      throw typeError('INVALID_OPTION', 'target', 'could not be read', cause)
    }
    if (exited) return Promise.resolve() // 1. nothing to do, no signal sent
    if (pid === undefined || pid === null) {
      throw typeError('NOT_SPAWNED', 'target', undefined, undefined, 'the child was never spawned (no pid, no exit state)')
    }
    checkPid(pid, 'target.pid')
    const native = nativePart()
    // A look-alike's pid is the caller's word; a real ChildProcess's is a process's.
    if (!(child instanceof ChildProcess)) checkNotThread(native, pid, 'target.pid')
    // A real ChildProcess is this process's child, reaped only on this thread's event
    // loop: whether it was reaped is decided there (Escalation.run).
    const flags = FORCED | (child instanceof ChildProcess ? FLAG_CHILD : 0)
    return new Escalation(child, pid, opts, native, flags).run()
  } catch (err) {
    return Promise.reject(err)
  }
}

class Escalation {
  constructor (child, pid, opts, native, flags) {
    this.child = child // undefined for a pid target
    this.pid = pid
    this.opts = opts
    this.native = native
    this.flags = flags
    this.tree = undefined
    this.exited = child === undefined // a pid target has no 'exit' to wait for
    this.caller = 0 // CALLER_* bits: what this layer signals itself
    this.sig = os.constants.signals[opts.signal]
    this.timer = undefined
    this.onWake = undefined
    this.onExit = () => {
      this.exited = true
      if (this.onWake !== undefined) this.onWake()
    }
  }

  async run () {
    const { child, native, opts } = this
    if (child !== undefined) child.once('exit', this.onExit)
    // Until it settles, this keeps the event loop alive (even for an unref()'d
    // child), so the force-kill is never skipped by the process exiting.
    const keepAlive = setInterval(() => {}, 1 << 30)
    try {
      // 2. preKill first; whatever it throws or rejects with is swallowed.
      if (opts.preKill !== undefined) {
        const preKill = opts.preKill
        try {
          await preKill()
        } catch {}
      }
      if (child !== undefined && (this.exited || hasExited(child))) return
      let flags = this.flags
      if (flags & FLAG_CHILD) {
        // The child's exit has not been emitted, but this call may run inside libuv's
        // reap pass (an 'exit' listener of another child, or a microtask after one):
        // the child may be reaped already and its pid given to a new child. So the
        // first look is taken outside any pass, in one synchronous step: an exit
        // emitted by then means the pid is no longer the child's (never held or
        // signalled, its group still ended); none means it is the child's, and the
        // native part takes hold of it now (pidfd).
        await checkPhase()
        if (this.exited || hasExited(child)) flags |= FLAG_REAPED
      }
      try {
        this.tree = native.open(this.pid, flags)
        this.caller = native.caller(this.tree)
      } catch (err) {
        throw plainError('HOST_IO', err.hostCode || 'EIO', 'cannot hold the process')
      }
      // 3. The initial signal: the child's group and every descendant found.
      await this.signal(this.sig)
      // 4. After graceMs, SIGKILL if the child or anything signalled is still alive.
      if (!(await this.settled(opts.graceMs))) {
        this.sig = os.constants.signals.SIGKILL
        await this.signal(this.sig)
        await this.settled(Infinity)
      }
      // 5. Settled: the child's 'exit' was seen, everything signalled is gone, and a
      // last walk found nothing alive in the group or below a live member.
    } finally {
      clearInterval(keepAlive)
      this.stopTimer()
      this.onWake = undefined
      if (child !== undefined) child.removeListener('exit', this.onExit)
      if (this.tree !== undefined) this.native.close(this.tree)
    }
  }

  async signal (signum) {
    // A child held without a pidfd is signalled from here (native.caller): stopped
    // first, so that it cannot fork while the tree below it is walked, then sent the
    // signal once the rest of the tree was.
    if ((this.caller & CALLER_ROOT) && signum !== SIGSTOP) await this.callerSignal(SIGSTOP)
    try {
      await this.native.signal(this.tree, signum)
    } catch {
      // The work could not run (environment shutting down): what was held before is
      // still watched below; there is no failure to report for a kill.
    }
    if (this.caller & CALLER_ROOT) {
      await this.callerSignal(signum)
      if (signum !== SIGKILL && signum !== SIGSTOP) await this.callerSignal(SIGCONT)
    }
  }

  // Signals the child by its pid (and its group by number, CALLER_GROUP) from a
  // callback of this thread outside any reap pass, only while its exit state is
  // unset: then it is not reaped, and the number names it and its group alone.
  async callerSignal (signum) {
    await checkPhase()
    if (this.exited || hasExited(this.child)) return
    try { process.kill(this.pid, signum) } catch {}
    if (this.caller & CALLER_GROUP) {
      try { process.kill(-this.pid, signum) } catch {}
    }
  }

  // The last walk before settling: resolves the number of processes that still keep
  // the tree from settling (0 when the work could not run: nothing more to do).
  async lastWalk () {
    try {
      return await this.native.settle(this.tree, this.sig, this.exited)
    } catch {
      return 0
    }
  }

  // Resolves true once the child's 'exit' was seen, every process signalled has
  // exited and the group is empty, or false when `ms` pass first.
  settled (ms) {
    const deadline = ms === Infinity ? Infinity : performance.now() + ms
    return new Promise((resolve) => {
      let delay = POLL_FIRST_MS
      let walking = false
      const check = () => {
        if (walking) return
        this.stopTimer()
        if (this.exited && this.native.alive(this.tree, true) === 0) {
          walking = true
          this.lastWalk().then((pending) => {
            walking = false
            if (pending === 0) {
              this.onWake = undefined
              return resolve(true)
            }
            next()
          })
          return
        }
        next()
      }
      const next = () => {
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
  }

  stopTimer () {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
  }
}

module.exports = { DEFAULT_KILL_GRACE_MS, killProcessTree }
