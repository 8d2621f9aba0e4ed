'use strict'
// Runs the TypeScript compiler over files of a consumer project and sorts its errors
// by file and line. Shared by test/package/types.test.js (the repository linked into a
// consumer) and test/packaging/install.spec.js (the packed tarball installed).

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const repo = path.join(__dirname, '..', '..')
const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc')
const fixtures = path.join(__dirname, 'types')

/** The module settings of each moduleResolution the contract names; node16 twice,
 * as a CommonJS .ts and as an ES module .mts. */
const MODES = [
  { moduleResolution: 'node10', module: 'commonjs', ext: '.ts' },
  { moduleResolution: 'node16', module: 'node16', ext: '.ts' },
  { moduleResolution: 'node16', module: 'node16', ext: '.mts' },
  { moduleResolution: 'bundler', module: 'esnext', ext: '.ts' }
]

/** With @types/node: a Node project's usual setting. Without: no Node types and no
 * lib "dom" (so no AbortSignal), the oldest `lib` a Node 20 project would use. */
const ENVIRONMENTS = {
  'with @types/node': { types: ['node'], lib: ['es2022', 'esnext.disposable'] },
  'without @types/node': { types: [], lib: ['es2022'] }
}

/** Lines marked `// expect-error` in a fixture (1-based). */
function expectedErrorLines (src) {
  return src.split('\n').map((l, i) => (l.includes('// expect-error') ? i + 1 : 0)).filter(Boolean)
}

/** Copies fixtures `names` (without extension) into `dir` with the mode's extension,
 * type-checks them together and returns { status, output, errors: { name: [{ line, code }] } }. */
function typeCheck (dir, names, mode, environment) {
  const files = names.map((n) => n + mode.ext)
  names.forEach((n, i) => fs.copyFileSync(path.join(fixtures, n + '.ts'), path.join(dir, files[i])))
  const config = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'es2022',
      lib: environment.lib,
      types: environment.types,
      module: mode.module,
      moduleResolution: mode.moduleResolution,
      skipLibCheck: false,
      ignoreDeprecations: '5.0'
    },
    files
  }
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(config))
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: dir, encoding: 'utf8', timeout: 300000 })
  if (r.error) throw r.error
  const output = r.stdout + r.stderr
  const errors = Object.fromEntries(names.map((n) => [n, []]))
  const stray = []
  for (const m of output.matchAll(/^(.*?)\((\d+),\d+\): error TS(\d+)/gm)) {
    const i = files.indexOf(m[1])
    if (i === -1) stray.push(m[0])
    else errors[names[i]].push({ line: Number(m[2]), code: Number(m[3]) })
  }
  // An error in no fixture (in a declaration file of the package, or a config error)
  // belongs to nobody's expectations: it is reported under '*'.
  errors['*'] = stray.concat(output.split('\n').filter((l) => /^error TS/.test(l)))
  return { status: r.status, output, errors }
}

module.exports = { MODES, ENVIRONMENTS, typeCheck, expectedErrorLines, fixtures }
