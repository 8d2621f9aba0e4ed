'use strict'
// A refusal names a holder caught between its lock and its record (contract: "When the
// holder is a live process of this host, LOCK_HELD/LOCK_TIMEOUT carry its holderPid").
// Where holders record their pid in the guard (everywhere but Linux with /proc/locks
// readable), the record is written just after the lock is taken; a refusal in that
// instant used to report no holderPid (seen on the Windows runs of examples/rule-store).
// The holder here empties its record and writes it back 3 ms later, twenty times; each
// withLock and acquire({ timeoutMs: 0 }) refused meanwhile must name it. On Linux the
// test runs in a private mount namespace (root) with /proc/locks hidden, so that the
// record is the source there too.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempDir, RECORDS } = require('./helpers.js')
const { skipBecause } = require('../helpers/platform.js')

const LIB = path.join(__dirname, '..', '..', 'lib', 'node-lock.js')

function script (lockPath) {
  return `
    const fs = require('node:fs')
    const lock = require(${JSON.stringify(LIB)})
    const p = ${JSON.stringify(lockPath)}
    ;(async () => {
      const g = lock.tryAcquire(p)
      if (!g) throw new Error('not acquired')
      const record = fs.readFileSync(p)
      if (record.length === 0) throw new Error('no record: the lock table names holders here')
      const seen = []
      for (let i = 0; i < 20; i++) {
        fs.truncateSync(p, 0) // the holder's instant between its lock and its record
        setTimeout(() => fs.writeFileSync(p, record), 3) // ... and its record, 3 ms on
        const held = await lock.withLock(p, () => {}).catch((e) => e)
        seen.push(held.code + ':' + held.holderPid)
        fs.truncateSync(p, 0)
        setTimeout(() => fs.writeFileSync(p, record), 3)
        const timedOut = await lock.acquire(p, { timeoutMs: 0 }).catch((e) => e)
        seen.push(timedOut.code + ':' + timedOut.holderPid)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      g.release()
      process.stdout.write(JSON.stringify({ pid: process.pid, seen }))
    })().catch((e) => { process.stderr.write(String(e && e.stack)); process.exit(1) })`
}

function check (r) {
  assert.equal(r.status, 0, r.stderr)
  const { pid, seen } = JSON.parse(r.stdout)
  assert.equal(seen.length, 40)
  for (let i = 0; i < seen.length; i++) {
    assert.equal(seen[i], `${i % 2 ? 'LOCK_TIMEOUT' : 'LOCK_HELD'}:${pid}`, `refusal ${i}`)
  }
}

describe('node-lock: a holder between its lock and its record is named', function () {
  this.timeout(60000)

  it('where holders record themselves (this host)', function () {
    if (!RECORDS) skipBecause(this, 'the kernel lock table names holders here: see the next test')
    const dir = tempDir()
    try {
      check(spawnSync(process.execPath, ['-e', script(path.join(dir, 'g.lock'))], { encoding: 'utf8' }))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('on Linux with /proc/locks hidden (the record fallback)', function () {
    if (process.platform !== 'linux') skipBecause(this, 'Linux only')
    if (process.getuid() !== 0) skipBecause(this, 'needs root to hide /proc/locks in a private mount namespace')
    if (spawnSync('unshare', ['-m', 'true']).status !== 0) skipBecause(this, 'unshare -m is not permitted here')
    const hide = 'mount --bind /proc/sys/vm/drop_caches /proc/locks && exec "$@"'
    if (spawnSync('unshare', ['-m', 'sh', '-c', hide, 'sh', 'true']).status !== 0) skipBecause(this, 'cannot bind-mount over /proc/locks here')
    const dir = tempDir()
    try {
      check(spawnSync('unshare', ['-m', 'sh', '-c', hide, 'sh', process.execPath, '-e', script(path.join(dir, 'g.lock'))], { encoding: 'utf8' }))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
