'use strict'
// The window that remains for changes when a directory on the way is moved out of the
// root and back (docs/security.md states the figures). A C helper moves root/d out to a
// directory outside and back in a tight loop (OUT microseconds outside, IN inside),
// listing d right after each move out and right before each move back: a name that
// changed between those two listings was changed while d was outside. This process
// writes, removes, makes directories in and renames into d, each call with a name of
// its own. Printed per operation: the calls, their outcomes, `outside` = names changed
// while d was outside (most by calls that then undid the change and reported
// FILE_CHANGED), and `escapes` = calls that succeeded although their name changed while
// d was outside. Every call watches the directory it changes for moves from before its
// first check to after its last (posix_beneath.c), so escapes must be 0; what remains
// is a move of a directory *above* the one changed (not exercised here).
// Every operation checks immediately before its change and again after it, undoing what
// landed outside; what remains is a move out and back within those few microseconds.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const fa = require('../../lib/file-authority.js')
const { makeSandbox } = require('../helpers/fs-layouts.js')
const { size, figure, nativeTool, removeTools, startReady } = require('./helpers.js')

const CALLS = size(6000, 1500)
const TIMINGS = [[5, 20], [20, 20]] // [outside us, inside us]

describe('stress: the window left for changes while a directory moves out and back', function () {
  this.timeout(0)
  before(function () {
    if (process.platform !== 'linux') this.skip()
    if (!nativeTool('move_window')) this.skip()
  })
  after(removeTools)

  const OPS = {
    write: (w, i) => w.writeTextSync(['d', `f${i}`], `v${i}`),
    remove: (w, i) => { w.writeTextSync(['d', `r${i}`], 'x'); return w.removeSync(['d', `r${i}`]) },
    makeDirectory: (w, i) => w.makeDirectorySync(['d', `m${i}`]),
    renameInto: (w, i, root) => { fs.writeFileSync(path.join(root, `y${i}`), 'y'); return w.renameSync([`y${i}`], ['d', `y${i}`]) }
  }

  for (const [out, inside] of TIMINGS) {
    for (const [name, op] of Object.entries(OPS)) {
      it(`${name}: ${CALLS} calls, d ${out} us outside and ${inside} us inside per cycle`, async function () {
        const s = makeSandbox('aos-window-')
        fs.mkdirSync(path.join(s.root, 'd'))
        const w = fa.openWriteAuthoritySync(s.root)
        const mover = await startReady(nativeTool('move_window'), [s.root, s.outside, String(out), String(inside)])
        let line = ''
        mover.stdout.on('data', (d) => { line += d })
        const seen = {}
        const succeeded = new Set()
        try {
          for (let i = 0; i < CALLS; i++) {
            let key
            try {
              op(w, i, s.root)
              key = 'ok'
              succeeded.add(i)
            } catch (err) {
              key = err.code + (err.hostCode ? ` ${err.hostCode}` : '')
            }
            seen[key] = (seen[key] || 0) + 1
          }
        } finally {
          const exited = new Promise((resolve) => mover.once('exit', resolve))
          mover.kill('SIGTERM')
          await exited
          w.closeSync()
          s.cleanup()
        }
        const [summary, ...names] = line.trim().split('\n')
        const m = Object.fromEntries(summary.split(/\s+/).map((kv) => kv.split('=')).filter((kv) => kv.length === 2))
        const escapes = new Set(names.map((n) => Number(n.slice(1))).filter((i) => succeeded.has(i))).size
        figure(`fa-move-window-${name}-${out}-${inside}`, { calls: CALLS, ...Object.fromEntries(Object.entries(seen).map(([k, v]) => [k.replace(/\s+/g, '_'), v])), cycles: m.cycles, outside: m.outside_changes, escapes })
        assert.ok(Number(m.cycles) > 0, 'the mover did not run')
        assert.equal(escapes, 0, 'a call succeeded although its change landed outside the root')
        for (const k of Object.keys(seen)) assert.ok(['ok', 'FILE_CHANGED', 'HOST_IO ENOENT'].includes(k), `outcome ${k}`)
      })
    }
  }
})
