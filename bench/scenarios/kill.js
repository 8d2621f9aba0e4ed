'use strict'
// process: killing a process tree. Runs in its own Node process under bench/c's
// subreaper (so orphaned tree members are reaped as init would reap them; some
// container inits never do). Prints its results as JSON on stdout; progress goes to
// stderr. Started by bench/index.js; not meant to be run alone.

const fs = require('node:fs')
const { spawn } = require('node:child_process')
const { runRow } = require('../lib/row.js')
const { runSeries } = require('../lib/series.js')
const { load, need, alternative, Unavailable, NO_BINDING, firstLine } = require('../lib/pkg.js')

const opts = JSON.parse(process.argv[2])
const log = (text) => process.stderr.write(`${text}\n`)
const SETTLE_MS = 1000
const SURVIVOR_GRACE_MS = 500

// ------------------------------------------------------------------ the trees

function startTime (pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { state: fields[0], start: fields[19] }
  } catch {
    return undefined
  }
}

/** Is this tree member (pid + start time, so never a recycled pid) still running? */
function alive (member) {
  const s = startTime(member.pid)
  return s !== undefined && s.start === member.start && s.state !== 'Z' && s.state !== 'X'
}

function spawnTree (size, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(opts.programs.proctree, [String(size), ...extra], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore']
    })
    let text = ''
    const onData = (chunk) => {
      text += chunk
      const nl = text.indexOf('\n')
      if (nl === -1) return
      child.stdout.removeListener('data', onData)
      const words = text.slice(0, nl).split(' ')
      if (words[0] !== 'ready') {
        child.kill('SIGKILL')
        return reject(new Error(`proctree said ${words[0]}`))
      }
      const members = words.slice(1).map(Number).map((pid) => ({ pid, start: startTime(pid)?.start }))
      child.stdout.resume()
      resolve({ child, members })
    }
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', onData)
    child.once('error', reject)
    child.once('exit', (code, signal) => reject(new Error(`proctree exited early (${code ?? signal})`)))
  })
}

function exited (child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', resolve))
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function waitGone (members, ms) {
  const until = Date.now() + ms
  for (;;) {
    const left = members.filter(alive)
    if (left.length === 0 || Date.now() >= until) return left
    await sleep(5)
  }
}

/** SIGKILLs whatever of the tree is left and waits for it. */
async function finish (tree) {
  for (const m of tree.members.filter(alive)) {
    try {
      process.kill(m.pid, 'SIGKILL')
    } catch {}
  }
  await exited(tree.child)
  const left = await waitGone(tree.members, 5000)
  if (left.length) throw new Error(`${left.length} tree members outlived SIGKILL`)
}

// ------------------------------------------------------------ implementations

function implementations () {
  return [
    {
      id: 'pkg',
      label: 'agent-os killProcessTree',
      role: 'package',
      prepare: () => {
        const proc = need(load('process'), ['killProcessTree'])
        return (tree, grace) => proc.killProcessTree(tree.child, grace === undefined ? undefined : { graceMs: grace })
      }
    },
    {
      id: 'tree-kill',
      label: 'tree-kill (SIGTERM)',
      role: 'alternative',
      prepare: () => {
        const treeKill = alternative('tree-kill')
        return (tree) => new Promise((resolve, reject) => {
          treeKill(tree.child.pid, 'SIGTERM', (err) => (err ? reject(err) : resolve()))
        })
      }
    },
    {
      id: 'group',
      label: 'process.kill(-pid, SIGTERM) + child exit',
      role: 'reference',
      prepare: () => (tree) => {
        process.kill(-tree.child.pid, 'SIGTERM')
        return Promise.race([exited(tree.child), sleep(10000)])
      }
    }
  ]
}

/** One timed kill of a fresh tree: { ns, aliveAtResolve, aliveAfterSettle }. */
async function killOnce (kill, size, extra, grace, settleMs) {
  const tree = await spawnTree(size, extra)
  try {
    const t0 = process.hrtime.bigint()
    await kill(tree, grace)
    const t1 = process.hrtime.bigint()
    const aliveAtResolve = tree.members.filter(alive).length
    const aliveAfterSettle = (await waitGone(tree.members, settleMs)).length
    return { ns: Number(t1 - t0), aliveAtResolve, aliveAfterSettle }
  } finally {
    await finish(tree)
  }
}

async function mainRow () {
  const size = 10
  const maxAlive = {}
  const row = await runRow({
    id: 'kill-10',
    short: 'killProcessTree, 10 processes',
    title: 'killProcessTree: a 10-process tree (fan-out 4) that obeys SIGTERM; time until the call resolves',
    where: 'C processes from bench/c/proctree.c',
    n: 1,
    rounds: opts.quick ? 5 : 15,
    notes: [
      'Time from the call to its resolution (tree-kill: its callback). tree-kill and the group signal do not wait for the tree to exit.',
      'Each round kills a fresh tree; building it is not timed.'
    ],
    impls: implementations().map((impl) => ({
      id: impl.id,
      label: impl.label,
      role: impl.role,
      setup: () => {
        const kill = impl.prepare()
        maxAlive[impl.id] = 0
        return async () => {
          const r = await killOnce(kill, size, [], undefined, 2000)
          maxAlive[impl.id] = Math.max(maxAlive[impl.id], r.aliveAtResolve)
          return r.ns
        }
      }
    })),
    comparisons: [
      { pkg: 'pkg', alt: 'tree-kill', limit: 0.1, target: '<= 0.1x' },
      { pkg: 'pkg', alt: 'group', target: '-', note: 'reference' }
    ]
  }, { log })
  for (const impl of row.impls) {
    if (maxAlive[impl.id] !== undefined && impl.status === 'ok') impl.aliveAtResolve = maxAlive[impl.id]
  }
  return row
}

async function survivors () {
  const size = 10
  const cases = [
    { id: 'ignore-term', label: 'member 2 ignores SIGTERM (its child obeys)', extra: ['--ignore-term', '2'] },
    { id: 'setsid', label: 'member 1 calls setsid (it and its 4 children leave the group)', extra: ['--setsid', '1'] }
  ]
  const out = { treeSize: size, graceMs: SURVIVOR_GRACE_MS, settleMs: SETTLE_MS, cases: [] }
  for (const c of cases) {
    log(`  survivors: ${c.id}`)
    const rec = { id: c.id, label: c.label, results: [] }
    for (const impl of implementations()) {
      const r = { impl: impl.id, label: impl.label }
      try {
        const kill = impl.prepare()
        Object.assign(r, await killOnce(kill, size, c.extra, SURVIVOR_GRACE_MS, SETTLE_MS), { status: 'ok' })
      } catch (err) {
        const binding = err && err.code === 'UNSUPPORTED_BACKEND'
        r.status = err instanceof Unavailable || binding ? 'unavailable' : 'error'
        r.reason = binding ? NO_BINDING : err instanceof Unavailable ? err.message : `error: ${firstLine(err)}`
      }
      rec.results.push(r)
    }
    out.cases.push(rec)
  }
  return out
}

async function series () {
  const sizes = [1, 10, 50, 100, 200]
  const treeKillMax = opts.quick ? 50 : 200
  return runSeries({
    id: 'kill-size',
    title: `kill time vs tree size (fan-out 4, all obey SIGTERM; ${opts.quick ? 3 : 5} rounds, median; tree-kill up to ${treeKillMax})`,
    unitLabel: 'processes',
    perUnit: 'process',
    rounds: opts.quick ? 3 : 5,
    points: sizes.map((s) => ({ units: s, label: String(s), n: 1 })),
    impls: implementations().filter((i) => i.id !== 'group').map((impl) => ({
      id: impl.id,
      label: impl.label,
      maxUnits: impl.id === 'tree-kill' ? treeKillMax : undefined,
      beyondMax: 'skipped (--quick)',
      setup: (p) => {
        const kill = impl.prepare()
        return async () => (await killOnce(kill, p.units, [], undefined, 2000)).ns
      }
    }))
  }, { log })
}

async function main () {
  const result = { rows: [], survivors: undefined, series: [] }
  if (opts.rows) {
    result.rows.push(await mainRow())
    result.survivors = await survivors()
  }
  if (opts.series) result.series.push(await series())
  process.stdout.write(JSON.stringify(result))
}

main().catch((err) => {
  log(`kill scenario failed: ${err.stack || err}`)
  process.exitCode = 1
})
