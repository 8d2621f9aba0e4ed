'use strict'
// Opening, roots, sameRootAs, sharesRootWith, close and dispose, opacity, the error
// class and UNSUPPORTED_BACKEND when the binding cannot load.

const assert = require('node:assert')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const util = require('node:util')
const { spawnSync } = require('node:child_process')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver } = require('../helpers/fs-layouts.js')
const { wine, REASONS, skipBecause, symlinksWork } = require('../helpers/platform.js')

function rejects (promise, code, segmentIndex) {
  return assert.rejects(promise, (err) => {
    assert.ok(err instanceof fa.FileAuthorityError)
    assert.strictEqual(err.code, code)
    if (segmentIndex !== undefined) assert.strictEqual(err.segmentIndex, segmentIndex)
    return true
  })
}

function throws (fn, code, extra = {}) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof fa.FileAuthorityError, String(err))
    assert.strictEqual(err.code, code)
    for (const [k, v] of Object.entries(extra)) assert.strictEqual(err[k], v)
    return true
  })
}

const OPENERS = [
  ['openReadAuthority', fa.openReadAuthority, fa.openReadAuthoritySync],
  ['openWriteAuthority', fa.openWriteAuthority, fa.openWriteAuthoritySync]
]

describe('file-authority: opening', function () {
  let s
  beforeEach(function () { s = makeSandbox() })
  afterEach(function () { s.cleanup() })

  for (const [operation, open, openSync] of OPENERS) {
    describe(operation, function () {
      it('rejects a root that is not a string, relative, empty or contains NUL: INVALID_PATH', async function () {
        for (const bad of [undefined, null, 42, {}, ['a'], '', 'relative/dir', './x', '/tmp/a\0b', '/tmp/\ud800']) {
          throws(() => openSync(bad), 'INVALID_PATH', { operation })
          await rejects(open(bad), 'INVALID_PATH')
        }
      })

      it('a missing root: HOST_IO with hostCode ENOENT', async function () {
        const missing = path.join(s.base, 'missing')
        throws(() => openSync(missing), 'HOST_IO', { hostCode: 'ENOENT' })
        await assert.rejects(open(missing), (e) => e.code === 'HOST_IO' && e.hostCode === 'ENOENT')
      })

      it('a root that is not a directory: UNSAFE_ENTRY', async function () {
        const file = path.join(s.base, 'file')
        fs.writeFileSync(file, 'x')
        throws(() => openSync(file), 'UNSAFE_ENTRY')
        await rejects(open(file), 'UNSAFE_ENTRY')
      })

      it('bad options: INVALID_OPTION, as a rejection for the async form', async function () {
        for (const bad of [42, 'x', { sameRootAs: {} }, { sameRootAs: 1 }]) {
          throws(() => openSync(s.root, bad), 'INVALID_OPTION')
          await rejects(open(s.root, bad), 'INVALID_OPTION')
        }
      })
    })
  }

  it('resolves symlinks in the root once, at open; later renames change nothing', async function () {
    if (!symlinksWork()) skipBecause(this, REASONS.noSymlink)
    fs.writeFileSync(path.join(s.root, 'a.txt'), 'A')
    const viaLink = path.join(s.base, 'rootlink')
    fs.symlinkSync(s.root, viaLink)
    const r = await fa.openReadAuthority(viaLink)
    // Move the directory away and put a different one at both names.
    fs.renameSync(s.root, path.join(s.base, 'moved'))
    fs.mkdirSync(s.root)
    fs.writeFileSync(path.join(s.root, 'a.txt'), 'IMPOSTOR')
    fs.unlinkSync(viaLink)
    fs.symlinkSync(s.outside, viaLink)
    assert.strictEqual(Buffer.from(r.readBytesSync(['a.txt'], { maxBytes: 10 })).toString(), 'A')
    assert.deepStrictEqual(r.listSync([]).map((e) => e.name), ['a.txt'])
    r.closeSync()
  })

  describe('sameRootAs', function () {
    it('opens when the pathname still names the same directory', async function () {
      const r = fa.openReadAuthoritySync(s.root)
      const w = await fa.openWriteAuthority(s.root, { sameRootAs: r })
      const w2 = fa.openWriteAuthoritySync(s.root, { sameRootAs: r })
      assert.ok(w.sharesRootWith(r) && w2.sharesRootWith(r))
      for (const a of [r, w, w2]) a.closeSync()
    })

    it('a swapped pathname: ROOT_CHANGED', async function () {
      const r = fa.openReadAuthoritySync(s.root)
      fs.renameSync(s.root, path.join(s.base, 'approved'))
      fs.mkdirSync(s.root)
      throws(() => fa.openWriteAuthoritySync(s.root, { sameRootAs: r }), 'ROOT_CHANGED', { operation: 'openWriteAuthority' })
      await rejects(fa.openWriteAuthority(s.root, { sameRootAs: r }), 'ROOT_CHANGED')
      if (!symlinksWork()) {
        r.closeSync()
        skipBecause(this, `the half through a symlink: ${REASONS.noSymlink}`)
      }
      // A symlink at the pathname to the approved directory resolves to it: same object.
      fs.rmdirSync(s.root)
      fs.symlinkSync(path.join(s.base, 'approved'), s.root)
      const w = await fa.openWriteAuthority(s.root, { sameRootAs: r })
      assert.ok(w.sharesRootWith(r))
      w.closeSync()
      r.closeSync()
    })

    it('a restored pathname (a copy put back under the old name): ROOT_CHANGED', async function () {
      fs.writeFileSync(path.join(s.root, 'f'), 'same bytes')
      const r = fa.openReadAuthoritySync(s.root)
      fs.rmSync(s.root, { recursive: true })
      if (process.platform === 'win32' && fs.existsSync(s.root)) {
        r.closeSync()
        skipBecause(this, REASONS.deletePendingName)
      }
      fs.mkdirSync(s.root)
      fs.writeFileSync(path.join(s.root, 'f'), 'same bytes')
      await rejects(fa.openReadAuthority(s.root, { sameRootAs: r }), 'ROOT_CHANGED')
      r.closeSync()
    })

    it('a closed sameRootAs authority: AUTHORITY_CLOSED', async function () {
      const r = fa.openReadAuthoritySync(s.root)
      r.closeSync()
      throws(() => fa.openReadAuthoritySync(s.root, { sameRootAs: r }), 'AUTHORITY_CLOSED')
      await rejects(fa.openWriteAuthority(s.root, { sameRootAs: r }), 'AUTHORITY_CLOSED')
    })
  })

  describe('root removed while an authority exists', function () {
    for (const resolver of resolvers()) {
      it(`every operation reports ROOT_CHANGED (${resolver})`, async function () {
        useResolver(resolver)
        fs.writeFileSync(path.join(s.root, 'f'), 'x')
        const r = fa.openReadAuthoritySync(s.root)
        const w = fa.openWriteAuthoritySync(s.root)
        fs.rmSync(s.root, { recursive: true })
        if (wine && fs.existsSync(s.root)) {
          r.closeSync()
          w.closeSync()
          skipBecause(this, REASONS.wineDeletePending)
        }
        throws(() => r.readBytesSync(['f'], { maxBytes: 1 }), 'ROOT_CHANGED', { recoverable: 'no' })
        throws(() => r.listSync([]), 'ROOT_CHANGED')
        throws(() => r.listSync(['a', 'b']), 'ROOT_CHANGED')
        throws(() => w.writeTextSync(['f'], 'y'), 'ROOT_CHANGED')
        throws(() => w.writeTextSync(['a', 'f'], 'y', { createParents: true }), 'ROOT_CHANGED')
        await rejects(r.readBytes(['f'], { maxBytes: 1 }), 'ROOT_CHANGED')
        await rejects(w.writeText(['f'], 'y'), 'ROOT_CHANGED')
        await rejects(fa.openReadAuthority(s.base, { sameRootAs: r }), 'ROOT_CHANGED')
        r.closeSync()
        w.closeSync()
      })
    }
  })
})

describe('file-authority: every authority', function () {
  let s
  beforeEach(function () { s = makeSandbox() })
  afterEach(function () { s.cleanup() })

  it('is opaque: no keys, JSON {}, inspect names the class and closed state only', async function () {
    const r = fa.openReadAuthoritySync(s.root)
    const w = await fa.openWriteAuthority(s.root)
    for (const [a, name] of [[r, 'ReadAuthority'], [w, 'WriteAuthority']]) {
      assert.deepStrictEqual(Object.keys(a), [])
      assert.deepStrictEqual(Object.getOwnPropertyNames(a), [])
      assert.deepStrictEqual(Object.getOwnPropertySymbols(a), [])
      assert.strictEqual(JSON.stringify(a), '{}')
      assert.strictEqual(util.inspect(a), `${name} { closed: false }`)
      assert.ok(!util.inspect(a, { showHidden: true, depth: 10 }).includes(s.root))
      assert.strictEqual(a.closed, false)
      a.closeSync()
      assert.strictEqual(util.inspect(a), `${name} { closed: true }`)
      assert.strictEqual(a.closed, true)
    }
    assert.strictEqual(typeof r.writeText, 'undefined', 'a reader cannot write')
    assert.strictEqual(typeof w.readBytes, 'undefined', 'a writer cannot read')
    assert.strictEqual(typeof w.readBytesSync, 'undefined')
    assert.strictEqual(typeof w.list, 'undefined')
    assert.strictEqual(typeof w.listSync, 'undefined')
  })

  it('cannot be constructed from outside', function () {
    const r = fa.openReadAuthoritySync(s.root)
    assert.throws(() => new r.constructor(), TypeError)
    assert.throws(() => new r.constructor(Symbol('FileAuthority'), {}), TypeError)
    r.closeSync()
  })

  it('sharesRootWith: same directory object or not, reader and writer alike', function () {
    if (!symlinksWork()) skipBecause(this, REASONS.noSymlink)
    const other = path.join(s.base, 'other')
    fs.mkdirSync(other)
    const r = fa.openReadAuthoritySync(s.root)
    const w = fa.openWriteAuthoritySync(s.root)
    const o = fa.openReadAuthoritySync(other)
    const viaLink = path.join(s.base, 'link')
    fs.symlinkSync(s.root, viaLink)
    const l = fa.openWriteAuthoritySync(viaLink)
    assert.strictEqual(r.sharesRootWith(w), true)
    assert.strictEqual(w.sharesRootWith(r), true)
    assert.strictEqual(r.sharesRootWith(l), true)
    assert.strictEqual(r.sharesRootWith(r), true)
    assert.strictEqual(r.sharesRootWith(o), false)
    for (const bad of [undefined, null, {}, 'x', Object.create(r), new Proxy(r, {})]) {
      throws(() => r.sharesRootWith(bad), 'INVALID_OPTION', { operation: 'sharesRootWith' })
    }
    o.closeSync()
    throws(() => r.sharesRootWith(o), 'AUTHORITY_CLOSED')
    throws(() => o.sharesRootWith(r), 'AUTHORITY_CLOSED')
    for (const a of [r, w, l]) a.closeSync()
  })

  it('close is idempotent; anything after close is AUTHORITY_CLOSED', async function () {
    fs.writeFileSync(path.join(s.root, 'f'), 'x')
    const r = fa.openReadAuthoritySync(s.root)
    const w = fa.openWriteAuthoritySync(s.root)
    await r.close()
    await r.close()
    r.closeSync()
    w.closeSync()
    await w.close()
    throws(() => r.readBytesSync(['f'], { maxBytes: 1 }), 'AUTHORITY_CLOSED', { recoverable: 'no', operation: 'readBytes' })
    throws(() => r.listSync([]), 'AUTHORITY_CLOSED')
    throws(() => w.writeTextSync(['f'], 'y'), 'AUTHORITY_CLOSED')
    await rejects(r.readBytes(['f'], { maxBytes: 1 }), 'AUTHORITY_CLOSED')
    await rejects(r.list([]), 'AUTHORITY_CLOSED')
    await rejects(w.writeText(['f'], 'y'), 'AUTHORITY_CLOSED')
    assert.strictEqual(fs.readFileSync(path.join(s.root, 'f'), 'utf8'), 'x')
  })

  it('Symbol.dispose and Symbol.asyncDispose close it', async function () {
    const r = fa.openReadAuthoritySync(s.root)
    r[Symbol.dispose]()
    assert.strictEqual(r.closed, true)
    const w = await fa.openWriteAuthority(s.root)
    await w[Symbol.asyncDispose]()
    assert.strictEqual(w.closed, true)
  })

  it('methods called on something else: INVALID_OPTION (async forms reject)', async function () {
    const r = fa.openReadAuthoritySync(s.root)
    const w = fa.openWriteAuthoritySync(s.root)
    throws(() => r.readBytesSync.call({}, [], { maxBytes: 1 }), 'INVALID_OPTION')
    await rejects(r.readBytes.call({}, ['a'], { maxBytes: 1 }), 'INVALID_OPTION')
    // A reader's methods on a writer and the reverse: a writer cannot read.
    await rejects(w.writeText.call(r, ['a'], 'x'), 'INVALID_OPTION')
    throws(() => w.writeTextSync.call(r, ['a'], 'x'), 'INVALID_OPTION')
    throws(() => r.readBytesSync.call(w, ['a'], { maxBytes: 1 }), 'INVALID_OPTION')
    throws(() => r.listSync.call(w, []), 'INVALID_OPTION')
    await rejects(r.list.call(w, []), 'INVALID_OPTION')
    assert.ok(!fs.existsSync(path.join(s.root, 'a')))
    await rejects(r.close.call(null), 'INVALID_OPTION')
    r.closeSync()
    w.closeSync()
  })
})

describe('file-authority: errors', function () {
  it('FileAuthorityError carries code, recoverable, operation, segmentIndex, hostCode', function () {
    const e = new fa.FileAuthorityError('UNSAFE_ENTRY', { operation: 'readBytes', segmentIndex: 2, hostCode: 'ELOOP' })
    assert.ok(e instanceof Error)
    assert.strictEqual(e.name, 'FileAuthorityError')
    assert.strictEqual(e.code, 'UNSAFE_ENTRY')
    assert.strictEqual(e.recoverable, 'yes')
    assert.strictEqual(e.operation, 'readBytes')
    assert.strictEqual(e.segmentIndex, 2)
    assert.strictEqual(e.hostCode, 'ELOOP')
  })

  it('is the same class as file-authority/testing uses', function () {
    const common = require('../../lib/internal/file-authority-common.js')
    assert.strictEqual(fa.FileAuthorityError, common.FileAuthorityError)
  })
})

describe('file-authority: binding that cannot load', function () {
  it('every call fails with UNSUPPORTED_BACKEND (async: rejection), naming why', function () {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-nobinding-'))
    // An absolute root on every platform: "/" on POSIX, the drive's root on Windows.
    const root = JSON.stringify(path.parse(process.cwd()).root)
    try {
      const script = `
        const fa = require(${JSON.stringify(path.join(__dirname, '../../lib/file-authority.js'))})
        const out = []
        try { fa.openReadAuthoritySync(${root}) } catch (e) { out.push([e.code, e.recoverable, e.operation, /node-gyp|rebuild|binding/.test(e.message)]) }
        try { fa.openWriteAuthoritySync(${root}) } catch (e) { out.push([e.code, e.operation]) }
        const p = fa.openReadAuthority(${root})
        const q = fa.openWriteAuthority(${root}, { sameRootAs: undefined })
        Promise.allSettled([p, q]).then((rs) => {
          for (const r of rs) out.push([r.status, r.reason && r.reason.code])
          console.log(JSON.stringify(out))
        })`
      const r = spawnSync(process.execPath, ['-e', script], {
        env: { ...process.env, AGENT_OS_BINDING_ROOT: empty },
        encoding: 'utf8'
      })
      assert.strictEqual(r.status, 0, r.stderr)
      assert.deepStrictEqual(JSON.parse(r.stdout), [
        ['UNSUPPORTED_BACKEND', 'no', 'openReadAuthority', true],
        ['UNSUPPORTED_BACKEND', 'openWriteAuthority'],
        ['rejected', 'UNSUPPORTED_BACKEND'],
        ['rejected', 'UNSUPPORTED_BACKEND']
      ])
    } finally {
      fs.rmSync(empty, { recursive: true, force: true })
    }
  })
})

describe('file-authority: resolver switch (for the project\'s CI, not public API)', function () {
  it('AGENT_OS_FA_RESOLVER=portable at load forces the portable walk, also in workers', function () {
    const script = `
      const fa = require(${JSON.stringify(path.join(__dirname, '../../lib/file-authority.js'))})
      const part = require(${JSON.stringify(path.join(__dirname, '../../lib/binding.js'))}).part('fileAuthority')
      const { Worker } = require('worker_threads')
      const w = new Worker('const p = require(' + JSON.stringify(${JSON.stringify(path.join(__dirname, '../../lib/file-authority.js'))}) + '); require("worker_threads").parentPort.postMessage(require(' + JSON.stringify(${JSON.stringify(path.join(__dirname, '../../lib/binding.js'))}) + ').part("fileAuthority").resolver())', { eval: true })
      w.once('message', (m) => { console.log(JSON.stringify([part.resolver(), m, Object.keys(part).includes('resolver')])); w.terminate() })`
    const r = spawnSync(process.execPath, ['-e', script], {
      env: { ...process.env, AGENT_OS_FA_RESOLVER: 'portable' },
      encoding: 'utf8'
    })
    assert.strictEqual(r.status, 0, r.stderr)
    assert.deepStrictEqual(JSON.parse(r.stdout), ['portable', 'portable', false])
  })
})

