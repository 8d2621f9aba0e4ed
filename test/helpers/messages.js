'use strict'
// The shape every file-authority error message must have: the operation, the code, the
// segment index, then at most one detail: a bad argument and what it must be (or that
// it is not an option), or one of the package's fixed hints; then the host code. No
// path, segment text or value a caller passed can match it.

const { HINTS } = require('../../lib/internal/file-authority-common.js')

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const hint = Object.values(HINTS).map(escape).join('|')
const argument = '(segments|from|to|text|bytes|options|this|other|root|path)(\\.[A-Za-z]+|\\[\\d+\\])?'
const FA_MESSAGE = new RegExp(
  `^[A-Za-z]+ failed: [A-Z_]+( at segment \\d+)?(: (${argument} (must|could not|is not an option|has an unknown option)[^/\\\\]*|${hint}))?( \\([A-Z0-9_]+\\))?$`
)

module.exports = { FA_MESSAGE }
