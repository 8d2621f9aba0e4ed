'use strict'
// NODE_DEBUG=agent-os wired into every subpath (issue 17, point 7): one line per
// operation of file-authority (both faces), node-lock and process, with its name, its
// outcome code and its duration, never a path or a payload; with NODE_DEBUG unset no
// function is wrapped. Each case runs in a child process (NODE_DEBUG is read at start).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const lib = path.join(__dirname, '..', '..', 'lib')

const SCRIPT = `
  const path = require('node:path')
  const { spawn } = require('node:child_process')
  const fa = require(${JSON.stringify(path.join(lib, 'file-authority.js'))})
  const { createMemoryAuthorities } = require(${JSON.stringify(path.join(lib, 'file-authority-testing.js'))})
  const nl = require(${JSON.stringify(path.join(lib, 'node-lock.js'))})
  const pr = require(${JSON.stringify(path.join(lib, 'process.js'))})
  const dir = process.argv[1]
  const wrapped = (f) => /Reflect\\.apply/.test(String(f))
  ;(async () => {
    const out = {}
    const w = await fa.openWriteAuthority(dir)
    await w.writeText(['secret-file'], 'secret-payload')
    const r = fa.openReadAuthoritySync(dir)
    r.readBytesSync(['secret-file'], { maxBytes: 100 })
    try { await r.readBytes(['secret-file'], { maxBytes: 1 }) } catch (e) { out.over = e.code }
    const mem = createMemoryAuthorities({ 'secret-dir': {} })
    mem.reader.listSync(['secret-dir'])
    const g = nl.tryAcquire(path.join(dir, 'secret.lock'))
    const held = nl.tryAcquire(path.join(dir, 'secret.lock'))
    out.held = held === undefined
    g.release()
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
    await new Promise((resolve) => child.once('spawn', resolve))
    await pr.killProcessTree(child, { graceMs: 100 })
    out.wrapped = [fa.openReadAuthority, Object.getPrototypeOf(r).readBytes, Object.getPrototypeOf(mem.reader).listSync, nl.acquire, pr.killProcessTree].map(wrapped)
    await w.close(); await r.close()
    console.log(JSON.stringify(out))
  })()`

function run (env) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-debug-secret-'))
  try {
    const e = { ...process.env, ...env }
    if (env.NODE_DEBUG === undefined) delete e.NODE_DEBUG
    const r = spawnSync(process.execPath, ['-e', SCRIPT, dir], { env: e, encoding: 'utf8', timeout: 30000 })
    if (r.error) throw r.error
    assert.equal(r.status, 0, r.stderr)
    return { out: JSON.parse(r.stdout), lines: r.stderr.split('\n').filter(Boolean), dir }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe('NODE_DEBUG=agent-os in every subpath', function () {
  this.timeout(60000)

  it('logs one line per operation (name, outcome, duration), never a path or a payload', function () {
    const { out, lines, dir } = run({ NODE_DEBUG: 'agent-os' })
    assert.equal(out.over, 'OVER_BUDGET')
    assert.equal(out.held, true)
    assert.deepEqual(out.wrapped, [true, true, true, true, true])
    const pattern = /^AGENT-OS \d+: (\w+) ([A-Za-z_-]+) \d+\.\d{3} ms$/
    for (const l of lines) assert.match(l, pattern)
    assert.deepEqual(lines.map((l) => pattern.exec(l).slice(1, 3).join(' ')), [
      'openWriteAuthority ok', 'writeText ok', 'openReadAuthoritySync ok', 'readBytesSync ok', 'readBytes OVER_BUDGET',
      'listSync ok', 'tryAcquire ok', 'tryAcquire held', 'killProcessTree ok'
    ])
    const all = lines.join('\n')
    assert.doesNotMatch(all, /secret/)
    assert.ok(!all.includes(dir))
  })

  it('with NODE_DEBUG unset, prints nothing and wraps nothing', function () {
    const { out, lines } = run({ NODE_DEBUG: undefined })
    assert.deepEqual(lines, [])
    assert.deepEqual(out.wrapped, [false, false, false, false, false])
    assert.equal(out.held, true)
  })
})
