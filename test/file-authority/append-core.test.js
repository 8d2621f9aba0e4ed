'use strict'
// The file-authority append and listing cores alone (no Node-API):
// test/file-authority/native/append_test.c built against the POSIX core files with the
// host's C compiler and run, under both resolvers: the append options and refusals
// (a FIFO with a reader waiting is never opened, set-id bits cleared, a symlink's
// target untouched), list with stats against stat, contiguity of concurrent appends
// (8 processes, and 8 threads of one process, each appending records of random sizes up
// to 64 KiB: every record whole and exactly once), appenders killed with SIGKILL
// (whole records and at most a prefix of the last call), and a target exchanged with a
// symlink to outside and with a FIFO while it is appended to.
//
// Sizes: AOS_APPEND_STRESS_N appends per writer (200 here; `npm run test:stress` runs
// test/stress/append.stress.js at 2 000), AOS_APPEND_KILLS kill rounds (20),
// AOS_APPEND_SWAP_N appends under the swapper (20 000).
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..', '..')
const SRC = path.join(ROOT, 'src')
const FA = path.join(SRC, 'file_authority')
const DRIVER = path.join(__dirname, 'native', 'append_test.c')
const CORE = ['posix_append.c', 'posix_list.c', 'posix_stat.c', 'posix_parent.c', 'posix_walk.c', 'posix_read.c',
  'posix_fdcache.c', 'posix_beneath.c', 'posix_settle.c', 'posix_mgtime.c', 'segments.c', 'read.c', 'version.c'].map((f) => path.join(FA, f))
const STRESS_N = Number(process.env.AOS_APPEND_STRESS_N || 200)
const KILLS = Number(process.env.AOS_APPEND_KILLS || 20)
const SWAP_N = Number(process.env.AOS_APPEND_SWAP_N || 20000)

function hostCompiler () {
  for (const cc of [process.env.CC, 'cc', 'gcc', 'clang']) {
    if (cc && spawnSync(cc, ['--version'], { stdio: 'ignore' }).status === 0) return cc
  }
  return undefined
}

/** Builds the driver into `dir`: `checked` with ASan + UBSan (the option checks), else
 * optimised (the stress runs, where the sanitizers' cost would hide the races). */
function build (cc, dir, checked) {
  const exe = path.join(dir, checked ? 'append_test_checked' : 'append_test')
  const defines = process.platform === 'linux' ? ['-D_GNU_SOURCE'] : process.platform === 'darwin' ? ['-D_DARWIN_C_SOURCE'] : []
  const sanitize = checked && process.platform === 'linux' ? ['-g', '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined'] : ['-O2']
  const built = spawnSync(cc, ['-std=c11', '-Wall', '-Wextra', '-Werror', '-pthread', '-I', SRC, ...defines, ...sanitize,
    '-o', exe, DRIVER, ...CORE], { encoding: 'utf8' })
  assert.equal(built.status, 0, built.stderr)
  return exe
}

function runDriver (exe, dir, args, env = {}) {
  const work = fs.mkdtempSync(path.join(dir, 'w-'))
  try {
    return spawnSync(exe, [work, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 600000 })
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
    fs.rmSync(`${work}.outside`, { force: true })
  }
}

describe('file-authority: the append and listing cores alone (C)', function () {
  this.timeout(600000)
  let dir, checked, fast
  before(function () {
    if (process.platform === 'win32') this.skip()
    const cc = hostCompiler()
    if (cc === undefined) this.skip()
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-append-core-'))
    checked = build(cc, dir, true)
    fast = build(cc, dir, false)
  })
  after(function () { if (dir) fs.rmSync(dir, { recursive: true, force: true }) })

  for (const resolver of ['openat2', 'portable']) {
    const env = { APPEND_TEST_RESOLVER: resolver }
    it(`append: options, refusals, nothing followed or opened but a regular file (${resolver} resolver)`, function () {
      const r = runDriver(checked, dir, ['checks'], env)
      assert.equal(r.status, 0, r.stdout + r.stderr)
      assert.match(r.stdout, /^0 failure\(s\)$/m)
    })

    it(`list with stats: each entry's stat is stat's (${resolver} resolver)`, function () {
      const r = runDriver(checked, dir, ['list'], env)
      assert.equal(r.status, 0, r.stdout + r.stderr)
    })

    it(`append: a target exchanged with a symlink to outside and a FIFO is never followed or written into (${resolver} resolver)`, function () {
      if (process.platform !== 'linux') this.skip() // the swapper uses renameat2(RENAME_EXCHANGE)
      const r = runDriver(fast, dir, ['swap', String(SWAP_N)], env)
      console.log(`      ${/^appends .*$/m.exec(r.stdout)}; ${/^outside changed.*$/m.exec(r.stdout)}`)
      assert.equal(r.status, 0, r.stdout + r.stderr)
    })
  }

  it(`append: 8 processes x ${STRESS_N} appends of 1 B ... 64 KiB, every record whole and exactly once`, function () {
    const r = runDriver(fast, dir, ['stress', '8', '1', String(STRESS_N), '65536'])
    console.log(`      ${/^records .*$/m.exec(r.stdout)}`)
    assert.equal(r.status, 0, r.stdout + r.stderr)
  })

  it(`append: 8 threads of one process x ${STRESS_N} appends, every record whole and exactly once`, function () {
    const r = runDriver(fast, dir, ['stress', '1', '8', String(STRESS_N), '65536'])
    console.log(`      ${/^records .*$/m.exec(r.stdout)}`)
    assert.equal(r.status, 0, r.stdout + r.stderr)
  })

  it(`append: an appender killed with SIGKILL (${KILLS} times) leaves whole records and at most a prefix of its last call`, function () {
    const r = runDriver(fast, dir, ['kill', String(KILLS)])
    console.log(`      ${/^kills .*$/m.exec(r.stdout)}`)
    assert.equal(r.status, 0, r.stdout + r.stderr)
  })
})
