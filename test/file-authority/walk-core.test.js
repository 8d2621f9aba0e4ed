'use strict'
// The file-authority walk core alone (no Node-API): test/file-authority/native/walk_test.c
// built against src/file_authority/tree.c and the POSIX host calls, run under both
// resolvers: exclude, the budget and `truncated` (a directory found but not read is not
// visited), the 255-segment limit (omitted, truncated, no longer path), stats; a
// directory of AOS_WALK_WIDE_N files (50 000 here, 300 000 in
// test/stress/walk-wide.stress.js) walked with maxEntries 1 in a child whose peak
// resident set must grow by less than 2 MiB: every name is looked at (any could come
// first), only one kept (the walk before 0.3 grew by 4.6 MiB at 50 000 names, 26 MiB
// at 300 000); and, under strace, a walk with maxEntries 3 over ten directories that
// reads only the two it lists from.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..', '..')
const SRC = path.join(ROOT, 'src')
const FA = path.join(SRC, 'file_authority')
const DRIVER = path.join(__dirname, 'native', 'walk_test.c')
const CORE = ['tree.c', 'posix_tree.c', 'posix_stat.c', 'posix_parent.c', 'posix_walk.c', 'posix_read.c', 'posix_fdcache.c', 'posix_beneath.c', 'posix_settle.c', 'posix_mgtime.c',
  'segments.c', 'read.c', 'version.c'].map((f) => path.join(FA, f))
const WIDE_N = Number(process.env.AOS_WALK_WIDE_N || 50000)

function hostCompiler () {
  for (const cc of [process.env.CC, 'cc', 'gcc', 'clang']) {
    if (cc && spawnSync(cc, ['--version'], { stdio: 'ignore' }).status === 0) return cc
  }
  return undefined
}

function build (cc, dir, checked) {
  const exe = path.join(dir, checked ? 'walk_test_checked' : 'walk_test')
  const defines = process.platform === 'linux' ? ['-D_GNU_SOURCE'] : process.platform === 'darwin' ? ['-D_DARWIN_C_SOURCE'] : []
  const flags = checked && process.platform === 'linux' ? ['-g', '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined'] : ['-O2']
  const built = spawnSync(cc, ['-std=c11', '-Wall', '-Wextra', '-Werror', '-pthread', '-I', SRC, ...defines, ...flags,
    '-o', exe, DRIVER, ...CORE], { encoding: 'utf8' })
  assert.equal(built.status, 0, built.stderr)
  return exe
}

function run (cmd, args, env = {}) {
  return spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 600000 })
}

describe('file-authority: the walk core alone (C)', function () {
  this.timeout(600000)
  let dir, checked, fast
  before(function () {
    if (process.platform === 'win32') this.skip()
    const cc = hostCompiler()
    if (cc === undefined) this.skip()
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-walk-core-'))
    checked = build(cc, dir, true)
    fast = build(cc, dir, false)
  })
  after(function () { if (dir) fs.rmSync(dir, { recursive: true, force: true }) })

  const work = () => fs.mkdtempSync(path.join(dir, 'w-'))

  for (const resolver of ['openat2', 'portable']) {
    it(`exclude, the budget, truncated, the segment limit, stats (${resolver} resolver)`, function () {
      const r = run(checked, [work(), 'checks'], { WALK_TEST_RESOLVER: resolver })
      assert.equal(r.status, 0, r.stdout + r.stderr)
      assert.match(r.stdout, /^0 failure\(s\)$/m)
    })
  }

  it(`maxEntries 1 over a directory of ${WIDE_N} files: every name looked at, one kept`, function () {
    const r = run(fast, [work(), 'wide', String(WIDE_N), '1'])
    assert.equal(r.status, 0, r.stdout + r.stderr)
    const m = /^wide (\d+) entries (\d+) truncated (\d) first (\S+) ms ([\d.]+) peak-kib (-?\d+)$/m.exec(r.stdout)
    assert.ok(m, r.stdout)
    console.log(`      ${m[0]}`)
    assert.equal(m[2], '1')
    assert.equal(m[3], '1')
    assert.equal(m[4], 'f0000000') // the smallest name, wherever the directory holds it
    if (process.platform === 'linux') assert.ok(Number(m[6]) < 2048, `peak resident set grew by ${m[6]} KiB`)
  })

  it('maxEntries 3 over ten directories of two files: only the two directories it lists from are read (strace)', function () {
    if (process.platform !== 'linux' || run('strace', ['-V']).status !== 0) this.skip()
    const trace = path.join(dir, 'budget.trace')
    const r = run('strace', ['-f', '-e', 'trace=getdents64,openat,access', '-o', trace, fast, work(), 'budget'])
    assert.equal(r.status, 0, r.stdout + r.stderr)
    const lines = fs.readFileSync(trace, 'utf8').split('\n')
    const from = lines.findIndex((l) => l.includes('aos-walk-budget-start'))
    const to = lines.findIndex((l) => l.includes('aos-walk-budget-end'))
    const during = lines.slice(from + 1, to)
    const opened = during.filter((l) => /openat\(\d+, "[^"]*", [^)]*O_DIRECTORY/.test(l)).map((l) => /openat\(\d+, "([^"]*)"/.exec(l)[1])
    const read = new Set(during.filter((l) => /getdents64\(\d+/.test(l)).map((l) => /getdents64\((\d+)/.exec(l)[1]))
    assert.deepEqual(opened, ['t', 'a'])
    assert.equal(read.size, 2)
  })
})
