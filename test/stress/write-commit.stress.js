'use strict'
// Write-side stress (issue 12 finding 6, issue 15 ifVersion): the write core alone,
// test/file-authority/native/write_test.c, at stress size:
// - an ifVersion counter raced by two processes: no update lost (renameat2, and the
//   fallback, whose writers exclude each other by a lock on the file they replace);
// - the target exchanged with a symlink and a FIFO while it is written: neither ever
//   replaced (renameat2, both resolvers).
// The swaps under the fallback without renameat2 (AGENT_OS_FA_NO_RENAMEAT2=1) are
// measured, not held: its window is stated in docs/security.md.
//
// Figures: counter reached / expected, and writes ok/UNSAFE_ENTRY/FILE_CHANGED/other
// with the symlink and FIFO found afterwards.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { size, figure } = require('./helpers.js')

const FA = path.join(__dirname, '..', '..', 'src', 'file_authority')
const SRC = path.join(__dirname, '..', '..', 'src')
const DRIVER = path.join(__dirname, '..', 'file-authority', 'native', 'write_test.c')
const CORE = ['posix_write.c', 'posix_walk.c', 'posix_read.c', 'posix_fdcache.c', 'posix_beneath.c', 'posix_settle.c', 'segments.c', 'read.c', 'version.c'].map((f) => path.join(FA, f))
const CAS = size(2000, 200)
const SWAPS = size(5000, 500)

describe('stress: write commit (the C core)', function () {
  this.timeout(0)
  let dir, exe
  before(function () {
    if (process.platform !== 'linux') this.skip() // the attacker uses renameat2(RENAME_EXCHANGE)
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-write-stress-'))
    exe = path.join(dir, 'write_test')
    const r = spawnSync(process.env.CC || 'cc', ['-std=c11', '-O2', '-D_GNU_SOURCE', '-Wall', '-pthread', '-I', SRC,
      '-o', exe, DRIVER, ...CORE], { encoding: 'utf8' })
    if (r.status !== 0) {
      process.stderr.write(r.stderr || '')
      this.skip()
    }
  })
  after(function () { if (dir) fs.rmSync(dir, { recursive: true, force: true }) })

  function run (args, env) {
    const work = fs.mkdtempSync(path.join(dir, 'w-'))
    const r = spawnSync(exe, [work, ...args], { encoding: 'utf8', env: { ...process.env, ...env } })
    fs.rmSync(work, { recursive: true, force: true })
    return r
  }

  it(`ifVersion counter, two processes, ${CAS} increments each`, function () {
    for (const [mode, env] of [['renameat2', {}], ['fallback', { AGENT_OS_FA_NO_RENAMEAT2: '1' }]]) {
      const r = run(['cas', String(CAS)], env)
      const m = /^counter (-?\d+) of (\d+)/m.exec(r.stdout)
      assert.ok(m, r.stdout + r.stderr)
      figure(`write-cas-${mode}`, { reached: m[1], expected: m[2], lost: Number(m[2]) - Number(m[1]) })
      assert.equal(r.status, 0, r.stdout + r.stderr) // no update lost, fallback included
    }
  })

  it(`${SWAPS} writes while the target is exchanged with a symlink and a FIFO`, function () {
    for (const resolver of ['openat2', 'portable']) {
      for (const [mode, env] of [['renameat2', {}], ['fallback', { AGENT_OS_FA_NO_RENAMEAT2: '1' }]]) {
        const r = run(['swap', String(SWAPS)], { ...env, WRITE_TEST_RESOLVER: resolver })
        const w = /^writes (\d+)\/(\d+)\/(\d+)\/(\d+)$/m.exec(r.stdout)
        const k = /^symlink kept (\d+) fifo kept (\d+)$/m.exec(r.stdout)
        assert.ok(w && k, r.stdout + r.stderr)
        figure(`write-swap-${resolver}-${mode}`, { ok: w[1], unsafe: w[2], changed: w[3], other: w[4], symlinkKept: k[1], fifoKept: k[2] })
        if (mode === 'renameat2') assert.equal(r.status, 0, r.stdout + r.stderr)
      }
    }
  })
})
