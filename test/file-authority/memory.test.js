'use strict'
// What file-authority/testing adds to the shared contract (the shared part is in
// conformance.test.js): the MemoryTree argument, snapshot(), fault injection, the
// moment the asynchronous forms act, and that it loads no compiled binding.

const assert = require('node:assert/strict')
const path = require('node:path')
const util = require('node:util')
const { execFileSync } = require('node:child_process')
const { Worker } = require('node:worker_threads')

const testing = require('../../lib/file-authority-testing.js')
const common = require('../../lib/internal/file-authority-common.js')

const { createMemoryAuthorities, FileAuthorityError } = testing
const ROOT = path.join(__dirname, '..', '..')
const BUDGET = { maxBytes: 1 << 20 }
const CODES = Object.keys(common.RECOVERABLE)
const text = (bytes) => Buffer.from(bytes).toString('utf8')

function throwsCode (fn, code, segmentIndex, operation = 'createMemoryAuthorities') {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof FileAuthorityError, `a FileAuthorityError, got ${err && err.stack}`)
    assert.equal(err.code, code)
    assert.equal(err.segmentIndex, segmentIndex)
    assert.equal(err.operation, operation)
    return true
  })
}

function nest (depth, leaf) {
  let tree = leaf
  for (let i = 0; i < depth; i++) tree = { d: tree }
  return tree
}

describe('file-authority/testing: the in-memory stand-in', function () {
  describe('createMemoryAuthorities', function () {
    it('returns a reader, a writer of the same root and snapshot, nothing else', function () {
      const made = createMemoryAuthorities()
      assert.deepEqual(Object.keys(made).sort(), ['reader', 'snapshot', 'writer'])
      assert.equal(util.inspect(made.reader), 'ReadAuthority { closed: false }')
      assert.equal(util.inspect(made.writer), 'WriteAuthority { closed: false }')
      assert.equal(made.reader.sharesRootWith(made.writer), true)
      assert.equal(typeof made.snapshot, 'function')
    })

    it('without a tree, or with options null, starts from an empty root', function () {
      for (const made of [createMemoryAuthorities(), createMemoryAuthorities(undefined, null), createMemoryAuthorities({}, {})]) {
        assert.deepEqual(made.reader.listSync([]), [])
        assert.deepEqual(made.snapshot(), {})
      }
    })

    it('refuses a tree that is not a plain object with INVALID_PATH', function () {
      for (const tree of [null, 'a.txt', 42, true, [], ['a'], new Map(), Uint8Array.of(1), () => ({}), new Date(), Object.create({ a: 'x' })]) {
        throwsCode(() => createMemoryAuthorities(tree), 'INVALID_PATH', undefined)
      }
    })

    it('refuses a bad name with INVALID_PATH naming its depth', function () {
      const names = ['', '.', '..', 'a/b', '/', 'a\\b', 'a\0b', 'x'.repeat(256), '\u00e9'.repeat(128), '\ud800', 'a\udfff']
      for (const name of names) {
        throwsCode(() => createMemoryAuthorities({ [name]: 'x' }), 'INVALID_PATH', 0)
        throwsCode(() => createMemoryAuthorities({ d: { ok: '', [name]: {} } }), 'INVALID_PATH', 1)
        throwsCode(() => createMemoryAuthorities({ d: { e: { [name]: { symlink: 'x' } } } }), 'INVALID_PATH', 2)
      }
    })

    it('applies the Windows name rules on Windows only, like the segments', function () {
      for (const name of ['con', 'NUL.txt', 'a:b', 'dot.', 'space ']) {
        if (process.platform === 'win32') {
          throwsCode(() => createMemoryAuthorities({ [name]: '' }), 'INVALID_PATH', 0)
        } else {
          assert.deepEqual(createMemoryAuthorities({ [name]: '' }).reader.listSync([]), [{ name, kind: 'file' }])
        }
      }
    })

    it('refuses a value that is not a file, directory, symlink or other with INVALID_PATH', function () {
      const values = [1, null, undefined, true, false, [], ['x'], new Date(0), new Map(), new Uint16Array(1),
        new ArrayBuffer(1), () => 'x', Symbol('x'), 1n, Object.create({ symlink: 'x' })]
      for (const value of values) {
        throwsCode(() => createMemoryAuthorities({ a: value }), 'INVALID_PATH', 0)
        throwsCode(() => createMemoryAuthorities({ d: { a: value } }), 'INVALID_PATH', 1)
      }
      // `{ other: true }` only: anything else is a directory holding an entry "other".
      throwsCode(() => createMemoryAuthorities({ a: { other: false } }), 'INVALID_PATH', 1)
      throwsCode(() => createMemoryAuthorities({ a: { other: 1 } }), 'INVALID_PATH', 1)
    })

    it('refuses a symlink target that is empty, holds NUL, is not well-formed or is over 4095 bytes', function () {
      for (const target of ['', 'a\0b', '\ud800', 'x'.repeat(4096)]) {
        throwsCode(() => createMemoryAuthorities({ l: { symlink: target } }), 'INVALID_PATH', 0)
        throwsCode(() => createMemoryAuthorities({ d: { l: { symlink: target } } }), 'INVALID_PATH', 1)
      }
      const { reader } = createMemoryAuthorities({ l: { symlink: 'x'.repeat(4095) }, m: { symlink: '/' } })
      assert.deepEqual(reader.listSync([]), [{ name: 'l', kind: 'symlink' }, { name: 'm', kind: 'symlink' }])
    })

    it('refuses file text that is not well-formed UTF-16 with INVALID_CONTENT; any bytes are fine', function () {
      throwsCode(() => createMemoryAuthorities({ a: '\ud800' }), 'INVALID_CONTENT', 0)
      throwsCode(() => createMemoryAuthorities({ d: { a: 'ok\udc00' } }), 'INVALID_CONTENT', 1)
      const { reader } = createMemoryAuthorities({ bin: Uint8Array.of(0xff, 0xc0, 0x80) })
      assert.deepEqual([...reader.readBytesSync(['bin'], BUDGET)], [0xff, 0xc0, 0x80])
    })

    it('refuses a cyclic tree with INVALID_PATH', function () {
      const loop = {}
      loop.self = loop
      throwsCode(() => createMemoryAuthorities(loop), 'INVALID_PATH', 0)
      const deep = { a: { b: {} } }
      deep.a.b.up = deep.a
      throwsCode(() => createMemoryAuthorities(deep), 'INVALID_PATH', 2)
      // The same object twice, side by side, is two directories, not a cycle.
      const shared = { f: 'x' }
      const { writer, snapshot } = createMemoryAuthorities({ one: shared, two: shared })
      writer.writeTextSync(['one', 'f'], 'changed')
      assert.deepEqual(snapshot(), { one: { f: 'changed' }, two: { f: 'x' } })
    })

    it('accepts entries down to segment index 255 (what a 255-segment listing shows), no deeper', function () {
      const { reader } = createMemoryAuthorities(nest(255, { f: 'deepest' }))
      assert.deepEqual(reader.listSync(new Array(255).fill('d')), [{ name: 'f', kind: 'file' }])
      createMemoryAuthorities(nest(256, {}))
      throwsCode(() => createMemoryAuthorities(nest(256, { f: '' })), 'INVALID_PATH', 256)
    })

    it('refuses a tree whose properties cannot be read with INVALID_PATH', function () {
      const getter = Object.defineProperty({}, 'a', { enumerable: true, get () { throw new Error('boom') } })
      throwsCode(() => createMemoryAuthorities(getter), 'INVALID_PATH', undefined)
      throwsCode(() => createMemoryAuthorities({ d: getter }), 'INVALID_PATH', 0)
      const proxy = new Proxy({}, { ownKeys () { throw new Error('boom') } })
      throwsCode(() => createMemoryAuthorities({ d: proxy }), 'INVALID_PATH', 0)
    })

    it('reads each value of the tree once', function () {
      let reads = 0
      const tree = Object.defineProperty({}, 'a', { enumerable: true, get () { reads++; return reads === 1 ? 'first' : { symlink: 'x' } } })
      const { reader } = createMemoryAuthorities(tree)
      assert.equal(reads, 1)
      assert.equal(text(reader.readBytesSync(['a'], BUDGET)), 'first')
    })

    it('refuses bad options with INVALID_OPTION', function () {
      for (const options of ['x', 5, true, { fault: 'x' }, { fault: null }, { fault: {} }]) {
        throwsCode(() => createMemoryAuthorities({}, options), 'INVALID_OPTION', undefined)
      }
      const throwing = Object.defineProperty({}, 'fault', { get () { throw new Error('boom') } })
      throwsCode(() => createMemoryAuthorities({}, throwing), 'INVALID_OPTION', undefined)
    })

    it('never names an entry in an error message', function () {
      assert.throws(() => createMemoryAuthorities({ 'secret-dir': { 'secret/name': 'secret content' } }), (err) => {
        // The segment index and what a tree must be (the same kind of explanation the
        // native authorities give for a bad segment), never a name or content.
        assert.match(err.message, /^createMemoryAuthorities failed: INVALID_PATH at segment 1: tree must be a MemoryTree: /)
        assert.ok(!err.message.includes('secret'), err.message)
        assert.equal(err.argument, 'tree')
        return true
      })
    })

    it('copies the tree: later changes to the caller\'s objects and bytes do not reach it', function () {
      const bytes = Uint8Array.of(1, 2, 3)
      const tree = { d: { f: 'text' }, b: bytes }
      const { reader } = createMemoryAuthorities(tree)
      tree.d.f = 'changed'
      tree.d.g = 'added'
      tree.x = {}
      bytes[0] = 9
      assert.deepEqual(reader.listSync([]).map((e) => e.name), ['b', 'd'])
      assert.deepEqual(reader.listSync(['d']).map((e) => e.name), ['f'])
      assert.equal(text(reader.readBytesSync(['d', 'f'], BUDGET)), 'text')
      assert.deepEqual([...reader.readBytesSync(['b'], BUDGET)], [1, 2, 3])
    })

    it('treats names like __proto__ and constructor as ordinary entries', function () {
      const tree = JSON.parse('{"__proto__": "p", "constructor": {"hasOwnProperty": "h"}}')
      const { reader, writer, snapshot } = createMemoryAuthorities(tree)
      assert.deepEqual(reader.listSync([]).map((e) => [e.name, e.kind]), [['__proto__', 'file'], ['constructor', 'directory']])
      writer.writeTextSync(['constructor', '__proto__'], 'q')
      const snap = snapshot()
      assert.equal(Object.getPrototypeOf(snap), Object.prototype)
      assert.deepEqual(Object.keys(snap), ['__proto__', 'constructor'])
      assert.equal(Object.getOwnPropertyDescriptor(snap, '__proto__').value, 'p')
      assert.equal(Object.getOwnPropertyDescriptor(snap.constructor, '__proto__').value, 'q')
      assert.deepEqual(createMemoryAuthorities(snap).snapshot(), snap)
    })

    it('a root object of the shape { symlink } or { other: true } is a directory holding that entry', function () {
      assert.deepEqual(createMemoryAuthorities({ symlink: 'x' }).reader.listSync([]), [{ name: 'symlink', kind: 'file' }])
      assert.throws(() => createMemoryAuthorities({ other: true }), (err) => err.code === 'INVALID_PATH' && err.segmentIndex === 0)
    })
  })

  describe('the authorities', function () {
    it('cannot be constructed from JavaScript', function () {
      const { reader, writer } = createMemoryAuthorities()
      assert.equal(reader.constructor.name, 'ReadAuthority')
      assert.equal(writer.constructor.name, 'WriteAuthority')
      for (const C of [reader.constructor, writer.constructor, Object.getPrototypeOf(reader.constructor)]) {
        assert.throws(() => new C(), TypeError)
        assert.throws(() => new C(Symbol('MemoryAuthority'), {}), TypeError)
      }
    })

    it('hold no data that JavaScript can reach', function () {
      const { reader, writer } = createMemoryAuthorities({ a: 'secret' })
      for (const auth of [reader, writer]) {
        assert.deepEqual(Reflect.ownKeys(auth), [])
        for (let proto = Object.getPrototypeOf(auth); proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
          for (const key of Reflect.ownKeys(proto)) {
            const { value, get } = Object.getOwnPropertyDescriptor(proto, key)
            assert.ok(typeof value === 'function' || typeof get === 'function', String(key))
          }
        }
        assert.equal(util.inspect(auth, { showHidden: true, depth: Infinity, getters: true }).includes('secret'), false)
      }
    })

    it('answer `closed` and util.inspect only for a real authority', function () {
      const { reader } = createMemoryAuthorities()
      const proto = Object.getPrototypeOf(reader)
      throwsCode(() => Reflect.get(proto, 'closed', {}), 'INVALID_OPTION', undefined, 'closed')
      const custom = proto[Symbol.for('nodejs.util.inspect.custom')]
      assert.equal(custom.call(Object.create(proto)), 'ReadAuthority')
      assert.equal(util.inspect(reader, { colors: true }), 'ReadAuthority { closed: \x1b[33mfalse\x1b[39m }')
    })

    it('a sync method called on a non-authority throws INVALID_OPTION', function () {
      const { reader, writer } = createMemoryAuthorities()
      throwsCode(() => reader.readBytesSync.call({}, ['a'], BUDGET), 'INVALID_OPTION', undefined, 'readBytes')
      throwsCode(() => reader.listSync.call(writer, []), 'INVALID_OPTION', undefined, 'list')
      throwsCode(() => writer.writeTextSync.call(reader, ['a'], 'x'), 'INVALID_OPTION', undefined, 'writeText')
      throwsCode(() => reader.readBytesSync.call(writer, ['a'], BUDGET), 'INVALID_OPTION', undefined, 'readBytes')
      throwsCode(() => reader.closeSync.call(null), 'INVALID_OPTION', undefined, 'close')
      // close is common to both sides: a reader's close closes a writer it is called on.
      reader.closeSync.call(writer)
      assert.equal(writer.closed, true)
      assert.equal(reader.closed, false)
    })

    it('an async method called on a non-authority rejects with INVALID_OPTION', async function () {
      const { reader, writer } = createMemoryAuthorities()
      await assert.rejects(reader.readBytes.call({}, ['a'], BUDGET), { code: 'INVALID_OPTION', operation: 'readBytes' })
      await assert.rejects(reader.list.call(undefined, []), { code: 'INVALID_OPTION', operation: 'list' })
      await assert.rejects(writer.writeText.call(reader, ['a'], 'x'), { code: 'INVALID_OPTION', operation: 'writeText' })
      await assert.rejects(writer.close.call(42), { code: 'INVALID_OPTION', operation: 'close' })
    })

    it('sharesRootWith: true within one call, false across calls even for identical trees', function () {
      const one = createMemoryAuthorities({ a: 'x' })
      const two = createMemoryAuthorities({ a: 'x' })
      assert.equal(one.reader.sharesRootWith(one.writer), true)
      assert.equal(one.writer.sharesRootWith(one.reader), true)
      assert.equal(one.reader.sharesRootWith(two.reader), false)
      assert.equal(one.writer.sharesRootWith(two.writer), false)
      throwsCode(() => one.reader.sharesRootWith({ closed: false, sharesRootWith: () => true }), 'INVALID_OPTION', undefined, 'sharesRootWith')
    })

    it('the asynchronous forms act at the moment of the call and settle later', async function () {
      const { reader, writer, snapshot } = createMemoryAuthorities({ a: 'old' })
      const written = writer.writeText(['a'], 'new')
      assert.deepEqual(snapshot(), { a: 'new' })
      const read = reader.readBytes(['a'], BUDGET)
      writer.writeTextSync(['a'], 'newer')
      let settled = false
      read.then(() => { settled = true })
      assert.equal(settled, false)
      assert.equal(text(await read), 'new')
      assert.equal(await written, undefined)
      reader.closeSync()
      assert.equal(text(await read), 'new')
    })
  })

  describe('snapshot', function () {
    it('gives back the tree as given: strings, bytes, directories, symlinks, others', function () {
      const tree = {
        'a.txt': 'alpha \u{1F600}',
        bin: Uint8Array.of(0, 255),
        docs: { empty: {}, 'b.txt': '' },
        link: { symlink: '../outside' },
        fifo: { other: true }
      }
      const { snapshot } = createMemoryAuthorities(tree)
      assert.deepStrictEqual(snapshot(), tree)
    })

    it('gives bytes as a plain Uint8Array, a Buffer included', function () {
      const { snapshot } = createMemoryAuthorities({ b: Buffer.from('hi') })
      const { b } = snapshot()
      assert.equal(Object.getPrototypeOf(b), Uint8Array.prototype)
      assert.deepEqual([...b], [0x68, 0x69])
    })

    it('keeps each written file in the form it was written: string as string, bytes as Uint8Array', async function () {
      const { writer, snapshot } = createMemoryAuthorities({ s: Uint8Array.of(0x61), b: 'text' })
      writer.writeTextSync(['s'], 'now text')
      await writer.writeText(['b'], Buffer.from('now bytes'))
      await writer.writeText(['n', 'm'], '', { createParents: true })
      assert.deepStrictEqual(snapshot(), { b: new Uint8Array(Buffer.from('now bytes')), n: { m: '' }, s: 'now text' })
    })

    it('writes a file that would read back as a symlink as bytes', function () {
      const { writer, snapshot } = createMemoryAuthorities()
      writer.writeTextSync(['d', 'symlink'], 'target?', { createParents: true })
      writer.writeTextSync(['symlink'], 'at the root it is a name')
      const snap = snapshot()
      assert.deepStrictEqual(snap, { d: { symlink: new Uint8Array(Buffer.from('target?')) }, symlink: 'at the root it is a name' })
      const again = createMemoryAuthorities(snap)
      assert.deepEqual(again.reader.listSync(['d']), [{ name: 'symlink', kind: 'file' }])
      writer.writeTextSync(['d', 'other'], 'x')
      assert.deepStrictEqual(snapshot().d, { other: 'x', symlink: 'target?' })
    })

    it('round-trips: a stand-in made from a snapshot snapshots the same', function () {
      const { writer, snapshot } = createMemoryAuthorities({ l: { symlink: 'x' }, o: { other: true } })
      writer.writeTextSync(['a', 'b', 'c'], 'deep', { createParents: true })
      writer.writeTextSync(['a', 'bytes'], Uint8Array.of(0x7a))
      const snap = snapshot()
      assert.deepStrictEqual(createMemoryAuthorities(snap).snapshot(), snap)
    })

    it('is a deep copy: changing it changes nothing, and later writes do not change it', function () {
      const { reader, writer, snapshot } = createMemoryAuthorities({ d: { f: 'x' }, b: Uint8Array.of(1) })
      const first = snapshot()
      first.d.f = 'changed'
      first.d.g = 'added'
      first.b[0] = 9
      assert.notEqual(snapshot(), snapshot())
      assert.deepStrictEqual(snapshot(), { b: Uint8Array.of(1), d: { f: 'x' } })
      const before = snapshot()
      writer.writeTextSync(['d', 'f'], 'y')
      assert.deepStrictEqual(before, { b: Uint8Array.of(1), d: { f: 'x' } })
      assert.equal(text(reader.readBytesSync(['d', 'f'], BUDGET)), 'y')
    })

    it('still works after both authorities are closed', function () {
      const { reader, writer, snapshot } = createMemoryAuthorities({ a: 'x' })
      reader.closeSync()
      writer.closeSync()
      assert.deepStrictEqual(snapshot(), { a: 'x' })
    })

    it('leaves a refused write out: symlink, directory and other targets stay as they were', function () {
      const tree = { l: { symlink: 'a' }, d: {}, o: { other: true }, a: 'a' }
      const { writer, snapshot } = createMemoryAuthorities(tree)
      for (const name of ['l', 'd', 'o']) {
        throwsCode(() => writer.writeTextSync([name], 'x'), 'UNSAFE_ENTRY', 0, 'writeText')
      }
      throwsCode(() => writer.writeTextSync(['l', 'x'], 'x', { createParents: true }), 'UNSAFE_ENTRY', 0, 'writeText')
      throwsCode(() => writer.writeTextSync(['m', 'x'], 'x'), 'HOST_IO', 0, 'writeText')
      assert.deepStrictEqual(snapshot(), tree)
    })
  })

  describe('fault injection', function () {
    const operations = [
      ['reader', 'readBytes', 'readBytes', [['a.txt'], BUDGET]],
      ['reader', 'readBytesSync', 'readBytes', [['a.txt'], BUDGET]],
      ['reader', 'list', 'list', [['docs']]],
      ['reader', 'listSync', 'list', [['docs']]],
      ['writer', 'writeText', 'writeText', [['docs', 'new', 'x.txt'], 'x', { createParents: true }]],
      ['writer', 'writeTextSync', 'writeText', [['docs', 'new', 'x.txt'], 'x', { createParents: true }]]
    ]
    const tree = { 'a.txt': 'alpha', docs: {} }

    for (const code of CODES) {
      it(`injects ${code} into every operation, async and sync, before it runs`, async function () {
        for (const [side, method, operation, args] of operations) {
          const calls = []
          const made = createMemoryAuthorities(tree, {
            fault (...received) {
              calls.push({ self: this, received })
              return code
            }
          })
          let err
          if (method.endsWith('Sync')) {
            try { made[side][method](...args) } catch (e) { err = e }
          } else {
            const pending = made[side][method](...args)
            assert.ok(pending instanceof Promise)
            try { await pending } catch (e) { err = e }
          }
          assert.ok(err instanceof FileAuthorityError, `${method}: ${err}`)
          assert.ok(err instanceof common.FileAuthorityError)
          assert.equal(err.code, code)
          assert.equal(err.operation, operation)
          assert.equal(err.recoverable, common.RECOVERABLE[code])
          assert.equal(err.segmentIndex, undefined)
          assert.equal(err.hostCode, code === 'HOST_IO' ? 'EIO' : undefined)
          assert.equal(err.message, `${operation} failed: ${code}${code === 'HOST_IO' ? ' (EIO)' : ''}`)
          assert.equal(calls.length, 1)
          assert.equal(calls[0].self, undefined)
          assert.equal(calls[0].received[0], operation)
          assert.deepEqual(calls[0].received[1], args[0])
          assert.ok(Object.isFrozen(calls[0].received[1]))
          assert.notEqual(calls[0].received[1], args[0], 'a copy of the segments')
          assert.deepStrictEqual(made.snapshot(), tree, 'nothing written')
        }
      })
    }

    it('lets the operation run when the fault returns undefined, and can pick its targets', async function () {
      const seen = []
      const { reader, writer, snapshot } = createMemoryAuthorities(tree, {
        fault (operation, segments) {
          seen.push(`${operation} ${segments.join('/')}`)
          return segments[0] === 'flaky' ? 'HOST_IO' : undefined
        }
      })
      assert.equal(text(await reader.readBytes(['a.txt'], BUDGET)), 'alpha')
      await writer.writeText(['ok.txt'], 'fine')
      await assert.rejects(writer.writeText(['flaky'], 'no'), { code: 'HOST_IO', hostCode: 'EIO' })
      assert.throws(() => reader.listSync(['flaky']), { code: 'HOST_IO' })
      assert.deepEqual(reader.listSync([]).map((e) => e.name), ['a.txt', 'docs', 'ok.txt'])
      assert.deepEqual(seen, ['readBytes a.txt', 'writeText ok.txt', 'writeText flaky', 'list flaky', 'list '])
      assert.deepStrictEqual(snapshot(), { ...tree, 'ok.txt': 'fine' })
    })

    it('is not consulted for invalid arguments, on a closed authority, or by close, sharesRootWith, closed, snapshot', async function () {
      let calls = 0
      const { reader, writer, snapshot } = createMemoryAuthorities(tree, { fault () { calls++; return 'HOST_IO' } })
      assert.throws(() => reader.readBytesSync(['..'], BUDGET), { code: 'INVALID_PATH' })
      assert.throws(() => reader.readBytesSync(['a.txt']), { code: 'INVALID_PATH' })
      await assert.rejects(reader.list('docs'), { code: 'INVALID_PATH' })
      await assert.rejects(writer.writeText(['x'], '\ud800'), { code: 'INVALID_CONTENT' })
      assert.throws(() => writer.writeTextSync(['x'], 'x', { createParents: 1 }), { code: 'INVALID_OPTION' })
      assert.equal(reader.sharesRootWith(writer), true)
      assert.equal(reader.closed, false)
      snapshot()
      reader.closeSync()
      await writer.close()
      assert.equal(calls, 0)
      assert.throws(() => reader.listSync([]), { code: 'AUTHORITY_CLOSED' })
      await assert.rejects(writer.writeText(['x'], 'x'), { code: 'AUTHORITY_CLOSED' })
      assert.equal(calls, 0)
    })

    it('a fault returning anything but a code or undefined is a TypeError', async function () {
      for (const bad of ['NOPE', 'host_io', 42, null, false, {}, 'toString']) {
        const { reader, writer, snapshot } = createMemoryAuthorities(tree, { fault: () => bad })
        assert.throws(() => reader.listSync([]), { name: 'TypeError', code: 'ERR_INVALID_RETURN_VALUE' })
        await assert.rejects(writer.writeText(['n'], 'x'), { name: 'TypeError', code: 'ERR_INVALID_RETURN_VALUE' })
        assert.deepStrictEqual(snapshot(), tree)
      }
    })

    it('an error thrown by the fault reaches the caller as is (a rejection for async forms)', async function () {
      const boom = new Error('boom')
      const { reader, writer, snapshot } = createMemoryAuthorities(tree, { fault () { throw boom } })
      assert.throws(() => reader.readBytesSync(['a.txt'], BUDGET), (err) => err === boom)
      const pending = writer.writeText(['n'], 'x')
      await assert.rejects(pending, (err) => err === boom)
      assert.deepStrictEqual(snapshot(), tree)
    })
  })

  describe('loading', function () {
    // Runs `source` in a fresh Node process in the package root; returns its JSON output.
    function child (source, args = ['-e']) {
      return JSON.parse(execFileSync(process.execPath, [...args, source], { cwd: ROOT, encoding: 'utf8' }))
    }

    it('loads no compiled binding, through the file or the package subpath (checked by recording dlopen)', function () {
      for (const specifier of ['./lib/file-authority-testing.js', '@scope/agent-os/file-authority/testing']) {
        const result = child(`
          const path = require('node:path')
          const opened = []
          const dlopen = process.dlopen
          process.dlopen = function (module, filename, ...rest) {
            opened.push(path.basename(filename))
            return dlopen.call(this, module, filename, ...rest)
          }
          const t = require(${JSON.stringify(specifier)})
          const { reader, writer, snapshot } = t.createMemoryAuthorities({ a: 'x', d: {} }, { fault: () => undefined })
          writer.writeTextSync(['d', 'b'], 'y')
          reader.readBytesSync(['a'], { maxBytes: 1 })
          reader.listSync(['d'])
          try { reader.readBytesSync(['..'], { maxBytes: 1 }) } catch {}
          snapshot()
          reader.closeSync()
          const modules = Object.keys(require.cache).map((file) => path.relative(process.cwd(), file))
          const before = opened.length
          // The control: the binding really is detected when something loads it.
          require('./lib/binding.js').part('fileAuthority')
          console.log(JSON.stringify({ before, after: opened.length, modules }))
        `)
        assert.equal(result.before, 0, specifier)
        assert.ok(result.after > 0, 'the control loaded the binding')
        for (const file of result.modules) {
          assert.ok(!file.includes('node-gyp-build') && !file.endsWith('.node'), file)
          assert.ok(!['lib/binding.js', 'lib/file-authority.js'].includes(file.split(path.sep).join('/')), file)
        }
      }
    })

    it('works with require and with named ESM imports of the subpath', function () {
      const result = child(`
        import { createMemoryAuthorities, FileAuthorityError } from '@scope/agent-os/file-authority/testing'
        import * as namespace from '@scope/agent-os/file-authority/testing'
        const { reader } = createMemoryAuthorities({ a: 'x' })
        let code
        try { reader.listSync(['a']) } catch (err) { code = err instanceof FileAuthorityError && err.code }
        // Node 23+ also names the CommonJS exports object 'module.exports'.
        console.log(JSON.stringify({ code, names: Object.keys(namespace).filter((n) => n !== 'module.exports').sort() }))
      `, ['--input-type=module', '-e'])
      assert.equal(result.code, 'UNSAFE_ENTRY')
      assert.deepEqual(result.names, ['FileAuthorityError', 'createMemoryAuthorities', 'default', 'toSegments'])
      assert.deepEqual(Object.keys(testing).sort(), ['FileAuthorityError', 'createMemoryAuthorities', 'toSegments'])
    })

    it('an authority copied for another thread (structured clone) is an empty object, not an authority', function () {
      const { reader } = createMemoryAuthorities({ a: 'x' })
      const copy = structuredClone(reader)
      assert.deepEqual(copy, {})
      throwsCode(() => reader.sharesRootWith(copy), 'INVALID_OPTION', undefined, 'sharesRootWith')
    })

    it('works in a worker thread', async function () {
      const worker = new Worker(`
        const { parentPort } = require('node:worker_threads')
        const { createMemoryAuthorities } = require(${JSON.stringify(path.join(ROOT, 'lib', 'file-authority-testing.js'))})
        const { reader, writer, snapshot } = createMemoryAuthorities({ a: 'x' })
        writer.writeText(['b'], 'y').then(async () => {
          const listing = await reader.list([])
          parentPort.postMessage({ listing: listing.map((e) => e.name), snapshot: snapshot() })
        })
      `, { eval: true })
      const [message] = await Promise.all([
        new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject) }),
        new Promise((resolve) => worker.once('exit', resolve))
      ])
      assert.deepEqual(message, { listing: ['a', 'b'], snapshot: { a: 'x', b: 'y' } })
    })
  })
})
