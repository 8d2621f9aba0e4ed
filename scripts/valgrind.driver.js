'use strict'
// Driven under valgrind by scripts/valgrind.sh: every function of the binding, on its
// success and error paths, sync and async, in the main thread and in a worker thread
// that is terminated while an authority is open (environment teardown), authorities
// dropped unclosed (the GC finalizer) and a real process tree killed. Small counts:
// memcheck runs this ~50 times slower. Exits 0 when every step behaved as expected.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { Worker } = require('node:worker_threads')
const lib = path.join(__dirname, '..', 'lib')
const fa = require(path.join(lib, 'file-authority.js'))
const lock = require(path.join(lib, 'node-lock.js'))
const { killProcessTree } = require(path.join(lib, 'process.js'))
const binding = require(path.join(lib, 'binding.js'))

const ROUNDS = Number(process.env.AGENT_OS_VALGRIND_ROUNDS) || 20

function code (fn) {
  try {
    fn()
  } catch (err) {
    return err.code
  }
  return 'ok'
}

async function codeAsync (p) {
  try {
    await p
  } catch (err) {
    return err.code
  }
  return 'ok'
}

async function fileAuthority (base, resolver) {
  const part = binding.part('fileAuthority')
  const got = part.resolver(resolver)
  // valgrind 3.19 does not know openat2 (syscall 437) and fails it with ENOSYS: the
  // openat2 mode then runs its portable fallback, which is what gets checked.
  if (got !== resolver) console.log(`valgrind driver: ${resolver} resolver unavailable here, ${got} runs instead`)
  const root = path.join(base, resolver)
  fs.mkdirSync(path.join(root, 'd'), { recursive: true })
  fs.writeFileSync(path.join(root, 'f'), 'content')
  fs.symlinkSync(base, path.join(root, 'link'))
  fs.writeFileSync(Buffer.concat([Buffer.from(path.join(root, 'd') + '/'), Buffer.from([0x66, 0xff])]), 'bad name')
  const r = fa.openReadAuthoritySync(root)
  const w = await fa.openWriteAuthority(root, { sameRootAs: r })
  for (let i = 0; i < ROUNDS; i++) {
    assert.equal(Buffer.from(r.readBytesSync(['f'], { maxBytes: 64 })).toString(), 'content')
    assert.equal(r.readBytesSync(['missing'], { maxBytes: 64 }), undefined)
    assert.equal(code(() => r.readBytesSync(['f'], { maxBytes: 2 })), 'OVER_BUDGET')
    assert.equal(code(() => r.readBytesSync(['link', 'x'], { maxBytes: 2 })), 'UNSAFE_ENTRY')
    assert.equal(code(() => r.readBytesSync(['d'], { maxBytes: 2 })), 'UNSAFE_ENTRY')
    const l = r.listSync(['d'])
    assert.equal(l.omitted, 1)
    assert.equal(code(() => r.listSync(['f'])), 'UNSAFE_ENTRY')
    w.writeTextSync(['d', 'w'], `v${i}`)
    w.writeTextSync(['n', String(i), 'w'], new Uint8Array([0x61]), { createParents: true })
    assert.equal(code(() => w.writeTextSync(['d', 'w'], new Uint8Array([0xff]))), 'INVALID_CONTENT')
    assert.equal(code(() => w.writeTextSync(['nope', 'w'], 'x')), 'HOST_IO')
    assert.equal(code(() => w.writeTextSync(['link', 'w'], 'x')), 'UNSAFE_ENTRY')
    assert.equal((await r.readBytes(['f'], { maxBytes: 64 })).length, 7)
    assert.equal(await codeAsync(r.readBytes(['f'], { maxBytes: 1 })), 'OVER_BUDGET')
    assert.equal((await r.list([])).length, 4)
    await Promise.all([w.writeText(['d', 'a'], 'x'), w.writeText(['d', 'b'], 'y'), r.list(['d'])])
    assert.equal(code(() => fa.openReadAuthoritySync(base, { sameRootAs: r })), 'ROOT_CHANGED')
    assert.equal(code(() => fa.openReadAuthoritySync(path.join(root, 'f'))), 'UNSAFE_ENTRY')
    assert.equal(code(() => fa.openReadAuthoritySync(path.join(root, 'missing'))), 'HOST_IO')
    assert.ok(r.sharesRootWith(w))
    fa.openReadAuthoritySync(root) // dropped unclosed: the GC finalizer closes it
  }
  // close while operations are in flight: they finish, then the descriptor goes.
  const inflight = [r.readBytes(['f'], { maxBytes: 64 }), r.list([])]
  const closing = r.close()
  await Promise.all([...inflight, closing])
  assert.equal(code(() => r.readBytesSync(['f'], { maxBytes: 64 })), 'AUTHORITY_CLOSED')
  w.closeSync()
  global.gc()
  await new Promise((resolve) => setTimeout(resolve, 50))
  global.gc()
}

async function nodeLock (base) {
  const p = path.join(base, 'guard.lock')
  fs.symlinkSync(p, path.join(base, 'link.lock'))
  for (let i = 0; i < ROUNDS; i++) {
    const g = lock.tryAcquire(p)
    assert.ok(g)
    assert.equal(lock.tryAcquire(p), undefined)
    assert.equal(await codeAsync(lock.acquire(p, { timeoutMs: 5 })), 'LOCK_TIMEOUT')
    assert.equal(await codeAsync(lock.withLock(p, () => 1)), 'LOCK_HELD')
    g.release()
    assert.equal(await lock.withLock(p, () => 2), 2)
    assert.equal(code(() => lock.tryAcquire(path.join(base, 'link.lock'))), 'UNSAFE_ENTRY')
    assert.equal(code(() => lock.tryAcquire('relative')), 'INVALID_PATH')
    assert.equal(code(() => lock.tryAcquire(path.join(base, 'missing', 'x.lock'))), 'HOST_IO')
  }
}

async function processTree () {
  for (let i = 0; i < 3; i++) {
    const child = spawn('bash', ['-c', 'trap "" TERM; sleep 1000 & setsid sleep 1000 & wait'], { detached: true, stdio: 'ignore' })
    await new Promise((resolve) => setTimeout(resolve, 300))
    await killProcessTree(child, { graceMs: 100 })
  }
  const exited = { pid: 1, exitCode: 0, signalCode: null, once () {}, removeListener () {} }
  await killProcessTree(exited)
  assert.equal(await codeAsync(killProcessTree({ exitCode: null, signalCode: null, once () {}, removeListener () {} })), 'NOT_SPAWNED')
}

async function workerTeardown (base) {
  // A worker opens authorities and a lock, starts async work, and is terminated.
  const src = `
    const { parentPort, workerData } = require('node:worker_threads')
    const fa = require(${JSON.stringify(path.join(lib, 'file-authority.js'))})
    const lock = require(${JSON.stringify(path.join(lib, 'node-lock.js'))})
    const r = fa.openReadAuthoritySync(workerData.root)
    const g = lock.tryAcquire(workerData.lock)
    for (let i = 0; i < 8; i++) r.readBytes(['f'], { maxBytes: 64 }).catch(() => {})
    parentPort.postMessage('ready')
    setInterval(() => r.listSync([]), 1)
  `
  for (let i = 0; i < 3; i++) {
    const wk = new Worker(src, { eval: true, workerData: { root: path.join(base, 'portable'), lock: path.join(base, `w${i}.lock`) } })
    await new Promise((resolve) => wk.once('message', resolve))
    await wk.terminate()
  }
}

async function main () {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'aos-valgrind-')))
  try {
    await fileAuthority(base, 'openat2')
    await fileAuthority(base, 'portable')
    await nodeLock(base)
    await processTree()
    await workerTeardown(base)
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
  console.log('valgrind driver: done')
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
