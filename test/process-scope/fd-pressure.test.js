'use strict'
// scope.spawn with (almost) no descriptor left (red team, contract 0.3: "spawn behaves as
// child_process.spawn does"): the returned ChildProcess emits EMFILE as 'error', which
// the caller can catch. Before: spawn threw a TypeError (no code), and the EMFILE went
// to an internal ChildProcess nobody listened to, ending the caller (4 of 4).

const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const MODULE = path.join(__dirname, '..', '..', 'lib', 'process.js')
const SCRIPT = `
const fs = require('node:fs')
const { openProcessScope } = require(${JSON.stringify(MODULE)})
const free = Number(process.argv[1])
process.on('uncaughtException', (e) => { console.log('uncaught ' + e.code); process.exit(3) })
openProcessScope().then((s) => {
  const hog = []
  try { for (;;) hog.push(fs.openSync('/dev/null', 'r')) } catch {}
  for (let i = 0; i < free; i++) fs.closeSync(hog.pop())
  let c
  try { c = s.spawn('sh', ['-c', 'exit 0'], { stdio: 'ignore' }) } catch (e) { console.log('threw ' + e.name); process.exit(4) }
  c.on('error', (e) => console.log('error ' + e.code))
  setTimeout(async () => { while (hog.length) fs.closeSync(hog.pop()); await s.close(); console.log('closed') }, 300)
})
`

describe('process scopes: spawn with no descriptor left', function () {
  this.timeout(60000)
  before(function () {
    if (process.platform !== 'linux') this.skip() // the helper's pipes: Linux backends
  })
  for (const free of [0, 1, 2, 3]) {
    it(`${free} descriptors free: the ChildProcess emits EMFILE, the caller goes on`, function () {
      const r = spawnSync('bash', ['-c', `ulimit -n 64; exec "${process.execPath}" -e "$0" ${free}`, SCRIPT], { encoding: 'utf8', timeout: 30000 })
      assert.equal(r.status, 0, r.stdout + r.stderr)
      assert.match(r.stdout, /closed/)
      assert.doesNotMatch(r.stdout, /uncaught|threw/)
    })
  }
})
