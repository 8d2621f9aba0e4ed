'use strict'
// Crash consistency: a writer process replacing one file in a tight loop is killed
// with SIGKILL at random instants, at least 50 times per staging mode. After every kill the target
// holds exactly one complete version: the last one the writer reported committed, or
// the one it was writing. Never a mix, never a truncation.
//
// AGENT_OS_CRASH_KILLS raises the count (AGENT_OS_STRESS=full: 500).

const assert = require('node:assert')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, tempFiles } = require('../helpers/fs-layouts.js')

const KILLS = Number(process.env.AGENT_OS_CRASH_KILLS) || (process.env.AGENT_OS_STRESS === 'full' ? 500 : 50)

// Version i: "i:" then a deterministic, varying number of letters (up to ~256 KiB).
function lengthOf (i) {
  return (i * 7919) % 262144 + 1
}

function version (i) {
  return `${i}:` + String.fromCharCode(97 + (i % 26)).repeat(lengthOf(i))
}

function parse (text) {
  const m = /^(\d+):([a-z]*)$/.exec(text)
  if (m === null) return undefined
  const i = Number(m[1])
  return m[2] === String.fromCharCode(97 + (i % 26)).repeat(lengthOf(i)) ? i : undefined
}

const WRITER = `
const fa = require(${JSON.stringify(require.resolve('../../lib/file-authority.js'))})
const [root, start, mode] = process.argv.slice(1)
require(${JSON.stringify(require.resolve('../../lib/binding.js'))}).part('fileAuthority').resolver(mode)
const w = fa.openWriteAuthoritySync(root)
${lengthOf.toString()}
${version.toString()}
process.stdout.write('go\\n')
for (let i = Number(start) + 1; ; i++) {
  w.writeTextSync(['target'], version(i))
  process.stdout.write(i + '\\n') // pipes are synchronous on Linux: printed = committed
}`

describe('file-authority crash consistency', function () {
  this.timeout(300000)

  // openat2 mode stages in an O_TMPFILE file (named only once complete); portable mode
  // stages under an exclusive random name from the start.
  for (const mode of resolvers()) {
    it(`${mode} mode: a writer killed with SIGKILL ${KILLS} times, the target is always one complete version`, async function () {
      const s = makeSandbox()
      try {
        const r = fa.openReadAuthoritySync(s.root)
        let committed = 0
        fs.writeFileSync(path.join(s.root, 'target'), version(0))
        let midWrite = 0
        for (let k = 0; k < KILLS; k++) {
          const child = spawn(process.execPath, ['-e', WRITER, s.root, String(committed), mode], { stdio: ['ignore', 'pipe', 'inherit'] })
          let out = ''
          child.stdout.setEncoding('utf8')
          child.stdout.on('data', (d) => { out += d })
          await new Promise((resolve) => {
            const check = () => { if (out.includes('go\n')) { child.stdout.off('data', check); resolve() } }
            child.stdout.on('data', check)
          })
          await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 40)))
          const exited = new Promise((resolve) => child.once('exit', resolve))
          child.kill('SIGKILL')
          await exited
          const lines = out.split('\n').filter((l) => /^\d+$/.test(l))
          const reported = lines.length ? Number(lines[lines.length - 1]) : committed
          const bytes = r.readBytesSync(['target'], { maxBytes: 1 << 20 })
          const found = parse(Buffer.from(bytes).toString())
          assert.notStrictEqual(found, undefined, 'the target is not one complete version')
          // The last reported version, or the next one (committed, not yet reported).
          assert.ok(found === reported || found === reported + 1, `found ${found}, reported ${reported}`)
          if (found === reported + 1) midWrite++
          committed = found
        }
        r.closeSync()
        // A killed writer cannot remove its temporary file; only ours may be left.
        const leftovers = fs.readdirSync(s.root).filter((n) => n !== 'target')
        assert.deepStrictEqual(leftovers, tempFiles(s.root))
        if (process.env.AGENT_OS_TEST_VERBOSE) console.log(`      ${midWrite} kills after commit before report; ${leftovers.length} temporary files left by kills`)
      } finally {
        s.cleanup()
      }
    })
  }
})
