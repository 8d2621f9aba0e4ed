'use strict'
// node-lock never writes a file that is not a guard (issue 13): a data file passed as
// lockPath by mistake (JSON, a bare number, a hard link to it) is refused UNSAFE_ENTRY
// and left byte for byte as it was, link count included; a guard the package created,
// or one holding a record of this or a later version, still locks across processes.
// Also: every bad argument names itself, withLock waits when asked, and
// UNSUPPORTED_BACKEND says why.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { tryAcquire, acquire, withLock } = require('../../lib/node-lock.js')
const { tempDir, startHolder, ownRecord } = require('./helpers.js')

const LIB = path.join(__dirname, '..', '..', 'lib', 'node-lock.js')

function snapshot (p) {
  const st = fs.lstatSync(p)
  return { bytes: fs.readFileSync(p).toString('hex'), nlink: st.nlink, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }
}

describe('node-lock: the guard file holds nothing but the holder record', function () {
  let dir
  const cleanup = []
  beforeEach(function () { dir = tempDir() })
  afterEach(async function () {
    for (const f of cleanup.splice(0).reverse()) await f()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const DATA = {
    'a file holding JSON': '{"important": true}',
    'a file holding "123\\n" (an old bare pid record looks the same)': '123\n',
    'a file holding a record with a bad pid': 'agent-os-lock/1 12x\n',
    'a file holding a record without its newline': 'agent-os-lock/1 12',
    'a file holding a record and more': 'agent-os-lock/1 12\nmore\n',
    'a file longer than any record': 'agent-os-lock/1 ' + '1'.repeat(80) + '\n',
    'a file holding one NUL byte': '\0'
  }
  for (const [what, content] of Object.entries(DATA)) {
    it(`${what} is UNSAFE_ENTRY from tryAcquire, acquire and withLock, bytes unchanged`, async function () {
      const p = path.join(dir, 'data.json')
      fs.writeFileSync(p, content)
      const before = snapshot(p)
      assert.throws(() => tryAcquire(p), (err) => err.code === 'UNSAFE_ENTRY' && !err.message.includes(dir))
      await assert.rejects(acquire(p, { timeoutMs: 50 }), (err) => err.code === 'UNSAFE_ENTRY')
      let ran = false
      await assert.rejects(withLock(p, () => { ran = true }), (err) => err.code === 'UNSAFE_ENTRY')
      assert.equal(ran, false)
      assert.deepEqual(snapshot(p), before, 'byte for byte as it was')
    })
  }

  it('a hard link to a data file is UNSAFE_ENTRY, and neither name loses a byte or a link', function () {
    const data = path.join(dir, 'data.json')
    fs.writeFileSync(data, '{"important": true}')
    const p = path.join(dir, 'guard.lock')
    fs.linkSync(data, p)
    const before = snapshot(data)
    assert.equal(before.nlink, 2)
    assert.throws(() => tryAcquire(p), (err) => err.code === 'UNSAFE_ENTRY')
    assert.deepEqual(snapshot(data), before)
    assert.deepEqual(snapshot(p), before)
  })

  it('a hard link to an empty file is UNSAFE_ENTRY too (it is not used and not written)', function () {
    const data = path.join(dir, 'empty-data')
    fs.writeFileSync(data, '')
    const p = path.join(dir, 'guard.lock')
    fs.linkSync(data, p)
    assert.throws(() => tryAcquire(p), (err) => err.code === 'UNSAFE_ENTRY')
    assert.equal(fs.lstatSync(data).nlink, 2)
    assert.equal(fs.readFileSync(data, 'utf8'), '')
  })

  it('a data file that another process holds locked is refused or held, never written', async function () {
    // A holder locks an empty guard; then a non-participant writes data into it. The
    // refused attempt reads nothing into the file and changes nothing.
    const p = path.join(dir, 'guard.lock')
    const h = await startHolder()
    cleanup.push(() => h.stop())
    assert.equal((await h.request('tryAcquire', { lockPath: p })).held, true)
    fs.writeFileSync(p, '{"written": "by someone else"}')
    const before = snapshot(p)
    assert.equal(tryAcquire(p), undefined)
    await assert.rejects(withLock(p, () => 1), (err) => err.code === 'LOCK_HELD')
    assert.deepEqual(snapshot(p), before)
    await h.request('release', { lockPath: p })
    // Released (the holder cleared its own record, if any, not this data): now refused.
    assert.throws(() => tryAcquire(p), (err) => err.code === 'UNSAFE_ENTRY')
    assert.equal(fs.readFileSync(p, 'utf8'), '{"written": "by someone else"}')
  })

  it('a guard the package created locks and releases across processes, again and again', async function () {
    const p = path.join(dir, 'guard.lock')
    const h = await startHolder()
    cleanup.push(() => h.stop())
    for (let round = 0; round < 3; round++) {
      assert.equal((await h.request('tryAcquire', { lockPath: p })).held, true)
      assert.equal(fs.readFileSync(p, 'utf8'), ownRecord(h.pid), 'the other process\'s record')
      await assert.rejects(withLock(p, () => 1), (err) => err.code === 'LOCK_HELD' && err.holderPid === h.pid)
      await h.request('release', { lockPath: p })
      assert.equal(fs.readFileSync(p, 'utf8'), '', 'cleared on release')
      const g = tryAcquire(p)
      assert.ok(g !== undefined)
      assert.equal(fs.readFileSync(p, 'utf8'), ownRecord())
      assert.equal((await h.request('tryAcquire', { lockPath: p })).held, false, 'held here: refused there')
      g.release()
    }
  })

  it('a guard holding a record of version 1 (a holder that died) or of a later version is used', function () {
    for (const record of ['agent-os-lock/1 1\n', 'agent-os-lock/1 4294967295\n', 'agent-os-lock/2 host=a pid=1\n', 'agent-os-lock/37 \n']) {
      const p = path.join(dir, 'guard.lock')
      fs.writeFileSync(p, record)
      const g = tryAcquire(p)
      assert.ok(g !== undefined, `a record ${JSON.stringify(record)} is a guard`)
      assert.equal(fs.readFileSync(p, 'utf8'), ownRecord(), 'the stale record was replaced (cleared on Linux)')
      g.release()
      assert.equal(fs.readFileSync(p, 'utf8'), '')
      fs.rmSync(p)
    }
  })

  describe('arguments', function () {
    const p = () => path.join(dir, 'guard.lock')
    const cases = [
      ['acquire', () => acquire(p(), { timeoutMs: -1 }), 'options.timeoutMs must be a finite number >= 0', '-1'],
      ['acquire', () => acquire(p(), { timeoutMs: 'NaN-ish secret' }), 'options.timeoutMs must be a finite number >= 0', 'secret'],
      ['acquire', () => acquire(p(), { timeoutMs: Infinity }), 'options.timeoutMs must be a finite number >= 0', 'Infinity'],
      ['acquire', () => acquire(p(), { signal: 'secret-signal' }), 'options.signal must be an AbortSignal', 'secret'],
      ['acquire', () => acquire(p(), 'secret-options'), 'options must be an object', 'secret'],
      ['withLock', () => withLock(p(), 'secret-fn'), 'fn must be a function', 'secret'],
      ['withLock', () => withLock(p(), () => 1, { timeoutMs: -5 }), 'options.timeoutMs must be a finite number >= 0', '-5'],
      ['withLock', () => withLock(p(), () => 1, { signal: {} }), 'options.signal must be an AbortSignal', 'object'],
      ['withLock', () => withLock('relative/secret.lock', () => 1), 'lockPath must be an absolute path', 'secret'],
      ['withLock', () => withLock(p(), () => 1, { timeout: 5 }), 'options.timeout is not an option of withLock', '5'],
      ['tryAcquire', () => tryAcquire('/tmp/lone-\ud800-secret.lock'), 'lockPath must be an absolute path', 'secret'],
      ['tryAcquire', () => tryAcquire(p(), { wait: true }), 'options must be left out', 'wait'],
      ['tryAcquire', () => tryAcquire('relative/secret.lock'), 'lockPath must be an absolute path', 'secret']
    ]
    for (const [op, call, names, value] of cases) {
      it(`${op}: "${names}", without the value`, async function () {
        let err
        try { await call() } catch (e) { err = e }
        assert.ok(err, 'refused')
        // A bad lockPath is INVALID_PATH; every other bad argument INVALID_OPTION (0.3).
        assert.equal(err.code, names.startsWith('lockPath') ? 'INVALID_PATH' : 'INVALID_OPTION')
        assert.equal(err.argument, names.split(' ')[0])
        assert.equal(err.operation, op)
        assert.ok(err.message.includes(names), err.message)
        assert.ok(!err.message.includes(value), 'the value is not in the message: ' + err.message)
      })
    }
    it('acquire and withLock reject, never throw, for every bad option', function () {
      const r = acquire(p(), { timeoutMs: -1 })
      assert.ok(r instanceof Promise)
      r.catch(() => {})
      const w = withLock(p(), () => 1, { signal: 1 })
      assert.ok(w instanceof Promise)
      w.catch(() => {})
    })
  })

  describe('withLock waits when asked', function () {
    it('with timeoutMs: waits for the holder to release, then runs fn', async function () {
      const p = path.join(dir, 'guard.lock')
      const h = await startHolder()
      cleanup.push(() => h.stop())
      assert.equal((await h.request('tryAcquire', { lockPath: p })).held, true)
      setTimeout(() => { h.request('release', { lockPath: p }) }, 150)
      const started = performance.now()
      const v = await withLock(p, () => tryAcquire(p) === undefined ? 'held inside' : 'not held', { timeoutMs: 5000 })
      assert.equal(v, 'held inside')
      assert.ok(performance.now() - started >= 100, 'it waited')
      const g = tryAcquire(p)
      assert.ok(g !== undefined, 'released after fn')
      g.release()
    })

    it('with timeoutMs: LOCK_TIMEOUT with the holder pid when it stays held, fn not run', async function () {
      const p = path.join(dir, 'guard.lock')
      const h = await startHolder()
      cleanup.push(() => h.stop())
      assert.equal((await h.request('tryAcquire', { lockPath: p })).held, true)
      let ran = false
      await assert.rejects(withLock(p, () => { ran = true }, { timeoutMs: 120 }),
        (err) => err.code === 'LOCK_TIMEOUT' && err.operation === 'withLock' && err.holderPid === h.pid)
      assert.equal(ran, false)
    })

    it('with a signal: rejects with its reason on abort; without options or with {}: LOCK_HELD at once', async function () {
      const p = path.join(dir, 'guard.lock')
      const g = tryAcquire(p)
      cleanup.push(() => g.release())
      const ac = new AbortController()
      const reason = new Error('stop')
      setTimeout(() => ac.abort(reason), 50)
      await assert.rejects(withLock(p, () => 1, { signal: ac.signal }), (err) => err === reason)
      const t0 = performance.now()
      await assert.rejects(withLock(p, () => 1), (err) => err.code === 'LOCK_HELD')
      await assert.rejects(withLock(p, () => 1, {}), (err) => err.code === 'LOCK_HELD')
      assert.ok(performance.now() - t0 < 1000)
    })
  })

  it('UNSUPPORTED_BACKEND says why the binding could not be loaded', function () {
    const empty = path.join(dir, 'no-binding')
    fs.mkdirSync(empty)
    const script = `
      const lock = require(${JSON.stringify(LIB)})
      const binding = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'binding.js'))})
      try { lock.tryAcquire(${JSON.stringify(path.join(dir, 'x.lock'))}) } catch (e) { console.log(JSON.stringify({ code: e.code, msg: e.message, why: binding.loadFailure() })) }`
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], {
      env: { ...process.env, AGENT_OS_BINDING_ROOT: empty }, encoding: 'utf8'
    }))
    assert.equal(out.code, 'UNSUPPORTED_BACKEND')
    assert.equal(typeof out.why, 'string')
    assert.ok(out.why.length > 0)
    assert.ok(out.msg.endsWith(`: ${out.why}`), out.msg)
    assert.ok(!out.msg.includes(empty))
  })
})
