'use strict'
// Low items of issue 25 (finding 5), each a race against a real second actor:
// - a chmod made while a plain write runs is kept by its commit (before: the commit put
//   the old bits back, 19 of 20);
// - rename(..., { replace: true }) never replaces a FIFO exchanged in at the target
//   while the call runs (before: 3 in 11 245).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver, mkfifo } = require('../helpers/fs-layouts.js')

const CHMOD_ROUNDS = 20
const RENAMES = Number(process.env.AGENT_OS_FIFO_RENAMES) || 10000

function spin (us) {
  const end = process.hrtime.bigint() + BigInt(Math.round(us * 1000))
  while (process.hrtime.bigint() < end);
}

describe('file-authority: a chmod made while a plain write runs', function () {
  this.timeout(120000)
  before(function () {
    if (process.platform === 'win32') this.skip() // no permission bits
  })
  for (const resolver of resolvers()) {
    it(`${resolver} resolver: ${CHMOD_ROUNDS} writes of 4 MiB, each with a chmod 600 during it: the file ends 600 every time`, async function () {
      const s = makeSandbox()
      assert.equal(useResolver(resolver), resolver)
      const w = fa.openWriteAuthoritySync(s.root)
      const file = path.join(s.root, 'f')
      const big = Buffer.alloc(4 << 20, 0x61)
      let kept = 0
      try {
        for (let i = 0; i < CHMOD_ROUNDS; i++) {
          fs.writeFileSync(file, 'old')
          fs.chmodSync(file, 0o644)
          const p = w.writeBytes(['f'], big)
          spin(200 + Math.random() * 800)
          fs.chmodSync(file, 0o600)
          await p
          if ((fs.statSync(file).mode & 0o777) === 0o600) kept++
        }
      } finally {
        w.closeSync()
        s.cleanup()
      }
      assert.equal(kept, CHMOD_ROUNDS, `the chmod was reverted in ${CHMOD_ROUNDS - kept} of ${CHMOD_ROUNDS}`)
    })
  }
})

const EXCHANGER_C = `
#include <fcntl.h>
#include <stdio.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
/* exchanger A B: exchanges A and B until killed; prints "go" once running. */
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  for (unsigned long i = 0;; i++) {
    (void)renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE);
    if (i == 0) { fputs("go\\n", stdout); fflush(stdout); }
  }
}
`

describe('file-authority: rename with replace while a FIFO is exchanged in at the target', function () {
  this.timeout(300000)
  let dir
  let bin
  before(function () {
    if (process.platform !== 'linux') this.skip() // the exchanger: renameat2
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-fifo-x-'))
    fs.writeFileSync(path.join(dir, 'x.c'), EXCHANGER_C)
    bin = path.join(dir, 'x')
    const r = spawnSync(process.env.CC || 'cc', ['-D_GNU_SOURCE', '-O2', '-o', bin, path.join(dir, 'x.c')], { encoding: 'utf8' })
    if (r.status !== 0) this.skip() // no C compiler
  })
  after(function () {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  for (const resolver of resolvers()) {
    it(`${resolver} resolver: ${RENAMES} renames over the target, the FIFO never replaced`, async function () {
      const s = makeSandbox()
      fs.writeFileSync(path.join(s.root, 't'), 'target')
      mkfifo(path.join(s.root, 'q'))
      assert.equal(useResolver(resolver), resolver)
      const w = fa.openWriteAuthoritySync(s.root)
      const child = spawn(bin, [path.join(s.root, 't'), path.join(s.root, 'q')], { stdio: ['ignore', 'pipe', 'inherit'] })
      const seen = {}
      let fifos
      try {
        await new Promise((resolve, reject) => {
          child.stdout.once('data', resolve)
          child.once('exit', (c) => reject(new Error(`exchanger exited ${c}`)))
        })
        for (let i = 0; i < RENAMES; i++) {
          fs.writeFileSync(path.join(s.root, 'src'), `s${i}`)
          let key
          try {
            w.renameSync(['src'], ['t'], { replace: true })
            key = 'ok'
          } catch (err) {
            key = err.code + (err.hostCode ? ` ${err.hostCode}` : '')
          }
          seen[key] = (seen[key] || 0) + 1
        }
      } finally {
        child.kill('SIGKILL')
        await new Promise((resolve) => child.once('exit', resolve))
        fifos = fs.readdirSync(s.root).filter((n) => fs.lstatSync(path.join(s.root, n)).isFIFO())
        w.closeSync()
        s.cleanup()
      }
      console.log(`      ${resolver}: ${JSON.stringify(seen)}`)
      assert.equal(fifos.length, 1, 'the FIFO was replaced')
      assert.ok(seen.ok > 0 && seen.UNSAFE_ENTRY > 0, 'the race was not seen')
      for (const k of Object.keys(seen)) assert.ok(['ok', 'UNSAFE_ENTRY', 'FILE_CHANGED', 'HOST_IO ENOENT'].includes(k), `outcome ${k}`)
    })
  }
})
