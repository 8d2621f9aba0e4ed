'use strict'
// Crash consistency under concurrent writers. Several writer processes replace the same
// file at once (and each its own nested file, created with createParents), and are
// killed with SIGKILL at random instants — one at a time, and now and then all at
// once — and restarted. After every kill the shared file and every nested file must be
// exactly one complete version written by one of the writers: never a mix, never a
// truncation. Both staging modes run (openat2 resolver: O_TMPFILE staging, named only
// once complete; portable: an exclusive random name from the start).
//
// Figures: kills, torn (files that are no complete version: must be 0), leftover
// temporary files (a killed portable-mode writer cannot remove its staging file; in
// openat2 mode the O_TMPFILE staging file has a name only between linkat and the
// rename, and docs/file-authority.md allows a kill there to leave it: the figure says
// how often that happens with concurrent writers). Anything else in the tree fails.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, walkTree } = require('../helpers/fs-layouts.js')
const { size, figure, killAndWait, sleep } = require('./helpers.js')
const { version, parse } = require('./fixtures/versions.js')

const KILLS = size(400, 40)
const WRITERS = 3
const WRITER = path.join(__dirname, 'fixtures', 'fa-writer.js')

function startWriter (root, id, resolver, seen) {
  const child = spawn(process.execPath, [WRITER, root, String(id), resolver], { stdio: ['ignore', 'pipe', 'inherit'] })
  child.once('exit', (code, signal) => { if (signal !== 'SIGKILL') seen.writerFailures++ })
  const ready = new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8')
    child.stdout.once('data', () => resolve(child))
    child.once('exit', (c, s) => reject(new Error(`writer exited (${c ?? s}) before it was ready`)))
  })
  return ready
}

describe('stress: crash consistency with concurrent writers', function () {
  this.timeout(0)
  before(function () {
    if (process.platform !== 'linux') this.skip()
  })

  for (const resolver of resolvers()) {
    it(`${resolver} mode: ${WRITERS} writers on one file, ${KILLS} SIGKILLs at random instants, no torn file`, async function () {
      const s = makeSandbox('aos-stress-crash-')
      const writers = new Map()
      try {
        fs.writeFileSync(path.join(s.root, 'target'), version('0', 0))
        const r = fa.openReadAuthoritySync(s.root)
        const seen = { kills: 0, torn: 0, checks: 0, byWriter: new Set(), writerFailures: 0 }
        const check = () => {
          const files = [['target']]
          for (let id = 1; id <= WRITERS; id++) files.push(['n', String(id), 'f'])
          for (const segs of files) {
            let bytes
            try {
              bytes = r.readBytesSync(segs, { maxBytes: 1 << 20 })
            } catch (err) {
              // A directory being created by createParents right now, or the committed
              // name replaced meanwhile: a refusal, never a torn read.
              if (err.code === 'FILE_CHANGED') continue
              throw err
            }
            if (bytes === undefined) continue // that writer has not written its nested file yet
            seen.checks++
            const v = parse(Buffer.from(bytes).toString())
            if (v === undefined) seen.torn++
            else if (segs[0] === 'target') seen.byWriter.add(v.id)
          }
        }
        for (let k = 0; k < KILLS;) {
          for (let id = 1; id <= WRITERS; id++) {
            if (!writers.has(id)) writers.set(id, await startWriter(s.root, id, resolver, seen))
          }
          await sleep(Math.floor(Math.random() * 30))
          const victims = k % 10 === 9 ? [...writers.keys()] : [1 + Math.floor(Math.random() * WRITERS)]
          await Promise.all(victims.map((id) => killAndWait(writers.get(id))))
          for (const id of victims) writers.delete(id)
          k += victims.length
          seen.kills += victims.length
          check()
        }
        for (const [id, child] of writers) {
          await killAndWait(child)
          writers.delete(id)
        }
        check()
        r.closeSync()
        const leftovers = walkTree(s.root).filter((p) => /(^|\/)\.aos-[0-9a-f]{32}\.tmp$/.test(p))
        const unexpected = walkTree(s.root).filter((p) => !/(^|\/)\.aos-[0-9a-f]{32}\.tmp$/.test(p) && !/^(target|n|n\/\d|n\/\d\/f)$/.test(p))
        figure(`crash-${resolver}`, { kills: seen.kills, torn: seen.torn, checks: seen.checks, leftoverTempFiles: leftovers.length, writersSeen: seen.byWriter.size })
        assert.equal(seen.torn, 0, 'a file was not one complete version')
        assert.deepEqual(unexpected, [])
        assert.equal(seen.writerFailures, 0, 'a writer failed on its own')
        assert.ok(seen.byWriter.size > 1, 'the writers did not all get to commit')
      } finally {
        for (const child of writers.values()) await killAndWait(child)
        s.cleanup()
      }
    })
  }
})
