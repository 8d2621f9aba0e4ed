'use strict'
// The JavaScript fuzzer (fuzz/js-fuzz.js), short and seeded, in the default suite:
// 5 000 calls across every exported function and method with hostile values; no
// untyped failure, no synchronous throw from a Promise-returning function. `npm run
// fuzz` runs 100 000 calls with a random seed. AGENT_OS_JS_FUZZ_SEED / _CALLS override.

const assert = require('node:assert/strict')
const { run } = require('../../fuzz/js-fuzz.js')

const SEED = Number(process.env.AGENT_OS_JS_FUZZ_SEED) || 20261130
const CALLS = Number(process.env.AGENT_OS_JS_FUZZ_CALLS) || 5000

describe('JavaScript fuzzer (short, seeded)', function () {
  this.timeout(120000)

  it(`${CALLS} calls with seed ${SEED}: every failure typed`, async function () {
    const r = await run({ seed: SEED, calls: CALLS })
    assert.deepEqual(r.failures, [], `seed ${SEED}: ${JSON.stringify(r.failures, null, 1)}`)
    assert.equal(r.untyped, 0)
    // Every function of the surface was called, and calls got past validation too.
    assert.equal(Object.keys(r.perName).length, r.surface)
    assert.ok(r.outcomes.ok > CALLS / 10, JSON.stringify(r.outcomes))
    assert.ok(r.outcomes.typed + r.outcomes.rejectedTyped > CALLS / 10, JSON.stringify(r.outcomes))
  })
})
