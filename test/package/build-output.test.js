'use strict'
// The build is quiet by default: one line per node-gyp step, the full log only when a
// step fails or with --verbose (scripts/node-gyp.js, used by the install step and by
// scripts/build.js). Each case builds a one-file addon in a temporary directory.

const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const nodeGypJs = path.join(__dirname, '..', '..', 'scripts', 'node-gyp.js')

function project (source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-gyp-'))
  fs.writeFileSync(path.join(dir, 'binding.gyp'), JSON.stringify({ targets: [{ target_name: 'tiny', sources: ['tiny.c'] }] }))
  fs.writeFileSync(path.join(dir, 'tiny.c'), source)
  return dir
}

// Runs runNodeGyp(args) in `dir` from a child whose argv and npm loglevel are `extra`.
function run (dir, args, { argv = [], loglevel } = {}) {
  const env = { ...process.env }
  delete env.npm_config_loglevel
  if (loglevel) env.npm_config_loglevel = loglevel
  const script = `process.exitCode = require(${JSON.stringify(nodeGypJs)}).runNodeGyp(${JSON.stringify(args)}, { cwd: ${JSON.stringify(dir)} })`
  const r = spawnSync(process.execPath, ['-e', script, '--', ...argv], { env, encoding: 'utf8', timeout: 300000 })
  if (r.error) throw r.error
  return { status: r.status, out: r.stdout + r.stderr }
}

const GOOD = '#include <node_api.h>\nNAPI_MODULE_INIT() { (void)env; return exports; }\n'
const BAD = '#include <node_api.h>\nint broken(void) { return undeclared_name_here; }\nNAPI_MODULE_INIT() { (void)env; return exports; }\n'

/** Whether node-gyp can find a Python here (it needs one to run at all; wine, for
 * one, has none). */
function havePython () {
  const names = process.platform === 'win32' ? ['py', 'python3', 'python'] : ['python3', 'python']
  return names.some((name) => spawnSync(name, ['--version'], { encoding: 'utf8' }).status === 0)
}

describe('package: build output', function () {
  this.timeout(600000)
  before(function () {
    if (process.env.PYTHON === undefined && !havePython()) {
      this.test.parent.title += ' [skipped: no Python, which node-gyp needs, is found here]'
      this.skip()
    }
  })
  const dirs = []
  after(function () { for (const d of dirs) fs.rmSync(d, { recursive: true, force: true }) })

  it('a successful step prints one line and none of node-gyp\'s own', function () {
    const dir = project(GOOD)
    dirs.push(dir)
    const r = run(dir, ['rebuild'])
    assert.equal(r.status, 0, r.out)
    const lines = r.out.trimEnd().split('\n')
    assert.equal(lines.length, 1, r.out)
    assert.match(lines[0], /^@scope\/agent-os: rebuild ok \(\d+\.\d s\)$/)
    assert.ok(fs.existsSync(path.join(dir, 'build', 'Release', 'tiny.node')))
  })

  it('a failing step prints the full log (the compiler\'s error) and a line saying it failed', function () {
    const dir = project(BAD)
    dirs.push(dir)
    const r = run(dir, ['rebuild'])
    assert.notEqual(r.status, 0)
    assert.match(r.out, /undeclared_name_here/)
    assert.match(r.out, /gyp (info|ERR!)/)
    assert.match(r.out.trimEnd().split('\n').pop(), /^@scope\/agent-os: rebuild failed \(exit code \d+, \d+\.\d s\); the full node-gyp log is above$/)
  })

  for (const [how, opts] of [['--verbose', { argv: ['--verbose'] }], ['npm --loglevel verbose', { loglevel: 'verbose' }]]) {
    it(`with ${how} node-gyp's own output is shown`, function () {
      const dir = project(GOOD)
      dirs.push(dir)
      const r = run(dir, ['configure'], opts)
      assert.equal(r.status, 0, r.out)
      assert.match(r.out, /gyp info/)
      assert.match(r.out.trimEnd().split('\n').pop(), /^@scope\/agent-os: configure ok/)
    })
  }
})
