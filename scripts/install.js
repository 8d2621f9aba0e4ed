'use strict'
// The package's install step: use a prebuilt binary when one fits this platform,
// otherwise compile from source with node-gyp (offline when the running Node ships
// its headers).

const path = require('node:path')
const root = path.join(__dirname, '..')

function prebuildFits () {
  let file
  try {
    file = require('node-gyp-build').resolve(root)
  } catch {
    return false
  }
  // Only a prebuild counts here; a stale local build/ is rebuilt.
  if (!file.split(path.sep).includes('prebuilds')) return false
  try {
    require(file)
    return true
  } catch (err) {
    console.warn(`@scope/agent-os: the prebuilt binary does not load here (${err.code || 'error'}); compiling from source`)
    return false
  }
}

if (!prebuildFits()) {
  const { runNodeGyp } = require('./node-gyp.js')
  process.exitCode = runNodeGyp(['rebuild'], { cwd: root, step: 'compile from source (no prebuild fits this platform)' })
}
