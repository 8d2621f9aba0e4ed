'use strict'
// scripts/check-publish.js: `npm publish` (prepublishOnly) refuses unless every supported
// target's prebuild is present, a binary of that target, and loads where it can be
// loaded here; `npm pack` (prepack, --warn) says what is missing and goes on.
// A staged package root holds a real linux-x64 prebuild (this checkout's build) and,
// for the other targets, files with the header of a binary of that target.

const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { TARGETS, binaryKind } = require('../../scripts/check-publish.js')

const repo = path.join(__dirname, '..', '..')
const script = path.join(repo, 'scripts', 'check-publish.js')
const FILE = '@scope+agent-os.node'
const native = path.join(repo, 'build', 'Release', 'agent_os.node')

function elf (machine) {
  const b = Buffer.alloc(64)
  b.writeUInt32BE(0x7f454c46, 0)
  b[4] = 2 // ELFCLASS64
  b[5] = 1 // little-endian
  b[6] = 1
  b.writeUInt16LE(3, 16) // ET_DYN
  b.writeUInt16LE(machine, 18)
  return b
}
function macho (cputype) {
  const b = Buffer.alloc(32)
  b.writeUInt32LE(0xfeedfacf, 0)
  b.writeUInt32LE(cputype, 4)
  b.writeUInt32LE(8, 12) // MH_BUNDLE
  return b
}
function pe (machine) {
  const b = Buffer.alloc(256)
  b.write('MZ', 0, 'latin1')
  b.writeUInt32LE(128, 60)
  b.write('PE\0\0', 128, 'latin1')
  b.writeUInt16LE(machine, 132)
  b.writeUInt16LE(0x2022, 150) // executable image, large-address aware, DLL
  return b
}

const HEADERS = {
  'linux-arm64': elf(0xb7),
  'darwin-x64': macho(0x01000007),
  'darwin-arm64': macho(0x0100000c),
  'win32-x64': pe(0x8664)
}

function stage () {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-publish-'))
  for (const target of Object.keys(TARGETS)) {
    fs.mkdirSync(path.join(root, 'prebuilds', target), { recursive: true })
    const file = path.join(root, 'prebuilds', target, FILE)
    if (target === 'linux-x64') fs.copyFileSync(native, file)
    else fs.writeFileSync(file, HEADERS[target])
  }
  return root
}

function run (root, ...args) {
  const r = spawnSync(process.execPath, [script, '--root', root, ...args], {
    env: { ...process.env, AGENT_OS_CHECK_EMULATE: '0' },
    encoding: 'utf8',
    timeout: 120000
  })
  if (r.error) throw r.error
  return { status: r.status, out: r.stdout + r.stderr }
}

describe('package: the publish check', function () {
  this.timeout(120000)
  let root
  before(function () {
    if (process.platform !== 'linux' || process.arch !== 'x64') this.skip() // the staged native prebuild is linux-x64
  })
  beforeEach(function () { root = stage() })
  afterEach(function () { if (root) fs.rmSync(root, { recursive: true, force: true }) })

  it('recognises each target\'s binary format and machine, and this build as linux-x64', function () {
    for (const [target, want] of Object.entries(TARGETS)) {
      const buf = target === 'linux-x64' ? fs.readFileSync(native) : HEADERS[target]
      assert.deepEqual(binaryKind(buf), want, target)
    }
    assert.equal(binaryKind(Buffer.from('#!/bin/sh\necho hi\n')), undefined)
    assert.equal(binaryKind(elf(0x3e).subarray(0, 10)), undefined)
  })

  it('passes when every target is present, loading the native one', function () {
    const r = run(root)
    assert.equal(r.status, 0, r.out)
    assert.match(r.out, /^ok {3}linux-x64 +loads \(fileAuthority, nodeLock, process\)$/m)
    for (const t of ['linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64']) {
      assert.match(r.out, new RegExp(`^ok {3}${t} +well-formed; not loaded: `, 'm'))
    }
  })

  it('refuses to publish without one target\'s prebuild; npm pack (--warn) goes on and names it', function () {
    fs.rmSync(path.join(root, 'prebuilds', 'darwin-arm64'), { recursive: true })
    const strict = run(root)
    assert.equal(strict.status, 1, strict.out)
    assert.match(strict.out, /^FAIL darwin-arm64 +missing/m)
    assert.match(strict.out, /not publishing: no working prebuild for darwin-arm64$/m)
    const warn = run(root, '--warn')
    assert.equal(warn.status, 0, warn.out)
    assert.match(warn.out, /lacks working prebuilds for darwin-arm64;/)
    assert.doesNotMatch(warn.out, /linux-x64|win32-x64/)
  })

  it('says nothing on npm pack when every prebuild is there', function () {
    const warn = run(root, '--warn')
    assert.equal(warn.status, 0)
    assert.equal(warn.out, '')
  })

  it('refuses a prebuild of the wrong architecture', function () {
    fs.copyFileSync(native, path.join(root, 'prebuilds', 'linux-arm64', FILE))
    fs.writeFileSync(path.join(root, 'prebuilds', 'win32-x64', FILE), pe(0xaa64))
    const r = run(root)
    assert.equal(r.status, 1, r.out)
    assert.match(r.out, /^FAIL linux-arm64 +not a linux-arm64 binary \(elf, machine 0x3e\)$/m)
    assert.match(r.out, /^FAIL win32-x64 +not a win32-x64 binary \(pe, machine 0xaa64\)$/m)
  })

  it('refuses a native prebuild that does not load', function () {
    const file = path.join(root, 'prebuilds', 'linux-x64', FILE)
    fs.writeFileSync(file, fs.readFileSync(native).subarray(0, 4096)) // a valid header, then nothing
    const r = run(root)
    assert.equal(r.status, 1, r.out)
    assert.match(r.out, /^FAIL linux-x64 +does not load: /m)
  })
})
