'use strict'
// The public types resolve and constrain under moduleResolution node10, node16 and
// bundler, through the package's name (a consumer project that links this repo), with
// and without @types/node; and an import of the package root fails type-checking in
// every mode, as it fails at runtime.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { makeConsumer } = require('../helpers/consumer.js')
const { MODES, ENVIRONMENTS, typeCheck, expectedErrorLines, fixtures } = require('./tsc.js')

const expected = (name) => expectedErrorLines(fs.readFileSync(path.join(fixtures, name + '.ts'), 'utf8'))
// Not a module (node10 reads package.json "types" and typesVersions "*") or no such
// module (node16 and bundler read "exports").
const NO_SUCH_MODULE = new Set([2306, 2307])

describe('package: TypeScript types', function () {
  this.timeout(600000)
  let consumer
  before(function () { consumer = makeConsumer() })
  after(function () { consumer.cleanup() })

  for (const mode of MODES) {
    for (const [envName, environment] of Object.entries(ENVIRONMENTS)) {
      const label = `${mode.moduleResolution} (${mode.module}, ${mode.ext}) ${envName}`
      const consumerFile = envName === 'with @types/node' ? 'consumer' : 'consumer-bare'

      it(`under ${label}: every subpath type-checks, misuse and a root import do not`, function () {
        const r = typeCheck(consumer.dir, [consumerFile, 'errors', 'root'], mode, environment)
        assert.deepEqual(r.errors['*'], [], r.output)
        assert.deepEqual(r.errors[consumerFile], [], r.output)
        const lines = (name) => [...new Set(r.errors[name].map((e) => e.line))].sort((a, b) => a - b)
        assert.deepEqual(lines('errors'), expected('errors'), r.output)
        assert.deepEqual(lines('root'), expected('root'), r.output)
        for (const e of r.errors.root) {
          // bundler and .mts also refuse nothing else on these lines
          assert.ok(NO_SUCH_MODULE.has(e.code), `root.ts line ${e.line}: TS${e.code}\n${r.output}`)
        }
      })
    }
  }
})
