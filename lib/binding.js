'use strict'
// Loads the one compiled binding (a prebuild for this platform, or the local build)
// and hands each primitive its part of it. A primitive's part is set up only when
// its subpath first asks for it.
//
// When the binding cannot be loaded, `part()` returns undefined and `loadFailure()`
// says why in words a user can act on; the primitives then fail closed.

const path = require('node:path')

let binding
let failure

function load () {
  if (binding !== undefined || failure !== undefined) return
  // AGENT_OS_BINDING_ROOT lets the project's own sanitizer run point the loader at a
  // separately built binding; it is not public API.
  const root = process.env.AGENT_OS_BINDING_ROOT || path.join(__dirname, '..')
  try {
    binding = require('node-gyp-build')(root)
  } catch (err) {
    failure = describe(err)
  }
}

function describe (err) {
  const platform = `${process.platform}-${process.arch}`
  const text = String((err && err.message) || err)
  if (/No native build was found/.test(text)) {
    return `no prebuilt binary for ${platform} (Node-API 8) ships with this package and ` +
      'none was compiled at install; reinstall with a C compiler and Python available ' +
      '(npm rebuild @scope/agent-os) so node-gyp can build it from source'
  }
  return `the native binding for ${platform} failed to load (${reason(err, text)}); ` +
    'reinstall the package on this machine (npm rebuild @scope/agent-os) so it is built ' +
    'for this Node.js, platform and architecture'
}

// Why a load failed, in words of this package only. The loader's text names files
// (where the package is installed, a user's name, any character a directory may hold),
// so none of it is ever printed: it is only matched against known causes.
const REASONS = [
  [/NODE_MODULE_VERSION|different Node\.js version/i, 'it was built for another Node.js version'],
  [/invalid ELF header|file too short|wrong ELF class|ELFCLASS|not a valid Win32 application|%1 is not|bad EXE format|not a mach-o file|mach-o, but wrong|wrong architecture|incompatible architecture|machine type/i,
    'it is not a binary for this platform and architecture'],
  [/GLIBC_|GLIBCXX_|version `|undefined symbol|symbol not found|procedure could not be found/i,
    'a library or symbol it needs is missing on this system'],
  [/permission denied|EACCES|operation not permitted|EPERM/i, 'permission to load it was denied'],
  [/cannot open shared object|Library not loaded|module could not be found|no such file|ENOENT/i,
    'a file it needs could not be opened']
]

function reason (err, text) {
  for (const [pattern, words] of REASONS) if (pattern.test(text)) return words
  const code = err && typeof err.code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(err.code) ? err.code : undefined
  return code === undefined ? 'an unrecognised loader error' : `loader error ${code}`
}

/** Returns the named part of the binding ('fileAuthority', 'nodeLock', 'process'), or
 * undefined when the binding cannot be loaded. */
function part (name) {
  load()
  if (binding === undefined) return undefined
  return binding[name]()
}

/** Why the binding could not be loaded, or undefined when it loaded. */
function loadFailure () {
  load()
  return failure
}

/** Names of the parts set up so far in this thread (for the package's own tests). */
function loadedParts () {
  load()
  return binding === undefined ? [] : binding.loadedParts()
}

module.exports = { part, loadFailure, loadedParts }
