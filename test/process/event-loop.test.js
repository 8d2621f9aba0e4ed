'use strict'
// The promise settles even when nothing else keeps the event loop alive, and a
// finished kill leaves no timer behind that would hold the process open.

const assert = require('node:assert/strict')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')

const run = promisify(execFile)
const lib = path.join(__dirname, '..', '..', 'lib', 'process.js')

function script (body) {
  return `
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const { killProcessTree } = require(${JSON.stringify(lib)})
${body}
`
}

describe('process: event loop', function () {
  before(function () {
    if (process.platform !== 'linux') this.skip() // /proc and shell trees: Linux only
  })
  it('settles and finishes the escalation after the child exited, though only its timers remain', async function () {
    // The root obeys SIGTERM and exits; its descendant ignores it. Once the root's
    // 'exit' is seen, nothing but killProcessTree's own timer keeps the loop alive:
    // the script must still see the promise settle (and the descendant killed).
    const { stdout } = await run(process.execPath, ['-e', script(`
const child = spawn('bash', ['-c', 'bash -c "trap \\\\"\\\\" TERM; echo \\\\$\\\\$; exec sleep 1000" & wait'],
  { detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
child.stdout.once('data', (d) => {
  const pid = Number(String(d).trim())
  child.stdout.destroy()
  killProcessTree(child, { graceMs: 300 }).then(() => {
    let alive = true
    try { alive = !/\\) [ZX] /.test(fs.readFileSync((process.env.AOS_TEST_PROC || '/proc') + '/' + pid + '/stat', 'utf8')) } catch { alive = false }
    console.log(alive ? 'survivor' : 'settled')
  })
})
`)])
    assert.equal(stdout.trim(), 'settled')
  })

  it('leaves no timer behind once settled: the process exits without waiting for graceMs', async function () {
    // A grace of ten minutes: if a timer outlived the settled promise, this script
    // would not exit before the test's timeout.
    const { stdout } = await run(process.execPath, ['-e', script(`
const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
killProcessTree(child, { graceMs: 600000 }).then(() => console.log('settled', child.signalCode))
`)])
    assert.equal(stdout.trim(), 'settled SIGTERM')
  })
})

describe('process: environments', function () {
  before(function () {
    if (process.platform !== 'linux') this.skip() // /proc and shell trees: Linux only
  })
  it('rejects with UNSUPPORTED_BACKEND when the binding cannot load, and signals nothing', async function () {
    const empty = require('node:fs').mkdtempSync(path.join(require('node:os').tmpdir(), 'aos-nobinding-'))
    try {
      const { stdout } = await run(process.execPath, ['-e', script(`
const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
killProcessTree(child).then(() => console.log('resolved'), (err) => {
  console.log(err.code, err instanceof Error, child.exitCode === null && child.signalCode === null)
  child.kill('SIGKILL')
})
`)], { env: { ...process.env, AGENT_OS_BINDING_ROOT: empty } })
      assert.equal(stdout.trim(), 'UNSUPPORTED_BACKEND true true')
    } finally {
      require('node:fs').rmSync(empty, { recursive: true, force: true })
    }
  })

  it('works in a worker thread', async function () {
    const { Worker } = require('node:worker_threads')
    const w = new Worker(script(`
const { parentPort } = require('node:worker_threads')
const child = spawn('bash', ['-c', 'trap "" TERM; sleep 1000 & echo $!; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
child.stdout.once('data', async (d) => {
  const pid = Number(String(d).trim())
  await killProcessTree(child, { graceMs: 50 })
  let alive = true
  try { alive = !/\\) [ZX] /.test(fs.readFileSync((process.env.AOS_TEST_PROC || '/proc') + '/' + pid + '/stat', 'utf8')) } catch { alive = false }
  parentPort.postMessage([child.signalCode, alive])
})
`), { eval: true })
    const [msg] = await require('node:events').once(w, 'message')
    assert.deepEqual(msg, ['SIGKILL', false])
    await w.terminate()
  })

  it('a worker terminated in the middle of a kill tears down cleanly', async function () {
    const { Worker } = require('node:worker_threads')
    const w = new Worker(script(`
const { parentPort } = require('node:worker_threads')
const child = spawn('bash', ['-c', 'trap "" TERM; sleep 1000 & echo $! $$; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
child.stdout.once('data', (d) => {
  killProcessTree(child, { graceMs: 60000 })
  setTimeout(() => parentPort.postMessage(String(d).trim().split(' ').map(Number)), 50)
})
`), { eval: true })
    const [pids] = await require('node:events').once(w, 'message')
    await w.terminate()
    for (const pid of pids) {
      try { process.kill(pid, 'SIGKILL') } catch {}
    }
    assert.equal(pids.length, 2)
  })
})
