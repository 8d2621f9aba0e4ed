'use strict'
// The C core alone (no Node-API): test/node-lock/native/core_test.c built against
// src/node_lock/posix.c with the host's C compiler and run. With AGENT_OS_WINE=1 and
// mingw-w64 plus wine64 installed, it is also built against src/node_lock/win32.c
// and run under wine.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { once } = require('node:events')
const { tempDir } = require('./helpers.js')

const ROOT = path.join(__dirname, '..', '..')
const SRC = path.join(ROOT, 'src')
const DRIVER = path.join(__dirname, 'native', 'core_test.c')
const FLAGS = ['-std=c11', '-Wall', '-Wextra', '-Werror', '-I', SRC]

function works (cmd, args) {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0
}

function hostCompiler () {
  for (const cc of [process.env.CC, 'cc', 'gcc', 'clang']) {
    if (cc && works(cc, ['--version'])) return cc
  }
  return undefined
}

function run (cmd, args, options) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...options })
  if (r.error) throw r.error
  return r
}

// One process holds (driver `hold`), another probes: refused with the holder's pid;
// after the holder is killed, the probe acquires. `argv(...args)` gives the command
// line running the driver with `args` (directly, or under wine).
async function acrossProcesses (argv, work, env = process.env) {
  const [file, ...args] = argv(work, 'hold')
  const holder = spawn(file, args, { stdio: ['pipe', 'pipe', 'inherit'], env })
  const probe = () => {
    const [f, ...a] = argv(work, 'probe')
    return run(f, a, { env }).stdout.trim()
  }
  try {
    let text = ''
    holder.stdout.setEncoding('utf8')
    const died = once(holder, 'exit').then(() => { throw new Error('holder exited: ' + text) })
    while (!text.includes('\n')) {
      const [chunk] = await Promise.race([once(holder.stdout, 'data'), died])
      text += chunk
    }
    died.catch(() => {})
    const m = /^held (\d+)$/m.exec(text)
    assert.ok(m, text)
    assert.equal(probe(), `held ${m[1]}`, 'refused, naming the holder in the other process')
    const exited = once(holder, 'exit')
    holder.kill('SIGKILL')
    await exited
    assert.equal(probe(), 'acquired', 'released when the holder was killed')
  } finally {
    if (holder.exitCode === null && holder.signalCode === null) holder.kill('SIGKILL')
  }
}

describe('node-lock: the C core alone', function () {
  this.timeout(120000)
  let dir
  beforeEach(function () { dir = tempDir() })
  afterEach(function () { fs.rmSync(dir, { recursive: true, force: true }) })

  it('posix.c passes the core checks, in one process and across processes', async function () {
    if (process.platform === 'win32') this.skip()
    const cc = hostCompiler()
    if (cc === undefined) {
      console.log('      skipped: no C compiler')
      this.skip()
    }
    const exe = path.join(dir, 'core_test')
    const defines = process.platform === 'linux' ? ['-D_GNU_SOURCE'] : process.platform === 'darwin' ? ['-D_DARWIN_C_SOURCE'] : []
    const built = run(cc, [...FLAGS, ...defines, '-o', exe, DRIVER, path.join(SRC, 'node_lock', 'posix.c')])
    assert.equal(built.status, 0, built.stderr)
    const work = path.join(dir, 'work')
    fs.mkdirSync(work)
    const r = run(exe, [work])
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /^0 failure\(s\)$/m)
    await acrossProcesses((...args) => [exe, ...args], work)
  })

  it('win32.c passes the core checks under wine (AGENT_OS_WINE=1), in one process and across processes', async function () {
    const wine = ['/usr/lib/wine/wine64', 'wine64', 'wine'].find((w) => works(w, ['--version']))
    if (process.env.AGENT_OS_WINE !== '1' || process.platform !== 'linux' || wine === undefined ||
        !works('x86_64-w64-mingw32-gcc', ['--version'])) {
      this.skip()
    }
    const exe = path.join(dir, 'core_test.exe')
    const built = run('x86_64-w64-mingw32-gcc', [...FLAGS, '-DUNICODE', '-D_UNICODE', '-o', exe, DRIVER, path.join(SRC, 'node_lock', 'win32.c')])
    assert.equal(built.status, 0, built.stderr)
    const work = path.join(dir, 'work')
    fs.mkdirSync(work)
    const env = { ...process.env, WINEDEBUG: '-all' }
    const r = run(wine, [exe, 'Z:' + work], { env })
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /^0 failure\(s\)$/m)
    await acrossProcesses((...args) => [wine, exe, ...args], 'Z:' + work, env)
  })
})
