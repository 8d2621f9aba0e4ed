'use strict'
// The conformance battery: one table of hostile layouts and operations
// (test/helpers/conformance-layouts.js) run against both faces of the contract, the
// in-memory stand-in (file-authority/testing) and the native authorities
// (file-authority) over the same tree materialised on disk. Each face must give exactly
// the listed outcome: the bytes, the listing, or the error code, segment index, host
// code and operation; and after a write, exactly the expected tree (on disk: no
// temporary file left behind, nothing outside the root touched).
//
// Each face is its own describe block, named "[memory]" or "[native]", so one face can
// run alone: `npx mocha test/file-authority/conformance.test.js --grep native`.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const util = require('node:util')

const common = require('../../lib/internal/file-authority-common.js')
const L = require('../helpers/conformance-layouts.js')
const { skipBecause } = require('../helpers/platform.js')

// The one message format (lib/internal/message.js): a bad argument names itself and
// what it must be, in fixed words with no path separator; never the caller's value.
const { FA_MESSAGE: MESSAGE } = require('../helpers/messages.js')
const BUDGET = { maxBytes: 1 << 20 }
// Where a write through the symlink to "/" would land if the walker followed it.
const ESCAPE_TARGET = path.join(path.parse(process.cwd()).root, 'agent-os-conformance-escape.txt')

// ------------------------------------------------------------------------ faces

const memoryFace = {
  name: 'memory',
  load: () => require('../../lib/file-authority-testing.js'),
  async open (mod, tree) {
    const { reader, writer, snapshot } = mod.createMemoryAuthorities(tree)
    return {
      reader,
      writer,
      missing: [],
      layout: L.normalize(tree),
      state: () => L.normalize(snapshot()),
      outsideState: () => L.normalize(L.OUTSIDE),
      async cleanup () {
        reader.closeSync()
        writer.closeSync()
      }
    }
  }
}

const nativeFace = {
  name: 'native',
  load: () => require('../../lib/file-authority.js'),
  async open (mod, tree) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-conformance-'))
    const root = path.join(dir, 'root')
    const outside = path.join(dir, 'outside')
    fs.mkdirSync(root)
    fs.mkdirSync(outside)
    // What this platform cannot create (a FIFO on Windows, symlinks under wine) is left
    // out; the rows that need it skip, naming the reason.
    const missing = L.materialize(tree, root)
    L.materialize(L.OUTSIDE, outside)
    let reader, writer
    try {
      reader = await mod.openReadAuthority(root)
      writer = await mod.openWriteAuthority(root)
    } catch (err) {
      if (reader) reader.closeSync()
      fs.rmSync(dir, { recursive: true, force: true })
      throw err
    }
    return {
      reader,
      writer,
      missing,
      layout: L.withoutMissing(L.normalize(tree), missing),
      state: () => L.readDiskTree(root),
      outsideState: () => L.readDiskTree(outside),
      async cleanup () {
        reader.closeSync()
        writer.closeSync()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}

// ---------------------------------------------------------------------- running

/** Calls `op` in its async or sync form; returns { value } or { err }. The async form
 * must return a Promise and report every failure as a rejection. */
async function perform (auth, op, form, args) {
  if (form === 'sync') {
    const fn = auth[`${op}Sync`]
    assert.equal(typeof fn, 'function', `${op}Sync exists`)
    try {
      return { value: fn.apply(auth, args) }
    } catch (err) {
      return { err }
    }
  }
  const fn = auth[op]
  assert.equal(typeof fn, 'function', `${op} exists`)
  let promise
  try {
    promise = fn.apply(auth, args)
  } catch (err) {
    assert.fail(`${op} threw synchronously (${err && err.code}) instead of rejecting`)
  }
  assert.ok(promise instanceof Promise, `${op} returns a Promise`)
  try {
    return { value: await promise }
  } catch (err) {
    return { err }
  }
}

function argsOf (row) {
  // An options value of undefined is passed by leaving the argument out.
  if (row.op === 'readBytes') return row.options === undefined ? [row.segments] : [row.segments, row.options]
  if (row.op === 'list') return [row.segments]
  return [row.segments, row.text, row.options]
}

function checkError (mod, err, expected, operation) {
  assert.ok(err instanceof common.FileAuthorityError, `a FileAuthorityError, got ${err && err.stack}`)
  assert.ok(err instanceof mod.FileAuthorityError, 'instanceof the subpath\'s FileAuthorityError')
  assert.deepEqual(
    {
      code: err.code,
      segmentIndex: err.segmentIndex,
      hostCode: expected.hostCode === undefined ? undefined : err.hostCode,
      operation: err.operation
    },
    { code: expected.code, segmentIndex: expected.segmentIndex, hostCode: expected.hostCode, operation }
  )
  assert.equal(err.recoverable, common.RECOVERABLE[expected.code])
  assert.match(err.message, MESSAGE, 'the message names only operation, segment index and host code')
}

function checkOutcome (mod, row, outcome) {
  const { expect } = row
  if (expect.code !== undefined) {
    assert.ok(outcome.err !== undefined, `expected ${expect.code}, got a result`)
    checkError(mod, outcome.err, expect, row.op)
    return
  }
  if (outcome.err !== undefined) throw outcome.err
  const { value } = outcome
  if (expect.absent || expect.written) {
    assert.equal(value, undefined)
  } else if (expect.bytes) {
    assert.ok(value instanceof Uint8Array, 'a Uint8Array')
    assert.equal(Buffer.from(value).toString('hex'), expect.bytes.toString('hex'))
  } else if (expect.listing) {
    assert.ok(Array.isArray(value), 'an array')
    assert.deepEqual(value.map((e) => [e.name, e.kind]), expect.listing)
    assert.equal(value.omitted, 0)
  }
}

function expectedState (row, ctx) {
  const before = ctx.layout
  return row.expect.written ? L.withFile(before, row.segments, row.text) : before
}

async function expectCode (promiseOrFn, code, operation) {
  let err
  try {
    await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn)
  } catch (e) {
    err = e
  }
  assert.ok(err !== undefined, `expected ${code}`)
  assert.ok(err instanceof common.FileAuthorityError, `a FileAuthorityError, got ${err && err.stack}`)
  assert.equal(err.code, code)
  if (operation !== undefined) assert.equal(err.operation, operation)
  return err
}

// ------------------------------------------------------------------- the battery

for (const face of [memoryFace, nativeFace]) {
  describe(`file-authority conformance [${face.name}]`, function () {
    let mod
    const shared = new Map() // layout name -> context, for reads and lists

    before(function () {
      mod = face.load()
    })

    after(async function () {
      for (const ctx of shared.values()) await ctx.cleanup()
    })

    async function sharedContext (layout) {
      if (!shared.has(layout)) shared.set(layout, await face.open(mod, L.LAYOUTS[layout]))
      return shared.get(layout)
    }

    describe('the table', function () {
      for (const row of L.CASES) {
        for (const form of ['async', 'sync']) {
          it(`${row.title} (${form})`, async function () {
            if (row.op === 'writeText') {
              const ctx = await face.open(mod, L.LAYOUTS[row.layout])
              const reason = L.missingReason(row, ctx.missing)
              if (reason) {
                await ctx.cleanup()
                skipBecause(this, reason)
              }
              try {
                checkOutcome(mod, row, await perform(ctx.writer, row.op, form, argsOf(row)))
                assert.deepEqual(ctx.state(), expectedState(row, ctx), 'the tree after the write')
                assert.deepEqual(ctx.outsideState(), L.normalize(L.OUTSIDE), 'nothing outside the root changed')
                assert.equal(fs.existsSync(ESCAPE_TARGET), false, 'nothing written through the symlink to "/"')
              } finally {
                await ctx.cleanup()
              }
            } else {
              const ctx = await sharedContext(row.layout)
              const reason = L.missingReason(row, ctx.missing)
              if (reason) skipBecause(this, reason)
              checkOutcome(mod, row, await perform(ctx.reader, row.op, form, argsOf(row)))
            }
          })
        }
      }

      it('reading and listing changed nothing in any layout', async function () {
        assert.ok(shared.size > 0)
        for (const [layout, ctx] of shared) {
          assert.deepEqual(ctx.state(), ctx.layout, layout)
          assert.deepEqual(ctx.outsideState(), L.normalize(L.OUTSIDE), layout)
        }
      })
    })

    describe('the 0.2 and 0.3 operations', function () {
      const shared02 = new Map() // layout name -> context, for the reader's rows

      after(async function () {
        for (const ctx of shared02.values()) await ctx.cleanup()
      })

      for (const row of [...L.OPERATION_CASES, ...L.OPERATION_03_CASES]) {
        for (const form of ['async', 'sync']) {
          it(`${row.title} (${form})`, async function () {
            // A writer's row gets a tree of its own; the reader's rows share one per
            // layout (HOSTILE unless the row names another), and each checks that it
            // changed nothing.
            const own = row.side === 'writer'
            const layout = row.layout || 'HOSTILE'
            if (!own && !shared02.has(layout)) shared02.set(layout, await face.open(mod, L.LAYOUTS[layout]))
            const ctx = own ? await face.open(mod, L.LAYOUTS[layout]) : shared02.get(layout)
            try {
              for (const needed of row.needs || []) {
                const gone = ctx.missing.find((m) => needed.length >= m.segments.length && m.segments.every((n, i) => n === needed[i]))
                if (gone) skipBecause(this, gone.reason)
              }
              const versionOf = (segments) => ctx.reader.statSync(segments).version
              const args = typeof row.args === 'function' ? row.args(versionOf) : row.args
              const auth = row.side === 'reader' ? ctx.reader : ctx.writer
              const outcome = await perform(auth, row.op, form, args)
              const { expect } = row
              if (expect.code !== undefined) {
                assert.ok(outcome.err !== undefined, `expected ${expect.code}, got ${util.inspect(outcome.value)}`)
                checkError(mod, outcome.err, expect, row.op)
              } else {
                if (outcome.err !== undefined) throw outcome.err
                if ('value' in expect) assert.deepStrictEqual(outcome.value, expect.value)
                if (expect.check) expect.check(outcome.value, ctx)
              }
              const after = row.tree !== undefined ? row.tree(ctx.layout) : ctx.layout
              assert.deepEqual(ctx.state(), after, 'the tree after the call')
              assert.deepEqual(ctx.outsideState(), L.normalize(L.OUTSIDE), 'nothing outside the root changed')
              assert.equal(fs.existsSync(ESCAPE_TARGET), false, 'nothing written through the symlink to "/"')
            } finally {
              if (own) await ctx.cleanup()
            }
          })
        }
      }
    })

    describe('versions, modes and the walk order', function () {
      let ctx
      beforeEach(async function () {
        ctx = await face.open(mod, L.HOSTILE)
      })
      afterEach(async function () {
        await ctx.cleanup()
      })

      it('readVersioned, readRange and stat give one version for one state; any write gives another', async function () {
        const { reader, writer } = ctx
        const v1 = reader.statSync(['a.txt']).version
        const read = await reader.readVersioned(['a.txt'], BUDGET)
        assert.deepEqual(Object.keys(read), ['bytes', 'version'])
        assert.equal(Buffer.from(read.bytes).toString(), 'alpha')
        assert.equal(read.version, v1)
        assert.equal(reader.readRangeSync(['a.txt'], { offset: 0, length: 1 }).version, v1)
        assert.equal(writer.statSync(['a.txt']).version, v1, 'a writer sees the same version')
        assert.notEqual(reader.statSync(['docs', 'b.txt']).version, v1)
        writer.writeTextSync(['a.txt'], 'alpha')
        const v2 = reader.statSync(['a.txt']).version
        assert.notEqual(v2, v1, 'same bytes rewritten: another version')
        await assert.rejects(writer.writeText(['a.txt'], 'stale', { ifVersion: v1 }), (e) => e.code === 'FILE_CHANGED')
        assert.equal(Buffer.from(reader.readBytesSync(['a.txt'], BUDGET)).toString(), 'alpha')
        writer.writeTextSync(['a.txt'], 'fresh', { ifVersion: v2 })
        assert.equal(Buffer.from(reader.readBytesSync(['a.txt'], BUDGET)).toString(), 'fresh')
        assert.equal(JSON.stringify(reader.statSync(['a.txt'])).includes('alpha'), false)
      })

      it('mode: a new file and directory get it less the umask; a replaced file keeps its bits', async function () {
        const { reader, writer } = ctx
        if (process.platform === 'win32' && face.name !== 'memory') {
          // Windows has no permission bits: mode has no effect, stat reports 0o666 for
          // a file that is not read-only (docs/file-authority.md, "Windows").
          writer.writeTextSync(['m.txt'], 'x', { mode: 0o400 })
          assert.equal(reader.statSync(['m.txt']).mode, 0o666)
          assert.equal(await writer.makeDirectory(['md'], { mode: 0o500 }), true)
          assert.equal(reader.statSync(['md']).kind, 'directory')
          writer.writeTextSync(['md', 'in.txt'], 'x')
          return
        }
        const umask = face.name === 'memory' ? 0o022 : process.umask()
        writer.writeTextSync(['m.txt'], 'x', { mode: 0o640 })
        assert.equal(reader.statSync(['m.txt']).mode, 0o640 & ~umask)
        writer.writeTextSync(['m.txt'], 'y', { mode: 0o600 })
        assert.equal(reader.statSync(['m.txt']).mode, 0o640 & ~umask, 'mode is for new files only')
        await writer.writeBytes(['d.bin'], Uint8Array.of(1), { mode: 0o604 })
        assert.equal(reader.statSync(['d.bin']).mode, 0o604 & ~umask)
        assert.equal(await writer.makeDirectory(['md'], { mode: 0o750 }), true)
        assert.equal(reader.statSync(['md']).mode, 0o750 & ~umask)
        assert.equal(reader.statSync(['md']).kind, 'directory')
      })

      it('walk: depth-first, code-unit order, paths relative to the walked directory, fresh arrays', async function () {
        const listing = await ctx.reader.walk([], { maxEntries: 1000 })
        const paths = listing.map((e) => e.path.join('/'))
        const sorted = [...paths].sort((a, b) => {
          const x = a.split('/'); const y = b.split('/')
          for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1
          return x.length - y.length
        })
        assert.deepEqual(paths, sorted)
        assert.ok(paths.includes('sub/deep/d.txt'))
        assert.equal(paths.some((p) => p.startsWith('link-dir/')), false, 'a link is never descended')
        const d = Object.getOwnPropertyDescriptor(listing, 'truncated')
        assert.equal(d.value, false)
        assert.equal(d.enumerable, false)
        assert.deepEqual(Object.keys(listing[0]), ['path', 'kind'])
        listing[0].path.push('changed')
        assert.deepEqual(ctx.reader.walkSync([], { maxEntries: 1 })[0].path, ['a.txt'])
      })
    })

    describe('every authority', function () {
      let ctx
      beforeEach(async function () {
        ctx = await face.open(mod, L.HOSTILE)
      })
      afterEach(async function () {
        await ctx.cleanup()
      })

      it('the subpath exports the one FileAuthorityError class', function () {
        assert.equal(mod.FileAuthorityError, common.FileAuthorityError)
      })

      it('a reader and a writer of one root share it; another root of the same layout does not', async function () {
        const { reader, writer } = ctx
        assert.equal(reader.sharesRootWith(writer), true)
        assert.equal(writer.sharesRootWith(reader), true)
        assert.equal(reader.sharesRootWith(reader), true)
        const other = await face.open(mod, L.HOSTILE)
        try {
          assert.equal(reader.sharesRootWith(other.reader), false)
          assert.equal(other.writer.sharesRootWith(writer), false)
          assert.equal(other.reader.sharesRootWith(other.writer), true)
        } finally {
          await other.cleanup()
        }
      })

      it('sharesRootWith refuses anything that is not an authority with INVALID_OPTION', async function () {
        const fakes = [undefined, null, 'root', 42, {}, { closed: false }, Object.create(Object.getPrototypeOf(ctx.reader)), [], () => {}]
        for (const fake of fakes) {
          await expectCode(() => ctx.reader.sharesRootWith(fake), 'INVALID_OPTION', 'sharesRootWith')
          await expectCode(() => ctx.writer.sharesRootWith(fake), 'INVALID_OPTION', 'sharesRootWith')
        }
      })

      it('sharesRootWith on or with a closed authority is AUTHORITY_CLOSED', async function () {
        ctx.writer.closeSync()
        await expectCode(() => ctx.reader.sharesRootWith(ctx.writer), 'AUTHORITY_CLOSED', 'sharesRootWith')
        await expectCode(() => ctx.writer.sharesRootWith(ctx.reader), 'AUTHORITY_CLOSED', 'sharesRootWith')
      })

      it('is opaque: no own keys, JSON {}, util.inspect names the class and closed state only', function () {
        for (const [auth, name] of [[ctx.reader, 'ReadAuthority'], [ctx.writer, 'WriteAuthority']]) {
          assert.deepEqual(Object.keys(auth), [])
          assert.deepEqual(Object.getOwnPropertyNames(auth), [])
          assert.deepEqual(Object.getOwnPropertySymbols(auth), [])
          assert.equal(JSON.stringify(auth), '{}')
          assert.equal(util.inspect(auth), `${name} { closed: false }`)
          assert.equal(util.inspect(auth, { showHidden: true, depth: Infinity }), `${name} { closed: false }`)
          auth.closeSync()
          assert.equal(util.inspect(auth), `${name} { closed: true }`)
          assert.equal(JSON.stringify(auth), '{}')
        }
      })

      it('a writer cannot read and a reader cannot write', function () {
        for (const method of ['readBytes', 'readBytesSync', 'list', 'listSync']) {
          assert.equal(method in ctx.writer, false, method)
        }
        for (const method of ['writeText', 'writeTextSync']) {
          assert.equal(method in ctx.reader, false, method)
        }
      })

      it('a reader\'s methods called on a writer do not read, a writer\'s on a reader do not write (INVALID_PATH)', async function () {
        const { reader, writer } = ctx
        const R = Object.getPrototypeOf(reader)
        const W = Object.getPrototypeOf(writer)
        await expectCode(() => R.readBytesSync.call(writer, ['a.txt'], BUDGET), 'INVALID_OPTION', 'readBytes')
        await expectCode(R.readBytes.call(writer, ['a.txt'], BUDGET), 'INVALID_OPTION', 'readBytes')
        await expectCode(() => R.listSync.call(writer, []), 'INVALID_OPTION', 'list')
        await expectCode(R.list.call(writer, []), 'INVALID_OPTION', 'list')
        await expectCode(() => W.writeTextSync.call(reader, ['a.txt'], 'x'), 'INVALID_OPTION', 'writeText')
        await expectCode(W.writeText.call(reader, ['new.txt'], 'x'), 'INVALID_OPTION', 'writeText')
        assert.deepEqual(ctx.state(), ctx.layout)
      })

      it('close is idempotent, and every operation after it is AUTHORITY_CLOSED and changes nothing', async function () {
        const { reader, writer } = ctx
        assert.equal(reader.closed, false)
        assert.equal(writer.closed, false)
        assert.equal(await reader.close(), undefined)
        assert.equal(await reader.close(), undefined)
        assert.equal(reader.closeSync(), undefined)
        assert.equal(writer.closeSync(), undefined)
        assert.equal(await writer.close(), undefined)
        assert.equal(reader.closed, true)
        assert.equal(writer.closed, true)
        await expectCode(reader.readBytes(['a.txt'], BUDGET), 'AUTHORITY_CLOSED', 'readBytes')
        await expectCode(() => reader.readBytesSync(['a.txt'], BUDGET), 'AUTHORITY_CLOSED', 'readBytes')
        await expectCode(reader.list([]), 'AUTHORITY_CLOSED', 'list')
        await expectCode(() => reader.listSync([]), 'AUTHORITY_CLOSED', 'list')
        await expectCode(writer.writeText(['a.txt'], 'x'), 'AUTHORITY_CLOSED', 'writeText')
        await expectCode(() => writer.writeTextSync(['new.txt'], 'x'), 'AUTHORITY_CLOSED', 'writeText')
        assert.deepEqual(ctx.state(), ctx.layout)
      })

      it('closing the reader leaves the writer open, and the other way round', async function () {
        ctx.reader.closeSync()
        await ctx.writer.writeText(['new.txt'], 'still open')
        const again = await face.open(mod, L.HOSTILE)
        try {
          again.writer.closeSync()
          assert.equal(Buffer.from(again.reader.readBytesSync(['a.txt'], BUDGET)).toString(), 'alpha')
        } finally {
          await again.cleanup()
        }
      })

      it('Symbol.asyncDispose and Symbol.dispose close', async function () {
        const disposed = ctx.reader[Symbol.asyncDispose]()
        assert.ok(disposed instanceof Promise)
        assert.equal(await disposed, undefined)
        assert.equal(ctx.reader.closed, true)
        assert.equal(ctx.writer[Symbol.dispose](), undefined)
        assert.equal(ctx.writer.closed, true)
        ctx.writer[Symbol.dispose]()
        await ctx.reader[Symbol.asyncDispose]()
      })

      it('every Promise-returning method rejects, never throws, even called on a non-authority', async function () {
        const methods = [
          [ctx.reader, 'readBytes', [['a.txt'], BUDGET]],
          [ctx.reader, 'list', [[]]],
          [ctx.writer, 'writeText', [['new.txt'], 'x']],
          [ctx.reader, 'close', []],
          [ctx.writer, Symbol.asyncDispose, []]
        ]
        for (const [auth, method, args] of methods) {
          for (const receiver of [{}, undefined, null]) {
            let promise
            assert.doesNotThrow(() => { promise = auth[method].apply(receiver, args) }, String(method))
            assert.ok(promise instanceof Promise)
            await assert.rejects(promise)
          }
        }
      })

      it('a listing is an array of { name, kind } with a non-enumerable own omitted: 0', async function () {
        const listing = await ctx.reader.list(['docs'])
        assert.ok(Array.isArray(listing))
        const descriptor = Object.getOwnPropertyDescriptor(listing, 'omitted')
        assert.equal(descriptor.value, 0)
        assert.equal(descriptor.enumerable, false)
        assert.deepEqual(Object.keys(listing), ['0', '1', '2'])
        for (const entry of listing) assert.deepEqual(Object.keys(entry), ['name', 'kind'])
        // Both faces: plain objects, not frozen (the types mark the fields readonly only).
        for (const entry of [...listing, ...ctx.reader.listSync(['docs'])]) {
          assert.equal(Object.getPrototypeOf(entry), Object.prototype)
          assert.equal(Object.isFrozen(entry), false)
        }
        assert.equal(JSON.stringify(listing), '[{"name":"b.txt","kind":"file"},{"name":"empty","kind":"directory"},{"name":"nested","kind":"directory"}]')
        assert.deepStrictEqual(listing, [
          { name: 'b.txt', kind: 'file' },
          { name: 'empty', kind: 'directory' },
          { name: 'nested', kind: 'directory' }
        ])
      })

      it('readBytes returns a Buffer (a Uint8Array), a fresh copy each time', async function () {
        const first = await ctx.reader.readBytes(['a.txt'], BUDGET)
        assert.ok(Buffer.isBuffer(first), 'a Buffer (contract 0.3)')
        first.fill(0)
        const second = ctx.reader.readBytesSync(['a.txt'], BUDGET)
        assert.ok(Buffer.isBuffer(second), 'a Buffer (contract 0.3)')
        assert.equal(Buffer.from(second).toString(), 'alpha')
        const empty = await ctx.reader.readBytes(['empty.txt'], { maxBytes: 0 })
        assert.ok(Buffer.isBuffer(empty), 'a Buffer (contract 0.3)')
        assert.equal(empty.length, 0)
        const emptySync = ctx.reader.readBytesSync(['empty.txt'], { maxBytes: 0 })
        assert.ok(Buffer.isBuffer(emptySync), 'a Buffer (contract 0.3)')
        assert.equal(emptySync.length, 0)
        // Each array covers its own whole buffer: no spare byte, no shared pool.
        for (const bytes of [first, second, empty, emptySync]) {
          assert.equal(bytes.byteOffset, 0)
          assert.equal(bytes.buffer.byteLength, bytes.length)
        }
      })

      it('writeText copies its bytes at the call: changing the buffer afterwards changes nothing', async function () {
        const content = Buffer.from('original')
        const pending = ctx.writer.writeText(['a.txt'], content)
        content.fill(0x21)
        await pending
        assert.equal(Buffer.from(await ctx.reader.readBytes(['a.txt'], BUDGET)).toString(), 'original')
      })

      it('what was written is read back, as bytes and in listings', async function () {
        await ctx.writer.writeText(['docs', 'new', 'x.txt'], 'x \u{1F600}', { createParents: true })
        ctx.writer.writeTextSync(['docs', 'b.txt'], Uint8Array.of(0x62))
        assert.equal(Buffer.from(await ctx.reader.readBytes(['docs', 'new', 'x.txt'], BUDGET)).toString(), 'x \u{1F600}')
        assert.equal(Buffer.from(ctx.reader.readBytesSync(['docs', 'b.txt'], BUDGET)).toString(), 'b')
        assert.deepEqual((await ctx.reader.list(['docs'])).map((e) => [e.name, e.kind]), [
          ['b.txt', 'file'], ['empty', 'directory'], ['nested', 'directory'], ['new', 'directory']
        ])
        assert.deepEqual(ctx.reader.listSync(['docs', 'new']).map((e) => [e.name, e.kind]), [['x.txt', 'file']])
      })

      it('an error message never carries a segment\'s text or the content', async function () {
        const secret = 'secret-name-\u{1F600}'
        const errors = []
        for (const attempt of [
          () => ctx.reader.readBytesSync(['a.txt', secret], BUDGET),
          () => ctx.reader.readBytesSync([secret, '..'], BUDGET),
          // Through a symlink; where the platform made none (see missing), below a file.
          () => ctx.reader.listSync([ctx.missing.some((m) => m.segments[0] === 'link-dir') ? 'a.txt' : 'link-dir', secret]),
          () => ctx.writer.writeTextSync([secret, 'x'], 'content'),
          () => ctx.writer.writeTextSync([secret], `${secret}\ud800`),
          () => ctx.reader.readBytesSync([secret], { maxBytes: -1 })
        ]) {
          try {
            attempt()
          } catch (err) {
            errors.push(err)
          }
        }
        assert.equal(errors.length, 6)
        for (const err of errors) {
          assert.ok(err instanceof common.FileAuthorityError)
          assert.equal(err.message.includes('secret'), false)
          assert.equal(util.inspect(err).includes('secret'), false)
          assert.equal(JSON.stringify(err).includes('secret'), false)
        }
      })
    })

    if (face === nativeFace) {
      describe('both faces together', function () {
        it('file-authority and file-authority/testing export the same FileAuthorityError', function () {
          assert.equal(mod.FileAuthorityError, require('../../lib/file-authority-testing.js').FileAuthorityError)
        })

        it('an authority of one face is not an authority of the other (INVALID_OPTION)', async function () {
          const disk = await face.open(mod, {})
          const memory = await memoryFace.open(memoryFace.load(), {})
          try {
            await expectCode(() => disk.reader.sharesRootWith(memory.reader), 'INVALID_OPTION', 'sharesRootWith')
            await expectCode(() => memory.reader.sharesRootWith(disk.reader), 'INVALID_OPTION', 'sharesRootWith')
            await expectCode(() => disk.writer.sharesRootWith(memory.writer), 'INVALID_OPTION', 'sharesRootWith')
          } finally {
            await disk.cleanup()
            await memory.cleanup()
          }
        })

        it('an error of file-authority/testing is instanceof file-authority\'s FileAuthorityError', function () {
          const { reader } = require('../../lib/file-authority-testing.js').createMemoryAuthorities({})
          assert.throws(() => reader.listSync(['..']), (err) => err instanceof mod.FileAuthorityError && err.code === 'INVALID_PATH')
        })
      })
    }
  })
}
