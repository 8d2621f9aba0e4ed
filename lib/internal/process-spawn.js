'use strict'
// What a process scope's spawn() shares on every backend (lib/internal/process-scope.js):
// the one check of its arguments (the same error on every backend), what
// child_process.spawn would run (shell, argv0; the Windows command line), whether the
// command can be run at all as the child would find it, and a ChildProcess that fails
// exactly as spawn fails when it cannot. See docs/process-scopes.md.

const fs = require('node:fs')
const path = require('node:path')
const url = require('node:url')
const os = require('node:os')
const crypto = require('node:crypto')
const childProcess = require('node:child_process')
const { typeError, raise } = require('./process-errors.js')
const argsChecker = require('./args.js')

// ---- arguments --------------------------------------------------------------------

function bad (argument, expected) {
  return typeError('INVALID_OPTION', 'spawn', argument, expected)
}

function noNul (v) {
  return typeof v === 'string' && !v.includes('\0')
}

// Each option spawn() takes, and its check (child_process.spawn's own rules, reported
// as INVALID_OPTION naming the option; a value is never echoed).
const OPTIONS = {
  cwd: [(v) => noNul(v) || v instanceof URL || (Buffer.isBuffer(v) && !v.includes(0)), 'must be a path (a string, Buffer or file: URL) without NUL'],
  env: [(v) => v !== null && typeof v === 'object', 'must be an object'],
  argv0: [noNul, 'must be a string without NUL'],
  stdio: [(v) => typeof v === 'string' || Array.isArray(v), 'must be a string or an array'],
  detached: [(v) => typeof v === 'boolean', 'must be a boolean'],
  uid: [(v) => Number.isInteger(v) && v >= -2147483648 && v <= 2147483647, 'must be a 32-bit integer'],
  gid: [(v) => Number.isInteger(v) && v >= -2147483648 && v <= 2147483647, 'must be a 32-bit integer'],
  shell: [(v) => typeof v === 'boolean' || (noNul(v) && v.length > 0), 'must be a boolean or a non-empty string without NUL'],
  windowsHide: [(v) => typeof v === 'boolean', 'must be a boolean'],
  windowsVerbatimArguments: [(v) => typeof v === 'boolean', 'must be a boolean'],
  timeout: [(v) => Number.isInteger(v) && v >= 0, 'must be an integer >= 0'],
  killSignal: [(v) => (typeof v === 'string' && Object.prototype.hasOwnProperty.call(os.constants.signals, v)) ||
    (Number.isInteger(v) && Object.values(os.constants.signals).includes(v)), 'must be a known signal name or number'],
  signal: [(v) => typeof AbortSignal === 'function' && v instanceof AbortSignal, 'must be an AbortSignal'],
  serialization: [(v) => v === 'json' || v === 'advanced', "must be 'json' or 'advanced'"]
}
// The same table as the package's argument checker reads it: own keys only, as
// child_process.spawn copies its options.
const SPAWN_OPTIONS = argsChecker.defineOptions('spawn', Object.fromEntries(
  Object.entries(OPTIONS).map(([key, [test, expected]]) => [key, argsChecker.custom(expected, test)])), { ownKeys: true })

/** spawn(command, args?, options?) checked as one: the same INVALID_OPTION, naming the
 * argument, on every backend. Returns copies ({ command, args, options }). */
function checkSpawnArgs (command, args, options) {
  if (typeof command !== 'string' || command.length === 0 || command.includes('\0')) {
    throw bad('command', 'must be a non-empty string without NUL')
  }
  if (args !== undefined && args !== null && !Array.isArray(args) && typeof args === 'object') {
    options = args // spawn(command, options)
    args = []
  }
  if (args === undefined || args === null) args = []
  if (!Array.isArray(args) || !args.every(noNul)) throw bad('args', 'must be an array of strings without NUL')
  // Unknown keys refused, each option read once and checked (lib/internal/args.js).
  const checked = SPAWN_OPTIONS.read(options, raise)
  const copy = {}
  for (const key of Object.keys(checked)) if (checked[key] !== undefined) copy[key] = checked[key]
  if (Array.isArray(copy.stdio) && copy.stdio.filter((s) => s === 'ipc').length > 1) {
    throw bad('options.stdio', "must hold 'ipc' at most once")
  }
  if (copy.env !== undefined) {
    for (const [k, v] of Object.entries(copy.env)) {
      if (v !== undefined && (k.includes('\0') || String(v).includes('\0'))) throw bad('options.env', 'must hold no NUL')
    }
  }
  return { command, args: args.slice(), options: copy }
}

// ---- what spawn would run ---------------------------------------------------------

/** What child_process.spawn would run for `shell` and `argv0` (POSIX): the file, its
 * arguments, and argv[0]. */
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

/** What child_process.spawn runs on Windows (Node's normalizeSpawnArguments, then
 * libuv's make_program_args): the file to look up, and the command line it would
 * build, argv0 first. The job helper starts exactly that (src/process/scope_helper_win32.c). */
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

// ---- can it run? (POSIX) ----------------------------------------------------------

// Errors the PATH search goes on after (glibc's execvp: posix/execvpe.c).
const SEARCH_ON = new Set(['ENOENT', 'ENOTDIR', 'ESTALE', 'ENODEV', 'ETIMEDOUT'])

function cwdOf (options) {
  const cwd = options.cwd
  if (cwd === undefined || cwd === null) return process.cwd()
  if (cwd instanceof URL) return url.fileURLToPath(cwd)
  return String(cwd)
}

// The PATH the child's getenv sees: libuv (1.46, the fork path on Linux) sets environ
// to the pairs Node builds from options.env (key=value, in key order, undefined values
// left out) and calls execvp, which reads the first entry starting with "PATH=".
function pathOf (options) {
  const env = options.env === undefined || options.env === null ? process.env : options.env
  for (const key of Object.keys(env)) {
    const value = env[key]
    if (value === undefined) continue
    const pair = `${key}=${value}`
    if (pair.startsWith('PATH=')) return pair.slice(5)
  }
  return '/bin:/usr/bin' // glibc's execvp without PATH (confstr _CS_PATH)
}

// What execve of `file` (relative to `cwd`) would answer, told from its metadata: ''
// when it would start, else the errno name. With `ids` (spawn's uid/gid), the
// execute bits are read for that user; without, access(2) answers for this one.
function candidate (file, cwd, ids) {
  const abs = path.resolve(cwd, file)
  let st
  try {
    st = fs.statSync(abs)
  } catch (err) {
    return typeof err.code === 'string' ? err.code : 'ENOENT'
  }
  if (!st.isFile()) return 'EACCES' // a directory, a device: execve refuses
  if (ids !== undefined) {
    const uid = ids.uid === undefined ? process.geteuid() : ids.uid
    const gid = ids.gid === undefined ? process.getegid() : ids.gid
    const bits = uid === 0 ? st.mode & 0o111 : st.uid === uid ? st.mode & 0o100 : st.gid === gid ? st.mode & 0o010 : st.mode & 0o001
    return bits !== 0 ? '' : 'EACCES'
  }
  try {
    fs.accessSync(abs, fs.constants.X_OK)
    return ''
  } catch {
    return 'EACCES'
  }
}

/**
 * Whether the child spawn would start for `file` could not be started, as libuv
 * and glibc's execvp would find out in the child (its cwd, the PATH of its
 * environment, each candidate's execute permission): '' when it can, else the errno
 * name spawn would report (ENOENT, EACCES, ENOTDIR; another name for the rarer
 * failures). A missing or unusable `cwd` is 'ENOENT' (spawn's chdir fails first).
 */
function cannotRun (file, options) {
  const cwd = cwdOf(options)
  try {
    if (!fs.statSync(cwd).isDirectory()) return 'ENOENT'
    fs.accessSync(cwd, fs.constants.X_OK)
  } catch {
    return 'ENOENT'
  }
  const ids = options.uid !== undefined || options.gid !== undefined ? { uid: options.uid, gid: options.gid } : undefined
  if (file.includes('/')) return candidate(file, cwd, ids)
  let last = 'ENOENT'
  let denied = false
  for (const dir of pathOf(options).split(':')) {
    const code = candidate(dir === '' ? file : `${dir}/${file}`, cwd, ids)
    if (code === '') return ''
    if (code === 'EACCES') denied = true
    else if (SEARCH_ON.has(code)) last = code
    else return code
  }
  return denied ? 'EACCES' : last
}

// ---- can it run? (Windows) ---------------------------------------------------------

function isFile (p) {
  try {
    return fs.statSync(p).isFile()
  } catch {
    return false
  }
}

// `dir` (may be empty: the working directory) joined with `name`, as it is when the
// name has an extension, then with .com and .exe appended (src/process/scope_helper_win32.c).
function tryWindows (cwd, dir, name, hasExt) {
  const base = path.win32.resolve(cwd, dir, name)
  if (hasExt && isFile(base)) return true
  return isFile(`${base}.com`) || isFile(`${base}.exe`)
}

/**
 * Windows: whether the file the job helper would look up (libuv's search_path, as
 * src/process/scope_helper_win32.c does it: a name with a directory part there only;
 * a bare name in the working directory, then in each directory of the child's PATH,
 * quotes around an entry removed) is missing: 'ENOENT', or '' when it is found. A
 * missing working directory is 'ENOENT' too.
 */
function cannotRunWindows (file, options) {
  const cwd = cwdOf(options)
  try {
    if (!fs.statSync(cwd).isDirectory()) return 'ENOENT'
  } catch {
    return 'ENOENT'
  }
  const base = file.slice(Math.max(file.lastIndexOf('\\'), file.lastIndexOf('/'), file.lastIndexOf(':')) + 1)
  if (base === '' || base === '.' || base === '..') return 'ENOENT'
  const dot = base.lastIndexOf('.')
  const hasExt = dot > 0
  if (base !== file) return tryWindows(cwd, file.slice(0, file.length - base.length), base, hasExt) ? '' : 'ENOENT'
  if (tryWindows(cwd, '', base, hasExt)) return ''
  const env = options.env === undefined || options.env === null ? process.env : options.env
  const key = Object.keys(env).find((k) => k.toUpperCase() === 'PATH' && env[k] !== undefined)
  for (let dir of (key === undefined ? '' : String(env[key])).split(';')) {
    if (dir.length >= 2 && dir.startsWith('"') && dir.endsWith('"')) dir = dir.slice(1, -1)
    if (dir !== '' && tryWindows(cwd, dir, base, hasExt)) return ''
  }
  return 'ENOENT'
}

// A path execve answers ENOENT for, that nobody can create: procfs takes no new
// files. (Without procfs on /proc, and on Windows: a name below a directory of 128
// random bits.)
function absentPath () {
  if (process.platform === 'linux') {
    try {
      if (fs.statfsSync('/proc').type === 0x9fa0) return '/proc/self/agent-os-no-such-file'
    } catch {}
  }
  return path.join(os.tmpdir(), `agent-os-absent-${crypto.randomBytes(16).toString('hex')}`, process.platform === 'win32' ? 'x.exe' : 'x')
}

// Files that fail in execve with the given errno, never running anything.
const FAILING = {
  ENOENT: absentPath,
  EACCES: () => '/', // a directory
  ENOTDIR: () => '/dev/null/x'
}

/**
 * A ChildProcess that fails as child_process.spawn(file, ...) fails when `code` is
 * what its exec would answer: Node itself spawns a file that fails with that errno,
 * with the caller's options (so a missing `cwd` fails in chdir first, as it would),
 * and the ChildProcess names the caller's file: 'error' with `code`, `syscall`
 * 'spawn <file>', `path` and `spawnargs` (ENOENT, EACCES), or the synchronous throw
 * spawn gives for the others (ENOTDIR). Nothing runs. Undefined for an errno this
 * cannot reproduce (the helper then runs, and the command's status is 127 or 126).
 */
function failedSpawn (file, argv0, argv, options, code) {
  const target = FAILING[code]
  if (target === undefined) return undefined
  const opts = { ...options, shell: false }
  delete opts.argv0
  const child = childProcess.spawn(target(), argv, opts)
  // Read by Node when it emits the error (on the next tick): the caller's file.
  child.spawnfile = file
  child.spawnargs = [argv0, ...argv]
  return child
}

module.exports = { checkSpawnArgs, resolveShell, windowsCommand, cannotRun, cannotRunWindows, failedSpawn }
