'use strict'
// The identity check after locking: if the path was replaced between opening the
// guard file and locking it, the locked handle is not the guard and must not count
// as acquired. The window is opened deterministically by an LD_PRELOAD shim
// (fixtures/swap-on-flock.c) that renames a fresh file over the path right before
// flock runs. Linux with a C compiler only.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { tryAcquire } = require('../../lib/node-lock.js')
const { tempDir, ownRecord } = require('./helpers.js')

const LIB = path.join(__dirname, '..', '..', 'lib', 'node-lock.js')
const SHIM = path.join(__dirname, 'fixtures', 'swap-on-flock.c')
// The core's bound on re-opening a replaced path (AOS_LOCK_MAX_REPLACED_RETRIES).
const MAX_REPLACED_RETRIES = 8

function compiler () {
  for (const cc of [process.env.CC, 'cc', 'gcc', 'clang']) {
    if (cc && spawnSync(cc, ['--version'], { stdio: 'ignore' }).status === 0) return cc
  }
  return undefined
}

describe('node-lock: the path replaced between open and lock', function () {
  let dir
  let shim
  let lockPath
  before(function () {
    const cc = process.platform === 'linux' ? compiler() : undefined
    if (cc === undefined) {
      console.log('      skipped: needs Linux and a C compiler to build the LD_PRELOAD shim')
      this.skip()
    }
    dir = tempDir()
    shim = path.join(dir, 'swap-on-flock.so')
    execFileSync(cc, ['-shared', '-fPIC', '-O1', '-o', shim, SHIM, '-ldl'])
  })
  after(function () {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
  })
  beforeEach(function () {
    lockPath = path.join(fs.mkdtempSync(path.join(dir, 'case-')), 'guard.lock')
  })

  // Runs `body` (JS source, with `lock`, `fs`, `lockPath`, `out`) in a child with
  // the shim preloaded; returns its `out` object.
  function runSwapped (times, body) {
    const script = `
      const fs = require('node:fs')
      const lock = require(${JSON.stringify(LIB)})
      const lockPath = ${JSON.stringify(lockPath)}
      const out = { pid: process.pid }
      ${body}
      console.log(JSON.stringify(out))`
    const stdout = execFileSync(process.execPath, ['-e', script], {
      // After any preload already there (a sanitizer runtime must stay first).
      env: { ...process.env, LD_PRELOAD: [process.env.LD_PRELOAD, shim].filter(Boolean).join(' '), AOS_TEST_SWAP_PATH: lockPath, AOS_TEST_SWAP_TIMES: String(times) },
      encoding: 'utf8'
    })
    return JSON.parse(stdout)
  }

  it('a file swapped in once: the stale handle is dropped and the file now at the path is locked', function () {
    fs.writeFileSync(lockPath, '')
    const original = path.join(path.dirname(lockPath), 'original')
    fs.linkSync(lockPath, original) // keeps the file that was opened first reachable
    const out = runSwapped(1, `
      const g = lock.tryAcquire(lockPath)
      out.acquired = g !== undefined
      out.pathRecord = fs.readFileSync(lockPath, 'utf8')
      out.originalRecord = fs.readFileSync(${JSON.stringify(original)}, 'utf8')
      out.pathHeld = lock.tryAcquire(lockPath) === undefined
      const o = lock.tryAcquire(${JSON.stringify(original)})
      out.originalHeld = o === undefined
      if (o) o.release()
    `)
    assert.equal(out.acquired, true)
    assert.equal(out.pathRecord, ownRecord(out.pid), 'the file at the path is the one locked and recorded (no record on Linux)')
    assert.equal(out.originalRecord, '', 'nothing was recorded in the replaced file')
    assert.equal(out.pathHeld, true, 'the guard at the path is held')
    assert.equal(out.originalHeld, false, 'the replaced file was not left locked')
  })

  it('a path replaced on every look is not acquired (bounded retries)', function () {
    fs.writeFileSync(lockPath, '')
    const out = runSwapped(MAX_REPLACED_RETRIES + 1, `
      out.acquired = lock.tryAcquire(lockPath) !== undefined
      out.afterwards = lock.tryAcquire(lockPath) !== undefined
    `)
    assert.equal(out.acquired, false, 'replaced on every attempt: not acquired')
    assert.equal(out.afterwards, true, 'once the swapping stops, it is acquired')
    const g = tryAcquire(lockPath)
    assert.ok(g !== undefined, 'the child left nothing held')
    g.release()
  })

  it('a guard file created by the attempt and then replaced: the replacement is locked', function () {
    const out = runSwapped(1, `
      const g = lock.tryAcquire(lockPath)
      out.acquired = g !== undefined
      out.pathRecord = fs.readFileSync(lockPath, 'utf8')
      out.pathHeld = lock.tryAcquire(lockPath) === undefined
    `)
    assert.equal(out.acquired, true)
    assert.equal(out.pathRecord, ownRecord(out.pid))
    assert.equal(out.pathHeld, true, 'the guard at the path is held')
  })
})
