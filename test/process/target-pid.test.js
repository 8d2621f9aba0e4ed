'use strict'
// killProcessTree(pid): a number target, and the error shape of the process subpath.

const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { once } = require('node:events')

const { killProcessTree, ProcessTreeError, ProcessTreeTypeError } = require('../../lib/process.js')
const { skipWithoutProc, isAlive, survivors, spawnTree, reap, stat } = require('./helpers.js')

describe('process: killProcessTree(pid) and errors', function () {
  // Without /proc: only the child and its group are reachable (see helpers.js).
  beforeEach(skipWithoutProc(/descendants end/))
  this.timeout(120000)
  let cleanup = []
  afterEach(function () {
    for (const ids of cleanup) reap(ids)
    cleanup = []
  })

  it('a number target: that process and its descendants end, not its parent; escalates to SIGKILL', async function () {
    if (process.platform !== 'linux') this.skip() // shell trees and /proc
    // 'ignore': the outer bash (the child) with a sleep, and an inner bash with a
    // sleep; every one ignores SIGTERM.
    const { child, ids } = await spawnTree('ignore')
    cleanup.push(ids)
    const below = (parent) => ids.filter((id) => stat(id.pid).ppid === parent.pid)
    const outer = ids.find((id) => id.pid === child.pid)
    const inner = below(outer).find((id) => below(id).length === 1)
    const innerSleep = below(inner)[0]
    const outerSleep = below(outer).find((id) => id !== inner)
    const t0 = performance.now()
    await killProcessTree(inner.pid, { graceMs: 100 })
    assert.ok(performance.now() - t0 >= 100, 'settled before the grace although SIGTERM is ignored')
    assert.deepEqual(survivors([inner, innerSleep]), [])
    assert.equal(isAlive(outer), true)
    assert.equal(isAlive(outerSleep), true) // in the same group, but the target leads none
    await killProcessTree(child, { graceMs: 0 })
    assert.deepEqual(survivors(ids), [])
  })

  it('a number target that leads a group: the group is ended too', async function () {
    if (process.platform !== 'linux') this.skip()
    const { child, ids } = await spawnTree('obey') // detached: leads its group
    cleanup.push(ids)
    await killProcessTree(child.pid, { graceMs: 5000 })
    assert.deepEqual(survivors(ids), [])
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit')
    assert.equal(child.signalCode, 'SIGTERM')
  })

  it('a pid that names no process resolves at once', async function () {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' })
    await once(child, 'exit')
    // (The pid is free unless the host reused it within this tick.)
    await killProcessTree(child.pid, { graceMs: 0 })
  })

  it('the id of a thread that is not its process\'s main thread is INVALID_OPTION (kill(2) of it would end the whole process)', async function () {
    if (process.platform !== 'linux') this.skip() // thread ids read from /proc/<pid>/task
    const child = spawn(process.execPath, ['-e',
      'new (require("node:worker_threads").Worker)("setInterval(() => {}, 1000)", { eval: true }); setInterval(() => {}, 1000)'],
    { stdio: 'ignore' })
    try {
      await once(child, 'spawn')
      const { PROC } = require('./helpers.js')
      let tids = []
      for (let i = 0; i < 200 && tids.length === 0; i++) {
        tids = require('node:fs').readdirSync(`${PROC}/${child.pid}/task`).map(Number).filter((t) => t !== child.pid)
        if (tids.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
      }
      assert.ok(tids.length > 0, 'the child has threads besides its main one')
      for (const tid of tids) {
        const err = await killProcessTree(tid, { graceMs: 0 }).then(() => assert.fail('resolved'), (e) => e)
        assert.equal(err.code, 'INVALID_OPTION')
        assert.equal(err.argument, 'target')
        assert.match(err.message, /^killProcessTree failed: INVALID_OPTION: target must be a process id, not the id of a thread/)
        const lookalike = { pid: tid, exitCode: null, signalCode: null, once () {}, removeListener () {} }
        const err2 = await killProcessTree(lookalike, { graceMs: 0 }).then(() => assert.fail('resolved'), (e) => e)
        assert.deepEqual([err2.code, err2.argument], ['INVALID_OPTION', 'target.pid'])
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(child.exitCode, null)
      assert.equal(child.signalCode, null, 'the process of the thread was signalled')
      // Its main thread's id is the process: that is a valid target.
      await killProcessTree(child.pid, { graceMs: 2000 })
      if (child.signalCode === null) await once(child, 'exit')
      assert.equal(child.signalCode, 'SIGTERM')
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('0, negative, non-integer, too large, the own pid and 1 are INVALID_OPTION naming `target`', async function () {
    for (const pid of [0, -5, 1.5, NaN, Infinity, 2 ** 31, process.pid, 1]) {
      let p
      assert.doesNotThrow(() => { p = killProcessTree(pid) })
      const err = await p.then(() => assert.fail('resolved'), (e) => e)
      assert.ok(err instanceof TypeError)
      assert.ok(err instanceof ProcessTreeError)
      assert.ok(err instanceof ProcessTreeTypeError)
      assert.equal(err.code, 'INVALID_OPTION')
      assert.equal(err.argument, 'target')
      assert.equal(err.operation, 'killProcessTree')
      assert.match(err.message, /^killProcessTree failed: INVALID_OPTION: target /)
      if (Number.isFinite(pid) && Math.abs(pid) > 1) assert.ok(!err.message.includes(String(pid)), 'message holds the value')
    }
  })

  it('every bad option names itself and never its value', async function () {
    const stub = { pid: 123456, exitCode: null, signalCode: null, once () {}, removeListener () {} }
    const cases = [
      [{ graceMs: -17 }, 'options.graceMs'],
      [{ signal: 'SIGSECRET' }, 'options.signal'],
      [{ preKill: 'secret' }, 'options.preKill'],
      ['secret', 'options']
    ]
    for (const [options, argument] of cases) {
      const err = await killProcessTree(stub, options).then(() => assert.fail('resolved'), (e) => e)
      assert.equal(err.code, 'INVALID_OPTION')
      assert.equal(err.argument, argument)
      assert.ok(err.message.includes(argument))
      assert.ok(!/secret|SECRET|-17/.test(err.message), err.message)
    }
    const err = await killProcessTree({ pid: -3, exitCode: null, signalCode: null, once () {}, removeListener () {} })
      .then(() => assert.fail('resolved'), (e) => e)
    assert.equal(err.argument, 'target.pid')
    const notSpawned = await killProcessTree({ exitCode: null, signalCode: null, once () {}, removeListener () {} })
      .then(() => assert.fail('resolved'), (e) => e)
    assert.equal(notSpawned.code, 'NOT_SPAWNED')
    assert.ok(notSpawned instanceof TypeError && notSpawned instanceof ProcessTreeError)
  })

  it('ProcessTreeError: HOST_IO and UNSUPPORTED_BACKEND are Errors, not TypeErrors; codes are checked', function () {
    const e = new ProcessTreeError('HOST_IO', { hostCode: 'EMFILE' })
    assert.ok(e instanceof Error && !(e instanceof TypeError) && e instanceof ProcessTreeError)
    assert.equal(e.name, 'ProcessTreeError')
    assert.equal(e.message, 'killProcessTree failed: HOST_IO (EMFILE)')
    assert.throws(() => new ProcessTreeError('NOPE'), TypeError)
    assert.throws(() => new ProcessTreeError('INVALID_OPTION'), TypeError)
    assert.ok(!(new Error('x') instanceof ProcessTreeError))
  })
})
