'use strict'
// node-lock in one process: exclusion between guards, the guard object, argument
// rules, unsafe entries at the path, acquire's bounded retry and abort, withLock.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const util = require('node:util')
const { execFileSync } = require('node:child_process')
const { once } = require('node:events')
const { tryAcquire, acquire, withLock, NodeLockError } = require('../../lib/node-lock.js')
const { tempDir, ownRecord } = require('./helpers.js')
const { windows, wine, REASONS, skipBecause, makeSymlink } = require('../helpers/platform.js')

describe('node-lock: one process', function () {
  let dir
  let lockPath
  const guards = []
  beforeEach(function () {
    dir = tempDir()
    lockPath = path.join(dir, 'guard.lock')
  })
  afterEach(function () {
    for (const g of guards.splice(0)) g.release()
    fs.rmSync(dir, { recursive: true, force: true })
  })
  function take (p = lockPath) {
    const g = tryAcquire(p)
    if (g !== undefined) guards.push(g)
    return g
  }
  function assertNoPath (err) {
    assert.ok(!err.message.includes(dir), 'the message must not name the path')
    return true
  }

  describe('exclusion', function () {
    it('a second tryAcquire of the same path returns undefined while the first holds', function () {
      const first = take()
      assert.ok(first !== undefined)
      assert.equal(first.released, false)
      assert.equal(take(), undefined)
      assert.equal(take(), undefined)
      first.release()
      assert.equal(first.released, true)
      const again = take()
      assert.ok(again !== undefined, 'free again after release')
    })

    it('a guard given another name (a hard link) is UNSAFE_ENTRY under both names, and stays held', function () {
      assert.ok(take() !== undefined)
      const other = path.join(dir, 'other-name.lock')
      fs.linkSync(lockPath, other)
      assert.throws(() => take(other), (err) => err.code === 'UNSAFE_ENTRY')
      assert.throws(() => take(), (err) => err.code === 'UNSAFE_ENTRY')
      if (windows) {
        // Windows holds the guard open without delete sharing: no name of a held guard
        // can be removed, which is the stronger form of "stays held".
        assert.throws(() => fs.unlinkSync(other), (err) => err.code === 'EBUSY' || err.code === 'EPERM')
        assert.throws(() => take(other), (err) => err.code === 'UNSAFE_ENTRY')
        return
      }
      fs.unlinkSync(other)
      assert.equal(take(), undefined, 'still held by the first guard')
    })


    it('different paths do not exclude each other', function () {
      assert.ok(take(path.join(dir, 'a.lock')) !== undefined)
      assert.ok(take(path.join(dir, 'b.lock')) !== undefined)
    })
  })

  describe('the guard file', function () {
    it('is created with 0666 less the umask, holds the holder record (none on Linux), and survives release', function () {
      const g = take()
      const st = fs.lstatSync(lockPath)
      assert.ok(st.isFile())
      const umask = process.umask()
      assert.equal(st.mode & 0o777, 0o666 & ~umask)
      assert.equal(fs.readFileSync(lockPath, 'utf8'), ownRecord())
      g.release()
      assert.ok(fs.lstatSync(lockPath).isFile(), 'never deleted')
      assert.equal(fs.lstatSync(lockPath).ino, st.ino, 'the same file')
      assert.equal(fs.readFileSync(lockPath, 'utf8'), '', 'the pid is cleared on release')
    })

    it('uses an existing regular file as it is (its permission bits are kept)', function () {
      if (windows) skipBecause(this, REASONS.posixMode)
      fs.writeFileSync(lockPath, '')
      fs.chmodSync(lockPath, 0o600)
      const g = take()
      assert.ok(g !== undefined)
      assert.equal(fs.statSync(lockPath).mode & 0o777, 0o600)
    })

    it('is locked even when this process may only read it (the pid is then not recorded)', function () {
      if (process.getuid && process.getuid() === 0) {
        // Root bypasses file permissions: a 0444 file still opens read-write for root,
        // so the read-only fallback cannot be reached here.
        this.skip()
      }
      if (wine && process.env.WINEUSERNAME === 'root') {
        // Wine keeps the read-only attribute as the Unix mode bits, which root bypasses.
        skipBecause(this, REASONS.wineRoot)
      }
      fs.writeFileSync(lockPath, '')
      fs.chmodSync(lockPath, 0o444)
      const g = take()
      assert.ok(g !== undefined)
      assert.equal(take(), undefined)
      assert.equal(fs.readFileSync(lockPath, 'utf8'), '')
    })
  })

  describe('the guard object', function () {
    it('release is idempotent, and [Symbol.dispose] releases', function () {
      const g = take()
      g.release()
      g.release()
      assert.equal(g.released, true)
      const h = take()
      assert.ok(h !== undefined)
      h[Symbol.dispose]()
      assert.equal(h.released, true)
      h[Symbol.dispose]()
      h.release()
      assert.ok(take() !== undefined, 'free after dispose')
    })

    it('is opaque: no handle, descriptor or path reachable', function () {
      const g = take()
      assert.deepEqual(Object.keys(g), [])
      assert.equal(JSON.stringify(g), '{}')
      assert.equal(util.inspect(g), 'LockGuard { released: false }')
      assert.ok(!util.inspect(g, { showHidden: true }).includes(dir))
      assert.throws(() => new g.constructor(), TypeError)
      g.release()
      assert.equal(util.inspect(g), 'LockGuard { released: true }')
    })

    it('released is read-only from outside', function () {
      const g = take()
      assert.throws(() => { 'use strict'; g.released = true }, TypeError)
      assert.equal(g.released, false)
    })
  })

  describe('argument rules', function () {
    const bad = [undefined, null, 42, {}, [], '', 'relative/guard.lock', './guard.lock', 'guard.lock']
    for (const value of bad) {
      it(`tryAcquire(${util.inspect(value)}) throws INVALID_PATH`, function () {
        assert.throws(() => tryAcquire(value), (err) => err instanceof NodeLockError && err.code === 'INVALID_PATH')
      })
    }

    it('a NUL in the path, or a trailing separator, is INVALID_PATH', function () {
      for (const p of [lockPath + '\0x', path.join(dir, 'a\0b'), dir + '/', lockPath + '/']) {
        assert.throws(() => tryAcquire(p), (err) => err.code === 'INVALID_PATH' && assertNoPath(err))
      }
      assert.deepEqual(fs.readdirSync(dir), [], 'nothing created')
    })

    it('acquire and withLock reject (never throw) for bad paths and arguments', async function () {
      for (const value of bad) {
        let p
        assert.doesNotThrow(() => { p = acquire(value) })
        await assert.rejects(p, (err) => err.code === 'INVALID_PATH')
        assert.doesNotThrow(() => { p = withLock(value, () => 1) })
        await assert.rejects(p, (err) => err.code === 'INVALID_PATH')
      }
      for (const options of [5, 'x', { timeoutMs: -1 }, { timeoutMs: NaN }, { timeoutMs: Infinity }, { timeoutMs: '10' }, { signal: {} }, { timeout: 10 }]) {
        await assert.rejects(acquire(lockPath, options), (err) => err.code === 'INVALID_OPTION' && /^options/.test(err.argument))
      }
      for (const fn of [undefined, null, 1, 'fn', {}]) {
        await assert.rejects(withLock(lockPath, fn), (err) => err.code === 'INVALID_OPTION' && err.argument === 'fn')
      }
      assert.deepEqual(fs.readdirSync(dir), [], 'nothing created for bad arguments')
    })

    it('a missing directory is HOST_IO ENOENT; a file as parent is HOST_IO ENOTDIR', async function () {
      const missing = path.join(dir, 'no-such-dir', 'guard.lock')
      assert.throws(() => tryAcquire(missing), (err) => err.code === 'HOST_IO' && err.hostCode === 'ENOENT' && assertNoPath(err))
      await assert.rejects(acquire(missing, { timeoutMs: 0 }), (err) => err.code === 'HOST_IO' && err.hostCode === 'ENOENT')
      await assert.rejects(withLock(missing, () => 1), (err) => err.code === 'HOST_IO' && err.hostCode === 'ENOENT')
      assert.equal(fs.existsSync(path.join(dir, 'no-such-dir')), false, 'the directory is not created')
      fs.writeFileSync(path.join(dir, 'file'), 'x')
      // Windows reports a file used as a directory as ERROR_PATH_NOT_FOUND (ENOENT).
      const notDir = windows ? 'ENOENT' : 'ENOTDIR'
      assert.throws(() => tryAcquire(path.join(dir, 'file', 'guard.lock')), (err) => err.code === 'HOST_IO' && err.hostCode === notDir)
    })
  })

  describe('unsafe entries at the path', function () {
    it('a symlink to a file is UNSAFE_ENTRY (ELOOP), and the target is left untouched', async function () {
      const target = path.join(dir, 'target')
      fs.writeFileSync(target, 'precious')
      const before = fs.statSync(target)
      if (!makeSymlink(target, lockPath)) skipBecause(this, REASONS.noSymlink)
      assert.throws(() => tryAcquire(lockPath), (err) => err instanceof NodeLockError && err.code === 'UNSAFE_ENTRY' && err.hostCode === 'ELOOP' && assertNoPath(err))
      await assert.rejects(acquire(lockPath), (err) => err.code === 'UNSAFE_ENTRY')
      await assert.rejects(withLock(lockPath, () => 1), (err) => err.code === 'UNSAFE_ENTRY')
      const after = fs.statSync(target)
      assert.equal(fs.readFileSync(target, 'utf8'), 'precious')
      assert.equal(after.mtimeMs, before.mtimeMs)
      assert.ok(fs.lstatSync(lockPath).isSymbolicLink(), 'the link itself is left alone')
    })

    it('a dangling symlink is UNSAFE_ENTRY and its target is not created', function () {
      const target = path.join(dir, 'not-there')
      if (!makeSymlink(target, lockPath)) skipBecause(this, REASONS.noSymlink)
      assert.throws(() => tryAcquire(lockPath), (err) => err.code === 'UNSAFE_ENTRY')
      assert.equal(fs.existsSync(target), false)
    })

    it('a symlink to a directory is UNSAFE_ENTRY', function () {
      fs.mkdirSync(path.join(dir, 'sub'))
      if (!makeSymlink(path.join(dir, 'sub'), lockPath)) skipBecause(this, REASONS.noSymlink)
      assert.throws(() => tryAcquire(lockPath), (err) => err.code === 'UNSAFE_ENTRY')
      assert.deepEqual(fs.readdirSync(path.join(dir, 'sub')), [])
    })

    it('a directory is UNSAFE_ENTRY (EISDIR)', function () {
      fs.mkdirSync(lockPath)
      assert.throws(() => tryAcquire(lockPath), (err) => err.code === 'UNSAFE_ENTRY' && err.hostCode === 'EISDIR')
      assert.ok(fs.statSync(lockPath).isDirectory())
    })

    it('a FIFO is UNSAFE_ENTRY, at once (it never blocks waiting for a writer)', function () {
      if (windows) skipBecause(this, REASONS.noFifo)
      execFileSync('mkfifo', [lockPath])
      assert.throws(() => tryAcquire(lockPath), (err) => err.code === 'UNSAFE_ENTRY')
    })

    it('a unix socket is UNSAFE_ENTRY', async function () {
      if (windows) skipBecause(this, REASONS.unixSocket)
      const server = net.createServer()
      server.listen(lockPath)
      await once(server, 'listening')
      try {
        assert.throws(() => tryAcquire(lockPath), (err) => err.code === 'UNSAFE_ENTRY')
      } finally {
        server.close()
      }
    })

    it('a symlink in the directory part is followed (only the guard file itself must not be a link)', function () {
      fs.mkdirSync(path.join(dir, 'real'))
      if (!makeSymlink(path.join(dir, 'real'), path.join(dir, 'alias'))) skipBecause(this, REASONS.noSymlink)
      const g = take(path.join(dir, 'alias', 'guard.lock'))
      assert.ok(g !== undefined)
      assert.equal(take(path.join(dir, 'real', 'guard.lock')), undefined, 'the same file')
    })
  })

  describe('acquire', function () {
    it('resolves at once when free', async function () {
      const g = await acquire(lockPath)
      guards.push(g)
      assert.equal(g.released, false)
      assert.equal(take(), undefined)
    })

    it('rejects with LOCK_TIMEOUT carrying the holder pid when the lock stays held', async function () {
      take()
      await assert.rejects(acquire(lockPath, { timeoutMs: 50 }), (err) =>
        err instanceof NodeLockError && err.code === 'LOCK_TIMEOUT' && err.holderPid === process.pid && assertNoPath(err))
      await assert.rejects(acquire(lockPath, { timeoutMs: 0 }), (err) => err.code === 'LOCK_TIMEOUT')
    })

    it('gets the lock once the holder releases during the wait', async function () {
      const first = take()
      setTimeout(() => first.release(), 30)
      const g = await acquire(lockPath, { timeoutMs: 5000 })
      guards.push(g)
      assert.equal(g.released, false)
    })

    it('an already aborted signal rejects at once with its reason, without taking the lock', async function () {
      const reason = new Error('stop')
      await assert.rejects(acquire(lockPath, { signal: AbortSignal.abort(reason) }), (err) => err === reason)
      const ac = new AbortController()
      ac.abort()
      await assert.rejects(acquire(lockPath, { signal: ac.signal }), (err) => err.name === 'AbortError')
      assert.ok(take() !== undefined, 'the aborted call did not take it')
    })

    it('abort during the wait rejects with the reason', async function () {
      take()
      const ac = new AbortController()
      const reason = new Error('cancelled')
      const p = acquire(lockPath, { timeoutMs: 20000, signal: ac.signal })
      setTimeout(() => ac.abort(reason), 30)
      await assert.rejects(p, (err) => err === reason)
    })

    it('a signal that never aborts leaves no listener behind', async function () {
      const ac = new AbortController()
      const first = take()
      setTimeout(() => first.release(), 30)
      guards.push(await acquire(lockPath, { signal: ac.signal }))
      const { getEventListeners } = require('node:events')
      assert.equal(getEventListeners(ac.signal, 'abort').length, 0)
    })
  })

  describe('withLock', function () {
    it('runs fn holding the lock and releases after it returns', async function () {
      const value = await withLock(lockPath, () => {
        assert.equal(tryAcquire(lockPath), undefined, 'held inside')
        return 42
      })
      assert.equal(value, 42)
      assert.ok(take() !== undefined, 'released after')
    })

    it('releases after fn resolves', async function () {
      const value = await withLock(lockPath, async () => {
        await new Promise((resolve) => setTimeout(resolve, 10))
        assert.equal(tryAcquire(lockPath), undefined)
        return 'later'
      })
      assert.equal(value, 'later')
      assert.ok(take() !== undefined)
    })

    it('releases after fn throws, and rejects with what it threw', async function () {
      const boom = new Error('boom')
      await assert.rejects(withLock(lockPath, () => { throw boom }), (err) => err === boom)
      assert.ok(take() !== undefined)
    })

    it('releases after fn rejects', async function () {
      const boom = new Error('async boom')
      await assert.rejects(withLock(lockPath, async () => { throw boom }), (err) => err === boom)
      assert.ok(take() !== undefined)
    })

    it('rejects with LOCK_HELD and the holder pid when held, without running fn', async function () {
      take()
      let ran = false
      await assert.rejects(withLock(lockPath, () => { ran = true }), (err) =>
        err instanceof NodeLockError && err.code === 'LOCK_HELD' && err.holderPid === process.pid && assertNoPath(err))
      assert.equal(ran, false)
    })
  })

  describe('NodeLockError', function () {
    it('is an Error with a code, and refuses unknown codes', function () {
      const err = new NodeLockError('LOCK_HELD', { operation: 'withLock', holderPid: 7 })
      assert.ok(err instanceof Error)
      assert.equal(err.name, 'NodeLockError')
      assert.equal(err.code, 'LOCK_HELD')
      assert.equal(err.holderPid, 7)
      assert.equal(new NodeLockError('LOCK_HELD').holderPid, undefined)
      assert.throws(() => new NodeLockError('NOPE'), TypeError)
    })
  })
})
