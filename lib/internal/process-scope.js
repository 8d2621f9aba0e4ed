'use strict'
// Process scopes: every process a command ever starts, however it forks and whatever
// session or group it moves to, held so that one kill() ends them all and settles
// only when none is left. See docs/process-scopes.md.
//
// Backends (chosen per scope at open, or forced for the project's tests by the
// private AGENT_OS_PROCESS_SCOPE_BACKEND=cgroup|subreaper|job|tree, read once at load):
//   cgroup     Linux, cgroup v2 writable: a fresh cgroup per scope; commands start in
//              it (the helper moves itself in before exec); cgroup.kill ends it.
//   subreaper  Linux anywhere: each command runs under a child-subreaper helper that
//              holds every orphan of the command (src/process/scope_helper.c).
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

const FORCED = process.env.AGENT_OS_PROCESS_SCOPE_BACKEND
// Private, for the project's tests: act as if the kernel lacked pidfd_open (Linux
// before 5.3), so the automatic choice's kernel check can be exercised on any kernel.
const NO_PIDFD = process.env.AGENT_OS_PROCESS_SCOPE_NO_PIDFD === '1'
const BACKENDS = ['cgroup', 'subreaper', 'job', 'tree']
const HELPER_NAME = process.platform === 'win32' ? 'agent_os_scope_helper.exe' : 'agent_os_scope_helper'
const POLL_FIRST_MS = 2
const POLL_MAX_MS = 50

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

// ---- what this host offers ----------------------------------------------------

let helperPath // string | null, found once
// The helper program is the package's own: the file beside the binding node-gyp-build
// resolves for the package directory (build/Release for a source build,
// prebuilds/<platform>-<arch>/ for a prebuilt one), never one found on PATH, in the
// working directory or anywhere the caller names. The root is the binding loader's
// (lib/binding.js: the package directory; AGENT_OS_BINDING_ROOT only in the
// project's own sanitizer run, which loads its .node from there too). It must be a
// regular file (not a symlink) whose real path stays inside the package directory,
// owned by root or by the package directory's owner, executable, and neither it nor
// its directory writable by group or others: a file someone else could plant or swap
// is not run, and the scope falls back to `tree`.
//
// On Windows (agent_os_scope_helper.exe) the file checks are the ones Windows can
// answer through fs: a regular file, not a symlink, its real path inside the package
// directory. Owners and mode bits are POSIX notions fs.stat cannot report there (who
// may write the package directory is its ACL's business, as for the .node itself).
function findHelper () {
  if (helperPath !== undefined) return helperPath
  helperPath = null
  if (process.platform !== 'linux' && process.platform !== 'win32') return helperPath
  try {
    const root = fs.realpathSync(process.env.AGENT_OS_BINDING_ROOT || path.join(__dirname, '..', '..'))
    const binding = require('node-gyp-build').resolve(root)
    const file = path.join(path.dirname(binding), HELPER_NAME)
    if (trustedHelper(root, file)) helperPath = file
  } catch {}
  return helperPath
}

function trustedHelper (root, file) {
  const st = fs.lstatSync(file)
  if (!st.isFile()) return false
  const real = fs.realpathSync(file)
  if (!real.startsWith(root + path.sep)) return false
  if (process.platform === 'win32') return true
  const owner = fs.statSync(root).uid
  const dir = fs.statSync(path.dirname(real))
  for (const s of [st, dir]) {
    if (s.uid !== 0 && s.uid !== owner) return false
    if ((s.mode & 0o022) !== 0) return false
  }
  fs.accessSync(real, fs.constants.X_OK)
  return true
}

let cgroupBase // { dir, cgpath } | null, found once
function findCgroup () {
  if (cgroupBase !== undefined) return cgroupBase
  cgroupBase = null
  if (process.platform !== 'linux') return cgroupBase
  try {
    const own = /^0::(\/.*)$/m.exec(fs.readFileSync('/proc/self/cgroup', 'utf8'))
    if (own === null) return cgroupBase
    for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const sep = line.indexOf(' - ')
      if (sep < 0 || line.slice(sep + 3).split(' ')[0] !== 'cgroup2') continue
      const f = line.slice(0, sep).split(' ')
      if (f[3] !== '/') continue // a bind of a sub-tree: our path is not relative to it
      const mount = f[4].replace(/\\(\d{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)))
      const cgpath = own[1] === '/' ? '' : own[1]
      const dir = mount + cgpath
      if (fs.existsSync(path.join(dir, 'cgroup.procs'))) {
        cgroupBase = { dir, cgpath }
        break
      }
    }
  } catch {}
  return cgroupBase
}

function nativeScope () {
  const part = binding.part('process')
  return part === undefined ? undefined : part.scope
}

// ---- argument checks ------------------------------------------------------------

function checkKillOptions (options, what) {
  if (options === undefined || options === null) return { signal: 'SIGTERM', graceMs: 2000 }
  if (typeof options !== 'object') throw typeError('INVALID_OPTION', what, 'options', 'must be an object')
  let signal, graceMs
  try {
    ({ signal = 'SIGTERM', graceMs = 2000 } = options)
  } catch {
    throw typeError('INVALID_OPTION', what, 'options', 'could not be read')
  }
  if (typeof signal !== 'string' || !Object.prototype.hasOwnProperty.call(os.constants.signals, signal)) {
    throw typeError('INVALID_OPTION', what, 'options.signal', 'must be a known signal name')
  }
  if (typeof graceMs !== 'number' || !Number.isFinite(graceMs) || graceMs < 0) {
    throw typeError('INVALID_OPTION', what, 'options.graceMs', 'must be a finite number >= 0')
  }
  return { signal, graceMs }
}

function checkSpawnArgs (command, args, options) {
  if (typeof command !== 'string' || command.length === 0 || command.includes('\0')) {
    throw typeError('INVALID_OPTION', 'spawn', 'command', 'must be a non-empty string without NUL')
  }
  if (args !== undefined && args !== null && !Array.isArray(args) && typeof args === 'object') {
    options = args // spawn(command, options)
    args = []
  }
  if (args === undefined || args === null) args = []
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string' && !a.includes('\0'))) {
    throw typeError('INVALID_OPTION', 'spawn', 'args', 'must be an array of strings without NUL')
  }
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object') throw typeError('INVALID_OPTION', 'spawn', 'options', 'must be an object')
  return { command, args: args.slice(), options: { ...options } }
}

// What child_process.spawn would run for `shell` (POSIX): the shell and its -c line.
function resolveShell (command, args, options) {
  let file = command
  let argv = args
  if (options.shell) {
    const line = [command, ...args].join(' ')
    file = typeof options.shell === 'string' ? options.shell : '/bin/sh'
    argv = ['-c', line]
  }
  const argv0 = typeof options.argv0 === 'string' ? options.argv0 : file
  return { file, argv, argv0 }
}

// What child_process.spawn runs on Windows (Node's normalizeSpawnArguments, then
// libuv's make_program_args): the file to look up, and the command line it would
// build, argv0 first. The job helper starts exactly that (src/process/scope_helper_win32.c).
function windowsCommand (command, args, options) {
  let file = command
  let argv = args
  let verbatim = options.windowsVerbatimArguments === true
  if (options.shell) {
    const line = [command, ...args].join(' ')
    file = typeof options.shell === 'string' ? options.shell : (process.env.comspec || 'cmd.exe')
    if (/^(?:.*\\)?cmd(?:\.exe)?$/i.test(file)) {
      argv = ['/d', '/s', '/c', `"${line}"`]
      verbatim = true
    } else {
      argv = ['-c', line]
    }
  }
  const all = [typeof options.argv0 === 'string' ? options.argv0 : file, ...argv]
  return { file, line: verbatim ? all.join(' ') : all.map(quoteWindowsArg).join(' ') }
}

// libuv's quote_cmd_arg (src/win/process.c): the quoting the C runtime's argument
// parser undoes exactly.
function quoteWindowsArg (arg) {
  if (arg.length === 0) return '""'
  if (!/[ \t"]/.test(arg)) return arg
  if (!/["\\]/.test(arg)) return `"${arg}"`
  let reversed = ''
  let quoteHit = true
  for (let i = arg.length; i > 0; i--) {
    const c = arg[i - 1]
    reversed += c
    if (quoteHit && c === '\\') {
      reversed += '\\'
    } else if (c === '"') {
      quoteHit = true
      reversed += '\\'
    } else {
      quoteHit = false
    }
  }
  return `"${reversed.split('').reverse().join('')}"`
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
  #cg // cgroup: { dir, cgpath, keeper }
  #members = new Set() // subreaper: { child, attach: Promise, pidfd, rpid }
  #job // job: { handle, name } of the scope's Job Object
  #native

  constructor (backend, state) {
    this.#backend = backend
    this.#cg = state.cg
    this.#job = state.job
    this.#native = state.native
  }

  /** Which backend holds this scope: 'cgroup', 'subreaper', 'job' or 'tree'. */
  get backend () { return this.#backend }
  get closed () { return this.#closed }

  /**
   * child_process.spawn's signature; returns a real ChildProcess whose command (and
   * everything it starts) is inside the scope.
   */
  spawn (command, args, options) {
    if (this.#closed) throw plainError('SCOPE_CLOSED', 'spawn')
    const a = checkSpawnArgs(command, args, options)
    let child
    if (this.#backend === 'tree') child = this.#spawnTree(a)
    else if (this.#backend === 'cgroup') child = this.#spawnCgroup(a)
    else if (this.#backend === 'job') child = this.#spawnJob(a)
    else child = this.#spawnSubreaper(a)
    this.#children.add(child)
    child.once('exit', () => {
      if (this.#backend !== 'subreaper') this.#children.delete(child)
    })
    return child
  }

  #spawnTree ({ command, args, options }) {
    const opts = { ...options }
    if (process.platform !== 'win32') opts.detached = true // its own group, for killProcessTree
    return childProcess.spawn(command, args, opts)
  }

  #spawnCgroup ({ command, args, options }) {
    const { file, argv, argv0 } = resolveShell(command, args, options)
    const opts = { ...options, shell: false }
    delete opts.argv0
    return childProcess.spawn(findHelper(), ['cg', path.join(this.#cg.dir, 'cgroup.procs'), argv0, file, ...argv], opts)
  }

  #spawnJob ({ command, args, options }) {
    const { file, line } = windowsCommand(command, args, options)
    const opts = { ...options, shell: false, windowsVerbatimArguments: false }
    delete opts.argv0
    return childProcess.spawn(findHelper(), ['job', this.#job.name, options.detached ? 'd' : '-', file, line], opts)
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

  #spawnSubreaper ({ command, args, options }) {
    const { file, argv, argv0 } = resolveShell(command, args, options)
    let stdio = options.stdio
    if (stdio === undefined || stdio === null) stdio = ['pipe', 'pipe', 'pipe']
    else if (typeof stdio === 'string') stdio = [stdio, stdio, stdio]
    else if (Array.isArray(stdio)) stdio = stdio.slice()
    else throw typeError('INVALID_OPTION', 'spawn', 'options.stdio', 'must be a string or an array')
    while (stdio.length < 3) stdio.push(undefined)
    const hsIndex = stdio.length
    stdio.push('pipe') // the handshake: the helper writes its reaper's pid, then closes it
    const opts = { ...options, stdio, shell: false }
    delete opts.argv0
    const child = childProcess.spawn(findHelper(), ['reap', String(hsIndex), argv0, file, ...argv], opts)
    const hs = child.stdio[hsIndex]
    child.stdio.length = hsIndex // child.stdio is what the caller asked for
    const member = { child, rpid: 0, pidfd: undefined, attach: undefined }
    member.attach = new Promise((resolve) => {
      if (hs === null || hs === undefined) return resolve()
      let text = ''
      hs.setEncoding('latin1')
      hs.on('data', (d) => { text += d })
      hs.on('error', () => {})
      hs.once('close', () => {
        const rpid = /^(\d+)\n/.exec(text)
        if (rpid !== null) {
          try {
            member.pidfd = this.#native.pidfd(Number(rpid[1]))
            member.rpid = Number(rpid[1])
            this.#native.control(member.pidfd, 0) // attached: it may exit once empty
          } catch {}
        }
        resolve()
      })
    })
    this.#members.add(member)
    child.once('exit', () => this.#watchReapers())
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
        if (m.pidfd === undefined || !this.#native.exited(m.pidfd)) continue
        if (m.child.exitCode === null && m.child.signalCode === null) continue
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
    if (this.#backend === 'cgroup') {
      try {
        return fs.readFileSync(path.join(this.#cg.dir, 'cgroup.procs'), 'latin1')
          .split('\n').filter(Boolean).map(Number)
      } catch {
        return []
      }
    }
    const out = []
    if (this.#backend === 'subreaper') {
      for (const m of this.#members) {
        if (m.pidfd === undefined || this.#native.exited(m.pidfd)) continue
        const found = this.#native.descendants(m.rpid)
        if (!this.#native.exited(m.pidfd)) out.push(...found)
      }
      return out
    }
    for (const c of this.#children) if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) out.push(c.pid)
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
    if (this.#backend === 'subreaper') await Promise.all([...this.#members].map((m) => m.attach))
    if (signum !== os.constants.signals.SIGKILL) {
      this.#signalAll(signum)
      if (!(await this.#until(() => this.#empty(), graceMs))) this.#signalAll(os.constants.signals.SIGKILL)
    } else {
      this.#signalAll(signum)
    }
    await this.#until(() => this.#empty(true), Infinity)
  }

  #signalAll (signum) {
    if (this.#backend === 'cgroup') {
      const { dir, cgpath } = this.#cg
      if (signum === os.constants.signals.SIGKILL && this.#cg.hasKill) {
        try {
          fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1')
          return
        } catch {}
      }
      // Twice: a process forked while the first pass ran is found by the second.
      for (let i = 0; i < 2; i++) this.#native.cgSignal(dir, cgpath + this.#cg.name, signum)
      if (signum !== os.constants.signals.SIGKILL && signum !== os.constants.signals.SIGSTOP) {
        this.#native.cgSignal(dir, cgpath + this.#cg.name, os.constants.signals.SIGCONT)
      }
      return
    }
    for (const m of this.#members) {
      if (m.pidfd !== undefined) this.#native.control(m.pidfd, signum)
    }
  }

  // Whether nothing is left in the scope; `final` also asks every ChildProcess to
  // have emitted 'exit' (each one ends once the scope is empty).
  #empty (final) {
    if (this.#backend === 'cgroup') {
      let text
      try {
        text = fs.readFileSync(path.join(this.#cg.dir, 'cgroup.events'), 'latin1')
      } catch {
        text = 'populated 0'
      }
      if (/populated 1/.test(text)) {
        // Without cgroup.kill, keep killing what is left on every check.
        if (final && !this.#cg.hasKill) this.#native.cgSignal(this.#cg.dir, this.#cg.cgpath + this.#cg.name, os.constants.signals.SIGKILL)
        return false
      }
    } else if (this.#backend === 'job') {
      if (this.#native.jobActive(this.#job.handle) > 0) {
        // A helper that entered after the last TerminateJobObject is ended by the next.
        if (final) this.#native.jobTerminate(this.#job.handle)
        return false
      }
    } else {
      for (const m of this.#members) {
        if (m.pidfd !== undefined && !this.#native.exited(m.pidfd)) return false
      }
    }
    if (!final) return true
    for (const c of this.#children) if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) return false
    return true
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
      if (this.#backend === 'cgroup') {
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
    await this.#kill({ signal: 'SIGKILL', graceMs: 0 })
    if (this.#closed) return
    this.#closed = true
    if (this.#backend === 'cgroup') {
      try { fs.rmdirSync(this.#cg.dir) } catch {}
      const keeper = this.#cg.keeper
      // EOF tells the keeper the scope is done (the directory is already gone).
      if (keeper.stdin !== null) keeper.stdin.end()
    }
    if (this.#backend === 'job') {
      this.#native.jobClose(this.#job.handle)
      openJobs.delete(this.#job)
    }
    if (this.#reapTimer !== undefined) clearInterval(this.#reapTimer)
    for (const m of this.#members) if (m.pidfd !== undefined) this.#native.close(m.pidfd)
    this.#members.clear()
    this.#children.clear()
  }

  [Symbol.asyncDispose] () { return this.close() }

  get [Symbol.toStringTag] () { return 'ProcessScope' }
}

let kernelOk // boolean, checked once
// pidfd_open (5.3) and waitid(P_PIDFD) (5.4): both Linux backends control and reap
// through them (docs/process-scopes.md). Without them a scope could not be ended.
function kernelSupport (native) {
  if (kernelOk === undefined) kernelOk = !NO_PIDFD && native.kernelSupport() === 0
  return kernelOk
}

function chooseBackend () {
  if (FORCED !== undefined && FORCED !== '') {
    if (!BACKENDS.includes(FORCED)) return { error: 'AGENT_OS_PROCESS_SCOPE_BACKEND is not cgroup, subreaper, job or tree' }
    return { backend: FORCED }
  }
  if (process.platform === 'win32') {
    const native = nativeScope()
    return { backend: findHelper() !== null && native !== undefined && typeof native.jobCreate === 'function' ? 'job' : 'tree' }
  }
  if (process.platform !== 'linux' || findHelper() === null || nativeScope() === undefined) return { backend: 'tree' }
  if (!kernelSupport(nativeScope())) return { backend: 'tree' }
  return { backend: findCgroup() !== null ? 'cgroup' : 'subreaper', auto: true }
}

async function openCgroup (native) {
  const base = findCgroup()
  if (base === null) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'no cgroup v2 hierarchy found')
  const name = `/agent-os-scope-${process.pid}-${++scopeCounter}-${crypto.randomBytes(6).toString('hex')}`
  const dir = base.dir + name
  try {
    fs.mkdirSync(dir, { mode: 0o755 })
  } catch (err) {
    throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'cannot create a cgroup', err.code)
  }
  const hasKill = fs.existsSync(path.join(dir, 'cgroup.kill'))
  // Its own process group, and it ignores the signals a whole group gets (Ctrl-C):
  // only the end of its stdin (Node closing the scope, or ending) ends it.
  const keeper = childProcess.spawn(findHelper(), ['keep', dir], { stdio: ['pipe', 'ignore', 'ignore'], detached: true })
  const started = await new Promise((resolve) => {
    keeper.once('spawn', () => resolve(true))
    keeper.once('error', () => resolve(false))
  })
  if (!started) {
    try { fs.rmdirSync(dir) } catch {}
    throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'the scope helper could not be started')
  }
  keeper.unref()
  keeper.stdin.on('error', () => {})
  keeper.stdin.unref()
  return { cg: { dir, cgpath: base.cgpath, name, hasKill, keeper }, native }
}

function openJob (native) {
  if (process.platform !== 'win32') throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'the job backend is Windows only')
  if (native === undefined) {
    throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', `native binding unavailable: ${binding.loadFailure()}`)
  }
  if (findHelper() === null) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'the scope helper program was not built')
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
  if (options !== undefined && options !== null && typeof options !== 'object') {
    throw typeError('INVALID_OPTION', 'openProcessScope', 'options', 'must be an object')
  }
  const choice = chooseBackend()
  if (choice.error !== undefined) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', choice.error)
  const native = nativeScope()
  if (choice.backend === 'job') return new ProcessScope('job', openJob(native))
  if (choice.backend !== 'tree') {
    if (process.platform !== 'linux') throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', `the ${choice.backend} backend is Linux only`)
    if (native === undefined) {
      throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', `native binding unavailable: ${binding.loadFailure()}`)
    }
    if (findHelper() === null) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'the scope helper program was not built')
    if (!kernelSupport(native)) throw plainError('UNSUPPORTED_BACKEND', 'openProcessScope', 'this kernel lacks pidfd_open or waitid(P_PIDFD)')
  }
  if (choice.backend === 'cgroup') {
    try {
      return new ProcessScope('cgroup', await openCgroup(native))
    } catch (err) {
      if (!choice.auto) throw err
      return new ProcessScope('subreaper', { native }) // cgroup v2 not writable here
    }
  }
  return new ProcessScope(choice.backend, { native })
}

// findCgroup and findHelper are for the project's tests (not exported by the package).
module.exports = { openProcessScope, ProcessScope, findCgroup, findHelper }
