'use strict'
// @scope/agent-os/process: terminate a spawned process and all its descendants
// (killProcessTree, lib/internal/process-kill.js), and process scopes that hold every
// process a command ever starts (openProcessScope, lib/internal/process-scope.js).
// Both share the error classes of lib/internal/process-errors.js; neither imports
// this entry module. See docs/process.md and docs/process-scopes.md.

const debug = require('./internal/debug.js')
const { DEFAULT_KILL_GRACE_MS, killProcessTree } = require('./internal/process-kill.js')
const { openProcessScope } = require('./internal/process-scope.js')
const { ProcessTreeError, ProcessTreeTypeError } = require('./internal/process-errors.js')

// NODE_DEBUG=agent-os: one line per call (lib/internal/debug.js); off, nothing is wrapped.
// The plain object literal stays as it is so that ES modules can import each name.
module.exports = { DEFAULT_KILL_GRACE_MS, killProcessTree, ProcessTreeError, ProcessTreeTypeError, openProcessScope }
if (debug.enabled) {
  module.exports.killProcessTree = debug.traceAsync('killProcessTree', killProcessTree)
  module.exports.openProcessScope = debug.traceAsync('openProcessScope', openProcessScope)
}
