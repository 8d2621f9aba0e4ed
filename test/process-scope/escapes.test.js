'use strict'
// The escape suite (issue 24): every backend this machine gives (as root: the default,
// cgroup with PID namespaces; subreaper forced; each without namespaces; tree; as
// nobody through setpriv: the default, subreaper with user and PID namespaces;
// without namespaces; tree), against every act a command may try to get out of its
// scope with, with decoys (processes of the same user outside any scope) that must
// outlive everything. A driver process (fixtures/escape-driver.js) runs as the user
// under test; this test SIGKILLs it for the second column.
//
// For each backend and act it prints: survivors after kill(), survivors after the
// Node process is SIGKILLed, whether kill() settled and in how long, and what was left
// (helper processes, cgroup directories, descriptors). It asserts: kill() settles
// everywhere; nothing is left after close() anywhere; decoys live; the default
// backend as root and as nobody leaves 0 survivors for every act in both columns;
// every other cell is what docs/process-scopes.md ("What holds where") says.
//
// Runs as root (it needs setpriv for nobody, and root's acts). As nobody the package
// is staged in a directory that user can reach (a checkout in a private directory,
// mkdtemp's 0700, is not), with what it needs to load.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')

const repo = path.join(__dirname, '..', '..')
const driver = path.join(__dirname, 'fixtures', 'escape-driver.js')

const ACTS = ['background job', 'double fork + setsid', 'setsid -f', 'nohup', 'stopped member', 'TERM-ignorer',
  'fork loop (200)', 'script', 'unshare --pid --fork', 'kill its helpers', 'move to another cgroup', 'child cgroup',
  'another uid/gid', 'spawn with uid/gid']

// What docs/process-scopes.md says may survive, per backend mode: { kill: acts that
// may survive kill(), sigkill: acts that may survive the Node process's SIGKILL }.
// Every other cell must be 0. (Namespaced modes hold everything.)
// tree: once a command exited, nothing it left is reached (killProcessTree resolves
// at once for an exited child), and nothing is ended when Node dies; only an act whose
// command still runs at the kill (the TERM-ignorer waits for its job) is ended.
const TREE_LEAVES = ACTS.filter((a) => a !== 'TERM-ignorer')
const MAY_SURVIVE = {
  namespaced: { kill: [], sigkill: [] },
  'cgroup, no namespace': { kill: [], sigkill: ['kill its helpers'] },
  'subreaper, no namespace': { kill: ['kill its helpers'], sigkill: ['kill its helpers'] },
  tree: { kill: TREE_LEAVES, sigkill: ACTS }
}

const CONFIGS = [
  { name: 'root: default', user: 'root', env: {}, backend: 'cgroup', mode: 'namespaced', strict: true },
  { name: 'root: subreaper forced', user: 'root', env: { AGENT_OS_PROCESS_SCOPE_BACKEND: 'subreaper' }, backend: 'subreaper', mode: 'namespaced' },
  { name: 'root: cgroup, no namespace', user: 'root', env: { AGENT_OS_PROCESS_SCOPE_BACKEND: 'cgroup', AGENT_OS_PROCESS_SCOPE_NO_NAMESPACE: '1' }, backend: 'cgroup', mode: 'cgroup, no namespace' },
  { name: 'root: subreaper, no namespace', user: 'root', env: { AGENT_OS_PROCESS_SCOPE_BACKEND: 'subreaper', AGENT_OS_PROCESS_SCOPE_NO_NAMESPACE: '1' }, backend: 'subreaper', mode: 'subreaper, no namespace' },
  { name: 'root: tree forced', user: 'root', env: { AGENT_OS_PROCESS_SCOPE_BACKEND: 'tree' }, backend: 'tree', mode: 'tree' },
  { name: 'nobody: default', user: 'nobody', env: {}, backend: 'subreaper', mode: 'namespaced', strict: true },
  { name: 'nobody: subreaper, no namespace', user: 'nobody', env: { AGENT_OS_PROCESS_SCOPE_NO_NAMESPACE: '1' }, backend: 'subreaper', mode: 'subreaper, no namespace' },
  { name: 'nobody: tree forced', user: 'nobody', env: { AGENT_OS_PROCESS_SCOPE_BACKEND: 'tree' }, backend: 'tree', mode: 'tree' }
]

function whyNot () {
  if (process.platform !== 'linux') return 'Linux only'
  if (process.env.AGENT_OS_QEMU === '1') return 'qemu-user refuses clone(CLONE_PARENT), which the scope helper needs'
  if (process.getuid() !== 0) return 'needs root (it runs the acts as root and as nobody)'
  if (!fs.existsSync('/proc/self/stat')) return 'needs /proc'
  for (const tool of ['setpriv', 'setsid', 'script', 'unshare', 'nohup']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `needs ${tool}`
  }
  const mod = require('./helpers.js').loadWithBackend('')
  if (mod.findHelper() === null) return 'the helper program was not built'
  return undefined
}

// A copy of what the package needs to load, in a directory nobody can reach: lib/,
// package.json, the build (binding and helper), node-gyp-build, and the driver.
function stage () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-escapes-'))
  fs.chmodSync(dir, 0o755)
  fs.cpSync(path.join(repo, 'lib'), path.join(dir, 'lib'), { recursive: true })
  fs.copyFileSync(path.join(repo, 'package.json'), path.join(dir, 'package.json'))
  fs.mkdirSync(path.join(dir, 'build', 'Release'), { recursive: true, mode: 0o755 })
  for (const f of ['agent_os.node', 'agent_os_scope_helper']) fs.copyFileSync(path.join(repo, 'build', 'Release', f), path.join(dir, 'build', 'Release', f))
  fs.chmodSync(path.join(dir, 'build', 'Release', 'agent_os_scope_helper'), 0o755)
  fs.cpSync(path.dirname(require.resolve('node-gyp-build/package.json')), path.join(dir, 'node_modules', 'node-gyp-build'), { recursive: true })
  fs.copyFileSync(driver, path.join(dir, 'escape-driver.js'))
  for (const sub of ['build', path.join('build', 'Release'), 'node_modules', path.join('node_modules', 'node-gyp-build'), 'lib', path.join('lib', 'internal')]) {
    fs.chmodSync(path.join(dir, sub), 0o755)
  }
  return dir
}

function runDriver (config, staged, mode, acts) {
  const asNobody = config.user === 'nobody'
  const lib = asNobody ? path.join(staged, 'lib', 'process.js') : path.join(repo, 'lib', 'process.js')
  const script = asNobody ? path.join(staged, 'escape-driver.js') : driver
  const env = { PATH: process.env.PATH, ...config.env }
  const cmd = asNobody ? 'setpriv' : process.execPath
  const args = asNobody
    ? ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, script, lib, mode, acts.join(',')]
    : [script, lib, mode, acts.join(',')]
  return spawn(cmd, args, { cwd: asNobody ? staged : repo, env, stdio: ['ignore', 'pipe', 'pipe'] })
}

function collect (child, untilLine) {
  return new Promise((resolve) => {
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (d) => {
      out += d
      if (untilLine !== undefined && out.split('\n').some((l) => l.startsWith(untilLine))) resolve({ out, err, code: null })
    })
    child.stderr.on('data', (d) => { err += d })
    child.once('close', (code) => resolve({ out, err, code }))
  })
}

function marked (mark) {
  const want = `AOS_SCOPE_MARK=${mark}`
  const out = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (!fs.readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(want)) continue
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1')
      const state = stat[stat.lastIndexOf(')') + 2]
      if (state !== 'Z' && state !== 'X') out.push(Number(name))
    } catch {}
  }
  return out
}

// Helper processes alive on the host (zombies are not: one that exited and waits for
// its parent, maybe another test's process, is no helper at work).
function helperProcesses () {
  const out = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (!fs.readFileSync(`/proc/${name}/comm`, 'latin1').startsWith('agent_os_scope')) continue
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1')
      const state = stat[stat.lastIndexOf(')') + 2]
      if (state !== 'Z' && state !== 'X') out.push(Number(name))
    } catch {}
  }
  return out
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function waitFor (fn, ms) {
  const end = Date.now() + ms
  let v
  while (!(v = fn()) && Date.now() < end) await sleep(20)
  return v
}

function removeTree (dir) {
  try {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeTree(path.join(dir, e.name))
    try { fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1') } catch {}
    for (let i = 0; i < 100; i++) {
      try {
        fs.rmdirSync(dir)
        return
      } catch (err) {
        if (err.code !== 'EBUSY') return
        spawnSync('sleep', ['0.02'])
      }
    }
  } catch {}
}

// The Node process SIGKILLed while every act's command runs: what is left.
async function holdAndKill (config, staged, acts) {
  const child = runDriver(config, staged, 'hold', acts)
  const { out, err } = await collect(child, 'ready ')
  const line = out.split('\n').find((l) => l.startsWith('ready '))
  if (line === undefined) {
    child.kill('SIGKILL')
    throw new Error(`the driver did not start its acts:\n${out}\n${err}`)
  }
  const info = JSON.parse(line.slice(6))
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('close', resolve))
  const base = require('./helpers.js').loadWithBackend('').findCgroup()
  const scopeDirs = () => base === null ? [] : fs.readdirSync(base.dir).filter((n) => n.startsWith(`agent-os-scope-${info.pid}-`))
  // What dies with Node goes within moments; a bound only decides how long a failing
  // check takes (15 s: a loaded 2-CPU machine running the whole suite).
  await waitFor(() => Object.values(info.acts).every((a) => marked(a.mark).length === 0) && scopeDirs().length === 0 && helperProcesses().length === 0, 15000)
  const result = {}
  for (const [act, a] of Object.entries(info.acts)) result[act] = { ...a, survivors: marked(a.mark).length }
  const left = { cgroups: scopeDirs().length, helpers: helperProcesses().length, ns: info.ns }
  // Clean up whatever survived, whatever the checks below say.
  for (const a of Object.values(info.acts)) for (const pid of marked(a.mark)) try { process.kill(pid, 'SIGKILL') } catch {}
  for (const pid of helperProcesses()) try { process.kill(pid, 'SIGKILL') } catch {}
  if (base !== null) {
    for (const n of fs.readdirSync(base.dir)) {
      if (n.startsWith(`agent-os-scope-${info.pid}-`) || n.startsWith(`aos-escape-child-esc-${info.pid}-`) || n === `aos-escape-other-${info.pid}`) removeTree(path.join(base.dir, n))
    }
  }
  return { result, left }
}

function table (config, kill, held, done) {
  const rows = [['act', 'after kill()', 'after Node SIGKILL', 'kill() settled', 'left after close()']]
  for (const act of ACTS) {
    const k = kill[act]
    const h = held[act]
    rows.push([act, String(k.survivors), h === undefined ? '-' : String(h.survivors), k.settled ? `yes, ${k.ms} ms` : 'NO',
      `${k.helpers} helpers, ${k.cgroups} cgroups` + (k.madeCgroups > 0 ? ` (+${k.madeCgroups} the command made outside the scope)` : '')])
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  const lines = rows.map((r) => '      | ' + r.map((c, i) => c.padEnd(widths[i])).join(' | ') + ' |')
  lines.splice(1, 0, '      | ' + widths.map((w) => '-'.repeat(w)).join(' | ') + ' |')
  console.log(`      ${config.name}: backend ${kill[ACTS[0]].backend}, namespaces '${done.ns}', descriptors after close(): ${done.fdDelta >= 0 ? '+' : ''}${done.fdDelta}, decoys alive ${done.decoysAlive}/3`)
  console.log(lines.join('\n'))
}

describe('process scope: the escape suite (every backend here, as root and as nobody)', function () {
  this.timeout(300000)
  let staged
  let nobodyWhy // why nobody cannot run the staged package here, or undefined
  before(function () {
    const why = whyNot()
    if (why !== undefined) {
      this.test.parent.title += ` [skipped: ${why}]`
      this.skip()
    }
    staged = stage()
    const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e',
      `require(${JSON.stringify(path.join(staged, 'lib', 'process.js'))})`], { cwd: staged, stdio: 'ignore' })
    if (probe.status !== 0) nobodyWhy = 'nobody cannot load the package copied to the temporary directory (TMPDIR not reachable?)'
  })
  after(function () {
    if (staged !== undefined) fs.rmSync(staged, { recursive: true, force: true })
  })

  for (const config of CONFIGS) {
    it(`${config.name}: ${config.strict ? '0 survivors for every act' : 'every cell as docs/process-scopes.md says'}; kill() settles; nothing left`, async function () {
      if (config.user === 'nobody' && nobodyWhy !== undefined) {
        this.test.title += ` [skipped: ${nobodyWhy}]`
        this.skip()
      }
      // kill(): each act in turn.
      const run = runDriver(config, staged, 'kill', ACTS)
      const { out, err, code } = await collect(run)
      assert.equal(code, 0, `the driver failed:\n${out}\n${err}`)
      const lines = out.trim().split('\n').map((l) => JSON.parse(l))
      const done = lines.pop()
      assert.equal(done.done, true)
      const kill = Object.fromEntries(lines.map((l) => [l.act, l]))
      // The Node process SIGKILLed: every act at once; killing the helpers apart (in a
      // scope without namespaces it would kill the other acts' helpers too).
      const heldA = await holdAndKill(config, staged, ACTS.filter((a) => a !== 'kill its helpers'))
      const heldB = await holdAndKill(config, staged, ['kill its helpers'])
      const held = { ...heldA.result, ...heldB.result }
      table(config, kill, held, done)
      if (config.strict && done.ns === '') {
        this.test.title += ' [skipped: namespaces are refused here, so the default is the fallback (measured and checked as such)]'
      }
      const mode = config.strict && done.ns === '' ? (config.backend === 'cgroup' ? 'cgroup, no namespace' : 'subreaper, no namespace') : config.mode
      const may = MAY_SURVIVE[mode]
      for (const act of ACTS) {
        const k = kill[act]
        assert.ok(k !== undefined, `${act}: no result`)
        assert.equal(k.backend, config.backend, `${act}: backend`)
        assert.equal(k.ready, true, `${act}: the act's processes never came up`)
        // (nobody may not change its uid: that act starts nothing)
        if (!(act === 'another uid/gid' && config.user === 'nobody')) assert.ok(k.seen > 0, `${act}: no process of the act was seen`)
        assert.equal(k.settled, true, `${act}: kill() did not settle`)
        assert.equal(k.closed, true, `${act}: close() did not settle`)
        assert.equal(k.helpers, 0, `${act}: a helper process outlived close()`)
        assert.equal(k.cgroups, 0, `${act}: a cgroup directory outlived close()`)
        if (!may.kill.includes(act)) assert.equal(k.survivors, 0, `${act}: survivors after kill()`)
        const h = held[act]
        assert.equal(h.ready, true, `${act}: the act's processes never came up (held)`)
        if (!may.sigkill.includes(act)) assert.equal(h.survivors, 0, `${act}: survivors after the Node process was SIGKILLed`)
      }
      assert.equal(done.fdDelta, 0, 'descriptors left after every scope closed')
      assert.equal(done.decoysAlive, 3, 'a decoy outside the scopes was killed')
      assert.equal(done.helpers, 0)
      if (mode !== 'tree' && mode !== 'cgroup, no namespace') {
        assert.equal(heldA.left.cgroups + heldB.left.cgroups, 0, 'a cgroup directory outlived the Node process')
        assert.equal(heldA.left.helpers + heldB.left.helpers, 0, 'a helper process outlived the Node process')
      }
      if (mode === 'cgroup, no namespace') assert.equal(heldA.left.cgroups, 0, 'a cgroup directory outlived the Node process')
      // A host that refuses namespaces gives the fallback as its default: measured and
      // checked above as such, but the default could not hold here.
      if (config.strict && done.ns === '') this.skip()
    })
  }
})
