'use strict'
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { fork } = require('node:child_process')
const { once } = require('node:events')
const { openRuleStore, RuleStoreError, canonical, serialise, FILE, LOCK } = require('../rule-store.js')

// Plants a symlink for an attack; where the platform makes none (wine 8 reports
// success and creates nothing: docs/platforms.md), the test skips, naming why.
function plantLink (ctx, target, at) {
  fs.symlinkSync(target, at)
  let linked = false
  try { linked = fs.lstatSync(at).isSymbolicLink() } catch {}
  if (!linked) {
    ctx.test.title += ' [skipped: the symlink was not created (wine 8: CreateSymbolicLinkW reports success and creates nothing); real Windows runs this]'
    ctx.skip()
  }
}

const RULES = [{ id: 'no-rm', deny: 'rm -rf /' }, { id: 'net', allow: ['api.example.com'], limits: { rps: 5 } }]

describe('examples/rule-store', function () {
  let dir
  let store
  let disclosed
  const cleanup = []
  beforeEach(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rule-store-test-'))
    disclosed = []
    store = await openRuleStore(dir, { onDisclosure: (d) => disclosed.push(d) })
  })
  afterEach(async function () {
    for (const fn of cleanup.splice(0).reverse()) await fn()
    await store.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })
  async function writer () {
    const w = await store.openWriter()
    cleanup.push(() => w.close())
    return w
  }
  const file = () => path.join(dir, FILE)

  describe('reading and writing', function () {
    it('a missing file reads as zero rules, with nothing to disclose', async function () {
      assert.deepEqual(await store.read(), { state: 'empty', rules: [] })
      assert.deepEqual(disclosed, [])
    })

    it('writes the rules with the checksum of their canonical form, and reads them back', async function () {
      const w = await writer()
      await w.write(RULES)
      assert.deepEqual(await store.read(), { state: 'ok', rules: RULES })
      assert.equal(fs.readFileSync(file(), 'utf8'), serialise(RULES))
      assert.match(fs.readFileSync(file(), 'utf8'), /^\{"checksum":"sha256:[0-9a-f]{64}","format":"rule-store\/1","rules":\[/)
      assert.deepEqual(disclosed, [])
    })

    it('a file re-indented or with keys reordered still verifies (the checksum is over content)', async function () {
      const w = await writer()
      await w.write(RULES)
      const doc = JSON.parse(fs.readFileSync(file(), 'utf8'))
      const reordered = { rules: doc.rules.map((r) => Object.fromEntries(Object.entries(r).reverse())), format: doc.format, checksum: doc.checksum }
      fs.writeFileSync(file(), JSON.stringify(reordered, null, 2))
      assert.deepEqual(await store.read(), { state: 'ok', rules: RULES })
      await w.write([]) // not damaged: writes go on
      assert.deepEqual((await store.read()).rules, [])
    })

    it('canonical form: sorted keys, no whitespace, only plain JSON', function () {
      assert.equal(canonical({ b: [1, { d: null, c: 'x' }], a: true }), '{"a":true,"b":[1,{"c":"x","d":null}]}')
      const cyclic = {}
      cyclic.self = cyclic
      for (const bad of [NaN, Infinity, undefined, () => 1, Symbol('s'), 1n, new Date(0), new Map(), cyclic]) {
        assert.throws(() => canonical({ v: bad }), (err) => err instanceof RuleStoreError && err.code === 'INVALID_RULES')
      }
    })

    it('refuses rules that are not an array of plain objects, and writes nothing', async function () {
      const w = await writer()
      for (const bad of [{}, 'rules', [1], [null], [[]], [{ when: new Date() }], [{ n: NaN }]]) {
        await assert.rejects(w.write(bad), (err) => err.code === 'INVALID_RULES')
      }
      assert.equal(fs.existsSync(file()), false)
    })
  })

  describe('one writer', function () {
    it('a second write face in this process is refused with this pid, until the first closes', async function () {
      const w = await writer()
      await assert.rejects(store.openWriter(), (err) =>
        err instanceof RuleStoreError && err.code === 'WRITER_HELD' && err.holderPid === process.pid &&
        err.message.includes(`pid ${process.pid}`))
      await w.close()
      await assert.rejects(w.write(RULES), (err) => err.code === 'WRITER_CLOSED')
      const again = await writer()
      await again.write(RULES)
    })

    it('reads take no lock: they work while a writer holds the store', async function () {
      const w = await writer()
      await w.write(RULES)
      const other = await openRuleStore(dir, { onDisclosure: () => {} })
      try {
        assert.deepEqual((await other.read()).rules, RULES)
      } finally {
        await other.close()
      }
    })

    it('two processes racing for the write face: exactly one wins, the other is told its pid', async function () {
      const racers = [0, 1].map(() => {
        const child = fork(path.join(__dirname, 'fixtures', 'racer.js'), [dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
        const messages = []
        const waiters = []
        child.on('message', (m) => { messages.push(m); for (const w of waiters.splice(0)) w() })
        const next = async () => {
          while (messages.length === 0) {
            await new Promise((resolve, reject) => {
              waiters.push(resolve)
              child.once('exit', () => reject(new Error('racer exited')))
            })
          }
          const m = messages.shift()
          if (m.error) throw new Error(m.error)
          return m
        }
        cleanup.push(async () => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await once(child, 'exit') } })
        return { child, next }
      })
      for (const r of racers) assert.deepEqual(await r.next(), { ready: true })
      for (const r of racers) r.child.send('go') // both at once; neither lets go before both answered
      const answers = await Promise.all(racers.map((r) => r.next()))
      const winners = racers.filter((r, i) => answers[i].won)
      assert.equal(winners.length, 1, JSON.stringify(answers))
      const winner = winners[0]
      const loser = answers.find((a) => !a.won)
      assert.equal(loser.code, 'WRITER_HELD')
      assert.equal(loser.holderPid, winner.child.pid)
      // Neither can this process write while the winner holds the store.
      await assert.rejects(store.openWriter(), (err) => err.code === 'WRITER_HELD' && err.holderPid === winner.child.pid)
      winner.child.send('write')
      assert.deepEqual(await winner.next(), { written: true })
      assert.deepEqual(await store.read(), { state: 'ok', rules: [{ id: 'writer', pid: winner.child.pid }] })
      for (const r of racers) { r.child.send('close'); await once(r.child, 'exit') }
      const w = await writer() // free again once both are gone
      await w.write([])
    })

    it('a writer killed while holding the store frees it', async function () {
      const child = fork(path.join(__dirname, 'fixtures', 'racer.js'), [dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      cleanup.push(async () => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await once(child, 'exit') } })
      const [ready] = await once(child, 'message')
      assert.deepEqual(ready, { ready: true })
      child.send('go')
      const [answer] = await once(child, 'message')
      assert.deepEqual(answer, { won: true })
      await assert.rejects(store.openWriter(), (err) => err.code === 'WRITER_HELD' && err.holderPid === child.pid)
      child.kill('SIGKILL')
      await once(child, 'exit')
      await (await writer()).write(RULES)
    })
  })

  describe('a damaged file', function () {
    const cases = [
      ['a flipped rule (checksum mismatch)', (text) => text.replace('api.example.com', 'evil.example.com'), 'CHECKSUM'],
      ['a forged checksum', (text) => text.replace(/sha256:[0-9a-f]{4}/, 'sha256:0000'), 'CHECKSUM'],
      ['a truncated file', (text) => text.slice(0, text.length >> 1), 'PARSE'],
      ['bytes that are not UTF-8', (text) => Buffer.concat([Buffer.from(text.slice(0, 20)), Buffer.from([0xc3, 0x28])]), 'PARSE'],
      ['JSON of another shape', () => '{"rules":[]}', 'SHAPE'],
      ['rules that are not objects', (text) => text.replace('"rules":[', '"rules":[7,'), 'SHAPE'],
      ['an empty file', () => '', 'PARSE'],
      ['a file over the size budget', () => ' '.repeat(256 * 1024 + 1), 'OVER_BUDGET']
    ]
    for (const [name, damage, reason] of cases) {
      it(`${name}: reads as zero rules, is disclosed, and every write refuses leaving the bytes in place`, async function () {
        const w = await writer()
        await w.write(RULES)
        fs.writeFileSync(file(), damage(fs.readFileSync(file(), 'utf8')))
        const damagedBytes = fs.readFileSync(file())
        assert.deepEqual(await store.read(), { state: 'damaged', reason, rules: [] })
        assert.deepEqual(disclosed, [{ file: FILE, reason }])
        await assert.rejects(w.write(RULES), (err) => err instanceof RuleStoreError && err.code === 'STORE_DAMAGED' && err.reason === reason)
        await assert.rejects(w.write([]), (err) => err.code === 'STORE_DAMAGED')
        assert.deepEqual(fs.readFileSync(file()), damagedBytes)
      })
    }

    it('a directory at the file name reads as damaged (UNSAFE_ENTRY) and is left alone', async function () {
      fs.mkdirSync(file())
      assert.deepEqual(await store.read(), { state: 'damaged', reason: 'UNSAFE_ENTRY', rules: [] })
      await assert.rejects((await writer()).write(RULES), (err) => err.code === 'STORE_DAMAGED')
      assert.ok(fs.statSync(file()).isDirectory())
    })
  })

  describe('a symlink planted at the file name', function () {
    let outside
    beforeEach(function () {
      outside = fs.mkdtempSync(path.join(os.tmpdir(), 'rule-store-outside-'))
    })
    afterEach(function () {
      fs.rmSync(outside, { recursive: true, force: true })
    })

    it('is never followed: a valid rule set behind it reads as zero rules, disclosed; writes refuse', async function () {
      const target = path.join(outside, 'rules.json')
      fs.writeFileSync(target, serialise([{ id: 'planted', allow: '*' }])) // verifies, if it were followed
      plantLink(this, target, file())
      assert.deepEqual(await store.read(), { state: 'damaged', reason: 'UNSAFE_ENTRY', rules: [] })
      assert.deepEqual(disclosed, [{ file: FILE, reason: 'UNSAFE_ENTRY' }])
      await assert.rejects((await writer()).write(RULES), (err) => err.code === 'STORE_DAMAGED' && err.reason === 'UNSAFE_ENTRY')
      assert.equal(fs.readlinkSync(file()), target)
      assert.equal(fs.readFileSync(target, 'utf8'), serialise([{ id: 'planted', allow: '*' }]))
    })

    it('a symlink at the lock name refuses the write face (UNSAFE_ENTRY) and is not followed', async function () {
      const target = path.join(outside, 'victim')
      plantLink(this, target, path.join(dir, LOCK))
      await assert.rejects(store.openWriter(), (err) => err.code === 'UNSAFE_ENTRY')
      assert.equal(fs.existsSync(target), false, 'the link target was not created')
    })
  })

  it('openRuleStore insists on a disclosure callback', async function () {
    await assert.rejects(openRuleStore(dir), TypeError)
    await assert.rejects(openRuleStore('relative', { onDisclosure () {} }), TypeError)
  })
})
