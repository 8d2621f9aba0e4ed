'use strict'
// `npm run prebuild:all [-- --no-verify]`: the prebuilds the package ships, all built
// on this Linux x64 machine:
//   prebuilds/linux-x64/    `npm run prebuild` (prebuildify --napi --strip, node-gyp)
//   prebuilds/linux-arm64/  cross-build.js linux-arm64 (aarch64-linux-gnu-gcc)
//   prebuilds/win32-x64/    cross-build.js win32-x64 (x86_64-w64-mingw32-gcc)
// then, unless --no-verify, loads each with node-gyp-build on its own platform (the
// arm64 one under qemu, the Windows one under wine; PREBUILDS_ONLY=1 so the checkout's
// build/ cannot stand in) and checks that `npm pack --dry-run` lists all three.
// macOS prebuilds come from the release workflow (.github/workflows/release.yml).

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { ROOT, cacheDir, nodeBinary, seconds } = require('./lib.js')
const { crossBuild } = require('./cross-build.js')
const emulators = require('./emulators.js')

const FILE = '@scope+agent-os.node'
const TARGETS = ['linux-x64', 'linux-arm64', 'win32-x64']

function build (target) {
  if (target === 'linux-x64') {
    const res = spawnSync('npm', ['run', 'prebuild'], { cwd: ROOT, stdio: 'inherit' })
    if (res.status !== 0) throw new Error('npm run prebuild failed')
    return
  }
  crossBuild(target)
}

// Loads the shipped prebuild through node-gyp-build on the target and names the parts.
const PROBE = `
  const ngb = require('node-gyp-build')
  const file = ngb.resolve(process.argv[1])
  const b = require(file)
  console.log(JSON.stringify({ file: require('node:path').basename(file), platform: process.platform, arch: process.arch, parts: Object.keys(b) }))`

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
      build(target)
      let note = 'built'
      if (doVerify) {
        verify(target)
        note = 'built, loads on its platform'
      }
      rows.push(`${target.padEnd(12)} prebuilds/${target}/${FILE}  ${note}  [${seconds(Date.now() - started)}]`)
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
  const missing = TARGETS.filter((t) => !inPack.includes(t))
  if (missing.length || failures.length) {
    console.log(`not shippable: ${[...new Set([...failures, ...missing])].join(', ')}`)
    process.exitCode = 1
  }
}

main()
