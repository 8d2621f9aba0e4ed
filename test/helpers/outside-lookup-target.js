'use strict'
// Run under strace by test/file-authority/outside-lookup.test.js: every operation, once
// through a link planted as a parent component (LINK/...), with the resolver the
// environment selects. Prints each operation's outcome (an error code or "ok") as JSON.

const fa = require('../../lib/file-authority.js')

const [root, link] = process.argv.slice(2)
const r = fa.openReadAuthoritySync(root)
const w = fa.openWriteAuthoritySync(root)
const out = {}
function run (name, fn) {
  try {
    fn()
    out[name] = 'ok'
  } catch (err) {
    out[name] = err.code || String(err)
  }
}
const deep = [link, 'sub']
for (const [tag, parent] of [['', [link]], ['deep', deep]]) {
  run(`read${tag}File`, () => r.readBytesSync([...parent, 'file.txt'], { maxBytes: 1024 }))
  run(`read${tag}Fifo`, () => r.readBytesSync([...parent, 'fifo'], { maxBytes: 1024 }))
  run(`readVersioned${tag}`, () => r.readVersionedSync([...parent, 'file.txt'], { maxBytes: 1024 }))
  run(`readRange${tag}`, () => r.readRangeSync([...parent, 'file.txt'], { offset: 0, length: 4 }))
  run(`list${tag}`, () => r.listSync([...parent, 'sub']))
  run(`walk${tag}`, () => r.walkSync([...parent, 'sub'], { maxEntries: 10 }))
  run(`stat${tag}`, () => r.statSync([...parent, 'file.txt']))
  run(`write${tag}`, () => w.writeTextSync([...parent, 'file.txt'], 'new'))
  run(`writeParents${tag}`, () => w.writeTextSync([...parent, 'new', 'x.txt'], 'new', { createParents: true }))
  run(`remove${tag}`, () => w.removeSync([...parent, 'file.txt']))
  run(`makeDirectory${tag}`, () => w.makeDirectorySync([...parent, 'made'], { parents: true }))
  run(`renameFrom${tag}`, () => w.renameSync([...parent, 'file.txt'], ['moved.txt']))
  run(`renameTo${tag}`, () => w.renameSync(['inside.txt'], [...parent, 'moved.txt']))
  // contract 0.3
  run(`readText${tag}`, () => r.readTextSync([...parent, 'file.txt'], { maxBytes: 1024 }))
  run(`readTextFifo${tag}`, () => r.readTextSync([...parent, 'fifo'], { maxBytes: 1024 }))
  run(`listStats${tag}`, () => r.listSync([...parent, 'sub'], { withStats: true }))
  run(`walkExclude${tag}`, () => r.walkSync([...parent, 'sub'], { maxEntries: 10, exclude: ['x'], withStats: true }))
  run(`append${tag}`, () => w.appendTextSync([...parent, 'file.txt'], 'new'))
  run(`appendFifo${tag}`, () => w.appendBytesSync([...parent, 'fifo'], Uint8Array.of(1), { durable: false }))
  run(`appendParents${tag}`, () => w.appendTextSync([...parent, 'new', 'x.txt'], 'new', { createParents: true }))
}
process.stdout.write(JSON.stringify(out))
