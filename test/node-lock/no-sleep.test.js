'use strict'
// Refusing never sleeps on the JavaScript thread (issue 13, contract: "no host sleeps
// or spins inside tryAcquire"): a refused tryAcquire, and a refused attempt that looks
// up the holder (withLock without options), run under strace -f; between two markers
// the calling thread makes no sleeping or yielding call. Run twice on Linux: with the
// kernel's lock table readable, and (as root, in a private mount namespace) with
// /proc/locks unreadable, where the holder lookup falls back to the guard file's
// record, the path that used to yield up to 16 times on an empty record.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempDir } = require('./helpers.js')
const { skipBecause } = require('../helpers/platform.js')

const LIB = path.join(__dirname, '..', '..', 'lib', 'node-lock.js')
// Calls that put the thread to sleep or give up the processor.
const SLEEPING = ['nanosleep', 'clock_nanosleep', 'sched_yield', 'select', 'pselect6', 'poll', 'ppoll',
  'epoll_wait', 'epoll_pwait', 'epoll_pwait2', 'pause', 'rt_sigsuspend', 'rt_sigtimedwait', 'usleep']

function haveStrace () {
  return spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0
}

// The script: take the lock, then between markers make `n` refused tryAcquire calls
// and `n` refused holder lookups (withLock rejects synchronously inside its first
// attempt; its promise is awaited after the END marker).
function script (lockPath, n) {
  return `
    const fs = require('node:fs')
    const lock = require(${JSON.stringify(LIB)})
    const p = ${JSON.stringify(lockPath)}
    const g = lock.tryAcquire(p)
    if (!g) throw new Error('not acquired')
    fs.truncateSync(p, 0) // an empty record: what a holder between its lock and its record write shows
    fs.writeSync(2, '=====MARK\\n')
    let refused = 0
    const pending = []
    for (let i = 0; i < ${n}; i++) {
      if (lock.tryAcquire(p) === undefined) refused++
      pending.push(lock.withLock(p, () => 1).catch((e) => e.code))
    }
    fs.writeSync(2, '=====END\\n')
    Promise.all(pending).then((codes) => {
      console.log(JSON.stringify({ refused, held: codes.filter((c) => c === 'LOCK_HELD').length }))
      g.release()
    })`
}

// The calls the marking thread made between the markers.
function callsBetweenMarkers (file) {
  const calls = []
  let pid
  let inside = false
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^(\d+)\s+(.*)$/.exec(raw)
    if (!m) continue
    const [, who, line] = m
    if (/^write\(2, "=====MARK/.test(line)) { inside = true; pid = who; continue }
    if (/^write\(2, "=====END/.test(line)) { inside = false; continue }
    if (!inside || who !== pid) continue
    const call = /^(\w+)\(/.exec(line) || /^<\.\.\. (\w+) resumed>/.exec(line)
    if (call) calls.push(call[1])
  }
  return calls
}

describe('node-lock: refusing never sleeps (strace)', function () {
  this.timeout(300000) // strace slows every call; under a sanitizer build, more so
  let dir
  beforeEach(function () {
    if (process.platform !== 'linux') skipBecause(this, 'strace: Linux only (the Windows and macOS code has no sleep or yield left: see src/node_lock/win32.c, posix.c)')
    if (!haveStrace()) skipBecause(this, 'strace is not installed (Debian package strace)')
    dir = tempDir()
  })
  afterEach(function () { if (dir) fs.rmSync(dir, { recursive: true, force: true }) })

  function run (wrap) {
    const lockPath = path.join(dir, 'guard.lock')
    const traceFile = path.join(dir, 'trace')
    const node = [process.execPath, '-e', script(lockPath, 200)]
    const r = spawnSync('strace', ['-f', '-qq', '-o', traceFile, ...wrap(node)], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const out = JSON.parse(r.stdout.trim().split('\n').pop())
    assert.deepEqual(out, { refused: 200, held: 200 })
    const calls = callsBetweenMarkers(traceFile)
    assert.ok(calls.filter((c) => c === 'flock').length >= 400, 'the attempts were traced')
    const sleeping = calls.filter((c) => SLEEPING.includes(c))
    assert.deepEqual(sleeping, [], 'no sleeping or yielding call while refusing')
    return calls
  }

  it('with the kernel lock table readable', function () {
    const calls = run((argv) => argv)
    assert.ok(calls.includes('read'), 'the holder lookups read /proc/locks')
  })

  it('with /proc/locks unreadable (the record fallback)', function () {
    if (process.getuid() !== 0) skipBecause(this, 'needs root to hide /proc/locks in a private mount namespace')
    if (spawnSync('unshare', ['-m', 'true']).status !== 0) skipBecause(this, 'unshare -m is not permitted here')
    // A write-only sysctl bound over /proc/locks: opening it for reading fails
    // (EACCES, even for root), so the holder writes its record and a refused attempt
    // reads the record instead.
    const hide = 'mount --bind /proc/sys/vm/drop_caches /proc/locks && exec "$@"'
    if (spawnSync('unshare', ['-m', 'sh', '-c', hide, 'sh', 'true']).status !== 0) skipBecause(this, 'cannot bind-mount over /proc/locks here')
    run((argv) => ['unshare', '-m', 'sh', '-c', hide, 'sh', ...argv])
  })
})
