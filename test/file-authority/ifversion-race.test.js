'use strict'
// An ifVersion write racing another writer never loses the other writer's content:
// two real processes, each running read-version -> ifVersion-write loops (a counter
// increment) on one file through the public API (one sync, one async), started
// together. With an atomic exchange (renameat2 RENAME_EXCHANGE) the final count must
// equal the number of writes that succeeded in both processes together, and every
// failure must be FILE_CHANGED. Under both resolvers (the portable walk forced with
// AGENT_OS_FA_RESOLVER=portable) and with the fallback without an atomic exchange
// (AGENT_OS_FA_NO_RENAMEAT2=1), where a version check is followed by a plain rename:
// there the package's writers exclude one another with a lock on the file being
// replaced (before that lock, this test lost 2 to 7 updates in 300 there).
//
// AOS_CAS_N sets the successful increments per process (default 150).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { makeSandbox, resolvers } = require('../helpers/fs-layouts.js')

const N = Number(process.env.AOS_CAS_N) || 150
const LIB = path.join(__dirname, '..', '..', 'lib', 'file-authority.js')

// One writer process: argv root, N, 'sync' | 'async'. Prints "ready", waits for a line
// on stdin, then increments until N writes succeeded (at most 200 N attempts), and
// prints one JSON line: { ok, writeFailures: { code: n }, readFailures: { code: n } }.
const WRITER = `
const fa = require(${JSON.stringify(LIB)})
const [root, nText, style] = process.argv.slice(1)
const n = Number(nText)
const r = fa.openReadAuthoritySync(root)
const w = fa.openWriteAuthoritySync(root)
const out = { ok: 0, attempts: 0, writeFailures: {}, readFailures: {}, bad: [] }
const count = (table, err) => {
  const key = err instanceof fa.FileAuthorityError ? err.code : 'not a FileAuthorityError: ' + err
  table[key] = (table[key] || 0) + 1
}
async function once () {
  out.attempts++
  let got
  try {
    got = style === 'sync' ? r.readVersionedSync(['counter'], { maxBytes: 64 }) : await r.readVersioned(['counter'], { maxBytes: 64 })
  } catch (err) {
    count(out.readFailures, err)
    return
  }
  const text = Buffer.from(got.bytes).toString()
  if (!/^[0-9]+$/.test(text)) out.bad.push(text)
  const next = String(Number(text) + 1)
  try {
    if (style === 'sync') w.writeTextSync(['counter'], next, { ifVersion: got.version })
    else await w.writeText(['counter'], next, { ifVersion: got.version })
    out.ok++
  } catch (err) {
    count(out.writeFailures, err)
  }
}
process.stdout.write('ready\\n')
process.stdin.once('data', async () => {
  while (out.ok < n && out.attempts < 200 * n) await once()
  r.closeSync()
  w.closeSync()
  process.stdout.write(JSON.stringify(out) + '\\n')
  process.exit(0)
})
`

function startWriter (root, style, env) {
  const child = spawn(process.execPath, ['-e', WRITER, root, String(N), style], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit']
  })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (d) => { out += d })
  const ready = new Promise((resolve, reject) => {
    const poll = () => (out.startsWith('ready\n') ? resolve() : setTimeout(poll, 5))
    poll()
    child.once('exit', (c, s) => reject(new Error(`writer exited (${c ?? s}) before it was ready`)))
  })
  const done = new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => {
      if (code !== 0) return reject(new Error(`writer exited (${code ?? signal}): ${out}`))
      try {
        resolve(JSON.parse(out.slice('ready\n'.length)))
      } catch (err) {
        reject(new Error(`writer printed ${JSON.stringify(out)}`))
      }
    })
  })
  done.catch(() => {})
  return { child, ready, done }
}

const sum = (table) => Object.values(table).reduce((a, b) => a + b, 0)

describe('file-authority: an ifVersion write racing another process', function () {
  this.timeout(600000)
  before(function () {
    if (process.platform === 'win32') this.skip() // the fallback switch and resolvers are POSIX's
  })

  for (const resolver of resolvers()) {
    for (const commit of ['renameat2', 'fallback']) {
      const env = {
        AGENT_OS_FA_RESOLVER: resolver === 'portable' ? 'portable' : '',
        AGENT_OS_FA_NO_RENAMEAT2: commit === 'fallback' ? '1' : ''
      }
      const title = commit === 'renameat2'
        ? `${resolver} resolver, atomic exchange: two processes x ${N} counter increments lose no update; every failure is FILE_CHANGED`
        : `${resolver} resolver, fallback without an atomic exchange (AGENT_OS_FA_NO_RENAMEAT2=1), the writers excluding each other by a lock on the replaced file: two processes x ${N} counter increments lose no update; every failure is FILE_CHANGED`
      it(title, async function () {
        if (commit === 'renameat2' && process.platform !== 'linux' && process.platform !== 'darwin') this.skip()
        const s = makeSandbox('aos-cas-')
        const writers = []
        try {
          fs.writeFileSync(path.join(s.root, 'counter'), '0')
          writers.push(startWriter(s.root, 'sync', env), startWriter(s.root, 'async', env))
          await Promise.all(writers.map((x) => x.ready))
          for (const x of writers) x.child.stdin.end('go\n')
          const [a, b] = await Promise.all(writers.map((x) => x.done))
          const final = Number(fs.readFileSync(path.join(s.root, 'counter'), 'utf8'))
          const succeeded = a.ok + b.ok
          const conflicts = sum(a.writeFailures) + sum(b.writeFailures) + sum(a.readFailures) + sum(b.readFailures)
          const line = `${commit}: counter ${final}, writes succeeded ${succeeded} (${a.ok} sync + ${b.ok} async), lost ${succeeded - final}, FILE_CHANGED ${conflicts} of ${a.attempts + b.attempts} attempts`
          console.log(`      ${line}`)
          for (const x of [a, b]) {
            assert.deepEqual(Object.keys(x.writeFailures).filter((k) => k !== 'FILE_CHANGED'), [], `a write failed otherwise: ${JSON.stringify(x.writeFailures)}`)
            assert.deepEqual(Object.keys(x.readFailures).filter((k) => k !== 'FILE_CHANGED'), [], `a read failed otherwise: ${JSON.stringify(x.readFailures)}`)
            assert.deepEqual(x.bad, [], 'a read returned bytes that were never written whole')
            assert.equal(x.ok, N, `a writer made too little progress: ${line}`)
          }
          // The race was real: the two processes met.
          assert.ok(conflicts > 0, `no write ever conflicted: ${line}`)
          assert.equal(final, succeeded, `an update was lost: ${line}`)
          assert.deepEqual(fs.readdirSync(s.root), ['counter'], 'a temporary file was left behind')
        } finally {
          for (const x of writers) if (x.child.exitCode === null && x.child.signalCode === null) x.child.kill('SIGKILL')
          s.cleanup()
        }
      })
    }
  }
})
