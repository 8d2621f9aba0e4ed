'use strict'
// A child process for the rows that measure file-authority's portable walk: the
// parent forks it with AGENT_OS_FA_RESOLVER=portable (which must be set before the
// package is loaded) and asks it, round by round, to time N reads. Timing happens
// here, around the calls only; the message round trip is not counted.

const { timeSync } = require('./measure.js')
const { load, firstLine } = require('./pkg.js')

const authorities = new Map()

function reader (fa, root) {
  let a = authorities.get(root)
  if (!a) {
    a = fa.openReadAuthoritySync(root)
    authorities.set(root, a)
  }
  return a
}

process.on('message', (msg) => {
  try {
    const loaded = load('file-authority')
    if (!loaded.mod) throw new Error(loaded.reason)
    const fa = loaded.mod
    if (msg.op === 'readSync') {
      const a = reader(fa, msg.root)
      const opts = { maxBytes: msg.maxBytes }
      const ns = timeSync(msg.n, () => a.readBytesSync(msg.segments, opts))
      process.send({ id: msg.id, ns })
    } else if (msg.op === 'probe') {
      const a = reader(fa, msg.root)
      const bytes = a.readBytesSync(msg.segments, { maxBytes: msg.maxBytes })
      process.send({ id: msg.id, length: bytes ? bytes.length : -1, resolver: process.env.AGENT_OS_FA_RESOLVER })
    } else if (msg.op === 'exit') {
      for (const a of authorities.values()) a.closeSync()
      process.disconnect()
    }
  } catch (err) {
    process.send({ id: msg.id, error: firstLine(err) })
  }
})
