'use strict'
// WriteAuthority: atomic replacement, permission bits and umask, createParents,
// content rules, no temporary file left behind, committed-name check. Both resolvers.

const assert = require('node:assert')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver, tempFiles, walkTree } = require('../helpers/fs-layouts.js')
const { windows, REASONS, skipBecause, symlinksWork } = require('../helpers/platform.js')

const { code, asyncCode } = require('../helpers/fa-outcome.js')

function modeOf (p) {
  return fs.statSync(p).mode & 0o7777
}

for (const resolver of resolvers()) {
  describe(`file-authority WriteAuthority (${resolver} resolver)`, function () {
    let s, w
    beforeEach(function () {
      s = makeSandbox()
      useResolver(resolver)
      w = fa.openWriteAuthoritySync(s.root)
    })
    afterEach(function () {
      w.closeSync()
      s.cleanup()
    })

    it('creates and replaces a file, from a string or from UTF-8 bytes', async function () {
      w.writeTextSync(['a.txt'], 'first \u{1F600}')
      assert.strictEqual(fs.readFileSync(path.join(s.root, 'a.txt'), 'utf8'), 'first \u{1F600}')
      await w.writeText(['a.txt'], Buffer.from('second é'))
      assert.strictEqual(fs.readFileSync(path.join(s.root, 'a.txt'), 'utf8'), 'second é')
      await w.writeText(['a.txt'], new Uint8Array(0))
      assert.strictEqual(fs.readFileSync(path.join(s.root, 'a.txt')).length, 0)
      w.writeTextSync(['a.txt'], '')
      assert.deepStrictEqual(fs.readdirSync(s.root), ['a.txt'])
    })

    it('a replaced file keeps its permission bits (mode & 0o777: never a set-id or sticky bit)', async function () {
      if (windows) skipBecause(this, REASONS.posixMode)
      const p = path.join(s.root, 'm')
      for (const mode of [0o600, 0o751, 0o444, 0o2755, 0o4711, 0o1640, 0o640]) {
        fs.writeFileSync(p, 'old')
        fs.chmodSync(p, mode)
        await w.writeText(['m'], 'new')
        assert.strictEqual(modeOf(p).toString(8), (mode & 0o777).toString(8))
        fs.chmodSync(p, mode)
        w.writeTextSync(['m'], 'newer')
        assert.strictEqual(modeOf(p).toString(8), (mode & 0o777).toString(8))
        assert.strictEqual(fs.readFileSync(p, 'utf8'), 'newer')
      }
    })

    it('a new file gets 0o666 less the umask (and new parents 0o777 less the umask)', async function () {
      if (windows) skipBecause(this, REASONS.posixMode)
      for (const mask of [0o022, 0o027, 0o077, 0o002]) {
        const old = process.umask(mask)
        try {
          w.writeTextSync([`n${mask}`], 'x')
          w.writeTextSync([`d${mask}`, 'f'], 'x', { createParents: true })
        } finally {
          process.umask(old)
        }
        assert.strictEqual(modeOf(path.join(s.root, `n${mask}`)).toString(8), (0o666 & ~mask).toString(8))
        assert.strictEqual(modeOf(path.join(s.root, `d${mask}`, 'f')).toString(8), (0o666 & ~mask).toString(8))
        assert.strictEqual(modeOf(path.join(s.root, `d${mask}`)).toString(8), (0o777 & ~mask).toString(8))
      }
    })

    it('a missing parent: HOST_IO ENOENT at its segment, nothing created', async function () {
      fs.mkdirSync(path.join(s.root, 'a'))
      assert.deepStrictEqual(code(() => w.writeTextSync(['a', 'b', 'c', 'f'], 'x')), ['HOST_IO', 1, 'ENOENT'])
      assert.deepStrictEqual(await asyncCode(w.writeText(['m', 'f'], 'x')), ['HOST_IO', 0, 'ENOENT'])
      assert.deepStrictEqual(await asyncCode(w.writeText(['m', 'f'], 'x', { createParents: false })), ['HOST_IO', 0, 'ENOENT'])
      assert.deepStrictEqual(walkTree(s.root), ['a'])
    })

    it('createParents creates the missing directories one by one', async function () {
      fs.mkdirSync(path.join(s.root, 'a'))
      w.writeTextSync(['a', 'b', 'c', 'f'], 'deep', { createParents: true })
      await w.writeText(['x', 'y', 'z'], 'deeper', { createParents: true })
      assert.strictEqual(fs.readFileSync(path.join(s.root, 'a', 'b', 'c', 'f'), 'utf8'), 'deep')
      assert.strictEqual(fs.readFileSync(path.join(s.root, 'x', 'y', 'z'), 'utf8'), 'deeper')
      assert.deepStrictEqual(walkTree(s.root), ['a', 'a/b', 'a/b/c', 'a/b/c/f', 'x', 'x/y', 'x/y/z'])
    })

    it('createParents stops at a link or a file on the way, creating nothing past it', async function () {
      if (!symlinksWork()) skipBecause(this, REASONS.noSymlink)
      fs.symlinkSync(s.outside, path.join(s.root, 'l'))
      fs.writeFileSync(path.join(s.root, 'f'), 'f')
      assert.deepStrictEqual(code(() => w.writeTextSync(['n', 'l2'], 'x', { createParents: true })), 'no error')
      assert.deepStrictEqual(await asyncCode(w.writeText(['l', 'a', 'b'], 'x', { createParents: true })), ['UNSAFE_ENTRY', 0, 'ELOOP'])
      assert.deepStrictEqual(code(() => w.writeTextSync(['f', 'a', 'b'], 'x', { createParents: true })), ['UNSAFE_ENTRY', 0, 'ENOTDIR'])
      assert.deepStrictEqual(fs.readdirSync(s.outside), ['secret'])
    })

    it('bad options: INVALID_OPTION', async function () {
      for (const bad of [5, 'x', { createParents: 1 }, { createParents: 'yes' }, { get createParents () { throw new Error('x') } }, { flag: 'a' }]) {
        assert.deepStrictEqual(code(() => w.writeTextSync(['f'], 'x', bad)), ['INVALID_OPTION', undefined, undefined])
        assert.deepStrictEqual(await asyncCode(w.writeText(['f'], 'x', bad)), ['INVALID_OPTION', undefined, undefined])
      }
      assert.ok(!fs.existsSync(path.join(s.root, 'f')))
    })

    it('text that is not well-formed: INVALID_CONTENT, nothing written', async function () {
      const p = path.join(s.root, 'keep')
      fs.writeFileSync(p, 'kept')
      const bad = ['lone \ud800 high', 'lone \udc00 low', Buffer.from([0xff]), Uint8Array.of(0xc0, 0xaf),
        Uint8Array.of(0xed, 0xa0, 0x80), Uint8Array.of(0xe2, 0x82), Uint8Array.of(0xf4, 0x90, 0x80, 0x80)]
      for (const text of bad) {
        assert.deepStrictEqual(code(() => w.writeTextSync(['keep'], text)), ['INVALID_CONTENT', undefined, undefined])
        assert.deepStrictEqual(await asyncCode(w.writeText(['keep'], text)), ['INVALID_CONTENT', undefined, undefined])
        assert.deepStrictEqual(await asyncCode(w.writeText(['new'], text, { createParents: true })), ['INVALID_CONTENT', undefined, undefined])
      }
      assert.strictEqual(fs.readFileSync(p, 'utf8'), 'kept')
      assert.deepStrictEqual(fs.readdirSync(s.root), ['keep'])
      // Neither a string nor a Uint8Array: a bad argument (not a path).
      for (const other of [undefined, 42, {}, new Uint16Array(2), new ArrayBuffer(2)]) {
        assert.deepStrictEqual(code(() => w.writeTextSync(['keep'], other)), ['INVALID_OPTION', undefined, undefined])
      }
    })

    it('the bytes are taken at the call: changing the buffer afterwards changes nothing', async function () {
      const content = Buffer.from('original')
      const pending = w.writeText(['c'], content)
      content.fill(0x21)
      await pending
      assert.strictEqual(fs.readFileSync(path.join(s.root, 'c'), 'utf8'), 'original')
    })

    it('no segments (the root itself): UNSAFE_ENTRY, a directory (EISDIR)', function () {
      assert.deepStrictEqual(code(() => w.writeTextSync([], 'x')), ['UNSAFE_ENTRY', undefined, 'EISDIR'])
    })

    it('a failed write leaves no temporary file behind (disk full on a small tmpfs, as root)', async function () {
      const mnt = path.join(s.root, 'small')
      fs.mkdirSync(mnt)
      if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'aos-small', mnt]).status !== 0) this.skip()
      try {
        fs.writeFileSync(path.join(mnt, 'target'), 'old')
        const big = 'x'.repeat(1024 * 1024)
        assert.deepStrictEqual(code(() => w.writeTextSync(['small', 'target'], big)), ['HOST_IO', 1, 'ENOSPC'])
        assert.deepStrictEqual(await asyncCode(w.writeText(['small', 'new'], big)), ['HOST_IO', 1, 'ENOSPC'])
        assert.deepStrictEqual(fs.readdirSync(mnt), ['target'])
        assert.strictEqual(fs.readFileSync(path.join(mnt, 'target'), 'utf8'), 'old')
      } finally {
        spawnSync('umount', [mnt])
      }
    })

    it('readers of the target see the old or the new bytes, never a mix or a truncation', async function () {
      if (windows) skipBecause(this, REASONS.renameOverOpen)
      this.timeout(60000)
      const A = 'A'.repeat(100000)
      const B = 'B'.repeat(70000) + '\u{1F600}'
      w.writeTextSync(['t'], A)
      // Another process reads the target continuously through its own authority.
      const reader = spawn(process.execPath, ['-e', `
        const fa = require(${JSON.stringify(require.resolve('../../lib/file-authority.js'))})
        const r = fa.openReadAuthoritySync(${JSON.stringify(s.root)})
        const A = 'A'.repeat(100000), B = 'B'.repeat(70000) + '\\u{1F600}'
        let n = 0, bad = 0, changed = 0; process.stdout.write('go\\n')
        const end = () => { process.stdout.write(JSON.stringify({ n, bad, changed }) + '\\n'); process.exit(0) }
        process.stdin.on('data', end)
        ;(function loop () {
          for (let i = 0; i < 200; i++) {
            // A replace that unlinks the file being read changes its ctime: the read is
            // then FILE_CHANGED (a refusal to retry), never a mix.
            let t
            try { t = Buffer.from(r.readBytesSync(['t'], { maxBytes: 1 << 20 })).toString() } catch (e) {
              if (e.code !== 'FILE_CHANGED') throw e
              changed++; continue
            }
            n++; if (t !== A && t !== B) bad++
          }
          setImmediate(loop)
        })()`], { stdio: ['pipe', 'pipe', 'inherit'] })
      let out = ''
      reader.stdout.on('data', (d) => { out += d })
      await new Promise((resolve) => reader.stdout.once('data', resolve))
      for (let i = 0; i < 120; i++) {
        if (i % 2) await w.writeText(['t'], i % 4 === 1 ? B : A)
        else w.writeTextSync(['t'], i % 4 === 0 ? B : A)
      }
      reader.stdin.write('stop\n')
      await new Promise((resolve) => reader.on('exit', resolve))
      const result = JSON.parse(out.trim().split('\n').pop())
      assert.ok(result.n > 0)
      assert.strictEqual(result.bad, 0)
      assert.deepStrictEqual(tempFiles(s.root), [])
    })

    it('the committed name is re-checked: a concurrent replacement is FILE_CHANGED, never a false success', async function () {
      this.timeout(60000)
      // Another process keeps renaming its own files over the target (on Windows its rename
      // is refused while the writer holds the target, and it goes on). A write either
      // commits (and its bytes were at the name at the check) or reports FILE_CHANGED.
      const clobber = spawn(process.execPath, ['-e', `
        const fs = require('fs'); const p = require('path'); const root = ${JSON.stringify(s.root)}
        process.stdout.write('go\\n')
        for (let i = 0; ; i++) { const t = p.join(root, 'c' + (i % 4)); fs.writeFileSync(t, 'other'); try { fs.renameSync(t, p.join(root, 'target')) } catch {} }`],
      { stdio: ['ignore', 'pipe', 'inherit'] })
      await new Promise((resolve) => clobber.stdout.once('data', resolve))
      const seen = { ok: 0, FILE_CHANGED: 0 }
      try {
        for (let i = 0; i < 300; i++) {
          try {
            w.writeTextSync(['target'], 'mine')
            seen.ok++
          } catch (err) {
            if (windows && err.code === 'HOST_IO' && ['EACCES', 'EBUSY', 'EPERM'].includes(err.hostCode)) {
              // Windows refuses a rename over a name another process is renaming or
              // holds open (classic rename semantics, docs/platforms.md): a refusal, not
              // a false success.
              seen.refused = (seen.refused || 0) + 1
              continue
            }
            assert.strictEqual(err.code, 'FILE_CHANGED', String(err))
            seen.FILE_CHANGED++
          }
        }
      } finally {
        clobber.kill('SIGKILL')
        await new Promise((resolve) => clobber.on('exit', resolve))
      }
      assert.strictEqual(seen.ok + seen.FILE_CHANGED + (seen.refused || 0), 300)
      if (process.env.AGENT_OS_TEST_VERBOSE) console.log('      outcomes', seen)
      assert.deepStrictEqual(tempFiles(s.root), [])
    })
  })
}
