'use strict'
// Process scopes: every process a command ever starts, however it forks and whatever
// session or group it moves to, held so that one kill() ends them all and settles
// only when none is left. See docs/process-scopes.md.
//
// Backends (chosen per scope at open, or forced for the project's tests by the
// private AGENT_OS_PROCESS_SCOPE_BACKEND=cgroup|subreaper|job|tree, read once at load):
//   cgroup     Linux, a cgroup v2 directory this user may create (root, or a
//              delegated subtree): a fresh cgroup per scope; each command runs under
//              a reaper that enters it first and is the init of a PID namespace of
//              its own (src/process/scope_helper.c); cgroup.kill ends it.
//   subreaper  Linux elsewhere: each command runs under a reaper that is the init of
//              a PID namespace of its own (inside a user namespace when the caller is
//              not privileged); where no namespace can be made, a child subreaper.
//   job        Windows: a kill-on-close Job Object per scope; each command runs under
//              a helper that enters the job before it starts the command
//              (src/process/scope_helper_win32.c); TerminateJobObject ends it.
//   tree       elsewhere (macOS) or without the helper program: each command is
//              spawned in its own group and ended with killProcessTree.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const childProcess = require('node:child_process')
const crypto = require('node:crypto')
const binding = require('../binding.js')
const errors = require('./process-errors.js')
const args = require('./args.js')
const host = require('./process-host.js')
const { checkSpawnArgs, resolveShell, windowsCommand, cannotRun, cannotRunWindows, failedSpawn } = require('./process-spawn.js')

const FORCED = process.env.AGENT_OS_PROCESS_SCOPE_BACKEND
const BACKENDS = ['cgroup', 'subreaper', 'job', 'tree']
const POLL_FIRST_MS = 2
const POLL_MAX_MS = 50
// How long a helper (the ChildProcess) may outlive its reaper before it is SIGKILLed:
// it exits as soon as its reaper is gone, unless someone stopped it.
const HELPER_LINGER_MS = 1000
const { SIGKILL, SIGSTOP, SIGCONT } = os.constants.signals

// Messages read as lib/internal/message.js's one format:
//   <operation> failed: <CODE>[: <argument> <expected> | : <reason>][ (hostCode)]
// every part a fixed text of this package (never a command, an argument or a value).

/** A bad argument of `operation`: `argument` names it, `expected` says what it must
 * be. A ProcessTreeTypeError (a TypeError, and `instanceof ProcessTreeError`). */
function typeError (code, operation, argument, expected) {
  return errors.typeError(code, operation, argument, expected)
}

/** A refusal of `operation` (UNSUPPORTED_BACKEND, SCOPE_CLOSED): a ProcessTreeError. */
function plainError (code, operation, reason, hostCode) {
  return errors.plainError(code, operation, reason, hostCode)
}

// Resolves in the check phase: outside libuv's reap pass, where a ChildProcess whose
// exit state is unset has not been reaped (lib/internal/process-kill.js).
function checkPhase () {
  return new Promise((resolve) => setImmediate(resolve))
}

// ---- argument checks ------------------------------------------------------------

const SCOPE_KILL_OPTIONS = args.defineOptions('kill', { signal: args.signalName('SIGTERM'), graceMs: args.nonNegative(2000) })
const OPEN_OPTIONS = args.defineOptions('openProcessScope', {})

/** scope.kill's { signal, graceMs } through the package's argument checker. */
function checkKillOptions (options) {
  return SCOPE_KILL_OPTIONS.read(options, errors.raise)
}

// Open jobs, held here so that a scope the caller dropped is not ended by the garbage
// collector (the job's handle closing would kill it): a scope ends by close() or
// with the Node process, as on the other backends.
const openJobs = new Set()

// ---- the scope ------------------------------------------------------------------

let scopeCounter = 0

class ProcessScope {
  #backend
  #closed = false
  #children = new Set() // ChildProcess objects spawned in the scope
  #cg // cgroup: { dir, cgpath, name, hasKill, keeper }
  #ns // the helper's namespace letters: 'n', 'nu', or '' (none: a plain subreaper)
  #members = new Set() // cgroup, subreaper: { child, attach: Promise, pidfd, rpid, goneAt }
  #job // job: { handle, name } of the scope's Job Object
  #native

  constructor (backend, state) {
    this.#backend = backend
    this.#cg = state.cg
    this.#ns = state.ns || ''
    this.#job = state.job
    this.#native = state.native
  }

  /** Which backend holds this scope: 'cgroup', 'subreaper', 'job' or 'tree'. */
  get backend () { return this.#backend }
  get closed () { return this.#closed }
  // close() has begun: spawn is refused from then on (a command started while close()
  // runs would be started after the kill that close() waits for).
  #closing = false
  // A kill() running its last phase (everything SIGKILLed): members that report in
  // meanwhile (spawned during the kill) are killed as they do.
  #finalKill = false

  /**
   * child_process.spawn's signature; returns a real ChildProcess whose command (and
   * everything it starts) is inside the scope.
   */
  spawn (command, args, options) {
    if (this.#closed || this.#closing) throw plainError('SCOPE_CLOSED', 'spawn')
    const a = checkSpawnArgs(command, args, options)
    let child
    if (this.#backend === 'tree') child = this.#spawnTree(a)
    else if (this.#backend === 'job') child = this.#spawnJob(a)
    else child = this.#spawnRun(a)
    this.#children.add(child)
    child.once('exit', () => {
      if (this.#members.size === 0 || ![...this.#members].some((m) => m.child === child)) this.#children.delete(child)
    })
    child.once('error', () => {
      // A spawn that failed (no process): nothing of it is left to wait for.
      if (child.pid === undefined) this.#children.delete(child)
    })
    return child
  }

  #spawnTree ({ command, args, options }) {
    const opts = { ...options }
    if (process.platform !== 'win32') opts.detached = true // its own group, for killProcessTree
    return childProcess.spawn(command, args, opts)
  }

  #spawnJob ({ command, args, options }) {
    const { file, line } = windowsCommand(command, args, options)
    // A command that is not found fails as spawn fails ('error', ENOENT, naming the
    // caller's file), and nothing runs: the helper is not started.
    if (cannotRunWindows(file, options) !== '') {
      const argv0 = typeof options.argv0 === 'string' ? options.argv0 : file
      return failedSpawn(file, argv0, args, options, 'ENOENT')
    }
    const opts = { ...options, shell: false, windowsVerbatimArguments: false }
    delete opts.argv0
    return childProcess.spawn(host.findHelper(), ['job', this.#job.name, options.detached ? 'd' : '-', file, line], opts)
  }

  // Whether every helper of the scope is inside the job (it enters before it starts
  // its command) or has exited: only then can TerminateJobObject reach all of it.
  #jobAttached () {
    const inJob = new Set(this.#native.jobPids(this.#job.handle))
    for (const c of this.#children) {
      if (c.pid === undefined || c.exitCode !== null || c.signalCode !== null) continue
      if (!inJob.has(c.pid)) return false
    }
    return true
  }

  // cgroup and subreaper: `agent_os_scope_helper run` (src/process/scope_helper.c).
  #spawnRun ({ command, args, options }) {
    const { file, argv, argv0 } = resolveShell(command, args, options)
    // A command that cannot be executed fails as spawn fails ('error', ENOENT or
    // EACCES, naming the caller's file), and nothing runs: the helper is not started.
    const code = cannotRun(file, options)
    if (code !== '') {
      const failed = failedSpawn(file, argv0, argv, options, code)
      if (failed !== undefined) return failed
    }
    let stdio = options.stdio
    if (stdio === undefined || stdio === null) stdio = ['pipe', 'pipe', 'pipe']
    else if (typeof stdio === 'string') stdio = [stdio, stdio, stdio]
    else stdio = stdio.slice()
    while (stdio.length < 3) stdio.push(undefined)
    const hsIndex = stdio.length
    stdio.push('pipe') // the handshake: the helper writes its reaper's pid, then closes it
    const opts = { ...options, stdio, shell: false }
    delete opts.argv0
    // A root caller's helper enters the cgroup and the namespaces as root, and the
    // command drops to uid/gid (as libuv does) only then; any other caller's spawn
    // drops the helper itself, and fails as spawn fails when that is refused.
    let uid = '-'
    let gid = '-'
    if (process.geteuid() === 0) {
      if (opts.uid !== undefined) uid = String(opts.uid >>> 0)
      if (opts.gid !== undefined) gid = String(opts.gid >>> 0)
      delete opts.uid
      delete opts.gid
    }
    const letters = (this.#ns === '' ? 'p' : this.#ns) + (options.detached ? 'd' : '')
    const procs = this.#cg === undefined ? '-' : path.join(this.#cg.dir, 'cgroup.procs')
    const child = childProcess.spawn(host.findHelper(), ['run', `${hsIndex}:${process.pid}`, letters, procs, uid, gid, argv0, file, ...argv], opts)
    // What the ChildProcess says it runs (and any error of it names): the caller's.
    child.spawnfile = file
    child.spawnargs = [argv0, ...argv]
    // A spawn that failed at once (EMFILE: no descriptor for the pipes) has no stdio;
    // its ChildProcess emits 'error' as child_process.spawn's does (red team: this
    // threw a TypeError instead, and the error went unheard).
    const hs = child.stdio === undefined || child.stdio === null ? undefined : child.stdio[hsIndex]
    if (Array.isArray(child.stdio)) child.stdio.length = hsIndex // what the caller asked for
    const member = { child, rpid: 0, pidfd: undefined, attach: undefined, attached: false, goneAt: undefined }
    member.attach = new Promise((resolve) => {
      const reported = () => {
        member.attached = true
        resolve()
      }
      if (hs === null || hs === undefined) return reported()
      let text = ''
      hs.setEncoding('latin1')
      hs.on('data', (d) => { text += d })
      hs.on('error', () => {})
      hs.once('close', () => {
        const rpid = /^(\d+)\n/.exec(text)
        if (rpid !== null) {
          try {
            // R is this process's child (CLONE_PARENT) that libuv does not know: only
            // this module reaps it, so its pid is its own until then.
            member.pidfd = this.#native.pidfd(Number(rpid[1]))
            member.rpid = Number(rpid[1])
            this.#native.control(member.pidfd, 0) // attached: it may exit once empty
            if (this.#finalKill) this.#killMember(member)
          } catch {
            // No hold on the reaper (pidfd_open failed: out of descriptors, say):
            // nothing could end what the command starts, so it is ended now, through the
            // reaper's pid, which stays its own (a child of this process nobody else
            // reaps). In a pid namespace its death ends everything in it.
            member.lost = true
            try {
              process.kill(Number(rpid[1]), 'SIGKILL')
            } catch {}
          }
        }
        reported()
      })
    })
    this.#members.add(member)
    child.once('exit', () => this.#watchReapers())
    child.once('error', () => this.#watchReapers())
    return child
  }

  // A reaper whose command exited and whose part of the scope emptied exits by
  // itself; it is a child of this process (CLONE_PARENT) that libuv does not know,
  // so it is reaped here, through its pidfd, by a timer that never holds the event
  // loop open.
  #reapTimer
  #watchReapers () {
    if (this.#reapTimer !== undefined) return
    this.#reapTimer = setInterval(() => {
      for (const m of this.#members) {
        const helperDone = m.child.exitCode !== null || m.child.signalCode !== null
        if (m.pidfd === undefined) {
          if (helperDone) {
            this.#members.delete(m)
            this.#children.delete(m.child)
          }
          continue
        }
        if (!this.#native.exited(m.pidfd) || !helperDone) continue
        this.#native.close(m.pidfd)
        this.#members.delete(m)
        this.#children.delete(m.child)
      }
      if (this.#members.size === 0) {
        clearInterval(this.#reapTimer)
        this.#reapTimer = undefined
      }
    }, 100)
    this.#reapTimer.unref()
  }

  /** The pids of every process inside the scope now (helpers excluded). */
  pids () {
    if (this.#closed) return []
    if (this.#backend === 'job') {
      const helpers = new Set()
      for (const c of this.#children) if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) helpers.add(c.pid)
      return this.#native.jobPids(this.#job.handle).filter((pid) => !helpers.has(pid))
    }
    if (this.#backend === 'tree') {
      const out = []
      for (const c of this.#children) if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) out.push(c.pid)
      return out
    }
    const found = new Set()
    const reapers = new Set()
    for (const m of this.#members) {
      if (m.pidfd === undefined || this.#native.exited(m.pidfd)) continue
      reapers.add(m.rpid)
      const below = this.#native.descendants(m.rpid)
      if (!this.#native.exited(m.pidfd)) for (const pid of below) found.add(pid)
    }
    if (this.#cg !== undefined) for (const pid of this.#cgroupPids()) if (!reapers.has(pid)) found.add(pid)
    return [...found]
  }

  // Every pid listed in the scope's cgroup and the cgroups below it.
  #cgroupPids () {
    const out = []
    const walk = (dir, depth) => {
      try {
        for (const line of fs.readFileSync(path.join(dir, 'cgroup.procs'), 'latin1').split('\n')) if (line !== '') out.push(Number(line))
      } catch {
        return
      }
      if (depth >= 64) return
      let entries = []
      try { entries = fs.readdirSync(dir, { withFileTypes: true }) } catch {}
      for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name), depth + 1)
    }
    walk(this.#cg.dir, 0)
    return out
  }

  /**
   * Sends `signal` (default SIGTERM) to every process in the scope; after `graceMs`
   * (default 2000) SIGKILL to whatever is left; settles once the scope is empty and
   * every ChildProcess of the scope has emitted 'exit'. Never rejects for a process
   * that will not die; rejects only for bad options (TypeError, INVALID_OPTION).
   */
  kill (options) {
    let opts
    try {
      opts = checkKillOptions(options, 'kill')
    } catch (err) {
      return Promise.reject(err)
    }
    if (this.#closed) return Promise.resolve()
    return this.#kill(opts)
  }

  async #kill ({ signal, graceMs }) {
    if (this.#backend === 'tree') {
      const { killProcessTree } = require('./process-kill.js')
      await Promise.all([...this.#children].map((c) => killProcessTree(c, { signal, graceMs })))
      return
    }
    if (this.#backend === 'job') {
      // Windows has no signal to ask a process to end: as killProcessTree there
      // (src/process/win32.c), everything is ended at once and `signal` and `graceMs`
      // are not used. A helper still entering the job is waited for first.
      await this.#until(() => this.#jobAttached(), Infinity)
      this.#native.jobTerminate(this.#job.handle)
      await this.#until(() => this.#empty(true), Infinity)
      return
    }
    const signum = os.constants.signals[signal]
    // Every reaper reported in: nothing started in the scope is out of reach.
    await Promise.all([...this.#members].map((m) => m.attach))
    if (signum !== SIGKILL) {
      this.#signalAll(signum)
      if (!(await this.#until(() => this.#empty(false), graceMs))) this.#killAll()
    } else {
      this.#killAll()
    }
    // Members spawned while this kill runs are killed as they report in (and the
    // cgroup again on every check), so that the kill ends with nothing left.
    this.#finalKill = true
    try {
      this.#killAll()
      await this.#until(() => this.#empty(true), Infinity)
    } finally {
      this.#finalKill = false
    }
  }

  // The graceful signal: each reaper signals everything in its part of the scope
  // (and continues what is stopped); the cgroup's members are signalled too.
  #signalAll (signum) {
    for (const m of this.#members) {
      if (m.pidfd !== undefined) this.#native.control(m.pidfd, signum)
    }
    if (this.#cg !== undefined) {
      const { dir, cgpath, name } = this.#cg
      // Twice: a process forked while the first pass ran is found by the second.
      for (let i = 0; i < 2; i++) this.#native.cgSignal(dir, cgpath + name, signum)
      if (signum !== SIGSTOP) this.#native.cgSignal(dir, cgpath + name, SIGCONT)
    }
  }

  // SIGKILL to everything: cgroup.kill; and each reaper, which is SIGKILLed itself
  // when it is a namespace's init (the kernel then kills everything in the
  // namespace, whatever cgroup a member moved to), or told to kill everything below
  // it and exit when it is a plain subreaper.
  #killAll () {
    this.#killCgroup()
    for (const m of this.#members) this.#killMember(m)
  }

  #killCgroup () {
    if (this.#cg === undefined) return
    const { dir, cgpath, name, hasKill } = this.#cg
    let done = false
    if (hasKill) {
      try {
        fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1')
        done = true
      } catch {}
    }
    if (!done) this.#native.cgSignal(dir, cgpath + name, SIGKILL)
  }

  #killMember (m) {
    if (m.pidfd === undefined) return
    if (this.#ns !== '') this.#native.signal(m.pidfd, SIGKILL)
    else this.#native.control(m.pidfd, SIGKILL)
  }

  // Whether nothing is left in the scope; `final` also asks every ChildProcess to
  // have emitted 'exit' (each one ends once its reaper is gone).
  #empty (final) {
    if (this.#backend === 'job') {
      if (this.#native.jobActive(this.#job.handle) > 0) {
        // A helper that entered after the last TerminateJobObject is ended by the next.
        if (final) this.#native.jobTerminate(this.#job.handle)
        return false
      }
    } else {
      if (this.#cg !== undefined) {
        let text
        try {
          text = fs.readFileSync(path.join(this.#cg.dir, 'cgroup.events'), 'latin1')
        } catch {
          text = 'populated 0'
        }
        if (/populated 1/.test(text)) {
          // Keep killing what is left on every check: a member that entered after the
          // last cgroup.kill (spawned while the kill ran) is killed by the next.
          if (final) this.#killCgroup()
          return false
        }
      }
      // A reaper gone means its part is empty: everything in a namespace dies with
      // its init; a plain subreaper exits only once nothing is left below it (or
      // when a command killed it: docs/process-scopes.md).
      const now = performance.now()
      for (const m of this.#members) {
        // A helper that has not reported its reaper yet (spawned while this runs):
        // what it starts is not out of reach, only not reached yet.
        if (!m.attached && m.child.exitCode === null && m.child.signalCode === null) return false
        if (m.pidfd !== undefined && !this.#native.exited(m.pidfd)) return false
        if (m.goneAt === undefined) m.goneAt = now
      }
      if (final) this.#endLingering(now)
    }
    if (!final) return true
    for (const c of this.#children) if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) return false
    return true
  }

  // A helper exits as soon as its reaper is gone; one that did not within
  // HELPER_LINGER_MS (stopped by someone) is SIGKILLed, so that kill() settles. It is
  // this process's child: signalled only from a check-phase callback, while its exit
  // state is unset (so its pid is still its own).
  #endLingering (now) {
    for (const m of this.#members) {
      if (m.goneAt === undefined || now - m.goneAt < HELPER_LINGER_MS || m.lingerKill) continue
      if (m.child.exitCode !== null || m.child.signalCode !== null) continue
      m.lingerKill = true
      checkPhase().then(() => {
        if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL')
      })
    }
  }

  // Resolves true once `test()` holds, false when `ms` pass first. Polled with a
  // back-off; the cgroup's events file also wakes it (inotify).
  #until (test, ms) {
    const deadline = ms === Infinity ? Infinity : performance.now() + ms
    return new Promise((resolve) => {
      let delay = POLL_FIRST_MS
      let timer
      let watcher
      const done = (v) => {
        clearTimeout(timer)
        if (watcher !== undefined) watcher.close()
        for (const c of this.#children) c.removeListener('exit', check)
        resolve(v)
      }
      const check = () => {
        clearTimeout(timer)
        if (test()) return done(true)
        const left = deadline - performance.now()
        if (left <= 0) return done(false)
        timer = setTimeout(check, Math.max(1, Math.ceil(Math.min(delay, left))))
        delay = Math.min(delay * 2, POLL_MAX_MS)
      }
      if (this.#cg !== undefined) {
        try {
          watcher = fs.watch(path.join(this.#cg.dir, 'cgroup.events'), { persistent: false }, check)
          watcher.on('error', () => {})
        } catch {}
      }
      for (const c of this.#children) c.on('exit', check)
      check()
    })
  }

  /** Kills everything in the scope at once (SIGKILL) and releases the scope. Idempotent. */
  async close () {
    if (this.#closed) return
    this.#closing = true
    await this.#kill({ signal: 'SIGKILL', graceMs: 0 })
    if (this.#closed) return
    this.#closed = true
    if (this.#cg !== undefined) {
      // The scope's cgroup and any a member made below it: empty by now (kill
      // settled), removed deepest first; a process still leaving it (EBUSY) is waited
      // for, without blocking the event loop, up to 2 s, after which the keeper goes on.
      const { dir, cgpath, name } = this.#cg
      for (let waited = 0; this.#native.cgRemove(dir, cgpath + name, 0) === 'EBUSY' && waited < 2000; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      const keeper = this.#cg.keeper
      // EOF tells the keeper the scope is done (the directories are already gone).
      if (keeper.stdin !== null) keeper.stdin.end()
    }
    if (this.#backend === 'job') {
      this.#native.jobClose(this.#job.handle)
      openJobs.delete(this.#job)
    }
    if (this.#reapTimer !== undefined) clearInterval(this.#reapTimer)
    this.#reapTimer = undefined
    for (const m of this.#members) {
      if (m.pidfd !== undefined) {
        this.#native.exited(m.pidfd) // reaps it (gone: kill settled)
        this.#native.close(m.pidfd)
      }
    }
    this.#members.clear()
    this.#children.clear()
  }

  [Symbol.asyncDispose] () { return this.close() }

  get [Symbol.toStringTag] () { return 'ProcessScope' }
}

function chooseBackend () {
  if (FORCED !== undefined && FORCED !== '') {
    if (!BACKENDS.includes(FORCED)) return { error: 'AGENT_OS_PROCESS_SCOPE_BACKEND is not cgroup, subreaper, job or tree' }
    return { backend: FORCED }
  }
  if (process.platform === 'win32') {
    const native = host.nativeScope()
    return { backend: host.findHelper() !== null && native !== undefined && typeof native.jobCreate === 'function' ? 'job' : 'tree' }
  }
  if (process.platform !== 'linux' || host.findHelper() === null || host.nativeScope() === undefined) return { backend: 'tree' }
  if (!host.kernelSupport(host.nativeScope())) return { backend: 'tree' }
  return { backend: host.findCgroup() !== null ? 'cgroup' : 'subreaper', auto: true }
}

async function openCgroup (native, ns) {
  const base = host.findCgroup()
  if (base === null) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'no cgroup v2 hierarchy found')
  const name = `/agent-os-scope-${process.pid}-${++scopeCounter}-${crypto.randomBytes(6).toString('hex')}`
  const dir = base.dir + name
  // The keeper first, the directory after: whenever this process ends from here on,
  // the keeper removes what exists (nothing, if the end came before the mkdir). Its own
  // process group, and it ignores the signals a whole group gets (Ctrl-C): only the
  // end of its stdin (Node closing the scope, or ending) ends it.
  const keeper = childProcess.spawn(host.findHelper(), ['keep', dir, base.cgpath + name], { stdio: ['pipe', 'ignore', 'ignore'], detached: true })
  const started = await new Promise((resolve) => {
    keeper.once('spawn', () => resolve(true))
    keeper.once('error', () => resolve(false))
  })
  if (!started) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'the scope helper could not be started')
  keeper.unref()
  keeper.stdin.on('error', () => {})
  keeper.stdin.unref()
  try {
    fs.mkdirSync(dir, { mode: 0o755 })
  } catch (err) {
    keeper.stdin.end() // nothing to keep: it exits
    throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'cannot create a cgroup', err.code)
  }
  const hasKill = fs.existsSync(path.join(dir, 'cgroup.kill'))
  return { cg: { dir, cgpath: base.cgpath, name, hasKill, keeper }, native, ns }
}

function openJob (native) {
  if (process.platform !== 'win32') throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'the job backend is Windows only')
  if (native === undefined) {
    throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', `native binding unavailable: ${binding.loadFailure()}`)
  }
  if (host.findHelper() === null) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'the scope helper program was not built')
  let job
  try {
    job = native.jobCreate()
  } catch (err) {
    throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'cannot create a job object', err.hostCode)
  }
  openJobs.add(job)
  return { job, native }
}

/**
 * Opens an empty process scope. Rejects only for programming errors (bad options:
 * TypeError INVALID_OPTION) and when no backend can be set up (UNSUPPORTED_BACKEND).
 * @returns {Promise<ProcessScope>}
 */
async function openProcessScope (options) {
  OPEN_OPTIONS.read(options, errors.raise)
  const choice = chooseBackend()
  if (choice.error !== undefined) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', choice.error)
  const native = host.nativeScope()
  if (choice.backend === 'job') return new ProcessScope('job', openJob(native))
  if (choice.backend !== 'tree') {
    if (process.platform !== 'linux') throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', `the ${choice.backend} backend is Linux only`)
    if (native === undefined) {
      throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', `native binding unavailable: ${binding.loadFailure()}`)
    }
    if (host.findHelper() === null) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'the scope helper program was not built')
    if (!host.kernelSupport(native)) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'this kernel lacks pidfd_open or waitid(P_PIDFD)')
  }
  if (choice.backend !== 'tree' && !(await host.reaperPossible(host.findHelper()))) {
    if (!choice.auto) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'this host refuses clone(CLONE_PARENT), which the scope helper needs')
    choice.backend = 'tree'
  }
  if (choice.backend === 'tree') return new ProcessScope('tree', { native })
  const ns = await host.namespaceMode(host.findHelper())
  if (choice.backend === 'cgroup') {
    try {
      return new ProcessScope('cgroup', await openCgroup(native, ns))
    } catch (err) {
      if (!choice.auto) throw err
      host.note(`no cgroup for scopes (${err.hostCode || 'EIO'}); the subreaper backend holds them`)
    }
  }
  return new ProcessScope('subreaper', { native, ns })
}

// findCgroup, findHelper and namespaceMode are for the project's tests (not exported
// by the package).
module.exports = { openProcessScope, ProcessScope, findCgroup: host.findCgroup, findHelper: host.findHelper, namespaceMode: () => host.namespaceMode(host.findHelper()) }
