'use strict'
// Process scopes: many scopes per Linux backend (cgroup v2, subreaper, forced in
// turn), each a shell that leaves a background job, a double-forked setsid daemon and
// a SIGTERM-ignorer behind and exits, all killed concurrently with mixed signals and
// grace periods. Survivors are found by a mark in the environment of every process
// (test/process-scope/helpers.js), not from the scopes' own lists. Figures: scopes,
// processes seen before the kill, survivors (must be 0), leftover cgroups and helpers.
//
// On Windows the `job` backend, the same scenario in Windows terms (run under wine by
// `node scripts/platforms/test.js win32-x64 -- test/stress/process-scope.stress.js`):
// each scope's command is cmd.exe leaving a background job (`start /b`), a detached
// process (DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP: no console, so no console
// event reaches it) whose parent exited, and in every tenth scope a Node process that
// catches and ignores every console event Node exposes; then cmd exits. Survivors are
// found by image name in the system's process list (wmic / tasklist), not from the
// scopes' lists (see helpers.newImageMarks).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const h = require('../process-scope/helpers.js')
const { size, figure } = require('./helpers.js')

const SCOPES = size(200, 40)
const SCRIPT = 'sleep 1000 & (setsid sh -c "sleep 1000 & exit 0" &); ' +
  '(trap "" TERM; while :; do sleep 0.1; done) & exit 0'

for (const backend of ['cgroup', 'subreaper']) {
  describe(`stress: ${SCOPES} process scopes, ${backend} backend`, function () {
    this.timeout(0)
    let mod
    before(function () {
      if (process.platform !== 'linux') this.skip()
      mod = h.loadWithBackend(backend)
      if (mod.findHelper() === null) this.skip()
      if (backend === 'cgroup') {
        const base = mod.findCgroup()
        try {
          fs.accessSync(base.dir, fs.constants.W_OK)
        } catch {
          this.skip()
        }
      }
    })

    it(`${SCOPES} scopes, each with a background job, a setsid daemon and a TERM-ignorer: zero survivors`, async function () {
      const mark = h.newMark()
      const scopes = []
      const t0 = performance.now()
      for (let i = 0; i < SCOPES; i++) {
        const scope = await mod.openProcessScope()
        assert.equal(scope.backend, backend)
        scope.spawn('sh', ['-c', SCRIPT], { stdio: 'ignore', env: h.env(mark) })
        scopes.push(scope)
      }
      // Every scope's three processes started (the shells exited).
      await h.waitFor(() => h.marked(mark).length >= SCOPES * 3, 60000)
      const seen = h.marked(mark).length
      const spawnMs = performance.now() - t0
      const t1 = performance.now()
      const signals = ['SIGTERM', 'SIGHUP', 'SIGKILL', 'SIGINT']
      await Promise.all(scopes.map((s, i) => s.kill({ signal: signals[i % signals.length], graceMs: [0, 50, 200][i % 3] })))
      const killMs = performance.now() - t1
      const survivors = h.marked(mark, true)
      await Promise.all(scopes.map((s) => s.close()))
      const cgBase = mod.findCgroup() === null ? undefined : mod.findCgroup().dir
      const cgLeft = h.leftoverCgroups(cgBase).length
      const helpersLeft = await h.waitFor(() => h.helpers().filter((pid) => h.ppidOf(pid) === process.pid).length === 0, 5000)
      figure(`process-scope-${backend}`, {
        scopes: SCOPES,
        seen,
        survivors: survivors.length,
        cgroupsLeft: cgLeft,
        openSpawnMs: spawnMs.toFixed(0),
        killMs: killMs.toFixed(0)
      })
      assert.equal(seen >= SCOPES * 3, true, `only ${seen} processes started`)
      assert.deepEqual(survivors, [])
      assert.equal(cgLeft, 0)
      assert.ok(helpersLeft, 'a helper process outlived close()')
    })
  })
}

describe(`stress: ${SCOPES} process scopes, job backend (Windows)`, function () {
  this.timeout(0)
  // A Node process under wine takes 1-3 s of CPU to start and about 87 MB of private
  // memory while it runs: at most this many scopes are starting (their cmd and its
  // short-lived Node) at once; the processes they leave behind are ping.exe copies.
  const STARTING = 6
  const IGNORER_EVERY = 10
  let mod
  let marks

  before(function () {
    if (process.platform !== 'win32') this.skip()
    mod = h.loadWithBackend('job')
    if (mod.findHelper() === null) this.skip()
    marks = h.newImageMarks()
    // Starts the detached process and exits at once (its parent is gone before the kill).
    fs.writeFileSync(path.join(marks.dir, 'detach.js'), `
      const cp = require('node:child_process')
      cp.spawn(process.argv[2], ['-n', '100000', '127.0.0.1'], { detached: true, stdio: 'ignore' }).unref()
    `)
    fs.writeFileSync(path.join(marks.dir, 'ignore.js'), `
      for (const sig of ['SIGINT', 'SIGBREAK', 'SIGTERM', 'SIGHUP']) process.on(sig, () => {})
      setInterval(() => {}, 1000)
    `)
  })

  after(function () {
    if (marks === undefined) return
    // Whatever a failed run left (nothing, when it passes), then the marked copies.
    for (const p of h.imageMarked(marks.tag)) try { process.kill(p.pid) } catch {}
    fs.rmSync(marks.dir, { recursive: true, force: true })
  })

  it(`${SCOPES} scopes, each with a background job, a detached process whose parent exited and (one in ${IGNORER_EVERY}) a console-event ignorer: zero survivors`, async function () {
    const q = (p) => `"${p}"`
    const detach = path.join(marks.dir, 'detach.js')
    const ignore = path.join(marks.dir, 'ignore.js')
    const lineFor = (i) => [
      `start /b "" ${q(marks.ping)} -n 100000 127.0.0.1`,
      ...(i % IGNORER_EVERY === 0 ? [`start /b "" ${q(marks.node)} ${q(ignore)}`] : []),
      `${q(marks.node)} ${q(detach)} ${q(marks.ping)}`,
      'exit 0'
    ].join(' & ')
    const expected = SCOPES * 2 + Math.ceil(SCOPES / IGNORER_EVERY)
    const scopes = []
    const exits = []
    const t0 = performance.now()
    let next = 0
    const starter = async () => {
      while (next < SCOPES) {
        const i = next++
        const scope = await mod.openProcessScope()
        assert.equal(scope.backend, 'job')
        scopes.push(scope)
        const child = scope.spawn(lineFor(i), [], { shell: true, stdio: 'ignore' })
        exits.push(await h.exited(child)) // cmd exited: what it left runs on in the scope
      }
    }
    await Promise.all(Array.from({ length: STARTING }, starter))
    assert.deepEqual(exits.filter(([code, sig]) => code !== 0 || sig !== null), [], 'a scope\'s cmd did not exit with 0')
    // Every process left behind is running (the system's list, by image name).
    await h.waitFor(() => h.imageMarked(marks.tag).length >= expected, 120000)
    const before = h.imageMarked(marks.tag)
    const seen = before.length
    const byName = {}
    for (const p of before) byName[p.name] = (byName[p.name] || 0) + 1
    const listed = scopes.map((s) => s.pids().length) // for the failure message only
    const spawnMs = performance.now() - t0
    const t1 = performance.now()
    const signals = ['SIGTERM', 'SIGHUP', 'SIGKILL', 'SIGINT']
    await Promise.all(scopes.map((s, i) => s.kill({ signal: signals[i % signals.length], graceMs: [0, 50, 200][i % 3] })))
    const killMs = performance.now() - t1
    const survivors = h.imageMarked(marks.tag)
    await Promise.all(scopes.map((s) => s.close()))
    // No scope helper of this run is left (this process is wine's only user of them).
    const helpersLeft = h.systemProcesses().filter((p) => /^agent_os_scope_helper/i.test(p.name)).length
    figure('process-scope-job', {
      scopes: SCOPES,
      expected,
      seen,
      survivors: survivors.length,
      helpersLeft,
      openSpawnMs: spawnMs.toFixed(0),
      killMs: killMs.toFixed(0)
    })
    assert.equal(seen, expected, `${seen} marked processes running before the kill, ${expected} expected: ${JSON.stringify(byName)}; the scopes list ${listed.join(',')}`)
    assert.deepEqual(survivors, [])
    assert.equal(helpersLeft, 0)
  })
})
