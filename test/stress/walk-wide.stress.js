'use strict'
// The walk's budget at full size (issue 25's "Low" finding, issue 26): one directory of
// 300 000 files walked with maxEntries 1, in the C core alone
// (test/file-authority/native/walk_test.c, in a child whose peak resident set is read)
// and through walkSync in a fresh node process; both list the smallest name, are
// truncated, and keep the resident set's growth under 2 MiB (the names are looked at
// one by one, never all kept). 50 000 with AGENT_OS_STRESS=ci; npm test runs 50 000 in
// the C core (test/file-authority/walk-core.test.js).
//
// Figures: `figure: walk-wide-core names=... ms=... peak_kib=...` and
// `figure: walk-wide-js names=... ms=... rss_over_baseline_kib=...`.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { size, figure } = require('./helpers.js')

const N = size(300000, 50000)
const FA = path.join(__dirname, '..', '..', 'src', 'file_authority')
const SRC = path.join(__dirname, '..', '..', 'src')
const DRIVER = path.join(__dirname, '..', 'file-authority', 'native', 'walk_test.c')
const CORE = ['tree.c', 'posix_tree.c', 'posix_stat.c', 'posix_parent.c', 'posix_walk.c', 'posix_read.c', 'posix_fdcache.c', 'posix_beneath.c', 'posix_settle.c', 'posix_mgtime.c',
  'segments.c', 'read.c', 'version.c'].map((f) => path.join(FA, f))

describe('stress: a walk with maxEntries 1 over one wide directory', function () {
  this.timeout(0)
  let dir
  before(function () {
    if (process.platform !== 'linux' || spawnSync('cc', ['--version']).status !== 0) this.skip()
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-walk-wide-'))
  })
  after(function () { if (dir) fs.rmSync(dir, { recursive: true, force: true }) })

  it(`${N} names: the C core lists the smallest in bounded memory, and so does walkSync`, function () {
    const exe = path.join(dir, 'walk_test')
    const built = spawnSync('cc', ['-std=c11', '-O2', '-Wall', '-Wextra', '-Werror', '-pthread', '-D_GNU_SOURCE', '-I', SRC, '-o', exe, DRIVER, ...CORE], { encoding: 'utf8' })
    assert.equal(built.status, 0, built.stderr)
    const work = path.join(dir, 'w')
    fs.mkdirSync(work)
    // The C driver makes the directory (work/wide), then walks it in a child.
    const r = spawnSync(exe, [work, 'wide', String(N), '1'], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stdout + r.stderr)
    const m = /^wide (\d+) entries (\d+) truncated (\d) first (\S+) ms ([\d.]+) peak-kib (-?\d+)$/m.exec(r.stdout)
    figure('walk-wide-core', { names: N, ms: m[5], peak_kib: m[6] })
    assert.deepEqual([m[2], m[3], m[4]], ['1', '1', 'f0000000'])
    assert.ok(Number(m[6]) < 2048)

    const script = `
      const fa = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'file-authority.js'))})
      const r = fa.openReadAuthoritySync(process.argv[1])
      const before = process.resourceUsage().maxRSS
      const t0 = process.hrtime.bigint()
      const l = r.walkSync(['wide'], { maxEntries: 1 })
      const ms = Number(process.hrtime.bigint() - t0) / 1e6
      console.log(JSON.stringify({ ms, count: l.length, truncated: l.truncated, first: l[0].path[0], grew: process.resourceUsage().maxRSS - before }))`
    const js = spawnSync(process.execPath, ['-e', script, work], { encoding: 'utf8' })
    assert.equal(js.status, 0, js.stderr)
    const got = JSON.parse(js.stdout)
    figure('walk-wide-js', { names: N, ms: got.ms.toFixed(1), rss_over_baseline_kib: got.grew })
    assert.deepEqual([got.count, got.truncated, got.first], [1, true, 'f0000000'])
    assert.ok(got.grew < 2048, `the resident set grew by ${got.grew} KiB`)
  })
})
