'use strict'
// examples/mcp-filesystem under attack, through the MCP SDK's client over stdio: links,
// the prefix and quote siblings of the allowed directory (root_evil, root', root",
// 'root ', 'root\t'), '..', a FIFO, an 8 GiB sparse file, and the directory and file
// swap races (test/fixtures/exchange.c exchanging a name inside the root with a link to
// outside, RENAME_EXCHANGE in a loop). Every call must be refused or answered from
// inside: 0 leaks, 0 outside writes, no hang, no huge read. The same harness run against
// upstream sees its leaks, so these tests can fail.
// MCP_RACE_CALLS sets the calls per race (300 here; npm run compare:mcp runs 2 000).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const h = require('./harness.js')

const RACE_CALLS = Number(process.env.MCP_RACE_CALLS || 300)

const refused = h.refused

const EXPECTED = {
  link: /symbolic link( \(at component \d+ beneath the allowed directory\))?: this server never follows links/,
  dotdot: /'\.\.'/,
  fifo: /not a regular file or directory \(a FIFO, socket or device\)/,
  'huge sparse file': /File too large - (path|paths\[0\]) has more than \d+ bytes/
}

describe('examples/mcp-filesystem: attacks', function () {
  this.timeout(120000)
  let fx, server

  before(async function () {
    if (process.platform === 'win32') this.skip() // no FIFO, no symlinks without privilege
    fx = h.makeFixture('mcp-attacks-')
    h.addSpecials(fx)
    server = await h.startServer('agent-os', [fx.root])
  })
  after(async function () {
    if (server) await server.close()
    if (fx) h.removeFixture(fx)
  })

  it('refuses every link, sibling, \'..\', FIFO and huge-file call at once, showing and changing nothing outside', async function () {
    const before = h.outsideState(fx)
    const attacks = h.staticAttacks(fx)
    assert.ok(attacks.length >= 45)
    for (const a of attacks) {
      const res = await server.call(a.tool, a.args, { timeoutMs: 10000 })
      const what = `${a.kind} ${a.tool} ${JSON.stringify(a.args)}: ${res.text}`
      assert.ok(refused(res), what)
      assert.equal(h.leaked(fx, res), false, what)
      assert.ok(res.ms < 5000, `${what} took ${res.ms} ms`)
      const expected = a.kind.startsWith('sibling') ? /^Access denied - (path|paths\[0\]) outside allowed directories/ : EXPECTED[a.kind]
      assert.match(res.text, expected, what)
    }
    assert.equal(h.outsideState(fx), before)
    // Nothing was planted inside through a link either, and the server still serves.
    assert.equal(fs.existsSync(path.join(fx.out, 'planted.txt')), false)
    assert.equal((await server.call('read_text_file', { path: path.join(fx.root, 'd', 'f.txt') })).text, 'inside edit-me\n')
  })

  it('a link to a file inside is refused too (the package never follows links), with the reason', async function () {
    const res = await server.call('read_text_file', { path: path.join(fx.root, 'inlink') })
    assert.equal(res.isError, true)
    assert.match(res.text, EXPECTED.link)
    const info = await server.call('get_file_info', { path: path.join(fx.root, 'inlink') })
    assert.match(info.text, /isSymbolicLink: true/)
  })

  it('head and tail of the 8 GiB sparse file read at most the read limit, and memory stays small', async function () {
    const small = await h.startServer('agent-os', [fx.root], { env: { MCP_FILESYSTEM_MAX_BYTES: String(4 * 1024 * 1024) } })
    try {
      for (const args of [{ head: 2 }, { tail: 2 }]) {
        const res = await small.call('read_text_file', { path: path.join(fx.root, 'huge.bin'), ...args }, { timeoutMs: 10000 })
        assert.equal(res.isError, true)
        assert.match(res.text, /^Lines too long - the (first|last) 2 lines of path span more than 4194304 bytes/)
      }
      const peak = small.peakKiB()
      if (peak !== undefined) assert.ok(peak < 256 * 1024, `peak resident memory ${peak} KiB`)
    } finally {
      await small.close()
    }
    const peak = server.peakKiB()
    if (peak !== undefined) assert.ok(peak < 256 * 1024, `peak resident memory ${peak} KiB`)
  })

  describe('swap races (RENAME_EXCHANGE of a name inside with a link to outside)', function () {
    let binary
    before(function () {
      binary = h.exchangeHelper()
      if (binary === undefined) this.skip() // not Linux, or no C compiler
    })

    for (const race of h.RACES) {
      it(`${race.tool}, ${race.swap} swapped: 0 leaks, 0 outside writes in ${RACE_CALLS} calls`, async function () {
        const counts = await h.runRace('agent-os', race, { calls: RACE_CALLS, binary })
        assert.equal(counts.calls, RACE_CALLS)
        assert.ok(counts.swaps > 0, JSON.stringify(counts))
        // The server served calls between the directory swaps (a server that refused every
        // call would pass the rest); under the file swap it may rightly refuse them all.
        if (race.swap === 'dir') assert.ok(counts.answered > 0, JSON.stringify(counts))
        assert.equal(counts.leaks, 0, JSON.stringify(counts))
        assert.equal(counts.outsideWrites, 0, JSON.stringify(counts))
      })
    }

    it('the same harness sees upstream leak (a quote sibling at once, the directory swap within 3 000 calls)', async function () {
      const up = await h.startServer('upstream', [fx.root])
      try {
        const res = await up.call('list_directory', { path: `${fx.root}'` })
        assert.equal(h.leaked(fx, res), true, res.text)
      } finally {
        await up.close()
      }
      const counts = await h.runRace('upstream', h.RACES[0], { calls: 3000, binary, untilLeak: 1 })
      assert.ok(counts.leaks >= 1, JSON.stringify(counts))
    })
  })
})
