'use strict'
// Reads of a file written lately take a read lease for the length of one read
// (src/file_authority/posix_read.c): every write goes through a descriptor open for
// writing, which the kernel refuses a lease beside and holds back while one is held.
// What that must never do: end the reading process (the kernel signals a lease holder
// when an open for writing meets its lease: SIGIO by default, which ends a process),
// hang a writer, make a non-blocking open for writing fail (appendText, node-lock
// guards: EWOULDBLOCK while the holder lets go), or let a read return bytes of two
// states. Real processes, real opens; Linux only (leases are a Linux call).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { makeSandbox } = require('../helpers/fs-layouts.js')

const LIB = path.join(__dirname, '..', '..', 'lib')
const MS = Number(process.env.AGENT_OS_LEASE_MS) || 2000

// Runs `code` in a child node process with ROOT and MS in its environment; resolves to
// { code, signal, out } (out: the last line it printed, parsed as JSON).
function child (code, root) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', code], {
      env: { ...process.env, ROOT: root, MS: String(MS), LIB },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    p.stdout.on('data', (d) => { out += d })
    p.stderr.on('data', (d) => { err += d })
    p.on('error', reject)
    p.on('close', (code, signal) => {
      const last = out.trim().split('\n').pop()
      let parsed
      try { parsed = JSON.parse(last) } catch { parsed = undefined }
      resolve({ code, signal, out: parsed, err })
    })
  })
}

// Reads ['f'] whole, sync, for MS: every result must be one writer state (a line of one
// repeated letter), FILE_CHANGED allowed; prints the counts.
const READER = `
const fa = require(process.env.LIB + '/file-authority.js')
const r = fa.openReadAuthoritySync(process.env.ROOT)
const counts = { reads: 0, changed: 0, mixed: 0, missing: 0 }
const end = Date.now() + Number(process.env.MS)
while (Date.now() < end) {
  try {
    const b = r.readBytesSync(['f'], { maxBytes: 1 << 20 })
    if (b === undefined) { counts.missing++; continue }
    counts.reads++
    const s = b.toString()
    if (s.length > 0 && s !== s[0].repeat(s.length)) counts.mixed++
  } catch (e) {
    if (e.code !== 'FILE_CHANGED') throw e
    counts.changed++
  }
}
console.log(JSON.stringify(counts))
`

describe('file-authority: the read lease on a file written lately', function () {
  this.timeout(60000 + 4 * MS)
  let s
  before(function () {
    if (process.platform !== 'linux') this.skip() // F_SETLEASE is Linux's
  })
  beforeEach(function () {
    s = makeSandbox('aos-lease-')
    fs.writeFileSync(path.join(s.root, 'f'), 'a'.repeat(65536))
  })
  afterEach(function () { s.cleanup() })

  it('a writer opening the file again and again (blocking opens) is never stuck, and the reader is never signalled to death', async function () {
    // The writer rewrites the file in place with one letter per write: open, pwrite,
    // close, so its opens keep meeting the reader's leases.
    const writer = child(`
const fs = require('node:fs')
const f = process.env.ROOT + '/f'
let writes = 0
const end = Date.now() + Number(process.env.MS)
while (Date.now() < end) {
  const fd = fs.openSync(f, 'r+')
  fs.writeSync(fd, Buffer.alloc(65536, 97 + (writes % 26)), 0, 65536, 0)
  fs.closeSync(fd)
  writes++
}
console.log(JSON.stringify({ writes }))
`, s.root)
    const reader = child(READER, s.root)
    const [w, r] = await Promise.all([writer, reader])
    assert.equal(r.signal, null, `the reader ended by ${r.signal}`)
    assert.equal(r.code, 0, r.err)
    assert.equal(w.code, 0, w.err)
    assert.ok(w.out.writes > 0 && r.out.reads > 0, JSON.stringify({ w: w.out, r: r.out }))
    assert.equal(r.out.mixed, 0, `reads of two states: ${JSON.stringify(r.out)}`)
  })

  it('appendTextSync (a non-blocking open for writing) never fails while reads hold leases', async function () {
    const appender = child(`
const fa = require(process.env.LIB + '/file-authority.js')
const w = fa.openWriteAuthoritySync(process.env.ROOT)
const counts = { appends: 0, failures: {} }
const end = Date.now() + Number(process.env.MS)
while (Date.now() < end) {
  try {
    w.appendTextSync(['f'], 'a')
    counts.appends++
  } catch (e) {
    const k = e.code + ' ' + (e.hostCode || '')
    counts.failures[k] = (counts.failures[k] || 0) + 1
  }
}
console.log(JSON.stringify(counts))
`, s.root)
    const reader = child(READER, s.root)
    const [a, r] = await Promise.all([appender, reader])
    assert.equal(r.signal, null, `the reader ended by ${r.signal}`)
    assert.equal(r.code, 0, r.err)
    assert.equal(a.code, 0, a.err)
    assert.deepEqual(a.out.failures, {}, JSON.stringify(a.out))
    assert.ok(a.out.appends > 0 && r.out.reads > 0, JSON.stringify({ a: a.out, r: r.out }))
  })

  it('a node-lock guard file read while locks are taken: every acquisition works', async function () {
    // The guard is a regular file in the root that a reader reads while other
    // processes take and release the lock through it (a non-blocking open for writing).
    fs.writeFileSync(path.join(s.root, 'f'), '') // a guard file: empty, or its holder's record
    const locker = child(`
const { tryAcquire } = require(process.env.LIB + '/node-lock.js')
const counts = { held: 0, busy: 0, failures: {} }
const end = Date.now() + Number(process.env.MS)
while (Date.now() < end) {
  try {
    const l = tryAcquire(process.env.ROOT + '/f')
    if (l) { counts.held++; l.release() } else counts.busy++
  } catch (e) {
    const k = e.code + ' ' + (e.hostCode || '')
    counts.failures[k] = (counts.failures[k] || 0) + 1
  }
}
console.log(JSON.stringify(counts))
`, s.root)
    const reader = child(READER, s.root)
    const [l, r] = await Promise.all([locker, reader])
    assert.equal(r.signal, null, `the reader ended by ${r.signal}`)
    assert.equal(l.code, 0, l.err)
    assert.deepEqual(l.out.failures, {}, JSON.stringify(l.out))
    assert.ok(l.out.held > 0, JSON.stringify(l.out))
  })
})
