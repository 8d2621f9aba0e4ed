'use strict'
// lib/internal/debug.js: NODE_DEBUG=agent-os logs one line per operation (name, outcome,
// duration), never an argument or a result; with NODE_DEBUG unset the traced functions
// are the originals (nothing added to a hot path). Each case runs in a child process,
// since NODE_DEBUG is read once at process start.

const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const debugJs = path.join(__dirname, '..', '..', 'lib', 'internal', 'debug.js')

const SCRIPT = `
  const debug = require(${JSON.stringify(debugJs)})
  const SECRET = '/home/alice/secret-path'
  const read = (p) => { if (p === 'bad') { const e = new Error('x ' + SECRET); e.code = 'INVALID_PATH'; throw e } return SECRET }
  const readAsync = async (p) => read(p)
  class Lock { tryAcquire (held) { return held ? undefined : { token: SECRET } } }
  const plain = { readSync: read }
  const tracedSync = debug.traceSync('readBytesSync', read)
  const tracedAsync = debug.traceAsync('readBytes', readAsync)
  debug.traceMethods(Lock.prototype, { tryAcquire: 'sync' })
  const traceHeld = debug.traceSync('tryAcquireHeld', (held) => held ? undefined : 1, { outcome: (r) => (r === undefined ? 'held' : SECRET) })
  ;(async () => {
    const out = { enabled: debug.enabled, same: tracedSync === read && tracedAsync === readAsync, name: tracedSync.name, length: tracedAsync.length }
    out.syncResult = tracedSync(SECRET) === SECRET
    try { tracedSync('bad') } catch (e) { out.syncThrew = e.code }
    const p = tracedAsync('bad')
    out.samePromise = p instanceof Promise
    try { await p } catch (e) { out.asyncRejected = e.code }
    out.asyncResult = (await tracedAsync(SECRET)) === SECRET
    out.method = new Lock().tryAcquire(false).token === SECRET
    out.held = traceHeld(true) === undefined
    out.heldOk = traceHeld(false) === 1
    await new Promise((resolve) => setImmediate(resolve))
    console.log(JSON.stringify(out))
  })()`

function run (env) {
  const e = { ...process.env, ...env }
  if (env.NODE_DEBUG === undefined) delete e.NODE_DEBUG
  const r = spawnSync(process.execPath, ['-e', SCRIPT], { env: e, encoding: 'utf8', timeout: 30000 })
  if (r.error) throw r.error
  assert.equal(r.status, 0, r.stderr)
  return { out: JSON.parse(r.stdout), lines: r.stderr.split('\n').filter(Boolean) }
}

describe('internal: NODE_DEBUG=agent-os', function () {
  this.timeout(60000)
  it('logs one line per operation: name, outcome code, duration; never a path or a value', function () {
    const { out, lines } = run({ NODE_DEBUG: 'agent-os' })
    assert.equal(out.enabled, true)
    assert.equal(out.same, false)
    assert.equal(out.name, 'read')
    assert.equal(out.length, 1)
    assert.deepEqual([out.syncResult, out.syncThrew, out.samePromise, out.asyncRejected, out.asyncResult, out.method, out.held, out.heldOk],
      [true, 'INVALID_PATH', true, 'INVALID_PATH', true, true, true, true])
    const pattern = /^AGENT-OS \d+: (\w+) ([A-Za-z_-]+) \d+\.\d{3} ms$/
    for (const l of lines) assert.match(l, pattern)
    const seen = lines.map((l) => pattern.exec(l).slice(1, 3).join(' '))
    assert.deepEqual(seen, [
      'readBytesSync ok', 'readBytesSync INVALID_PATH', 'readBytes INVALID_PATH', 'readBytes ok',
      'tryAcquire ok', 'tryAcquireHeld held', 'tryAcquireHeld ok'
    ])
    assert.doesNotMatch(lines.join('\n'), /secret|alice/)
  })

  it('is on for NODE_DEBUG lists naming it among others', function () {
    const { out, lines } = run({ NODE_DEBUG: 'net,agent-os' })
    assert.equal(out.enabled, true)
    assert.equal(lines.filter((l) => l.startsWith('AGENT-OS ')).length, 7)
  })

  it('with NODE_DEBUG unset, prints nothing and leaves every function as it was', function () {
    const { out, lines } = run({ NODE_DEBUG: undefined })
    assert.equal(out.enabled, false)
    assert.equal(out.same, true)
    assert.deepEqual(lines, [])
    assert.equal(out.syncThrew, 'INVALID_PATH')
  })

  it('refuses an operation name that is not an identifier, even when off', function () {
    const debug = require('../../lib/internal/debug.js')
    assert.throws(() => debug.traceSync('read /etc/passwd', () => {}), TypeError)
    assert.throws(() => debug.traceMethods({}, { missing: 'sync' }), TypeError)
  })
})
