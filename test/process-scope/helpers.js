'use strict'
// Process-scope tests: loading the module with a backend forced, and finding every
// process a test started by a mark in its environment (inherited through every fork
// and exec, whatever session or group the process moves to), read from /proc.

const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')

const INTERNAL = path.join(__dirname, '..', '..', 'lib', 'internal')
const MODULE = path.join(INTERNAL, 'process-scope.js')
// The modules whose switches and findings (helper, cgroup, namespaces) are read once.
const FRESH = ['process-scope.js', 'process-host.js'].map((f) => path.join(INTERNAL, f))

/** The scope module as loaded with AGENT_OS_PROCESS_SCOPE_BACKEND=backend (the switch
 * is read once at load, so the module is loaded afresh), and `extra` environment
 * variables set while it loads (the other private switches). */
function loadWithBackend (backend, extra = {}) {
  const env = { AGENT_OS_PROCESS_SCOPE_BACKEND: backend, ...extra }
  const saved = {}
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k]
    process.env[k] = v
  }
  for (const f of FRESH) delete require.cache[f]
  try {
    return require(MODULE)
  } finally {
    for (const f of FRESH) delete require.cache[f]
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

/** A fresh mark; give `env(mark)` to the spawned command. */
function newMark () {
  return `aos-scope-${process.pid}-${crypto.randomBytes(6).toString('hex')}`
}

function env (mark, extra) {
  return { ...process.env, AOS_SCOPE_MARK: mark, ...extra }
}

/** Live (non-zombie) processes carrying `mark`; the scope's own helper processes
 * only with `withHelpers`. */
function marked (mark, withHelpers = false) {
  const out = []
  const want = `AOS_SCOPE_MARK=${mark}`
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let environ, stat
    try {
      environ = fs.readFileSync(`/proc/${name}/environ`, 'latin1')
      stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1')
    } catch {
      continue
    }
    if (!environ.split('\0').includes(want)) continue
    if (!withHelpers && isHelper(name)) continue
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    if (state !== 'Z' && state !== 'X') out.push(Number(name))
  }
  return out
}

function isHelper (pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'latin1').startsWith('agent_os_scope')
  } catch {
    return false
  }
}

/** Helper processes (the scope helper program) that are children of `ppid` or of init. */
function helpers () {
  const out = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const comm = fs.readFileSync(`/proc/${name}/comm`, 'latin1').trim()
      if (comm.startsWith('agent_os_scope')) out.push(Number(name))
    } catch {}
  }
  return out
}

function commOf (pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'latin1').trim()
  } catch {
    return ''
  }
}

function ppidOf (pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return null
  }
}

function pgidOf (pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
  } catch {
    return null
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls until `fn()` is truthy (returns it) or `ms` pass (returns the last value). The
 * bound only decides how long a failing check takes: a passing one returns at once. */
async function waitFor (fn, ms = 20000) {
  const end = Date.now() + ms
  let v
  while (!(v = fn()) && Date.now() < end) await sleep(10)
  return v
}

function exited (child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve([child.exitCode, child.signalCode])
  return new Promise((resolve) => child.once('exit', (code, sig) => resolve([code, sig])))
}

/** Our cgroup directories still present (should be none after each test). */
function leftoverCgroups (base) {
  if (base === undefined) return []
  try {
    return fs.readdirSync(base).filter((n) => n.startsWith(`agent-os-scope-${process.pid}-`))
  } catch {
    return []
  }
}

// ---- Windows (no /proc): every process a test starts is a Node script that writes
// its pid into a directory of the test's own; survivors are the pids written there
// that still name a running process (process.kill(pid, 0): OpenProcess, and a process
// that has not exited). Pids are not reused within a test run's seconds here.

/** A fresh directory for the pid files of one test, and the script that marks. */
function newMarkDir () {
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'aos-scope-'))
  const script = path.join(dir, 'mark.js')
  // argv[2]: 'exit' to exit after marking; 'spawn-detached' to start a detached,
  // marked grandchild first and exit; otherwise stay until killed (ignoring every
  // console event Node lets a script catch).
  fs.writeFileSync(script, `
    const fs = require('node:fs')
    const path = require('node:path')
    const cp = require('node:child_process')
    for (const sig of ['SIGINT', 'SIGBREAK', 'SIGTERM', 'SIGHUP']) process.on(sig, () => {})
    if (process.argv[2] === 'spawn-detached') {
      const g = cp.spawn(process.execPath, [__filename], { detached: true, stdio: 'ignore' })
      g.unref()
      fs.writeFileSync(path.join(__dirname, 'grandchild'), String(g.pid))
    }
    fs.writeFileSync(path.join(__dirname, String(process.pid)), '')
    if (process.argv[2] === 'exit' || process.argv[2] === 'spawn-detached') process.exit(0)
    setInterval(() => {}, 1000)
  `)
  return { dir, script }
}

function isAlive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Pids marked in `dir` (every one written so far). */
function markedPids (dir) {
  try {
    return fs.readdirSync(dir).filter((n) => /^\d+$/.test(n)).map(Number)
  } catch {
    return []
  }
}

/** Pids marked in `dir` whose process still runs. */
function aliveMarked (dir) {
  return markedPids(dir).filter(isAlive)
}

// ---- Windows, many processes at once (the stress test): a Node process costs about
// 87 MB of private memory under wine 8, so the processes a stress scope leaves are
// copies of the system's ping.exe (a few MB each), and the mark is in the image name:
// the copies are named `<tag>-ping.exe` / `<tag>-node.exe` with a fresh tag. They are
// listed by the system's process list (wmic, else tasklist: NtQuerySystemInformation
// underneath), which knows nothing of job objects or of the scopes' own lists.

/** A directory holding marked copies of ping.exe and of this Node, and their tag. */
function newImageMarks () {
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'aos-scope-img-'))
  const tag = `aosm${crypto.randomBytes(4).toString('hex')}`
  const system = path.join(process.env.SystemRoot || 'C:\\Windows', 'System32')
  const ping = path.join(dir, `${tag}-ping.exe`)
  const node = path.join(dir, `${tag}-node.exe`)
  fs.copyFileSync(path.join(system, 'ping.exe'), ping)
  fs.copyFileSync(process.execPath, node)
  return { dir, tag, ping, node }
}

function decodeListing (buf) {
  // wmic writes UTF-16LE (with a BOM), tasklist the console code page.
  if ((buf[0] === 0xff && buf[1] === 0xfe) || (buf.length > 1 && buf[1] === 0)) return buf.toString('utf16le').replace(/^\ufeff/, '')
  return buf.toString('latin1')
}

/** Every running process of the system: [{ name, pid }], by wmic (wine 8, older
 * Windows), else tasklist (Windows without wmic). Throws when neither answers. */
function systemProcesses () {
  const { spawnSync } = require('node:child_process')
  const opts = { stdio: ['ignore', 'pipe', 'ignore'], windowsHide: true, timeout: 120000 }
  const w = spawnSync('wmic', ['process', 'get', 'Name,ProcessId'], opts)
  if (w.status === 0 && w.stdout.length > 0) {
    const out = []
    for (const line of decodeListing(w.stdout).split(/\r?\n/).slice(1)) {
      const m = /^(.*\S)\s+(\d+)\s*$/.exec(line)
      if (m !== null) out.push({ name: m[1], pid: Number(m[2]) })
    }
    if (out.length > 0) return out
  }
  const t = spawnSync('tasklist', ['/fo', 'csv', '/nh'], opts)
  if (t.status === 0 && t.stdout.length > 0) {
    const out = []
    for (const line of decodeListing(t.stdout).split(/\r?\n/)) {
      const m = /^"([^"]*)","(\d+)"/.exec(line)
      if (m !== null) out.push({ name: m[1], pid: Number(m[2]) })
    }
    if (out.length > 0) return out
  }
  throw new Error('neither wmic nor tasklist listed the processes of the system')
}

/** Running processes whose image name starts with `tag` ([{ name, pid }]). */
function imageMarked (tag) {
  const want = tag.toLowerCase()
  return systemProcesses().filter((p) => p.name.toLowerCase().startsWith(want))
}

module.exports = { loadWithBackend, newMark, env, marked, helpers, commOf, ppidOf, pgidOf, sleep, waitFor, exited, leftoverCgroups, newMarkDir, isAlive, markedPids, aliveMarked, newImageMarks, systemProcesses, imageMarked }
