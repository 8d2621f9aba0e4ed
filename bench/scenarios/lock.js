'use strict'
// node-lock: one uncontended cycle, acquire and release.

const fs = require('node:fs')
const path = require('node:path')
const { timeSync } = require('../lib/measure.js')
const { runRow } = require('../lib/row.js')
const { need, probe, alternative, Unavailable } = require('../lib/pkg.js')
const { cLoop } = require('./common.js')

async function rows (ctx) {
  const dir = path.join(ctx.disk.dir, 'lock')
  fs.mkdirSync(dir, { recursive: true })
  const file = (name) => {
    const p = path.join(dir, name)
    fs.closeSync(fs.openSync(p, 'a'))
    return p
  }
  const n = ctx.quick ? 300 : 2000
  // proper-lockfile is about a hundred times slower; a tenth of N keeps its rounds as
  // long as the others' (times are per operation either way).
  const nProper = Math.max(30, Math.round(n / 10))
  const row = await runRow({
    id: 'lock-cycle',
    short: 'lock cycle',
    title: 'lock cycle: acquire without waiting, then release (uncontended)',
    where: `${ctx.disk.type}, ${ctx.disk.where}`,
    n,
    rounds: ctx.quick ? 9 : 21,
    notes: [
      'agent-os: tryAcquire(path) then guard.release(). proper-lockfile: lockSync(path) then the returned release() (N/10 cycles per round).',
      'fs-native-extensions: fs.openSync, tryLock(fd), unlock(fd), fs.closeSync (an fcntl OFD lock, no identity re-check).',
      'The C loop makes the package\'s calls on Linux: lstat, open, flock(LOCK_EX | LOCK_NB), fstat (type, links, size, identity), lstat identity check, flock(LOCK_UN), close (no record: /proc/locks names the holder).'
    ],
    impls: [
      {
        id: 'pkg',
        label: 'agent-os tryAcquire + release',
        role: 'package',
        setup: () => {
          const lock = need(ctx.parts.nodeLock, ['tryAcquire'])
          const p = file('pkg.lock')
          const g = probe('tryAcquire', () => lock.tryAcquire(p))
          if (!g) throw new Unavailable('tryAcquire returned undefined on an uncontended lock')
          g.release()
          return () => timeSync(n, () => {
            const guard = lock.tryAcquire(p)
            guard.release()
            return guard
          })
        }
      },
      {
        id: 'proper',
        label: 'proper-lockfile lockSync + release',
        role: 'alternative',
        setup: () => {
          const lockfile = alternative('proper-lockfile')
          const p = file('proper.lock')
          return () => timeSync(nProper, () => {
            const release = lockfile.lockSync(p)
            release()
            return release
          })
        }
      },
      {
        id: 'fsx',
        label: 'fs-native-extensions open + tryLock + unlock + close',
        role: 'alternative',
        setup: () => {
          const fsx = alternative('fs-native-extensions')
          const p = file('fsx.lock')
          return () => timeSync(n, () => {
            const fd = fs.openSync(p, 'r+')
            if (!fsx.tryLock(fd)) throw new Error('fs-native-extensions tryLock failed uncontended')
            fsx.unlock(fd)
            fs.closeSync(fd)
            return fd
          })
        }
      },
      {
        id: 'c',
        label: 'C loop, flock cycle',
        role: 'reference',
        setup: () => {
          const p = file('c.lock')
          return cLoop(ctx, 'lock_loop', () => [p, String(n)])
        }
      }
    ],
    comparisons: [
      { pkg: 'pkg', alt: 'proper', limit: 0.02, target: '<= 0.02x' },
      { pkg: 'pkg', alt: 'fsx', target: '-', note: 'reference (1.0x target withdrawn, issue 28: below the floor of the calls the contract requires)' },
      { pkg: 'pkg', alt: 'c', limit: 2.0, target: '<= 2.0x' }
    ],
    teardown: () => fs.rmSync(dir, { recursive: true, force: true })
  }, ctx)
  return [row]
}

module.exports = { rows }
