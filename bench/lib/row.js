'use strict'
// One row of the main table: its implementations are set up (a package part that has
// not landed yet becomes "not available"), measured in alternated rounds, and
// compared pairwise (package time / alternative time) against the row's targets.

const { alternate, median } = require('./measure.js')
const { Unavailable, NO_BINDING, firstLine } = require('./pkg.js')

/**
 * spec: {
 *   id, short, title, where, n, rounds, bytesPerOp?, notes?,
 *   impls: [{ id, label, role: 'package'|'alternative'|'reference', tag?, setup: async () => run }],
 *     where run() returns ns per operation (or a Promise of it),
 *   comparisons: [{ pkg, alt, limit, target, applicable?: boolean, note? }],
 *   teardown?: async () => void
 * }
 */
async function runRow (spec, { log }) {
  const row = {
    id: spec.id,
    short: spec.short,
    title: spec.title,
    where: spec.where,
    n: spec.n,
    rounds: spec.rounds,
    bytesPerOp: spec.bytesPerOp,
    status: 'ok',
    impls: [],
    comparisons: [],
    notes: spec.notes || []
  }
  log(`  ${spec.short}: setting up`)
  const runnable = []
  try {
    for (const impl of spec.impls) {
      const rec = { id: impl.id, label: impl.label, role: impl.role, tag: impl.tag, status: 'ok' }
      row.impls.push(rec)
      try {
        const run = await impl.setup()
        runnable.push({ id: impl.id, run: guard(rec, run) })
      } catch (err) {
        rec.status = err instanceof Unavailable ? 'unavailable' : 'error'
        rec.reason = err instanceof Unavailable ? err.message : `error: ${firstLine(err)}`
      }
    }
    if (runnable.length) {
      log(`  ${spec.short}: ${runnable.length} implementations, ${spec.rounds} rounds of ${spec.n}`)
      const results = await alternate(runnable, { rounds: spec.rounds, warmup: spec.warmup ?? 1 })
      for (const rec of row.impls) {
        if (results[rec.id] && rec.status === 'ok') Object.assign(rec, results[rec.id])
      }
    }
  } finally {
    if (spec.teardown) {
      try {
        await spec.teardown()
      } catch (err) {
        row.notes.push(`teardown failed: ${firstLine(err)}`)
      }
    }
  }
  for (const c of spec.comparisons) {
    const pkg = row.impls.find((i) => i.id === c.pkg)
    const alt = row.impls.find((i) => i.id === c.alt)
    const comp = { pkg: c.pkg, alt: c.alt, target: c.target, limit: c.limit, ratio: NaN, met: null }
    if (pkg && alt && pkg.status === 'ok' && alt.status === 'ok') {
      comp.ratio = pkg.medianNs / alt.medianNs
      // Also the median of per-round ratios (each round's package time over the same
      // round's alternative time), which cancels load that drifts between rounds.
      const k = Math.min(pkg.rounds.length, alt.rounds.length)
      comp.pairedRatio = median(Array.from({ length: k }, (_, i) => pkg.rounds[i] / alt.rounds[i]))
      if (c.applicable === false) comp.note = c.note || 'target n/a'
      else if (c.limit !== undefined) comp.met = comp.ratio <= c.limit
    } else {
      comp.note = pkg && pkg.status !== 'ok' ? 'n/a (package)' : 'n/a'
    }
    row.comparisons.push(comp)
  }
  if (row.impls.length && row.impls.every((i) => i.status !== 'ok')) {
    row.status = 'unavailable'
    row.reason = row.impls[0].reason
  }
  return row
}

// A run that throws marks its implementation failed; later rounds skip it.
function guard (rec, run) {
  return async () => {
    if (rec.status !== 'ok') return NaN
    try {
      return await run()
    } catch (err) {
      if (err && err.code === 'UNSUPPORTED_BACKEND') {
        rec.status = 'unavailable'
        rec.reason = NO_BINDING
      } else {
        rec.status = 'error'
        rec.reason = `error: ${firstLine(err)}`
      }
      return NaN
    }
  }
}

module.exports = { runRow }
