'use strict'
// Builds test/process/core.c against the C core alone (no Node-API) and runs it.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..', '..')

describe('process: C core alone', function () {
  before(function () {
    if (process.platform !== 'linux' || spawnSync('cc', ['--version']).status !== 0) this.skip()
    if (require('./helpers.js').NO_PROC) this.skip() // the C core's checks walk /proc
  })

  it('finds, signals and waits for a tree, with pidfds and with the fallback', function () {
    this.timeout(60000)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-core-'))
    try {
      const exe = path.join(dir, 'core')
      execFileSync('cc', ['-std=c11', '-Wall', '-Wextra', '-Werror', '-D_GNU_SOURCE', '-I', path.join(root, 'src'),
        path.join(__dirname, 'core.c'), path.join(root, 'src/process/posix.c'),
        path.join(root, 'src/process/linux.c'), '-o', exe])
      assert.equal(execFileSync(exe, { encoding: 'utf8' }), 'ok\n')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
