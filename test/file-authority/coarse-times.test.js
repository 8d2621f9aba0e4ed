'use strict'
// Versions and reads where timestamps are coarse (contract 0.3 "Versions and consistent
// reads on every filesystem"; issue 25 findings 2 and 3). Loop-mounted as root (CI runs
// as root): ext2 and ext4 made with 128-byte inodes (1 s timestamps), vfat (2 s), and
// tmpfs (nanoseconds) for comparison; a filesystem this machine cannot make or mount
// is skipped, and the test says why.
//
// - in-place edit: a version taken, the file edited in place with the same size within
//   the same second, then an ifVersion write with the old version: it must not commit
//   (FILE_CHANGED), or versions are refused there (UNSUPPORTED_BACKEND, as
//   docs/security.md lists). Before: 300 of 300 committed over the edit on ext2.
// - ABA: a version taken, then the file replaced twice with the same size (ext2 and ext4
//   hand the freed inode number out again at once): the version after must differ, or be
//   refused; the ifVersion write with the first one must not commit.
// - torn reads: a C writer rewrites a 64 KiB file in place with single pwrites while it
//   is read: no read returns mixed bytes (before: 2 to 6 in 6000 on ext2, all just after
//   a second boundary).
// - pseudo filesystems (procfs): versions are refused.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync, execFileSync } = require('node:child_process')
const fa = require('../../lib/file-authority.js')
const { skipBecause } = require('../helpers/platform.js')

const ROUNDS = Number(process.env.AGENT_OS_COARSE_ROUNDS) || 300
const TORN_READS = Number(process.env.AGENT_OS_COARSE_READS) || 6000
// The flip writer's case is rarer (before its fix: 1 mixed in 60 000 reads on ext2 and
// on ext4 -I 128): more reads.
const FLIP_READS = Number(process.env.AGENT_OS_COARSE_FLIP_READS) || 30000

function ok (cmd, args) {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0
}

const FILESYSTEMS = {
  ext2: { mkfs: ['mkfs.ext2', ['-q', '-F', '-I', '128']], size: 32, coarse: true, pkg: 'e2fsprogs' },
  'ext4 -I 128': { mkfs: ['mkfs.ext4', ['-q', '-F', '-I', '128']], size: 32, coarse: true, pkg: 'e2fsprogs' },
  vfat: { mkfs: ['mkfs.vfat', []], size: 32, coarse: true, type: 'vfat', pkg: 'dosfstools' },
  tmpfs: { tmpfs: true, coarse: false },
  // Fine stamps: ext4 has multigrain stamps on Linux 6.13+ (a version is settled when
  // read, src/file_authority/posix_mgtime.c); an ext2 volume with 256-byte inodes keeps
  // nanoseconds through the ext4 driver but has no multigrain stamps (versions wait a tick).
  ext4: { mkfs: ['mkfs.ext4', ['-q', '-F']], size: 32, coarse: false, pkg: 'e2fsprogs' },
  'ext2 (256-byte inodes)': { mkfs: ['mkfs.ext2', ['-q', '-F', '-I', '256']], size: 32, coarse: false, type: 'ext2', pkg: 'e2fsprogs' }
}

function outcome (fn) {
  try {
    return fn()
  } catch (err) {
    return err
  }
}

describe('file-authority: versions and reads on coarse-timestamp filesystems', function () {
  this.timeout(300000)
  let dir
  const mounts = []
  before(function () {
    if (process.platform !== 'linux') skipBecause(this, 'loop mounts: Linux only')
    if (process.getuid() !== 0) skipBecause(this, 'mounting filesystems needs root (CI runs as root)')
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-coarse-'))
  })
  after(function () {
    for (const m of mounts.splice(0).reverse()) spawnSync('umount', ['-l', m])
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  const ready = new Map()
  /** Mounts the filesystem once; its mount point, or a reason it cannot be had here. */
  function mounted (name) {
    if (ready.has(name)) return ready.get(name)
    const spec = FILESYSTEMS[name]
    const at = path.join(dir, name.replace(/\W+/g, '-'))
    fs.mkdirSync(at)
    let result
    if (spec.tmpfs) {
      const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'agent-os-test', at], { encoding: 'utf8' })
      result = r.status === 0 ? { at } : { why: `cannot mount tmpfs here: ${(r.stderr || '').trim()}` }
    } else if (!ok(spec.mkfs[0], ['-V']) && !fs.existsSync(`/usr/sbin/${spec.mkfs[0]}`) && !fs.existsSync(`/sbin/${spec.mkfs[0]}`)) {
      result = { why: `${spec.mkfs[0]} is missing (Debian package ${spec.pkg})` }
    } else {
      const img = path.join(dir, `${name.replace(/\W+/g, '-')}.img`)
      fs.writeFileSync(img, '')
      fs.truncateSync(img, spec.size * 1024 * 1024)
      const mk = spawnSync(spec.mkfs[0], [...spec.mkfs[1], img], { encoding: 'utf8' })
      if (mk.status !== 0) {
        result = { why: `${spec.mkfs[0]} failed here: ${(mk.stderr || '').trim().split('\n')[0]}` }
      } else {
        const r = spawnSync('mount', [...(spec.type ? ['-t', spec.type] : []), '-o', 'loop', img, at], { encoding: 'utf8' })
        result = r.status === 0 ? { at } : { why: `this kernel cannot loop-mount ${name}: ${(r.stderr || '').trim().split('\n')[0]}` }
      }
    }
    if (result.at) mounts.push(at)
    ready.set(name, result)
    return result
  }

  function rootOn (ctx, name) {
    const m = mounted(name)
    if (m.why) skipBecause(ctx, m.why)
    const root = fs.mkdtempSync(path.join(m.at, 'r-'))
    return root
  }

  for (const name of Object.keys(FILESYSTEMS)) {
    const coarse = FILESYSTEMS[name].coarse
    describe(name, function () {
      it(`in-place same-size edits within one second: ${ROUNDS} rounds, 0 ifVersion writes committed over an edit${coarse ? ' (or versions refused: UNSUPPORTED_BACKEND)' : ''}`, async function () {
        const root = rootOn(this, name)
        const r = fa.openReadAuthoritySync(root)
        const w = fa.openWriteAuthoritySync(root)
        const seen = { refused: 0, changed: 0, lost: 0 }
        try {
          const file = path.join(root, 'f')
          for (let i = 0; i < ROUNDS; i++) {
            fs.writeFileSync(file, 'AAAA')
            const got = outcome(() => r.readVersionedSync(['f'], { maxBytes: 16 }))
            if (got instanceof Error) {
              assert.equal(got.code, 'UNSUPPORTED_BACKEND', String(got))
              assert.ok(coarse, 'versions refused on a filesystem with fine timestamps')
              seen.refused++
              continue
            }
            const fd = fs.openSync(file, 'r+')
            fs.writeSync(fd, 'BBBB', 0, 'utf8', 0) // the same size, in place
            fs.closeSync(fd)
            const x = outcome(() => w.writeTextSync(['f'], 'CCCC', { ifVersion: got.version }))
            if (x === undefined) seen.lost++
            else if (x.code === 'FILE_CHANGED') seen.changed++
            else assert.fail(`unexpected outcome: ${x}`)
          }
        } finally {
          r.closeSync()
          w.closeSync()
        }
        console.log(`      ${name}: ${JSON.stringify(seen)}`)
        assert.equal(seen.lost, 0, `ifVersion committed over an edit it never saw: ${JSON.stringify(seen)}`)
        if (!coarse) assert.equal(seen.refused, 0)
      })

      it(`a file replaced twice with the same size (inode numbers reused): ${ROUNDS} rounds, the version never comes back${coarse ? ' (or is refused)' : ''}`, async function () {
        const root = rootOn(this, name)
        const r = fa.openReadAuthoritySync(root)
        const w = fa.openWriteAuthoritySync(root)
        const seen = { refused: 0, differ: 0, repeated: 0, lost: 0 }
        try {
          w.writeTextSync(['f'], 'v0')
          for (let i = 0; i < ROUNDS; i++) {
            const first = outcome(() => r.statSync(['f']))
            if (first instanceof Error) {
              assert.equal(first.code, 'UNSUPPORTED_BACKEND', String(first))
              assert.ok(coarse, 'versions refused on a filesystem with fine timestamps')
              seen.refused++
              w.writeTextSync(['f'], 'v1')
              continue
            }
            w.writeTextSync(['f'], 'v1')
            w.writeTextSync(['f'], 'v2')
            const again = r.statSync(['f'])
            if (again.version === first.version) seen.repeated++
            else seen.differ++
            const x = outcome(() => w.writeTextSync(['f'], 'v3', { ifVersion: first.version }))
            if (x === undefined) seen.lost++
            else assert.ok(x.code === 'FILE_CHANGED', String(x))
            w.writeTextSync(['f'], 'v0')
          }
        } finally {
          r.closeSync()
          w.closeSync()
        }
        console.log(`      ${name}: ${JSON.stringify(seen)}`)
        assert.equal(seen.repeated, 0, `a version came back: ${JSON.stringify(seen)}`)
        assert.equal(seen.lost, 0, `an ifVersion write committed over another state: ${JSON.stringify(seen)}`)
      })

      for (const [mode, pause, what] of [['pwrite', '100', 'a new letter each time, 100 us apart'], ['flip', '0', 'two letters in turn (A, B, A, ...), back to back']]) {
        const reads = mode === 'flip' ? FLIP_READS : TORN_READS
        it(`single-pwrite in-place rewrites while reading (${what}): ${reads} reads, 0 mixed`, async function () {
          // flip (red team, contract 0.3): a writer holding the file open (no read lease)
          // and alternating two contents could tear two reads one write apart at the same
          // byte: 11 of 198 000 reads mixed on ext4 with 1 s stamps before the read's
          // inotify watch for writes ending between its two reads.
          const root = rootOn(this, name)
          const bin = rewriter()
          if (bin === null) skipBecause(this, 'no C compiler')
          const SIZE = 64 * 1024
          const file = path.join(root, 'f')
          fs.writeFileSync(file, 'A'.repeat(SIZE))
          const r = fa.openReadAuthoritySync(root)
          // pwrite: a pause of 100 us between rewrites, so reads find the file at rest too.
          const child = spawn(bin, [mode, file, String(SIZE), '4096', pause], { stdio: ['ignore', 'pipe', 'inherit'] })
          const seen = { whole: 0, mixed: 0, changed: 0 }
          try {
            await new Promise((resolve, reject) => {
              child.stdout.once('data', resolve)
              child.once('exit', (c) => reject(new Error(`rewriter exited ${c}`)))
            })
            for (let i = 0; i < reads; i++) {
              const v = outcome(() => r.readBytesSync(['f'], { maxBytes: SIZE }))
              if (v instanceof Error) {
                assert.equal(v.code, 'FILE_CHANGED', String(v))
                seen.changed++
                continue
              }
              const b = Buffer.from(v.buffer, v.byteOffset, v.byteLength)
              if (b.length === SIZE && b.every((c) => c === b[0])) seen.whole++
              else seen.mixed++
            }
          } finally {
            child.kill('SIGKILL')
            r.closeSync()
          }
          console.log(`      ${name}, ${mode}: ${JSON.stringify(seen)}`)
          assert.equal(seen.mixed, 0, 'a read returned bytes of two states')
          if (mode === 'pwrite') assert.ok(seen.whole > 0, JSON.stringify(seen))
        })
      }
    })
  }

  it('procfs (a pseudo filesystem): stat and readVersioned refuse versions (UNSUPPORTED_BACKEND); readRange gives a version that matches nothing', function () {
    if (!fs.existsSync('/proc/self/status')) skipBecause(this, 'no procfs mounted at /proc')
    const r = fa.openReadAuthoritySync('/proc/self')
    try {
      assert.equal(outcome(() => r.statSync(['status'])).code, 'UNSUPPORTED_BACKEND')
      const v = outcome(() => r.readVersionedSync(['status'], { maxBytes: 1 << 20 }))
      assert.ok(v instanceof Error && ['UNSUPPORTED_BACKEND', 'FILE_CHANGED'].includes(v.code), String(v))
    } finally {
      r.closeSync()
    }
  })

  it('ext2: list and walk work; with stats (versions in them) they refuse as stat does (UNSUPPORTED_BACKEND); appends work', function () {
    const root = rootOn(this, 'ext2')
    fs.mkdirSync(path.join(root, 'd'), { recursive: true })
    fs.writeFileSync(path.join(root, 'd', 'f'), 'hello')
    const r = fa.openReadAuthoritySync(root)
    const w = fa.openWriteAuthoritySync(root)
    try {
      assert.deepEqual(r.listSync(['d']).map((e) => e.name), ['f'])
      assert.equal(outcome(() => r.statSync(['d', 'f'])).code, 'UNSUPPORTED_BACKEND')
      assert.equal(outcome(() => r.listSync(['d'], { withStats: true })).code, 'UNSUPPORTED_BACKEND')
      assert.equal(r.walkSync(['d'], { maxEntries: 10 }).length, 1)
      assert.equal(outcome(() => r.walkSync(['d'], { maxEntries: 10, withStats: true })).code, 'UNSUPPORTED_BACKEND')
      w.appendTextSync(['d', 'f'], ' world')
      assert.equal(r.readTextSync(['d', 'f'], { maxBytes: 64 }), 'hello world')
    } finally {
      r.closeSync()
      w.closeSync()
    }
  })

  it('ext2: readRange works and its versions match nothing (each read its own)', function () {
    const root = rootOn(this, 'ext2')
    fs.writeFileSync(path.join(root, 'f'), 'hello')
    const r = fa.openReadAuthoritySync(root)
    const w = fa.openWriteAuthoritySync(root)
    try {
      const a = r.readRangeSync(['f'], { offset: 0, length: 5 })
      const b = r.readRangeSync(['f'], { offset: 0, length: 5 })
      assert.equal(Buffer.from(a.bytes).toString(), 'hello')
      assert.notEqual(a.version, b.version)
      assert.equal(outcome(() => w.writeTextSync(['f'], 'x', { ifVersion: a.version })).code, 'UNSUPPORTED_BACKEND')
      assert.equal(fs.readFileSync(path.join(root, 'f'), 'utf8'), 'hello')
    } finally {
      r.closeSync()
      w.closeSync()
    }
  })
})

let rewriterBin
function rewriter () {
  if (rewriterBin !== undefined) return rewriterBin
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aos-rewriter-')), 'rewriter')
  try {
    execFileSync(process.env.CC || 'cc', ['-std=c11', '-O2', '-D_GNU_SOURCE', '-o', out,
      path.join(__dirname, '..', 'stress', 'native', 'rewriter.c')], { stdio: 'ignore' })
    rewriterBin = out
  } catch {
    rewriterBin = null
  }
  return rewriterBin
}
