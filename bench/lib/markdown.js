'use strict'
// The results of one run as Markdown, for docs/performance.md (see update-docs.js).

const { fmtTime, fmtRatio, fmtRate } = require('./report.js')

function mdTable (head, rows) {
  const esc = (c) => String(c).replace(/\|/g, '\\|')
  return [
    `| ${head.map(esc).join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)
  ]
}

function verdict (c) {
  if (c.met === true) return 'met'
  if (c.met === false) return '**missed**'
  return c.note || '-'
}

function render (result) {
  const m = result.machine
  const out = []
  out.push(`Run of ${result.date} (${result.mode} mode, ${result.seconds} s).`)
  out.push('')
  out.push(`- Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}, kernel ${m.kernel}, ${m.platform}`)
  out.push(`- Node ${m.node}; C loops built with ${m.compiler} at -O2`)
  out.push(`- Filesystems: disk rows on ${m.filesystems.disk}; tmpfs rows on ${m.filesystems.tmpfs}; openat2 ${m.openat2 ? 'available' : 'missing'}`)
  out.push(`- Load average (1, 5, 15 min): ${m.loadAverageAtStart.join(', ')} at start; ${m.loadAverageAtEnd.join(', ')} at end`)
  if (m.pinnedCpu !== undefined) out.push(m.pinnedCpu === null ? '- Not pinned to a CPU' : `- Pinned to CPU ${m.pinnedCpu} (taskset), with every process the run starts`)
  out.push('')
  const rows = []
  for (const row of result.rows) {
    if (row.status !== 'ok') {
      rows.push([row.short, row.reason, '', '', '', '', ''])
      continue
    }
    let first = true
    for (const impl of row.impls) {
      const title = first ? `${row.short}` : ''
      first = false
      const rate = impl.status === 'ok' ? fmtRate(row.bytesPerOp, impl.medianNs) : ''
      const median = impl.status === 'ok' ? fmtTime(impl.medianNs) + (rate ? ` (${rate})` : '') : impl.reason
      const comps = row.comparisons.filter((c) => c.alt === impl.id)
      if (!comps.length) rows.push([title, impl.label, median, '', '', '', ''])
      comps.forEach((c, k) => {
        rows.push([k ? '' : title, k ? '' : impl.label, k ? '' : median, fmtRatio(c.ratio), fmtRatio(c.pairedRatio), c.target, verdict(c)])
      })
    }
  }
  out.push(...mdTable(['row', 'implementation', 'median', 'package / this', 'per round', 'target', 'verdict'], rows))
  if (result.syscallCheck) {
    out.push('')
    out.push('Syscall check (one package call and one C iteration under strace):')
    out.push('')
    const s = result.syscallCheck
    if (!s.available) out.push(`- skipped: ${s.reason}`)
    for (const c of s.checks || []) {
      if (c.status !== 'ok') out.push(`- ${c.label}: ${c.reason}`)
      else if (c.same && c.expected !== undefined && c.mode !== c.expected) out.push(`- ${c.label}: same ${c.packageNames.length} calls (\`${c.packageNames.join(' ')}\`), the earlier sequence: not yet the expected ${c.expected}`)
      else if (c.same) out.push(`- ${c.label}: same ${c.packageNames.length} calls (\`${c.packageNames.join(' ')}\`)`)
      else out.push(`- ${c.label}: **different**: package \`${c.packageNames.join(' ')}\`; C \`${c.cNames.join(' ')}\``)
    }
  }
  if (result.survivors) {
    const s = result.survivors
    out.push('')
    out.push(`Survivors (${s.treeSize}-process trees; killProcessTree with graceMs ${s.graceMs}; counted when the call resolved and ${s.settleMs} ms later):`)
    out.push('')
    const rows = []
    for (const c of s.cases) {
      c.results.forEach((r, k) => {
        rows.push(r.status === 'ok'
          ? [k ? '' : c.label, r.label, fmtTime(r.ns), r.aliveAtResolve, r.aliveAfterSettle]
          : [k ? '' : c.label, r.label, r.reason, '', ''])
      })
    }
    out.push(...mdTable(['tree', 'implementation', 'resolved after', 'alive at resolve', `alive after ${s.settleMs} ms`], rows))
  }
  for (const s of result.series || []) {
    out.push('')
    out.push(`${s.title}:`)
    out.push('')
    const head = [s.unitLabel]
    for (const impl of s.impls) head.push(impl.label, `per ${s.perUnit}`)
    const rows = s.points.map((p) => {
      const r = [p.label]
      for (const impl of s.impls) {
        const v = p.values[impl.id]
        if (v === undefined) r.push(p.reasons?.[impl.id] || '-', '')
        else r.push(fmtTime(v), fmtTime(v / (p.units / s.unitScale)))
      }
      return r
    })
    out.push(...mdTable(head, rows))
    if (s.reason) out.push('', s.reason)
  }
  return out.join('\n')
}

module.exports = { render }
