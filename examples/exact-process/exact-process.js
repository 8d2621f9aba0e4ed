'use strict'
// Runs one command exactly as given: an absolute executable and its argv (no shell, no
// PATH lookup, so no quoting, globbing or word splitting can change what runs), a
// replacement environment (nothing leaks in from this process), and a working
// directory. The command runs in a process scope (openProcessScope): a timeout or an
// AbortSignal ends the command and every process it ever started, background jobs and
// double-forked daemons included, and the result says how it ended; whatever the
// command left running when it exited is ended too before the result is returned. After a normal exit, one
// output file can be read from the working directory under a byte budget, through a
// read authority opened on that directory before the command started.

const path = require('node:path')
const fs = require('node:fs')
const { openProcessScope, DEFAULT_KILL_GRACE_MS } = require('@scope/agent-os/process')
const { openReadAuthority } = require('@scope/agent-os/file-authority')

const isWindows = process.platform === 'win32'

function invalid (message) {
  const err = new TypeError(`runExact: ${message}`)
  err.code = 'INVALID_OPTION'
  return err
}

function isPlainObject (v) {
  return v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))
}

function checkOptions (options) {
  if (!isPlainObject(options)) throw invalid('options must be an object')
  const { argv, env, cwd, timeoutMs, signal, graceMs = DEFAULT_KILL_GRACE_MS, output } = options
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string' && !a.includes('\0'))) {
    throw invalid('argv must be a non-empty array of strings without NUL')
  }
  if (!path.isAbsolute(argv[0])) throw invalid('argv[0] must be an absolute path (there is no PATH lookup)')
  if (!isPlainObject(env) || !Object.entries(env).every(([k, v]) =>
    k.length > 0 && !/[=\0]/.test(k) && typeof v === 'string' && !v.includes('\0'))) {
    throw invalid('env must be an object of string values (it replaces the whole environment)')
  }
  if (typeof cwd !== 'string' || !path.isAbsolute(cwd)) throw invalid('cwd must be an absolute path')
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
    throw invalid('timeoutMs must be a finite number > 0')
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid('signal must be an AbortSignal')
  if (output !== undefined && (!isPlainObject(output) || !Array.isArray(output.segments))) {
    throw invalid('output must be { segments, maxBytes }')
  }
  return { argv, env: { ...env }, cwd, timeoutMs, signal, graceMs, output }
}

/**
 * @returns {Promise<{ reason: 'exited' | 'signalled' | 'timed-out' | 'aborted',
 *   exitCode: number | null, signal: string | null, pid: number, output?: Uint8Array }>}
 * `output` is read only after a normal exit (`reason: 'exited'`); `undefined` when the
 * command did not produce the file. A file over `output.maxBytes` rejects with the
 * file authority's OVER_BUDGET, decided before anything is loaded.
 */
async function runExact (options) {
  const { argv, env, cwd, timeoutMs, signal, graceMs, output } = checkOptions(options)
  if (signal !== undefined && signal.aborted) throw signal.reason
  // Bound to the directory the command starts in, before it starts: whatever the
  // command does to the pathname later, the output is read from that directory.
  const dir = output === undefined ? undefined : await openReadAuthority(cwd)
  try {
    const ended = await run(argv, env, cwd, timeoutMs, signal, graceMs)
    if (dir !== undefined && ended.reason === 'exited') {
      ended.output = await dir.readBytes(output.segments, { maxBytes: output.maxBytes })
    }
    return ended
  } finally {
    if (dir !== undefined) await dir.close()
  }
}

async function run (argv, env, cwd, timeoutMs, signal, graceMs) {
  // The scope runs the executable through a helper, so a missing one would show as
  // exit status 127; check it first to keep spawn's ENOENT / EACCES.
  await fs.promises.access(argv[0], isWindows ? fs.constants.F_OK : fs.constants.X_OK)
  const scope = await openProcessScope()
  try {
    return await runIn(scope, argv, env, cwd, timeoutMs, signal, graceMs)
  } finally {
    await scope.close() // nothing the command started outlives the run
  }
}

function runIn (scope, argv, env, cwd, timeoutMs, signal, graceMs) {
  return new Promise((resolve, reject) => {
    const child = scope.spawn(argv[0], argv.slice(1), {
      cwd,
      env,
      shell: false,
      stdio: 'ignore',
      windowsHide: true
    })
    let stopping // 'timed-out' | 'aborted', once the scope is being ended
    let timer
    const onAbort = () => stop('aborted')
    const cleanup = () => {
      clearTimeout(timer)
      if (signal !== undefined) signal.removeEventListener('abort', onAbort)
    }
    function stop (reason) {
      if (stopping !== undefined || child.exitCode !== null || child.signalCode !== null) return
      stopping = reason
      cleanup()
      scope.kill({ graceMs }).then(() => {
        resolve({ reason, exitCode: child.exitCode, signal: child.signalCode, pid: child.pid })
      }, reject)
    }
    child.once('error', (err) => { // failed to start: ENOENT, EACCES, ...
      cleanup()
      reject(err)
    })
    child.once('spawn', () => {
      timer = setTimeout(() => stop('timed-out'), timeoutMs)
      if (signal === undefined) return
      if (signal.aborted) stop('aborted') // aborted while the command was starting
      else signal.addEventListener('abort', onAbort, { once: true })
    })
    child.once('exit', (exitCode, signalCode) => {
      if (stopping !== undefined) return // scope.kill settles the result
      cleanup()
      resolve({ reason: exitCode !== null ? 'exited' : 'signalled', exitCode, signal: signalCode, pid: child.pid })
    })
  })
}

module.exports = { runExact }
