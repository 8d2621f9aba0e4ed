'use strict'
// node-lock under kills: several processes hammer one lock with tryAcquire while this
// process SIGKILLs one of them at random instants (often mid-section: the contenders
// hold the lock most of the time) and starts a replacement. A holder killed inside its
// section leaves its marker behind; the next holder finds it and checks that its pid
// is dead (the lock was released by the kernel with the holder's descriptors), which
// counts an acquisition after holder death. A marker whose writer is still alive is an
// overlap: two holders at once. See fixtures/lock-hammer.js.
//
// Figures: attempts, overlaps (must be 0), acquisitions after holder death (must be
// more than 0: the kills did land mid-section and the lock was not lost with them).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { size, figure, startReady, killAndWait, sleep } = require('./helpers.js')

const KILLS = size(400, 40)
const CONTENDERS = 4
const HAMMER = path.join(__dirname, 'fixtures', 'lock-hammer.js')

describe('stress: node-lock with holders killed mid-section', function () {
  this.timeout(0)

  it(`${CONTENDERS} processes, ${KILLS} SIGKILLs: never two holders, the lock survives its holders' deaths`, async function () {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'aos-stress-lock-')))
    const statsDir = path.join(dir, 'stats')
    fs.mkdirSync(statsDir)
    const lockPath = path.join(dir, 'guard.lock')
    const marker = path.join(dir, 'inside')
    const running = []
    let failures = 0
    const start = async () => {
      const child = await startReady(process.execPath, [HAMMER, lockPath, marker, statsDir])
      child.once('exit', (code, signal) => { if (signal !== 'SIGKILL') failures++ })
      return child
    }
    try {
      for (let i = 0; i < CONTENDERS; i++) running.push(await start())
      for (let k = 0; k < KILLS; k++) {
        await sleep(5 + Math.floor(Math.random() * 25))
        const at = Math.floor(Math.random() * running.length)
        await killAndWait(running[at])
        running[at] = await start()
      }
      await sleep(200) // the last replacements get to find what their victims left
      for (const c of running.splice(0)) await killAndWait(c)
      const totals = { attempts: 0, acquired: 0, overlaps: 0, afterDeath: 0 }
      for (const f of fs.readdirSync(statsDir)) {
        const s = JSON.parse(fs.readFileSync(path.join(statsDir, f), 'utf8'))
        for (const k of Object.keys(totals)) totals[k] += s[k]
      }
      figure('node-lock-kill', { attempts: totals.attempts, acquired: totals.acquired, overlaps: totals.overlaps, acquisitionsAfterHolderDeath: totals.afterDeath, kills: KILLS })
      assert.equal(failures, 0, 'a contender failed on its own')
      assert.equal(totals.overlaps, 0, 'two holders inside the critical section at once')
      assert.ok(totals.afterDeath > 0, 'no holder was killed mid-section')
      assert.ok(totals.acquired > totals.afterDeath)
    } finally {
      for (const c of running) await killAndWait(c)
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
