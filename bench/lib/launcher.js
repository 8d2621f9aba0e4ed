'use strict'
// The C loops are separate programs, and starting one is a fork. A fork of the
// measuring process write-protects its memory (copy-on-write) until the child execs,
// and every page it then writes faults once: measured here, the next 2 000 small
// reads of any in-process implementation (the package, fs, Koffi) ran at 2x-2.5x
// their cost. Run from the measuring process, the C loops would slow whichever
// in-process implementation the rotation put after them. So they are started from
// this child instead: forked once, before any timing, it runs each loop with
// spawnSync on request and answers with what the loop printed.

const { fork, spawnSync } = require('node:child_process')

if (require.main === module) {
  process.on('message', (msg) => {
    if (msg.op === 'exit') return process.disconnect()
    const r = spawnSync(msg.program, msg.args, { encoding: 'utf8' })
    process.send({ id: msg.id, status: r.status, signal: r.signal, stdout: r.stdout || '', stderr: r.stderr || '', error: r.error ? String(r.error.message) : undefined })
  })
} else {
  let proc
  let next = 1
  const pending = new Map()

  function start () {
    proc = fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    proc.on('message', (msg) => {
      const p = pending.get(msg.id)
      if (!p) return
      pending.delete(msg.id)
      p.resolve(msg)
    })
    proc.on('exit', (code, signal) => {
      for (const p of pending.values()) p.reject(new Error(`launcher exited (${code ?? signal})`))
      pending.clear()
      proc = undefined
    })
  }

  /** Runs `program args` to its end in the launcher: { status, signal, stdout, stderr }. */
  function run (program, args) {
    if (proc === undefined) start()
    const id = next++
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject })
      proc.send({ op: 'run', id, program, args })
    })
  }

  /** Starts the launcher now (before any timing), so its own fork is not timed. */
  function ready () {
    if (proc === undefined) start()
  }

  async function close () {
    if (proc === undefined) return
    const p = proc
    const exited = new Promise((resolve) => p.once('exit', resolve))
    try { p.send({ op: 'exit' }) } catch {}
    const timer = setTimeout(() => p.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  }

  module.exports = { run, ready, close }
}
