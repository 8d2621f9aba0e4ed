'use strict'
// Soak: 1 000 000 measured mixed operations (AGENT_OS_STRESS=ci: 150 000) across the three
// primitives in one process started with --expose-gc (fixtures/soak.js): reads, lists,
// writes (also two at once on one name: FILE_CHANGED), opens and closes, authorities
// dropped without close, in-memory authorities with every injected fault, locks taken,
// held, timed out, aborted and refused, killProcessTree on exited, never-spawned and
// real trees, bad options — every error path that can be produced on purpose. After a
// warm-up, and again at the end (after GC), it counts descriptors (/proc/self/fd) and
// measures RSS.
//
// Thresholds: descriptors naming files: exactly as many at the end as after warm-up;
// all descriptors: at most 2 more (pipes of the last spawned tree close on the
// runtime's schedule); RSS: at most 16 MiB more at the end than after the warm-up
// (500 000 operations, which covers the one-time climb of malloc's per-thread arenas),
// and at most 8 MiB more at the end than halfway (a steady leak of 16 bytes per
// operation would exceed that at full size); 2 000 authorities dropped unclosed at the
// end are all reclaimed by the GC (files back to the count before).

const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { size, figure } = require('./helpers.js')

const OPERATIONS = size(1000000, 150000)
// (Plus 500 000 warm-up operations before the first measure.)
const RSS_SLACK = 16 * 1024 * 1024
const RSS_SECOND_HALF_SLACK = 8 * 1024 * 1024

describe('stress: soak across the three primitives', function () {
  this.timeout(0)
  before(function () {
    if (process.platform !== 'linux') this.skip() // /proc/self/fd
  })

  it(`${OPERATIONS} mixed operations: no descriptor or memory growth, dropped authorities reclaimed`, function () {
    const seed = Number(process.env.AGENT_OS_SOAK_SEED) || 20261130
    const r = spawnSync(process.execPath, ['--expose-gc', path.join(__dirname, 'fixtures', 'soak.js'), String(OPERATIONS), String(seed)],
      { encoding: 'utf8', maxBuffer: 1 << 24 })
    assert.equal(r.status, 0, r.stderr)
    const res = JSON.parse(r.stdout.trim().split('\n').pop())
    const mib = (n) => (n / 1048576).toFixed(1)
    const half = res.rssSamples[Math.floor(res.rssSamples.length / 2)]
    figure('soak', {
      operations: res.operations,
      errorPaths: Object.keys(res.counts).length,
      fdsBefore: res.before.fds.all,
      fdsAfter: res.after.fds.all,
      fileFdsBefore: res.before.fds.files,
      fileFdsAfter: res.after.fds.files,
      rssBeforeMiB: mib(res.before.rss),
      rssHalfwayMiB: mib(half),
      rssAfterMiB: mib(res.after.rss),
      droppedReclaimed: `${res.dropped.filesHeld - res.dropped.filesReclaimed}/${res.dropped.filesHeld - res.dropped.filesBefore}`,
      seconds: (res.ms / 1000).toFixed(1)
    })
    assert.equal(res.after.fds.files, res.before.fds.files, 'descriptors naming files leaked')
    assert.ok(res.after.fds.all <= res.before.fds.all + 2, 'descriptors leaked')
    assert.ok(res.after.rss - res.before.rss <= RSS_SLACK, `RSS grew by ${mib(res.after.rss - res.before.rss)} MiB`)
    assert.ok(res.after.rss - half <= RSS_SECOND_HALF_SLACK, `RSS grew by ${mib(res.after.rss - half)} MiB in the second half`)
    assert.equal(res.dropped.filesHeld - res.dropped.filesBefore, 2000, 'the dropped authorities did not hold descriptors')
    assert.equal(res.dropped.filesReclaimed, res.dropped.filesBefore, 'authorities dropped unclosed were not reclaimed')
    // Every error path of the mix was taken.
    for (const k of ['fa.read.OVER_BUDGET', 'fa.write.INVALID_CONTENT', 'fa.open.ROOT_CHANGED', 'fa.AUTHORITY_CLOSED',
      'fa.async.write.FILE_CHANGED', 'mem.fault', 'lock.LOCK_HELD', 'lock.LOCK_TIMEOUT', 'lock.UNSAFE_ENTRY',
      'process.NOT_SPAWNED', 'process.INVALID_OPTION', 'process.killTree']) {
      assert.ok(res.counts[k] > 0, `${k} never happened`)
    }
  })
})
