'use strict'
// Temporary directories for the bench's files: one on a disk filesystem (the OS
// temporary directory when it is on disk) and one on tmpfs (/dev/shm). Everything
// made here is removed when the run ends, also on Ctrl-C.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { mountType, isMemoryFs } = require('./machine.js')

const made = []

function cleanup () {
  while (made.length) {
    const dir = made.pop()
    try {
      fs.rmSync(dir, { recursive: true, force: true })
    } catch {}
  }
}

let hooked = false
function hook () {
  if (hooked) return
  hooked = true
  process.on('exit', cleanup)
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => {
      cleanup()
      process.kill(process.pid, sig)
    })
  }
}

function mkTemp (parent) {
  hook()
  const dir = fs.mkdtempSync(path.join(parent, 'agent-os-bench-'))
  made.push(dir)
  return dir
}

/** { dir, type, note } for a directory on a disk filesystem, or { dir: undefined, note }. */
function diskBase () {
  const candidates = [os.tmpdir(), path.join(__dirname, '..', '.build')]
  for (const parent of candidates) {
    fs.mkdirSync(parent, { recursive: true })
    if (isMemoryFs(parent) === false) {
      const dir = mkTemp(parent)
      return { dir, type: mountType(dir), where: parent === os.tmpdir() ? 'os.tmpdir()' : 'bench/.build' }
    }
  }
  return { dir: undefined, note: 'no disk filesystem found (os.tmpdir() and bench/.build are in memory)' }
}

/** { dir, type } on tmpfs, or { dir: undefined, note }. */
function tmpfsBase () {
  const parent = '/dev/shm'
  try {
    if (mountType(parent) === 'tmpfs') {
      const dir = mkTemp(parent)
      return { dir, type: 'tmpfs', where: '/dev/shm' }
    }
  } catch {}
  return { dir: undefined, note: '/dev/shm is not a tmpfs here' }
}

// Fixture files get a modification time an hour back: the package reads a file
// modified within the last second on a slower, checked path (a write barrier and a
// second read), and the rows measure the ordinary case of a file at rest. The
// status-change time cannot be set back (setting the mtime moves it), and the package
// looks at it too: atRest() waits until the last fixture written is a second old.
const AT_REST = new Date(Date.now() - 3600 * 1000)
const SETTLE_MS = 1100
let lastWrite = 0

/** Blocks until every fixture file written so far is at rest (ctime over 1 s old). */
function atRest () {
  const wait = lastWrite + SETTLE_MS - Date.now()
  if (wait > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait)
}

/** Writes `size` pseudo-random bytes to `file` (parents created), dated an hour back. */
function writeFile (file, size) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const fd = fs.openSync(file, 'w')
  try {
    const chunk = crypto.randomBytes(Math.min(size, 1 << 20))
    let left = size
    while (left > 0) {
      const n = Math.min(left, chunk.length)
      fs.writeSync(fd, chunk, 0, n)
      left -= n
    }
  } finally {
    fs.closeSync(fd)
  }
  fs.utimesSync(file, AT_REST, AT_REST)
  lastWrite = Date.now()
}

/** `count` more names for `file` in its directory (hard links, made once; each moves
 * the file's ctime, so the file is not at rest again until atRest()). */
function linkNames (file, count) {
  const names = []
  for (let i = 0; i < count; i++) {
    const n = `${path.basename(file)}.link${i}`
    const p = path.join(path.dirname(file), n)
    if (!fs.existsSync(p)) {
      fs.linkSync(file, p)
      lastWrite = Date.now()
    }
    names.push(n)
  }
  return names
}

/** Writes `text` (UTF-8) to `file` (parents created), dated an hour back. */
function writeText (file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  fs.utimesSync(file, AT_REST, AT_REST)
  lastWrite = Date.now()
}

/** A directory `dir` with `count` entries in no particular order: every tenth a
 * directory, the rest empty files. */
function makeListing (dir, count) {
  fs.mkdirSync(dir, { recursive: true })
  for (let i = 0; i < count; i++) {
    const name = 'e' + crypto.createHash('sha1').update(String(i)).digest('hex').slice(0, 12)
    const p = path.join(dir, name)
    if (i % 10 === 9) fs.mkdirSync(p)
    else fs.closeSync(fs.openSync(p, 'w'))
  }
}

// The fresh rows (issue 28) read a file changed moments before, which the package
// reads on its checked path for files changed within the last second (the racy
// window). freshen() rewrites such a file in place with fs.writeFileSync (the same
// inode: open O_TRUNC, write, close; mtime and ctime now) and says when, on the
// clock process.hrtime.bigint() reads (CLOCK_MONOTONIC, the C loops' clock too). It
// does not count as a fixture write for atRest(): the fresh files live in their own
// directories and are never read as files at rest.
let freshTurn = 0

/** Rewrites `file` in place with the next of `contents` (Buffers, in turn); returns
 * { data, startNs, endNs } (hrtime, BigInt). */
function freshen (file, contents) {
  const data = contents[freshTurn++ % contents.length]
  const startNs = process.hrtime.bigint()
  fs.writeFileSync(file, data)
  const endNs = process.hrtime.bigint()
  return { data, startNs, endNs }
}

module.exports = { freshen, diskBase, tmpfsBase, writeFile, writeText, linkNames, atRest, makeListing, cleanup, mkTemp }
