'use strict'
// Tests that act as another user (`nobody`, through setpriv) run code of this package as
// that user. The checkout may sit in a directory that user cannot enter (a clone inside
// `mktemp -d`, mode 0700, or a home directory of 0700 or 0750), so such tests require
// the package from a copy made here instead: a fresh directory under the system's
// temporary directory, readable and searchable by everyone, holding what loading the
// package needs (package.json, lib/, the compiled binding and the scope helper beside it,
// node-gyp-build). The copy is made once per process and removed when it exits.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
let copy

function copyInto (from, to) {
  fs.cpSync(from, to, { recursive: true, dereference: true })
}

/** The directory of a copy of the package another user can load; require
 * `path.join(dir, 'lib', 'file-authority.js')` and the like from it. */
function packageCopyForOtherUser () {
  if (copy !== undefined) return copy
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-other-user-'))
  copyInto(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'))
  copyInto(path.join(ROOT, 'lib'), path.join(dir, 'lib'))
  const binding = require('node-gyp-build').resolve(process.env.AGENT_OS_BINDING_ROOT || ROOT)
  const built = path.join(dir, 'build', 'Release')
  fs.mkdirSync(built, { recursive: true })
  for (const name of fs.readdirSync(path.dirname(binding))) {
    const from = path.join(path.dirname(binding), name)
    if (fs.statSync(from).isFile()) copyInto(from, path.join(built, name === path.basename(binding) ? 'agent_os.node' : name))
  }
  copyInto(path.dirname(require.resolve('node-gyp-build/package.json')), path.join(dir, 'node_modules', 'node-gyp-build'))
  // Everyone may read and search the copy; only its owner may write it.
  const open = (p) => {
    const st = fs.lstatSync(p)
    fs.chmodSync(p, st.isDirectory() || (st.mode & 0o111) !== 0 ? 0o755 : 0o644)
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) open(path.join(p, name))
  }
  open(dir)
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
  copy = dir
  return dir
}

module.exports = { packageCopyForOtherUser }
