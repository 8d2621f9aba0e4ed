'use strict'
// The contract lines that hold the same way on every host, written with nothing but
// portable filesystem calls, so this file also runs on Windows (the project runs it
// under wine). Links are made as junctions on Windows and symlinks elsewhere.

const assert = require('node:assert')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const util = require('node:util')
const fa = require('../../lib/file-authority.js')
const { REASONS, skipBecause } = require('../helpers/platform.js')

const WIN = process.platform === 'win32'

const { code, asyncCode } = require('../helpers/fa-outcome.js')

describe('file-authority on every host', function () {
  this.timeout(60000)
  let base, root, outside, r, w

  beforeEach(function () {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'aos-fa-portable-')))
    root = path.join(base, 'root')
    outside = path.join(base, 'outside')
    fs.mkdirSync(path.join(root, 'd'), { recursive: true })
    fs.mkdirSync(outside)
    fs.writeFileSync(path.join(outside, 'secret'), 'OUTSIDE')
    fs.writeFileSync(path.join(root, 'd', 'a.txt'), 'alpha')
    fs.writeFileSync(path.join(root, 'empty'), '')
    r = fa.openReadAuthoritySync(root)
    w = fa.openWriteAuthoritySync(root, { sameRootAs: r })
  })
  afterEach(function () {
    r.closeSync()
    w.closeSync()
    fs.rmSync(base, { recursive: true, force: true })
  })

  it('opens, reads, lists and writes', async function () {
    assert.strictEqual(Buffer.from(r.readBytesSync(['d', 'a.txt'], { maxBytes: 5 })).toString(), 'alpha')
    assert.strictEqual(Buffer.from(await r.readBytes(['d', 'a.txt'], { maxBytes: 5 })).toString(), 'alpha')
    assert.strictEqual(r.readBytesSync(['empty'], { maxBytes: 0 }).length, 0)
    w.writeTextSync(['d', 'b.txt'], 'beta \u{1F600}')
    await w.writeText(['n', 'm', 'c.txt'], Buffer.from('gamma'), { createParents: true })
    await w.writeText(['d', 'a.txt'], 'alpha 2')
    assert.strictEqual(fs.readFileSync(path.join(root, 'd', 'b.txt'), 'utf8'), 'beta \u{1F600}')
    assert.strictEqual(fs.readFileSync(path.join(root, 'n', 'm', 'c.txt'), 'utf8'), 'gamma')
    assert.strictEqual(fs.readFileSync(path.join(root, 'd', 'a.txt'), 'utf8'), 'alpha 2')
    assert.deepStrictEqual(r.listSync([]).map((e) => [e.name, e.kind]), [['d', 'directory'], ['empty', 'file'], ['n', 'directory']])
    assert.deepStrictEqual((await r.list(['d'])).map((e) => e.name), ['a.txt', 'b.txt'])
    assert.strictEqual(r.listSync(['d']).omitted, 0)
    assert.deepStrictEqual(fs.readdirSync(path.join(root, 'd')).sort(), ['a.txt', 'b.txt'])
  })

  it('missing entries: undefined for reads and lists, HOST_IO ENOENT for writes', async function () {
    assert.strictEqual(r.readBytesSync(['nope'], { maxBytes: 1 }), undefined)
    assert.strictEqual(await r.readBytes(['nope', 'x'], { maxBytes: 1 }), undefined)
    assert.strictEqual(r.listSync(['nope']), undefined)
    assert.deepStrictEqual(code(() => w.writeTextSync(['nope', 'x'], 'x')), ['HOST_IO', 0, 'ENOENT'])
  })

  it('refuses non-files, files as parents, budgets, bad content', async function () {
    assert.deepStrictEqual(code(() => r.readBytesSync(['d'], { maxBytes: 1 })), ['UNSAFE_ENTRY', 0, 'EISDIR'])
    assert.deepStrictEqual(code(() => r.readBytesSync(['d', 'a.txt', 'x'], { maxBytes: 1 })), ['UNSAFE_ENTRY', 1, 'ENOTDIR'])
    assert.deepStrictEqual(code(() => r.listSync(['d', 'a.txt'])), ['UNSAFE_ENTRY', 1, 'ENOTDIR'])
    assert.deepStrictEqual(code(() => w.writeTextSync(['d'], 'x')), ['UNSAFE_ENTRY', 0, 'EISDIR'])
    assert.deepStrictEqual(code(() => w.writeTextSync(['d', 'a.txt', 'x'], 'x', { createParents: true })), ['UNSAFE_ENTRY', 1, 'ENOTDIR'])
    assert.deepStrictEqual(code(() => r.readBytesSync(['d', 'a.txt'], { maxBytes: 4 })), ['OVER_BUDGET', undefined, undefined])
    assert.deepStrictEqual(await asyncCode(w.writeText(['d', 'a.txt'], '\ud800')), ['INVALID_CONTENT', undefined, undefined])
    assert.deepStrictEqual(code(() => r.readBytesSync(['d', '..'], { maxBytes: 1 })), ['INVALID_PATH', 1, undefined])
    assert.strictEqual(fs.readFileSync(path.join(root, 'd', 'a.txt'), 'utf8'), 'alpha')
  })

  it('a link below the root is UNSAFE_ENTRY, and nothing outside is touched', async function () {
    const link = path.join(root, 'link')
    let made = false
    for (const type of WIN ? ['junction', 'dir'] : ['dir']) {
      try {
        fs.symlinkSync(outside, link, type)
        made = true
        break
      } catch {}
    }
    // Some hosts do not let this user make links; wine reports success for a
    // directory symlink it never creates.
    if (!made || !fs.readdirSync(root).includes('link')) skipBecause(this, REASONS.noSymlink)
    assert.deepStrictEqual(code(() => r.readBytesSync(['link', 'secret'], { maxBytes: 100 }))[0], 'UNSAFE_ENTRY')
    assert.deepStrictEqual(code(() => r.listSync(['link']))[0], 'UNSAFE_ENTRY')
    assert.deepStrictEqual((await asyncCode(w.writeText(['link', 'planted'], 'x')))[0], 'UNSAFE_ENTRY')
    assert.deepStrictEqual(code(() => w.writeTextSync(['link'], 'x'))[0], 'UNSAFE_ENTRY')
    assert.strictEqual(r.listSync([]).find((e) => e.name === 'link').kind, 'symlink')
    assert.deepStrictEqual(fs.readdirSync(outside), ['secret'])
  })

  it('roots: missing, not a directory, relative; sameRootAs after a swap', async function () {
    assert.deepStrictEqual(code(() => fa.openReadAuthoritySync(path.join(base, 'missing'))), ['HOST_IO', undefined, 'ENOENT'])
    assert.deepStrictEqual(code(() => fa.openReadAuthoritySync(path.join(root, 'empty'))), ['UNSAFE_ENTRY', undefined, 'ENOTDIR'])
    assert.deepStrictEqual(code(() => fa.openReadAuthoritySync('relative')), ['INVALID_PATH', undefined, undefined])
    assert.deepStrictEqual(await asyncCode(fa.openReadAuthority(outside, { sameRootAs: r })), ['ROOT_CHANGED', undefined, undefined])
    const other = fa.openReadAuthoritySync(outside)
    assert.strictEqual(r.sharesRootWith(w), true)
    assert.strictEqual(r.sharesRootWith(other), false)
    other.closeSync()
  })

  it('is opaque and closes idempotently', async function () {
    assert.deepStrictEqual(Object.keys(r), [])
    assert.strictEqual(JSON.stringify(w), '{}')
    assert.strictEqual(util.inspect(r), 'ReadAuthority { closed: false }')
    const pending = r.readBytes(['d', 'a.txt'], { maxBytes: 5 })
    await r.close()
    r.closeSync()
    assert.strictEqual(Buffer.from(await pending).toString(), 'alpha')
    assert.deepStrictEqual(code(() => r.listSync([])), ['AUTHORITY_CLOSED', undefined, undefined])
  })
})
