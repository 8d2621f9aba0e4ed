'use strict'
// Alternated rounds: every implementation of a row runs once per round, the order
// rotating from round to round so no implementation always goes first; each run
// reports nanoseconds per operation, and a row reports the median over rounds.

function median (values) {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (v.length === 0) return NaN
  const mid = v.length >> 1
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2
}

/** Times `n` calls of a synchronous function; returns ns per call. */
function timeSync (n, fn) {
  let sink = 0
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) sink += touch(fn())
  const t1 = process.hrtime.bigint()
  keep(sink)
  return Number(t1 - t0) / n
}

/** Times `n` sequential awaited calls of an async function; returns ns per call. */
async function timeAsync (n, fn) {
  let sink = 0
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) sink += touch(await fn())
  const t1 = process.hrtime.bigint()
  keep(sink)
  return Number(t1 - t0) / n
}

// Results are consumed so no work can be optimised away.
function touch (value) {
  if (value === undefined || value === null) return 0
  if (typeof value.length === 'number') return value.length
  return 1
}
let kept = 0
function keep (value) { kept = (kept + value) | 0 }

/**
 * impls: [{ id, run: () => number | Promise<number> }] (each run returns ns/op).
 * Returns { [id]: { medianNs, minNs, maxNs, rounds: number[] } }.
 */
async function alternate (impls, { rounds, warmup = 1 }) {
  const samples = new Map(impls.map((i) => [i.id, []]))
  for (let w = 0; w < warmup; w++) {
    for (const impl of impls) await impl.run()
  }
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < impls.length; k++) {
      const impl = impls[(k + r) % impls.length]
      samples.get(impl.id).push(await impl.run())
    }
  }
  const out = {}
  for (const [id, all] of samples) {
    const values = all.filter(Number.isFinite)
    out[id] = {
      medianNs: median(values),
      minNs: values.length ? Math.min(...values) : NaN,
      maxNs: values.length ? Math.max(...values) : NaN,
      rounds: values.map((v) => Math.round(v * 10) / 10)
    }
  }
  return out
}

module.exports = { alternate, timeSync, timeAsync, median }
