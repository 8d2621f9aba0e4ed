'use strict'
// Formats the results: one table for all rows (implementations side by side, medians,
// ratios against targets), then one small table per scaling series.

function fmtTime (ns) {
  if (!Number.isFinite(ns)) return '-'
  const abs = Math.abs(ns)
  if (abs < 1e3) return `${sig(ns)} ns`
  if (abs < 1e6) return `${sig(ns / 1e3)} µs`
  if (abs < 1e9) return `${sig(ns / 1e6)} ms`
  return `${sig(ns / 1e9)} s`
}

function sig (x) {
  const abs = Math.abs(x)
  if (abs >= 100) return x.toFixed(0)
  if (abs >= 10) return x.toFixed(1)
  return x.toFixed(2)
}

function fmtRate (bytesPerOp, ns) {
  if (!Number.isFinite(ns) || !bytesPerOp) return ''
  const bps = bytesPerOp / (ns / 1e9)
  if (bps >= 1e9) return `${sig(bps / 1e9)} GB/s`
  return `${sig(bps / 1e6)} MB/s`
}

function fmtRatio (r) {
  return Number.isFinite(r) ? `${r < 0.1 ? r.toFixed(3) : r.toFixed(2)}x` : '-'
}

function fmtBytes (n) {
  if (n >= 2 ** 20) return `${n / 2 ** 20} MiB`
  if (n >= 1024) return `${n / 1024} KiB`
  return `${n} B`
}

/** Pads a table (array of rows of strings) into aligned text lines. */
function table (rows, { indent = '', right = [] } = {}) {
  const widths = []
  for (const row of rows) {
    row.forEach((cell, i) => { widths[i] = Math.max(widths[i] || 0, [...String(cell)].length) })
  }
  return rows.map((row) => indent + row.map((cell, i) => {
    const text = String(cell)
    const pad = ' '.repeat(widths[i] - [...text].length)
    return right.includes(i) ? pad + text : text + pad
  }).join('  ').trimEnd())
}

function verdict (c) {
  if (c.met === true) return 'met'
  if (c.met === false) return 'MISSED'
  return c.note || '-'
}

function mainTable (rows) {
  const out = [['row', 'implementation', 'median', 'min..max (rounds) or why not measured', 'pkg/alt', 'per round', 'target', 'verdict']]
  const rule = () => out.push(['', '', '', '', '', '', '', ''])
  for (const row of rows) {
    if (out.length > 1) rule()
    let first = true
    const title = () => {
      const t = first ? row.short : ''
      first = false
      return t
    }
    if (row.status !== 'ok') {
      out.push([title(), row.reason, '', '', '', '', '', ''])
      continue
    }
    for (const impl of row.impls) {
      const comps = row.comparisons.filter((c) => c.alt === impl.id)
      let median = '-'
      let spread = ''
      if (impl.status === 'ok') {
        const rate = fmtRate(row.bytesPerOp, impl.medianNs)
        median = fmtTime(impl.medianNs) + (rate ? ` (${rate})` : '')
        spread = `${fmtTime(impl.minNs)}..${fmtTime(impl.maxNs)} (${impl.rounds.length})`
      } else {
        spread = impl.reason
      }
      if (comps.length === 0) {
        out.push([title(), impl.label, median, spread, '', '', '', ''])
      }
      comps.forEach((c, k) => {
        const pkgLabel = row.impls.find((i) => i.id === c.pkg)
        const several = row.impls.filter((i) => i.role === 'package').length > 1
        const ratio = fmtRatio(c.ratio) + (several && pkgLabel && Number.isFinite(c.ratio) ? ` (${pkgLabel.tag || pkgLabel.id})` : '')
        out.push([k === 0 ? title() : '', k === 0 ? impl.label : '', k === 0 ? median : '', k === 0 ? spread : '', ratio, fmtRatio(c.pairedRatio), c.target, verdict(c)])
      })
    }
  }
  return table(out, { right: [2] })
}

function seriesTable (series) {
  const lines = [`${series.title}`]
  if (series.status !== 'ok' && !series.points.length) {
    lines.push(`  ${series.reason}`)
    return lines
  }
  const head = [series.unitLabel]
  for (const impl of series.impls) head.push(impl.label, `per ${series.perUnit}`)
  head.push(`marginal per ${series.perUnit} (${series.impls[0].short || series.impls[0].label})`)
  const rows = [head]
  let prev
  for (const p of series.points) {
    const row = [p.label]
    for (const impl of series.impls) {
      const v = p.values[impl.id]
      if (v === undefined) {
        row.push(p.reasons?.[impl.id] || '-', '')
      } else {
        row.push(fmtTime(v), fmtTime(v / (p.units / series.unitScale)))
      }
    }
    const v0 = p.values[series.impls[0].id]
    if (prev && v0 !== undefined && prev.v !== undefined) {
      row.push(fmtTime((v0 - prev.v) / ((p.units - prev.units) / series.unitScale)))
    } else {
      row.push('')
    }
    prev = { v: v0, units: p.units }
    rows.push(row)
  }
  lines.push(...table(rows, { indent: '  ' }))
  if (series.reason) lines.push(`  ${series.reason}`)
  for (const n of series.notes || []) lines.push(`  ${n}`)
  return lines
}

module.exports = { mainTable, seriesTable, fmtTime, fmtRatio, fmtBytes, fmtRate, table }
