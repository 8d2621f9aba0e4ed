'use strict'
// Process-scope tests: loading the module with a backend forced, and finding every
// process a test started by a mark in its environment (inherited through every fork
// and exec, whatever session or group the process moves to), read from /proc.

const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')

const MODULE = path.join(__dirname, '..', '..', 'lib', 'internal', 'process-scope.js')

/** The scope module as loaded with AGENT_OS_PROCESS_SCOPE_BACKEND=backend (the switch
 * is read once at load, so the module is loaded afresh). */
function loadWithBackend (backend) {
  const saved = process.env.AGENT_OS_PROCESS_SCOPE_BACKEND
  process.env.AGENT_OS_PROCESS_SCOPE_BACKEND = backend
  delete require.cache[MODULE]
  try {
    return require(MODULE)
  } finally {
    delete require.cache[MODULE]
    if (saved === undefined) delete process.env.AGENT_OS_PROCESS_SCOPE_BACKEND
    else process.env.AGENT_OS_PROCESS_SCOPE_BACKEND = saved
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

module.exports = { loadWithBackend, newMark, env, marked, helpers, commOf, ppidOf, pgidOf, sleep, waitFor, exited, leftoverCgroups }
