'use strict'
// "Resolution is component by component from the retained root, never through a
// pathname": a link planted as a parent component pointing outside the root must make
// the package look up nothing outside, for every operation and on both resolvers, not
// merely refuse in the end. The only observer of a lookup is the system-call trace
// (a stat of a path is not an inotify or fanotify event): every operation runs under
// strace, and the only calls whose path passes through the link may be openat2 with
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, which refuses the link without following it.
// (Before this rule held, a read looked at the whole joined path with fstatat, which
// followed the link to the outside FIFO or file.)

const assert = require('node:assert')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { makeSandbox, resolvers, mkfifo } = require('../helpers/fs-layouts.js')
const { skipBecause } = require('../helpers/platform.js')

const LINK = 'planted-aos-link'
const haveStrace = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0

describe('file-authority: a link planted in a parent is never looked through', function () {
  this.timeout(60000)
  let s

  before(function () {
    if (process.platform === 'win32') skipBecause(this, 'POSIX links and FIFOs')
    if (!haveStrace) skipBecause(this, 'strace is not installed')
  })

  beforeEach(function () {
    s = makeSandbox('aos-fa-outside-')
    for (const dir of [s.outside, path.join(s.outside, 'sub')]) {
      fs.mkdirSync(path.join(dir, 'sub'), { recursive: true })
      fs.writeFileSync(path.join(dir, 'file.txt'), 'OUTSIDE')
      mkfifo(path.join(dir, 'fifo'))
    }
    fs.symlinkSync(s.outside, path.join(s.root, LINK))
    fs.writeFileSync(path.join(s.root, 'inside.txt'), 'inside')
  })

  afterEach(function () {
    if (s) s.cleanup()
  })

  for (const resolver of ['openat2', 'portable']) {
    it(`no lookup passes through the link, for every operation (${resolver})`, function () {
      if (!resolvers().includes(resolver)) return skipBecause(this, 'openat2 is not available')
      const log = path.join(s.base, 'trace')
      const target = path.join(__dirname, '..', 'helpers', 'outside-lookup-target.js')
      const r = spawnSync('strace', ['-f', '-qq', '-s', '4096', '-o', log, process.execPath, target, s.root, LINK], {
        env: { ...process.env, AGENT_OS_FA_RESOLVER: resolver === 'portable' ? 'portable' : '' },
        encoding: 'utf8'
      })
      assert.strictEqual(r.status, 0, r.stderr)
      const outcomes = JSON.parse(r.stdout)
      // Every operation was refused at the link (segment 0), nothing happened outside.
      for (const [op, outcome] of Object.entries(outcomes)) {
        assert.strictEqual(outcome, 'UNSAFE_ENTRY', `${op}: ${outcome}`)
      }
      assert.strictEqual(Object.keys(outcomes).length, 40)
      assert.strictEqual(fs.readFileSync(path.join(s.outside, 'file.txt'), 'utf8'), 'OUTSIDE')
      assert.deepStrictEqual(fs.readdirSync(s.outside).sort(), ['fifo', 'file.txt', 'secret', 'sub'])
      assert.ok(fs.lstatSync(path.join(s.root, LINK)).isSymbolicLink())

      const through = fs.readFileSync(log, 'utf8').split('\n').filter((l) => l.includes(`${LINK}/`))
      const beneath = (l) => /^(\d+\s+)?openat2\(/.test(l) && /RESOLVE_NO_SYMLINKS/.test(l) && /RESOLVE_BENEATH/.test(l)
      const bad = through.filter((l) => !beneath(l))
      assert.deepStrictEqual(bad, [], 'calls that looked up a path through the planted link')
      // The link itself is looked at (that is how the refusal names it), and the trace
      // did see the package's calls: the check above is not vacuous.
      assert.ok(fs.readFileSync(log, 'utf8').includes(`"${LINK}"`))
    })
  }
})
