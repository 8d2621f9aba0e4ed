'use strict'
// node-lock across real processes and threads: exclusion, the holder's pid, a killed
// holder, close-on-exec, garbage collection, worker threads, a replaced path, and a
// binding that cannot load.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync, execFileSync } = require('node:child_process')
const { once } = require('node:events')
const { Worker } = require('node:worker_threads')
const { tryAcquire, acquire, withLock, NodeLockError } = require('../../lib/node-lock.js')
const { tempDir, startHolder, alive, ownRecord } = require('./helpers.js')

const LIB = path.join(__dirname, '..', '..', 'lib', 'node-lock.js')

describe('node-lock: processes and threads', function () {
  let dir
  let lockPath
  const cleanup = []
  beforeEach(function () {
    dir = tempDir()
    lockPath = path.join(dir, 'guard.lock')
  })
  afterEach(async function () {
    for (const fn of cleanup.splice(0).reverse()) await fn()
    fs.rmSync(dir, { recursive: true, force: true })
  })
  async function holder (execArgv) {
    const h = await startHolder(execArgv)
    cleanup.push(() => h.stop())
    return h
  }
  function take () {
    const g = tryAcquire(lockPath)
    if (g !== undefined) cleanup.push(() => g.release())
    return g
  }

  describe('separate processes', function () {
    it('exclude each other, both ways, and report the live holder pid', async function () {
      const h = await holder()
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
      assert.equal(tryAcquire(lockPath), undefined)
      await assert.rejects(withLock(lockPath, () => 1), (err) =>
        err instanceof NodeLockError && err.code === 'LOCK_HELD' && err.holderPid === h.pid)
      await assert.rejects(acquire(lockPath, { timeoutMs: 30 }), (err) =>
        err.code === 'LOCK_TIMEOUT' && err.holderPid === h.pid)
      await h.request('release', { lockPath })
      const g = take()
      assert.ok(g !== undefined, 'free after the other process released')
      assert.equal((await h.request('tryAcquire', { lockPath })).held, false, 'the other process is refused')
      g.release()
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
    })

    it('acquire waits for a holder in another process to release', async function () {
      const h = await holder()
      await h.request('tryAcquire', { lockPath })
      setTimeout(() => { h.request('release', { lockPath }).catch(() => {}) }, 50)
      const g = await acquire(lockPath, { timeoutMs: 10000 })
      cleanup.push(() => g.release())
      assert.equal(g.released, false)
    })

    it('a holder that exits without releasing releases the lock', async function () {
      const h = await holder()
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
      assert.equal(tryAcquire(lockPath), undefined)
      const exited = once(h.child, 'exit')
      await h.request('exit')
      const [code] = await exited
      assert.equal(code, 0)
      assert.ok(take() !== undefined, 'released when the holder exited')
    })

    it('a slow live holder is never treated as abandoned', async function () {
      const h = await holder()
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
      for (let i = 0; i < 3; i++) {
        await assert.rejects(acquire(lockPath, { timeoutMs: 100 }), (err) => err.code === 'LOCK_TIMEOUT' && err.holderPid === h.pid)
      }
      assert.equal(tryAcquire(lockPath), undefined, 'still held by the live holder')
    })

    it('acquire without timeoutMs keeps waiting (default 10 000 ms) and gets the lock on release', async function () {
      const h = await holder()
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
      let settled = false
      const p = acquire(lockPath).finally(() => { settled = true })
      await new Promise((resolve) => setTimeout(resolve, 1500))
      assert.equal(settled, false, 'still waiting well before the default timeout')
      await h.request('release', { lockPath })
      const g = await p
      cleanup.push(() => g.release())
      assert.equal(g.released, false)
    })

    it('acquire without timeoutMs gives up with LOCK_TIMEOUT after the default 10 000 ms (AGENT_OS_STRESS=full)', async function () {
      if (process.env.AGENT_OS_STRESS !== 'full') this.skip()
      this.timeout(60000)
      const h = await holder()
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
      const started = performance.now()
      await assert.rejects(acquire(lockPath), (err) => err.code === 'LOCK_TIMEOUT' && err.holderPid === h.pid)
      assert.ok(performance.now() - started >= 10000 - 5, 'not before the default timeout')
    })

    it('a holder killed with SIGKILL releases the lock', async function () {
      const h = await holder()
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
      assert.equal(tryAcquire(lockPath), undefined)
      await h.stop() // SIGKILL, then waits for its exit
      const g = take()
      assert.ok(g !== undefined, 'released by the kernel when the holder died')
      assert.equal(fs.readFileSync(lockPath, 'utf8'), ownRecord(), 'the new holder recorded itself (no record on Linux)')
    })

    it('a child spawned while holding does not keep the lock (close-on-exec), released or killed', async function () {
      for (const howTheHolderEnds of ['release', 'SIGKILL']) {
        const h = await holder()
        assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
        const { sleeperPid } = await h.request('spawnSleeper')
        cleanup.push(() => { try { process.kill(sleeperPid, 'SIGKILL') } catch {} })
        assert.ok(alive(sleeperPid))
        if (process.platform === 'linux') {
          const ino = fs.statSync(lockPath).ino
          for (const fd of fs.readdirSync(`/proc/${sleeperPid}/fd`)) {
            let st
            try { st = fs.statSync(`/proc/${sleeperPid}/fd/${fd}`) } catch { continue }
            assert.notEqual(st.ino, ino, 'the grandchild has no descriptor of the guard file')
          }
        }
        if (howTheHolderEnds === 'release') await h.request('release', { lockPath })
        else await h.stop()
        assert.ok(alive(sleeperPid), 'the grandchild is still running')
        const g = tryAcquire(lockPath)
        assert.ok(g !== undefined, `free after the holder ${howTheHolderEnds === 'release' ? 'released' : 'was killed'}`)
        g.release()
        process.kill(sleeperPid, 'SIGKILL')
        await h.stop()
      }
    })

    it('a guard dropped without release stays held through garbage collection', async function () {
      const h = await holder(['--expose-gc'])
      assert.equal((await h.request('acquireAndDrop', { lockPath })).held, true)
      assert.equal(tryAcquire(lockPath), undefined, 'still held after the guard was collected')
      await assert.rejects(withLock(lockPath, () => 1), (err) => err.code === 'LOCK_HELD' && err.holderPid === h.pid)
      await h.stop()
      assert.ok(take() !== undefined, 'released when that process exits')
    })

    it('holderPid names the true holder whatever the file records (Linux: from the kernel lock table)', async function () {
      if (process.platform !== 'linux') this.skip()
      const h = await holder()
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
      const named = (err) => err.code === 'LOCK_HELD' && err.holderPid === h.pid
      // A live process that does not hold the lock, written over the holder's record
      // (a non-participant can do this; that pid must not be believed).
      const { sleeperPid } = await h.request('spawnSleeper')
      cleanup.push(() => { try { process.kill(sleeperPid, 'SIGKILL') } catch {} })
      fs.writeFileSync(lockPath, `agent-os-lock/1 ${sleeperPid}\n`)
      await assert.rejects(withLock(lockPath, () => 1), named)
      // The pid of a process that has exited.
      const gone = spawnSync('true').pid
      fs.writeFileSync(lockPath, `agent-os-lock/1 ${gone}\n`)
      await assert.rejects(withLock(lockPath, () => 1), named)
      // Garbage in the file, and an empty record (a holder between its flock and its
      // pid write looks like this).
      fs.writeFileSync(lockPath, 'not a pid\n')
      await assert.rejects(withLock(lockPath, () => 1), named)
      fs.writeFileSync(lockPath, '')
      await assert.rejects(withLock(lockPath, () => 1), named)
      // The true holder's pid again.
      fs.writeFileSync(lockPath, `agent-os-lock/1 ${h.pid}\n`)
      await assert.rejects(withLock(lockPath, () => 1), named)
    })

    it('a path replaced while held (non-goal): a new acquirer locks the new file', async function () {
      const h = await holder()
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
      const oldIno = fs.statSync(lockPath).ino
      const replacement = path.join(dir, 'replacement')
      fs.writeFileSync(replacement, '')
      if (process.platform === 'win32') {
        // Windows: the guard file is open without delete sharing, so while it is held
        // nothing can be renamed over its path (docs/node-lock.md, "Windows").
        assert.throws(() => fs.renameSync(replacement, lockPath), (err) => ['EPERM', 'EACCES', 'EBUSY'].includes(err.code))
        assert.equal(tryAcquire(lockPath), undefined, 'still the held file')
        return
      }
      // The old file kept reachable to inspect it (a second name: from here on the
      // path names a new file, which has one).
      const keep = path.join(dir, 'old-guard')
      fs.linkSync(lockPath, keep)
      fs.renameSync(replacement, lockPath)
      assert.notEqual(fs.statSync(lockPath).ino, oldIno)
      // Whoever can replace the path defeats the lock: the old holder still holds the
      // old file, and a new acquirer gets the file now at the path.
      const g = take()
      assert.ok(g !== undefined)
      assert.equal(fs.readFileSync(lockPath, 'utf8'), ownRecord(), 'the new file is the one locked')
      assert.equal(fs.readFileSync(keep, 'utf8'), ownRecord(h.pid), 'the old file still records the old holder')
      assert.equal(tryAcquire(keep), undefined, 'the old file is still locked by the old holder')
    })

    it('without a loadable binding every call fails closed with UNSUPPORTED_BACKEND', function () {
      const empty = path.join(dir, 'no-binding')
      fs.mkdirSync(empty)
      const script = `
        const lock = require(${JSON.stringify(LIB)})
        const out = {}
        try { lock.tryAcquire(${JSON.stringify(lockPath)}) } catch (e) { out.sync = e.code; out.msg = e.message }
        const p = lock.acquire(${JSON.stringify(lockPath)})
        const q = lock.withLock(${JSON.stringify(lockPath)}, () => 1)
        Promise.allSettled([p, q]).then((r) => {
          out.async = r.map((x) => x.reason && x.reason.code)
          console.log(JSON.stringify(out))
        })`
      const out = JSON.parse(execFileSync(process.execPath, ['-e', script], {
        env: { ...process.env, AGENT_OS_BINDING_ROOT: empty }, encoding: 'utf8'
      }))
      assert.equal(out.sync, 'UNSUPPORTED_BACKEND')
      assert.deepEqual(out.async, ['UNSUPPORTED_BACKEND', 'UNSUPPORTED_BACKEND'])
      assert.ok(!out.msg.includes(empty), 'the message does not name where the package lives')
      assert.equal(fs.existsSync(lockPath), false)
    })
  })

  describe('worker threads', function () {
    function startWorker () {
      const worker = new Worker(`
        const { parentPort } = require('node:worker_threads')
        const lock = require(${JSON.stringify(LIB)})
        let guard
        parentPort.on('message', ({ cmd, lockPath }) => {
          if (cmd === 'try') {
            guard = lock.tryAcquire(lockPath)
            parentPort.postMessage(guard !== undefined)
          } else if (cmd === 'release') {
            guard.release()
            parentPort.postMessage(true)
          } else if (cmd === 'drop') {
            guard = undefined
            parentPort.postMessage(true)
          }
        })`, { eval: true })
      cleanup.push(() => worker.terminate())
      return {
        worker,
        async ask (cmd) {
          worker.postMessage({ cmd, lockPath })
          const [reply] = await once(worker, 'message')
          return reply
        }
      }
    }

    it('exclude each other and the main thread, both ways', async function () {
      const a = startWorker()
      const b = startWorker()
      const g = take()
      assert.equal(await a.ask('try'), false, 'a worker is refused while the main thread holds')
      g.release()
      assert.equal(await a.ask('try'), true)
      assert.equal(await b.ask('try'), false, 'another worker is refused')
      assert.equal(tryAcquire(lockPath), undefined, 'the main thread is refused')
      const err = await withLock(lockPath, () => 1).catch((e) => e)
      assert.equal(err.code, 'LOCK_HELD')
      assert.equal(err.holderPid, process.pid, 'the holder is this very process')
      assert.equal(await a.ask('release'), true)
      assert.ok(take() !== undefined)
    })

    it('a guard a worker dropped stays held while the worker lives, and is released when the worker ends', async function () {
      const a = startWorker()
      assert.equal(await a.ask('try'), true)
      assert.equal(await a.ask('drop'), true)
      assert.equal(tryAcquire(lockPath), undefined)
      await a.worker.terminate()
      assert.ok(take() !== undefined, 'the worker environment released what it still held')
    })
  })
})
