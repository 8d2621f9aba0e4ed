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
  return `the native binding for ${platform} failed to load (${firstLine(text)}); ` +
    'reinstall the package (npm rebuild @scope/agent-os) on this machine'
}

function firstLine (text) {
  // The loader's text can name where the package is installed; keep only the reason.
  const line = text.split('\n')[0].replace(/(?:[A-Za-z]:)?[\\/][^\s:'"()]+/g, '<file>')
  return line.length > 300 ? line.slice(0, 300) + '...' : line
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
