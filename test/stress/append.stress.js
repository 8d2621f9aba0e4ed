'use strict'
// Append stress (contract 0.3, issue 26) at full size: 8 processes x 2 000 appends of
// 1 B ... 64 KiB (sync, async, text; one writer with fs.appendFileSync), one process
// with 3 worker threads, and 100 appenders killed with SIGKILL; every record whole and
// exactly once, a killed appender's file whole records then at most a prefix of its
// last call. Also the C core alone (test/file-authority/native/append_test.c) at the
// same size. Reduced sizes with AGENT_OS_STRESS=ci; npm test runs 200 appends and 10
// kills (test/file-authority/append.test.js, append-core.test.js).
//
// Figures: `figure: append-<case> records=... whole=... lost=... duplicated=... torn=...`
// and `figure: append-kill kills=... whole=... tails=... bad=...`.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { size, figure } = require('./helpers.js')
const R = require('../helpers/append-records.js')

const N = size(2000, 400)
const KILLS = size(100, 20)
const FA = path.join(__dirname, '..', '..', 'src', 'file_authority')
const SRC = path.join(__dirname, '..', '..', 'src')
const DRIVER = path.join(__dirname, '..', 'file-authority', 'native', 'append_test.c')
const CORE = ['posix_append.c', 'posix_list.c', 'posix_stat.c', 'posix_parent.c', 'posix_walk.c', 'posix_read.c',
  'posix_fdcache.c', 'posix_beneath.c', 'posix_settle.c', 'posix_mgtime.c', 'segments.c', 'read.c', 'version.c'].map((f) => path.join(FA, f))

describe('stress: appends', function () {
  this.timeout(0)
  let dir
  beforeEach(function () { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-append-stress-')) })
  afterEach(function () { fs.rmSync(dir, { recursive: true, force: true }) })

  const check = (name, r) => {
    figure(`append-${name}`, { records: r.records, whole: r.whole, lost: r.lost, duplicated: r.duplicated, torn: r.torn, mib: (r.bytes / 1048576).toFixed(0), ms: r.ms })
    assert.deepEqual([r.whole, r.lost, r.duplicated, r.torn], [r.records, 0, 0, 0])
  }

  it(`8 processes x ${N} appends of 1 B ... 64 KiB: every record whole and exactly once`, async function () {
    const forms = ['sync', 'async', 'mixed', 'sync', 'async', 'mixed', 'sync', 'foreign']
    check('processes', await R.stress(dir, forms.map((form, i) => [i * 16, form]), N))
  })

  it(`one process and 3 worker threads x ${N} appends: every record whole and exactly once`, async function () {
    check('threads', await R.stress(dir, [[0, 'mixed', { WORKERS: '3' }]], N))
  })

  it(`${KILLS} appenders killed with SIGKILL: whole records, then at most a prefix of the last call`, async function () {
    const r = await R.killRounds(dir, KILLS)
    figure('append-kill', { kills: KILLS, ...r })
    assert.equal(r.bad, 0)
  })

  it(`the C core alone: 8 processes x ${N} appends, and ${KILLS} kills`, function () {
    if (process.platform === 'win32' || spawnSync('cc', ['--version']).status !== 0) this.skip()
    const exe = path.join(dir, 'append_test')
    const defines = process.platform === 'linux' ? ['-D_GNU_SOURCE'] : ['-D_DARWIN_C_SOURCE']
    const built = spawnSync('cc', ['-std=c11', '-O2', '-Wall', '-Wextra', '-Werror', '-pthread', '-I', SRC, ...defines, '-o', exe, DRIVER, ...CORE], { encoding: 'utf8' })
    assert.equal(built.status, 0, built.stderr)
    for (const args of [['stress', '8', '1', String(N), '65536'], ['kill', String(KILLS)]]) {
      const work = fs.mkdtempSync(path.join(dir, 'w-'))
      const r = spawnSync(exe, [work, ...args], { encoding: 'utf8' })
      const m = /^(records|kills) .*$/m.exec(r.stdout)
      figure(`append-core-${args[0]}`, Object.fromEntries(m[0].split(' ').reduce((a, v, i, all) => (i % 2 === 0 ? [...a, [v, all[i + 1]]] : a), [])))
      assert.equal(r.status, 0, r.stdout + r.stderr)
      fs.rmSync(work, { recursive: true, force: true })
    }
  })
})
