'use strict'
// A command spawned while kill() or close() runs (red team, contract 0.3: "once kill()
// or close() settles, no process started in the scope is alive", "kill() still
// settles"). Before: a member whose helper had not reported its reaper yet counted as
// gone, the kill waited only for the members it started with, and spawn was allowed
// until close() had finished: 3 of 12 close() calls (subreaper, as nobody) settled with
// the late job alive and 9 stayed pending; as root (cgroup) 12 of 12 stayed pending.
// Now close() refuses spawn from its start (SCOPE_CLOSED), and kill() kills members
// that report in during its last phase and the cgroup on every check.

const assert = require('node:assert/strict')
const h = require('./helpers.js')

const ROUNDS = Number(process.env.AGENT_OS_LATE_SPAWN_ROUNDS) || 12
const BOUND_MS = 5000

function backends () {
  if (process.platform !== 'linux') return []
  const out = ['subreaper']
  if (process.getuid() === 0) out.unshift('cgroup')
  return out
}

function within (promise, ms) {
  let timer
  return Promise.race([
    promise.then(() => true),
    new Promise((resolve) => { timer = setTimeout(() => resolve(false), ms) })
  ]).finally(() => clearTimeout(timer))
}

describe('process scopes: a command spawned while kill() or close() runs', function () {
  this.timeout(ROUNDS * 2 * (BOUND_MS + 2000) + 60000)
  before(function () {
    if (backends().length === 0) this.skip() // Linux backends
  })

  for (const backend of backends()) {
    it(`${backend}: close() refuses spawn from its start; ${ROUNDS} rounds, 0 survivors, always settled`, async function () {
      const mod = h.loadWithBackend(backend)
      const { script } = h.newMarkDir()
      const mark = h.newMark()
      const opts = { stdio: 'ignore', env: h.env(mark) }
      let pending = 0
      for (let i = 0; i < ROUNDS; i++) {
        const scope = await mod.openProcessScope()
        scope.spawn(process.execPath, [script], opts)
        const closing = scope.close()
        assert.throws(() => scope.spawn(process.execPath, [script], opts), { code: 'SCOPE_CLOSED' })
        if (!(await within(closing, BOUND_MS))) pending++
      }
      await h.sleep(300)
      // Found by the mark in their environment (a pid namespace's pids are not ours).
      const alive = h.marked(mark)
      for (const pid of alive) try { process.kill(pid, 'SIGKILL') } catch {}
      assert.equal(pending, 0, `close() pending after ${BOUND_MS} ms in ${pending} of ${ROUNDS}`)
      assert.deepEqual(alive, [], 'a command outlived close()')
    })

    it(`${backend}: a command spawned right after kill() begins is ended by it; ${ROUNDS} rounds, 0 survivors, always settled`, async function () {
      const mod = h.loadWithBackend(backend)
      const { script } = h.newMarkDir()
      const mark = h.newMark()
      const opts = { stdio: 'ignore', env: h.env(mark) }
      let pending = 0
      for (let i = 0; i < ROUNDS; i++) {
        const scope = await mod.openProcessScope()
        scope.spawn(process.execPath, [script], opts)
        const killing = scope.kill({ graceMs: 300 })
        // The late command starts a background job and exits, as `sh -c 'sleep & exit'`.
        scope.spawn(process.execPath, [script, 'spawn-detached'], opts)
        if (!(await within(killing, BOUND_MS))) pending++
        await h.sleep(50)
        const alive = h.marked(mark)
        for (const pid of alive) try { process.kill(pid, 'SIGKILL') } catch {}
        assert.deepEqual(alive, [], `round ${i}: a command outlived kill()`)
        await scope.close()
      }
      assert.equal(pending, 0, `kill() pending after ${BOUND_MS} ms in ${pending} of ${ROUNDS}`)
    })
  }
})
