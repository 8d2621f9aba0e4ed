'use strict'
// Run under strace by bench/lib/syscalls.js: performs each package operation a few
// times (warm-up), then once between two marks written straight to stderr, so the
// trace can be cut to exactly one call. Operations whose primitive is not built are
// skipped silently.

const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { load } = require('./pkg.js')

const cfg = JSON.parse(process.argv[2])
const mark = (what) => fs.writeSync(2, `=====${what}\n`)

function traced (name, fn) {
  try {
    for (let i = 0; i < 5; i++) fn()
  } catch {
    return
  }
  mark(name)
  fn()
  mark('END')
}

const fa = load('file-authority').mod
if (fa && cfg.read) {
  try {
    const r = fa.openReadAuthoritySync(cfg.read.root)
    traced('read', () => r.readBytesSync(cfg.read.segments, { maxBytes: 1 << 20 }))
  } catch {}
}
if (fa && cfg.readFresh) {
  // A file changed within the last second: rewritten in place (as the fresh rows'
  // fixtures are), then read as the rows read it (a first read, then the kept
  // descriptor); the traced call is a read through the kept descriptor.
  try {
    const r = fa.openReadAuthoritySync(cfg.readFresh.root)
    fs.writeFileSync(path.join(cfg.readFresh.root, ...cfg.readFresh.segments), crypto.randomBytes(4096))
    traced('readFresh', () => r.readBytesSync(cfg.readFresh.segments, { maxBytes: 1 << 20 }))
  } catch {}
}
if (fa && cfg.range) {
  try {
    const r = fa.openReadAuthoritySync(cfg.range.root)
    const opts = { offset: cfg.range.offset, length: cfg.range.length }
    traced('range', () => r.readRangeSync(cfg.range.segments, opts))
  } catch {}
}
if (fa && cfg.write) {
  try {
    const w = fa.openWriteAuthoritySync(cfg.write.root)
    const text = 'x'.repeat(4096)
    traced('write', () => w.writeTextSync(cfg.write.segments, text))
  } catch {}
}
const lock = load('node-lock').mod
if (lock && cfg.lock) traced('lock', () => lock.tryAcquire(cfg.lock).release())
