'use strict'
// appendText / appendBytes through the package, across processes and threads (contract
// 0.3: "All bytes of one call are written contiguously at the end of the file:
// concurrent appends through this package, from any thread or process, never
// interleave within a call. A crash during an append may leave a prefix of that call's
// bytes at the end and nothing else changed"):
// - 8 processes append AOS_APPEND_N records each (200 here; 2 000 in
//   test/stress/append.stress.js) of 1 B ... 64 KiB to one file, sync, async and as text,
//   one of them writing with fs.appendFileSync (no part of the package): every record
//   whole and exactly once;
// - one process and three worker threads, the same;
// - an appender killed with SIGKILL at a random instant (AOS_APPEND_KILLS times, 10
//   here, 100 in the stress run) while appending records of up to 4 MiB: whole records,
//   then at most a prefix of the last;
// - durable: the flushes each form makes, counted with strace.
// The options, refusals and hostile entries are the conformance table's
// (test/helpers/conformance-layouts.js, both faces); the C core's own tests are
// append-core.test.js.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const R = require('../helpers/append-records.js')
const { skipBecause } = require('../helpers/platform.js')

const N = Number(process.env.AOS_APPEND_N || 200)
const KILLS = Number(process.env.AOS_APPEND_KILLS || 10)

function line (r) {
  return `records ${r.records} whole ${r.whole} lost ${r.lost} duplicated ${r.duplicated} torn ${r.torn} (${(r.bytes / 1048576).toFixed(0)} MiB, ${r.ms} ms)`
}

describe('file-authority: appends from many processes and threads', function () {
  this.timeout(600000)
  let dir
  beforeEach(function () { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-append-')) })
  afterEach(function () { fs.rmSync(dir, { recursive: true, force: true }) })

  it(`8 processes x ${N} appends of 1 B ... 64 KiB (sync, async, text; one writing with fs.appendFileSync): every record whole and exactly once`, async function () {
    const forms = ['sync', 'async', 'mixed', 'sync', 'async', 'mixed', 'sync', 'foreign']
    const r = await R.stress(dir, forms.map((form, i) => [i * 16, form]), N)
    console.log(`      ${line(r)}`)
    assert.deepEqual([r.whole, r.lost, r.duplicated, r.torn], [r.records, 0, 0, 0])
  })

  it(`one process and 3 worker threads x ${N} appends: every record whole and exactly once`, async function () {
    const r = await R.stress(dir, [[0, 'mixed', { WORKERS: '3' }]], N)
    console.log(`      ${line(r)}`)
    assert.deepEqual([r.whole, r.lost, r.duplicated, r.torn], [r.records, 0, 0, 0])
  })

  it(`an appender killed with SIGKILL (${KILLS} times) leaves whole records and at most a prefix of its last call`, async function () {
    const { whole, tails, bad } = await R.killRounds(dir, KILLS)
    console.log(`      kills ${KILLS} whole ${whole} tails ${tails} bad ${bad}`)
    assert.equal(bad, 0)
    assert.ok(whole > 0, 'the appender got to append before it was killed')
  })

  it('durable: an append flushes the file (and the parent when it created the file); durable: false flushes nothing; nor does a write', function () {
    if (process.platform !== 'linux' || spawnSync('strace', ['-V']).status !== 0) skipBecause(this, 'strace on Linux')
    const script = `
      const fa = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'file-authority.js'))})
      const w = fa.openWriteAuthoritySync(process.argv[1])
      const mark = (m) => { try { require('node:fs').accessSync('/aos-durable-' + m) } catch {} }
      mark('create'); w.appendTextSync(['d', 'log'], 'a', { createParents: true })
      mark('append'); w.appendTextSync(['d', 'log'], 'b')
      mark('volatile-create'); w.appendTextSync(['d', 'log2'], 'a', { durable: false })
      mark('volatile'); w.appendBytesSync(['d', 'log2'], Uint8Array.of(1), { durable: false })
      mark('write'); w.writeTextSync(['d', 'w'], 'x')
      mark('write-volatile'); w.writeTextSync(['d', 'w'], 'y', { durable: false })
      mark('end')`
    const trace = path.join(dir, 'trace')
    const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=access,fsync,fdatasync', '-o', trace, process.execPath, '-e', script, dir], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const counts = {}
    let at
    for (const l of fs.readFileSync(trace, 'utf8').split('\n')) {
      const m = /access\("\/aos-durable-([a-z-]+)"/.exec(l)
      if (m) {
        at = m[1]
        counts[at] = 0
      } else if (at !== undefined && /\b(fsync|fdatasync)\(/.test(l)) {
        counts[at]++
      }
    }
    assert.deepEqual(counts, { create: 2, append: 1, 'volatile-create': 0, volatile: 0, write: 2, 'write-volatile': 0, end: 0 })
  })
})
