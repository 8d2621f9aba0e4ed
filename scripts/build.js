'use strict'
// The project's own build: `node scripts/build.js [--werror] [--sanitize] [--out DIR]`.
// --werror   the tests' build: warnings are errors.
// --sanitize ASan + UBSan (Linux), for scripts/sanitize.js.
// --out DIR  build a copy of binding.gyp and src/ in DIR instead of ./build, so a
//            special build never replaces the one the package loads.
// --verbose  node-gyp's whole output as it runs (by default one line per step, and
//            the full log only when a step fails).

const fs = require('node:fs')
const path = require('node:path')
const { runNodeGyp } = require('./node-gyp.js')

const root = path.join(__dirname, '..')
const args = process.argv.slice(2)
const env = {
  AGENT_OS_WERROR: args.includes('--werror') ? '1' : '0',
  AGENT_OS_SANITIZE: args.includes('--sanitize') ? '1' : '0'
}
let cwd = root
const outAt = args.indexOf('--out')
if (outAt !== -1) {
  cwd = path.resolve(args[outAt + 1])
  fs.mkdirSync(cwd, { recursive: true })
  for (const item of ['binding.gyp', 'src', 'scripts']) {
    fs.rmSync(path.join(cwd, item), { recursive: true, force: true })
    fs.cpSync(path.join(root, item), path.join(cwd, item), { recursive: true })
  }
}
const mode = [args.includes('--werror') && 'werror', args.includes('--sanitize') && 'sanitize'].filter(Boolean).join(', ')
const label = (step) => (mode ? `${step} (${mode})` : step)
let code = runNodeGyp(['configure'], { cwd, env, step: label('configure') })
if (code === 0) code = runNodeGyp(['build', `--jobs=${require('node:os').availableParallelism()}`], { cwd, env, step: label('build') })
process.exitCode = code
