'use strict'
// @scope/agent-os/file-authority/testing: an in-memory stand-in for file-authority with
// the same interface, validation, error class and results, for consumers' tests. Pure
// JavaScript; it loads no native binding (and never requires lib/file-authority.js: both
// re-export the one error class from lib/internal/file-authority-common.js).

const { FileAuthorityError } = require('./internal/file-authority-common.js')
const { createMemoryAuthorities } = require('./internal/memory-authority.js')
const { toSegments } = require('./internal/to-segments.js')

module.exports = { createMemoryAuthorities, toSegments, FileAuthorityError }
