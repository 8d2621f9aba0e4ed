'use strict'
// `node scripts/check-publish.js [--warn] [--root DIR]`: are the prebuilds of every
// supported target in prebuilds/, each a binary for its platform, and do they load?
//   prepublishOnly (npm publish): refuses (exit 1) unless every target's prebuild is
//     present, well-formed and, where it can be loaded here, loads with its three parts.
//   prepack (npm pack) runs it with --warn: it says what is missing and goes on (exit 0).
// Loading: a prebuild of this host's platform loads natively; linux-arm64 loads under
// qemu-user and win32-x64 under wine when scripts/platforms finds those toolchains and
// their Node binary (docs/platforms.md); elsewhere (macOS, or without the toolchains) a
// prebuild is checked for its format and architecture only, and the line says so.
// AGENT_OS_CHECK_EMULATE=0 skips qemu and wine.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const FILE = '@scope+agent-os.node'
const PARTS = ['fileAuthority', 'nodeLock', 'process']
/** Every target the package supports (the contract's platform list), with the binary
 * format and machine its prebuild must have. */
const TARGETS = {
  'linux-x64': { format: 'elf', machine: 0x3e },
  'linux-arm64': { format: 'elf', machine: 0xb7 },
  'darwin-x64': { format: 'macho', machine: 0x01000007 },
  'darwin-arm64': { format: 'macho', machine: 0x0100000c },
  'win32-x64': { format: 'pe', machine: 0x8664 }
}

/** Reads the format and machine of a shared object from its header; undefined when it
 * is none of ELF 64-bit shared object, Mach-O 64-bit bundle/dylib, PE DLL. */
function binaryKind (buf) {
  if (buf.length >= 20 && buf.readUInt32BE(0) === 0x7f454c46) {
    // ELFCLASS64, little-endian, ET_DYN
    if (buf[4] !== 2 || buf[5] !== 1 || buf.readUInt16LE(16) !== 3) return undefined
    return { format: 'elf', machine: buf.readUInt16LE(18) }
  }
  if (buf.length >= 16 && buf.readUInt32LE(0) === 0xfeedfacf) {
    const filetype = buf.readUInt32LE(12) // MH_BUNDLE 8, MH_DYLIB 6
    if (filetype !== 8 && filetype !== 6) return undefined
    return { format: 'macho', machine: buf.readUInt32LE(4) }
  }
  if (buf.length >= 64 && buf.toString('latin1', 0, 2) === 'MZ') {
    const pe = buf.readUInt32LE(60)
    if (pe + 24 > buf.length || buf.toString('latin1', pe, pe + 4) !== 'PE\0\0') return undefined
    const characteristics = buf.readUInt16LE(pe + 22)
    if (!(characteristics & 0x2000)) return undefined // IMAGE_FILE_DLL
    return { format: 'pe', machine: buf.readUInt16LE(pe + 4) }
  }
  return undefined
}

const PROBE = `
  const b = require(process.argv[1])
  console.log(JSON.stringify({ platform: process.platform, arch: process.arch, parts: Object.keys(b) }))`

/** How to run a Node of `target` here: { cmd, args, env, stopWine? }, or a reason why not. */
function runner (target, emulate) {
  if (target === `${process.platform}-${process.arch}`) return { cmd: process.execPath, args: [], env: {} }
  if (!emulate) return { reason: 'no emulation for npm pack' }
  if (process.env.AGENT_OS_CHECK_EMULATE === '0') return { reason: 'emulation off (AGENT_OS_CHECK_EMULATE=0)' }
  if (process.platform !== 'linux' || process.arch !== 'x64') return { reason: `cannot be loaded on ${process.platform}-${process.arch}` }
  if (target !== 'linux-arm64' && target !== 'win32-x64') return { reason: 'cannot be loaded on Linux' }
  try {
    const emulators = require('./platforms/emulators.js')
    const { nodeBinary } = require('./platforms/lib.js')
    const tool = target === 'linux-arm64' ? 'qemu-aarch64' : 'wine64'
    if (!emulators.which(tool) && !(target === 'win32-x64' && emulators.which('wine'))) {
      return { reason: `${tool} is not installed (npm run test:platforms:setup)` }
    }
    const bin = nodeBinary(target).bin
    const emu = target === 'linux-arm64' ? emulators.arm64(bin) : emulators.win32(bin)
    return { ...emu, stop: target === 'win32-x64' ? emulators.stopWine : undefined }
  } catch (err) {
    return { reason: `no emulator here: ${err.message.split('\n')[0]}` }
  }
}

/** Loads `file` with a Node of `target`; returns undefined when it loads with every part,
 * else what went wrong. Output goes through files: node.exe under wine cannot write to
 * a Unix pipe. */
function load (file, run) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-check-'))
  const out = path.join(dir, 'out')
  const err = path.join(dir, 'err')
  const fds = [fs.openSync(out, 'w'), fs.openSync(err, 'w')]
  let res
  try {
    res = spawnSync(run.cmd, [...run.args, '-e', PROBE, file], {
      env: { ...process.env, ...run.env },
      stdio: ['ignore', fds[0], fds[1]],
      timeout: 300000
    })
  } finally {
    fds.forEach((fd) => fs.closeSync(fd))
    if (run.stop) run.stop()
  }
  const stdout = fs.readFileSync(out, 'utf8')
  const stderr = fs.readFileSync(err, 'utf8')
  fs.rmSync(dir, { recursive: true, force: true })
  if (res.error) return res.error.message
  if (res.status !== 0) return `does not load: ${stderr.trim().split('\n').slice(0, 4).join(' | ') || `exit ${res.status}`}`
  let probe
  try {
    probe = JSON.parse(stdout.trim().split('\n').pop())
  } catch {
    return `the probe printed no result: ${stdout.slice(0, 200)}`
  }
  const missing = PARTS.filter((p) => !probe.parts.includes(p))
  return missing.length ? `loads without ${missing.join(', ')}` : undefined
}

/** Checks every target under `root`; returns [{ target, ok, note }]. */
function check (root, { emulate = true } = {}) {
  return Object.entries(TARGETS).map(([target, want]) => {
    const file = path.join(root, 'prebuilds', target, FILE)
    let buf
    try {
      buf = fs.readFileSync(file)
    } catch (err) {
      return { target, ok: false, note: `missing (prebuilds/${target}/${FILE}: ${err.code})` }
    }
    const kind = binaryKind(buf)
    if (!kind || kind.format !== want.format || kind.machine !== want.machine) {
      const seen = kind ? `${kind.format}, machine 0x${kind.machine.toString(16)}` : 'not a shared object'
      return { target, ok: false, note: `not a ${target} binary (${seen})` }
    }
    const run = runner(target, emulate)
    if (run.reason) return { target, ok: true, note: `well-formed; not loaded: ${run.reason}` }
    const failure = load(file, run)
    return failure ? { target, ok: false, note: failure } : { target, ok: true, note: `loads (${PARTS.join(', ')})` }
  })
}

function main () {
  const args = process.argv.slice(2)
  const warnOnly = args.includes('--warn')
  const at = args.indexOf('--root')
  const root = path.resolve(at === -1 ? path.join(__dirname, '..') : args[at + 1])
  const rows = check(root, { emulate: !warnOnly })
  const bad = rows.filter((r) => !r.ok)
  const log = (line) => process.stderr.write(line + '\n')
  if (warnOnly) {
    // npm pack: only what is wrong, so a complete package packs without noise.
    if (bad.length) {
      log(`@scope/agent-os: this tarball lacks working prebuilds for ${bad.map((r) => r.target).join(', ')}; installs there compile from source`)
      for (const r of bad) log(`  ${r.target.padEnd(13)} ${r.note}`)
      log('  (npm publish refuses this; npm run prebuild:all and the release workflow make them)')
    }
    return
  }
  for (const r of rows) log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.target.padEnd(13)} ${r.note}`)
  if (bad.length) {
    log(`@scope/agent-os: not publishing: no working prebuild for ${bad.map((r) => r.target).join(', ')}`)
    process.exitCode = 1
  }
}

if (require.main === module) main()

module.exports = { TARGETS, binaryKind, check }
