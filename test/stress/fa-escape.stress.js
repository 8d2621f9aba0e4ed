'use strict'
// file-authority escape races, on both resolution paths (openat2 and the portable
// walk, chosen with the binding's resolver switch; AGENT_OS_FA_RESOLVER=portable does
// the same for a whole process), with swaps by rename(2) sequences and by
// renameat2(RENAME_EXCHANGE).
//
// 1. Below the root: three swapper processes at once, each swapping one name with a
//    symlink to the matching place outside the root, whose tree mirrors the inside:
//      root/d      <-> root/l     -> ../outside          (segment 0 of a path)
//      root/e/sub  <-> root/e/ls  -> ../../outside/sub   (segment 1)
//      root/g/f    <-> root/g/lf  -> ../../outside/f     (the final entry, a file)
//    while this process reads, lists and writes through those names, sync and async.
//    Escapes: a read that returns the outside bytes, a listing that names an outside
//    entry, a file written (or created) outside. Must be 0.
// 2. The root's own pathname: swapped with another directory, and with a symlink to a
//    directory outside. Authorities opened before the swaps keep acting on the
//    original directory object; an authority opened with sameRootAs during the swaps
//    either is bound to that same object or fails ROOT_CHANGED. Escapes: any read,
//    write or accepted sameRootAs that reached another directory. Must be 0.
//
// 3. The 0.2 operations below the root, under the same three RENAME_EXCHANGE swappers
//    of directories and a file with links pointing outside: walks (of the root and of
//    each swapped directory), removes, renames between two swapped parents, and
//    ifVersion writes (read the version, write only that version), sync and async.
//    The outside tree holds decoys named like the inside entries ('victim', 'w') plus
//    'outside-only', a name only it has. Escapes: a walk that lists an entry outside
//    (any 'outside-only'), an entry outside removed, moved, created or written
//    (snapshots of the outside tree before and after). Must be 0.
//
// Figures: attempts (operations), escapes.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver, walkTree } = require('../helpers/fs-layouts.js')
const { size, figure, nativeTool, removeTools, startReady, killAndWait, outcome } = require('./helpers.js')

const ITERATIONS = size(100000, 12000)
const ROOT_ITERATIONS = size(40000, 4000)
const OPS_ITERATIONS = size(2000, 200) // rounds of about 10 operations: 20 000 attempts per resolver at full size

function snapshot (dir) {
  return walkTree(dir).map((p) => {
    const full = path.join(dir, p)
    const st = fs.lstatSync(full)
    return st.isFile() ? `${p}=${fs.readFileSync(full, 'utf8')}` : st.isSymbolicLink() ? `${p}->${fs.readlinkSync(full)}` : p
  })
}

describe('stress: file-authority escape races', function () {
  this.timeout(0)
  before(function () {
    if (process.platform !== 'linux') this.skip()
    if (!nativeTool('swapper')) this.skip() // no C compiler
  })
  after(removeTools)

  for (const resolver of resolvers()) {
    for (const mode of ['rename', 'exchange']) {
      it(`${resolver} resolver, ${mode} swaps below the root: ${ITERATIONS} rounds of reads, listings and writes, zero escapes`, async function () {
        const s = makeSandbox('aos-stress-esc-')
        const swappers = []
        try {
          const R = (...p) => path.join(s.root, ...p)
          const O = (...p) => path.join(s.outside, ...p)
          for (const d of [R('d', 'sub'), R('e', 'sub'), R('g'), O('sub')]) fs.mkdirSync(d, { recursive: true })
          for (const f of [R('d', 'secret'), R('d', 'sub', 'secret'), R('e', 'sub', 'secret'), R('g', 'f')]) fs.writeFileSync(f, 'INSIDE')
          for (const f of [O('sub', 'secret'), O('f')]) fs.writeFileSync(f, 'OUTSIDE')
          fs.writeFileSync(O('MARKER'), 'OUTSIDE')
          fs.writeFileSync(O('sub', 'MARKER'), 'OUTSIDE')
          fs.symlinkSync('../outside', R('l'))
          fs.symlinkSync('../../outside/sub', R('e', 'ls'))
          fs.symlinkSync('../../outside/f', R('g', 'lf'))
          const outsideBefore = snapshot(s.outside)

          assert.equal(useResolver(resolver), resolver)
          const r = fa.openReadAuthoritySync(s.root)
          const w = fa.openWriteAuthoritySync(s.root)
          const tool = nativeTool('swapper')
          swappers.push(await startReady(tool, [mode, R('d'), R('l'), R('d.tmp')]))
          swappers.push(await startReady(tool, [mode, R('e', 'sub'), R('e', 'ls'), R('e', 'sub.tmp')]))
          swappers.push(await startReady(tool, [mode, R('g', 'f'), R('g', 'lf'), R('g', 'f.tmp')]))

          const seen = { attempts: 0, escapes: 0, inside: 0, missing: 0, refused: 0, listed: 0, written: 0 }
          const allowedError = (e) => e instanceof fa.FileAuthorityError &&
            (e.code === 'UNSAFE_ENTRY' || (e.code === 'HOST_IO' && e.hostCode === 'ENOENT') || e.code === 'FILE_CHANGED')
          const onRead = (v) => {
            seen.attempts++
            if (v instanceof Uint8Array) {
              if (Buffer.from(v).toString() === 'INSIDE') seen.inside++
              else seen.escapes++
            } else if (v === undefined) {
              seen.missing++
            } else {
              assert.ok(allowedError(v), `unexpected read outcome: ${v}`)
              seen.refused++
            }
          }
          const insideNames = new Set(['secret', 'sub', 'w', 'new'])
          const onList = (v) => {
            seen.attempts++
            if (Array.isArray(v)) {
              if (v.some((e) => !insideNames.has(e.name))) seen.escapes++
              else seen.listed++
            } else if (v === undefined) {
              seen.missing++
            } else {
              assert.ok(allowedError(v), `unexpected listing outcome: ${v}`)
              seen.refused++
            }
          }
          const onWrite = (v) => {
            seen.attempts++
            if (v === undefined) seen.written++
            else {
              assert.ok(allowedError(v), `unexpected write outcome: ${v}`)
              seen.refused++
            }
          }
          const budget = { maxBytes: 64 }
          for (let i = 0; i < ITERATIONS; i++) {
            onRead(outcome(() => r.readBytesSync(['d', 'secret'], budget)))
            onRead(outcome(() => r.readBytesSync(['d', 'sub', 'secret'], budget)))
            onRead(outcome(() => r.readBytesSync(['e', 'sub', 'secret'], budget)))
            onRead(outcome(() => r.readBytesSync(['g', 'f'], budget)))
            if (i % 8 === 0) {
              onList(outcome(() => r.listSync(['d'])))
              onList(outcome(() => r.listSync(['e', 'sub'])))
            }
            if (i % 64 === 0) {
              onWrite(outcome(() => w.writeTextSync(['d', 'w'], 'planted')))
              onWrite(outcome(() => w.writeTextSync(['e', 'sub', 'w'], 'planted')))
              onWrite(outcome(() => w.writeTextSync(['d', 'new', 'w'], 'planted', { createParents: true })))
            }
            if (i % 1000 === 999) {
              // Async through the worker pool: several resolutions in flight at once.
              const reads = await Promise.allSettled([
                ...Array.from({ length: 16 }, () => r.readBytes(['d', 'sub', 'secret'], budget)),
                ...Array.from({ length: 16 }, () => r.readBytes(['e', 'sub', 'secret'], budget)),
                ...Array.from({ length: 16 }, () => r.readBytes(['g', 'f'], budget))])
              for (const x of reads) onRead(x.status === 'fulfilled' ? x.value : x.reason)
              const lists = await Promise.allSettled([r.list(['d']), r.list(['e', 'sub'])])
              for (const x of lists) onList(x.status === 'fulfilled' ? x.value : x.reason)
              const writes = await Promise.allSettled([w.writeText(['d', 'w'], 'planted'), w.writeText(['e', 'sub', 'w'], 'planted')])
              for (const x of writes) onWrite(x.status === 'fulfilled' ? x.value : x.reason)
            }
          }
          for (const sw of swappers.splice(0)) await killAndWait(sw)
          r.closeSync()
          w.closeSync()
          // Anything written or created outside is an escape.
          const outsideAfter = snapshot(s.outside)
          seen.escapes += outsideAfter.filter((p) => !outsideBefore.includes(p)).length
          seen.escapes += outsideBefore.filter((p) => !outsideAfter.includes(p)).length
          figure(`fa-escape-${resolver}-${mode}`, { attempts: seen.attempts, escapes: seen.escapes, inside: seen.inside, refused: seen.refused, missing: seen.missing, listed: seen.listed, written: seen.written })
          assert.equal(seen.escapes, 0, 'an operation escaped the root')
          assert.ok(seen.inside > 0 && seen.refused > 0, `the race was not real: ${JSON.stringify(seen)}`)
        } finally {
          for (const sw of swappers) await killAndWait(sw)
          s.cleanup()
        }
      })
    }

    it(`${resolver} resolver, exchange swaps below the root: ${OPS_ITERATIONS} rounds of walks, removes, renames and ifVersion writes, zero escapes`, async function () {
      const s = makeSandbox('aos-stress-ops-')
      const swappers = []
      try {
        const R = (...p) => path.join(s.root, ...p)
        const O = (...p) => path.join(s.outside, ...p)
        for (const d of [R('d', 'sub'), R('e', 'sub'), R('g'), O('sub')]) fs.mkdirSync(d, { recursive: true })
        for (const f of [R('d', 'secret'), R('e', 'sub', 'secret'), R('g', 'f')]) fs.writeFileSync(f, 'INSIDE')
        for (const f of [R('d', 'w'), R('e', 'sub', 'w')]) fs.writeFileSync(f, '0')
        for (const dir of [O(), O('sub')]) {
          for (const name of ['victim', 'victim2', 'w', 'outside-only']) fs.writeFileSync(path.join(dir, name), 'OUTSIDE')
        }
        fs.writeFileSync(O('f'), 'OUTSIDE')
        fs.symlinkSync('../outside', R('l'))
        fs.symlinkSync('../../outside/sub', R('e', 'ls'))
        fs.symlinkSync('../../outside/f', R('g', 'lf'))
        const outsideBefore = snapshot(s.outside)

        assert.equal(useResolver(resolver), resolver)
        const r = fa.openReadAuthoritySync(s.root)
        const w = fa.openWriteAuthoritySync(s.root)
        const tool = nativeTool('swapper')
        swappers.push(await startReady(tool, ['exchange', R('d'), R('l'), R('d.tmp')]))
        swappers.push(await startReady(tool, ['exchange', R('e', 'sub'), R('e', 'ls'), R('e', 'sub.tmp')]))
        swappers.push(await startReady(tool, ['exchange', R('g', 'f'), R('g', 'lf'), R('g', 'f.tmp')]))

        const seen = { attempts: 0, escapes: 0, walks: 0, walkEntries: 0, removed: 0, renamed: 0, written: 0, versionedWrites: 0, refused: 0, missing: 0 }
        const allowedError = (e) => e instanceof fa.FileAuthorityError &&
          (e.code === 'UNSAFE_ENTRY' || (e.code === 'HOST_IO' && e.hostCode === 'ENOENT') || e.code === 'FILE_CHANGED')
        const refused = (v, what) => {
          assert.ok(allowedError(v), `unexpected ${what} outcome: ${v}`)
          seen.refused++
        }
        const onWalk = (v) => {
          seen.attempts++
          if (Array.isArray(v)) {
            seen.walks++
            seen.walkEntries += v.length
            if (v.some((e) => e.path.includes('outside-only'))) seen.escapes++
          } else if (v === undefined) {
            seen.missing++
          } else refused(v, 'walk')
        }
        const onRemove = (v) => {
          seen.attempts++
          if (v === true) seen.removed++
          else if (v === false) seen.missing++
          else refused(v, 'remove')
        }
        const onRename = (v) => {
          seen.attempts++
          if (v === undefined) seen.renamed++
          else refused(v, 'rename')
        }
        const onWrite = (v, versioned) => {
          seen.attempts++
          if (v === undefined) seen[versioned ? 'versionedWrites' : 'written']++
          else refused(v, 'write')
        }
        const walkOpts = { maxEntries: 1000 }
        // Read the version, then write only that version (an edit tool's loop).
        const versioned = (segs, text) => {
          const st = outcome(() => r.statSync(segs))
          if (!(st && st.kind === 'file')) {
            seen.attempts++
            if (st === undefined || (st && st.kind !== 'file')) seen.missing++
            else refused(st, 'stat')
            return
          }
          onWrite(outcome(() => w.writeTextSync(segs, text, { ifVersion: st.version })), true)
        }
        for (let i = 0; i < OPS_ITERATIONS; i++) {
          onWalk(outcome(() => r.walkSync([], walkOpts)))
          onWalk(outcome(() => r.walkSync(['d'], walkOpts)))
          onWalk(outcome(() => r.walkSync(['e', 'sub'], walkOpts)))
          onWrite(outcome(() => w.writeTextSync(['d', 'victim'], 'planted')), false)
          onRename(outcome(() => w.renameSync(['d', 'victim'], ['e', 'sub', 'victim2'], { replace: true })))
          onRemove(outcome(() => w.removeSync(['e', 'sub', 'victim2'])))
          onRemove(outcome(() => w.removeSync(['d', 'victim'])))
          versioned(['d', 'w'], String(i))
          versioned(['e', 'sub', 'w'], String(i))
          versioned(['g', 'f'], 'INSIDE')
          if (i % 500 === 499) {
            // Async through the worker pool: several in flight at once.
            const walks = await Promise.allSettled(Array.from({ length: 8 }, (_, k) => r.walk(k % 2 ? ['d'] : [], walkOpts)))
            for (const x of walks) onWalk(x.status === 'fulfilled' ? x.value : x.reason)
            const writes = await Promise.allSettled([w.writeText(['d', 'victim'], 'planted'), w.writeText(['e', 'sub', 'victim'], 'planted')])
            for (const x of writes) onWrite(x.status === 'fulfilled' ? x.value : x.reason, false)
            const moves = await Promise.allSettled([w.rename(['d', 'victim'], ['e', 'sub', 'victim2'], { replace: true })])
            for (const x of moves) onRename(x.status === 'fulfilled' ? x.value : x.reason)
            const removes = await Promise.allSettled([w.remove(['e', 'sub', 'victim']), w.remove(['e', 'sub', 'victim2']), w.remove(['d', 'victim'])])
            for (const x of removes) onRemove(x.status === 'fulfilled' ? x.value : x.reason)
            const st = await r.stat(['d', 'w']).catch((e) => e)
            if (st && st.kind === 'file') {
              const x = await w.writeText(['d', 'w'], 'async', { ifVersion: st.version }).then(() => undefined, (e) => e)
              onWrite(x, true)
            }
          }
        }
        for (const sw of swappers.splice(0)) await killAndWait(sw)
        r.closeSync()
        w.closeSync()
        const outsideAfter = snapshot(s.outside)
        seen.escapes += outsideAfter.filter((p) => !outsideBefore.includes(p)).length
        seen.escapes += outsideBefore.filter((p) => !outsideAfter.includes(p)).length
        figure(`fa-escape-ops-${resolver}-exchange`, seen)
        assert.equal(seen.escapes, 0, 'an operation escaped the root')
        assert.ok(seen.removed > 0 && seen.renamed > 0 && seen.versionedWrites > 0 && seen.refused > 0,
          `the race was not real: ${JSON.stringify(seen)}`)
        // g/f itself is exchanged by a swapper: a write refused there puts back what it
        // took, and when the swapper moved names meanwhile, that entry is kept under the
        // temporary name (never lost). Elsewhere no temporary file may be left.
        assert.deepEqual(walkTree(s.root).filter((p) => p.includes('.aos-') && !p.startsWith('g/')), [], 'a temporary file was left behind')
      } finally {
        for (const sw of swappers) await killAndWait(sw)
        s.cleanup()
      }
    })

    for (const mode of ['rename', 'exchange']) {
      for (const other of ['directory', 'symlink']) {
        it(`${resolver} resolver, the root's pathname ${mode}-swapped with a ${other}: ${ROOT_ITERATIONS} rounds, sameRootAs holds, zero escapes`, async function () {
          const s = makeSandbox('aos-stress-root-')
          let swapper
          try {
            // s.root is the approved root; `alt` the directory or link that takes its name.
            fs.writeFileSync(path.join(s.root, 'secret'), 'ROOT')
            const alt = path.join(s.base, 'alt')
            if (other === 'directory') {
              fs.mkdirSync(alt)
              fs.writeFileSync(path.join(alt, 'secret'), 'ALT')
            } else {
              fs.symlinkSync(s.outside, alt)
            }
            const outsideBefore = snapshot(s.outside)
            assert.equal(useResolver(resolver), resolver)
            const r = fa.openReadAuthoritySync(s.root)
            const w = fa.openWriteAuthoritySync(s.root)
            // The original directory object, whatever its name: found through the
            // name it has once the swapper is stopped.
            swapper = await startReady(nativeTool('swapper'), [mode, s.root, alt, path.join(s.base, 'root.tmp')])
            const seen = { attempts: 0, escapes: 0, errors: 0, sameRootAccepted: 0, rootChanged: 0, missing: 0, writes: 0 }
            // An operation on the original root never fails here: nothing in it changes
            // but what this loop writes. A refusal is counted apart from an escape (bytes
            // or names of another directory) and must be 0 too; its codes are kept.
            const errors = []
            const fault = (x) => {
              if (!(x instanceof Error)) return false
              seen.errors++
              if (errors.length < 8) errors.push(`${x.code || x.name}${x.hostCode ? ` (${x.hostCode})` : ''}`)
              return true
            }
            let n = 0
            for (let i = 0; i < ROOT_ITERATIONS; i++) {
              // An authority opened before the swaps: always the original directory.
              seen.attempts++
              const v = outcome(() => r.readBytesSync(['secret'], { maxBytes: 64 }))
              if (!fault(v) && Buffer.from(v).toString() !== 'ROOT') seen.escapes++
              if (i % 16 === 0) {
                seen.attempts++
                const x = outcome(() => w.writeTextSync([`w${n++ % 8}`], 'mine'))
                if (!fault(x)) seen.writes++
                seen.attempts++
                const l = outcome(() => r.listSync([]))
                if (!fault(l) && l.some((e) => e.name !== 'secret' && !/^w[0-7]$/.test(e.name))) seen.escapes++
              }
              // sameRootAs during the swaps: the same object, or ROOT_CHANGED.
              seen.attempts++
              const open = i % 2 === 0 ? fa.openReadAuthoritySync : fa.openWriteAuthoritySync
              const b = outcome(() => open(s.root, { sameRootAs: i % 4 < 2 ? r : w }))
              if (b instanceof fa.FileAuthorityError) {
                if (b.code === 'ROOT_CHANGED') seen.rootChanged++
                else if (b.code === 'HOST_IO' && b.hostCode === 'ENOENT') seen.missing++ // rename mode: the name is briefly gone
                else assert.fail(`unexpected sameRootAs outcome: ${b}`)
              } else {
                seen.sameRootAccepted++
                if (!b.sharesRootWith(r)) seen.escapes++
                if (i % 2 === 0) {
                  const got = outcome(() => b.readBytesSync(['secret'], { maxBytes: 64 }))
                  if (!fault(got) && Buffer.from(got).toString() !== 'ROOT') seen.escapes++
                }
                b.closeSync()
              }
            }
            // Async opens too, several in flight.
            const batch = await Promise.allSettled(Array.from({ length: 256 }, () => fa.openReadAuthority(s.root, { sameRootAs: r })))
            for (const x of batch) {
              seen.attempts++
              if (x.status === 'fulfilled') {
                seen.sameRootAccepted++
                if (!x.value.sharesRootWith(r)) seen.escapes++
                x.value.closeSync()
              } else if (x.reason.code === 'ROOT_CHANGED') seen.rootChanged++
              else if (x.reason.code === 'HOST_IO' && x.reason.hostCode === 'ENOENT') seen.missing++
              else assert.fail(`unexpected async sameRootAs outcome: ${x.reason}`)
            }
            await killAndWait(swapper)
            swapper = undefined
            // Writes landed in the original directory only, wherever its name is now (a
            // rename cycle cut short leaves it at root.tmp).
            const dirs = [s.root, alt, path.join(s.base, 'root.tmp')].filter((d) => {
              try { return fs.lstatSync(d).isDirectory() } catch { return false }
            })
            const holder = dirs.find((d) => fs.readFileSync(path.join(d, 'secret'), 'utf8') === 'ROOT')
            assert.ok(holder, 'the original root directory is gone')
            const names = fs.readdirSync(holder).sort()
            assert.ok(names.every((x) => x === 'secret' || /^w[0-7]$/.test(x)))
            for (const d of dirs.filter((x) => x !== holder)) {
              seen.escapes += fs.readdirSync(d).filter((x) => x !== 'secret').length
            }
            const outsideAfter = snapshot(s.outside)
            seen.escapes += outsideAfter.filter((p) => !outsideBefore.includes(p)).length
            r.closeSync()
            w.closeSync()
            figure(`fa-escape-${resolver}-root-${mode}-${other}`, { attempts: seen.attempts, escapes: seen.escapes, errors: seen.errors, sameRootAccepted: seen.sameRootAccepted, rootChanged: seen.rootChanged, missing: seen.missing, writes: seen.writes })
            assert.equal(seen.escapes, 0, 'an operation reached a directory other than the approved root')
            assert.equal(seen.errors, 0, `an operation on the original root failed: ${errors.join(', ')}`)
            assert.ok(seen.sameRootAccepted > 0 && seen.rootChanged > 0, `the race was not real: ${JSON.stringify(seen)}`)
          } finally {
            if (swapper) await killAndWait(swapper)
            s.cleanup()
          }
        })
      }
    }
  }
})
