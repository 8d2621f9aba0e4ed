'use strict'
// Torn-read detection. A C helper rewrites a file in place (one pwrite of the same
// size with another letter), or does so and sets the modification time back to what
// it was (restore: the attacker of issue 12, finding 3, whose edits only the ctime
// shows; the file dated an hour back, so that a reader trusting the mtime sees a file
// at rest), or appends to it (truncating back now and then), as fast as it can, while
// this process reads it through a ReadAuthority, sync and async. Every complete
// version of the file is one letter repeated (pwrite, restore: SIZE bytes; append:
// SIZE + k*CHUNK bytes). A returned result must be one of them; FILE_CHANGED
// and OVER_BUDGET are allowed outcomes, anything else fails the test.
//
// Figure: reads, torn (returned results that are no complete version: must be 0),
// and how often each allowed outcome occurred.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const fa = require('../../lib/file-authority.js')
const { makeSandbox } = require('../helpers/fs-layouts.js')
const { size, figure, nativeTool, removeTools, startReady, killAndWait, outcome } = require('./helpers.js')

const READS = size(200000, 20000)
const SIZE = 64 * 1024
const CHUNK = 4096
// restore: a larger file (a read spans many of the writer's edits' time) and fewer reads.
const MODES = {
  pwrite: { reads: READS, size: SIZE },
  restore: { reads: size(4000, 600), size: 4 * 1024 * 1024 },
  append: { reads: READS, size: SIZE }
}

function classify (bytes, mode, SIZE) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const letter = b[0]
  const whole = b.length > 0 && letter >= 0x41 && letter <= 0x5a && b.every((c) => c === letter)
  if (!whole) return false
  if (mode !== 'append') return b.length === SIZE
  return b.length >= SIZE && (b.length - SIZE) % CHUNK === 0
}

describe('stress: torn reads', function () {
  this.timeout(0)
  before(function () {
    if (process.platform !== 'linux') this.skip()
    if (!nativeTool('rewriter')) this.skip() // no C compiler
  })
  after(removeTools)

  for (const [mode, { reads: READS, size: SIZE }] of Object.entries(MODES)) {
    it(`${mode}: ${READS} reads of a file changed in place, no torn result returned`, async function () {
      const s = makeSandbox()
      let writer
      try {
        const file = path.join(s.root, 'f')
        fs.writeFileSync(file, 'A'.repeat(SIZE))
        if (mode === 'restore') fs.utimesSync(file, new Date(Date.now() - 3600e3), new Date(Date.now() - 3600e3))
        const r = fa.openReadAuthoritySync(s.root)
        writer = await startReady(nativeTool('rewriter'), [mode, file, String(SIZE), String(CHUNK)])
        const seen = { whole: 0, torn: 0, changed: 0, overBudget: 0 }
        const maxBytes = mode === 'append' ? 2 * SIZE : SIZE // append: OVER_BUDGET happens too
        const check = (v) => {
          if (v instanceof Uint8Array) {
            if (classify(v, mode, SIZE)) seen.whole++
            else seen.torn++
          } else if (v instanceof fa.FileAuthorityError && v.code === 'FILE_CHANGED') {
            seen.changed++
          } else if (v instanceof fa.FileAuthorityError && v.code === 'OVER_BUDGET') {
            seen.overBudget++
          } else {
            assert.fail(`unexpected outcome: ${v}`)
          }
        }
        const asyncReads = Math.floor(READS / 4)
        for (let i = 0; i < READS - asyncReads; i++) {
          check(outcome(() => r.readBytesSync(['f'], { maxBytes })))
        }
        // Through the worker pool too, several reads in flight at once.
        for (let done = 0; done < asyncReads; done += 64) {
          const batch = await Promise.allSettled(Array.from({ length: 64 }, () => r.readBytes(['f'], { maxBytes })))
          for (const b of batch) check(b.status === 'fulfilled' ? b.value : b.reason)
        }
        await killAndWait(writer)
        writer = undefined
        r.closeSync()
        const reads = seen.whole + seen.torn + seen.changed + seen.overBudget
        figure(`torn-read-${mode}`, { reads, torn: seen.torn, whole: seen.whole, fileChanged: seen.changed, overBudget: seen.overBudget })
        assert.equal(seen.torn, 0, 'a torn result was returned')
        // The race was real: the file did change under reads, and reads did succeed.
        assert.ok(seen.changed > 0 && seen.whole > 0, JSON.stringify(seen))
      } finally {
        if (writer) await killAndWait(writer)
        s.cleanup()
      }
    })
  }
})
