'use strict'
// `npm run prebuild:all [-- --no-verify]`: the prebuilds the package ships, all built
// on this Linux x64 machine by scripts/platforms/cross-build.js:
//   prebuilds/linux-x64/    zig cc -target x86_64-linux-gnu.2.28   (glibc 2.28 and later)
//   prebuilds/linux-arm64/  zig cc -target aarch64-linux-gnu.2.28
//   prebuilds/win32-x64/    x86_64-w64-mingw32-gcc
// each Linux one checked to need no GLIBC_ symbol version above 2.28 and to export only
// Node-API's entry points; each also gets the process-scope helper program
// (prebuilds/linux-*/agent_os_scope_helper, same toolchain and glibc check, nothing
// exported; prebuilds/win32-x64/agent_os_scope_helper.exe, mingw, no mingw DLL needed;
// docs/process-scopes.md), which lib/internal/process-scope.js finds beside the .node;
// then the two macOS targets (darwin-x64, darwin-arm64: zig cc,
// -Werror, -undefined dynamic_lookup) compiled, linked and checked into the platforms
// cache, never shipped (they cannot run here; the release workflow builds and tests
// macOS natively), and the same for Alpine's musl (linux-x64-musl: the source build an
// Alpine user gets; no musl Node runs here). Unless --no-verify, each shipped prebuild is then loaded with
// node-gyp-build on its own platform (arm64 under qemu, Windows under wine;
// PREBUILDS_ONLY=1 so the checkout's build/ cannot stand in), and `npm pack --dry-run`
// must list all three.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { ROOT, cacheDir, nodeBinary, seconds } = require('./lib.js')
const { buildAndCheck, buildHelperAndCheck, helperFile } = require('./cross-build.js')
const emulators = require('./emulators.js')

const FILE = '@scope+agent-os.node'
const TARGETS = ['linux-x64', 'linux-arm64', 'win32-x64']
const CHECK_ONLY = ['darwin-x64', 'darwin-arm64', 'linux-x64-musl']

function describe (report) {
  if (!report) return ''
  if (!report.cpu && !report.highest) return ''
  if (report.highest) return `, highest GLIBC_${report.highest} (${report.symbols} versioned libc symbols), exports ${report.exports.length}`
  return `, macOS ${report.minos}, exports ${report.exports.join(' ')}, ${report.nodeApiImports} Node-API symbols by dynamic lookup`
}

// Loads the shipped prebuild through node-gyp-build on the target and names the parts.
const PROBE = `
  const ngb = require('node-gyp-build')
  const file = ngb.resolve(process.argv[1])
  const b = require(file)
  const helper = process.platform === 'linux' || process.platform === 'win32' ? require(require('node:path').join(process.argv[1], 'lib', 'internal', 'process-scope.js')).findHelper() : null
  console.log(JSON.stringify({ file: require('node:path').basename(file), platform: process.platform, arch: process.arch, parts: Object.keys(b), helper: helper && require('node:path').relative(process.argv[1], helper) }))`

function verify (target) {
  let cmd, args, env
  if (target === 'linux-x64') {
    cmd = process.execPath
    args = []
    env = {}
  } else {
    const emu = target === 'linux-arm64' ? emulators.arm64(nodeBinary(target).bin) : emulators.win32(nodeBinary(target).bin)
    cmd = emu.cmd
    args = emu.args
    env = emu.env
  }
  // Output goes to files: node.exe under wine cannot write to a Unix pipe.
  const dir = cacheDir('results')
  const outFile = path.join(dir, `probe-${target}.out`)
  const errFile = path.join(dir, `probe-${target}.err`)
  const fds = [fs.openSync(outFile, 'w'), fs.openSync(errFile, 'w')]
  let res
  try {
    res = spawnSync(cmd, [...args, '-e', PROBE, ROOT], {
      cwd: ROOT,
      env: { ...process.env, ...env, PREBUILDS_ONLY: '1' },
      stdio: ['ignore', fds[0], fds[1]]
    })
  } finally {
    fds.forEach((fd) => fs.closeSync(fd))
  }
  const stdout = fs.readFileSync(outFile, 'utf8')
  const stderr = fs.readFileSync(errFile, 'utf8')
  if (res.error) throw res.error
  if (res.status !== 0) throw new Error(`loading the ${target} prebuild failed: ${stderr.trim().split('\n').slice(0, 6).join(' | ')}`)
  const out = JSON.parse(stdout.trim().split('\n').pop())
  const want = ['fileAuthority', 'nodeLock', 'process']
  if (out.file !== FILE || `${out.platform}-${out.arch}` !== target || !want.every((p) => out.parts.includes(p))) {
    throw new Error(`the ${target} prebuild loaded as ${JSON.stringify(out)}`)
  }
  // The scope helper is found beside the prebuild, and passes the loader's trust check.
  // (path.relative on the target: backslashes on Windows)
  const helperWant = target.startsWith('win32-') ? `prebuilds\\${target}\\${helperFile(target)}` : `prebuilds/${target}/${helperFile(target)}`
  if (out.helper !== helperWant) {
    throw new Error(`the ${target} scope helper was not found beside the prebuild (found ${out.helper})`)
  }
  return out
}

function packed () {
  const res = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' })
  if (res.status !== 0) throw new Error(`npm pack --dry-run failed: ${res.stderr}`)
  return JSON.parse(res.stdout)[0].files.map((f) => f.path)
}

function main () {
  const doVerify = !process.argv.includes('--no-verify')
  const failures = []
  const rows = []
  for (const target of TARGETS) {
    const started = Date.now()
    try {
      const { report } = buildAndCheck(target)
      let note = `built${describe(report)}`
      const helper = buildHelperAndCheck(target)
      if (target.startsWith('linux-')) note += `; ${helperFile(target)} built, highest GLIBC_${helper.report.highest}, exports none`
      else note += `; ${helperFile(target)} built`
      if (doVerify) {
        verify(target)
        note += ', loads on its platform'
      }
      rows.push(`${target.padEnd(12)} prebuilds/${target}/${FILE}  ${note}  [${seconds(Date.now() - started)}]`)
    } catch (err) {
      failures.push(target)
      rows.push(`${target.padEnd(12)} FAILED: ${err.message}  [${seconds(Date.now() - started)}]`)
    }
  }
  for (const target of CHECK_ONLY) {
    const started = Date.now()
    try {
      const { file, report } = buildAndCheck(target)
      rows.push(`${target.padEnd(12)} ${path.relative(ROOT, file)}  compiled and linked with -Werror${describe(report)}; not shipped  [${seconds(Date.now() - started)}]`)
    } catch (err) {
      failures.push(target)
      rows.push(`${target.padEnd(12)} FAILED: ${err.message}  [${seconds(Date.now() - started)}]`)
    }
  }
  if (doVerify && TARGETS.includes('win32-x64')) emulators.stopWine()
  const files = packed()
  const inPack = TARGETS.filter((t) => files.includes(`prebuilds/${t}/${FILE}`))
  console.log('\n=== prebuild:all')
  for (const r of rows) console.log(r)
  console.log(`npm pack would ship prebuilds for: ${inPack.join(', ') || 'none'}`)
  const helperMissing = TARGETS.filter((t) => !files.includes(`prebuilds/${t}/${helperFile(t)}`))
  if (helperMissing.length) console.log(`npm pack would ship no scope helper program for: ${helperMissing.join(', ')}`)
  const missing = TARGETS.filter((t) => !inPack.includes(t) || helperMissing.includes(t))
  const shippedDarwin = files.filter((f) => f.startsWith('prebuilds/darwin-'))
  if (shippedDarwin.length) {
    console.log(`npm pack would ship macOS builds made here: ${shippedDarwin.join(', ')}`)
    failures.push('darwin')
  }
  if (missing.length || failures.length) {
    console.log(`not shippable: ${[...new Set([...failures, ...missing])].join(', ')}`)
    process.exitCode = 1
  }
}

main()
