'use strict'
// The syscall check: runs one package call and one iteration of the matching C loop
// under strace and compares the two sequences of system calls, so a ratio against a
// C loop always says whether both sides made the same calls. Needs strace; skipped
// (and said so) without it.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const { writeFile, atRest, freshen } = require('./fixtures.js')

// Calls that belong to the runtime (memory management, threads, the event loop),
// not to the operation.
const NOISE = new Set(['mmap', 'munmap', 'mprotect', 'madvise', 'brk', 'futex', 'epoll_pwait', 'epoll_wait',
  'epoll_ctl', 'clock_gettime', 'clock_nanosleep', 'sched_yield', 'rt_sigprocmask', 'membarrier', 'getrusage'])

function haveStrace () {
  return spawnSync('strace', ['-V'], { encoding: 'utf8' }).status === 0
}

/** Returns { [mark]: [{ name, line }] } from an strace -f output file. */
function sections (file) {
  const out = {}
  let current
  let pid
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^(?:(\d+)\s+)?(.*)$/.exec(raw)
    const who = m[1]
    const line = m[2]
    const mk = /^write\(2, "=====(\w+)\\n"/.exec(line)
    if (mk) {
      if (mk[1] === 'END') current = undefined
      else {
        current = out[mk[1]] = []
        pid = who
      }
      continue
    }
    if (!current || who !== pid) continue
    if (line.startsWith('<...') || line.startsWith('+++') || line.startsWith('---')) continue
    const call = /^(\w+)\(/.exec(line)
    if (!call || NOISE.has(call[1])) continue
    current.push({ name: call[1], line: line.replace(/<unfinished \.\.\.>/, '').slice(0, 200) })
  }
  return out
}

function trace (cmd, args, env, dir, tag) {
  const file = path.join(dir, `${tag}.strace`)
  const r = spawnSync('strace', ['-f', '-qq', '-o', file, cmd, ...args], {
    env: { ...process.env, ...env, AOS_BENCH_MARK: '1' },
    encoding: 'utf8'
  })
  if (r.status !== 0 && !fs.existsSync(file)) throw new Error(`strace ${tag} failed: ${(r.stderr || '').trim().slice(0, 200)}`)
  return sections(file)
}

/** Runs the check; returns { available, reason?, checks: [{ id, label, package, c, same }] }. */
function check (ctx) {
  if (!haveStrace()) return { available: false, reason: 'strace is not installed', checks: [] }
  const dir = fs.mkdtempSync(path.join(ctx.disk.dir, 'strace-'))
  try {
    const read = { root: path.join(dir, 'r'), segments: ['d1', 'd2', 'd3', 'file.bin'] }
    writeFile(path.join(read.root, ...read.segments), 4096)
    const write = { root: path.join(ctx.tmpfs.dir || dir, `w-${path.basename(dir)}`), segments: ['out', 'file.txt'] }
    writeFile(path.join(write.root, ...write.segments), 4096)
    const lock = path.join(dir, 'l.lock')
    fs.writeFileSync(lock, '')
    const range = { root: path.join(dir, 'g'), segments: ['range.bin'], offset: 1000, length: 4096 }
    writeFile(path.join(range.root, ...range.segments), 16384)
    // A file changed within the last second: trace-target.js rewrites it in place just
    // before its reads, and the harness just before the C loop's (freshen()).
    const readFresh = { root: path.join(dir, 'f'), segments: ['d1', 'd2', 'd3', 'file.bin'] }
    const freshFile = path.join(readFresh.root, ...readFresh.segments)
    writeFile(freshFile, 4096)
    const freshContents = [crypto.randomBytes(4096), crypto.randomBytes(4096)]
    const cfg = JSON.stringify({ read, readFresh, write, lock, range })
    atRest() // a file changed in the last second takes the checked path
    const target = path.join(__dirname, 'trace-target.js')
    const pkg = trace(process.execPath, [target, cfg], {}, dir, 'package')
    const portable = trace(process.execPath, [target, JSON.stringify({ read })], { AGENT_OS_FA_RESOLVER: 'portable' }, dir, 'portable')
    const P = ctx.programs
    const rel = read.segments.join('/')
    const pairs = [
      // A reader keeps the descriptor of a file it read (the traced call is not its first
      // read of the file): the "-kept" modes; without them the first-read sequence. The
      // first mode listed is the sequence expected of the package (issue 28: the path
      // sequence, openat2 O_PATH of the whole path); the others are the sequence of
      // rounds three to six, still accepted as a match (and said so) while the
      // package's change has not landed.
      { id: 'read-openat2', label: 'readBytesSync vs C read loop (openat2)', pkg: pkg.read, program: P.read_loop, modes: ['openat2-path-kept', 'openat2-path', 'openat2-kept', 'openat2'], args: (mode) => [mode, read.root, rel, '1'] },
      { id: 'read-fresh', label: 'readBytesSync of a file changed just before vs C read loop', pkg: pkg.readFresh, program: P.read_loop, modes: ['openat2-path-fresh'], before: () => freshen(freshFile, freshContents), args: (mode) => [mode, readFresh.root, readFresh.segments.join('/'), '1'] },
      { id: 'read-walk', label: 'readBytesSync, portable walk vs C read loop (walk)', pkg: portable.read, program: P.read_loop, modes: ['walk-kept', 'walk'], args: (mode) => [mode, read.root, rel, '1'] },
      { id: 'range', label: 'readRangeSync vs C range loop', pkg: pkg.range, program: P.range_loop, modes: ['package', 'first'], args: (mode) => [mode, range.root, range.segments[0], '1', String(range.length)] },
      { id: 'write', label: 'writeTextSync vs C write loop', pkg: pkg.write, program: P.write_loop, modes: ['tmpfile', 'excl'], args: (mode) => [mode, 'openat2', write.root, write.segments.join('/'), '4096', '1'] },
      { id: 'lock', label: 'tryAcquire + release vs C lock loop', pkg: pkg.lock, program: P.lock_loop, args: [lock, '1'] }
    ]
    const checks = []
    for (const p of pairs) {
      if (!p.pkg) {
        checks.push({ id: p.id, label: p.label, status: 'unavailable', reason: 'not available (primitive not built)' })
        continue
      }
      if (!p.program) {
        checks.push({ id: p.id, label: p.label, status: 'unavailable', reason: 'C program not built' })
        continue
      }
      const a = p.pkg.map((s) => s.name)
      // A loop with several modes (the write loop's staging): the mode whose calls
      // match the package's is the one its row is measured against.
      let c
      let mode
      for (const m of p.modes || [undefined]) {
        if (p.before) p.before()
        const got = trace(p.program, m ? p.args(m) : p.args, {}, dir, `c-${p.id}-${m}`).MARK || []
        if (c === undefined || got.map((s) => s.name).join(' ') === a.join(' ')) {
          c = got
          mode = m
        }
      }
      const b = c.map((s) => s.name)
      checks.push({
        id: p.id,
        label: mode ? `${p.label} (${mode})` : p.label,
        mode,
        expected: p.modes ? p.modes[0] : undefined,
        status: 'ok',
        same: a.join(' ') === b.join(' '),
        package: p.pkg.map((s) => s.line),
        c: c.map((s) => s.line),
        packageNames: a,
        cNames: b
      })
    }
    fs.rmSync(write.root, { recursive: true, force: true })
    return { available: true, checks }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

function lines (result) {
  const out = ['syscall check (strace: one package call vs one C loop iteration, runtime memory/thread calls left out)']
  if (!result.available) {
    out.push(`  skipped: ${result.reason}`)
    return out
  }
  for (const c of result.checks) {
    if (c.status !== 'ok') out.push(`  ${c.label}: ${c.reason}`)
    else if (c.same && c.expected !== undefined && c.mode !== c.expected) {
      out.push(`  ${c.label}: same ${c.packageNames.length} calls (${c.packageNames.join(' ')}), the earlier sequence: not yet the expected ${c.expected}`)
    } else if (c.same) out.push(`  ${c.label}: same ${c.packageNames.length} calls (${c.packageNames.join(' ')})`)
    else {
      out.push(`  ${c.label}: DIFFERENT`)
      out.push(`    package (${c.packageNames.length}): ${c.packageNames.join(' ')}`)
      out.push(`    C loop  (${c.cNames.length}): ${c.cNames.join(' ')}`)
    }
  }
  return out
}

module.exports = { check, lines }
