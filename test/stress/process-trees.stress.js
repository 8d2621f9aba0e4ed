'use strict'
// process: many mixed trees killed at once with killProcessTree, beyond the fixed
// trees of test/process/kill.test.js: trees that are still growing when the kill
// starts (members forked between the walk and the escalation), SIGTERM-ignoring
// setsid escapees that fork again, deep and wide trees, detached or not, all killed
// concurrently with different signals and grace periods.
//
// Survivors are found without trusting any list: every member of every tree carries
// AOS_STRESS_TREE=<run id> in its environment, and after every promise settled /proc
// is scanned for live (non-zombie) processes that carry it. Next to each tree runs a
// decoy (in a group and session of its own), which traps every catchable
// signal killProcessTree could send (a freeze shows as SIGCONT) and records it: a
// stranger signalled. The scenario runs once per path (default, each forced
// fallback, no /proc: there the trees whose members stay in the child's group), each in
// its own Node process. Figures per path: trees, members
// seen, survivors (must be 0), strangers signalled (must be 0).
//
// Recycled pids: as root, while the kills are under way, every member whose pid has
// been freed (reaped: gone from /proc) is offered to test/stress/native/recycler.c,
// which steers the kernel's next pid (ns_last_pid) onto it and forks a stranger there
// that reports any signal reaching it. A kill that signalled a member by number after
// its pid was handed on would hit that stranger. Figures: recycle attempts, strangers
// placed on a freed member's pid (hits), and those signalled (counted in strangers).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { killProcessTree } = require('../../lib/process.js')
const { spawnTree, PROC } = require('../process/helpers.js')
const { size, figure, sleep, nativeTool, removeTools } = require('./helpers.js')

const TREES = Number(process.env.AOS_PROC_STRESS_TREES) || size(200, 60)

// Trees of this file (the others come from test/process/helpers.js).
const GROWING = 'for i in $(seq 40); do (trap "" TERM; sleep 1000) & sleep 0.005; done; wait'
// An escapee (new session) that ignores SIGTERM and has a subtree of its own. (A
// double-forked daemon, reparented to init before the kill, is out of every tree
// walk's reach: the contract does not cover it, see test/process/kill.test.js.)
const REFORKING_ESCAPEE = 'setsid bash -c \'trap "" TERM; bash -c "sleep 1000 & wait" & sleep 1000 & wait\' & ' +
  'trap "" TERM; sleep 1000 & wait'

function marked (runId) {
  const out = []
  for (const name of fs.readdirSync(PROC)) {
    if (!/^\d+$/.test(name)) continue
    let env, stat
    try {
      env = fs.readFileSync(`${PROC}/${name}/environ`, 'latin1')
      stat = fs.readFileSync(`${PROC}/${name}/stat`, 'utf8')
    } catch {
      continue
    }
    if (!env.split('\0').includes(`AOS_STRESS_TREE=${runId}`)) continue
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    if (state !== 'Z' && state !== 'X') out.push(Number(name))
  }
  return out
}

const NS_LAST_PID = `${PROC}/sys/kernel/ns_last_pid`

/** The recycler (see the head of this file), or null where pids cannot be steered
 * (not root, no ns_last_pid, no C compiler). */
function startRecycler () {
  if (process.getuid() !== 0) return null
  try { fs.accessSync(NS_LAST_PID, fs.constants.W_OK) } catch { return null }
  const bin = nativeTool('recycler')
  if (bin === null) return null
  const env = { ...process.env }
  delete env.AOS_STRESS_TREE
  const child = spawn(bin, [NS_LAST_PID], { detached: true, stdio: ['pipe', 'pipe', 'inherit'], env })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (d) => { out += d })
  const done = new Promise((resolve) => child.once('close', () => resolve(out)))
  return { child, done }
}

/** Offers every recorded member whose pid is free to the recycler, until `settled`. */
async function recycleWhileKilling (recycler, members, settled) {
  const offered = new Set()
  const limit = members.length
  while (!settled.done && offered.size < limit) {
    for (const pid of members) {
      if (offered.has(pid) || fs.existsSync(`${PROC}/${pid}`)) continue
      offered.add(pid)
      recycler.child.stdin.write(`${pid}\n`)
    }
    await sleep(2)
  }
  return offered.size
}

/** The recycler's figures once its input ends: attempts, hits, hits signalled. */
async function recyclerFigures (recycler, attempts) {
  recycler.child.stdin.end()
  const out = await recycler.done
  const m = /^strangers (\d+) signalled (\d+)$/m.exec(out)
  assert.ok(m, `recycler output: ${out.slice(-200)}`)
  return { recycleAttempts: attempts, recycledHits: Number(m[1]), recycledSignalled: Number(m[2]) }
}

const DECOY = 'for s in TERM HUP INT USR1 CONT; do trap "echo $s >> \\"$D\\"" $s; done; ' +
  'echo up > "$D.up"; while :; do sleep 1000 & wait $!; done'

// One run of the scenario in this process; resolves its figures.
async function scenario () {
  const runId = `${process.pid}-${Date.now()}`
  const previous = process.env.AOS_STRESS_TREE
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-stress-proc-'))
  // Without /proc only the child and its process group are reachable (docs/process.md,
  // "Linux without /proc"): that path runs the trees whose members all stay in the
  // child's group, each detached (a group of its own); the escapees and trees left in
  // this process's group are beyond that path's reach by design.
  const noProc = process.env.AOS_PROC_STRESS_NO_PROC === '1'
  const kinds = noProc
    ? ['obey', 'ignore', 'deep3', 'orphanedIgnorer', 'wide', 'growing']
    : ['obey', 'ignore', 'escapee', 'deep3', 'orphanedIgnorer', 'wide', 'growing', 'reforking']
  const trees = []
  const decoys = []
  let maxMembers = 0
  let recycler = null
  try {
    for (let i = 0; i < TREES; i++) {
      // The decoy first, without the run's mark.
      const D = path.join(dir, `decoy-${i}`)
      const decoyEnv = { ...process.env, D }
      delete decoyEnv.AOS_STRESS_TREE
      const decoy = spawn('bash', ['-c', DECOY], { detached: true, stdio: 'ignore', env: decoyEnv })
      decoys.push({ child: decoy, file: D })
      process.env.AOS_STRESS_TREE = runId
      const kind = kinds[i % kinds.length]
      const detached = noProc || kind === 'growing' || i % 5 !== 0
      if (kind === 'growing' || kind === 'reforking') {
        const child = spawn('bash', ['-c', kind === 'growing' ? GROWING : REFORKING_ESCAPEE], { detached, stdio: 'ignore' })
        await sleep(kind === 'growing' ? Math.floor(Math.random() * 60) : 50) // growing: killed mid-growth
        trees.push({ child, kind })
      } else {
        trees.push({ child: (await spawnTree(kind, { detached, dir })).child, kind })
      }
      delete process.env.AOS_STRESS_TREE
    }
    for (const d of decoys) {
      for (let i = 0; i < 3000 && !fs.existsSync(`${d.file}.up`); i++) await sleep(10)
    }
    const members = marked(runId)
    maxMembers = members.length
    recycler = startRecycler()
    const signals = ['SIGTERM', 'SIGTERM', 'SIGHUP', 'SIGINT', 'SIGKILL']
    const settled = { done: false }
    const killed = Promise.all(trees.map((t, i) => killProcessTree(t.child, {
      signal: signals[i % signals.length],
      graceMs: [0, 50, 200][i % 3]
    }))).finally(() => { settled.done = true })
    const attempts = recycler ? recycleWhileKilling(recycler, members, settled) : 0
    await killed
    const recycled = recycler
      ? await recyclerFigures(recycler, await attempts)
      : { recycleAttempts: 'skipped (needs root and a writable ns_last_pid)' }
    recycler = null
    const left = marked(runId)
    if (left.length && process.env.AGENT_OS_TEST_VERBOSE) {
      for (const pid of left) {
        try {
          const st = fs.readFileSync(`${PROC}/${pid}/stat`, 'utf8')
          console.log('survivor', pid, st.slice(st.lastIndexOf(')') + 2).split(' ').slice(0, 5).join(' '), fs.readFileSync(`${PROC}/${pid}/cmdline`, 'latin1').replace(/\0/g, ' '))
        } catch {}
      }
    }
    await sleep(100) // a trap runs once bash is scheduled
    let strangers = 0
    for (const d of decoys) {
      let got = ''
      try { got = fs.readFileSync(d.file, 'utf8') } catch {}
      if (got !== '' || d.child.exitCode !== null || d.child.signalCode !== null) strangers++
    }
    strangers += recycled.recycledSignalled || 0
    return { trees: TREES, kinds: noProc ? 'group-only' : 'all', membersSeen: maxMembers, survivors: left.length, strangers, ...recycled }
  } finally {
    if (recycler) {
      recycler.child.stdin.end()
      await recycler.done
    }
    for (const pid of marked(runId)) {
      try { process.kill(pid, 'SIGKILL') } catch {}
    }
    for (const d of decoys) {
      try { process.kill(-d.child.pid, 'SIGKILL') } catch {}
    }
    if (previous === undefined) delete process.env.AOS_STRESS_TREE
    else process.env.AOS_STRESS_TREE = previous
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

// Run as a worker: one scenario, its figures as the last line.
if (process.env.AOS_PROC_STRESS_WORKER === '1') {
  scenario().then((f) => { removeTools(); console.log(JSON.stringify(f)); process.exit(0) },
    (err) => { removeTools(); console.error(err); process.exit(1) })
}

const PATHS = ['default', 'no-pgroup-fd', 'no-pidfd', 'no-proc']

if (typeof describe === 'function') {
  describe('stress: killProcessTree on many mixed trees, per path', function () {
    this.timeout(0)
    before(function () {
      if (process.platform !== 'linux') this.skip()
    })
    for (const p of PATHS) {
      it(`${TREES} mixed trees with a decoy each, killed concurrently (path ${p}): zero survivors, zero strangers signalled`, function () {
        if (p === 'no-proc' && (process.getuid() !== 0 || spawnSync('unshare', ['--version']).status !== 0)) this.skip()
        const env = { ...process.env, AOS_PROC_STRESS_WORKER: '1' }
        delete env.AGENT_OS_PROCESS_FORCE
        let r
        if (p === 'no-proc') {
          const real = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-realproc-'))
          r = spawnSync('unshare', ['-m', 'sh', '-c',
            'mount --make-rprivate / && mount --bind /proc "$AOS_TEST_PROC" && mount -t tmpfs none /proc && exec "$N" "$S"'],
          { encoding: 'utf8', env: { ...env, AOS_TEST_PROC: real, AOS_PROC_STRESS_NO_PROC: '1', N: process.execPath, S: __filename } })
          fs.rmdirSync(real)
        } else {
          if (p !== 'default') env.AGENT_OS_PROCESS_FORCE = p
          r = spawnSync(process.execPath, [__filename], { encoding: 'utf8', env })
        }
        const lines = String(r.stdout).trim().split('\n')
        assert.equal(r.status, 0, `${r.stderr}`)
        const f = JSON.parse(lines[lines.length - 1])
        figure('process-trees', { path: p, ...f })
        assert.equal(f.survivors, 0, 'processes of killed trees still run')
        assert.equal(f.strangers, 0, 'a decoy was signalled')
        assert.ok(f.membersSeen >= TREES * 3, `only ${f.membersSeen} members`)
        if (typeof f.recycleAttempts === 'number') {
          // Root: the run must have placed strangers on freed members' pids.
          assert.ok(f.recycledHits > 0, `no stranger got a freed member's pid in ${f.recycleAttempts} attempts`)
        }
      })
    }
  })
}
