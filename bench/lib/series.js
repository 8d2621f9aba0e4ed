'use strict'
// A scaling series: the same operation at growing sizes, implementations alternated
// round by round at every point, medians reported with the cost per unit so that
// linear (or not) growth is visible.

const { alternate } = require('./measure.js')
const { Unavailable, NO_BINDING, firstLine } = require('./pkg.js')

/**
 * spec: {
 *   id, title, unitLabel, perUnit, unitScale, rounds, notes?,
 *   impls: [{ id, label, short?, setup: async (point) => run }],
 *   points: [{ units, label, n, ...anything setup needs }]
 * }
 */
async function runSeries (spec, { log }) {
  const series = {
    id: spec.id,
    title: spec.title,
    unitLabel: spec.unitLabel,
    perUnit: spec.perUnit,
    unitScale: spec.unitScale || 1,
    rounds: spec.rounds,
    status: 'ok',
    impls: spec.impls.map(({ id, label, short }) => ({ id, label, short })),
    points: [],
    notes: spec.notes || []
  }
  const dropped = new Map()
  const failed = new Map()
  for (const point of spec.points) {
    log(`  ${spec.id}: ${point.label}`)
    const rec = { units: point.units, label: point.label, n: point.n, values: {}, reasons: {} }
    const runnable = []
    for (const impl of spec.impls) {
      if (dropped.has(impl.id)) {
        rec.reasons[impl.id] = dropped.get(impl.id)
        continue
      }
      if (impl.maxUnits !== undefined && point.units > impl.maxUnits) {
        rec.reasons[impl.id] = impl.beyondMax || 'skipped'
        continue
      }
      try {
        const run = await impl.setup(point)
        runnable.push({ id: impl.id, run: guard(impl.id, run, failed) })
      } catch (err) {
        const reason = reasonOf(err)
        rec.reasons[impl.id] = reason
        dropped.set(impl.id, reason)
      }
    }
    if (runnable.length) {
      const results = await alternate(runnable, { rounds: spec.rounds, warmup: 1 })
      for (const [id, r] of Object.entries(results)) {
        if (failed.has(id)) {
          rec.reasons[id] = failed.get(id)
          dropped.set(id, failed.get(id))
        } else if (Number.isFinite(r.medianNs)) {
          rec.values[id] = r.medianNs
        }
      }
    }
    series.points.push(rec)
  }
  const allDropped = spec.impls.every((i) => dropped.has(i.id))
  if (allDropped) {
    series.status = 'unavailable'
    series.reason = dropped.get(spec.impls[0].id)
  } else {
    const missing = spec.impls.filter((i) => dropped.has(i.id))
    if (missing.length) series.reason = missing.map((i) => `${i.label}: ${dropped.get(i.id)}`).join('; ')
  }
  return series
}

function reasonOf (err) {
  if (err instanceof Unavailable) return err.message
  if (err && err.code === 'UNSUPPORTED_BACKEND') return NO_BINDING
  return `error: ${firstLine(err)}`
}

// A run that throws marks its implementation failed; later rounds and points skip it.
function guard (id, run, failed) {
  return async () => {
    if (failed.has(id)) return NaN
    try {
      return await run()
    } catch (err) {
      failed.set(id, reasonOf(err))
      return NaN
    }
  }
}

module.exports = { runSeries }
