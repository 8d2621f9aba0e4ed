'use strict'
// `npm run demo`, process part: a detached tree with a member that ignores SIGTERM
// and a member that escaped with setsid, killed with killProcessTree.

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { killProcessTree } = require('../lib/process.js')

function stat (pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ')
    const comm = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'))
    return { pid, comm, state: f[0], ppid: +f[1], pgid: +f[2], sid: +f[3], start: f[19] }
  } catch {
    return null
  }
}

function ignoresTerm (pid) {
  try {
    const m = /SigIgn:\s*([0-9a-f]+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m !== null && (BigInt('0x' + m[1]) & (1n << 14n)) !== 0n // SIGTERM is 15
  } catch {
    return false
  }
}

const alive = (p) => { const s = stat(p.pid); return s !== null && s.start === p.start && !'ZX'.includes(s.state) }

module.exports = async function demo (dir) {
  if (process.platform !== 'linux') {
    console.log('(this demo reads /proc; run it on Linux)')
    return
  }
  const file = path.join(dir, 'pids')
  const script = [
    'sleep 1000 & echo $! >> "$F"', // obeys SIGTERM
    '(trap "" TERM; echo $BASHPID >> "$F"; sleep 1000 & echo $! >> "$F"; wait) &', // ignores it
    'setsid sleep 1000 & echo $! >> "$F"', // leaves the group and the session
    'echo $$ >> "$F"',
    'wait'
  ].join('\n')
  const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore', env: { ...process.env, F: file } })
  let pids = []
  for (let i = 0; i < 500 && pids.length < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
    try { pids = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) } catch {}
  }
  await new Promise((resolve) => setTimeout(resolve, 50)) // let setsid and exec happen
  const tree = pids.map(stat).filter(Boolean)
  console.log(`tree of child ${child.pid} (spawned detached: its own group and session):`)
  console.log('  pid     ppid    pgid    sid     command')
  for (const p of tree) {
    const note = p.sid !== child.pid ? '  <- setsid escapee' : ignoresTerm(p.pid) ? '  <- ignores SIGTERM' : ''
    console.log(`  ${String(p.pid).padEnd(8)}${String(p.ppid).padEnd(8)}${String(p.pgid).padEnd(8)}${String(p.sid).padEnd(8)}${p.comm}${note}`)
  }
  const graceMs = 500
  const t0 = process.hrtime.bigint()
  await killProcessTree(child, { graceMs })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  const left = tree.filter(alive)
  console.log(`killProcessTree(child, { graceMs: ${graceMs} }) settled in ${ms.toFixed(1)} ms` +
    ` (SIGTERM, then SIGKILL after the grace for the member ignoring SIGTERM)`)
  console.log(`child ended by ${child.signalCode}; survivors among ${tree.length} processes: ${left.length}`)
  for (const p of left) process.kill(p.pid, 'SIGKILL')
}
