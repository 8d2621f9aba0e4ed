'use strict'
// Real process trees for the process tests, and /proc checks of who is alive.
// A process is named by pid plus start time (field 22 of /proc/<pid>/stat), so a
// recycled pid never passes for a process the test recorded.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// Where the tests read the process table. The no-/proc run of the suite
// (test/process/run-paths.sh) hides /proc from the package under test and hands the
// tests a second mount of it here.
const PROC = process.env.AOS_TEST_PROC || '/proc'
// True when the package under test sees no /proc (the no-proc run): only the child
// and its group are reachable there (contract), so tests that need the walk of
// descendants outside the group are skipped, by name, with skipWithoutProc.
const NO_PROC = process.platform === 'linux' && !fs.existsSync('/proc/self/stat')

/** A beforeEach hook: skips the tests whose title matches `re` in the no-proc run. */
function skipWithoutProc (re) {
  return function () {
    if (NO_PROC && re.test(this.currentTest.title)) this.skip()
  }
}

function stat (pid) {
  let text
  try {
    text = fs.readFileSync(`${PROC}/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { state: f[0], ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]), start: f[19] }
}

/** This process's own process group. Read from /proc/self/status (NSpgid): qemu-user
 * synthesizes /proc/<own pid>/stat with a group of 0, while status is the kernel's. */
function ownPgid () {
  const m = /^NSpgid:\s*(\d+)/m.exec(fs.readFileSync(`${PROC}/self/status`, 'utf8'))
  return m ? Number(m[1]) : stat(process.pid).pgid
}

function identity (pid) {
  const s = stat(pid)
  return s === null ? null : { pid, start: s.start }
}

/** True while the recorded process runs (a zombie has exited; a main thread that
 * called pthread_exit while other threads run does not make one). */
function isAlive (id) {
  const s = stat(id.pid)
  if (s === null || s.start !== id.start) return false
  if (s.state !== 'Z' && s.state !== 'X') return true
  try {
    return fs.readdirSync(`${PROC}/${id.pid}/task`).some((tid) => Number(tid) !== id.pid)
  } catch {
    return false
  }
}

/** Live (non-zombie) processes whose process group is `pgid`, by pid. */
function groupMembers (pgid) {
  const out = []
  for (const name of fs.readdirSync(PROC)) {
    if (!/^\d+$/.test(name)) continue
    const s = stat(Number(name))
    if (s !== null && s.pgid === pgid && isAlive({ pid: Number(name), start: s.start })) out.push(Number(name))
  }
  return out
}

function survivors (ids) {
  return ids.filter(isAlive)
}

const scripts = {
  // Every member dies on SIGTERM.
  obey: { expect: 3, text: 'sleep 1000 & echo $! >> "$F"; sleep 1000 & echo $! >> "$F"; echo $$ >> "$F"; wait' },
  // SIGTERM ignored by every member (ignored dispositions survive fork and exec).
  ignore: {
    expect: 4,
    text: 'trap "" TERM; sleep 1000 & echo $! >> "$F"; ' +
      'bash -c \'sleep 1000 & echo $! >> "$F"; echo $$ >> "$F"; wait\' & ' +
      'echo $$ >> "$F"; wait'
  },
  // Five levels of bash, each with a sleep.
  deep: { expect: 10, file: 'level.sh', args: ['5'] },
  deep3: { expect: 6, file: 'level.sh', args: ['3'] },
  // Twenty children.
  wide: { expect: 21, text: 'for i in $(seq 20); do sleep 1000 & echo $! >> "$F"; done; echo $$ >> "$F"; wait' },
  // A member that left the group and the session (setsid) from inside the tree.
  escapee: {
    expect: 3,
    text: 'setsid sleep 1000 & echo $! >> "$F"; sleep 1000 & echo $! >> "$F"; echo $$ >> "$F"; wait'
  },
  // A SIGTERM-obeying root whose subtree ignores SIGTERM and keeps forking after the
  // initial signal: only a walk from the remembered members finds the new ones.
  orphanedIgnorer: {
    expect: 3,
    text: 'bash -c \'trap "" TERM; echo $$ >> "$F"; sleep 1000 & echo $! >> "$F"; ' +
      'while :; do sleep 0.05; done\' & echo $$ >> "$F"; wait'
  }
}

const LEVEL = 'echo $$ >> "$F"; if [ "$1" -gt 1 ]; then bash "$0" $(($1 - 1)) & fi; ' +
  'sleep 1000 & echo $! >> "$F"; wait\n'

/**
 * Spawns a tree (`kind` from `scripts`) and waits until every member recorded its
 * pid. Returns { child, ids } where ids are the identities of all members (root
 * included).
 */
async function spawnTree (kind, { detached = true, stdio = 'ignore', dir } = {}) {
  const spec = scripts[kind]
  const own = dir === undefined
  const where = own ? fs.mkdtempSync(path.join(os.tmpdir(), 'aos-proc-')) : dir
  const file = path.join(where, `pids-${kind}-${Math.random().toString(36).slice(2)}`)
  let args
  if (spec.file !== undefined) {
    const script = path.join(where, spec.file)
    if (!fs.existsSync(script)) fs.writeFileSync(script, LEVEL)
    args = [script, ...spec.args]
  } else {
    args = ['-c', spec.text]
  }
  const child = spawn('bash', args, { detached, stdio, env: { ...process.env, F: file } })
  const pids = await readPids(file, spec.expect, child)
  const ids = pids.map(identity).filter((id) => id !== null)
  if (ids.length !== spec.expect) throw new Error(`tree ${kind}: members missing`)
  if (own) fs.rmSync(where, { recursive: true, force: true })
  return { child, ids }
}

async function readPids (file, expect, child) {
  for (let i = 0; i < 3000; i++) {
    let lines = []
    try {
      lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)
    } catch {}
    if (lines.length >= expect) return lines.map(Number)
    if (child.exitCode !== null || child.signalCode !== null) break
    await sleep(10)
  }
  throw new Error('tree did not come up')
}

/** Last resort after a failed test: SIGKILL whatever of `ids` still runs. */
function reap (ids) {
  for (const id of ids) {
    if (isAlive(id)) {
      try { process.kill(id.pid, 'SIGKILL') } catch {}
    }
  }
}

async function waitFor (predicate, what) {
  for (let i = 0; i < 1000; i++) {
    if (predicate()) return
    await sleep(10)
  }
  throw new Error(`timed out waiting for ${what}`)
}

module.exports = { PROC, NO_PROC, skipWithoutProc, groupMembers, ownPgid, sleep, stat, identity, isAlive, survivors, spawnTree, reap, waitFor, scripts }
