'use strict'
// Shared by the node-lock tests: temporary directories and a driven holder process.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { fork } = require('node:child_process')
const { once } = require('node:events')

function tempDir () {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-node-lock-'))
}

const HOLDER = path.join(__dirname, 'fixtures', 'holder.js')

/** Forks fixtures/holder.js; `request(cmd, args)` resolves with its reply. */
async function startHolder (execArgv = []) {
  const child = fork(HOLDER, [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const pending = new Map()
  let next = 1
  child.on('message', (msg) => {
    const p = pending.get(msg.id)
    if (p === undefined) return
    pending.delete(msg.id)
    if (msg.ok) p.resolve(msg)
    else p.reject(Object.assign(new Error(msg.message), { code: msg.code }))
  })
  child.on('exit', () => {
    for (const p of pending.values()) p.reject(new Error('holder exited'))
    pending.clear()
  })
  const [ready] = await once(child, 'message')
  if (!ready.ready) throw new Error('holder did not start')
  return {
    child,
    pid: child.pid,
    request (cmd, args = {}) {
      return new Promise((resolve, reject) => {
        const id = next++
        pending.set(id, { resolve, reject })
        child.send({ id, cmd, ...args })
      })
    },
    async stop () {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGKILL')
      await exited
    }
  }
}

// What a holder writes into its guard file: nothing on Linux, where the kernel's lock
// table (/proc/locks) names the holder; elsewhere its record (src/node_lock/record.h).
const RECORDS = !(process.platform === 'linux' && fs.existsSync('/proc/locks'))
function ownRecord (pid = process.pid) {
  return RECORDS ? `agent-os-lock/1 ${pid}\n` : ''
}

function alive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

module.exports = { tempDir, startHolder, alive, ownRecord, RECORDS }
