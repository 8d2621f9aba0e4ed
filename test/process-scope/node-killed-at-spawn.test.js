'use strict'
// The caller SIGKILLed in the same tick as spawn (red team, contract 0.3: "the caller's
// process ending, even by SIGKILL, ends every scope"). Before: a helper that started
// after Node had died took init (its new parent) for Node and watched it, so its reaper
// and the command lived on (7 of 225 rounds as nobody, subreaper backend; 1 of 150 in this test as root). Now the
// helper is told Node's pid and refuses to start under any other parent.

const assert = require('node:assert/strict')
const path = require('node:path')
const { spawn } = require('node:child_process')
const h = require('./helpers.js')

const ROUNDS = Number(process.env.AGENT_OS_NODE_KILLED_ROUNDS) || 150
const MODULE = path.join(__dirname, '..', '..', 'lib', 'process.js')

describe('process scopes: the caller SIGKILLed right after spawn', function () {
  this.timeout(ROUNDS * 3000 + 30000)
  before(function () {
    if (process.platform !== 'linux') this.skip() // the subreaper backend is Linux's
  })

  it(`subreaper: ${ROUNDS} rounds, nothing of the scope left`, async function () {
    const { script } = h.newMarkDir()
    const mark = h.newMark()
    const code = `
      const { openProcessScope } = require(${JSON.stringify(MODULE)})
      openProcessScope().then((scope) => {
        scope.spawn(process.execPath, [${JSON.stringify(script)}], { stdio: 'ignore', env: { ...process.env, AOS_SCOPE_MARK: ${JSON.stringify(mark)} } })
        process.kill(process.pid, 'SIGKILL')
      })`
    let left = 0
    for (let i = 0; i < ROUNDS; i++) {
      const p = spawn(process.execPath, ['-e', code], {
        stdio: 'ignore',
        env: { ...process.env, AGENT_OS_PROCESS_SCOPE_BACKEND: 'subreaper' }
      })
      await new Promise((resolve) => p.once('exit', resolve))
      await h.sleep(20)
      const alive = await h.waitFor(() => h.marked(mark).length === 0, 1500).then(() => h.marked(mark))
      if (alive.length > 0) {
        left++
        for (const pid of alive) try { process.kill(pid, 'SIGKILL') } catch {}
      }
    }
    assert.equal(left, 0, `processes of the scope outlived the caller in ${left} of ${ROUNDS} rounds`)
  })
})
