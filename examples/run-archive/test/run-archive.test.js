'use strict'
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { fork } = require('node:child_process')
const { once } = require('node:events')
const {
  openRunArchive, checkRunId, isRunId, fileNameOf, runIdOf, RunIdError, ArchiveDamagedError,
  FileAuthorityError, MAX_RUN_ID_LENGTH
} = require('../run-archive.js')

// Plants a symlink for an attack; where the platform makes none (wine 8 reports
// success and creates nothing: docs/platforms.md), the test skips, naming why.
function plantLink (ctx, target, at) {
  fs.symlinkSync(target, at)
  let linked = false
  try { linked = fs.lstatSync(at).isSymbolicLink() } catch {}
  if (!linked) {
    ctx.test.title += ' [skipped: the symlink was not created (wine 8: CreateSymbolicLinkW reports success and creates nothing); real Windows runs this]'
    ctx.skip()
  }
}

// How macOS (case-insensitive, Unicode-normalising) and Windows (case-insensitive,
// trailing dots and spaces stripped) would name a file: two names with the same key
// are the same file there.
function foldKey (name) {
  return name.normalize('NFC').toLowerCase().replace(/[. ]+$/, '')
}
// Everything Windows reserves, broader than the archive's own rule on purpose
// (superscript digits, CONIN$, CONOUT$): an accepted name must pass this too.
const WINDOWS_RESERVED = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(\..*)?$/i

function refusedWith (code) {
  return (err) => err instanceof RunIdError && err.code === code
}

describe('examples/run-archive', function () {
  let root
  let archive
  beforeEach(async function () {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'run-archive-test-'))
    archive = await openRunArchive(root)
  })
  afterEach(async function () {
    await archive.close()
    fs.rmSync(root, { recursive: true, force: true })
  })

  describe('run ids: the collision battery', function () {
    const table = [
      // accepted
      ['run-1', 'ok'], ['a', 'ok'], ['0', 'ok'], ['2024-05-01.build-17', 'ok'], ['a.b.c', 'ok'],
      ['a..b', 'ok'], ['a_b', 'ok'], ['console', 'ok'], ['nul_1', 'ok'], ['com10', 'ok'], ['lpt', 'ok'],
      ['x'.repeat(MAX_RUN_ID_LENGTH), 'ok'], ['auxiliary.json', 'ok'], ['con-1', 'ok'],
      // case pairs: only the lowercase member exists
      ['Run-1', 'RUN_ID_PATTERN'], ['RUN-1', 'RUN_ID_PATTERN'], ['A', 'RUN_ID_PATTERN'],
      // device names, bare and with extensions
      ['con', 'RUN_ID_DEVICE_NAME'], ['nul', 'RUN_ID_DEVICE_NAME'], ['prn', 'RUN_ID_DEVICE_NAME'],
      ['aux', 'RUN_ID_DEVICE_NAME'], ['com1', 'RUN_ID_DEVICE_NAME'], ['com0', 'RUN_ID_DEVICE_NAME'],
      ['lpt9', 'RUN_ID_DEVICE_NAME'], ['nul.json', 'RUN_ID_DEVICE_NAME'], ['con.txt', 'RUN_ID_DEVICE_NAME'],
      ['com1.tar.gz', 'RUN_ID_DEVICE_NAME'], ['aux.', 'RUN_ID_TRAILING_DOT'], ['CON', 'RUN_ID_PATTERN'],
      ['conin$', 'RUN_ID_PATTERN'], ['com\u00b9', 'RUN_ID_PATTERN'],
      // separators and characters some filesystem treats specially
      ['a/b', 'RUN_ID_PATTERN'], ['a\\b', 'RUN_ID_PATTERN'], ['a:b', 'RUN_ID_PATTERN'],
      ['a b', 'RUN_ID_PATTERN'], ['a\0b', 'RUN_ID_PATTERN'], ['a*b', 'RUN_ID_PATTERN'],
      ['abcdef~1', 'RUN_ID_PATTERN'], ['a\u2215b', 'RUN_ID_PATTERN'], ['a\nb', 'RUN_ID_PATTERN'],
      // dot names
      ['.', 'RUN_ID_PATTERN'], ['..', 'RUN_ID_PATTERN'], ['.hidden', 'RUN_ID_PATTERN'],
      ['.aos-0123456789abcdef0123456789abcdef.tmp', 'RUN_ID_PATTERN'],
      ['a.', 'RUN_ID_TRAILING_DOT'], ['a..', 'RUN_ID_TRAILING_DOT'], ['run-1.', 'RUN_ID_TRAILING_DOT'],
      ['-a', 'RUN_ID_PATTERN'], ['_a', 'RUN_ID_PATTERN'],
      // Unicode that folds or normalises into ASCII, or differs only in normal form
      ['\u00e9', 'RUN_ID_PATTERN'], ['e\u0301', 'RUN_ID_PATTERN'], ['\ufb00', 'RUN_ID_PATTERN'],
      ['\uff41', 'RUN_ID_PATTERN'], ['k\u212a', 'RUN_ID_PATTERN'], ['\u0130', 'RUN_ID_PATTERN'],
      // length and type
      ['', 'RUN_ID_EMPTY'], ['x'.repeat(MAX_RUN_ID_LENGTH + 1), 'RUN_ID_TOO_LONG'],
      [undefined, 'RUN_ID_TYPE'], [17, 'RUN_ID_TYPE'], [null, 'RUN_ID_TYPE'], [new String('a'), 'RUN_ID_TYPE']
    ]
    for (const [runId, expected] of table) {
      const label = typeof runId === 'string' && runId.length > 24
        ? `${runId.slice(0, 6)}... (${runId.length})`
        : typeof runId === 'string'
          ? JSON.stringify(runId).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
          : typeof runId === 'object' && runId !== null ? 'a String object' : String(runId)
      it(`${label} -> ${expected}`, function () {
        if (expected === 'ok') assert.equal(checkRunId(runId), runId)
        else assert.throws(() => checkRunId(runId), refusedWith(expected))
      })
    }

    it('a refusal names the rule, never the id', function () {
      const secret = 'Secret-Run-Name'
      assert.throws(() => checkRunId(secret), (err) => !err.message.includes(secret) && err.code === 'RUN_ID_PATTERN')
    })

    it('accepted ids map to distinct, portable file names (random battery)', function () {
      // Pieces that collide somewhere: case, device names, dots, spaces, separators,
      // 8.3 aliases, combining marks, full-width letters.
      const pieces = ['a', 'A', 'b', 'B', '0', '1', '.', '..', '-', '_', ' ', '/', '\\', ':', '~', '~1',
        'con', 'CON', 'nul', 'com1', 'lpt9', 'aux', 'prn', '.json', '\u00e9', 'e\u0301', '\uff41', '\u212a', 'k']
      let seed = 0x2545f491
      const random = (n) => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) % n }
      const byKey = new Map()
      let accepted = 0
      for (let i = 0; i < 20000; i++) {
        let runId = ''
        const n = 1 + random(5)
        for (let j = 0; j < n; j++) runId += pieces[random(pieces.length)]
        if (!isRunId(runId)) {
          assert.throws(() => fileNameOf(runId), RunIdError)
          continue
        }
        accepted++
        const name = fileNameOf(runId)
        assert.equal(runIdOf(name), runId)
        assert.match(name, /^[a-z0-9._-]+$/, 'ASCII only: no case or normal-form folding can apply')
        assert.ok(!WINDOWS_RESERVED.test(name), `device name: ${name}`)
        assert.ok(!/[. ]$/.test(name) && !name.includes('~'))
        assert.ok(Buffer.byteLength(name) <= 255)
        const key = foldKey(name)
        const other = byKey.get(key)
        assert.ok(other === undefined || other === runId, `${runId} and ${other} would be one file`)
        byKey.set(key, runId)
      }
      assert.ok(accepted > 100, 'the battery exercised accepted ids')
    })

    it('every accepted id of the table is stored and listed back as itself', async function () {
      const ids = table.filter(([, e]) => e === 'ok').map(([id]) => id)
      for (const runId of ids) await archive.save(runId, { runId })
      const listed = await archive.list()
      assert.deepEqual(listed.ids, [...ids].sort())
      assert.equal(listed.skipped, 0)
      for (const runId of ids) assert.deepEqual(await archive.read(runId), { runId })
    })

    it('save, read and list refuse a bad id before touching the disk', async function () {
      await assert.rejects(archive.save('Run-1', {}), refusedWith('RUN_ID_PATTERN'))
      await assert.rejects(archive.read('nul'), refusedWith('RUN_ID_DEVICE_NAME'))
      await assert.rejects(archive.save('a.', {}), refusedWith('RUN_ID_TRAILING_DOT'))
      assert.equal(fs.existsSync(path.join(root, 'runs')), false)
    })
  })

  describe('saving and reading', function () {
    it('creates runs/ on first save and replaces an archive saved twice', async function () {
      await archive.save('run-1', { n: 1 })
      await archive.save('run-1', { n: 2 })
      assert.deepEqual(await archive.read('run-1'), { n: 2 })
      assert.deepEqual(fs.readdirSync(path.join(root, 'runs')), ['run-1.json'])
      assert.equal(await archive.read('run-2'), undefined)
    })

    it('lists nothing before the first save', async function () {
      assert.deepEqual(await archive.list(), { ids: [], skipped: 0 })
    })

    it('refuses an archive over the byte budget (OVER_BUDGET), and readAll shares one budget', async function () {
      const size = await archive.save('big', { payload: 'x'.repeat(1000) })
      await assert.rejects(archive.read('big', { maxBytes: size - 1 }),
        (err) => err instanceof FileAuthorityError && err.code === 'OVER_BUDGET')
      assert.deepEqual(await archive.read('big', { maxBytes: size }), { payload: 'x'.repeat(1000) })
      const small = await archive.save('small', { n: 1 })
      assert.equal((await archive.readAll({ maxBytes: size + small })).size, 2)
      await assert.rejects(archive.readAll({ maxBytes: size + small - 1 }), (err) => err.code === 'OVER_BUDGET')
    })

    it('skips entries that are not archives: staging files, links, directories, foreign names', async function () {
      await archive.save('run-1', {})
      const runs = path.join(root, 'runs')
      fs.writeFileSync(path.join(runs, '.aos-0123456789abcdef0123456789abcdef.tmp'), 'partial')
      fs.writeFileSync(path.join(runs, 'Run-2.json'), '{}')
      fs.writeFileSync(path.join(runs, 'notes.txt'), '')
      fs.mkdirSync(path.join(runs, 'run-3.json'))
      plantLink(this, '/etc/passwd', path.join(runs, 'run-4.json'))
      assert.deepEqual(await archive.list(), { ids: ['run-1'], skipped: 5 })
    })

    it('never follows a symlink planted at an archive or at runs/', async function () {
      const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'run-archive-outside-'))
      try {
        fs.writeFileSync(path.join(outside, 'victim.json'), 'untouched')
        fs.mkdirSync(path.join(root, 'runs'))
        plantLink(this, path.join(outside, 'victim.json'), path.join(root, 'runs', 'run-1.json'))
        await assert.rejects(archive.read('run-1'), (err) => err.code === 'UNSAFE_ENTRY' && err.segmentIndex === 1)
        await assert.rejects(archive.save('run-1', {}), (err) => err.code === 'UNSAFE_ENTRY' && err.segmentIndex === 1)
        fs.rmSync(path.join(root, 'runs'), { recursive: true })
        plantLink(this, outside, path.join(root, 'runs'))
        await assert.rejects(archive.save('run-2', {}), (err) => err.code === 'UNSAFE_ENTRY' && err.segmentIndex === 0)
        await assert.rejects(archive.list(), (err) => err.code === 'UNSAFE_ENTRY')
        assert.deepEqual(fs.readdirSync(outside), ['victim.json'])
        assert.equal(fs.readFileSync(path.join(outside, 'victim.json'), 'utf8'), 'untouched')
      } finally {
        fs.rmSync(outside, { recursive: true, force: true })
      }
    })

    it('reports a damaged archive instead of returning garbage', async function () {
      fs.mkdirSync(path.join(root, 'runs'))
      fs.writeFileSync(path.join(root, 'runs', 'run-1.json'), '{"format":"run-archive/1","runId":"run-1","rec')
      await assert.rejects(archive.read('run-1'), (err) => err instanceof ArchiveDamagedError && err.reason === 'not UTF-8 JSON')
      fs.writeFileSync(path.join(root, 'runs', 'run-2.json'), Buffer.from([0x7b, 0xff, 0x7d]))
      await assert.rejects(archive.read('run-2'), ArchiveDamagedError)
      await archive.save('run-3', { n: 3 })
      fs.copyFileSync(path.join(root, 'runs', 'run-3.json'), path.join(root, 'runs', 'run-4.json'))
      await assert.rejects(archive.read('run-4'), (err) => err.reason === 'archive of another run id')
    })
  })

  describe('a reader in another process', function () {
    it('never sees half an archive while a writer replaces it in a loop', async function () {
      if (process.platform === 'win32') {
        // docs/platforms.md: the Windows core renames with the classic semantics, which
        // refuse to replace a file another process holds open (HOST_IO EACCES).
        this.test.title += ' [skipped: replacing a file another process holds open: Windows refuses the rename (HOST_IO EACCES)]'
        this.skip()
      }
      const runId = 'contended-run'
      let seq = 0
      const record = () => {
        seq++
        // Sizes from 1 KiB to 256 KiB, so a torn write would be visible.
        const payload = String(seq % 10).repeat(1024 * (1 + (seq * 37) % 256))
        return { seq, payload, digest: crypto.createHash('sha256').update(`${seq}:${payload}`).digest('hex') }
      }
      await archive.save(runId, record())
      const reader = fork(path.join(__dirname, 'fixtures', 'reader.js'), [root, runId], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      let reads = 0
      let final
      reader.on('message', (m) => {
        if (m.error) final = m
        else if (m.done) final = m
        else reads = m.reads
      })
      try {
        // Both loops overlap: the writer keeps replacing until the reader has read at
        // least 60 times after the writer started, and has itself written 60 times.
        const startReads = reads
        let writes = 0
        while ((writes < 60 || reads < startReads + 60) && final === undefined) {
          await archive.save(runId, record())
          writes++
        }
        reader.send('stop')
        while (final === undefined) await once(reader, 'message')
      } finally {
        if (reader.exitCode === null) { reader.kill('SIGKILL'); await once(reader, 'exit') }
      }
      assert.equal(final.error, undefined, final.error)
      assert.equal(final.bad, 0, 'every archive read was whole')
      assert.ok(final.reads >= 60)
    })
  })
})
