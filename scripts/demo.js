'use strict'
// `npm run demo`: each primitive doing its job on a temporary directory.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const parts = ['file-authority', 'node-lock', 'process']

async function main () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-demo-'))
  try {
    for (const name of parts) {
      console.log(`\n== ${name}`)
      const sub = path.join(dir, name)
      fs.mkdirSync(sub)
      await require(`../demo/${name}.js`)(sub)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
