'use strict'
// killProcessTree on trees of Node processes: runs on Linux, macOS and Windows.
// (The other process tests read /proc and run shell trees: Linux only.)

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

const { EventEmitter } = require('node:events')
const { killProcessTree, DEFAULT_KILL_GRACE_MS } = require('../../lib/process.js')

const fixture = path.join(__dirname, 'fixtures', 'tree.js')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function running (pid) {
  if (process.platform === 'linux') {
    try {
      const text = fs.readFileSync(`${process.env.AOS_TEST_PROC || '/proc'}/${pid}/stat`, 'utf8')
      return !/^[ZX]/.test(text.slice(text.lastIndexOf(')') + 2))
    } catch {
      return false
    }
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

async function nodeTree (depth, width, mode) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-ptree-'))
  const file = path.join(dir, 'pids')
  let expect = 0
  for (let d = 0, n = 1; d <= depth; d++, n *= width) expect += n
  const child = spawn(process.execPath, [fixture, file, String(depth), String(width), mode || ''],
    { detached: true, stdio: 'ignore' })
  for (let i = 0; i < 3000; i++) {
    let pids = []
    try { pids = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) } catch {}
    if (pids.length >= expect) {
      fs.rmSync(dir, { recursive: true, force: true })
      return { child, pids }
    }
    await sleep(10)
  }
  throw new Error('tree did not come up')
}

describe('process: trees of Node processes (every platform)', function () {
  this.timeout(60000)
  let left = []
  afterEach(function () {
    for (const pid of left) {
      try { process.kill(pid, 'SIGKILL') } catch {}
    }
    left = []
  })

  it('exports DEFAULT_KILL_GRACE_MS = 2000', function () {
    assert.equal(DEFAULT_KILL_GRACE_MS, 2000)
  })

  it('rejects (never throws) NOT_SPAWNED and INVALID_OPTION; resolves for an exited child', async function () {
    const stub = (props) => Object.assign(new EventEmitter(), { exitCode: null, signalCode: null }, props)
    let p
    assert.doesNotThrow(() => { p = killProcessTree(stub({})) })
    await assert.rejects(p, (err) => err instanceof TypeError && err.code === 'NOT_SPAWNED')
    for (const options of [{ graceMs: -1 }, { graceMs: NaN }, { signal: 'SIGBOGUS' }, { preKill: 'x' }, 7]) {
      assert.doesNotThrow(() => { p = killProcessTree(stub({ pid: 123456 }), options) })
      await assert.rejects(p, (err) => err instanceof TypeError && err.code === 'INVALID_OPTION')
    }
    await killProcessTree(stub({ pid: process.pid, exitCode: 0 }))
    await killProcessTree(stub({ pid: process.pid, signalCode: 'SIGTERM' }))
  })

  it('ends a tree that obeys the signal', async function () {
    const { child, pids } = await nodeTree(2, 2)
    left = pids
    await killProcessTree(child, { graceMs: 5000 })
    assert.ok(child.exitCode !== null || child.signalCode !== null)
    assert.deepEqual(pids.filter(running), [])
  })

  it('ends a tree that ignores SIGTERM (SIGKILL after the grace on POSIX)', async function () {
    const { child, pids } = await nodeTree(2, 2, 'ignore-term')
    left = pids
    await killProcessTree(child, { graceMs: 200 })
    if (process.platform !== 'win32') assert.equal(child.signalCode, 'SIGKILL')
    assert.deepEqual(pids.filter(running), [])
  })
})
