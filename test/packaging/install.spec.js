'use strict'
// The packaging test (`npm run test:package`, run by .ci/run): pack the package as it
// would be published, install the tarball into an empty project, and check that
//  - with prebuilds in the tarball, nothing is compiled (no C compiler, make or python
//    on PATH during the install) and every subpath loads the prebuilt binding; on Linux
//    the process-scope helper program ships beside it, so a scope gets the `cgroup` or
//    `subreaper` backend (not `tree`) and holds a background job its shell left;
//  - without prebuilds, the install compiles from source, offline: node-gyp is given
//    the running Node's own headers and downloads nothing;
//  - under umask 002 (directories npm and node-gyp make are group-writable then) both
//    installs pick the same scope backend as under 022: the install gives the helper
//    program and its directory the modes the package checks before running it.

const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { MODES, ENVIRONMENTS, typeCheck, expectedErrorLines, fixtures } = require('../package/tsc.js')

const repo = path.join(__dirname, '..', '..')
const SUBPATHS = ['file-authority', 'file-authority/testing', 'node-lock', 'process']

function sh (cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 600000, ...opts })
  if (r.error) throw r.error
  return r
}

function must (r, what) {
  assert.equal(r.status, 0, `${what} failed:\n${r.stdout}\n${r.stderr}`)
  return r
}

function pack (dir, dest, extra = []) {
  const r = must(sh('npm', ['pack', '--json', '--pack-destination', dest, ...extra], { cwd: dir }), 'npm pack')
  const info = JSON.parse(r.stdout)[0]
  return { file: path.join(dest, info.filename), files: info.files.map((f) => f.path) }
}

function project (tmp, name) {
  const dir = path.join(tmp, name)
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true }))
  return dir
}

// A PATH with node, npm and a shell only.
function barePath (tmp) {
  const bin = path.join(tmp, 'bare-bin')
  fs.mkdirSync(bin)
  const npmCli = fs.realpathSync(sh('sh', ['-c', 'command -v npm']).stdout.trim())
  fs.symlinkSync(process.execPath, path.join(bin, 'node'))
  fs.symlinkSync(npmCli, path.join(bin, 'npm'))
  fs.symlinkSync('/bin/sh', path.join(bin, 'sh'))
  return bin
}

// Loads every subpath from the installed package and makes each primitive do real
// work through the binding it installed.
function loadEverySubpath (dir, env) {
  const script = `
    const os = require('node:os'), path = require('node:path'), fs = require('node:fs')
    const { spawn } = require('node:child_process')
    const out = {}
    for (const s of ${JSON.stringify(SUBPATHS)}) out[s] = Object.keys(require('@scope/agent-os/' + s)).length
    out.binding = require('node-gyp-build').resolve(path.dirname(require.resolve('@scope/agent-os/package.json')))
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-installed-'))
    const fa = require('@scope/agent-os/file-authority')
    const w = fa.openWriteAuthoritySync(tmp)
    w.writeTextSync(['a.txt'], 'works')
    const r = fa.openReadAuthoritySync(tmp, { sameRootAs: w })
    out.read = Buffer.from(r.readBytesSync(['a.txt'], { maxBytes: 16 })).toString()
    const guard = require('@scope/agent-os/node-lock').tryAcquire(path.join(tmp, 'guard'))
    out.locked = guard !== undefined
    guard.release()
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { detached: true, stdio: 'ignore' })
    const proc = require('@scope/agent-os/process')
    proc.killProcessTree(child, { graceMs: 100 }).then(async () => {
      out.killed = child.signalCode
      r.closeSync(); w.closeSync()
      fs.rmSync(tmp, { recursive: true })
      // A process scope: a background job outlives its shell, inside the scope.
      const scope = await proc.openProcessScope()
      out.backend = scope.backend
      // (Node, not sleep: the install without a compiler has only node, npm and sh on PATH.)
      const sh = scope.spawn('sh', ['-c', '"$0" -e "setTimeout(() => {}, 30000)" & exit 0', process.execPath], { stdio: 'ignore' })
      await new Promise((resolve) => sh.once('exit', resolve))
      await new Promise((resolve) => setTimeout(resolve, 100))
      out.heldAfterShellExit = scope.pids().length
      await scope.kill({ graceMs: 1000 })
      out.leftAfterKill = scope.pids().length
      await scope.close()
      console.log(JSON.stringify(out))
    })`
  const r = must(sh(process.execPath, ['-e', script], { cwd: dir, env }), 'loading every subpath')
  const out = JSON.parse(r.stdout)
  console.log(`      process scope backend: ${out.backend}`)
  assert.equal(out.read, 'works')
  assert.equal(out.locked, true)
  assert.equal(out.killed, 'SIGTERM')
  if (process.platform === 'linux') {
    assert.ok(['cgroup', 'subreaper'].includes(out.backend), `a Linux install's scope backend is ${out.backend}`)
    assert.ok(out.heldAfterShellExit >= 1, 'the background job is held by the scope')
    assert.equal(out.leftAfterKill, 0)
  }
  return out
}

// Runs npm with `umask` in effect (through sh, which the bare PATH has too).
function npmUnder (umask, args, opts) {
  return sh('sh', ['-c', `umask ${umask} && exec npm "$@"`, 'sh', ...args], opts)
}

// The helper's mode and its directory's, as installed (Linux).
function helperModes (installed, sub) {
  const file = path.join(installed, sub, 'agent_os_scope_helper')
  return { file: fs.statSync(file).mode & 0o777, dir: fs.statSync(path.dirname(file)).mode & 0o777 }
}

describe('packaging: the published tarball', function () {
  this.timeout(900000)
  let tmp, withPrebuilds, withoutPrebuilds
  let backend022 // the scope backend of the install under umask 022

  before(function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-pack-'))
    // Always from the current sources: a stale prebuild must not pass for this one.
    must(sh('npm', ['run', 'prebuild'], { cwd: repo }), 'npm run prebuild')
    withPrebuilds = pack(repo, tmp)
    // The same package without prebuilds: unpack, drop them, pack again.
    const stage = path.join(tmp, 'stage')
    fs.mkdirSync(stage)
    must(sh('tar', ['-xzf', withPrebuilds.file, '-C', stage]), 'tar')
    fs.rmSync(path.join(stage, 'package', 'prebuilds'), { recursive: true, force: true })
    const dest = path.join(tmp, 'source-only')
    fs.mkdirSync(dest)
    // --ignore-scripts: prepack (scripts/check-publish.js) is not in the tarball.
    withoutPrebuilds = pack(path.join(stage, 'package'), dest, ['--ignore-scripts'])
  })

  after(function () {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('contains the C sources, binding.gyp, lib, types, docs, LICENSE and the prebuild, and no build output', function () {
    const files = withPrebuilds.files
    const docs = fs.readdirSync(path.join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)
    assert.ok(docs.length > 0)
    for (const f of ['binding.gyp', 'src/addon.c', 'index.d.ts', 'types/no-root-export.d.ts', 'lib/binding.js', 'scripts/install.js', 'package.json', 'LICENSE', 'README.md', ...docs]) {
      assert.ok(files.includes(f), f)
    }
    assert.ok(files.some((f) => f.startsWith(`prebuilds/${process.platform}-${process.arch}/`) && f.endsWith('.node')))
    if (process.platform === 'linux') assert.ok(files.includes(`prebuilds/linux-${process.arch}/agent_os_scope_helper`), 'the scope helper ships beside the .node')
    assert.ok(!files.some((f) => f.startsWith('build/') || f.startsWith('test/') || f.startsWith('node_modules/')))
  })

  it('installs from the tarball with prebuilds and no compiler on PATH, compiling nothing', function () {
    const dir = project(tmp, 'with-prebuilds')
    const bin = barePath(tmp)
    for (const tool of ['cc', 'gcc', 'clang', 'make', 'python3', 'c++']) {
      assert.notEqual(sh('sh', ['-c', `command -v ${tool}`], { env: { PATH: bin } }).status, 0, `${tool} must not be on PATH`)
    }
    const env = { PATH: bin, HOME: process.env.HOME, npm_config_cache: process.env.npm_config_cache || path.join(os.homedir(), '.npm') }
    must(npmUnder('022', ['install', '--no-audit', '--no-fund', '--prefer-offline', withPrebuilds.file], { cwd: dir, env }), 'npm install')
    const installed = path.join(dir, 'node_modules', '@scope', 'agent-os')
    assert.ok(!fs.existsSync(path.join(installed, 'build')), 'no build/ directory: nothing was compiled')
    const out = loadEverySubpath(dir, env)
    backend022 = out.backend
    assert.match(out.binding, /prebuilds/)
    for (const s of SUBPATHS) assert.ok(out[s] > 0, s)
    if (process.platform === 'linux') {
      const helper = path.join(installed, 'prebuilds', `linux-${process.arch}`, 'agent_os_scope_helper')
      assert.equal(fs.statSync(helper).mode & 0o111, 0o111, 'the helper installs executable')
    }
  })

  it('installs from the tarball with prebuilds under umask 002 and picks the same scope backend as under 022', function () {
    if (process.platform === 'win32') this.skip() // mode bits: POSIX
    if (backend022 === undefined) this.skip() // the install above failed
    const dir = project(tmp, 'with-prebuilds-umask-002')
    const env = { PATH: path.join(tmp, 'bare-bin'), HOME: process.env.HOME, npm_config_cache: process.env.npm_config_cache || path.join(os.homedir(), '.npm'), NODE_DEBUG: 'agent-os' }
    must(npmUnder('002', ['install', '--no-audit', '--no-fund', '--prefer-offline', withPrebuilds.file], { cwd: dir, env }), 'npm install')
    const installed = path.join(dir, 'node_modules', '@scope', 'agent-os')
    if (process.platform === 'linux') {
      const modes = helperModes(installed, path.join('prebuilds', `linux-${process.arch}`))
      assert.equal(modes.file & 0o022, 0, 'the helper is writable by group or others')
      assert.equal(modes.dir & 0o022, 0, 'its directory is writable by group or others')
    }
    const out = loadEverySubpath(dir, env)
    assert.equal(out.backend, backend022)
  })

  // The consumer installed above has no @types/node (nor any @types): every subpath
  // type-checks from the tarball alone, and a root import fails, in every mode.
  for (const mode of MODES) {
    it(`type-checks every subpath from the tarball with no @types/node under ${mode.moduleResolution} (${mode.ext}); a root import fails`, function () {
      const dir = path.join(tmp, 'with-prebuilds')
      if (!fs.existsSync(path.join(dir, 'node_modules', '@scope', 'agent-os'))) this.skip() // the install above failed
      assert.ok(!fs.existsSync(path.join(dir, 'node_modules', '@types')), 'the consumer has no @types')
      const r = typeCheck(dir, ['consumer-bare', 'errors', 'root'], mode, ENVIRONMENTS['without @types/node'])
      assert.deepEqual(r.errors['*'], [], r.output)
      assert.deepEqual(r.errors['consumer-bare'], [], r.output)
      for (const name of ['errors', 'root']) {
        const lines = [...new Set(r.errors[name].map((e) => e.line))].sort((a, b) => a - b)
        assert.deepEqual(lines, expectedErrorLines(fs.readFileSync(path.join(fixtures, name + '.ts'), 'utf8')), r.output)
      }
    })
  }

  it('installs from a tarball without prebuilds by compiling from source, offline', function () {
    const dir = project(tmp, 'from-source')
    const devdir = path.join(tmp, 'node-gyp-devdir')
    fs.mkdirSync(devdir)
    // node-gyp would download headers into devdir; it must not need to.
    const env = { ...process.env, npm_config_devdir: devdir }
    // Under umask 002: the directories node-gyp makes (build/Release) are
    // group-writable, and the install must settle the helper's modes all the same.
    must(npmUnder('002', ['install', '--no-audit', '--no-fund', '--prefer-offline', withoutPrebuilds.file], { cwd: dir, env }), 'npm install')
    const installed = path.join(dir, 'node_modules', '@scope', 'agent-os')
    assert.ok(fs.existsSync(path.join(installed, 'build', 'Release', 'agent_os.node')), 'compiled from source')
    assert.deepEqual(fs.readdirSync(devdir), [], 'no Node headers were downloaded')
    const out = loadEverySubpath(dir, env)
    assert.match(out.binding, /build/)
    for (const s of SUBPATHS) assert.ok(out[s] > 0, s)
    if (process.platform === 'linux') {
      const modes = helperModes(installed, path.join('build', 'Release'))
      assert.equal((modes.file | modes.dir) & 0o022, 0, 'the helper or its directory is writable by group or others')
      if (backend022 !== undefined) assert.equal(out.backend, backend022, 'a source install under umask 002 picks another backend')
    }
  })
})
