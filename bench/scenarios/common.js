'use strict'
// Helpers the scenarios share: the package's file-authority reader, the C loops.

const { runLoop } = require('../lib/cbuild.js')
const { need, probe, Unavailable } = require('../lib/pkg.js')
const { atRest } = require('../lib/fixtures.js')

/** An open ReadAuthority on `root` that has read `segments` once (or Unavailable). */
function packageReader (ctx, root, segments, maxBytes) {
  atRest()
  const fa = need(ctx.parts.fileAuthority, ['openReadAuthoritySync'])
  const a = probe('openReadAuthoritySync', () => fa.openReadAuthoritySync(root))
  ctx.onExit(() => a.closeSync())
  if (segments) {
    const bytes = probe('readBytesSync', () => a.readBytesSync(segments, { maxBytes }))
    if (!bytes) throw new Unavailable('readBytesSync returned undefined for the fixture file')
  }
  return a
}

/** A function running the C program `name` with `args` once, returning ns/op. */
function cLoop (ctx, name, args) {
  const program = ctx.programs[name]
  if (!program) throw new Unavailable(`not available (C program ${name}: ${ctx.buildFailures[name] || 'not built'})`)
  return () => runLoop(program, args())
}

function needOpenat2 (ctx) {
  if (!ctx.openat2) throw new Unavailable('not available (openat2 missing on this kernel)')
}

module.exports = { packageReader, cLoop, needOpenat2 }
