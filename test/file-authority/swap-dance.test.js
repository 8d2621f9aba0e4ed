'use strict'
// A write whose target name dances between a regular file and a symlink to an outside
// file (issue 25 finding 4; the held-out acceptance case): a C helper renames the file
// away, the link in, the link away and the file back, in a loop, while this process
// writes the name WRITES times per resolver. Contract: a failed write leaves no
// temporary name behind and never replaces an entry of another kind; nothing outside
// changes. Before: 1 and 7 `.aos-<hex>.tmp` names (the displaced link) left in runs of
// 5000 writes.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver } = require('../helpers/fs-layouts.js')

const WRITES = Number(process.env.AGENT_OS_DANCE_WRITES) || 5000

describe('file-authority: writes while the target dances between a file and a link', function () {
  this.timeout(300000)
  let bin
  let dir
  before(function () {
    if (process.platform === 'win32') this.skip()
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-dancer-'))
    bin = path.join(dir, 'dancer')
    const r = spawnSync(process.env.CC || 'cc', ['-std=c11', '-O2', '-D_GNU_SOURCE', '-Wall', '-Wextra', '-Werror', '-o', bin,
      path.join(__dirname, 'native', 'dancer.c')], { encoding: 'utf8' })
    if (r.status !== 0) this.skip() // no C compiler
  })
  after(function () {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  for (const resolver of resolvers()) {
    it(`${resolver} resolver: ${WRITES} writes leave 0 temporary names, replace no link, change nothing outside`, async function () {
      const s = makeSandbox('aos-dance-')
      fs.writeFileSync(path.join(s.root, 't'), 'start')
      fs.symlinkSync(path.join(s.outside, 'secret'), path.join(s.root, 'l'))
      assert.equal(useResolver(resolver), resolver)
      const w = fa.openWriteAuthoritySync(s.root)
      const child = spawn(bin, [s.root], { stdio: ['ignore', 'pipe', 'inherit'] })
      const seen = {}
      try {
        await new Promise((resolve, reject) => {
          child.stdout.once('data', resolve)
          child.once('exit', (c) => reject(new Error(`dancer exited ${c}`)))
        })
        for (let i = 0; i < WRITES; i++) {
          let key
          try {
            w.writeTextSync(['t'], `w${i}`)
            key = 'ok'
          } catch (err) {
            key = err.code + (err.hostCode ? ` ${err.hostCode}` : '')
          }
          seen[key] = (seen[key] || 0) + 1
        }
      } finally {
        child.kill('SIGKILL')
        await new Promise((resolve) => child.once('exit', resolve))
        w.closeSync()
      }
      const names = fs.readdirSync(s.root)
      const temps = names.filter((n) => n.startsWith('.aos-'))
      const links = names.filter((n) => fs.lstatSync(path.join(s.root, n)).isSymbolicLink())
      const outside = fs.readFileSync(path.join(s.outside, 'secret'), 'utf8')
      const kinds = names.map((n) => {
        const st = fs.lstatSync(path.join(s.root, n))
        return `${n}: ${st.isSymbolicLink() ? 'link' : st.isFile() ? `file ${fs.readFileSync(path.join(s.root, n), 'utf8')}` : 'other'}`
      })
      s.cleanup()
      console.log(`      ${resolver}: ${JSON.stringify(seen)}; left ${JSON.stringify(kinds)}`)
      assert.deepEqual(temps, [], 'a temporary name was left behind')
      // (The dancer's own renames replace entries, so what it leaves is not counted.)
      assert.ok(links.length <= 1)
      assert.equal(outside, 'OUTSIDE', 'the outside file was changed')
      assert.ok(seen.ok > 0 && Object.keys(seen).length > 1, 'the race was not seen')
      for (const k of Object.keys(seen)) assert.ok(['ok', 'UNSAFE_ENTRY ELOOP', 'UNSAFE_ENTRY', 'FILE_CHANGED'].includes(k), `outcome ${k}`)
    })
  }
})
