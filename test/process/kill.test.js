'use strict'
// killProcessTree against real process trees. Survivors are checked in /proc by pid
// plus start time, so a recycled pid never counts as a survivor or as dead.

const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { once, EventEmitter } = require('node:events')

const { killProcessTree } = require('../../lib/process.js')
const { PROC, skipWithoutProc, ownPgid, sleep, stat, identity, isAlive, survivors, spawnTree, reap, waitFor } = require('./helpers.js')

describe('process: killProcessTree', function () {
  // Without /proc: only the child and its group are reachable (see helpers.js).
  beforeEach(skipWithoutProc(/escapee|not spawned detached|non-detached|sibling|detached: false|parses \/proc|20 trees|mixed trees|SIGINT, members|zombie nobody/))
  before(function () {
    if (process.platform !== 'linux') this.skip() // /proc and shell trees: Linux only
  })
  let cleanup = []
  let ended = false // set once the current test is over (a timed-out test's code may still run)
  beforeEach(function () { ended = false })
  afterEach(function () {
    ended = true
    for (const ids of cleanup) reap(ids)
    cleanup = []
  })
  function track (tree) {
    if (ended) reap(tree.ids) // spawned by a test that already timed out: never left running
    else cleanup.push(tree.ids)
    return tree
  }

  for (const kind of ['obey', 'ignore', 'deep', 'wide', 'escapee']) {
    it(`kills a detached ${kind} tree with no survivors`, async function () {
      const { child, ids } = track(await spawnTree(kind))
      await killProcessTree(child, { graceMs: 200 })
      assert.ok(child.exitCode !== null || child.signalCode !== null, 'settled before exit')
      assert.deepEqual(survivors(ids), [])
    })
  }

  it('reaches a setsid escapee that left the group and session', async function () {
    const { child, ids } = track(await spawnTree('escapee'))
    const escapee = ids[0]
    await waitFor(() => stat(escapee.pid).pgid === escapee.pid, 'setsid')
    assert.notEqual(stat(escapee.pid).sid, stat(child.pid).sid)
    await killProcessTree(child, { graceMs: 5000 })
    assert.equal(isAlive(escapee), false)
    assert.equal(child.signalCode, 'SIGTERM')
  })

  it('kills a child that was not spawned detached (same group as the caller) and its tree', async function () {
    const { child, ids } = track(await spawnTree('obey', { detached: false }))
    assert.equal(stat(child.pid).pgid, ownPgid())
    await killProcessTree(child, { graceMs: 200 })
    assert.deepEqual(survivors(ids), [])
  })

  it('kills a non-detached SIGTERM-ignoring tree by escalating', async function () {
    const { child, ids } = track(await spawnTree('ignore', { detached: false }))
    await killProcessTree(child, { graceMs: 100 })
    assert.equal(child.signalCode, 'SIGKILL')
    assert.deepEqual(survivors(ids), [])
  })

  it('never signals the calling process or a sibling in its process group', async function () {
    const sibling = spawn('sleep', ['1000'], { stdio: 'ignore' }) // our group
    const sib = identity(sibling.pid)
    cleanup.push([sib])
    const a = track(await spawnTree('ignore', { detached: false }))
    const b = track(await spawnTree('obey', { detached: true }))
    await Promise.all([
      killProcessTree(a.child, { graceMs: 50 }),
      killProcessTree(b.child, { graceMs: 50, signal: 'SIGKILL' })
    ])
    assert.deepEqual(survivors([...a.ids, ...b.ids]), [])
    assert.equal(isAlive(sib), true)
    assert.equal(stat(sibling.pid).pgid, ownPgid())
    sibling.kill('SIGKILL')
  })

  it('removes its exit listener once settled; two concurrent calls on one child both settle', async function () {
    const { child, ids } = track(await spawnTree('ignore'))
    const before = child.listenerCount('exit')
    await Promise.all([killProcessTree(child, { graceMs: 50 }), killProcessTree(child, { graceMs: 100 })])
    assert.equal(child.listenerCount('exit'), before)
    assert.deepEqual(survivors(ids), [])
  })

  it('a SIGTERM-obeying tree ends by SIGTERM, without the SIGKILL escalation', async function () {
    const { child, ids } = track(await spawnTree('obey'))
    // A grace longer than the test timeout: settling at all shows it did not wait.
    await killProcessTree(child, { graceMs: 10 * 60 * 1000 })
    assert.equal(child.signalCode, 'SIGTERM')
    assert.deepEqual(survivors(ids), [])
  })

  it('escalates to SIGKILL after graceMs when something survived', async function () {
    const { child, ids } = track(await spawnTree('ignore'))
    await killProcessTree(child, { graceMs: 100 })
    assert.equal(child.signalCode, 'SIGKILL')
    assert.deepEqual(survivors(ids), [])
  })

  it('graceMs 0 escalates at once', async function () {
    const { child, ids } = track(await spawnTree('ignore'))
    await killProcessTree(child, { graceMs: 0 })
    assert.deepEqual(survivors(ids), [])
  })

  for (const detached of [true, false]) {
    it(`SIGKILLs remembered descendants (and what they forked since) after the child itself exited (detached: ${detached})`, async function () {
      const { child, ids } = track(await spawnTree('orphanedIgnorer', { detached }))
      const ignorer = ids.find((id) => stat(id.pid).ppid === child.pid)
      const p = killProcessTree(child, { graceMs: 300 })
      await once(child, 'exit')
      assert.equal(child.signalCode, 'SIGTERM') // the root obeyed
      assert.equal(isAlive(ignorer), true) // the ignoring subtree is orphaned and running
      assert.notEqual(stat(ignorer.pid).ppid, child.pid)
      await p
      assert.deepEqual(survivors(ids), [])
      // Its loop forked sleeps after the initial signal; none may be left behind.
      const ppidOfOrphans = survivorsByParent(ignorer.pid)
      assert.deepEqual(ppidOfOrphans, [])
    })
  }

  it('parses /proc entries whose command name holds spaces and parentheses', async function () {
    const fs = require('node:fs')
    const path = require('node:path')
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'aos-'))
    const odd = path.join(dir, 'x) 1 (2 ) S')
    fs.symlinkSync(require('node:child_process').execFileSync('bash', ['-c', 'command -v sleep']).toString().trim(), odd)
    const file = path.join(dir, 'pids')
    const child = spawn('bash', ['-c', '"$O" 1000 & echo $! >> "$F"; echo $$ >> "$F"; wait'],
      { stdio: 'ignore', env: { ...process.env, F: file, O: odd } })
    await waitFor(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length === 2, 'tree')
    const ids = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number).map(identity)
    cleanup.push(ids)
    await waitFor(() => fs.readFileSync(`${PROC}/${ids[0].pid}/comm`, 'utf8').startsWith('x) 1 (2'), 'exec')
    await killProcessTree(child, { graceMs: 5000 })
    assert.deepEqual(survivors(ids), [])
    fs.rmSync(dir, { recursive: true, force: true })
  })

  for (const signal of ['SIGINT', 'SIGHUP', 'SIGUSR1']) {
    it(`sends the signal option (${signal}) first`, async function () {
      const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
      const id = identity(child.pid)
      cleanup.push([id])
      await killProcessTree(child, { signal, graceMs: 5000 })
      assert.equal(child.signalCode, signal)
      assert.equal(isAlive(id), false)
    })
  }

  it('with SIGINT, members that ignore it (bash background jobs) are still killed', async function () {
    const { child, ids } = track(await spawnTree('wide'))
    await killProcessTree(child, { signal: 'SIGINT', graceMs: 100 })
    assert.deepEqual(survivors(ids), [])
  })

  it('an already exited child resolves at once and sends no signal', async function () {
    // The child exits, leaving a sleep behind in its (still existing) process group.
    const dir = require('node:fs').mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'aos-'))
    const file = require('node:path').join(dir, 'pid')
    const child = spawn('bash', ['-c', 'sleep 1000 & echo $! > "$F"'], {
      detached: true, stdio: 'ignore', env: { ...process.env, F: file }
    })
    await once(child, 'exit')
    const orphan = identity(Number(require('node:fs').readFileSync(file, 'utf8')))
    cleanup.push([orphan])
    assert.equal(stat(orphan.pid).pgid, child.pid)
    await killProcessTree(child, { graceMs: 0 })
    assert.equal(isAlive(orphan), true)
    require('node:fs').rmSync(dir, { recursive: true, force: true })
  })

  it('an exited ChildProcessLike whose pid is a live process resolves and signals nothing', async function () {
    const live = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
    const id = identity(live.pid)
    cleanup.push([id])
    for (const state of [{ exitCode: 0, signalCode: null }, { exitCode: null, signalCode: 'SIGTERM' }]) {
      const stub = { pid: live.pid, ...state, once () {}, removeListener () {} }
      await killProcessTree(stub, { graceMs: 0 })
    }
    await sleep(50)
    assert.equal(isAlive(id), true)
    live.kill('SIGKILL')
  })

  it('a child that was never spawned rejects with NOT_SPAWNED; after its error it has exited', async function () {
    const child = spawn('/nonexistent/agent-os-binary', [], { stdio: 'ignore' })
    const errored = once(child, 'error')
    assert.equal(child.pid, undefined)
    const p = killProcessTree(child)
    assert.ok(p instanceof Promise)
    await assert.rejects(p, (err) => err instanceof TypeError && err.code === 'NOT_SPAWNED')
    await errored
    // Node records the failed spawn as an exit state (a negative exitCode): the
    // contract's "already exited" case, which resolves.
    assert.notEqual(child.exitCode, null)
    await killProcessTree(child)
    const stub = { exitCode: null, signalCode: null, once () {}, removeListener () {} }
    await assert.rejects(killProcessTree(stub), { code: 'NOT_SPAWNED', name: 'TypeError' })
  })

  describe('preKill', function () {
    it('runs first; a throw is swallowed and escalation goes on', async function () {
      const { child, ids } = track(await spawnTree('obey'))
      const order = []
      await killProcessTree(child, {
        graceMs: 200,
        preKill () {
          order.push(isAlive(ids[ids.length - 1]) ? 'alive' : 'dead')
          throw new Error('boom')
        }
      })
      assert.deepEqual(order, ['alive'])
      assert.deepEqual(survivors(ids), [])
    })

    it('a rejection is swallowed and escalation goes on', async function () {
      const { child, ids } = track(await spawnTree('ignore'))
      await killProcessTree(child, { graceMs: 100, preKill: async () => { await sleep(20); throw new Error('no') } })
      assert.deepEqual(survivors(ids), [])
    })

    it('if it makes the child exit, resolves without signalling the rest', async function () {
      const { child, ids } = track(await spawnTree('obey'))
      await killProcessTree(child, {
        graceMs: 0,
        preKill: async () => {
          child.kill('SIGKILL') // the root only
          await once(child, 'exit')
        }
      })
      assert.equal(child.signalCode, 'SIGKILL')
      // The sleeps got no signal from killProcessTree: still running.
      assert.equal(survivors(ids).length, ids.length - 1)
    })
  })

  describe('options', function () {
    const bad = [
      ['graceMs negative', { graceMs: -1 }],
      ['graceMs NaN', { graceMs: NaN }],
      ['graceMs Infinity', { graceMs: Infinity }],
      ['graceMs a string', { graceMs: '100' }],
      ['unknown signal name', { signal: 'SIGNOPE' }],
      ['lower-case signal name', { signal: 'sigterm' }],
      ['signal number', { signal: 9 }],
      ['preKill not a function', { preKill: 1 }],
      ['options not an object', 'SIGTERM']
    ]
    for (const [what, options] of bad) {
      it(`rejects INVALID_OPTION (${what}) without a synchronous throw and signals nothing`, async function () {
        const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
        const id = identity(child.pid)
        cleanup.push([id])
        let p
        assert.doesNotThrow(() => { p = killProcessTree(child, options) })
        await assert.rejects(p, (err) => err instanceof TypeError && err.code === 'INVALID_OPTION')
        assert.equal(isAlive(id), true)
        child.kill('SIGKILL')
      })
    }

    it('rejects a child that is not a ChildProcessLike, or the calling process, as INVALID_OPTION', async function () {
      // (A number is a pid target: test/process/target-pid.test.js.)
      for (const child of [undefined, null, '42', {}, { pid: 1, exitCode: null, signalCode: null }]) {
        await assert.rejects(killProcessTree(child), { code: 'INVALID_OPTION' })
      }
      const self = new EventEmitter()
      Object.assign(self, { pid: process.pid, exitCode: null, signalCode: null })
      await assert.rejects(killProcessTree(self), { code: 'INVALID_OPTION' })
      for (const pid of [-1, 0, 1, 1.5, 2 ** 31, '123']) {
        const bad = Object.assign(new EventEmitter(), { pid, exitCode: null, signalCode: null })
        await assert.rejects(killProcessTree(bad), { code: 'INVALID_OPTION', name: 'TypeError' })
      }
    })
  })

  it('settles on the child\'s exit event, never on child.killed or process death alone', async function () {
    const real = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
    const id = identity(real.pid)
    cleanup.push([id])
    const stub = Object.assign(new EventEmitter(), { pid: real.pid, exitCode: null, signalCode: null, killed: true })
    let settled = false
    const p = killProcessTree(stub, { graceMs: 50 }).then(() => { settled = true })
    await once(real, 'exit')
    await sleep(200)
    assert.equal(isAlive(id), false)
    assert.equal(settled, false)
    stub.emit('exit', null, 'SIGTERM')
    await p
    assert.equal(settled, true)
  })

  it('counts a zombie nobody reaps as exited', async function () {
    // X's parent execs into a sleep that never reaps: once X dies it stays a zombie.
    const holder = spawn('bash', ['-c', 'sleep 1000 & echo $!; exec sleep 2000'], {
      detached: true, stdio: ['ignore', 'pipe', 'ignore']
    })
    const [line] = await once(holder.stdout, 'data')
    const x = identity(Number(String(line).trim()))
    cleanup.push([x, identity(holder.pid)])
    // Until bash has exec'd into the sleep it would reap X itself.
    await waitFor(() => require('node:fs').readFileSync(`${PROC}/${holder.pid}/comm`, 'utf8').trim() === 'sleep', 'exec')
    const stub = Object.assign(new EventEmitter(), { pid: x.pid, exitCode: null, signalCode: null })
    const p = killProcessTree(stub, { graceMs: 10 * 60 * 1000 })
    await waitFor(() => stat(x.pid).state === 'Z', 'zombie')
    stub.emit('exit', null, 'SIGTERM')
    await p // would never settle if a zombie counted as alive (the grace is 10 minutes)
    assert.equal(stat(x.pid).state, 'Z')
    holder.kill('SIGKILL')
  })

  it('does not wait for stdio: a descendant holding the pipe is killed too', async function () {
    const { child, ids } = track(await spawnTree('obey', { stdio: ['ignore', 'pipe', 'pipe'] }))
    child.stdout.resume()
    await killProcessTree(child, { graceMs: 200 })
    assert.deepEqual(survivors(ids), [])
  })

  it('does not wait for stdio: a double-forked daemon holding the pipe cannot keep it pending', async function () {
    const fs = require('node:fs')
    const path = require('node:path')
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'aos-'))
    const file = path.join(dir, 'daemon')
    const child = spawn('bash', ['-c',
      '(setsid sh -c \'echo $$ > "$F"; exec sleep 1000\' &); sleep 1000 & wait'],
    { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, F: file } })
    let closed = false
    child.on('close', () => { closed = true })
    child.stdout.resume()
    await waitFor(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() !== '', 'daemon')
    const daemon = identity(Number(fs.readFileSync(file, 'utf8')))
    cleanup.push([daemon])
    await waitFor(() => stat(daemon.pid).ppid !== child.pid, 'reparenting')
    await killProcessTree(child, { graceMs: 200 })
    // Settled while the daemon (out of reach: it left before the call) holds stdout.
    assert.equal(closed, false)
    assert.equal(isAlive(daemon), true)
    process.kill(daemon.pid, 'SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('kills 20 trees at once with no survivors', async function () {
    this.timeout(60000)
    const kinds = ['obey', 'ignore', 'escapee', 'deep3']
    const trees = []
    const pidfds = () => require('node:fs').readdirSync(`${PROC}/self/fd`).filter((fd) => {
      try { return require('node:fs').readlinkSync(`${PROC}/self/fd/${fd}`) === 'anon_inode:[pidfd]' } catch { return false }
    }).length
    const before = pidfds()
    for (let i = 0; i < 20; i++) trees.push(track(await spawnTree(kinds[i % kinds.length])))
    await Promise.all(trees.map((t) => killProcessTree(t.child, { graceMs: 100 })))
    assert.deepEqual(survivors(trees.flatMap((t) => t.ids)), [])
    // Every pidfd was closed when its promise settled.
    assert.equal(pidfds(), before)
  })

  // AGENT_OS_STRESS=full raises the count (e.g. `AGENT_OS_STRESS=full npx mocha test/process`);
  // under the sanitizer (every bash and sleep of the trees starts with the ASan runtime
  // preloaded, several times slower to fork and exec) it is 30: the C code's concurrency
  // is what that run checks, and 20 concurrent trees already exercise it.
  const TREES = process.env.AGENT_OS_STRESS === 'full' ? 300 : process.env.AGENT_OS_SANITIZED ? 30 : 100
  it(`kills ${TREES} mixed trees with zero survivors`, async function () {
    this.timeout(TREES * 1500)
    const kinds = ['obey', 'ignore', 'escapee', 'deep3', 'orphanedIgnorer', 'wide']
    const trees = []
    // Spawned ten at a time (each waits until its members wrote their pids); a test that
    // timed out stops spawning, and track() ends what it still brings up.
    for (let i = 0; i < TREES && !this.test.timedOut; i += 10) {
      const batch = []
      for (let j = i; j < Math.min(i + 10, TREES); j++) {
        batch.push(spawnTree(kinds[j % kinds.length], { detached: j % 5 !== 0 }).then(track))
      }
      trees.push(...await Promise.all(batch))
    }
    const all = trees.flatMap((t) => t.ids)
    await Promise.all(trees.map((t, i) => killProcessTree(t.child, {
      graceMs: 100,
      signal: i % 7 === 0 ? 'SIGHUP' : undefined
    })))
    assert.deepEqual(survivors(all), [])
    assert.ok(all.length >= TREES * 4)
  })
})

function survivorsByParent (ppid) {
  const fs = require('node:fs')
  const out = []
  for (const name of fs.readdirSync(PROC)) {
    if (!/^\d+$/.test(name)) continue
    const s = stat(Number(name))
    if (s !== null && s.ppid === ppid && s.state !== 'Z') out.push(Number(name))
  }
  return out
}
