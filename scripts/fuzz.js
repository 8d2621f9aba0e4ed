'use strict'
// `npm run fuzz`: the libFuzzer targets of fuzz/ (built with clang, ASan + UBSan, into
// build-fuzz/, out of tree) each run for a fixed time, then the JavaScript fuzzer
// (fuzz/js-fuzz.js) for a fixed number of calls.
//
//   AGENT_OS_FUZZ_SECONDS   seconds per libFuzzer target (default 60)
//   AGENT_OS_FUZZ_TARGETS   comma-separated subset of: utf8,segments,resolver (given
//                           alone, the JavaScript fuzzer is skipped)
//   AGENT_OS_FUZZ_CALLS     JavaScript fuzzer calls (default 100000)
//   AGENT_OS_FUZZ_SEED      JavaScript fuzzer seed (default: random, printed)
//   CC                      the clang to use (default clang)
//
// Each target starts from its seed corpus (fuzz/corpus/<target>/) and keeps what it
// learns in build-fuzz/corpus/<target>/. A crash is copied to
// fuzz/regressions/<target>/ (commit it: the default suite replays it) and fails the run.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const out = path.join(root, 'build-fuzz')
const cc = process.env.CC || 'clang'
const seconds = Number(process.env.AGENT_OS_FUZZ_SECONDS) || 60
const calls = Number(process.env.AGENT_OS_FUZZ_CALLS) || 100000
const TARGETS = {
  utf8: ['src/file_authority/segments.c'],
  segments: ['src/file_authority/segments.c'],
  resolver: ['src/file_authority/segments.c', 'src/file_authority/posix_walk.c',
    'src/file_authority/posix_read.c', 'src/file_authority/posix_fdcache.c', 'src/file_authority/posix_beneath.c', 'src/file_authority/posix_settle.c', 'src/file_authority/read.c', 'src/file_authority/version.c', 'src/file_authority/posix_list.c']
}
const chosen = (process.env.AGENT_OS_FUZZ_TARGETS || Object.keys(TARGETS).join(',')).split(',').filter(Boolean)

if (process.platform !== 'linux') {
  console.error('npm run fuzz runs on Linux (clang with the libFuzzer runtime)')
  process.exit(1)
}

let failed = false
const figures = []
fs.mkdirSync(out, { recursive: true })

for (const name of chosen) {
  if (!TARGETS[name]) throw new Error(`unknown fuzz target ${name}`)
  const bin = path.join(out, `${name}_fuzz`)
  const build = spawnSync(cc, ['-g', '-O1', '-std=c11', '-D_GNU_SOURCE', '-Wall', '-Wextra', '-Werror',
    '-fsanitize=fuzzer,address,undefined', '-fno-sanitize-recover=undefined', '-I', path.join(root, 'src'),
    path.join(root, 'fuzz', `${name}_fuzz.c`), ...TARGETS[name].map((f) => path.join(root, f)), '-o', bin],
  { stdio: 'inherit' })
  if (build.status !== 0) {
    console.error(`fuzz: could not build ${name} (clang with libFuzzer: apt-get install clang)`)
    process.exit(1)
  }
  const corpus = path.join(out, 'corpus', name)
  const artifacts = path.join(out, 'artifacts', name) + path.sep
  fs.mkdirSync(corpus, { recursive: true })
  fs.mkdirSync(artifacts, { recursive: true })
  const started = Date.now()
  const run = spawnSync(bin, [`-max_total_time=${seconds}`, '-timeout=10', '-rss_limit_mb=2048', '-print_final_stats=1',
    `-artifact_prefix=${artifacts}`, corpus, path.join(root, 'fuzz', 'corpus', name)],
  { encoding: 'utf8', maxBuffer: 256 << 20 })
  const log = (run.stderr || '') + (run.stdout || '')
  const done = /Done (\d+) runs in (\d+) second/.exec(log)
  const crashes = fs.readdirSync(artifacts).filter((f) => /^(crash|leak|timeout|oom)-/.test(f))
  const execs = done ? Number(done[1]) : Number((/stat::number_of_executed_units:\s*(\d+)/.exec(log) || [])[1] || 0)
  const secs = done ? Number(done[2]) : Math.round((Date.now() - started) / 1000)
  const corpusSize = fs.readdirSync(corpus).length
  console.log(`figure: fuzz-${name} execs=${execs} seconds=${secs} corpus=${corpusSize} crashes=${crashes.length}`)
  figures.push({ name, execs, secs, crashes: crashes.length })
  if (run.status !== 0 || crashes.length > 0) {
    failed = true
    process.stderr.write(log.split('\n').filter((l) => !/^#\d+/.test(l)).slice(-60).join('\n') + '\n')
    const keep = path.join(root, 'fuzz', 'regressions', name)
    fs.mkdirSync(keep, { recursive: true })
    for (const c of crashes) {
      fs.copyFileSync(path.join(artifacts, c), path.join(keep, c))
      console.error(`fuzz: ${name} crash saved as fuzz/regressions/${name}/${c}`)
    }
  }
}

if (!process.env.AGENT_OS_FUZZ_TARGETS || process.env.AGENT_OS_FUZZ_CALLS) {
  const args = [path.join(root, 'fuzz', 'js-fuzz.js'), '--calls', String(calls)]
  if (process.env.AGENT_OS_FUZZ_SEED) args.push('--seed', process.env.AGENT_OS_FUZZ_SEED)
  const js = spawnSync(process.execPath, ['--expose-gc', ...args], { stdio: 'inherit' })
  if (js.status !== 0) {
    failed = true
    console.error(`fuzz: the JavaScript fuzzer failed (status ${js.status}, signal ${js.signal})`)
  }
}
process.exitCode = failed ? 1 : 0
