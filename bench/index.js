#!/usr/bin/env node
'use strict'
// The performance harness: `npm run bench` (full) or `npm run bench -- --quick`.
// Every row measures the package against its alternatives and against the raw
// syscall sequence in C, alternating implementations round by round, and prints
// one table of medians and ratios (package time / alternative time), then the
// scaling series. See docs/performance.md.
//
// Options:
//   --quick         fewer rounds and iterations, smaller series (under a minute)
//   --json          print the results as JSON on stdout instead of the tables
//   --json=FILE     also write the results as JSON to FILE
//   --only=a,b      only the groups named: read, list, range, walk, write, lock,
//                   kill, scope
//   --no-series     skip the scaling series
//   --no-syscall-check
//                   skip the strace comparison of package calls and C loops
//   --no-pin        do not pin the run to one CPU (see pinned() below)
//   --c-write-mode=auto|excl|tmpfile
//                   which C write loop the write target is measured against:
//                   auto (default) takes the one whose calls the syscall check
//                   found equal to the package's, else tmpfile

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { buildPrograms } = require('./lib/cbuild.js')
const machine = require('./lib/machine.js')
const fixtures = require('./lib/fixtures.js')
const { load } = require('./lib/pkg.js')
const { Worker } = require('./lib/child.js')
const launcher = require('./lib/launcher.js')
const report = require('./lib/report.js')
const syscalls = require('./lib/syscalls.js')

const GROUPS = ['read', 'list', 'range', 'walk', 'write', 'lock', 'kill', 'scope']

function parseArgs (argv) {
  const o = { quick: false, json: false, jsonFile: undefined, only: GROUPS, series: true, syscallCheck: true, cWriteMode: 'auto', pin: true }
  for (const a of argv) {
    if (a === '--quick') o.quick = true
    else if (a === '--json') o.json = true
    else if (a.startsWith('--json=')) o.jsonFile = a.slice(7)
    else if (a.startsWith('--only=')) o.only = a.slice(7).split(',').filter(Boolean)
    else if (a === '--no-series') o.series = false
    else if (a === '--no-syscall-check') o.syscallCheck = false
    else if (a === '--no-pin') o.pin = false
    else if (a.startsWith('--c-write-mode=')) o.cWriteMode = a.slice(15)
    else if (a === '--help' || a === '-h') {
      process.stdout.write(fs.readFileSync(__filename, 'utf8').split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n') + '\n')
      process.exit(0)
    } else {
      throw new Error(`unknown option ${a}`)
    }
  }
  for (const g of o.only) if (!GROUPS.includes(g)) throw new Error(`unknown group ${g} (groups: ${GROUPS.join(', ')})`)
  if (!['auto', 'excl', 'tmpfile'].includes(o.cWriteMode)) throw new Error('--c-write-mode is auto, excl or tmpfile')
  return o
}

const t0 = Date.now()
function log (text) {
  process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${text}\n`)
}

/** The kill group in a child Node process under the C subreaper. */
function runKillGroup (ctx, wantRows, wantSeries) {
  return new Promise((resolve) => {
    const reaper = ctx.programs.subreaper
    const proctree = ctx.programs.proctree
    if (!reaper || !proctree) {
      const reason = `not available (C helpers: ${ctx.buildFailures.subreaper || ctx.buildFailures.proctree})`
      return resolve({ rows: [{ id: 'kill-10', short: 'killProcessTree, 10 processes', status: 'unavailable', reason, impls: [], comparisons: [], notes: [] }], series: [] })
    }
    const args = JSON.stringify({ quick: ctx.quick, programs: ctx.programs, rows: wantRows, series: wantSeries })
    const child = spawn(reaper, [process.execPath, path.join(__dirname, 'scenarios', 'kill.js'), args], {
      stdio: ['ignore', 'pipe', 'inherit']
    })
    let out = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (d) => { out += d })
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(out))
      } catch {
        const reason = `error: kill scenario exited with ${code}`
        resolve({ rows: [{ id: 'kill-10', short: 'killProcessTree, 10 processes', status: 'error', reason, impls: [], comparisons: [], notes: [] }], series: [] })
      }
    })
  })
}

function survivorsTable (s) {
  const lines = [`survivors: ${s.treeSize}-process trees; counted when the call resolved and ${s.settleMs} ms later (killProcessTree with graceMs ${s.graceMs})`]
  const rows = [['tree', 'implementation', 'resolved after', 'alive at resolve', `alive after ${s.settleMs} ms`]]
  for (const c of s.cases) {
    c.results.forEach((r, k) => {
      if (r.status === 'ok') rows.push([k ? '' : c.label, r.label, report.fmtTime(r.ns), String(r.aliveAtResolve), String(r.aliveAfterSettle)])
      else rows.push([k ? '' : c.label, r.label, r.reason, '', ''])
    })
  }
  lines.push(...report.table(rows, { indent: '  ' }))
  return lines
}

// On Linux the whole run (this process, its threads, the portable-walk worker, the
// launcher and every C loop) is pinned to one CPU, by running it again under
// `taskset -c <last CPU>`. Unpinned, on the 2-vCPU machine this was tuned on, rounds
// jumped between two levels 1.4x apart in phases, the in-process implementations and
// the C loops (fresh processes, placed anew) often on different levels in the same
// round, which skewed their ratios; pinned, the 21 rounds of a row agree within a
// few per cent. Returns the CPU when this process is the pinned run, null when
// pinning was not asked for or is not possible (said in the header), and exits
// after the pinned run when this process started it.
function pinned (o) {
  if (process.env.AGENT_OS_BENCH_CPU !== undefined) return process.env.AGENT_OS_BENCH_CPU
  if (!o.pin || process.platform !== 'linux') return null
  const cpu = String(os.availableParallelism() - 1)
  if (spawnSync('taskset', ['-c', cpu, 'true']).status !== 0) return null
  const r = spawnSync('taskset', ['-c', cpu, process.execPath, ...process.execArgv, __filename, ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, AGENT_OS_BENCH_CPU: cpu } })
  process.exit(r.status ?? 1)
}

async function main () {
  const o = parseArgs(process.argv.slice(2))
  const cpu = pinned(o)
  const started = Date.now()
  log(`agent-os bench${o.quick ? ' (quick)' : ''}: building the C loops`)
  const build = buildPrograms()
  const info = machine.describe(build.compiler)
  const disk = fixtures.diskBase()
  const tmpfs = fixtures.tmpfsBase()
  const readBase = disk.dir ? disk : { ...tmpfs, where: `${tmpfs.where} (no disk filesystem)` }
  info.pinnedCpu = cpu
  info.filesystems = {
    disk: disk.dir ? `${disk.type} (${disk.where})` : disk.note,
    tmpfs: tmpfs.dir ? `tmpfs (${tmpfs.where})` : tmpfs.note
  }

  // openat2 on this kernel? Asked of the C loop itself (ENOSYS -> exit 3).
  let openat2 = false
  if (build.programs.read_loop && readBase.dir) {
    const probeDir = fs.mkdtempSync(path.join(readBase.dir, 'probe-'))
    fs.writeFileSync(path.join(probeDir, 'x'), 'x')
    const r = spawnSync(build.programs.read_loop, ['openat2', probeDir, 'x', '1'], { encoding: 'utf8' })
    openat2 = r.status === 0
  }
  info.openat2 = openat2
  info.loadAverageAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100)

  const exitHooks = []
  let worker
  const ctx = {
    quick: o.quick,
    programs: build.programs,
    buildFailures: build.failures,
    disk: readBase,
    tmpfs,
    openat2,
    cWriteMode: o.cWriteMode === 'auto' ? 'tmpfile' : o.cWriteMode,
    parts: {
      fileAuthority: load('file-authority'),
      nodeLock: load('node-lock')
    },
    log,
    onExit: (fn) => exitHooks.push(fn),
    portableWorker: () => {
      worker = worker || new Worker({ AGENT_OS_FA_RESOLVER: 'portable' })
      return worker
    }
  }

  launcher.ready() // forked now, before any timing: the C loops start from it
  const rows = []
  const series = []
  let survivors
  let syscallCheck
  try {
    if (o.syscallCheck && readBase.dir) {
      log('syscall check (strace)')
      try {
        syscallCheck = syscalls.check(ctx)
      } catch (err) {
        syscallCheck = { available: false, reason: `failed: ${err.message}`, checks: [] }
      }
      const w = syscallCheck.checks.find((c) => c.id === 'write' && c.same)
      if (o.cWriteMode === 'auto' && w) ctx.cWriteMode = w.mode
    }
    for (const group of GROUPS) {
      if (!o.only.includes(group)) continue
      log(`${group}:`)
      if (group === 'kill') {
        const r = await runKillGroup(ctx, true, o.series)
        rows.push(...r.rows)
        series.push(...r.series)
        survivors = r.survivors
        continue
      }
      if (!readBase.dir) {
        const reason = 'not available (no temporary directory on disk or tmpfs)'
        rows.push({ id: group, short: group, status: 'unavailable', reason, impls: [], comparisons: [], notes: [] })
        continue
      }
      const mod = require(`./scenarios/${group}.js`)
      rows.push(...await mod.rows(ctx))
      if (o.series && mod.series) series.push(...await mod.series(ctx))
    }
  } finally {
    for (const fn of exitHooks) {
      try {
        fn()
      } catch {}
    }
    if (worker) await worker.close()
    await launcher.close()
    fixtures.cleanup()
  }

  info.loadAverageAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100)
  const result = {
    date: new Date().toISOString(),
    mode: o.quick ? 'quick' : 'full',
    seconds: Math.round((Date.now() - started) / 100) / 10,
    machine: info,
    rows,
    survivors,
    syscallCheck,
    series
  }
  if (o.jsonFile) fs.writeFileSync(o.jsonFile, JSON.stringify(result, null, 2) + '\n')
  if (o.json) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n')
    return
  }
  const m = info
  const lines = []
  lines.push(`agent-os bench, ${result.mode} run, ${result.date}, ${result.seconds} s`)
  lines.push(`machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}, kernel ${m.kernel}, Node ${m.node}, ${m.compiler}`)
  lines.push(`filesystems: disk ${m.filesystems.disk}; tmpfs ${m.filesystems.tmpfs}; openat2 ${m.openat2 ? 'available' : 'missing'}`)
  lines.push(`load average (1, 5, 15 min): ${m.loadAverageAtStart.join(' ')} at start, ${m.loadAverageAtEnd.join(' ')} at end`)
  lines.push(m.pinnedCpu === null ? 'not pinned to a CPU (--no-pin, or no taskset)' : `pinned to CPU ${m.pinnedCpu} (taskset), with every process it starts`)
  lines.push('pkg/alt: package median / alternative median (lower: package faster; the verdict uses it); per round: median of the per-round ratios')
  lines.push('')
  lines.push(...report.mainTable(rows))
  lines.push('')
  for (const row of rows) {
    if (row.status !== 'ok') continue
    lines.push(`${row.short}: ${row.title}; ${row.where}; ${row.rounds} rounds of ${row.n}.`)
    for (const n of row.notes) lines.push(`  ${n}`)
    const alive = row.impls.filter((i) => i.aliveAtResolve !== undefined)
    if (alive.length) lines.push(`  Tree members still alive when the call resolved (worst round): ${alive.map((i) => `${i.label} ${i.aliveAtResolve}`).join(', ')}.`)
  }
  if (syscallCheck) {
    lines.push('')
    lines.push(...syscalls.lines(syscallCheck))
  }
  if (survivors) {
    lines.push('')
    lines.push(...survivorsTable(survivors))
  }
  for (const s of series) {
    lines.push('')
    lines.push(...report.seriesTable(s))
  }
  process.stdout.write(lines.join('\n') + '\n')
}

main().catch((err) => {
  log(`bench failed: ${err.stack || err}`)
  fixtures.cleanup()
  process.exitCode = 1
})
