'use strict'
// The JavaScript fuzzer: calls every exported function, constructor and method of the
// package's subpaths (file-authority, file-authority/testing, node-lock, and process
// when it is present) with random values of every type — proxies that throw on every
// trap, getters that throw, objects whose Symbol.toPrimitive throws, huge and odd
// numbers, BigInt, Symbols, arrays with holes, frozen objects, revoked proxies — and
// also with the right shapes now and then, so calls get past validation too.
//
// The process must never crash or abort, and every failure must be typed: a
// FileAuthorityError for file-authority, a NodeLockError for node-lock, a TypeError
// with a string `code` for process (see `typed` below for the exact rule). Two
// exceptions are not the library's own and may pass through unchanged, as they do
// through node:fs: what the caller's own object throws (a getter, a proxy trap, any use
// of a revoked proxy), and a TypeError for a method called on a foreign receiver (as
// Map.prototype.get.call({}) does). A Promise-returning function must never throw
// synchronously.
//
// Seeded (xoshiro128**): `node fuzz/js-fuzz.js --calls N --seed S` reproduces a run;
// the seed is printed first. Paths it generates stay inside a temporary directory it
// creates (absolute strings are re-rooted there); pids it hands to killProcessTree
// are never those of live processes other than its own sacrificial children.
//
// Used by `npm run fuzz` (100 000 calls) and test/stress/js-fuzz.test.js (5 000 calls).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

const lib = path.join(__dirname, '..', 'lib')
const fa = require(path.join(lib, 'file-authority.js'))
const testing = require(path.join(lib, 'file-authority-testing.js'))
const lock = require(path.join(lib, 'node-lock.js'))
let proc
try {
  proc = require(path.join(lib, 'process.js'))
} catch (err) {
  if (err.code !== 'MODULE_NOT_FOUND') throw err
}

// ------------------------------------------------------------------ seeded PRNG

function rng (seed) {
  let a = seed >>> 0 || 1
  let b = 0x9e3779b9
  let c = 0x243f6a88
  let d = 0xb7e15162
  function next () {
    const t = b << 9
    let r = Math.imul(b, 5)
    r = Math.imul((r << 7) | (r >>> 25), 9)
    c ^= a; d ^= b; b ^= c; a ^= d; c ^= t
    d = (d << 11) | (d >>> 21)
    return (r >>> 0) / 4294967296
  }
  for (let i = 0; i < 16; i++) next()
  return {
    float: next,
    int (n) { return Math.floor(next() * n) },
    pick (arr) { return arr[Math.floor(next() * arr.length)] },
    chance (p) { return next() < p }
  }
}

class FuzzTrap extends Error {}

// ------------------------------------------------------------------ the fuzzer

function createFuzzer ({ seed, dir }) {
  const R = rng(seed)
  const sacrificial = new Set() // pids of our own children (the only live pids used)
  const authorities = [] // real and in-memory authorities, to call methods on
  const guards = []
  // Set when the call in progress uses a receiver that is not the object the method
  // came from: a TypeError is then the language's own answer (as for
  // Map.prototype.get.call({})), and counts as typed.
  const state = { foreignReceiver: false }
  const receiver = (real) => {
    if (R.chance(0.85)) return real
    state.foreignReceiver = true
    return value()
  }

  const NAMES = ['a', 'b', 'f', 'docs', 'x.txt', 'é', '😀', 'link', 'fifo', 'new', '.aos-0123456789abcdef0123456789abcdef.tmp']
  fs.mkdirSync(path.join(dir, 'root', 'a', 'b'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'other'))
  fs.writeFileSync(path.join(dir, 'root', 'f'), 'INSIDE')
  fs.writeFileSync(path.join(dir, 'root', 'a', 'b', 'f'), 'x'.repeat(1000))
  fs.symlinkSync(path.join(dir, 'other'), path.join(dir, 'root', 'link'))
  const rootDir = path.join(dir, 'root')

  function str () {
    const alphabet = ['a', 'b', '.', '/', '\\', '\0', ':', ' ', 'é', '\ud800', '\udc00', '😀', '\u0085', 'CON', '..', 'x']
    let s = ''
    const n = R.chance(0.05) ? 200 + R.int(200) : R.int(12)
    for (let i = 0; i < n; i++) s += R.pick(alphabet)
    // Nothing outside the fuzz directory can be named: absolute strings are re-rooted.
    if (path.isAbsolute(s) || /^[a-zA-Z]:/.test(s)) s = path.join(dir, s.replace(/\.\./g, '__').replace(/\0/g, ''))
    return s
  }

  function number () {
    return R.pick([0, -0, 1, -1, 0.5, 255, 256, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), Number.MAX_VALUE,
      Number.MIN_VALUE, Infinity, -Infinity, NaN, 1e300, 4294967295, 2147483647, -2147483648, R.int(100000), R.float() * 1e6])
  }

  function throwingProxy (target = {}) {
    const trap = () => { throw new FuzzTrap('trap') }
    return new Proxy(target, {
      get: trap, set: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, defineProperty: trap,
      deleteProperty: trap, getPrototypeOf: trap, setPrototypeOf: trap, isExtensible: trap, preventExtensions: trap,
      apply: trap, construct: trap
    })
  }

  function hostile () {
    switch (R.int(12)) {
      case 0: return throwingProxy()
      case 1: return throwingProxy([])
      case 2: return throwingProxy(function () {})
      case 3: { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy }
      case 4: return { [Symbol.toPrimitive] () { throw new FuzzTrap('toPrimitive') }, toString () { throw new FuzzTrap('toString') }, valueOf () { throw new FuzzTrap('valueOf') } }
      case 5: return Object.defineProperty({}, 'maxBytes', { get () { throw new FuzzTrap('getter') }, enumerable: true })
      case 6: { const a = []; a.length = 2 ** 32 - 1; return a } // a huge sparse array
      case 7: { const a = []; a[3] = 'x'; a[7] = 'y'; return a } // holes
      case 8: return Object.freeze(['a', Object.freeze({})])
      case 9: { const a = ['a', 'b']; Object.defineProperty(a, 1, { get () { throw new FuzzTrap('index getter') } }); return a }
      case 10: return new Proxy(['a', 'b'], { get (t, k) { if (k === 'length') return 3; return t[k] } })
      default: return Object.create(null)
    }
  }

  function segments () {
    if (R.chance(0.1)) return hostile()
    if (R.chance(0.05)) return new Array(256).fill('a')
    const n = R.int(5)
    const out = []
    for (let i = 0; i < n; i++) out.push(R.chance(0.7) ? R.pick(NAMES) : value(1))
    return out
  }

  function options () {
    switch (R.int(9)) {
      case 0: return undefined
      case 1: return { maxBytes: R.pick([0, 6, 1000, 2 ** 31, number()]) }
      case 2: return { maxBytes: value(1) }
      case 3: return { createParents: R.chance(0.5) ? R.chance(0.5) : value(1) }
      case 4: return { timeoutMs: R.pick([0, 1, 5, number()]), signal: R.chance(0.5) ? AbortSignal.abort(R.chance(0.5) ? new FuzzTrap('abort') : undefined) : value(1) }
      case 5: return { signal: R.pick(['SIGTERM', 'SIGKILL', 'SIGFOO', 'SIGUSR1', value(1)]), graceMs: R.pick([0, 1, 10, -1, NaN, Infinity, number()]), preKill: R.chance(0.5) ? () => { throw new FuzzTrap('preKill') } : value(1) }
      case 6: return { sameRootAs: R.chance(0.7) && authorities.length ? R.pick(authorities) : value(1) }
      case 7: return { fault: () => R.pick(['INVALID_PATH', 'HOST_IO', 'NOPE', undefined, 42]) }
      default: return value(1)
    }
  }

  function childLike () {
    // Pids: never a live process but our own sacrificial children.
    const deadPid = R.pick([0, -1, -2, 1.5, NaN, 2 ** 31, 2 ** 53, 4194305 + R.int(1000), undefined, null, '1', 1n])
    switch (R.int(6)) {
      case 0: return hostile()
      case 1: return { pid: deadPid, exitCode: R.pick([null, 0, 1]), signalCode: R.pick([null, 'SIGTERM']), once () {}, removeListener () {} }
      case 2: return { pid: deadPid, exitCode: null, signalCode: null, once: value(1), removeListener: value(1) }
      case 3: return { exitCode: 0, signalCode: null, once () { throw new FuzzTrap('once') }, removeListener () {} }
      case 4: return Object.defineProperty({ exitCode: null, signalCode: null, once () {}, removeListener () {} }, 'pid', { get () { throw new FuzzTrap('pid') } })
      default: return value(1)
    }
  }

  // Any value at all (depth-limited).
  function value (depth = 0) {
    switch (R.int(depth > 1 ? 12 : 16)) {
      case 0: return undefined
      case 1: return null
      case 2: return R.chance(0.5)
      case 3: return number()
      case 4: return str()
      case 5: return R.pick([0n, -1n, 2n ** 64n, 2n ** 1000n])
      case 6: return R.pick([Symbol('s'), Symbol.iterator, Symbol.for('x')])
      case 7: return hostile()
      case 8: return R.pick([rootDir, path.join(rootDir, 'f'), path.join(dir, 'lock'), path.join(dir, 'other'), '/', ''])
      case 9: return R.chance(0.5) ? new Uint8Array(R.int(8)).fill(0xff) : Buffer.from('ok')
      case 10: return () => R.chance(0.5) ? value(depth + 1) : Promise.reject(new FuzzTrap('fn'))
      case 11: return authorities.length ? R.pick(authorities) : {}
      case 12: return segments()
      case 13: return options()
      case 14: return [value(depth + 1), value(depth + 1)]
      default: return { a: value(depth + 1), [Symbol('k')]: value(depth + 1) }
    }
  }

  // ---- the surface: [name, family, async, fn(args)]

  const surface = []
  const add = (name, family, isAsync, call) => surface.push({ name, family, isAsync, call })

  for (const name of ['openReadAuthority', 'openWriteAuthority']) {
    add(name, 'fa', true, () => fa[name](R.chance(0.6) ? rootDir : value(), options()))
  }
  for (const name of ['openReadAuthoritySync', 'openWriteAuthoritySync']) {
    add(name, 'fa', false, () => {
      const a = fa[name](R.chance(0.6) ? rootDir : value(), options())
      if (authorities.length < 64) authorities.push(a)
      else a.closeSync()
      return a
    })
  }
  add('new FileAuthorityError', 'fa', false, () => new fa.FileAuthorityError(R.pick(['INVALID_PATH', 'HOST_IO', value()]), value()))
  add('createMemoryAuthorities', 'fa', false, () => {
    const tree = R.pick([undefined, { f: 'INSIDE', d: { g: new Uint8Array([0xc3, 0xa9]) }, l: { symlink: '../x' }, o: { other: true } }, value()])
    const m = testing.createMemoryAuthorities(tree, R.chance(0.3) ? options() : undefined)
    if (authorities.length < 64) authorities.push(m.reader, m.writer)
    if (R.chance(0.3)) m.snapshot()
    return m
  })
  add('new testing.FileAuthorityError', 'fa', false, () => new testing.FileAuthorityError(value(), value()))

  // Methods: on a random authority, or with a random receiver.
  const methods = [
    ['readBytes', true], ['readBytesSync', false], ['list', true], ['listSync', false],
    ['writeText', true], ['writeTextSync', false], ['sharesRootWith', false], ['close', true],
    ['closeSync', false], [Symbol.asyncDispose, true], [Symbol.dispose, false]
  ]
  for (const [m, isAsync] of methods) {
    add(`authority.${String(m)}`, 'fa', isAsync, () => {
      const target = authorities.length ? R.pick(authorities) : fa.openReadAuthoritySync(rootDir)
      // Closing is rarer, so most calls reach an open authority.
      if ((m === 'close' || m === 'closeSync' || typeof m === 'symbol') && R.chance(0.9)) return undefined
      const fn = target[m]
      if (typeof fn !== 'function') return undefined // a reader has no writeText: not part of its surface
      const self = receiver(target)
      if (m === 'sharesRootWith') return fn.call(self, R.chance(0.5) ? R.pick(authorities) : value())
      if (m.startsWith && m.startsWith('write')) return fn.call(self, segments(), R.chance(0.7) ? R.pick(['text', 'é😀', '\ud800', new Uint8Array([0xff])]) : value(), options())
      return fn.call(self, segments(), options())
    })
  }
  add('authority.closed', 'fa', false, () => {
    const target = authorities.length ? R.pick(authorities) : undefined
    if (!target) return undefined
    const desc = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(target), 'closed')
    return desc && desc.get ? desc.get.call(receiver(target)) : target.closed
  })

  add('tryAcquire', 'lock', false, () => {
    const g = lock.tryAcquire(R.chance(0.5) ? path.join(dir, R.pick(['lock', 'lock2', 'other', 'root'])) : value())
    if (g && guards.length < 32) guards.push(g)
    else if (g) g.release()
    return g
  })
  add('acquire', 'lock', true, () => lock.acquire(R.chance(0.5) ? path.join(dir, R.pick(['lock', 'lock3'])) : value(),
    R.chance(0.7) ? { timeoutMs: R.pick([0, 1, 5, number(), value()]), signal: R.chance(0.3) ? AbortSignal.abort() : undefined } : options())
    .then((g) => { if (g && typeof g.release === 'function') g.release() }))
  add('withLock', 'lock', true, () => lock.withLock(R.chance(0.5) ? path.join(dir, 'lock4') : value(), R.chance(0.7) ? () => value() : value()))
  add('guard.release', 'lock', false, () => {
    if (!guards.length) return undefined
    const g = R.pick(guards)
    const fn = R.chance(0.5) ? g.release : g[Symbol.dispose]
    return fn.call(receiver(g))
  })
  add('new NodeLockError', 'lock', false, () => new lock.NodeLockError(value(), value()))

  if (proc) {
    add('killProcessTree', 'process', true, () => {
      if (R.chance(0.01) && sacrificial.size < 4) {
        // A real child now and then: the tree is killed for real.
        // Windows has no sleep(1): a Node child that waits serves there.
        const child = process.platform === 'win32'
          ? spawn(process.execPath, ['-e', 'setTimeout(() => {}, 1000000)'], { detached: true, stdio: 'ignore', windowsHide: true })
          : spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' })
        sacrificial.add(child.pid)
        child.once('exit', () => sacrificial.delete(child.pid))
        return proc.killProcessTree(child, R.chance(0.5) ? undefined : { graceMs: R.pick([0, 10, 100]), signal: R.pick(['SIGTERM', 'SIGKILL', 'SIGUSR2']) })
      }
      return proc.killProcessTree(childLike(), R.chance(0.5) ? options() : value())
    })
  }

  return { R, surface, authorities, guards, sacrificial, state }
}

// ------------------------------------------------------------------ classification

function typed (family, err, foreignReceiver, name) {
  // An exception raised by the caller's own object (a throwing getter or trap) may
  // pass through unchanged, as with node:fs. A revoked proxy passed as an argument is
  // refused with a typed error like any other bad value; only withLock, which settles
  // with whatever its callback's result does, passes on the TypeError of awaiting a
  // revoked proxy that the callback returned.
  if (err instanceof FuzzTrap) return 'trap'
  if (name === 'withLock' && err instanceof TypeError && / on a proxy that has been revoked$/.test(err.message)) return 'trap'
  if (foreignReceiver && err instanceof TypeError) return 'typed'
  if (family === 'fa') {
    if (err instanceof fa.FileAuthorityError && typeof err.code === 'string') return 'typed'
    // The error class's own constructor refuses an unknown code with a TypeError.
    if (err instanceof TypeError && /FileAuthorityError/.test(err.message)) return 'typed'
  }
  if (family === 'lock') {
    if (err instanceof lock.NodeLockError && typeof err.code === 'string') return 'typed'
    if (err instanceof TypeError && /NodeLockError/.test(err.message)) return 'typed'
    if (err instanceof DOMException && err.name === 'AbortError') return 'typed' // the signal's own reason
  }
  if (family === 'process') {
    if (err instanceof TypeError && typeof err.code === 'string') return 'typed'
  }
  return 'untyped'
}

/**
 * Runs `calls` random calls. Returns { seed, calls, outcomes, failures, untyped } where
 * failures lists each distinct untyped error, synchronous throw from an async function
 * or non-promise result, with its count.
 */
async function run ({ seed = (Math.random() * 2 ** 32) >>> 0, calls = 5000, log = () => {} } = {}) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'aos-js-fuzz-')))
  const F = createFuzzer({ seed, dir })
  const outcomes = { ok: 0, typed: 0, trap: 0, rejectedTyped: 0, rejectedTrap: 0, pending: 0 }
  const perName = Object.create(null)
  const failures = new Map() // distinct (function, kind, error) -> count
  let pending = []
  let untypedCount = 0
  function fail (name, kind, err) {
    untypedCount++
    let text
    try {
      text = err instanceof Error ? `${err.name}: ${err.message}${err.code ? ` (code ${err.code})` : ''}` : typeof err === 'symbol' ? err.toString() : `${typeof err} ${String(err)}`
    } catch {
      text = `${typeof err} (unprintable)`
    }
    const key = `${name}: ${kind}: ${text}`
    failures.set(key, (failures.get(key) || 0) + 1)
  }
  const settle = async () => {
    const batch = pending
    pending = []
    await Promise.race([Promise.allSettled(batch), new Promise((resolve) => setTimeout(resolve, 50))])
  }
  try {
    for (let i = 0; i < calls; i++) {
      const entry = F.R.pick(F.surface)
      F.state.foreignReceiver = false
      perName[entry.name] = (perName[entry.name] || 0) + 1
      let result
      try {
        result = entry.call()
      } catch (err) {
        if (entry.isAsync) {
          // A Promise-returning function must reject, never throw — except where the
          // fuzzer's own setup (not the library) threw before the call.
          if (err instanceof FuzzTrap) outcomes.trap++
          else fail(entry.name, 'synchronous throw from an async function', err)
          continue
        }
        const t = typed(entry.family, err, F.state.foreignReceiver, entry.name)
        if (t === 'untyped') fail(entry.name, 'untyped error', err)
        else outcomes[t]++
        continue
      }
      if (entry.isAsync && result !== undefined) {
        if (!(result instanceof Promise)) {
          fail(entry.name, 'async function returned a non-promise', result)
          continue
        }
        const foreign = F.state.foreignReceiver
        pending.push(result.then(() => { outcomes.ok++ }, (err) => {
          const t = typed(entry.family, err, foreign, entry.name)
          if (t === 'untyped') fail(entry.name, 'untyped rejection', err)
          else if (t === 'trap') outcomes.rejectedTrap++
          else outcomes.rejectedTyped++
        }))
      } else {
        outcomes.ok++
      }
      if (i % 256 === 255) {
        await settle()
        if (global.gc && i % 8192 === 8191) global.gc()
      }
    }
    await settle()
    outcomes.pending = pending.length
  } finally {
    for (const a of F.authorities) {
      try { a.closeSync() } catch {}
    }
    for (const g of F.guards) {
      try { g.release() } catch {}
    }
    for (const pid of F.sacrificial) {
      try { process.kill(pid, 'SIGKILL') } catch {}
    }
    try {
      fs.rmSync(dir, { recursive: true, force: true })
    } catch (err) {
      // Windows: an authority the fuzzer opened through a path it does not track holds
      // its directory (delete pending) until it is collected, so the temporary
      // directory cannot be removed yet; it is left in the temporary directory there.
      if (process.platform !== 'win32') throw err
    }
  }
  log(`figure: js-fuzz seed=${seed} calls=${calls} functions=${Object.keys(perName).length}/${F.surface.length} ` +
    `returned=${outcomes.ok} typed=${outcomes.typed + outcomes.rejectedTyped} passed-through=${outcomes.trap + outcomes.rejectedTrap} ` +
    `untyped=${untypedCount} crashes=0`)
  return {
    seed,
    calls,
    outcomes,
    perName,
    failures: [...failures].map(([key, count]) => ({ key, count })),
    untyped: untypedCount,
    surface: F.surface.length
  }
}

module.exports = { run, FuzzTrap }

if (require.main === module) {
  const args = process.argv.slice(2)
  const opt = (name) => { const i = args.indexOf(name); return i === -1 ? undefined : args[i + 1] }
  const seed = opt('--seed') !== undefined ? Number(opt('--seed')) >>> 0 : (Math.random() * 2 ** 32) >>> 0
  const calls = Number(opt('--calls')) || 100000
  console.log(`js-fuzz: seed ${seed} (rerun: node --expose-gc fuzz/js-fuzz.js --calls ${calls} --seed ${seed})`)
  run({ seed, calls, log: console.log }).then((r) => {
    for (const f of r.failures) console.error(`js-fuzz: ${f.count} x ${f.key}`)
    // Fake children never emit 'exit' and some acquire() calls wait out their timeout:
    // their promises may stay pending by design; the process exits here regardless.
    process.exit(r.untyped === 0 ? 0 : 1)
  }, (err) => {
    console.error('js-fuzz: the fuzzer itself failed', err)
    process.exit(2)
  })
}
