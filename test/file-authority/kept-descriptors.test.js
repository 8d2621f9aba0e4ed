'use strict'
// The descriptors a ReadAuthority keeps of files it read (src/file_authority/
// posix_fdcache.c), through the public API, under both resolvers: a later read of the
// same path reads through the kept descriptor only while the look finds that same file
// unchanged; anything else (a permission taken away, the file replaced, removed,
// swapped for a link) is decided as by a first read, and what was kept is let go.
// Counted with /proc/self/fd: Linux only.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { once } = require('node:events')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver } = require('../helpers/fs-layouts.js')
const { keepsFresh } = require('../helpers/stamps.js')

const SLOTS = 4 // AOS_FA_FDCACHE_SLOTS (src/file_authority/fa.h)
const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups']
const { packageCopyForOtherUser } = require('../helpers/other-user.js')

/** This process's descriptors open on `file` (by inode), and those on removed files
 * beneath `dir`. */
function held (file, dir) {
  const ino = fs.existsSync(file) ? fs.statSync(file).ino : -1
  let same = 0
  let removed = 0
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let target
    try {
      target = fs.readlinkSync(`/proc/self/fd/${fd}`)
    } catch {
      continue // the directory's own descriptor, closed by now
    }
    if (dir && target.startsWith(dir) && target.endsWith(' (deleted)')) removed++
    try {
      if (fs.fstatSync(Number(fd)).ino === ino && !target.endsWith(' (deleted)')) same++
    } catch {}
  }
  return { same, removed }
}

function write (file, text) {
  fs.writeFileSync(file, text)
}

const text = (bytes) => Buffer.from(bytes).toString()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// Only a file unchanged for a second is kept (its ctime then cannot be shared by a later
// change, whatever the clock's tick): fixtures are made this long before their test.
const AT_REST_MS = 1100
const TESTS = 10 // the tests below, each on a sandbox of its own

for (const resolver of resolvers()) {
  describe(`file-authority: descriptors a reader keeps (${resolver} resolver)`, function () {
    this.timeout(60000)
    let s, r
    const ready = []
    before(async function () {
      if (process.platform !== 'linux') this.skip() // counted through /proc/self/fd
      for (let i = 0; i < TESTS; i++) {
        const t = makeSandbox('aos-kept-')
        fs.mkdirSync(path.join(t.root, 'd'))
        for (const name of ['f', 'f1', 'f2', 'f3', 'p', 'r']) write(path.join(t.root, 'd', name), 'first')
        fs.chmodSync(path.join(t.root, 'd', 'f'), 0o644)
        for (let n = 0; n < SLOTS + 3; n++) write(path.join(t.root, 'd', `n${n}`), `n${n}`)
        ready.push(t)
      }
      await sleep(AT_REST_MS)
    })
    beforeEach(function () {
      s = ready.shift()
      useResolver(resolver)
      r = fa.openReadAuthoritySync(s.root)
    })
    afterEach(function () {
      if (r && !r.closed) r.closeSync()
      if (s) s.cleanup()
      r = s = undefined
    })
    after(function () {
      for (const t of ready.splice(0)) t.cleanup()
    })

    it('keeps one descriptor per file read, reuses it, and closes it with the authority', function () {
      const f = path.join(s.root, 'd', 'f')
      assert.equal(held(f).same, 0)
      assert.equal(text(r.readBytesSync(['d', 'f'], { maxBytes: 100 })), 'first')
      assert.equal(held(f).same, 1)
      for (let i = 0; i < 20; i++) {
        assert.equal(text(r.readRangeSync(['d', 'f'], { offset: 1, length: 3 }).bytes), 'irs')
        assert.equal(text(r.readVersionedSync(['d', 'f'], { maxBytes: 5 }).bytes), 'first')
      }
      assert.equal(held(f).same, 1)
      r.closeSync()
      assert.equal(held(f).same, 0)
    })

    it('keeps at most ' + SLOTS + ' per authority: the least recently read gives way', function () {
      const files = []
      for (let i = 0; i < SLOTS + 3; i++) files.push(path.join(s.root, 'd', `n${i}`))
      for (let i = 0; i < files.length; i++) {
        assert.equal(text(r.readBytesSync(['d', `n${i}`], { maxBytes: 10 })), `n${i}`)
      }
      const kept = files.map((f) => held(f).same)
      assert.deepEqual(kept, files.map((_, i) => (i >= files.length - SLOTS ? 1 : 0)))
    })

    it('a file written in place since: its new bytes (the ctime moved: opened again), kept again once at rest', async function () {
      const f = path.join(s.root, 'd', 'f')
      r.readBytesSync(['d', 'f'], { maxBytes: 100 })
      assert.equal(held(f).same, 1)
      const before = r.statSync(['d', 'f']).version
      const fd = fs.openSync(f, 'r+')
      fs.writeSync(fd, 'FIRST', 0)
      fs.closeSync(fd)
      const got = r.readVersionedSync(['d', 'f'], { maxBytes: 100 })
      assert.equal(text(got.bytes), 'FIRST')
      assert.notEqual(got.version, before)
      // Changed within the second: kept only where stamps are multigrain.
      assert.equal(held(f).same, keepsFresh(f) ? 1 : 0)
      await sleep(AT_REST_MS)
      assert.equal(text(r.readBytesSync(['d', 'f'], { maxBytes: 100 })), 'FIRST')
      assert.equal(held(f).same, 1)
    })

    it('a file replaced or removed since: the new file, or undefined, and the old one let go', function () {
      const f = path.join(s.root, 'd', 'f')
      r.readBytesSync(['d', 'f'], { maxBytes: 100 })
      write(path.join(s.root, 'd', 'g'), 'second')
      fs.renameSync(path.join(s.root, 'd', 'g'), f)
      assert.equal(held(f, s.root).removed, 1) // the replaced file, until the next read
      assert.equal(text(r.readRangeSync(['d', 'f'], { offset: 0, length: 100 }).bytes), 'second')
      // The new one is recent: kept only where stamps are multigrain.
      assert.deepEqual(held(f, s.root), { same: keepsFresh(f) ? 1 : 0, removed: 0 })
      const gone = path.join(s.root, 'd', 'r')
      r.readBytesSync(['d', 'r'], { maxBytes: 100 })
      assert.equal(held(gone).same, 1)
      fs.unlinkSync(gone)
      assert.equal(held(gone, s.root).removed, 1)
      assert.equal(r.readBytesSync(['d', 'r'], { maxBytes: 100 }), undefined)
      assert.equal(held(gone, s.root).removed, 0)
    })

    it('a link, FIFO or directory swapped in at a kept name is refused as on a first read', function () {
      const aside = path.join(s.root, 'd', 'aside')
      const swaps = [
        ['f1', (at) => fs.symlinkSync('aside', at)],
        ['f2', (at) => spawnSync('mkfifo', [at])],
        ['f3', (at) => fs.mkdirSync(at)]
      ]
      for (const [name, swapIn] of swaps) {
        const at = path.join(s.root, 'd', name)
        assert.equal(text(r.readBytesSync(['d', name], { maxBytes: 100 })), 'first')
        assert.equal(held(at).same, 1)
        fs.renameSync(at, aside)
        swapIn(at)
        assert.throws(() => r.readBytesSync(['d', name], { maxBytes: 100 }), { code: 'UNSAFE_ENTRY' })
        assert.throws(() => r.readRangeSync(['d', name], { offset: 0, length: 5 }), { code: 'UNSAFE_ENTRY' })
        assert.equal(held(aside).same, 0) // the kept descriptor was let go
        fs.rmSync(at, { recursive: true })
        fs.rmSync(aside)
      }
      // The parent swapped for a link to a directory holding the same file.
      assert.equal(text(r.readBytesSync(['d', 'p'], { maxBytes: 100 })), 'first')
      assert.equal(held(path.join(s.root, 'd', 'p')).same, 1)
      fs.renameSync(path.join(s.root, 'd'), path.join(s.root, 'real'))
      fs.symlinkSync('real', path.join(s.root, 'd'))
      assert.throws(() => r.readBytesSync(['d', 'p'], { maxBytes: 100 }), { code: 'UNSAFE_ENTRY', segmentIndex: 0 })
    })

    it('a permission taken away after a read refuses the next read (another user, setpriv)', async function () {
      if (process.getuid() !== 0 || spawnSync('setpriv', [...NOBODY, 'true'], { stdio: 'ignore' }).status !== 0) this.skip()
      fs.chmodSync(s.base, 0o755)
      fs.chmodSync(s.root, 0o755)
      fs.chmodSync(path.join(s.root, 'd'), 0o755)
      const f = path.join(s.root, 'd', 'f') // 0644, at rest
      // The reader, as nobody: reads the file each time it is told to, says what it got.
      const script = `
        const fa = require(${JSON.stringify(path.join(packageCopyForOtherUser(), 'lib', 'file-authority.js'))})
        const r = fa.openReadAuthoritySync(${JSON.stringify(s.root)})
        const rl = require('node:readline').createInterface({ input: process.stdin })
        rl.on('line', (how) => {
          let out
          try {
            const b = how === 'range' ? r.readRangeSync(['d', 'f'], { offset: 0, length: 100 }).bytes
              : r.readBytesSync(['d', 'f'], { maxBytes: 100 })
            out = 'ok ' + Buffer.from(b).toString()
          } catch (e) { out = e.code + ' ' + e.hostCode }
          process.stdout.write(out + '\\n')
        })`
      const child = spawn('setpriv', [...NOBODY, process.execPath, '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
      const lines = []
      let buffered = ''
      child.stdout.on('data', (d) => {
        buffered += d
        let nl
        while ((nl = buffered.indexOf('\n')) >= 0) {
          lines.push(buffered.slice(0, nl))
          buffered = buffered.slice(nl + 1)
        }
      })
      const ask = async (how) => {
        const want = lines.length + 1
        child.stdin.write(how + '\n')
        while (lines.length < want) await new Promise((resolve) => setTimeout(resolve, 5))
        return lines[want - 1]
      }
      try {
        for (const how of ['bytes', 'range']) {
          if (how === 'range') await sleep(AT_REST_MS) // the modes below moved its ctime
          assert.equal(await ask(how), 'ok first')
          assert.equal(await ask(how), 'ok first') // the kept descriptor
          fs.chmodSync(f, 0o600) // owned by root: nobody may not open it now
          assert.match(await ask(how), /^HOST_IO EACCES$/)
          fs.chmodSync(f, 0o644)
          assert.equal(await ask(how), 'ok first')
          fs.chownSync(f, 0, 0)
          fs.chmodSync(path.join(s.root, 'd'), 0o700) // nor look into its directory
          assert.match(await ask(how), /^HOST_IO EACCES$/)
          fs.chmodSync(path.join(s.root, 'd'), 0o755)
        }
      } finally {
        child.stdin.end()
        await once(child, 'exit')
      }
    })

    it('kept descriptors are not inherited by child processes', function () {
      const f = path.join(s.root, 'd', 'f')
      r.readBytesSync(['d', 'f'], { maxBytes: 100 })
      assert.equal(held(f).same, 1)
      const out = spawnSync('sh', ['-c', 'for l in /proc/$$/fd/*; do readlink "$l"; done'], { encoding: 'utf8' }).stdout
      assert.ok(!out.split('\n').includes(f), out)
    })

    it('concurrent reads of one file, sync and async, all get its bytes; what is kept stays bounded', async function () {
      const f = path.join(s.root, 'd', 'f')
      const big = Buffer.alloc(256 * 1024)
      for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 8)) & 0xff
      fs.writeFileSync(f, big)
      await sleep(AT_REST_MS) // at rest: one read each, and kept
      const reads = []
      for (let i = 0; i < 64; i++) {
        const offset = i * 4096
        reads.push(r.readRange(['d', 'f'], { offset, length: 8192 }).then((got) => {
          assert.ok(Buffer.from(got.bytes).equals(big.subarray(offset, offset + 8192)))
        }))
        reads.push(r.readBytes(['d', 'f'], { maxBytes: big.length }).then((got) => assert.ok(Buffer.from(got).equals(big))))
        const sync = r.readRangeSync(['d', 'f'], { offset, length: 65536 })
        assert.ok(Buffer.from(sync.bytes).equals(big.subarray(offset, offset + 65536)))
      }
      await Promise.all(reads)
      assert.equal(held(f).same, 1) // one kept for the path, whichever read gave it back last
    })

    it('a sync slice is a plain Uint8Array holding exactly its bytes, at the end of the file too', function () {
      const f = path.join(s.root, 'd', 'f')
      const big = Buffer.alloc(100000, 'x')
      big.write('tail', big.length - 4)
      fs.writeFileSync(f, big)
      for (const [offset, length, want] of [[0, 65536, 65536], [big.length - 10, 65536, 10], [0, 9000, 9000], [0, 16, 16], [big.length, 20000, 0], [0, 70000, 70000]]) {
        const { bytes, size } = r.readRangeSync(['d', 'f'], { offset, length })
        assert.ok(Buffer.isBuffer(bytes), 'a Buffer (contract 0.3)')
        assert.equal(bytes.length, want)
        assert.equal(bytes.byteOffset, 0)
        assert.equal(bytes.buffer.byteLength, want) // nothing hidden past the bytes
        assert.ok(Buffer.from(bytes).equals(big.subarray(offset, offset + want)))
        assert.equal(size, big.length)
      }
    })

    it('a WriteAuthority keeps nothing, and a collected reader lets go of what it kept', function () {
      const f = path.join(s.root, 'd', 'f')
      const w = fa.openWriteAuthoritySync(s.root)
      w.writeTextSync(['d', 'f'], 'written')
      assert.equal(held(f).same, 0)
      w.closeSync()
      spawnSync('sleep', [String(AT_REST_MS / 1000)]) // the reader below keeps only a file at rest
      const script = `
        const fs = require('node:fs')
        const fa = require(${JSON.stringify(path.join(packageCopyForOtherUser(), 'lib', 'file-authority.js'))})
        const ino = fs.statSync(${JSON.stringify(f)}).ino
        const count = () => fs.readdirSync('/proc/self/fd').filter((fd) => { try { return fs.fstatSync(Number(fd)).ino === ino } catch { return false } }).length
        let r = fa.openReadAuthoritySync(${JSON.stringify(s.root)})
        r.readBytesSync(['d', 'f'], { maxBytes: 100 })
        const kept = count()
        r = undefined
        global.gc()
        setImmediate(() => { global.gc(); setImmediate(() => process.stdout.write(kept + ' ' + count())) })`
      const out = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' })
      assert.equal(out.stdout, '1 0', out.stderr)
    })
  })
}
