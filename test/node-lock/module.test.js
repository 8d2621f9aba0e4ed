'use strict'
// The subpath as users load it: require and import (named imports), by package name.
const assert = require('node:assert/strict')

describe('node-lock: the subpath', function () {
  it('loads with require and with import, exposing exactly the contract', async function () {
    const cjs = require('@scope/agent-os/node-lock')
    const esm = await import('@scope/agent-os/node-lock')
    for (const m of [cjs, esm]) {
      assert.equal(typeof m.tryAcquire, 'function')
      assert.equal(typeof m.acquire, 'function')
      assert.equal(typeof m.withLock, 'function')
      assert.equal(typeof m.NodeLockError, 'function')
    }
    assert.equal(esm.tryAcquire, cjs.tryAcquire)
    assert.deepEqual(Object.keys(cjs).sort(), ['NodeLockError', 'acquire', 'tryAcquire', 'withLock'])
  })

  it('does not load another primitive\'s entry module', function () {
    const { execFileSync } = require('node:child_process')
    const out = execFileSync(process.execPath, ['-e', `
      require('@scope/agent-os/node-lock')
      console.log(JSON.stringify(Object.keys(require.cache)))`], { cwd: __dirname, encoding: 'utf8' })
    const loaded = JSON.parse(out)
    assert.ok(!loaded.some((f) => /lib[\\/](file-authority|process)/.test(f)), loaded.join('\n'))
  })
})
