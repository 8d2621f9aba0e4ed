'use strict'
// When the compiled binding cannot be loaded, the primitives fail closed with
// UNSUPPORTED_BACKEND and a reason a user can act on; nothing falls back to pure JS.
// The in-memory stand-in needs no binding and keeps working.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { makeConsumer } = require('../helpers/consumer.js')

describe('package: binding that cannot load', function () {
  let consumer, empty
  before(function () {
    consumer = makeConsumer()
    empty = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-nobinding-'))
  })
  after(function () {
    consumer.cleanup()
    fs.rmSync(empty, { recursive: true, force: true })
  })

  function run (script) {
    const r = consumer.node(['-e', script], { AGENT_OS_BINDING_ROOT: empty })
    assert.equal(r.status, 0, r.stderr)
    return JSON.parse(r.stdout)
  }

  it('file-authority: every call fails with UNSUPPORTED_BACKEND, async ones as rejections', function () {
    const out = run(`
      const fa = require('@scope/agent-os/file-authority')
      const res = {}
      const pick = (e) => ({ code: e.code, name: e.name, recoverable: e.recoverable, op: e.operation, message: e.message, isFA: e instanceof fa.FileAuthorityError })
      try { fa.openReadAuthoritySync(process.cwd()); res.sync = 'opened' } catch (e) { res.sync = pick(e) }
      try { fa.openWriteAuthoritySync(process.cwd()); res.wsync = 'opened' } catch (e) { res.wsync = pick(e) }
      let threw = false
      let p
      try { p = fa.openReadAuthority(process.cwd()) } catch { threw = true }
      res.threw = threw
      p.then(() => { res.async = 'opened' }, (e) => { res.async = pick(e) })
       .then(() => fa.openWriteAuthority(process.cwd()).catch((e) => { res.wasync = pick(e) }))
       .then(() => console.log(JSON.stringify(res)))`)
    assert.equal(out.threw, false)
    for (const k of ['sync', 'wsync', 'async', 'wasync']) {
      assert.equal(out[k].code, 'UNSUPPORTED_BACKEND', k)
      assert.equal(out[k].recoverable, 'no')
      assert.equal(out[k].isFA, true)
      assert.match(out[k].message, /prebuilt binary|failed to load/)
      assert.ok(!out[k].message.includes(empty), 'the message names no path')
    }
    assert.equal(out.sync.op, 'openReadAuthority')
    assert.equal(out.wasync.op, 'openWriteAuthority')
  })

  it('node-lock: tryAcquire, acquire and withLock fail with UNSUPPORTED_BACKEND', function () {
    const lock = path.join(empty, 'guard')
    const out = run(`
      const nl = require('@scope/agent-os/node-lock')
      const res = {}
      try { nl.tryAcquire(${JSON.stringify(lock)}); res.try = 'acquired' } catch (e) { res.try = e.code; res.isNL = e instanceof nl.NodeLockError }
      nl.acquire(${JSON.stringify(lock)}, { timeoutMs: 50 }).then(() => { res.acquire = 'acquired' }, (e) => { res.acquire = e.code })
        .then(() => nl.withLock(${JSON.stringify(lock)}, () => 1).catch((e) => { res.withLock = e.code }))
        .then(() => console.log(JSON.stringify(res)))`)
    assert.deepEqual(out, { try: 'UNSUPPORTED_BACKEND', isNL: true, acquire: 'UNSUPPORTED_BACKEND', withLock: 'UNSUPPORTED_BACKEND' })
    assert.ok(!fs.existsSync(lock), 'no guard file was created without the binding')
  })

  it('process: killProcessTree rejects with UNSUPPORTED_BACKEND for a live child', function () {
    const out = run(`
      const { spawn } = require('node:child_process')
      const { killProcessTree } = require('@scope/agent-os/process')
      // Windows has no sleep(1): a Node child that waits serves there.
      const child = process.platform === 'win32'
        ? spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' })
        : spawn('sleep', ['30'], { detached: true, stdio: 'ignore' })
      killProcessTree(child, { graceMs: 0 }).then(() => 'resolved', (e) => e.code).then((code) => {
        if (process.platform === 'win32') child.kill('SIGKILL')
        else process.kill(-child.pid, 'SIGKILL')
        console.log(JSON.stringify({ code }))
      })`)
    assert.equal(out.code, 'UNSUPPORTED_BACKEND')
  })

  it('file-authority/testing keeps working without the binding', function () {
    const out = run(`
      const { createMemoryAuthorities } = require('@scope/agent-os/file-authority/testing')
      const { reader } = createMemoryAuthorities({ a: 'hi' })
      console.log(JSON.stringify({ text: Buffer.from(reader.readBytesSync(['a'], { maxBytes: 10 })).toString() }))`)
    assert.deepEqual(out, { text: 'hi' })
  })
})
