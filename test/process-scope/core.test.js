'use strict'
// Builds test/process-scope/core.c against the process-scope C core alone
// (src/process/scope_linux.c, no Node-API) and runs it: the cgroup signal pass never
// reaps a process (a scope's command is Node's own child, reaped by libuv only).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..', '..')

describe('process scope: C core alone', function () {
  before(function () {
    if (process.platform !== 'linux' || spawnSync('cc', ['--version']).status !== 0) this.skip()
    if (!fs.existsSync('/proc/self/cgroup')) this.skip() // the no-proc run of the suite
  })

  it('the cgroup signal pass meets an exited, unreaped child of this process: it neither signals nor reaps it', function () {
    this.timeout(60000)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-scope-core-'))
    try {
      const exe = path.join(dir, 'core')
      execFileSync('cc', ['-std=c11', '-Wall', '-Wextra', '-Werror', '-D_GNU_SOURCE', '-I', path.join(root, 'src'),
        path.join(__dirname, 'core.c'), path.join(root, 'src/process/scope_linux.c'), '-o', exe])
      const list = path.join(dir, 'list')
      fs.mkdirSync(list)
      const out = execFileSync(exe, [list], { encoding: 'utf8' })
      if (out.startsWith('skip:')) this.skip()
      assert.equal(out, 'ok\n')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a plain subreaper\'s walk never signals a listed pid that was reaped and given to a stranger before its pidfd was taken', function () {
    this.timeout(60000)
    if (process.getuid() !== 0 || spawnSync('unshare', ['--version']).status !== 0) this.skip() // ns_last_pid: root, in a pid namespace
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-scope-reuse-'))
    try {
      const exe = path.join(dir, 'reuse')
      execFileSync('cc', ['-std=c11', '-Wall', '-Wextra', '-Werror', '-D_GNU_SOURCE', '-I', path.join(root, 'src'),
        path.join(__dirname, 'reuse.c'), path.join(root, 'src/process/scope_linux.c'), '-o', exe])
      const out = execFileSync('unshare', ['--pid', '--fork', '--mount-proc', exe], { encoding: 'utf8' })
      if (out.startsWith('skip:')) {
        this.test.title += ` [skipped: ${out.slice(6).trim()}]`
        this.skip()
      }
      assert.equal(out, 'ok\n')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
