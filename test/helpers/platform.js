'use strict'
// What a test may need from the platform it runs on, and skipping with a reason when
// the platform cannot give it. Every reason here is listed in docs/platforms.md; a skip
// never stands in for a check the platform could run.

const fs = require('node:fs')
const path = require('node:path')

const windows = process.platform === 'win32'
const wine = windows && process.env.AGENT_OS_WINE === '1'

const REASONS = {
  noFifo: 'Windows has no FIFO (nor another non-regular entry a test can create); the FIFO cases run on Linux and macOS',
  noSymlink: 'the symlink was not created (wine 8: CreateSymbolicLinkW reports success and creates nothing); real Windows runs this',
  posixMode: 'POSIX permission bits: Windows has no mode bits beyond read-only',
  unixSocket: 'a Unix socket in the file system: POSIX only',
  noDevice: 'a device node made with mknod: POSIX only',
  rawNames: 'Windows names are UTF-16: a name of bytes that are not UTF-8 cannot be made',
  mount: 'mounting a tmpfs below the root: Linux only',
  procFd: 'counts open descriptors through /proc/self/fd: Linux only (Windows handles are not descriptors)',
  procfs: 'reads /proc/self/status, a file whose size says 0: Linux only',
  caseAndFifo: 'lists "b" and "B" (one name on Windows, case-insensitive) beside a FIFO; the conformance battery checks listing order and kinds on Windows',
  wineRoot: 'wine keeps the read-only attribute as Unix mode bits, which root (the user of this run) bypasses; real Windows runs this',
  renameOverOpen: 'replacing a file another process holds open: Windows refuses the rename (HOST_IO EACCES) under the classic rename semantics the Windows core uses',
  deletePendingName: 'Windows keeps a removed directory\'s name while a handle still holds it (delete pending), so nothing can be put back under that name',
  wineSupplementary: 'wine 8 mishandles file names with characters beyond U+FFFF (creating one fails with EISDIR, as if the name were empty); real Windows runs this',
  wineDeletePending: 'wine 8 keeps a removed directory that a handle still holds and does not report it as delete pending (FILE_STANDARD_INFO.DeletePending), so the Windows core cannot see the root was removed; real Windows runs this'
}

/** Marks the running test as skipped and names why, in its title (mocha prints it
 * among the pending tests). */
function skipBecause (ctx, reason) {
  const test = ctx.currentTest || ctx.test
  if (test) test.title += ` [skipped: ${reason}]`
  ctx.skip()
}

/** Creates a symlink and reports whether one now exists at `at`; false when creating
 * it failed (no privilege, no support) or "succeeded" without a link (wine). Whatever
 * was left instead of a link is removed. */
function makeSymlink (target, at, type) {
  try {
    fs.symlinkSync(target, at, type)
  } catch (err) {
    if (['EPERM', 'ENOTSUP', 'ENOSYS', 'EACCES'].includes(err.code) && windows) return false
    throw err
  }
  let st
  try {
    st = fs.lstatSync(at)
  } catch {
    return false
  }
  if (st.isSymbolicLink()) return true
  fs.rmSync(at, { recursive: true, force: true })
  return false
}

let symlinksProbed
/** True when this host creates symlinks (probed once, in a scratch directory). */
function symlinksWork () {
  if (!windows) return true
  if (symlinksProbed === undefined) {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'agent-os-probe-'))
    try {
      fs.writeFileSync(path.join(dir, 'target'), '')
      symlinksProbed = makeSymlink('target', path.join(dir, 'link'))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  return symlinksProbed
}

module.exports = { windows, wine, REASONS, skipBecause, makeSymlink, symlinksWork }
