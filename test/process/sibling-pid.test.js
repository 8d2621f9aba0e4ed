'use strict'
// Issue 24, finding 2: a child Node reaped whose 'exit' is not emitted yet, whose pid a
// new child of the same process took. test/process/fixtures/sibling-pid.js runs the
// reproduction in a private pid namespace with pid_max 400 (a freed pid is handed out
// again at once), 8 times on each path (default, no-pgroup-fd, no-pidfd): no new child
// may be signalled, and the old groups must still be ended. Needs root, unshare(1) and
// Linux 6.14+ (pid_max is per namespace from 6.14; before, the write would change the
// host's). .ci/run runs it as root.

const assert = require('node:assert/strict')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { NO_PROC } = require('./helpers.js')

// Under the sanitizer run (.ci/run's sanitize step) each of the reproduction's 2 400
// processes would load the sanitizer runtimes (3 minutes for 8 runs): one run on each
// path there, 8 in npm test.
const RUNS = process.env.AGENT_OS_SANITIZED === '1' ? 1 : 8
const fixture = path.join(__dirname, 'fixtures', 'sibling-pid.js')
const lib = path.join(__dirname, '..', '..', 'lib', 'process.js')

function whyNot () {
  if (process.platform !== 'linux') return 'Linux only'
  if (process.env.AGENT_OS_QEMU === '1') return 'qemu-user does not emulate a pid namespace\'s pid_max'
  if (process.getuid() !== 0) return 'needs root (a pid namespace with its own pid_max)'
  if (spawnSync('unshare', ['--version']).status !== 0) return 'needs unshare(1)'
  const [major, minor] = os.release().split('.').map(Number)
  if (major < 6 || (major === 6 && minor < 14)) return 'needs Linux 6.14+ (pid_max per pid namespace)'
  if (process.env.AGENT_OS_PROCESS_FORCE) return 'runs every path itself (npm test)'
  if (NO_PROC) return 'runs every path itself (npm test)'
  return undefined
}

function runIn (forced) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, AOS_PROCESS_LIB: lib, AGENT_OS_PROCESS_FORCE: forced }
    const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', 'sh', '-c',
      'echo 400 > /proc/sys/kernel/pid_max && "$0" "$1" "$2"', process.execPath, fixture, String(RUNS)],
    { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, out, err }))
  })
}

describe('process: the sibling-pid reproduction (a reaped child\'s pid taken by a new child)', function () {
  this.timeout(180000)
  before(function () {
    const why = whyNot()
    if (why !== undefined) {
      this.test.parent.title += ` [skipped: ${why}]`
      this.skip()
    }
  })

  for (const forced of ['', 'no-pgroup-fd', 'no-pidfd']) {
    it(`${RUNS} run${RUNS === 1 ? '' : 's'} on the ${forced || 'default'} path: no new child is signalled, the old groups end`, async function () {
      const { code, out, err } = await runIn(forced)
      assert.equal(code, 0, `the reproduction failed:\n${err}`)
      const lines = out.trim().split('\n')
      assert.equal(lines.pop(), 'done')
      const runs = lines.map((l) => JSON.parse(l))
      assert.equal(runs.length, RUNS)
      for (const [i, r] of runs.entries()) {
        // The reproduction is real: five calls on reaped children, three of whose
        // pids were taken by new children (the other two keep theirs: group members).
        assert.equal(r.pending, 5, `run ${i}: ${JSON.stringify(r)}`)
        assert.ok(r.reused >= 1, `run ${i}: no new child got an old pid: ${JSON.stringify(r)}`)
        assert.equal(r.killed, 0, `run ${i}: a new child was signalled: ${JSON.stringify(r)}`)
        assert.equal(r.groupsLeft, 0, `run ${i}: an old group survived: ${JSON.stringify(r)}`)
        assert.ok(r.replace.reused >= 1, `run ${i}: no replacement got an old pid: ${JSON.stringify(r)}`)
        assert.equal(r.replace.killed, 0, `run ${i}: a replacement was signalled: ${JSON.stringify(r)}`)
      }
    })
  }
})
