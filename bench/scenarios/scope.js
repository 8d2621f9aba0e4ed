'use strict'
// process scopes: what a scope costs a command. Two rows:
//   scope-spawn  spawn `true` and await its 'exit', in a scope (cgroup, subreaper)
//                against a plain child_process.spawn
//   scope-kill   end a shell whose background job holds on: scope.kill() against
//                spawn(detached) + killProcessTree (the job is still in the shell's
//                group there, so both reach it; a scope also reaches what left it)
// Linux only (the two Linux backends, forced through the private switch).

const path = require('node:path')
const { spawn } = require('node:child_process')
const { timeAsync } = require('../lib/measure.js')
const { runRow } = require('../lib/row.js')
const { Unavailable } = require('../lib/pkg.js')

const MODULE = path.join(__dirname, '..', '..', 'lib', 'internal', 'process-scope.js')

function scopeModule (backend) {
  const saved = process.env.AGENT_OS_PROCESS_SCOPE_BACKEND
  process.env.AGENT_OS_PROCESS_SCOPE_BACKEND = backend
  delete require.cache[MODULE]
  try {
    return require(MODULE)
  } finally {
    delete require.cache[MODULE]
    if (saved === undefined) delete process.env.AGENT_OS_PROCESS_SCOPE_BACKEND
    else process.env.AGENT_OS_PROCESS_SCOPE_BACKEND = saved
  }
}

function exited (child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', resolve))
}

// Resolves once the child printed its first line (the shell started its job).
function ready (child) {
  return new Promise((resolve, reject) => {
    child.stdout.once('data', resolve)
    child.once('error', reject)
  })
}

const JOB = 'sleep 1000 & echo up; exec sleep 1000'

async function openScope (backend, scopes) {
  if (process.platform !== 'linux') throw new Unavailable('Linux only')
  let scope
  try {
    scope = await scopeModule(backend).openProcessScope()
  } catch (err) {
    throw new Unavailable(`${backend} backend: ${err.code}`)
  }
  if (scope.backend !== backend) throw new Unavailable(`${backend} backend not available here`)
  scopes.push(scope)
  return scope
}

async function rows (ctx) {
  const scopes = []
  const n = ctx.quick ? 10 : 40
  const spawnRow = await runRow({
    id: 'scope-spawn',
    short: 'scope spawn',
    title: 'spawn `true` and await its exit, in a scope vs plain spawn',
    where: 'Linux',
    n,
    rounds: ctx.quick ? 5 : 11,
    notes: ['A scope runs the command through the helper program: the helper, a clone of it (the init of a PID namespace, or a plain subreaper where none can be made) and the command.'],
    impls: [
      ...['cgroup', 'subreaper'].map((backend) => ({
        id: backend,
        label: `agent-os scope.spawn (${backend})`,
        role: 'package',
        setup: async () => {
          const scope = await openScope(backend, scopes)
          return () => timeAsync(n, () => exited(scope.spawn('true', [], { stdio: 'ignore' })))
        }
      })),
      {
        id: 'spawn',
        label: 'child_process.spawn',
        role: 'alternative',
        setup: () => () => timeAsync(n, () => exited(spawn('true', [], { stdio: 'ignore' })))
      }
    ],
    comparisons: [
      { pkg: 'cgroup', alt: 'spawn', target: '-', note: 'cost of a scope' },
      { pkg: 'subreaper', alt: 'spawn', target: '-', note: 'cost of a scope' }
    ]
  }, ctx)

  // Times only the kill: each iteration starts the shell and waits for its job first.
  const killLoop = (k, start, kill) => async () => {
    let total = 0n
    for (let i = 0; i < k; i++) {
      const child = start()
      await ready(child)
      const t0 = process.hrtime.bigint()
      await kill(child)
      total += process.hrtime.bigint() - t0
    }
    return Number(total) / k
  }
  const kn = ctx.quick ? 5 : 20
  const killRow = await runRow({
    id: 'scope-kill',
    short: 'scope kill',
    title: 'end a shell and its background job (both obey SIGTERM)',
    where: 'Linux',
    n: kn,
    rounds: ctx.quick ? 5 : 9,
    notes: ['Only the kill is timed (from the call until it settles); the shell has started its job before.'],
    impls: [
      ...['cgroup', 'subreaper'].map((backend) => ({
        id: backend,
        label: `agent-os scope.kill (${backend})`,
        role: 'package',
        setup: async () => {
          const scope = await openScope(backend, scopes)
          return killLoop(kn, () => scope.spawn('sh', ['-c', JOB], { stdio: ['ignore', 'pipe', 'ignore'] }),
            () => scope.kill({ graceMs: 2000 }))
        }
      })),
      {
        id: 'tree',
        label: 'spawn(detached) + killProcessTree',
        role: 'alternative',
        setup: () => {
          const { killProcessTree } = require('../../lib/process.js')
          return killLoop(kn, () => spawn('sh', ['-c', JOB], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] }),
            (child) => killProcessTree(child, { graceMs: 2000 }))
        }
      }
    ],
    comparisons: [
      { pkg: 'cgroup', alt: 'tree', target: '-', note: 'kill time vs killProcessTree' },
      { pkg: 'subreaper', alt: 'tree', target: '-', note: 'kill time vs killProcessTree' }
    ],
    teardown: () => Promise.all(scopes.map((s) => s.close()))
  }, ctx)
  return [spawnRow, killRow]
}

module.exports = { rows }
