'use strict'
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { runExact } = require('../exact-process.js')
const { FileAuthorityError } = require('@scope/agent-os/file-authority')
const { openProcessScope } = require('@scope/agent-os/process')

// Why a test that needs a Linux scope backend (cgroup or subreaper) cannot run here,
// or undefined: elsewhere, or without the helper program the package ships beside its
// binding, scopes fall back to the tree backend, which cannot reach what left the tree.
async function noLinuxScope () {
  if (process.platform !== 'linux') return 'Linux only'
  const scope = await openProcessScope()
  const backend = scope.backend
  await scope.close()
  return backend === 'tree' ? 'the scope backend here is tree (no helper program)' : undefined
}

// Plants a symlink for an attack; where the platform makes none (wine 8 reports
// success and creates nothing: docs/platforms.md), the test skips, naming why.
function plantLink (ctx, target, at) {
  fs.symlinkSync(target, at)
  let linked = false
  try { linked = fs.lstatSync(at).isSymbolicLink() } catch {}
  if (!linked) {
    ctx.test.title += ' [skipped: the symlink was not created (wine 8: CreateSymbolicLinkW reports success and creates nothing); real Windows runs this]'
    ctx.skip()
  }
}

const NODE = process.execPath
const FORKER = path.join(__dirname, 'fixtures', 'forker.js')

// Whether `pid` names a process that has not exited (a zombie has exited). Linux reads
// the state from /proc; elsewhere signal 0 is the best available answer.
function alive (pid) {
  try {
    process.kill(pid, 0)
  } catch (err) {
    if (err.code === 'ESRCH') return false
    throw err
  }
  if (process.platform !== 'linux') return true
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

// Processes still running whose working directory is `dir` (Linux). Every process a
// test starts runs there; a pid a command writes is not enough on Linux, where a
// scope's commands run in a PID namespace of their own and see their pids there.
function runningIn (dir) {
  const real = fs.realpathSync(dir)
  const out = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (fs.readlinkSync(`/proc/${name}/cwd`) !== real) continue
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') out.push(Number(name))
    } catch {}
  }
  return out
}

async function until (predicate) {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 20))
}

describe('examples/exact-process', function () {
  let cwd
  const leftovers = []
  beforeEach(function () {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'exact-process-test-'))
  })
  afterEach(function () {
    // Never leave a stray process behind, whatever a failed assertion left running.
    if (process.platform === 'linux') {
      leftovers.splice(0)
      for (const pid of runningIn(cwd)) process.kill(pid, 'SIGKILL')
    }
    for (const pid of leftovers.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL')
    // Windows: a command that just ended may hold its working directory for a moment.
    fs.rmSync(cwd, { recursive: true, force: true, maxRetries: process.platform === 'win32' ? 20 : 0, retryDelay: 100 })
  })
  // Whether the process that wrote its pid to `file` in the test's directory still
  // runs: on Linux, whether any process the test started still runs there (see
  // runningIn); elsewhere, by that pid.
  const stillRunning = (file) => {
    const pid = Number(fs.readFileSync(path.join(cwd, file), 'utf8'))
    if (process.platform === 'linux') return runningIn(cwd).length > 0
    leftovers.push(pid)
    return alive(pid)
  }

  it('runs the argv exactly, with only the given environment, in the given directory', async function () {
    const script = 'require("fs").writeFileSync("out.json", JSON.stringify({ argv: process.argv.slice(1), env: process.env, cwd: process.cwd() }))'
    const tricky = ['two words', '"quoted"', '$(touch pwned)', '; rm -rf ~', '*', '']
    process.env.EXACT_PROCESS_SHOULD_NOT_LEAK = 'leaked'
    try {
      const result = await runExact({
        argv: [NODE, '-e', script, ...tricky],
        env: { ONLY: 'this' },
        cwd,
        timeoutMs: 20000,
        output: { segments: ['out.json'], maxBytes: 4096 }
      })
      assert.equal(result.reason, 'exited')
      assert.equal(result.exitCode, 0)
      const seen = JSON.parse(Buffer.from(result.output).toString('utf8'))
      assert.deepEqual(seen.argv, tricky)
      // Wine puts variables of its own and of its registry into every process's
      // environment, whatever the parent gave (docs/platforms.md): measured here with an
      // empty environment. Real Windows and POSIX add nothing.
      const added = process.platform === 'win32' && process.env.AGENT_OS_WINE === '1'
        ? JSON.parse(require('node:child_process').spawnSync(NODE, ['-p', 'JSON.stringify(process.env)'], { env: {}, encoding: 'utf8' }).stdout)
        : {}
      assert.deepEqual(seen.env, { ...added, ONLY: 'this' })
      assert.equal(seen.cwd, fs.realpathSync(cwd))
      assert.equal(fs.existsSync(path.join(cwd, 'pwned')), false)
    } finally {
      delete process.env.EXACT_PROCESS_SHOULD_NOT_LEAK
    }
  })

  it('reports an exit code and a signal as they happened', async function () {
    const exited = await runExact({ argv: [NODE, '-e', 'process.exit(3)'], env: {}, cwd, timeoutMs: 20000 })
    assert.deepEqual({ reason: exited.reason, exitCode: exited.exitCode, signal: exited.signal }, { reason: 'exited', exitCode: 3, signal: null })
    const signalled = await runExact({ argv: [NODE, '-e', 'process.kill(process.pid, "SIGKILL")'], env: {}, cwd, timeoutMs: 20000 })
    // Windows has no signals: Node's process.kill there is TerminateProcess with exit
    // code 1, which is what happened.
    const killed = process.platform === 'win32'
      ? { reason: 'exited', exitCode: 1, signal: null }
      : { reason: 'signalled', exitCode: null, signal: 'SIGKILL' }
    assert.deepEqual({ reason: signalled.reason, exitCode: signalled.exitCode, signal: signalled.signal }, killed)
  })

  it('on timeout ends the command and its SIGTERM-ignoring grandchild in another session', async function () {
    const result = await runExact({ argv: [NODE, FORKER], env: {}, cwd, timeoutMs: 2000, graceMs: 200 })
    assert.equal(result.reason, 'timed-out')
    // The grandchild was running before the timeout (it wrote its pid once its SIGTERM
    // handler was in place), and it is gone now that the promise has settled.
    assert.equal(stillRunning('grandchild.pid'), false, 'the grandchild survived')
    assert.equal(alive(result.pid), false)
  })

  it('on abort ends the command and every descendant, and says it was aborted', async function () {
    const controller = new AbortController()
    const running = runExact({ argv: [NODE, FORKER], env: {}, cwd, timeoutMs: 60000, signal: controller.signal, graceMs: 200 })
    await until(() => fs.existsSync(path.join(cwd, 'grandchild.pid')))
    assert.equal(stillRunning('grandchild.pid'), true)
    controller.abort()
    const result = await running
    assert.equal(result.reason, 'aborted')
    // The command itself obeyed SIGTERM; Windows has no signals (it was terminated).
    assert.equal(result.signal, process.platform === 'win32' ? null : 'SIGTERM')
    assert.equal(stillRunning('grandchild.pid'), false, 'the grandchild survived')
  })

  it('on timeout also ends a background job whose shell already exited and a double-forked daemon (Linux scopes)', async function () {
    const why = await noLinuxScope() // the tree backend cannot reach them
    if (why !== undefined) {
      this.test.title += ` [skipped: ${why}]`
      this.skip()
    }
    // The shell exits at once, leaving a background job and a setsid daemon (each
    // records its pid); the command itself (a sleep the shell execs into) times out.
    const script = 'sleep 1000 & echo $! > job.pid; (setsid sh -c \'echo $$ > daemon.pid; exec sleep 1000\' &); exec sleep 1000'
    const result = await runExact({ argv: ['/bin/sh', '-c', script], env: { PATH: process.env.PATH }, cwd, timeoutMs: 1500, graceMs: 200 })
    assert.equal(result.reason, 'timed-out')
    for (const file of ['job.pid', 'daemon.pid']) assert.equal(stillRunning(file), false, `${file}: it survived`)
  })

  it('a background job left by a command that exited normally is ended before the result is returned', async function () {
    const why = await noLinuxScope()
    if (why !== undefined) {
      this.test.title += ` [skipped: ${why}]`
      this.skip()
    }
    const result = await runExact({ argv: ['/bin/sh', '-c', 'sleep 1000 & echo $! > job.pid; exit 0'], env: { PATH: process.env.PATH }, cwd, timeoutMs: 20000 })
    assert.equal(result.reason, 'exited')
    assert.equal(stillRunning('job.pid'), false)
  })

  it('an AbortSignal already aborted starts nothing', async function () {
    const reason = new Error('cancelled')
    await assert.rejects(runExact({ argv: [NODE, '-e', 'require("fs").writeFileSync("ran", "")'], env: {}, cwd, timeoutMs: 20000, signal: AbortSignal.abort(reason) }), (err) => err === reason)
    assert.equal(fs.existsSync(path.join(cwd, 'ran')), false)
  })

  describe('the output file', function () {
    const write = (size) => `require("fs").writeFileSync("out.bin", Buffer.alloc(${size}, 0x61))`

    it('is read when it fits the budget, exactly up to it', async function () {
      const result = await runExact({ argv: [NODE, '-e', write(65536)], env: {}, cwd, timeoutMs: 20000, output: { segments: ['out.bin'], maxBytes: 65536 } })
      assert.equal(result.output.length, 65536)
    })

    it('one byte over the budget fails with OVER_BUDGET', async function () {
      await assert.rejects(
        runExact({ argv: [NODE, '-e', write(65537)], env: {}, cwd, timeoutMs: 20000, output: { segments: ['out.bin'], maxBytes: 65536 } }),
        (err) => err instanceof FileAuthorityError && err.code === 'OVER_BUDGET')
    })

    it('a 1 TiB file fails with OVER_BUDGET before anything is loaded', async function () {
      // Sparse: no disk space used, and far more than memory could ever hold, so only
      // a decision from the size can answer.
      const script = 'const fs = require("fs"); fs.closeSync(fs.openSync("out.bin", "w")); fs.truncateSync("out.bin", 2 ** 40)'
      await assert.rejects(
        runExact({ argv: [NODE, '-e', script], env: {}, cwd, timeoutMs: 20000, output: { segments: ['out.bin'], maxBytes: 1 << 20 } }),
        (err) => err instanceof FileAuthorityError && err.code === 'OVER_BUDGET')
    })

    it('a file the command did not write reads as undefined', async function () {
      const result = await runExact({ argv: [NODE, '-e', ''], env: {}, cwd, timeoutMs: 20000, output: { segments: ['out.bin'], maxBytes: 10 } })
      assert.equal(result.reason, 'exited')
      assert.equal(result.output, undefined)
    })

    it('a symlink the command planted at the output name is refused, not followed', async function () {
      // Whether this host makes symlinks at all (the command below plants its own).
      plantLink(this, 'probe-target', path.join(cwd, 'probe'))
      fs.unlinkSync(path.join(cwd, 'probe'))
      const script = 'require("fs").symlinkSync("/etc/passwd", "out.bin")'
      await assert.rejects(
        runExact({ argv: [NODE, '-e', script], env: {}, cwd, timeoutMs: 20000, output: { segments: ['out.bin'], maxBytes: 1 << 20 } }),
        (err) => err instanceof FileAuthorityError && err.code === 'UNSAFE_ENTRY')
    })

    it('is not read after a timeout', async function () {
      const script = `${write(10)}; setInterval(() => {}, 1000)`
      const result = await runExact({ argv: [NODE, '-e', script], env: {}, cwd, timeoutMs: 1000, graceMs: 100, output: { segments: ['out.bin'], maxBytes: 100 } })
      assert.equal(result.reason, 'timed-out')
      assert.equal(result.output, undefined)
    })
  })

  describe('arguments', function () {
    for (const [name, options] of [
      ['a relative executable (no PATH lookup)', { argv: ['node', '-e', ''] }],
      ['an empty argv', { argv: [] }],
      ['an argument with NUL', { argv: [NODE, 'a\0b'] }],
      ['env with a non-string value', { env: { A: 1 } }],
      ['env with = in a name', { env: { 'A=B': 'x' } }],
      ['a relative cwd', { cwd: 'relative' }],
      ['no timeout', { timeoutMs: undefined }],
      ['a signal that is not an AbortSignal', { signal: {} }]
    ]) {
      it(`refuses ${name} as a rejection (INVALID_OPTION)`, async function () {
        const base = { argv: [NODE, '-e', ''], env: {}, cwd, timeoutMs: 1000 }
        await assert.rejects(runExact({ ...base, ...options }), (err) => err instanceof TypeError && err.code === 'INVALID_OPTION')
      })
    }

    it('an executable that does not exist rejects with ENOENT', async function () {
      await assert.rejects(runExact({ argv: [path.join(cwd, 'missing')], env: {}, cwd, timeoutMs: 1000 }), (err) => err.code === 'ENOENT')
    })
  })
})
