'use strict'
// npm run compare:mcp [-- --calls 200 --race-calls 2000 --huge-gib 2 --json FILE --only latency|races|static]
// The same client calls, through the MCP SDK's client over stdio, against upstream's
// @modelcontextprotocol/server-filesystem (2026.8.31, a devDependency) and this server:
//   latency  per tool, the median of `calls` calls (after 10 unmeasured), on a 4 KiB
//            file, a 1 000-entry directory and a 10 000-entry tree; the two servers are
//            called in turn, alternating which goes first, so both see the same load;
//            a last row measures upstream against a second upstream (the noise floor);
//   races    per race of test/harness.js, `race-calls` calls while the swap helper
//            exchanges a name inside the allowed directory with a link to outside:
//            leaks (outside content, names or size in a result) and outside writes;
//   static   the link, sibling, '..', FIFO and huge-file attacks, each on a fresh
//            server: refused, leaked, hung (no answer in 3 s) or loaded into memory.
// Prints Markdown tables (README.md has a recorded run); --json writes the figures.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const h = require('./test/harness.js')

function option (name, fallback) {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : process.argv[at + 1]
}

const CALLS = Number(option('calls', 200))
const RACE_CALLS = Number(option('race-calls', 2000))
const HUGE_GIB = Number(option('huge-gib', 2))
const ONLY = option('only', undefined)
const JSON_OUT = option('json', undefined)

/** The latency fixture in `root`: a 4 KiB file, a 1 000-entry directory, a 10 000-entry tree. */
function plantLatencyTree (root) {
  const line = 'the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\n' // 64 bytes
  const kib4 = line.repeat(64)
  fs.writeFileSync(path.join(root, 'file4k.txt'), kib4)
  fs.writeFileSync(path.join(root, 'other4k.txt'), kib4)
  fs.writeFileSync(path.join(root, 'edit4k.txt'), kib4)
  for (let i = 0; i < 16; i++) fs.writeFileSync(path.join(root, `settled${i}.txt`), kib4)
  fs.writeFileSync(path.join(root, 'write4k.txt'), kib4)
  fs.writeFileSync(path.join(root, 'move-a.txt'), kib4)
  fs.writeFileSync(path.join(root, 'image4k.png'), Buffer.alloc(4096, 7))
  fs.mkdirSync(path.join(root, 'made'))
  const dir = path.join(root, 'dir1000')
  fs.mkdirSync(dir)
  for (let i = 0; i < 1000; i++) fs.writeFileSync(path.join(dir, `entry-${String(i).padStart(4, '0')}.txt`), 'x'.repeat(i))
  // 10 + 100 directories and 9 890 files: 10 000 entries.
  const tree = path.join(root, 'tree10k')
  let files = 0
  for (let a = 0; a < 10; a++) {
    for (let b = 0; b < 10; b++) {
      const d = path.join(tree, `a${a}`, `b${b}`)
      fs.mkdirSync(d, { recursive: true })
      for (let c = 0; c < 99 && files < 9890; c++, files++) fs.writeFileSync(path.join(d, `f${c}.${c % 10 === 0 ? 'md' : 'txt'}`), '')
    }
  }
  return kib4
}

/** The measured calls: [label, tool, args(root, i)]. */
function latencyCalls (kib4) {
  const edited = kib4.replace('fox', 'cat')
  return [
    ['read_text_file (4 KiB)', 'read_text_file', (r) => ({ path: path.join(r, 'file4k.txt') })],
    ['read_text_file head 10', 'read_text_file', (r) => ({ path: path.join(r, 'file4k.txt'), head: 10 })],
    ['read_text_file tail 10', 'read_text_file', (r) => ({ path: path.join(r, 'file4k.txt'), tail: 10 })],
    ['read_file (4 KiB)', 'read_file', (r) => ({ path: path.join(r, 'file4k.txt') })],
    ['read_media_file (4 KiB)', 'read_media_file', (r) => ({ path: path.join(r, 'image4k.png') })],
    ['read_multiple_files (2 × 4 KiB)', 'read_multiple_files', (r) => ({ paths: [path.join(r, 'file4k.txt'), path.join(r, 'other4k.txt')] })],
    ['write_file (4 KiB, replace)', 'write_file', (r, i) => ({ path: path.join(r, 'write4k.txt'), content: i % 2 ? kib4 : edited })],
    // An edit of a file changed a moment before (the previous edit): this server's read
    // with a version waits until the change's timestamp is settled (about one kernel
    // clock tick, docs/file-authority.md), so that no later change can share its version.
    ['edit_file (4 KiB, same file back to back)', 'edit_file', (r, i) => ({ path: path.join(r, 'edit4k.txt'), edits: i % 2 ? [{ oldText: 'cat', newText: 'fox' }] : [{ oldText: 'fox', newText: 'cat' }] })],
    // Sixteen files in turn: each was last changed sixteen calls (over 10 ms) before.
    ['edit_file (4 KiB, unchanged for 10 ms)', 'edit_file', (r, i) => ({ path: path.join(r, `settled${i % 16}.txt`), edits: (i >> 4) % 2 ? [{ oldText: 'cat', newText: 'fox' }] : [{ oldText: 'fox', newText: 'cat' }] })],
    ['edit_file dryRun (4 KiB)', 'edit_file', (r) => ({ path: path.join(r, 'file4k.txt'), edits: [{ oldText: 'fox', newText: 'cat' }], dryRun: true })],
    ['create_directory (new)', 'create_directory', (r, i) => ({ path: path.join(r, 'made', `d${i}`) })],
    ['list_directory (1 000)', 'list_directory', (r) => ({ path: path.join(r, 'dir1000') })],
    ['list_directory_with_sizes (1 000)', 'list_directory_with_sizes', (r) => ({ path: path.join(r, 'dir1000') })],
    ['directory_tree (10 000)', 'directory_tree', (r) => ({ path: path.join(r, 'tree10k') })],
    ['search_files **/*.md (10 000)', 'search_files', (r) => ({ path: path.join(r, 'tree10k'), pattern: '**/*.md' })],
    ['move_file', 'move_file', (r, i) => (i % 2 ? { source: path.join(r, 'move-b.txt'), destination: path.join(r, 'move-a.txt') } : { source: path.join(r, 'move-a.txt'), destination: path.join(r, 'move-b.txt') })],
    ['get_file_info', 'get_file_info', (r) => ({ path: path.join(r, 'file4k.txt') })],
    ['list_allowed_directories', 'list_allowed_directories', () => ({})]
  ]
}

function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

async function latency () {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-compare-')))
  const roots = { upstream: path.join(base, 'upstream'), 'agent-os': path.join(base, 'agent-os') }
  let kib4
  for (const r of Object.values(roots)) { fs.mkdirSync(r); kib4 = plantLatencyTree(r) }
  const servers = {}
  for (const kind of Object.keys(roots)) servers[kind] = await h.startServer(kind, [roots[kind]])
  const rows = []
  try {
    for (const [label, tool, args] of latencyCalls(kib4)) {
      const times = { upstream: [], 'agent-os': [] }
      const counter = { upstream: 0, 'agent-os': 0 }
      const once = async (kind, measured) => {
        const i = counter[kind]++
        const res = await servers[kind].call(tool, args(roots[kind], i))
        if (res.isError) throw new Error(`${kind} ${label}: ${res.text}`)
        if (measured) times[kind].push(res.ms)
      }
      for (let i = 0; i < 10; i++) for (const kind of ['upstream', 'agent-os']) await once(kind, false)
      for (let i = 0; i < CALLS; i++) {
        const order = i % 2 ? ['agent-os', 'upstream'] : ['upstream', 'agent-os']
        for (const kind of order) await once(kind, true)
      }
      const row = { label, upstream: median(times.upstream), agentOs: median(times['agent-os']) }
      rows.push(row)
      console.error(`latency ${label}: upstream ${row.upstream.toFixed(3)} ms, agent-os ${row.agentOs.toFixed(3)} ms`)
    }
    // The noise floor: the same call on upstream and on a second upstream server.
    const control = await h.startServer('upstream', [roots.upstream])
    try {
      // Warmed up as the measured servers are by then.
      for (let i = 0; i < 1000; i++) await control.call('list_allowed_directories')
      const times = [[], []]
      for (let i = 0; i < CALLS + 10; i++) {
        for (const k of i % 2 ? [0, 1] : [1, 0]) {
          const res = await (k === 0 ? servers.upstream : control).call('list_allowed_directories')
          if (i >= 10) times[k].push(res.ms)
        }
      }
      rows.push({ label: 'control: list_allowed_directories, upstream against a second upstream', upstream: median(times[0]), agentOs: median(times[1]), control: true })
    } finally {
      await control.close()
    }
  } finally {
    for (const s of Object.values(servers)) await s.close()
    fs.rmSync(base, { recursive: true, force: true })
  }
  return rows
}

async function races () {
  const binary = h.exchangeHelper()
  if (binary === undefined) throw new Error('the swap helper needs Linux and a C compiler')
  const rows = []
  for (const race of h.RACES) {
    const row = { tool: race.tool, swap: race.swap }
    for (const kind of ['upstream', 'agent-os']) {
      row[kind] = await h.runRace(kind, race, { calls: RACE_CALLS, binary })
    }
    rows.push(row)
    console.error(`race ${race.tool} (${race.swap}): upstream ${JSON.stringify(row.upstream)}, agent-os ${JSON.stringify(row['agent-os'])}`)
  }
  return rows
}

async function staticAttacks () {
  const fx = h.makeFixture('mcp-compare-static-')
  h.addSpecials(fx, { hugeBytes: HUGE_GIB * 1024 ** 3 })
  const rows = []
  try {
    for (const a of h.staticAttacks(fx)) {
      const row = { kind: a.kind, tool: a.tool, args: a.args }
      for (const kind of ['upstream', 'agent-os']) {
        const before = h.outsideState(fx)
        const server = await h.startServer(kind, [fx.root])
        // The server's peak memory, sampled while the call runs (a crash ends the process).
        let peak
        const sample = () => { const k = server.peakKiB(); if (k !== undefined) peak = Math.max(peak || 0, k) }
        const sampler = setInterval(sample, 20)
        let outcome
        try {
          const res = await server.call(a.tool, a.args, { timeoutMs: a.kind === 'huge sparse file' ? 120000 : 3000 })
          const refused = h.refused(res)
          outcome = { leaked: h.leaked(fx, res), refused, hung: false, ms: Math.round(res.ms), text: res.text.slice(0, 160) }
        } catch (err) {
          const hung = /timed out/i.test(String(err.message))
          outcome = { leaked: false, refused: false, hung, failed: !hung, ms: undefined, text: String(err.message).slice(0, 160) }
        }
        clearInterval(sampler)
        sample()
        outcome.peakMiB = peak === undefined ? undefined : Math.round(peak / 1024)
        outcome.exited = /Connection closed/.test(outcome.text)
        await server.close()
        outcome.outsideWrite = h.outsideState(fx) !== before
        // Undo what upstream planted, so the next attack starts from the same state.
        for (const p of [path.join(fx.out, 'planted.txt'), path.join(fx.out, 'planted-dir'), ...fx.siblings.map((s) => path.join(s, 'planted.txt'))]) fs.rmSync(p, { recursive: true, force: true })
        row[kind] = outcome
      }
      rows.push(row)
      console.error(`static ${a.kind} ${a.tool}: upstream ${JSON.stringify(row.upstream)} | agent-os ${JSON.stringify(row['agent-os'])}`)
    }
  } finally {
    h.removeFixture(fx)
  }
  return rows
}

function fmt (ms) {
  return ms < 10 ? ms.toFixed(3) : ms.toFixed(1)
}

function outcomeText (o) {
  if (o.hung) return 'hung (no answer in 3 s)'
  const parts = []
  if (o.failed) parts.push(o.exited ? '**server crashed**' : `no answer (${o.text.replace(/\|/g, '/').slice(0, 60)})`)
  if (o.leaked) parts.push('**leaked**')
  if (o.outsideWrite) parts.push('**wrote outside**')
  if (!o.leaked && !o.outsideWrite && !o.failed) parts.push(o.refused ? 'refused' : 'answered from inside')
  if (o.ms !== undefined && o.ms >= 1000) parts.push(`after ${(o.ms / 1000).toFixed(1)} s`)
  if (o.peakMiB !== undefined && o.peakMiB > 512) parts.push(`peak ${o.peakMiB} MiB`)
  return parts.join(', ')
}

async function main () {
  const result = { node: process.version, cpus: os.cpus().length, calls: CALLS, raceCalls: RACE_CALLS, hugeGiB: HUGE_GIB }
  if (!ONLY || ONLY === 'latency') result.latency = await latency()
  if (!ONLY || ONLY === 'races') result.races = await races()
  if (!ONLY || ONLY === 'static') result.static = await staticAttacks()
  if (JSON_OUT) fs.writeFileSync(JSON_OUT, JSON.stringify(result, null, 2) + '\n')

  const out = []
  if (result.latency) {
    out.push(`Latency: median of ${CALLS} calls over stdio (Node ${process.version}, ${os.cpus().length} CPUs)`, '',
      '| call | upstream ms | agent-os ms | agent-os / upstream |', '| --- | ---: | ---: | ---: |')
    for (const r of result.latency) {
      if (r.control) out.push(`| *${r.label}* | ${fmt(r.upstream)} | *${fmt(r.agentOs)}* | *${(r.agentOs / r.upstream).toFixed(2)}* |`)
      else out.push(`| ${r.label} | ${fmt(r.upstream)} | ${fmt(r.agentOs)} | ${(r.agentOs / r.upstream).toFixed(2)} |`)
    }
    out.push('')
  }
  if (result.races) {
    out.push(`Swap races: ${RACE_CALLS} calls each while exchange swaps a name inside the allowed directory with a link to outside`, '',
      '| tool | swapped | upstream leaks | upstream outside writes | agent-os leaks | agent-os outside writes | agent-os refusals |', '| --- | --- | ---: | ---: | ---: | ---: | ---: |')
    for (const r of result.races) {
      const u = r.upstream
      const a = r['agent-os']
      out.push(`| ${r.tool} | ${r.swap === 'dir' ? 'directory' : 'final file'} | ${u.leaks} | ${u.outsideWrites} | ${a.leaks} | ${a.outsideWrites} | ${a.errors} |`)
    }
    out.push('')
  }
  if (result.static) {
    out.push('Attacks without a race (each call on a fresh server)', '', '| attack | tool | upstream | agent-os |', '| --- | --- | --- | --- |')
    for (const r of result.static) out.push(`| ${r.kind} | ${r.tool} | ${outcomeText(r.upstream)} | ${outcomeText(r['agent-os'])} |`)
    out.push('')
  }
  console.log(out.join('\n'))
}

main().catch((err) => { console.error(err); process.exit(1) })
