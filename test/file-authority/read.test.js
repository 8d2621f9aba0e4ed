'use strict'
// ReadAuthority: segment rules, byte budgets, consistency of what is read (growth and
// change while reading), listing order, kinds and non-UTF-8 names. Both resolvers.

const assert = require('node:assert')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { constants: { MAX_LENGTH } } = require('node:buffer')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver, mkfifo, writeRawName } = require('../helpers/fs-layouts.js')
const { windows, wine, REASONS, skipBecause } = require('../helpers/platform.js')

function code (fn) {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof fa.FileAuthorityError, String(err))
    return [err.code, err.segmentIndex]
  }
  return 'no error'
}

async function asyncCode (promise) {
  try {
    await promise
  } catch (err) {
    assert.ok(err instanceof fa.FileAuthorityError, String(err))
    return [err.code, err.segmentIndex]
  }
  return 'no error'
}

const BAD_SEGMENTS = [
  ['not an array', 'a/b', undefined],
  ['an array-like', { length: 1, 0: 'a' }, undefined],
  ['more than 255 segments', new Array(256).fill('a'), undefined],
  ['an empty segment', ['a', ''], 1],
  ['.', ['.'], 0],
  ['..', ['a', '..'], 1],
  ['a slash', ['a', 'b/c'], 1],
  ['a backslash', ['a\\b'], 0],
  ['NUL', ['ok', 'ok', 'a\0'], 2],
  ['256 bytes of UTF-8', ['é'.repeat(128)], 0],
  ['a lone surrogate', ['\ud83d'], 0],
  ['a non-string', ['a', 1], 1],
  ['the first bad one is named', ['ok', '..', ''], 1]
]

for (const resolver of resolvers()) {
  describe(`file-authority ReadAuthority (${resolver} resolver)`, function () {
    let s, r
    beforeEach(function () {
      s = makeSandbox()
      useResolver(resolver)
      r = fa.openReadAuthoritySync(s.root)
    })
    afterEach(function () {
      r.closeSync()
      s.cleanup()
    })

    describe('segments', function () {
      for (const [what, segs, index] of BAD_SEGMENTS) {
        it(`${what}: INVALID_PATH${index === undefined ? '' : ` at segment ${index}`}`, async function () {
          assert.deepStrictEqual(code(() => r.readBytesSync(segs, { maxBytes: 1 })), ['INVALID_PATH', index])
          assert.deepStrictEqual(await asyncCode(r.readBytes(segs, { maxBytes: 1 })), ['INVALID_PATH', index])
          assert.deepStrictEqual(code(() => r.listSync(segs)), ['INVALID_PATH', index])
          assert.deepStrictEqual(await asyncCode(r.list(segs)), ['INVALID_PATH', index])
        })
      }

      it('255 segments and 255-byte segments are accepted', function () {
        assert.strictEqual(r.readBytesSync(new Array(255).fill('a'), { maxBytes: 1 }), undefined)
        assert.strictEqual(r.readBytesSync(['é'.repeat(127) + 'x'], { maxBytes: 1 }), undefined)
        const long = 'é'.repeat(127) + 'x'
        fs.writeFileSync(path.join(s.root, long), 'long')
        assert.strictEqual(Buffer.from(r.readBytesSync([long], { maxBytes: 4 })).toString(), 'long')
      })
    })

    describe('readBytes', function () {
      it('returns exactly the bytes of a regular file, as a Uint8Array', async function () {
        const bytes = Buffer.alloc(3 * 1024 * 1024 + 7)
        for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff
        fs.mkdirSync(path.join(s.root, 'a', 'b'), { recursive: true })
        fs.writeFileSync(path.join(s.root, 'a', 'b', 'big.bin'), bytes)
        const sync = r.readBytesSync(['a', 'b', 'big.bin'], { maxBytes: bytes.length })
        const async = await r.readBytes(['a', 'b', 'big.bin'], { maxBytes: bytes.length })
        for (const got of [sync, async]) {
          assert.ok(got instanceof Uint8Array)
          assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(bytes))
        }
      })

      it('every size around the sync path\'s buffer switch: exact bytes, each array its own whole buffer', async function () {
        // readBytesSync reads small files into a Node-allocated ArrayBuffer and larger
        // ones (over 64 KiB) into a malloc'ed external one; both must look the same.
        for (const size of [0, 1, 4095, 4096, 65535, 65536, 65537, 1 << 20]) {
          const bytes = Buffer.alloc(size)
          for (let i = 0; i < size; i++) bytes[i] = (i * 7 + size) & 0xff
          fs.writeFileSync(path.join(s.root, 'sized.bin'), bytes)
          const sync = r.readBytesSync(['sized.bin'], { maxBytes: size })
          const async = await r.readBytes(['sized.bin'], { maxBytes: size })
          for (const got of [sync, async]) {
            assert.ok(Buffer.isBuffer(got), 'a Buffer (contract 0.3)')
            assert.strictEqual(got.byteOffset, 0)
            assert.strictEqual(got.buffer.byteLength, size)
            assert.ok(Buffer.from(got.buffer).equals(bytes))
          }
          assert.notStrictEqual(sync.buffer, r.readBytesSync(['sized.bin'], { maxBytes: size }).buffer)
          if (size > 0) assert.deepStrictEqual(code(() => r.readBytesSync(['sized.bin'], { maxBytes: size - 1 })), ['OVER_BUDGET', undefined])
        }
      })

      it('undefined only when the entry or a parent does not exist', async function () {
        fs.mkdirSync(path.join(s.root, 'd'))
        for (const segs of [['missing'], ['d', 'missing'], ['missing', 'x'], ['d', 'missing', 'x', 'y']]) {
          assert.strictEqual(r.readBytesSync(segs, { maxBytes: 10 }), undefined)
          assert.strictEqual(await r.readBytes(segs, { maxBytes: 10 }), undefined)
        }
      })

      it('a FIFO with no writer returns at once: UNSAFE_ENTRY', async function () {
        if (windows) skipBecause(this, REASONS.noFifo)
        mkfifo(path.join(s.root, 'fifo'))
        assert.deepStrictEqual(code(() => r.readBytesSync(['fifo'], { maxBytes: 10 })), ['UNSAFE_ENTRY', 0])
        assert.deepStrictEqual(await asyncCode(r.readBytes(['fifo'], { maxBytes: 10 })), ['UNSAFE_ENTRY', 0])
      })

      it('no segments (the root itself, a directory): UNSAFE_ENTRY', function () {
        assert.deepStrictEqual(code(() => r.readBytesSync([], { maxBytes: 10 })), ['UNSAFE_ENTRY', undefined])
      })
    })

    describe('maxBytes', function () {
      beforeEach(function () {
        fs.writeFileSync(path.join(s.root, 'five'), '12345')
        fs.writeFileSync(path.join(s.root, 'empty'), '')
      })

      it('is required: a safe integer from 0 to buffer.constants.MAX_LENGTH, else INVALID_PATH (options that are no object: INVALID_OPTION)', async function () {
        const bad = [undefined, null, {}, { maxBytes: undefined }, { maxBytes: -1 }, { maxBytes: 1.5 },
          { maxBytes: NaN }, { maxBytes: Infinity }, { maxBytes: '5' }, { maxBytes: 5n }, { maxBytes: MAX_LENGTH + 1 },
          { maxBytes: Number.MAX_SAFE_INTEGER + 2 }, { get maxBytes () { throw new Error('getter') } }]
        for (const options of bad) {
          assert.deepStrictEqual(code(() => r.readBytesSync(['five'], options)), ['INVALID_PATH', undefined])
          assert.deepStrictEqual(await asyncCode(r.readBytes(['five'], options)), ['INVALID_PATH', undefined])
        }
        for (const options of [5, 'x', { maxBytes: 5, encoding: 'utf8' }]) {
          assert.deepStrictEqual(code(() => r.readBytesSync(['five'], options)), ['INVALID_OPTION', undefined])
          assert.deepStrictEqual(await asyncCode(r.readBytes(['five'], options)), ['INVALID_OPTION', undefined])
        }
        assert.strictEqual(r.readBytesSync(['five'], { maxBytes: MAX_LENGTH }).length, 5)
      })

      it('a file with more bytes than maxBytes: OVER_BUDGET, never truncated', async function () {
        assert.deepStrictEqual(code(() => r.readBytesSync(['five'], { maxBytes: 4 })), ['OVER_BUDGET', undefined])
        assert.deepStrictEqual(await asyncCode(r.readBytes(['five'], { maxBytes: 0 })), ['OVER_BUDGET', undefined])
        assert.strictEqual(r.readBytesSync(['five'], { maxBytes: 5 }).length, 5)
      })

      it('a zero-byte file with maxBytes 0 returns an empty array', async function () {
        const a = r.readBytesSync(['empty'], { maxBytes: 0 })
        const b = await r.readBytes(['empty'], { maxBytes: 0 })
        assert.ok(a instanceof Uint8Array && a.length === 0)
        assert.ok(b instanceof Uint8Array && b.length === 0)
      })

      it('is decided from the size before loading: a huge sparse file is refused at once', function () {
        const fd = fs.openSync(path.join(s.root, 'sparse'), 'w')
        fs.ftruncateSync(fd, 64 * 1024 * 1024 * 1024) // 64 GiB, no blocks
        fs.closeSync(fd)
        assert.deepStrictEqual(code(() => r.readBytesSync(['sparse'], { maxBytes: 1024 })), ['OVER_BUDGET', undefined])
      })
    })

    describe('bytes seen beyond the reported size (procfs files report size 0)', function () {
      // A real kernel file whose size says 0 while it has content: the probe byte
      // beyond the size sees growth, deterministically.
      let proc
      beforeEach(function () {
        if (process.platform !== 'linux') skipBecause(this, REASONS.procfs)
        proc = fa.openReadAuthoritySync('/proc/self')
      })
      afterEach(function () { if (proc) proc.closeSync() })

      it('beyond the budget: OVER_BUDGET', function () {
        assert.strictEqual(fs.statSync('/proc/self/status').size, 0)
        assert.deepStrictEqual(code(() => proc.readBytesSync(['status'], { maxBytes: 0 })), ['OVER_BUDGET', undefined])
      })

      it('within the budget: FILE_CHANGED (size changed during the read)', async function () {
        assert.deepStrictEqual(code(() => proc.readBytesSync(['status'], { maxBytes: 1 << 20 })), ['FILE_CHANGED', undefined])
        assert.deepStrictEqual(await asyncCode(proc.readBytes(['status'], { maxBytes: 1 << 20 })), ['FILE_CHANGED', undefined])
      })
    })

    describe('a file appended to while it is read', function () {
      it('returns the bytes of one moment, or FILE_CHANGED / OVER_BUDGET; never a mix', async function () {
        this.timeout(60000)
        const file = path.join(s.root, 'log')
        const unit = Buffer.alloc(4096, 'x')
        fs.writeFileSync(file, unit)
        // Appends 4 KiB blocks until killed; the file only ever holds whole blocks of 'x'.
        const appender = spawn(process.execPath, ['-e', `
          const fs = require('fs'); const fd = fs.openSync(${JSON.stringify(file)}, 'a')
          const unit = Buffer.alloc(4096, 'x'); process.stdout.write('go\\n')
          for (;;) { fs.writeSync(fd, unit); if (fs.fstatSync(fd).size > 2 * 1024 * 1024) fs.ftruncateSync(fd, 4096) }`],
        { stdio: ['ignore', 'pipe', 'inherit'] })
        await new Promise((resolve) => appender.stdout.once('data', resolve))
        const seen = { ok: 0, FILE_CHANGED: 0, OVER_BUDGET: 0 }
        try {
          for (let i = 0; i < 200; i++) {
            let got
            try {
              got = i % 2 ? await r.readBytes(['log'], { maxBytes: 1536 * 1024 }) : r.readBytesSync(['log'], { maxBytes: 1536 * 1024 })
            } catch (err) {
              // Windows opens a file for reading denying write sharing, so while the
              // appender holds it open the read is refused with HOST_IO EBUSY
              // (docs/file-authority.md, "Windows"): never a mix there either.
              if (windows && err.code === 'HOST_IO' && err.hostCode === 'EBUSY') {
                seen.EBUSY = (seen.EBUSY || 0) + 1
                continue
              }
              assert.ok(err.code === 'FILE_CHANGED' || err.code === 'OVER_BUDGET', String(err))
              seen[err.code]++
              continue
            }
            assert.ok(got.length > 0 && got.length % 4096 === 0 && got.length <= 1536 * 1024, `length ${got.length}`)
            assert.ok(Buffer.from(got.buffer, got.byteOffset, got.length).equals(Buffer.alloc(got.length, 0x78)))
            seen.ok++
          }
        } finally {
          appender.kill('SIGKILL')
        }
        assert.strictEqual(seen.ok + seen.FILE_CHANGED + seen.OVER_BUDGET + (seen.EBUSY || 0), 200)
      })
    })

    describe('list', function () {
      it('the root with [], sorted in code-unit order, kinds without following links', async function () {
        if (windows) skipBecause(this, REASONS.caseAndFifo)
        const names = ['b', 'a', 'B', '\u{1F600}', '\uFFFD', 'é', 'e\u0301', '_', '10', '9']
        for (const n of names) fs.writeFileSync(path.join(s.root, n), n)
        fs.mkdirSync(path.join(s.root, 'dir'))
        fs.symlinkSync('/', path.join(s.root, 'link'))
        fs.symlinkSync('dir', path.join(s.root, 'dirlink'))
        mkfifo(path.join(s.root, 'fifo'))
        const expected = [...names, 'dir', 'link', 'dirlink', 'fifo'].sort()
        // Code-unit order puts U+1F600 (D83D DE00) before U+FFFD; UTF-8 byte order would not.
        assert.ok(expected.indexOf('\u{1F600}') < expected.indexOf('\uFFFD'))
        for (const listing of [r.listSync([]), await r.list([])]) {
          assert.deepStrictEqual(listing.map((e) => e.name), expected)
          const kind = Object.fromEntries(listing.map((e) => [e.name, e.kind]))
          assert.strictEqual(kind.a, 'file')
          assert.strictEqual(kind.dir, 'directory')
          assert.strictEqual(kind.link, 'symlink')
          assert.strictEqual(kind.dirlink, 'symlink')
          assert.strictEqual(kind.fifo, 'other')
          assert.strictEqual(listing.omitted, 0)
          assert.ok(!listing.some((e) => e.name === '.' || e.name === '..'))
          assert.ok(Array.isArray(listing))
        }
      })

      it('code-unit order where it differs from UTF-8 byte order, prefixes first, plain entries', async function () {
        // The listing is sorted in C: names from every UTF-8 length class, around the
        // surrogate range (U+D7FF, U+E000..U+FFFF against U+10000 and above) and
        // prefixes of one another, must come back exactly as JavaScript's sort() orders them.
        if (wine) skipBecause(this, REASONS.wineSupplementary)
        // The last supplementary code point: U+10FFFF, except on Windows, where libuv's
        // path conversion asserts code_point < 0x10FFFF and aborts Node itself.
        const last = windows ? '\u{10fffd}' : '\u{10ffff}'
        const chars = ['a', 'Z', '~', '\u007f', '\u0080', '\u07ff', '\u0800', '\ud7ff', '\ue000',
          '\uf8ff', '\uffee', '\ufffd', '\u{10000}', '\u{1f600}', last]
        const names = new Set()
        for (const x of chars) {
          names.add(x)
          for (const y of chars) names.add(x + y)
        }
        const dir = path.join(s.root, 'order')
        fs.mkdirSync(dir)
        for (const n of names) fs.writeFileSync(path.join(dir, n), '')
        const expected = [...names].sort()
        assert.ok(expected.indexOf('\u{10000}') < expected.indexOf('\ue000'))
        for (const listing of [r.listSync(['order']), await r.list(['order'])]) {
          assert.deepStrictEqual(listing.map((e) => e.name), expected)
          // Plain objects with exactly name and kind, not frozen: as the in-memory face's.
          assert.deepStrictEqual(Object.keys(listing[0]), ['name', 'kind'])
          assert.strictEqual(Object.getPrototypeOf(listing[0]), Object.prototype)
          assert.ok(listing.every((e) => !Object.isFrozen(e) && e.kind === 'file'))
        }
      })

      it('undefined when the directory or a parent does not exist', async function () {
        assert.strictEqual(r.listSync(['missing']), undefined)
        assert.strictEqual(await r.list(['missing', 'deeper']), undefined)
      })

      it('not a directory: UNSAFE_ENTRY at its segment', async function () {
        fs.mkdirSync(path.join(s.root, 'd'))
        fs.writeFileSync(path.join(s.root, 'd', 'f'), 'f')
        assert.deepStrictEqual(code(() => r.listSync(['d', 'f'])), ['UNSAFE_ENTRY', 1])
        assert.deepStrictEqual(await asyncCode(r.list(['d', 'f'])), ['UNSAFE_ENTRY', 1])
      })

      it('names that are not valid UTF-8 are left out and counted in omitted, never altered', async function () {
        if (windows) skipBecause(this, REASONS.rawNames)
        fs.mkdirSync(path.join(s.root, 'd'))
        const bad = [[0xff], [0x61, 0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]]
        for (const b of bad) writeRawName(path.join(s.root, 'd'), b, 'x')
        fs.writeFileSync(path.join(s.root, 'd', 'ok'), 'ok')
        fs.writeFileSync(path.join(s.root, 'd', '\u{10FFFF}'), 'max')
        for (const listing of [r.listSync(['d']), await r.list(['d'])]) {
          assert.deepStrictEqual(listing.map((e) => e.name), ['ok', '\u{10FFFF}'])
          assert.strictEqual(listing.omitted, bad.length)
          assert.ok(!listing.some((e) => e.name.includes('\uFFFD')))
          assert.deepStrictEqual(Object.keys(listing), ['0', '1'])
        }
      })

      it('an empty directory: [] with omitted 0', function () {
        fs.mkdirSync(path.join(s.root, 'e'))
        const l = r.listSync(['e'])
        assert.deepStrictEqual([...l], [])
        assert.strictEqual(l.omitted, 0)
      })
    })
  })
}
