'use strict'
// Path-swap races. A separate process swaps a directory below the root with a symlink
// to a directory outside, in a tight loop (rename(2) sequences, and renameat2
// RENAME_EXCHANGE), while this process resolves through that directory: at least
// 50 000 reads per resolver and swap kind, plus listings and writes. Every result
// must be one of the allowed outcomes; nothing outside is ever read, listed or written.
//
// AGENT_OS_RACE_ITERATIONS raises (or lowers, for a quick local run) the count.

const assert = require('node:assert')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver, walkTree } = require('../helpers/fs-layouts.js')

const ITERATIONS = Number(process.env.AGENT_OS_RACE_ITERATIONS) ||
  (process.env.AGENT_OS_STRESS === 'full' ? 500000 : 50000)

const SWAPPER_C = `
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
/* swapper exchange|rename DIR LINK TMP: swaps DIR (a directory) and LINK (a symlink)
 * until killed; prints "go" once the loop runs. */
int main(int argc, char **argv) {
  if (argc != 5) return 2;
  const char *dir = argv[2], *link = argv[3], *tmp = argv[4];
  int exchange = strcmp(argv[1], "exchange") == 0;
  for (unsigned long i = 0;; i++) {
    if (exchange) {
      if (renameat2(AT_FDCWD, dir, AT_FDCWD, link, RENAME_EXCHANGE) != 0) return 3;
    } else {
      if (rename(dir, tmp) || rename(link, dir) || rename(dir, link) || rename(tmp, dir)) return 4;
    }
    if (i == 0) { fputs("go\\n", stdout); fflush(stdout); }
  }
}
`

let swapperBin

function buildSwapper () {
  if (swapperBin !== undefined) return swapperBin
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-swapper-'))
  fs.writeFileSync(path.join(dir, 'swapper.c'), SWAPPER_C)
  const cc = process.env.CC || 'cc'
  const r = spawnSync(cc, ['-O2', '-o', path.join(dir, 'swapper'), path.join(dir, 'swapper.c')], { encoding: 'utf8' })
  swapperBin = r.status === 0 ? path.join(dir, 'swapper') : null
  return swapperBin
}

async function startSwapper (mode, s) {
  const child = spawn(buildSwapper(), [mode, path.join(s.root, 'd'), path.join(s.root, 'l'), path.join(s.root, 'd.tmp')],
    { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve)
    child.once('exit', (c) => reject(new Error(`swapper exited ${c}`)))
  })
  return child
}

async function stop (child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

function outcome (fn) {
  try {
    return fn()
  } catch (err) {
    return err
  }
}

function isUnsafeAt0 (v) {
  return v instanceof fa.FileAuthorityError && v.code === 'UNSAFE_ENTRY' && v.segmentIndex === 0
}

// A directory on the way renamed while a listing or a change runs (here: exchanged with
// the link, within the root) makes the call FILE_CHANGED: a watch sees that it moved, and
// its path cannot tell a move out of the root and back from a move within it.
function isMoved (v) {
  return v instanceof fa.FileAuthorityError && v.code === 'FILE_CHANGED' && v.segmentIndex === undefined
}

describe('file-authority path-swap races', function () {
  this.timeout(300000)

  before(function () {
    if (process.platform !== 'linux') this.skip()
    if (!buildSwapper()) this.skip() // no C compiler on this host
  })
  after(function () {
    if (swapperBin) fs.rmSync(path.dirname(swapperBin), { recursive: true, force: true })
  })

  for (const resolver of resolvers()) {
    for (const mode of ['rename', 'exchange']) {
      it(`${resolver} resolver, ${mode} swaps: ${ITERATIONS} reads plus listings and writes, zero escapes`, async function () {
        const s = makeSandbox()
        let swapper
        try {
          fs.mkdirSync(path.join(s.root, 'd'))
          fs.writeFileSync(path.join(s.root, 'd', 'secret'), 'INSIDE')
          fs.symlinkSync(s.outside, path.join(s.root, 'l'))
          assert.strictEqual(useResolver(resolver), resolver)
          const r = fa.openReadAuthoritySync(s.root)
          const w = fa.openWriteAuthoritySync(s.root)
          swapper = await startSwapper(mode, s)
          const seen = { inside: 0, missing: 0, unsafe: 0, listed: 0, written: 0, writeRefused: 0 }
          for (let i = 0; i < ITERATIONS; i++) {
            const v = outcome(() => r.readBytesSync(['d', 'secret'], { maxBytes: 64 }))
            if (v instanceof Uint8Array) {
              assert.strictEqual(Buffer.from(v).toString(), 'INSIDE', 'read escaped the root')
              seen.inside++
            } else if (v === undefined) {
              seen.missing++
            } else {
              assert.ok(isUnsafeAt0(v), `unexpected outcome: ${v}`)
              seen.unsafe++
            }
            if (i % 16 === 0) {
              const l = outcome(() => r.listSync(['d']))
              if (Array.isArray(l)) {
                assert.ok(l.some((e) => e.name === 'secret'), 'listing escaped the root')
                assert.ok(l.every((e) => e.name === 'secret' || e.name === 'w'))
                seen.listed++
              } else {
                assert.ok(l === undefined || isUnsafeAt0(l) || isMoved(l), `unexpected listing outcome: ${l}`)
              }
            }
            if (i % 500 === 0) {
              const x = outcome(() => w.writeTextSync(['d', 'w'], 'planted'))
              if (x === undefined) {
                seen.written++
              } else {
                assert.ok(isUnsafeAt0(x) || isMoved(x) || (x.code === 'HOST_IO' && x.hostCode === 'ENOENT' && x.segmentIndex === 0),
                  `unexpected write outcome: ${x}`)
                seen.writeRefused++
              }
            }
          }
          // An async batch too: the same outcomes through the worker pool.
          const batch = await Promise.allSettled(Array.from({ length: 2000 }, () => r.readBytes(['d', 'secret'], { maxBytes: 64 })))
          for (const b of batch) {
            if (b.status === 'fulfilled') {
              assert.ok(b.value === undefined || Buffer.from(b.value).toString() === 'INSIDE', 'async read escaped the root')
            } else {
              assert.ok(isUnsafeAt0(b.reason), `unexpected async outcome: ${b.reason}`)
            }
          }
          await stop(swapper)
          swapper = undefined
          r.closeSync()
          w.closeSync()
          // The race was real: both the directory and the link were met.
          assert.ok(seen.inside > 0 && seen.unsafe > 0, JSON.stringify(seen))
          assert.deepStrictEqual(fs.readdirSync(s.outside), ['secret'], 'a write escaped the root')
          assert.strictEqual(fs.readFileSync(path.join(s.outside, 'secret'), 'utf8'), 'OUTSIDE')
          assert.deepStrictEqual(walkTree(s.root).filter((p) => p.includes('.aos-')), [])
          if (process.env.AGENT_OS_TEST_VERBOSE) console.log('      outcomes', seen)
        } finally {
          if (swapper) await stop(swapper)
          s.cleanup()
        }
      })
    }
  }

  // The 0.2 operations under the same swaps (RENAME_EXCHANGE of the directory and the
  // link to outside): a walk, a remove, a rename and a conditional write. The outside
  // directory holds decoys named like the inside entries ('victim', 'w') plus one name
  // only it has: a walk that listed it, or a decoy removed, moved or written, escaped.
  const OPS_ITERATIONS = Math.max(200, Math.floor(ITERATIONS / 25))
  for (const resolver of resolvers()) {
    it(`${resolver} resolver, exchange swaps: ${OPS_ITERATIONS} walks, removes, renames and ifVersion writes, zero escapes`, async function () {
      const s = makeSandbox()
      let swapper
      try {
        const d = path.join(s.root, 'd')
        fs.mkdirSync(d)
        fs.writeFileSync(path.join(d, 'secret'), 'INSIDE')
        fs.writeFileSync(path.join(d, 'w'), 'v0')
        for (const name of ['victim', 'w', 'outside-only']) fs.writeFileSync(path.join(s.outside, name), 'OUTSIDE')
        const outsideBefore = fs.readdirSync(s.outside).sort()
        fs.symlinkSync(s.outside, path.join(s.root, 'l'))
        assert.strictEqual(useResolver(resolver), resolver)
        const r = fa.openReadAuthoritySync(s.root)
        const w = fa.openWriteAuthoritySync(s.root)
        swapper = await startSwapper('exchange', s)
        const seen = { walked: 0, walkEntries: 0, removed: 0, renamed: 0, versionedWrites: 0, refused: 0, moved: 0 }
        const refusedAt0 = (x) => isUnsafeAt0(x) || (x instanceof fa.FileAuthorityError && x.code === 'HOST_IO' && x.hostCode === 'ENOENT' && x.segmentIndex === 0)
        for (let i = 0; i < OPS_ITERATIONS; i++) {
          const listing = outcome(() => r.walkSync([], { maxEntries: 1000 }))
          assert.ok(Array.isArray(listing) || isMoved(listing), `unexpected walk outcome: ${listing}`)
          for (const e of Array.isArray(listing) ? listing : []) {
            assert.notStrictEqual(e.path[e.path.length - 1], 'outside-only', 'a walk listed an entry outside the root')
            if (e.path.length > 1) assert.ok(['secret', 'w', 'victim', 'victim2'].includes(e.path[1]), `walk listed ${e.path[1]}`)
          }
          if (Array.isArray(listing)) {
            seen.walked++
            seen.walkEntries += listing.length
          }
          const sub = outcome(() => r.walkSync(['d'], { maxEntries: 1000 }))
          if (Array.isArray(sub)) {
            assert.ok(sub.every((e) => e.path[0] !== 'outside-only'), 'a walk of d listed outside')
          } else {
            assert.ok(sub === undefined || isUnsafeAt0(sub) || isMoved(sub), `unexpected walk outcome: ${sub}`)
          }
          const planted = outcome(() => w.writeTextSync(['d', 'victim'], 'planted'))
          if (planted !== undefined) assert.ok(refusedAt0(planted) || isMoved(planted), `unexpected write outcome: ${planted}`)
          const moved = outcome(() => w.renameSync(['d', 'victim'], ['d', 'victim2'], { replace: true }))
          if (moved === undefined) seen.renamed++
          else if (isMoved(moved)) seen.moved++
          // The source's 'd' is segment 0, the target's is segment 2 (after the source's two).
          else assert.ok(refusedAt0(moved) || isMoved(moved) || (moved.code === 'UNSAFE_ENTRY' && moved.segmentIndex === 2) || (moved.code === 'HOST_IO' && moved.hostCode === 'ENOENT'), `unexpected rename outcome: ${moved}`)
          const gone = outcome(() => w.removeSync(['d', 'victim2']))
          if (gone === true) seen.removed++
          else if (isMoved(gone)) seen.moved++
          else assert.ok(gone === false || isUnsafeAt0(gone) || isMoved(gone), `unexpected remove outcome: ${gone}`)
          const st = outcome(() => r.statSync(['d', 'w']))
          if (st && st.version) {
            const x = outcome(() => w.writeTextSync(['d', 'w'], `v${i}`, { ifVersion: st.version }))
            if (x === undefined) seen.versionedWrites++
            else assert.ok(isUnsafeAt0(x) || x.code === 'FILE_CHANGED' || refusedAt0(x), `unexpected ifVersion outcome: ${x}`)
          } else {
            seen.refused++
          }
        }
        await stop(swapper)
        swapper = undefined
        r.closeSync()
        w.closeSync()
        // The race was real: changes went through, or were refused because `d` moved
        // during them (FILE_CHANGED; a directory exchanged constantly rarely holds still
        // for a whole change).
        assert.ok(seen.walked > 0 && seen.removed + seen.renamed + seen.versionedWrites + seen.moved > 0 && seen.moved + seen.refused > 0, JSON.stringify(seen))
        assert.deepStrictEqual(fs.readdirSync(s.outside).sort(), outsideBefore, 'an entry outside was removed, moved or created')
        for (const name of outsideBefore) assert.strictEqual(fs.readFileSync(path.join(s.outside, name), 'utf8'), 'OUTSIDE', 'an entry outside was written')
        assert.deepStrictEqual(walkTree(s.root).filter((p) => p.includes('.aos-')), [])
        if (process.env.AGENT_OS_TEST_VERBOSE) console.log('      outcomes', seen)
      } finally {
        if (swapper) await stop(swapper)
        s.cleanup()
      }
    })
  }
})
