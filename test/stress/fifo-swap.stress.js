'use strict'
// The FIFO-swap race (issue 12, finding 5): a C helper exchanges a regular file and
// two FIFOs at the name being read (renameat2 RENAME_EXCHANGE) as fast as it can, one
// FIFO held open and full of "FIFO" bytes, the other opened by no one (a blocking
// open of it would never return: the run would hang), while this process reads the
// name, sync and async, both resolvers. A FIFO swapped in between the type check and the open may be
// opened (non-blocking), but is found not regular through its descriptor and closed
// unread: every result must be the file's "FILE" or UNSAFE_ENTRY (or NOT_FOUND/
// FILE_CHANGED, which an exchange mid-walk can give), never FIFO bytes, and no call
// may block.
//
// Figure: reads, fifoReads (must be 0), blocked (calls over 5 s, the queueing of 64
// async calls on a loaded machine included: must be 0), the slowest call, and how
// often each outcome occurred.

const assert = require('node:assert/strict')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver } = require('../helpers/fs-layouts.js')
const { size, figure, nativeTool, removeTools, startReady, killAndWait, outcome } = require('./helpers.js')

const READS = size(200000, 20000)
const BLOCKED_MS = 5000

describe('stress: FIFO swapped in at the name being read', function () {
  this.timeout(0)
  before(function () {
    if (process.platform !== 'linux') this.skip()
    if (!nativeTool('fifo_swapper')) this.skip() // no C compiler
  })
  after(removeTools)

  for (const resolver of resolvers()) {
    it(`${resolver}: ${READS} reads, no FIFO read, no blocked call`, async function () {
      const s = makeSandbox()
      let swapper
      try {
        useResolver(resolver)
        const r = fa.openReadAuthoritySync(s.root)
        swapper = await startReady(nativeTool('fifo_swapper'), [s.root])
        const seen = { file: 0, fifoReads: 0, other: 0, unsafe: 0, notFound: 0, changed: 0, blocked: 0 }
        let slowest = 0
        const check = (v, ms) => {
          if (ms > slowest) slowest = ms
          if (ms > BLOCKED_MS) seen.blocked++
          if (v instanceof Uint8Array) {
            const text = Buffer.from(v).toString('latin1')
            if (text === 'FILE') seen.file++
            else if (text.includes('FIFO')) seen.fifoReads++
            else seen.other++
          } else if (v instanceof fa.FileAuthorityError && v.code === 'UNSAFE_ENTRY') seen.unsafe++
          else if (v instanceof fa.FileAuthorityError && v.code === 'FILE_CHANGED') seen.changed++
          else if (v === undefined) seen.notFound++
          else assert.fail(`unexpected outcome: ${v}`)
        }
        const asyncReads = Math.floor(READS / 4)
        for (let i = 0; i < READS - asyncReads; i++) {
          const t = process.hrtime.bigint()
          const v = outcome(() => r.readBytesSync(['name'], { maxBytes: 64 }))
          check(v, Number(process.hrtime.bigint() - t) / 1e6)
        }
        for (let done = 0; done < asyncReads; done += 64) {
          const batch = await Promise.all(Array.from({ length: 64 }, async () => {
            const t = process.hrtime.bigint()
            let v
            try {
              v = await r.readBytes(['name'], { maxBytes: 64 })
            } catch (err) {
              v = err
            }
            return [v, Number(process.hrtime.bigint() - t) / 1e6]
          }))
          for (const [v, ms] of batch) check(v, ms)
        }
        await killAndWait(swapper)
        swapper = undefined
        r.closeSync()
        const reads = Object.entries(seen).filter(([k]) => k !== 'blocked').reduce((a, [, n]) => a + n, 0)
        figure(`fifo-swap-${resolver}`, { reads, fifoReads: seen.fifoReads, blocked: seen.blocked, slowestMs: slowest.toFixed(1), file: seen.file, unsafeEntry: seen.unsafe, fileChanged: seen.changed, notFound: seen.notFound, other: seen.other })
        assert.equal(seen.fifoReads, 0, 'FIFO bytes were returned')
        assert.equal(seen.other, 0, 'bytes neither the file\'s nor the FIFO\'s were returned')
        assert.equal(seen.blocked, 0, 'a call blocked')
        // The race was real: both kinds were met at the name.
        assert.ok(seen.file > 0 && seen.unsafe > 0, JSON.stringify(seen))
      } finally {
        if (swapper) await killAndWait(swapper)
        s.cleanup()
      }
    })
  }
})
