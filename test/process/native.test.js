'use strict'
// The native part directly: held identities are never fooled by a recycled pid, the
// pid + start-time fallback (kernels without pidfd_open) works, handles are opaque.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const { spawn } = require('node:child_process')
const { once } = require('node:events')

const binding = require('../../lib/binding.js')
const { skipWithoutProc, identity, isAlive } = require('./helpers.js')

const native = process.platform === 'linux' ? binding.part('process') : undefined
const NS_LAST_PID = `${process.env.AOS_TEST_PROC || '/proc'}/sys/kernel/ns_last_pid`

/** Spawns `sleep` so that it gets exactly `pid` (root may steer the next pid through
 * ns_last_pid); undefined when another process took the pid first every time. */
async function spawnWithPid (pid) {
  // Every task created anywhere on the host (processes and threads alike) races for
  // the steered pid, so a busy machine needs many tries.
  for (let i = 0; i < 200; i++) {
    fs.writeFileSync(NS_LAST_PID, String(pid - 1))
    const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
    if (child.pid === pid) return child
    child.kill('SIGKILL')
    await once(child, 'exit')
  }
  return undefined
}

describe('process: native part', function () {
  // Without /proc: only the child and its group are reachable (see helpers.js).
  beforeEach(skipWithoutProc(/noPidfd: true/))
  before(function () {
    if (process.platform !== 'linux') this.skip() // /proc and shell trees: Linux only
  })
  for (const noPidfd of [false, true]) {
    it(`never signals a recycled pid: a held process that exited and was reaped stays gone (noPidfd: ${noPidfd})`, async function () {
      let writable = true
      try { fs.accessSync(NS_LAST_PID, fs.constants.W_OK) } catch { writable = false }
      if (!writable || process.getuid() !== 0) {
        this.skip() // steering pids needs root (CAP_SYS_ADMIN / CAP_CHECKPOINT_RESTORE)
      }
      const first = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
      const pid = first.pid
      const tree = native.open(pid, noPidfd ? 1 : 0)
      // SIGWINCH does nothing to sleep: the process is now a signalled member.
      assert.equal(await native.signal(tree, 28), 1)
      assert.deepEqual(native.pids(tree), [pid])
      assert.equal(native.alive(tree), 1)
      if (noPidfd) {
        // The fallback tells processes apart by start time, counted in clock ticks
        // (10 ms): a pid reused within the same tick is its documented residual race.
        await new Promise((resolve) => setTimeout(resolve, 30))
      }
      first.kill('SIGKILL')
      await once(first, 'exit') // reaped by Node: the pid is free
      const second = await spawnWithPid(pid)
      assert.ok(second !== undefined, 'could not recycle the pid')
      const id = identity(second.pid)
      try {
        assert.equal(native.alive(tree), 0) // the new process is not the held one
        assert.equal(await native.signal(tree, 9), 0) // SIGKILL reaches nobody
        assert.equal(isAlive(id), true)
      } finally {
        native.close(tree)
        second.kill('SIGKILL')
      }
    })
  }

  // The pid + start time fallback (and the other forced paths) run the whole process
  // suite: test/process/run-paths.sh, with AGENT_OS_PROCESS_FORCE read once at load.

  it('a tree handle is opaque and checked', async function () {
    const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
    const exited = once(child, 'exit')
    const tree = native.open(child.pid, 0)
    try {
      assert.deepEqual(Object.keys(tree), [])
      assert.equal(JSON.stringify(tree), '{}')
      assert.throws(() => native.alive({}), { name: 'TypeError' })
      assert.throws(() => native.signal(tree, 0), { name: 'TypeError' })
      assert.throws(() => native.open(0, 0), { name: 'TypeError' })
      assert.throws(() => native.open(process.pid, 0), { hostCode: 'EINVAL' })
      const p = native.signal(tree, 15)
      assert.throws(() => native.alive(tree), /in flight/)
      native.close(tree) // deferred until the signal work ends
      assert.equal(await p, 1)
      assert.equal(native.alive(tree), 0)
      native.close(tree) // idempotent
      await exited
      assert.equal(child.signalCode, 'SIGTERM')
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  })

  it('a root that is already gone gives a tree that finds and signals nothing', async function () {
    const child = spawn('true', [], { stdio: 'ignore' })
    const pid = child.pid
    await once(child, 'exit')
    const tree = native.open(pid, 0)
    assert.equal(await native.signal(tree, 9), 0)
    assert.equal(native.alive(tree), 0)
    native.close(tree)
  })
})
