'use strict'
// Process scopes: many scopes per Linux backend (cgroup v2, subreaper, forced in
// turn), each a shell that leaves a background job, a double-forked setsid daemon and
// a SIGTERM-ignorer behind and exits, all killed concurrently with mixed signals and
// grace periods. Survivors are found by a mark in the environment of every process
// (test/process-scope/helpers.js), not from the scopes' own lists. Figures: scopes,
// processes seen before the kill, survivors (must be 0), leftover cgroups and helpers.

const assert = require('node:assert/strict')
const fs = require('node:fs')
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
