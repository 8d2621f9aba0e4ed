'use strict'
// Builds test/file-authority/native/read_core.c against the file-authority C core alone
// (no Node-API) and runs it: aos_fa_read_range and the read's version, both resolvers,
// with and without the descriptors a reader keeps, and what it keeps when.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..', '..')
const CORE = ['segments.c', 'version.c', 'read.c', 'posix_walk.c', 'posix_read.c', 'posix_fdcache.c', 'posix_beneath.c', 'posix_settle.c']
  .map((f) => path.join(root, 'src', 'file_authority', f))

describe('file-authority: read core alone (C)', function () {
  before(function () {
    if (process.platform !== 'linux' || spawnSync('cc', ['--version']).status !== 0) this.skip()
  })

  it('reads ranges and versions, refuses what a read refuses (both resolvers; descriptors kept or not); keeps only what it may', function () {
    this.timeout(60000)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-readcore-'))
    try {
      const exe = path.join(dir, 'read_core')
      execFileSync('cc', ['-std=c11', '-Wall', '-Wextra', '-Werror', '-D_GNU_SOURCE', '-g',
        '-pthread', '-fsanitize=address,undefined', '-fno-sanitize-recover=undefined', '-I', path.join(root, 'src'),
        // Files changed within this long are read twice and never kept: 100 ms instead
        // of a second, so that the checks of what is kept run in seconds.
        '-DAOS_FA__RACY_NS=100000000LL',
        path.join(__dirname, 'native', 'read_core.c'), ...CORE, '-o', exe])
      fs.mkdirSync(path.join(dir, 'trees'))
      assert.equal(execFileSync(exe, [path.join(dir, 'trees')],
        { encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } }), 'ok\n')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
