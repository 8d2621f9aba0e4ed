'use strict'
// Contention stress: several processes hammer one lock; an O_EXCL marker inside the
// critical section must never be found already there. Default: 4 processes x 6000
// attempts (24 000 contended attempts); AGENT_OS_STRESS=full: 4 x 250 000.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { fork } = require('node:child_process')
const { tempDir } = require('./helpers.js')

const FULL = process.env.AGENT_OS_STRESS === 'full'
const PROCESSES = 4
const ATTEMPTS = FULL ? 250000 : 6000
const HAMMER = path.join(__dirname, 'fixtures', 'hammer.js')

// The next message from a contender; rejects if it exits first (a crash is a failure).
function reply (child) {
  return new Promise((resolve, reject) => {
    const onExit = (code, signal) => reject(new Error(`contender exited (${code ?? signal}) without a result`))
    child.once('exit', onExit)
    child.once('message', (msg) => {
      child.removeListener('exit', onExit)
      resolve(msg)
    })
  })
}

describe('node-lock: contention stress', function () {
  this.timeout(FULL ? 1800000 : 120000)
  let dir
  beforeEach(function () { dir = tempDir() })
  afterEach(function () { fs.rmSync(dir, { recursive: true, force: true }) })

  it(`${PROCESSES} processes x ${ATTEMPTS} attempts: never two holders at once`, async function () {
    const lockPath = path.join(dir, 'guard.lock')
    const marker = path.join(dir, 'inside')
    const children = []
    try {
      for (let i = 0; i < PROCESSES; i++) {
        const child = fork(HAMMER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
        children.push(child)
        child.send({ lockPath, marker, attempts: ATTEMPTS })
      }
      await Promise.all(children.map(reply))
      const results = children.map(reply)
      const started = Date.now()
      for (const c of children) c.send('go') // all start together
      const totals = (await Promise.all(results)).reduce((t, r) => ({
        acquired: t.acquired + r.acquired,
        refused: t.refused + r.refused,
        overlaps: t.overlaps + r.overlaps,
        foreignRecord: t.foreignRecord + r.foreignRecord
      }))
      const attempts = totals.acquired + totals.refused
      console.log(`      ${PROCESSES} processes, ${attempts} attempts: ${totals.acquired} acquired, ` +
        `${totals.refused} refused, ${totals.overlaps} overlaps, ${totals.foreignRecord} foreign pid records, ` +
        `${Date.now() - started} ms`)
      assert.equal(attempts, PROCESSES * ATTEMPTS)
      assert.ok(attempts >= 20000)
      assert.equal(totals.overlaps, 0, 'two holders inside the critical section at once')
      assert.equal(totals.foreignRecord, 0, 'a holder found another pid recorded in the guard file')
      assert.ok(totals.acquired > 0, 'the lock was taken')
      assert.ok(totals.refused > 0, 'the attempts were contended')
      assert.equal(fs.existsSync(marker), false)
      assert.equal(fs.readFileSync(lockPath, 'utf8'), '', 'the last holder cleared its record')
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    }
  })
})
