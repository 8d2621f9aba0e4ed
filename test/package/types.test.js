'use strict'
// The public types resolve and constrain under moduleResolution node10, node16 and
// bundler, through the package's name (a consumer project that installs this repo).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { makeConsumer, repo } = require('../helpers/consumer.js')

const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc')
const MODES = [
  { moduleResolution: 'node10', module: 'commonjs', ext: '.ts' },
  { moduleResolution: 'node16', module: 'node16', ext: '.ts' },
  { moduleResolution: 'node16', module: 'node16', ext: '.mts' },
  { moduleResolution: 'bundler', module: 'esnext', ext: '.ts' }
]

function compile (consumer, file, mode) {
  const config = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'es2022',
      lib: ['es2022', 'esnext.disposable'],
      types: ['node'],
      module: mode.module,
      moduleResolution: mode.moduleResolution,
      skipLibCheck: false,
      ignoreDeprecations: '5.0'
    },
    files: [file]
  }
  fs.writeFileSync(path.join(consumer.dir, 'tsconfig.json'), JSON.stringify(config))
  return consumer.node([tsc, '-p', 'tsconfig.json', '--pretty', 'false'])
}

describe('package: TypeScript types', function () {
  this.timeout(120000)
  let consumer
  before(function () { consumer = makeConsumer() })
  after(function () { consumer.cleanup() })

  for (const mode of MODES) {
    const label = `${mode.moduleResolution} (${mode.module}, ${mode.ext})`

    it(`a consumer using every public type type-checks under ${label}`, function () {
      const file = 'consumer' + mode.ext
      fs.copyFileSync(path.join(__dirname, 'types', 'consumer.ts'), path.join(consumer.dir, file))
      const r = compile(consumer, file, mode)
      assert.equal(r.status, 0, r.stdout + r.stderr)
    })

    it(`misuse is rejected under ${label}`, function () {
      const file = 'errors' + mode.ext
      const src = fs.readFileSync(path.join(__dirname, 'types', 'errors.ts'), 'utf8')
      fs.writeFileSync(path.join(consumer.dir, file), src)
      const expected = src.split('\n').map((l, i) => (l.includes('// expect-error') ? i + 1 : 0)).filter(Boolean)
      const r = compile(consumer, file, mode)
      const lines = new Set([...r.stdout.matchAll(/\((\d+),\d+\): error TS/g)].map((m) => Number(m[1])))
      assert.deepEqual([...lines].sort((a, b) => a - b), expected, r.stdout)
    })
  }
})
