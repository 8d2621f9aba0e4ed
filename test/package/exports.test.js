'use strict'
// Package rules of the contract: no root export, every subpath by require and by
// import with named exports, Node-only (browser: null), lazy per-primitive set-up.

const assert = require('node:assert/strict')
const { makeConsumer, repo } = require('../helpers/consumer.js')
const pkg = require('../../package.json')

const SUBPATHS = {
  'file-authority': ['openReadAuthority', 'openReadAuthoritySync', 'openWriteAuthority', 'openWriteAuthoritySync', 'FileAuthorityError'],
  'file-authority/testing': ['createMemoryAuthorities', 'FileAuthorityError'],
  'node-lock': ['tryAcquire', 'acquire', 'withLock', 'NodeLockError'],
  process: ['killProcessTree', 'DEFAULT_KILL_GRACE_MS', 'openProcessScope', 'ProcessTreeError', 'ProcessTreeTypeError']
}

describe('package: exports map', function () {
  let consumer
  before(function () { consumer = makeConsumer() })
  after(function () { consumer.cleanup() })

  it('has exactly the four subpaths (plus package.json), no root export', function () {
    const keys = Object.keys(pkg.exports).sort()
    assert.deepEqual(keys, ['./file-authority', './file-authority/testing', './node-lock', './package.json', './process'])
  })

  it('require of the package root fails with ERR_PACKAGE_PATH_NOT_EXPORTED', function () {
    const r = consumer.node(['-e', `
      try { require('@scope/agent-os'); console.log('loaded') }
      catch (e) { console.log(e.code) }`])
    assert.equal(r.stdout.trim(), 'ERR_PACKAGE_PATH_NOT_EXPORTED', r.stderr)
  })

  it('import of the package root fails with ERR_PACKAGE_PATH_NOT_EXPORTED', function () {
    const r = consumer.node(['--input-type=module', '-e', `
      try { await import('@scope/agent-os'); console.log('loaded') }
      catch (e) { console.log(e.code) }`])
    assert.equal(r.stdout.trim(), 'ERR_PACKAGE_PATH_NOT_EXPORTED', r.stderr)
  })

  for (const [sub, names] of Object.entries(SUBPATHS)) {
    it(`${sub}: require gives its named exports`, function () {
      const r = consumer.node(['-e', `
        const m = require('@scope/agent-os/${sub}')
        console.log(JSON.stringify(${JSON.stringify(names)}.map((n) => [n, typeof m[n]])))`])
      assert.equal(r.status, 0, r.stderr)
      for (const [n, t] of JSON.parse(r.stdout)) assert.notEqual(t, 'undefined', `${sub}.${n}`)
    })

    it(`${sub}: import gives the same named exports`, function () {
      const r = consumer.node(['--input-type=module', '-e', `
        import { ${names.join(', ')} } from '@scope/agent-os/${sub}'
        import * as ns from '@scope/agent-os/${sub}'
        import { createRequire } from 'node:module'
        const cjs = createRequire(import.meta.url)('@scope/agent-os/${sub}')
        const same = [${names.join(', ')}].every((v, i) => v === cjs[${JSON.stringify(names)}[i]])
        console.log(JSON.stringify({ same, names: Object.keys(ns) }))`])
      assert.equal(r.status, 0, r.stderr)
      const out = JSON.parse(r.stdout)
      assert.equal(out.same, true)
      for (const n of names) assert.ok(out.names.includes(n), `${sub} named import ${n}`)
    })

    it(`${sub}: maps the browser condition to null and has types`, function () {
      const entry = pkg.exports[`./${sub}`]
      assert.equal(entry.browser, null)
      assert.equal(Object.keys(entry)[0], 'types')
      const r = consumer.node(['--conditions=browser', '-e', `
        try { require('@scope/agent-os/${sub}'); console.log('loaded') }
        catch (e) { console.log(e.code) }`])
      assert.equal(r.stdout.trim(), 'ERR_PACKAGE_PATH_NOT_EXPORTED', r.stderr)
    })
  }

  it('sets up only the primitive whose subpath was required (at its require or first use)', function () {
    const r = consumer.node(['-e', `
      const seen = {}
      // The consumer's copy of the package (on Linux a link to the checkout, on
      // Windows a copy: see test/helpers/consumer.js), so the same module instance.
      const binding = require(require('node:path').join(process.cwd(), 'node_modules', '@scope', 'agent-os', 'lib', 'binding.js'))
      const proc = require('@scope/agent-os/process')
      seen.process = binding.loadedParts()
      proc.killProcessTree({ pid: process.pid + 1e6, exitCode: 0, signalCode: null, once () {}, removeListener () {} })
        .catch(() => {})
        .then(() => {
          const lock = require('@scope/agent-os/node-lock')
          seen.lock = binding.loadedParts()
          try { lock.tryAcquire('') } catch {}
          seen.lockUsed = binding.loadedParts()
          require('@scope/agent-os/file-authority/testing').createMemoryAuthorities({ a: 'x' })
          seen.testing = binding.loadedParts()
          require('@scope/agent-os/file-authority')
          seen.fa = binding.loadedParts()
          console.log(JSON.stringify(seen))
        })`])
    assert.equal(r.status, 0, r.stderr)
    const seen = JSON.parse(r.stdout)
    const only = (list, allowed) => list.every((p) => allowed.includes(p))
    assert.ok(only(seen.process, ['process']), `requiring process set up ${seen.process}`)
    assert.ok(only(seen.lock, ['process', 'nodeLock']), `requiring node-lock set up ${seen.lock}`)
    assert.ok(only(seen.lockUsed, ['process', 'nodeLock']))
    assert.deepEqual(seen.testing.sort(), seen.lockUsed.sort(), 'the in-memory stand-in sets up no native part')
    assert.ok(seen.fa.includes('fileAuthority'))
  })

  it('no subpath entry module requires another subpath entry module', function () {
    const fs = require('node:fs')
    const path = require('node:path')
    const entries = Object.values(pkg.exports).filter((e) => typeof e === 'object').map((e) => path.join(repo, e.default))
    // Walk each entry's own require graph inside lib/ and check it meets no other entry.
    for (const entry of entries) {
      const seen = new Set()
      const stack = [entry]
      while (stack.length) {
        const file = stack.pop()
        if (seen.has(file)) continue
        seen.add(file)
        const src = fs.readFileSync(file, 'utf8')
        for (const m of src.matchAll(/require\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)) {
          let dep = path.resolve(path.dirname(file), m[1])
          if (!dep.endsWith('.js')) dep += '.js'
          assert.ok(dep === entry || !entries.includes(dep), `${path.relative(repo, entry)} reaches ${path.relative(repo, dep)}`)
          stack.push(dep)
        }
      }
    }
  })

  it('declares the engines, gypfile and the one runtime dependency', function () {
    assert.equal(pkg.engines.node, '>=20.17')
    assert.equal(pkg.gypfile, true)
    assert.deepEqual(Object.keys(pkg.dependencies), ['node-gyp-build'])
  })
})
