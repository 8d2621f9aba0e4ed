'use strict'
// node examples/rule-store [directory]
// Writes a rule set through the write face, shows that a second writer is refused with
// the holder's pid, reads without a lock, then damages the file and shows it read as
// zero rules (disclosed) while writes refuse. Uses a temporary directory unless given one.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { openRuleStore, FILE } = require('./rule-store.js')

async function main () {
  const given = process.argv[2]
  const dir = given === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'rule-store-')) : path.resolve(given)
  const store = await openRuleStore(dir, {
    onDisclosure: ({ file, reason }) => console.log(`  disclosure: ${file} is damaged (${reason}); it reads as zero rules`)
  })
  try {
    console.log(`rule store in ${dir}`)
    console.log(`read before any write: ${JSON.stringify(await store.read())}`)
    const writer = await store.openWriter()
    console.log(`pid ${process.pid}: took the write face (node-lock on rules.lock)`)
    await writer.write([{ id: 'no-rm-rf', deny: 'rm -rf /' }, { id: 'net', allow: ['api.example.com'] }])
    console.log('wrote 2 rules with their checksum')
    try {
      await store.openWriter()
    } catch (err) {
      console.log(`a second writer: refused, ${err.code}, holderPid ${err.holderPid}`)
    }
    const read = await store.read()
    console.log(`read (no lock): ${read.state}, ${read.rules.length} rules`)

    const file = path.join(dir, FILE)
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('api.example.com', 'evil.example.com'))
    console.log('someone edited the file behind the store\'s back')
    const damaged = await store.read()
    console.log(`read: ${damaged.state} (${damaged.reason}), ${damaged.rules.length} rules`)
    try {
      await writer.write([])
    } catch (err) {
      console.log(`write: refused, ${err.code} (${err.reason}); the damaged bytes are left in place`)
    }
    await writer.close()
  } finally {
    await store.close()
    if (given === undefined) fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
