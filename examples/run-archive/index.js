'use strict'
// node examples/run-archive [directory]
// Saves a few runs, replaces one, lists and reads them back under a byte budget, and
// shows the ids that are refused and why. Uses a temporary directory unless given one.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { openRunArchive, checkRunId } = require('./run-archive.js')

async function main () {
  const given = process.argv[2]
  const root = given === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'run-archive-')) : path.resolve(given)
  const archive = await openRunArchive(root)
  try {
    console.log(`archive in ${root}`)
    for (const [runId, record] of [
      ['2024-05-01.build-17', { status: 'ok', steps: 12 }],
      ['2024-05-01.build-18', { status: 'failed', steps: 4, error: 'tests' }],
      ['nightly_3', { status: 'ok', steps: 40 }]
    ]) {
      const bytes = await archive.save(runId, record)
      console.log(`saved ${runId} (${bytes} bytes, written atomically)`)
    }
    console.log('runs/ was created by the first save (createParents)')
    await archive.save('2024-05-01.build-18', { status: 'ok', steps: 12, retried: true })
    console.log('saved 2024-05-01.build-18 again: the archive was replaced atomically')

    const { ids, skipped } = await archive.list()
    console.log(`listed ${ids.length} runs (${skipped} other entries skipped): ${ids.join(', ')}`)
    console.log(`read 2024-05-01.build-18: ${JSON.stringify(await archive.read('2024-05-01.build-18'))}`)
    console.log(`read missing-run: ${await archive.read('missing-run')}`)
    const all = await archive.readAll({ maxBytes: 4096 })
    console.log(`readAll under 4096 bytes: ${all.size} runs`)
    try {
      await archive.readAll({ maxBytes: 100 })
    } catch (err) {
      console.log(`readAll under 100 bytes: refused with ${err.code}`)
    }

    for (const runId of ['Build-1', 'con', 'nul.json', 'a.', 'a/b', '..', 'é', 'x'.repeat(201)]) {
      try {
        checkRunId(runId)
        console.log(`accepted ${JSON.stringify(runId)}`)
      } catch (err) {
        console.log(`refused ${JSON.stringify(runId.length > 20 ? runId.slice(0, 8) + '...' : runId)}: ${err.code}`)
      }
    }
  } finally {
    await archive.close()
    if (given === undefined) fs.rmSync(root, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
