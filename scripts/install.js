'use strict'
// The package's install step: use a prebuilt binary when one fits this platform,
// otherwise compile from source with node-gyp (offline when the running Node ships
// its headers). Then the process-scope helper program beside the binding gets the
// modes the package checks before it runs it (lib/internal/process-host.js): neither
// it nor its directory writable by group or others, whatever the umask the install
// ran under (npm creates directories 0777 & ~umask, so 002 leaves them group-writable).

const fs = require('node:fs')
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

// The helper beside the binding node-gyp-build resolves, and that directory: group
// and others lose write permission (nothing else changes).
function settleHelperModes () {
  if (process.platform === 'win32') return // ACLs, not mode bits
  let binding
  try {
    binding = require('node-gyp-build').resolve(root)
  } catch {
    return
  }
  const dir = path.dirname(binding)
  for (const file of [dir, path.join(dir, 'agent_os_scope_helper')]) {
    try {
      const st = fs.lstatSync(file)
      if (!st.isFile() && !st.isDirectory()) continue
      if ((st.mode & 0o022) !== 0) fs.chmodSync(file, st.mode & 0o7755)
    } catch {}
  }
}

if (!prebuildFits()) {
  const { runNodeGyp } = require('./node-gyp.js')
  process.exitCode = runNodeGyp(['rebuild'], { cwd: root, step: 'compile from source (no prebuild fits this platform)' })
}
settleHelperModes()
