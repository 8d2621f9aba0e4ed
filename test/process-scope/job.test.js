'use strict'
// Process scopes on Windows, the `job` backend (a kill-on-close Job Object; each command
// runs under agent_os_scope_helper.exe, which enters the job before it starts the
// command). Run under wine by `node scripts/platforms/test.js win32-x64`; wine 8
// implements what these tests use (named jobs, a process entering a job, children
// created inside their parent's job, the process list, the accounting counters,
// TerminateJobObject, kill-on-close). Survivors are found by pid files every process
// started writes (test/process-scope/helpers.js), never by a list the scope keeps.
// On other hosts only the checks that the backend is refused there run.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const h = require('./helpers.js')
const { windows } = require('../helpers/platform.js')

const node = process.execPath

describe('process scope, job backend (Windows)', function () {
  // Bounds a failure only. Under wine a Node process takes about 2 s to start on an
  // idle machine, and up to 16 s measured with three at once under load 20 on 2 cores.
  this.timeout(300000)
  const WAIT_MS = 120000
  let mod
  let scope
  let marks

  before(function () {
    if (!windows) {
      this.test.parent.title += ' [skipped: Windows only (Job Objects)]'
      this.skip()
    }
    mod = h.loadWithBackend('job')
    if (mod.findHelper() === null) {
      this.test.parent.title += ' [skipped: agent_os_scope_helper.exe was not built]'
      this.skip()
    }
  })

  beforeEach(async function () {
    marks = h.newMarkDir()
    scope = await mod.openProcessScope()
    assert.equal(scope.backend, 'job')
  })

  afterEach(async function () {
    if (scope !== undefined) await scope.close()
    const left = h.aliveMarked(marks.dir)
    for (const pid of left) try { process.kill(pid) } catch {}
    fs.rmSync(marks.dir, { recursive: true, force: true })
    assert.deepEqual(left, [], 'a marked process outlived close()')
  })

  /** `n` processes marked in this test, waited for. */
  async function markedCount (n) {
    return h.waitFor(() => h.markedPids(marks.dir).length >= n && h.markedPids(marks.dir), WAIT_MS)
  }

  it('a background job left by a shell (cmd start /b) that exited normally is in the scope, and gone when kill settles', async function () {
    const line = `start /b "" "${node}" "${marks.script}" & exit 0`
    const child = scope.spawn(line, [], { shell: true, stdio: 'ignore' })
    assert.deepEqual(await h.exited(child), [0, null])
    const jobs = await markedCount(1)
    assert.ok(jobs, 'the background job runs after its shell exited')
    assert.ok(h.isAlive(jobs[0]))
    assert.ok(await h.waitFor(() => scope.pids().includes(jobs[0]), WAIT_MS), 'pids() lists the background job')
    assert.ok(!scope.pids().includes(child.pid), 'pids() leaves the helper out')
    await scope.kill({ graceMs: 2000 })
    assert.deepEqual(h.aliveMarked(marks.dir), [])
    assert.deepEqual(scope.pids(), [])
  })

  it('a detached grandchild (its own process group, no console) whose parent exited is gone when kill settles', async function () {
    const child = scope.spawn(node, [marks.script, 'spawn-detached'], { stdio: 'ignore' })
    assert.deepEqual(await h.exited(child), [0, null])
    const grandchild = Number(await h.waitFor(() => {
      try {
        return fs.readFileSync(path.join(marks.dir, 'grandchild'), 'latin1')
      } catch {
        return ''
      }
    }, WAIT_MS))
    assert.ok(await h.waitFor(() => h.markedPids(marks.dir).includes(grandchild), WAIT_MS), 'the grandchild runs')
    assert.ok(h.isAlive(grandchild), 'the grandchild outlived its parent')
    await scope.kill()
    assert.deepEqual(h.aliveMarked(marks.dir), [])
  })

  it('a process that ignores every console event is ended at once: Windows has no grace period (graceMs is not waited)', async function () {
    scope.spawn(node, [marks.script], { stdio: 'ignore' })
    assert.ok(await markedCount(1))
    const t0 = performance.now()
    await scope.kill({ signal: 'SIGTERM', graceMs: 600000 })
    // Ten minutes of grace would fail the test's own timeout: not waiting is the point.
    assert.ok(performance.now() - t0 < 60000)
    assert.deepEqual(h.aliveMarked(marks.dir), [])
  })

  it('a process tree still starting processes when kill starts is gone when kill settles', async function () {
    // The root starts detached marked processes, bounded to 40, one every 50 ms.
    const root = `const cp = require('node:child_process'); let i = 0
      const t = setInterval(() => { cp.spawn(process.execPath, [${JSON.stringify(marks.script)}], { detached: true, stdio: 'ignore' }).unref(); if (++i === 40) clearInterval(t) }, 50)`
    scope.spawn(node, ['-e', root], { stdio: 'ignore' })
    assert.ok(await markedCount(3), 'the tree started')
    await scope.kill({ graceMs: 50 })
    assert.deepEqual(h.aliveMarked(marks.dir), [])
    await h.sleep(5000) // time for a survivor, if any, to mark itself
    assert.deepEqual(h.aliveMarked(marks.dir), [], 'a process started around the kill survived it')
  })

  it('stdio bytes pass through the helper unchanged, both ways, and the exit code is the command\'s', async function () {
    const bytes = Buffer.alloc(256 * 1024)
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) & 0xff
    const child = scope.spawn(node, ['-e', 'process.stdin.pipe(process.stdout); process.stdin.on("end", () => { process.stderr.write(Buffer.from([0x65, 0, 0x72, 0x72])); process.exitCode = 7 })'])
    const out = []
    const err = []
    child.stdout.on('data', (d) => out.push(d))
    child.stderr.on('data', (d) => err.push(d))
    child.stdin.end(bytes)
    const closed = new Promise((resolve) => child.once('close', (code, sig) => resolve([code, sig])))
    assert.deepEqual(await closed, [7, null])
    assert.ok(Buffer.concat(out).equals(bytes), `stdout: ${Buffer.concat(out).length} bytes`)
    assert.deepEqual(Buffer.concat(err), Buffer.from('e\0rr', 'latin1'))
    assert.equal(child.stdio.length, 3)
    assert.deepEqual(await h.exited(scope.spawn(node, ['-e', 'process.exit(255)'], { stdio: 'ignore' })), [255, null])
    assert.deepEqual(await h.exited(scope.spawn(node, ['-e', 'process.exit(1234)'], { stdio: 'ignore' })), [1234, null])
  })

  it('arguments, cwd and env reach the command exactly as child_process.spawn passes them', async function () {
    const args = ['plain', 'two words', 'q"uo\\"te\\', '', 'tab\there', 'back\\\\', 'trailing\\', 'ünïcödé', '%PATH%']
    const script = 'process.stdout.write(JSON.stringify([process.argv.slice(1), process.cwd(), process.env.AOS_SCOPE_VALUE]))'
    const opts = { cwd: marks.dir, env: { ...process.env, AOS_SCOPE_VALUE: 'v a"l' }, stdio: ['ignore', 'pipe', 'ignore'] }
    const read = async (child) => {
      let out = ''
      child.stdout.on('data', (d) => { out += d })
      await new Promise((resolve) => child.once('close', resolve))
      return JSON.parse(out)
    }
    const plain = await read(spawn(node, ['-e', script, ...args], opts))
    const scoped = await read(scope.spawn(node, ['-e', script, ...args], opts))
    assert.deepEqual(scoped, plain)
    assert.deepEqual(scoped[0], args)
    // shell: true runs cmd.exe /d /s /c "<line>", as spawn does.
    const viaShell = await read(scope.spawn(`"${node}" -e "${script.replace(/"/g, '\\"')}" a b`, [], { ...opts, shell: true }))
    assert.deepEqual(viaShell[0], ['a', 'b'])
  })

  it('a command that is not found (or a missing cwd) fails as spawn fails: \'error\' ENOENT, no \'exit\', nothing naming the helper', async function () {
    const failure = (child) => new Promise((resolve) => {
      let exited = false
      child.once('exit', () => { exited = true })
      child.once('error', (err) => setTimeout(() => resolve({
        code: err.code, syscall: err.syscall, path: err.path, spawnargs: err.spawnargs, message: err.message, exitCode: child.exitCode, exited
      }), 50))
    })
    const cases = [
      ['no-such-command-aos', ['a']],
      [path.join(marks.dir, 'missing.exe'), []],
      [node, ['-e', '0'], { cwd: path.join(marks.dir, 'no-such-dir') }]
    ]
    for (const [command, args, extra] of cases) {
      const ours = await failure(scope.spawn(command, args, { stdio: 'ignore', ...extra }))
      const theirs = await failure(spawn(command, args, { stdio: 'ignore', ...extra }))
      assert.deepEqual(ours, theirs, command)
      assert.equal(ours.code, 'ENOENT')
      assert.ok(!/agent_os|scope_helper/.test(JSON.stringify(ours)), 'the error names the helper')
    }
  })

  it('ChildProcess.kill ends the helper only; the command stays in the scope until scope.kill', async function () {
    const child = scope.spawn(node, [marks.script], { stdio: 'ignore' })
    const [pid] = await markedCount(1)
    child.kill()
    await h.exited(child)
    assert.ok(h.isAlive(pid), 'the command runs on inside the scope')
    assert.ok(scope.pids().includes(pid))
    await scope.kill()
    assert.deepEqual(h.aliveMarked(marks.dir), [])
  })

  it('several commands share one scope; kill ends them all and the scope can be used again', async function () {
    scope.spawn(node, [marks.script], { stdio: 'ignore' })
    scope.spawn(`start /b "" "${node}" "${marks.script}" & exit 0`, [], { shell: true, stdio: 'ignore' })
    assert.ok(await markedCount(2))
    await scope.kill({ graceMs: 1000 })
    assert.deepEqual(h.aliveMarked(marks.dir), [])
    assert.deepEqual(await h.exited(scope.spawn(node, ['-e', 'process.exit(4)'], { stdio: 'ignore' })), [4, null])
  })

  it('kill settles at once on an empty scope and after close(); spawn on a closed scope is SCOPE_CLOSED', async function () {
    await scope.kill()
    await scope.close()
    assert.equal(scope.closed, true)
    assert.deepEqual(scope.pids(), [])
    await scope.kill()
    await scope.close()
    assert.throws(() => scope.spawn(node), { code: 'SCOPE_CLOSED', operation: 'spawn' })
  })

  it('a scope whose Node process is ended by TerminateProcess (SIGKILL) leaves nothing behind', async function () {
    const script = `
      const { openProcessScope } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'process.js'))})
      openProcessScope().then((scope) => {
        scope.spawn(process.execPath, [${JSON.stringify(marks.script)}, 'spawn-detached'], { stdio: 'ignore' })
        scope.spawn('start /b "" "' + process.execPath + '" "' + ${JSON.stringify(marks.script)} + '" & exit 0', [], { shell: true, stdio: 'ignore' })
        scope.spawn(process.execPath, [${JSON.stringify(marks.script)}], { stdio: 'ignore' })
        fs.writeFileSync(${JSON.stringify(path.join(marks.dir, 'backend'))}, scope.backend)
      })
      const fs = require('node:fs')
      setInterval(() => {}, 1000)`
    const parent = spawn(node, ['-e', script], { stdio: 'ignore', env: { ...process.env, AGENT_OS_PROCESS_SCOPE_BACKEND: 'job' } })
    try {
      // the exited one, its detached grandchild, the background job, the long-lived one
      assert.ok(await h.waitFor(() => h.markedPids(marks.dir).length >= 4, WAIT_MS), `the scope started (${h.markedPids(marks.dir).length} marked)`)
      assert.equal(fs.readFileSync(path.join(marks.dir, 'backend'), 'latin1'), 'job')
      // the first exits after marking: three stay
      assert.ok(await h.waitFor(() => h.aliveMarked(marks.dir).length === 3, WAIT_MS), `${h.aliveMarked(marks.dir).length} running`)
    } finally {
      parent.kill('SIGKILL') // TerminateProcess; also when the checks above failed
      await h.exited(parent)
    }
    const gone = await h.waitFor(() => h.aliveMarked(marks.dir).length === 0, WAIT_MS)
    assert.ok(gone, `left behind: ${h.aliveMarked(marks.dir).length} processes`)
  })
})

describe('process scope, job backend choice', function () {
  it('is Windows only: forced elsewhere it is UNSUPPORTED_BACKEND; a Linux backend forced on Windows is too', async function () {
    if (windows) {
      for (const backend of ['cgroup', 'subreaper']) {
        await assert.rejects(h.loadWithBackend(backend).openProcessScope(), { code: 'UNSUPPORTED_BACKEND', operation: 'openProcessScope', message: /Linux only/ })
      }
      if (h.loadWithBackend('').findHelper() !== null) {
        const scope = await h.loadWithBackend('').openProcessScope()
        assert.equal(scope.backend, 'job', 'the automatic choice on Windows with the helper built')
        await scope.close()
      }
    } else {
      await assert.rejects(h.loadWithBackend('job').openProcessScope(), {
        code: 'UNSUPPORTED_BACKEND',
        operation: 'openProcessScope',
        message: 'openProcessScope failed: UNSUPPORTED_BACKEND: the job backend is Windows only'
      })
    }
  })
})
