'use strict'
// Parent side of bench/lib/fa-worker.js: a forked Node process with its own
// environment, asked for timings by message.

const { fork } = require('node:child_process')
const path = require('node:path')

class Worker {
  constructor (env) {
    this.proc = fork(path.join(__dirname, 'fa-worker.js'), [], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    this.next = 1
    this.pending = new Map()
    this.proc.on('message', (msg) => {
      const p = this.pending.get(msg.id)
      if (!p) return
      this.pending.delete(msg.id)
      if (msg.error) p.reject(new Error(msg.error))
      else p.resolve(msg)
    })
    this.proc.on('exit', (code, signal) => {
      for (const p of this.pending.values()) p.reject(new Error(`worker exited (${code ?? signal})`))
      this.pending.clear()
    })
  }

  ask (msg) {
    const id = this.next++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.proc.send({ ...msg, id })
    })
  }

  async close () {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return
    const exited = new Promise((resolve) => this.proc.once('exit', resolve))
    try {
      this.proc.send({ op: 'exit', id: 0 })
    } catch {}
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  }
}

module.exports = { Worker }
