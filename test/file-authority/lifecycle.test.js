'use strict'
// Lifetimes: close under load, descriptor leaks, garbage collection of unclosed
// authorities, worker threads; and secrecy of every error.

const assert = require('node:assert')
const fs = require('node:fs')
const path = require('node:path')
const util = require('node:util')
const { spawnSync } = require('node:child_process')
const { Worker } = require('node:worker_threads')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, mkfifo, fdCount } = require('../helpers/fs-layouts.js')
const { windows, wine, REASONS, skipBecause, makeSymlink } = require('../helpers/platform.js')

const LIB = require.resolve('../../lib/file-authority.js')

describe('file-authority lifetimes', function () {
  this.timeout(60000)
  let s
  beforeEach(function () {
    s = makeSandbox()
    fs.mkdirSync(path.join(s.root, 'd'))
    fs.writeFileSync(path.join(s.root, 'd', 'big'), Buffer.alloc(256 * 1024, 'z'))
  })
  afterEach(function () { s.cleanup() })

  describe('close under load', function () {
    it('operations in flight finish; the descriptor goes after the last; later ones are AUTHORITY_CLOSED', async function () {
      if (windows) skipBecause(this, REASONS.procFd)
      const baseline = fdCount()
      const r = fa.openReadAuthoritySync(s.root)
      const w = fa.openWriteAuthoritySync(s.root)
      assert.strictEqual(fdCount(), baseline + 2)
      const settled = []
      const reads = Array.from({ length: 200 }, (_, i) => {
        const p = i % 4 === 0 ? r.list(['d']) : r.readBytes(['d', 'big'], { maxBytes: 1 << 20 })
        p.then(() => settled.push(i), () => settled.push(i))
        return p
      })
      const writes = Array.from({ length: 10 }, (_, i) => w.writeText(['d', `w${i}`], `w${i}`))
      r.closeSync()
      const closing = w.close()
      assert.strictEqual(r.closed, true)
      assert.strictEqual(w.closed, true)
      assert.throws(() => r.readBytesSync(['d', 'big'], { maxBytes: 1 << 20 }), { code: 'AUTHORITY_CLOSED' })
      await assert.rejects(r.readBytes(['d', 'big'], { maxBytes: 1 << 20 }), { code: 'AUTHORITY_CLOSED' })
      await assert.rejects(w.writeText(['d', 'late'], 'late'), { code: 'AUTHORITY_CLOSED' })
      // Closed, but operations still run: the descriptors are still held.
      assert.ok(fdCount() >= baseline + 2)
      const results = await Promise.all(reads)
      await closing
      await Promise.all(writes)
      for (const [i, v] of results.entries()) {
        // A listing that ran beside the first writes (the pool runs four at a time) may
        // also show their new files and their temporary names.
        if (i % 4 === 0) assert.deepStrictEqual(v.map((e) => e.name).filter((n) => !/^(w\d|\.aos-[0-9a-f]{32}\.tmp)$/.test(n)), ['big'])
        else assert.strictEqual(v.length, 256 * 1024)
      }
      assert.strictEqual(settled.length, 200)
      for (let i = 0; i < 10; i++) assert.strictEqual(fs.readFileSync(path.join(s.root, 'd', `w${i}`), 'utf8'), `w${i}`)
      assert.ok(!fs.existsSync(path.join(s.root, 'd', 'late')))
      assert.strictEqual(fdCount(), baseline)
    })

    it('close() resolves only after the operations in flight settled', async function () {
      const r = fa.openReadAuthoritySync(s.root)
      let done = 0
      const ops = Array.from({ length: 50 }, () => r.readBytes(['d', 'big'], { maxBytes: 1 << 20 }).then(() => { done++ }))
      await r.close()
      assert.strictEqual(done, 50)
      await Promise.all(ops)
    })
  })

  it('leaks no descriptor on any path, success or failure, sync or async', async function () {
    if (windows) skipBecause(this, REASONS.procFd)
    mkfifo(path.join(s.root, 'fifo'))
    fs.symlinkSync(s.outside, path.join(s.root, 'link'))
    fs.writeFileSync(path.join(s.root, 'file'), 'f')
    const run = async (r, w) => {
      const attempts = [
        () => r.readBytesSync(['d', 'big'], { maxBytes: 1 << 20 }),
        () => r.readBytesSync(['d', 'big'], { maxBytes: 1 }),
        () => r.readBytesSync(['fifo'], { maxBytes: 1 }),
        () => r.readBytesSync(['link', 'secret'], { maxBytes: 1 }),
        () => r.readBytesSync(['file', 'x'], { maxBytes: 1 }),
        () => r.readBytesSync(['missing', 'x'], { maxBytes: 1 }),
        () => r.readBytesSync(['d'], { maxBytes: 1 }),
        () => r.listSync(['d']),
        () => r.listSync(['file']),
        () => r.listSync(['link']),
        () => r.listSync(['missing']),
        () => w.writeTextSync(['d', 'x'], 'x'),
        () => w.writeTextSync(['m', 'x'], 'x'),
        () => w.writeTextSync(['link', 'x'], 'x'),
        () => w.writeTextSync(['fifo'], 'x'),
        () => w.writeTextSync(['d'], 'x'),
        () => w.writeTextSync(['d', 'x'], '\ud800'),
        () => w.writeTextSync(['n', 'o', 'p'], 'x', { createParents: true }),
        () => r.readBytes(['d', 'big'], { maxBytes: 1 << 20 }),
        () => r.readBytes(['link', 'secret'], { maxBytes: 1 }),
        () => r.list(['file']),
        () => w.writeText(['d', 'y'], 'y'),
        () => w.writeText(['fifo'], 'y'),
        () => fa.openReadAuthority(path.join(s.root, 'file')),
        () => fa.openReadAuthority(path.join(s.root, 'nope'))
      ]
      for (const a of attempts) {
        try { await a() } catch {}
      }
    }
    // Warm up (the thread pool, lazy loads), then measure.
    let r = fa.openReadAuthoritySync(s.root)
    let w = fa.openWriteAuthoritySync(s.root)
    await run(r, w)
    r.closeSync()
    w.closeSync()
    const baseline = fdCount()
    for (let i = 0; i < 40; i++) {
      r = await fa.openReadAuthority(s.root)
      w = fa.openWriteAuthoritySync(s.root, { sameRootAs: r })
      await run(r, w)
      await r.close()
      w.closeSync()
    }
    assert.strictEqual(fdCount(), baseline)
  })

  it('an authority garbage-collected unclosed releases its descriptor (also after an operation in flight)', function () {
    if (windows) skipBecause(this, REASONS.procFd)
    const script = `
      const fa = require(${JSON.stringify(LIB)})
      const fs = require('fs')
      const count = () => fs.readdirSync('/proc/self/fd').length
      const tick = () => new Promise((resolve) => setImmediate(resolve))
      ;(async () => {
        const baseline = count()
        ;(() => { for (let i = 0; i < 300; i++) fa.openReadAuthoritySync(${JSON.stringify(s.root)}) })()
        const opened = count()
        // Dropped with an operation in flight: the operation still completes.
        const pending = (() => fa.openReadAuthoritySync(${JSON.stringify(s.root)}).readBytes(['d', 'big'], { maxBytes: 1 << 20 }))()
        global.gc()
        const result = await pending
        for (let i = 0; i < 5; i++) { global.gc(); await tick() }
        console.log(JSON.stringify({ baseline, opened, after: count(), read: result.length }))
      })()`
    const out = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' })
    assert.strictEqual(out.status, 0, out.stderr)
    const { baseline, opened, after, read } = JSON.parse(out.stdout)
    assert.strictEqual(opened, baseline + 300)
    assert.strictEqual(read, 256 * 1024)
    assert.strictEqual(after, baseline)
  })

  describe('worker threads', function () {
    function inWorker (code, workerData) {
      return new Promise((resolve, reject) => {
        const worker = new Worker(`
          const { parentPort, workerData } = require('worker_threads')
          const fa = require(${JSON.stringify(LIB)})
          ;(async () => { ${code} })().then((v) => parentPort.postMessage({ ok: v }), (e) => parentPort.postMessage({ err: String(e && e.code || e) }))`,
        { eval: true, workerData })
        worker.once('message', (m) => (m.err ? reject(new Error(m.err)) : resolve(m.ok)))
        worker.once('error', reject)
      })
    }

    it('each worker opens and uses its own authorities, concurrently', async function () {
      const results = await Promise.all(Array.from({ length: 4 }, (_, i) => inWorker(`
        const r = await fa.openReadAuthority(workerData.root)
        const w = fa.openWriteAuthoritySync(workerData.root, { sameRootAs: r })
        for (let k = 0; k < 20; k++) await w.writeText(['d', 'from' + workerData.i], 'worker ' + workerData.i + ' ' + k)
        const text = Buffer.from(r.readBytesSync(['d', 'from' + workerData.i], { maxBytes: 100 })).toString()
        const names = (await r.list(['d'])).length
        await r.close(); w.closeSync()
        return { text, names, shares: true }`, { root: s.root, i })))
      for (const [i, res] of results.entries()) {
        assert.strictEqual(res.text, `worker ${i} 19`)
        assert.ok(res.names >= 2)
      }
    })

    it('a worker terminated with operations in flight does not disturb this thread', async function () {
      const worker = new Worker(`
        const { parentPort, workerData } = require('worker_threads')
        const fa = require(${JSON.stringify(LIB)})
        const r = fa.openReadAuthoritySync(workerData.root)
        for (let i = 0; i < 500; i++) r.readBytes(['d', 'big'], { maxBytes: 1 << 20 })
        parentPort.postMessage('busy')`, { eval: true, workerData: { root: s.root } })
      await new Promise((resolve) => worker.once('message', resolve))
      await worker.terminate()
      const r = fa.openReadAuthoritySync(s.root)
      assert.strictEqual((await r.readBytes(['d', 'big'], { maxBytes: 1 << 20 })).length, 256 * 1024)
      r.closeSync()
    })

    it('an authority posted to another thread is not an authority there', async function () {
      const r = fa.openReadAuthoritySync(s.root)
      const worker = new Worker(`
        const { parentPort } = require('worker_threads')
        const fa = require(${JSON.stringify(LIB)})
        parentPort.once('message', async (a) => {
          const mine = fa.openReadAuthoritySync(${JSON.stringify(s.root)})
          let code
          try { mine.sharesRootWith(a) } catch (e) { code = e.code }
          parentPort.postMessage({ keys: Object.keys(a), hasRead: typeof a.readBytes, code })
          mine.closeSync()
        })`, { eval: true })
      worker.postMessage(r)
      const got = await new Promise((resolve) => worker.once('message', resolve))
      await worker.terminate()
      assert.deepStrictEqual(got, { keys: [], hasRead: 'undefined', code: 'INVALID_OPTION' })
      // Still usable here.
      assert.strictEqual(r.listSync(['d']).length, 1)
      r.closeSync()
    })
  })
})

describe('file-authority secrecy', function () {
  const ROOT_MARK = 'ROOTMARK7f3a'
  const SEG_MARK = 'SEGMARK91c2'
  const BODY_MARK = 'BODYMARK55e0'
  let base, root, haveLink, haveFifo

  before(function () {
    const s = makeSandbox()
    base = s
    root = path.join(s.base, ROOT_MARK)
    fs.mkdirSync(root)
    fs.mkdirSync(path.join(root, SEG_MARK))
    fs.writeFileSync(path.join(root, SEG_MARK, SEG_MARK + '.txt'), BODY_MARK.repeat(10))
    // Where the platform cannot make one (a FIFO on Windows, a symlink under wine), the
    // attempts through it are left out; every other attempt still runs.
    haveLink = makeSymlink(s.outside, path.join(root, SEG_MARK + 'link'))
    haveFifo = !windows
    if (haveFifo) mkfifo(path.join(root, SEG_MARK + 'fifo'))
  })
  after(function () { base.cleanup() })

  function assertSecret (err) {
    assert.ok(err instanceof fa.FileAuthorityError, String(err))
    const texts = [err.message, err.stack, String(err), JSON.stringify(err), util.inspect(err, { showHidden: true, depth: 5 })]
    for (const key of Object.getOwnPropertyNames(err)) texts.push(String(err[key]))
    for (const t of texts) {
      for (const mark of [ROOT_MARK, SEG_MARK, BODY_MARK]) assert.ok(!t.includes(mark), `${mark} leaked: ${t}`)
    }
    assert.deepStrictEqual(Object.keys(err).filter((k) => !['code', 'recoverable', 'operation', 'segmentIndex', 'hostCode', 'argument'].includes(k)), [])
  }

  it('no message or property of any error names the root, a segment or file bytes', async function () {
    const r = fa.openReadAuthoritySync(root)
    const w = fa.openWriteAuthoritySync(root)
    const seg = (x) => [SEG_MARK, x]
    const failing = [
      () => fa.openReadAuthoritySync(path.join(root, 'missing')),
      () => fa.openReadAuthoritySync(path.join(root, SEG_MARK, SEG_MARK + '.txt')),
      () => fa.openReadAuthoritySync(ROOT_MARK),
      () => fa.openWriteAuthority(root + '\0' + ROOT_MARK),
      () => r.readBytesSync([SEG_MARK, SEG_MARK + '/..'], { maxBytes: 1 }),
      () => r.readBytesSync(seg(SEG_MARK + '.txt'), { maxBytes: 3 }),
      () => r.readBytesSync([SEG_MARK + 'link', SEG_MARK], { maxBytes: 3 }),
      () => r.readBytesSync([SEG_MARK + 'fifo'], { maxBytes: 3 }),
      () => r.readBytesSync(seg(SEG_MARK + '.txt').concat(SEG_MARK), { maxBytes: 3 }),
      () => r.readBytes(seg(SEG_MARK + '.txt'), { maxBytes: -1 }),
      () => r.list([SEG_MARK + 'link']),
      () => r.listSync(seg(SEG_MARK + '.txt')),
      () => w.writeTextSync([SEG_MARK + 'missing', SEG_MARK], BODY_MARK),
      () => w.writeTextSync([SEG_MARK, SEG_MARK], BODY_MARK + '\ud800'),
      () => w.writeText([SEG_MARK + 'link', SEG_MARK], BODY_MARK, { createParents: true }),
      () => w.writeText([SEG_MARK + 'fifo'], BODY_MARK),
      () => r.sharesRootWith({ root: ROOT_MARK })
    ].filter((f) => (haveLink || !String(f).includes("'link'")) && (haveFifo || !String(f).includes("'fifo'")))
    let n = 0
    for (const f of failing) {
      try {
        await f()
      } catch (err) {
        assertSecret(err)
        n++
      }
    }
    assert.strictEqual(n, failing.length)
    // Closed and root-changed errors too.
    const other = fa.openReadAuthoritySync(root)
    other.closeSync()
    try { other.readBytesSync(seg('x'), { maxBytes: 1 }) } catch (err) { assertSecret(err); n++ }
    fs.renameSync(root, root + 'moved')
    try { fa.openReadAuthoritySync(root + 'moved', { sameRootAs: other }) } catch (err) { assertSecret(err); n++ }
    fs.mkdirSync(root)
    try { await fa.openReadAuthority(root, { sameRootAs: r }) } catch (err) { assertSecret(err); n++ }
    fs.rmSync(root + 'moved', { recursive: true })
    if (wine) {
      r.closeSync()
      w.closeSync()
      skipBecause(this, `the last step, a removed root: ${REASONS.wineDeletePending}`)
    }
    try { r.readBytesSync(seg(SEG_MARK + '.txt'), { maxBytes: 100 }) } catch (err) { assertSecret(err); assert.strictEqual(err.code, 'ROOT_CHANGED'); n++ }
    assert.strictEqual(n, failing.length + 4)
    r.closeSync()
    w.closeSync()
  })
})
