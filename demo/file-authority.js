'use strict'
// `npm run demo`, file-authority part: a refused symlink escape, an over-budget read
// and an atomic write, on a temporary directory.

const fs = require('node:fs')
const path = require('node:path')
const fa = require('../lib/file-authority.js')

function show (label, fn) {
  try {
    const v = fn()
    console.log(`${label}: ok${v === undefined ? '' : ` (${v})`}`)
  } catch (err) {
    console.log(`${label}: ${err.code}${err.segmentIndex === undefined ? '' : ` at segment ${err.segmentIndex}`}${err.hostCode ? ` (${err.hostCode})` : ''} -- ${err.message}`)
  }
}

module.exports = async function demo (dir) {
  const root = path.join(dir, 'workspace')
  const outside = path.join(dir, 'outside')
  fs.mkdirSync(path.join(root, 'docs'), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, 'credentials'), 'not for agents')
  fs.writeFileSync(path.join(root, 'docs', 'big.log'), 'x'.repeat(4096))
  // A planted escape: workspace/notes -> ../outside
  fs.symlinkSync('../outside', path.join(root, 'notes'))

  const reader = await fa.openReadAuthority(root)
  const writer = await fa.openWriteAuthority(root, { sameRootAs: reader })
  console.log('opened', reader, 'and', writer, '; same root:', reader.sharesRootWith(writer))

  show("read ['notes', 'credentials'] through a symlink to outside",
    () => reader.readBytesSync(['notes', 'credentials'], { maxBytes: 1024 }))
  show("read ['docs', 'big.log'] (4096 bytes) with maxBytes 1024",
    () => reader.readBytesSync(['docs', 'big.log'], { maxBytes: 1024 }))

  await writer.writeText(['docs', 'plan.md'], '# plan v1\n')
  await writer.writeText(['docs', 'plan.md'], '# plan v2: replaced atomically\n')
  const text = Buffer.from(await reader.readBytes(['docs', 'plan.md'], { maxBytes: 1024 })).toString()
  console.log(`atomic write of ['docs', 'plan.md'], read back: ${JSON.stringify(text)}`)
  console.log('docs/ now lists:', (await reader.list(['docs'])).map((e) => `${e.name} (${e.kind})`).join(', '),
    '-- no temporary file left')

  await reader.close()
  writer.closeSync()
  show('read after close', () => reader.readBytesSync(['docs', 'plan.md'], { maxBytes: 1024 }))
}
