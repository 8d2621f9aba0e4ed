'use strict'
// The mistakes a new user makes (contract 0.3, "Arguments"): wrong types, unknown option
// keys, relative paths, strings for segment arrays, Buffers and URLs for roots and lock
// paths, swapped arguments. Each is refused with a typed code (a bad path INVALID_PATH,
// anything else INVALID_OPTION), `argument` naming what is at fault, a message that
// holds no value the caller passed, and, for a Promise, a rejection (never a throw)
// whose stack names this file's line. Failures decided later (in C, or by node-lock's
// wait) name the caller's line too.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const fa = require('../../lib/file-authority.js')
const testing = require('../../lib/file-authority-testing.js')
const lock = require('../../lib/node-lock.js')
const proc = require('../../lib/process.js')
const { spawn } = require('node:child_process')

const SECRET = 'zq-secret-7'
const V = '0'.repeat(96)

let root, lockDir, faces
const lockPath = () => path.join(lockDir, 'g.lock')

/** Runs `call` and returns its failure: a rejection (with the line of the await) for a
 * Promise, else the synchronous throw. */
async function failure (call) {
  let value
  try {
    value = call()
  } catch (err) {
    return { err, sync: true }
  }
  assert.ok(value instanceof Promise, 'a Promise or a throw')
  // Both statements on one line: the stack of the rejection must name it.
  const here = new Error('here'); try { await value } catch (err) { return { err, here } } // eslint-disable-line
  assert.fail('expected a refusal, got a result')
}

function lineOf (err) {
  const m = new RegExp(`${path.basename(__filename).replace('.', '\\.')}:(\\d+)`).exec(err.stack)
  return m === null ? undefined : Number(m[1])
}

// [title, subpath, call(faces), code, argument, async]
function cases () {
  const out = []
  const both = (title, fn, code, argument) => {
    for (const face of ['native', 'memory']) out.push([`${face}: ${title}`, 'file-authority', () => fn(faces[face]), code, argument])
  }
  // file-authority: opening
  for (const [title, root, argument] of [
    ['a relative root', `relative/${SECRET}`, 'root'],
    ['an empty root', '', 'root'],
    ['a Buffer root', Buffer.from(`/tmp/${SECRET}`), 'root'],
    ['a URL root', new URL(`file:///tmp/${SECRET}`), 'root'],
    ['a root with NUL', `/tmp/${SECRET}\0`, 'root'],
    ['no root', undefined, 'root']
  ]) {
    out.push([`openReadAuthority with ${title}`, 'file-authority', () => fa.openReadAuthority(root), 'INVALID_PATH', argument])
    out.push([`openWriteAuthoritySync with ${title}`, 'file-authority', () => fa.openWriteAuthoritySync(root), 'INVALID_PATH', argument])
  }
  out.push(['openReadAuthority with sameRootAs a string', 'file-authority', () => fa.openReadAuthority(root, { sameRootAs: SECRET }), 'INVALID_OPTION', 'options.sameRootAs'])
  out.push(['openReadAuthority with an unknown option', 'file-authority', () => fa.openReadAuthority(root, { readOnly: true }), 'INVALID_OPTION', 'options.readOnly'])
  out.push(['openReadAuthority with options a string', 'file-authority', () => fa.openReadAuthority(root, SECRET), 'INVALID_OPTION', 'options'])
  // file-authority: every operation, both faces
  both('readBytes with a string for segments', (f) => f.reader.readBytes(`docs/${SECRET}`, { maxBytes: 9 }), 'INVALID_PATH', 'segments')
  both('readBytesSync with a string for segments', (f) => f.reader.readBytesSync(`docs/${SECRET}`, { maxBytes: 9 }), 'INVALID_PATH', 'segments')
  both('readBytes with swapped arguments', (f) => f.reader.readBytes({ maxBytes: 9 }, [SECRET]), 'INVALID_PATH', 'segments')
  both('readBytes without a budget', (f) => f.reader.readBytes([SECRET]), 'INVALID_PATH', 'options.maxBytes')
  both('readBytes with an encoding string for options', (f) => f.reader.readBytes([SECRET], 'utf8'), 'INVALID_OPTION', 'options')
  both('readBytes with { encoding }', (f) => f.reader.readBytes([SECRET], { maxBytes: 9, encoding: 'utf8' }), 'INVALID_OPTION', 'options.encoding')
  both('readBytes with { signal }', (f) => f.reader.readBytes([SECRET], { maxBytes: 9, signal: AbortSignal.abort() }), 'INVALID_OPTION', 'options.signal')
  both('readBytes with a numeric-string budget', (f) => f.reader.readBytes([SECRET], { maxBytes: '9' }), 'INVALID_PATH', 'options.maxBytes')
  both('readBytes with ".." as a segment', (f) => f.reader.readBytes(['..', SECRET], { maxBytes: 9 }), 'INVALID_PATH', 'segments[0]')
  both('readBytes with a path as one segment', (f) => f.reader.readBytes([`docs/${SECRET}`], { maxBytes: 9 }), 'INVALID_PATH', 'segments[0]')
  both('readVersioned with maxBytes as a string', (f) => f.reader.readVersioned([SECRET], { maxBytes: SECRET }), 'INVALID_PATH', 'options.maxBytes')
  both('readRange with start/end', (f) => f.reader.readRange([SECRET], { start: 0, end: 9 }), 'INVALID_OPTION', 'options.start')
  both('readRange with a negative offset', (f) => f.reader.readRange([SECRET], { offset: -1, length: 9 }), 'INVALID_OPTION', 'options.offset')
  both('list with { recursive }', (f) => f.reader.list([], { recursive: true }), 'INVALID_OPTION', 'options.recursive')
  both('walk without options', (f) => f.reader.walk([]), 'INVALID_OPTION', 'options.maxEntries')
  both('walk with { recursive }', (f) => f.reader.walk([], { maxEntries: 5, recursive: true }), 'INVALID_OPTION', 'options.recursive')
  both('stat with { bigint }', (f) => f.reader.stat([SECRET], { bigint: true }), 'INVALID_OPTION', 'options')
  both("writeText with { flag: 'a' }", (f) => f.writer.writeText([SECRET], SECRET, { flag: 'a' }), 'INVALID_OPTION', 'options.flag')
  both('writeText with { encoding }', (f) => f.writer.writeText([SECRET], SECRET, { encoding: 'latin1' }), 'INVALID_OPTION', 'options.encoding')
  both('writeText with an encoding string for options', (f) => f.writer.writeText([SECRET], SECRET, 'utf8'), 'INVALID_OPTION', 'options')
  both('writeText with swapped arguments', (f) => f.writer.writeText(SECRET, [SECRET]), 'INVALID_PATH', 'segments')
  both('writeText with a number for text', (f) => f.writer.writeText([SECRET], 42), 'INVALID_OPTION', 'text')
  both('writeTextSync with an object for text', (f) => f.writer.writeTextSync([SECRET], { text: SECRET }), 'INVALID_OPTION', 'text')
  both('writeText with mode as a string', (f) => f.writer.writeText([SECRET], SECRET, { mode: '644' }), 'INVALID_OPTION', 'options.mode')
  both('writeText with ifVersion and ifAbsent', (f) => f.writer.writeText([SECRET], SECRET, { ifVersion: V, ifAbsent: true }), 'INVALID_OPTION', 'options.ifVersion')
  both('writeBytes with a string', (f) => f.writer.writeBytes([SECRET], SECRET), 'INVALID_OPTION', 'bytes')
  both('remove with { recursive }', (f) => f.writer.remove([SECRET], { recursive: true }), 'INVALID_OPTION', 'options.recursive')
  both('remove with { force }', (f) => f.writer.remove([SECRET], { force: true }), 'INVALID_OPTION', 'options.force')
  both('makeDirectory with { recursive }', (f) => f.writer.makeDirectory([SECRET], { recursive: true }), 'INVALID_OPTION', 'options.recursive')
  both('rename with a string target', (f) => f.writer.rename([SECRET], SECRET), 'INVALID_PATH', 'to')
  both('rename with strings', (f) => f.writer.rename(SECRET, SECRET), 'INVALID_PATH', 'from')
  both('rename with { overwrite }', (f) => f.writer.rename([SECRET], ['b'], { overwrite: true }), 'INVALID_OPTION', 'options.overwrite')
  both('sharesRootWith a string', (f) => f.reader.sharesRootWith(SECRET), 'INVALID_OPTION', 'other')
  both("a reader's method called on a writer", (f) => f.reader.readBytes.call(f.writer, [SECRET], { maxBytes: 1 }), 'INVALID_OPTION', 'this')
  out.push(['createMemoryAuthorities with an unknown option', 'file-authority', () => testing.createMemoryAuthorities({}, { faults: () => 'HOST_IO' }), 'INVALID_OPTION', 'options.faults'])
  out.push(['createMemoryAuthorities with fault a string', 'file-authority', () => testing.createMemoryAuthorities({}, { fault: SECRET }), 'INVALID_OPTION', 'options.fault'])
  // toSegments (both subpaths export the same function)
  for (const [title, call, code, argument] of [
    ['toSegments with a number', () => fa.toSegments(42), 'INVALID_PATH', 'path'],
    ['toSegments with an absolute path and no root', () => fa.toSegments(`/etc/${SECRET}`), 'INVALID_PATH', 'path'],
    ['toSegments with a sibling of the root', () => testing.toSegments(`/srv/${SECRET}_evil/x`, { root: `/srv/${SECRET}` }), 'INVALID_PATH', 'path'],
    ['toSegments with a relative root', () => fa.toSegments('a', { root: `srv/${SECRET}` }), 'INVALID_PATH', 'options.root'],
    ['toSegments with a Buffer root', () => fa.toSegments('a', { root: Buffer.from(`/srv/${SECRET}`) }), 'INVALID_PATH', 'options.root'],
    ['toSegments with swapped arguments', () => fa.toSegments({ root: '/srv' }, `/srv/${SECRET}`), 'INVALID_OPTION', 'options'],
    ['toSegments with { trim }', () => fa.toSegments('a', { trim: true }), 'INVALID_OPTION', 'options.trim']
  ]) out.push([title, 'file-authority', call, code, argument])
  // node-lock
  for (const [title, call, code, argument] of [
    ['tryAcquire with a relative path', () => lock.tryAcquire(`${SECRET}.lock`), 'INVALID_PATH', 'lockPath'],
    ['tryAcquire with a Buffer', () => lock.tryAcquire(Buffer.from(`/tmp/${SECRET}`)), 'INVALID_PATH', 'lockPath'],
    ['tryAcquire with a URL', () => lock.tryAcquire(new URL(`file:///tmp/${SECRET}.lock`)), 'INVALID_PATH', 'lockPath'],
    ['tryAcquire with a lone surrogate', () => lock.tryAcquire(`/tmp/${SECRET}\ud800.lock`), 'INVALID_PATH', 'lockPath'],
    ['tryAcquire with options', () => lock.tryAcquire(lockPath(), { timeoutMs: 5 }), 'INVALID_OPTION', 'options'],
    ['acquire with { timeout }', () => lock.acquire(lockPath(), { timeout: 5 }), 'INVALID_OPTION', 'options.timeout'],
    ['acquire with a number for options', () => lock.acquire(lockPath(), 5), 'INVALID_OPTION', 'options'],
    ['acquire with a negative timeoutMs', () => lock.acquire(lockPath(), { timeoutMs: -1 }), 'INVALID_OPTION', 'options.timeoutMs'],
    ['acquire with a signal that is not one', () => lock.acquire(lockPath(), { signal: {} }), 'INVALID_OPTION', 'options.signal'],
    ['withLock with swapped arguments', () => lock.withLock(() => 1, lockPath()), 'INVALID_PATH', 'lockPath'],
    ['withLock without fn', () => lock.withLock(lockPath()), 'INVALID_OPTION', 'fn'],
    ['withLock with { retries }', () => lock.withLock(lockPath(), () => 1, { retries: 3 }), 'INVALID_OPTION', 'options.retries']
  ]) out.push([title, 'node-lock', call, code, argument])
  // process
  const child = () => spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  for (const [title, call, code, argument] of [
    ['killProcessTree with { timeout }', () => proc.killProcessTree(child(), { timeout: 5 }), 'INVALID_OPTION', 'options.timeout'],
    ['killProcessTree with a signal number', () => proc.killProcessTree(child(), { signal: 15 }), 'INVALID_OPTION', 'options.signal'],
    ["killProcessTree with 'TERM'", () => proc.killProcessTree(child(), { signal: 'TERM' }), 'INVALID_OPTION', 'options.signal'],
    ['killProcessTree with graceMs as a string', () => proc.killProcessTree(child(), { graceMs: '100' }), 'INVALID_OPTION', 'options.graceMs'],
    ['killProcessTree with a string target', () => proc.killProcessTree(String(process.pid + 1)), 'INVALID_OPTION', 'target'],
    ['killProcessTree with its own pid', () => proc.killProcessTree(process.pid), 'INVALID_OPTION', 'target'],
    ['killProcessTree with swapped arguments', () => proc.killProcessTree({ graceMs: 5 }, child()), 'INVALID_OPTION', 'target'],
    ['openProcessScope with an unknown option', () => proc.openProcessScope({ backend: 'cgroup' }), 'INVALID_OPTION', 'options.backend'],
    ['openProcessScope with options a string', () => proc.openProcessScope('cgroup'), 'INVALID_OPTION', 'options']
  ]) out.push([title, 'process', call, code, argument])
  return out
}

describe('package: the mistakes a new user makes', function () {
  before(async function () {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-mistakes-'))
    lockDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-mistakes-lock-'))
    fs.mkdirSync(path.join(root, 'dir'))
    const mem = testing.createMemoryAuthorities({ dir: {} })
    faces = {
      native: { reader: await fa.openReadAuthority(root), writer: await fa.openWriteAuthority(root) },
      memory: mem
    }
  })
  after(async function () {
    await faces.native.reader.close()
    await faces.native.writer.close()
    fs.rmSync(root, { recursive: true, force: true })
    fs.rmSync(lockDir, { recursive: true, force: true })
  })

  for (const [title, subpath, call, code, argument] of cases()) {
    it(`${title}: ${code} (${argument})`, async function () {
      const { err, here, sync } = await failure(call)
      const Class = subpath === 'node-lock' ? lock.NodeLockError : subpath === 'process' ? proc.ProcessTreeError : fa.FileAuthorityError
      assert.ok(err instanceof Class, String(err && err.stack))
      assert.equal(err.code, code)
      assert.equal(err.argument, argument)
      assert.ok(err.message.includes(argument), `the message names ${argument}: ${err.message}`)
      assert.match(err.message, / (must|is not an option|has an unknown option|could not)/, 'says what is expected')
      assert.ok(!err.message.includes(SECRET) && !err.message.includes('zq-'), `no caller value: ${err.message}`)
      // Thrown or rejected, the stack names a line of this file (for a rejection: the
      // caller's frame, as fs/promises gives it).
      assert.ok(lineOf(err) !== undefined, `the stack names this file's line:\n${err.stack}`)
      if (!sync) assert.ok(here instanceof Error)
    })
  }

  describe('failures decided after the call name the caller too', function () {
    it('a refusal decided in C (readBytes of a directory) names the awaiting line', async function () {
      let err
      const line = lineOf(new Error('the next line awaits')) + 1
      try { await faces.native.reader.readBytes(['dir'], { maxBytes: 1 }) } catch (e) { err = e }
      assert.equal(err.code, 'UNSAFE_ENTRY')
      assert.equal(err.hostCode, 'EISDIR')
      assert.ok(err.stack.split('\n').some((l) => l.includes(`mistakes.test.js:${line}:`)), err.stack)
    })

    it('a host failure decided in C (a missing parent) names the awaiting line, with its hint', async function () {
      let err
      const line = lineOf(new Error('the next line awaits')) + 1
      try { await faces.native.writer.writeText(['missing', 'x'], 'x') } catch (e) { err = e }
      assert.equal(err.code, 'HOST_IO')
      assert.match(err.message, /createParents: true creates missing parents \(ENOENT\)$/)
      assert.ok(err.stack.split('\n').some((l) => l.includes(`mistakes.test.js:${line}:`)), err.stack)
    })

    it('node-lock: LOCK_HELD decided after the call names the awaiting line', async function () {
      const guard = lock.tryAcquire(lockPath())
      let err
      const line = lineOf(new Error('the next line awaits')) + 1
      try { await lock.withLock(lockPath(), () => 1) } catch (e) { err = e }
      guard.release()
      assert.equal(err.code, 'LOCK_HELD')
      assert.ok(err.stack.split('\n').some((l) => l.includes(`mistakes.test.js:${line}:`)), err.stack)
    })

    it('node-lock: LOCK_TIMEOUT decided by a timer names the awaiting line', async function () {
      const guard = lock.tryAcquire(lockPath())
      let err
      const line = lineOf(new Error('the next line awaits')) + 1
      try { await lock.acquire(lockPath(), { timeoutMs: 20 }) } catch (e) { err = e }
      guard.release()
      assert.equal(err.code, 'LOCK_TIMEOUT')
      assert.ok(err.stack.split('\n').some((l) => l.includes(`mistakes.test.js:${line}:`)), err.stack)
    })

    it('process: a scope refuses spawn and kill options it does not know, on its backend', async function () {
      const scope = await proc.openProcessScope()
      try {
        assert.throws(() => scope.spawn(process.execPath, ['-e', ''], { stdio: 'ignore', timeoutMs: 5 }),
          (e) => e instanceof TypeError && e.code === 'INVALID_OPTION' && e.argument === 'options.timeoutMs' && e.operation === 'spawn')
        let err
        const line = lineOf(new Error('the next line awaits')) + 1
        try { await scope.kill({ grace: 5 }) } catch (e) { err = e }
        assert.equal(err.code, 'INVALID_OPTION')
        assert.equal(err.argument, 'options.grace')
        assert.ok(err.stack.split('\n').some((l) => l.includes(`mistakes.test.js:${line}:`)), err.stack)
      } finally {
        await scope.close()
      }
    })

    it("a caller's own error thrown by withLock's fn keeps its own stack", async function () {
      const mine = new Error('mine')
      const before = mine.stack
      await assert.rejects(lock.withLock(lockPath(), () => { throw mine }), (e) => e === mine && e.stack === before)
    })
  })
})
