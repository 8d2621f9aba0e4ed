'use strict'
// Reads what a built binding asks of the system that loads it, and checks it:
//   Linux (ELF)    the dynamic symbol table through binutils' `readelf --dyn-syms -W`:
//                  the highest GLIBC_ symbol version a binary needs (the prebuilds must
//                  load on glibc 2.28), and the symbols it exports (only Node-API's
//                  module entry points).
//   macOS (Mach-O) read here, no tool needed: the target CPU, the minimum macOS of
//                  LC_BUILD_VERSION, the symbols each object file makes visible outside
//                  the binary (what Apple's linker exports), and which undefined symbols
//                  are left to `-undefined dynamic_lookup` (only Node-API's may be: a
//                  libc function missing on macOS would otherwise fail only at load).

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')

const GLIBC_MAX = '2.28'
// The symbols a Node-API module exports: its registration function and the Node-API
// version it was built for (node_api.h's NAPI_MODULE_INIT / NAPI_MODULE).
const MODULE_EXPORTS = ['napi_register_module_v1', 'node_api_module_get_api_version_v1']

function compareVersions (a, b) {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] || 0) - (pb[i] || 0)
    if (d !== 0) return d
  }
  return 0
}

/** ELF: { machine, needs: [{ name, version }], exports: [name] } from readelf. */
function elfSymbols (file) {
  const res = spawnSync('readelf', ['--dyn-syms', '--file-header', '--program-headers', '-W', file], { encoding: 'utf8', maxBuffer: 64 << 20 })
  if (res.error) throw new Error(`readelf (binutils) is needed to read ELF files: ${res.error.message}`)
  if (res.status !== 0) throw new Error(`readelf failed on ${file}: ${res.stderr.trim()}`)
  const machine = (/^\s*Machine:\s*(.+)$/m.exec(res.stdout) || [])[1]
  const tls = /^\s*TLS\s/m.test(res.stdout)
  const needs = []
  const exports = []
  for (const line of res.stdout.split('\n')) {
    // "   12: 0000000000000000     0 FUNC    GLOBAL DEFAULT  UND fstat64@GLIBC_2.33 (4)"
    const m = /^\s*\d+:\s+[0-9a-f]+\s+\d+\s+(\w+)\s+(\w+)\s+(\w+)\s+(\w+)\s+(\S+)/.exec(line)
    if (!m) continue
    const [, , bind, , ndx, sym] = m
    const [name, version] = sym.split(/@@?/)
    if (ndx === 'UND') {
      if (version) needs.push({ name, version })
    } else if (bind === 'GLOBAL' || bind === 'WEAK') {
      exports.push(name)
    }
  }
  return { machine, tls, needs, exports }
}

/** The problems of a Linux prebuild: any GLIBC_ version above `max`, any other export. */
// `exports`: what the binary may export (default: a Node-API module's entry points;
// [] for an executable such as the scope helper program).
function checkLinux (file, { max = GLIBC_MAX, exports: allowed = MODULE_EXPORTS } = {}) {
  const { machine, tls, needs, exports } = elfSymbols(file)
  const glibc = needs.filter((n) => n.version.startsWith('GLIBC_') && /^GLIBC_\d/.test(n.version))
  const versions = [...new Set(glibc.map((n) => n.version.slice(6)))].sort(compareVersions)
  const problems = []
  for (const n of glibc) {
    if (compareVersions(n.version.slice(6), max) > 0) problems.push(`needs ${n.name}@${n.version} (above GLIBC_${max})`)
  }
  for (const n of needs) {
    if (!n.version.startsWith('GLIBC_')) problems.push(`needs ${n.name}@${n.version}`)
    else if (n.version === 'GLIBC_PRIVATE') problems.push(`needs glibc's private ${n.name}`)
  }
  // The binding has no thread-local variable; a TLS segment is a private copy of errno
  // (scripts/platforms/glibc-stat.c), which the C library would never set.
  if (tls) problems.push('has a thread-local storage segment (a private errno the C library never sets)')
  const extra = exports.filter((e) => !allowed.includes(e))
  if (extra.length) problems.push(allowed.length ? `exports more than Node-API's entry points: ${extra.join(', ')}` : `exports ${extra.join(', ')}`)
  if (allowed.includes('napi_register_module_v1') && !exports.includes('napi_register_module_v1')) problems.push('does not export napi_register_module_v1')
  return { machine, highest: versions[versions.length - 1], versions, symbols: glibc.length, exports, problems }
}

// Mach-O constants (<mach-o/loader.h>, <mach-o/nlist.h>).
const MH_MAGIC_64 = 0xfeedfacf
const CPU = { 0x01000007: 'x86_64', 0x0100000c: 'arm64' }
const FILETYPE = { 1: 'object', 6: 'dylib', 8: 'bundle' }
const LC_SYMTAB = 0x2
const LC_BUILD_VERSION = 0x32
const N_STAB = 0xe0
const N_PEXT = 0x10
const N_TYPE = 0x0e
const N_EXT = 0x01
const N_UNDF = 0x0
const N_SECT = 0xe
const DYNAMIC_LOOKUP_ORDINAL = 0xfe

/** Mach-O (64-bit, little-endian): { cpu, filetype, minos, exported, undefined }. */
function machO (file) {
  const b = fs.readFileSync(file)
  if (b.length < 32 || b.readUInt32LE(0) !== MH_MAGIC_64) throw new Error(`${file} is not a 64-bit Mach-O file`)
  const cpu = CPU[b.readUInt32LE(4)] || `cputype 0x${b.readUInt32LE(4).toString(16)}`
  const filetype = FILETYPE[b.readUInt32LE(12)] || `filetype ${b.readUInt32LE(12)}`
  const ncmds = b.readUInt32LE(16)
  let off = 32
  let minos
  const exported = []
  const undefinedSyms = []
  for (let i = 0; i < ncmds; i++) {
    const cmd = b.readUInt32LE(off)
    const size = b.readUInt32LE(off + 4)
    if (size < 8 || off + size > b.length) throw new Error(`${file}: load command ${i} runs past the file`)
    if (cmd === LC_BUILD_VERSION) {
      const v = b.readUInt32LE(off + 12)
      minos = `${v >>> 16}.${(v >>> 8) & 0xff}`
    } else if (cmd === LC_SYMTAB) {
      const symoff = b.readUInt32LE(off + 8)
      const nsyms = b.readUInt32LE(off + 12)
      const stroff = b.readUInt32LE(off + 16)
      for (let s = 0; s < nsyms; s++) {
        const e = symoff + s * 16
        const strx = b.readUInt32LE(e)
        const type = b[e + 4]
        const desc = b.readUInt16LE(e + 6)
        if (type & N_STAB) continue
        const end = b.indexOf(0, stroff + strx)
        const name = b.toString('latin1', stroff + strx, end)
        if ((type & N_TYPE) === N_SECT && (type & N_EXT) && !(type & N_PEXT)) exported.push(name)
        else if ((type & N_TYPE) === N_UNDF && (type & N_EXT)) {
          undefinedSyms.push({ name, dynamicLookup: ((desc >> 8) & 0xff) === DYNAMIC_LOOKUP_ORDINAL })
        }
      }
    }
    off += size
  }
  return { cpu, filetype, minos, exported, undefined: undefinedSyms }
}

const isNodeApi = (sym) => /^_(napi|node_api)_/.test(sym)

/**
 * The problems of a macOS build: `file` the linked binary, `objects` its object files.
 * What Apple's linker would export is read from the objects (their external, not
 * private-external, definitions): Zig 0.11's Mach-O linker also exports private
 * externs (hidden-visibility functions and its compiler_rt), so the binary's own symbol
 * table overstates it; the exports are therefore checked on the objects.
 */
function checkDarwin (file, objects, { cpu, minos }) {
  const bin = machO(file)
  const problems = []
  if (bin.cpu !== cpu) problems.push(`is for ${bin.cpu}, not ${cpu}`)
  if (bin.filetype !== 'dylib' && bin.filetype !== 'bundle') problems.push(`is a Mach-O ${bin.filetype}, not a loadable module`)
  if (bin.minos !== minos) problems.push(`needs macOS ${bin.minos}, not ${minos}`)
  if (!bin.exported.includes('_napi_register_module_v1')) problems.push('does not export _napi_register_module_v1')
  const lookedUp = bin.undefined.filter((u) => u.dynamicLookup).map((u) => u.name)
  const strays = lookedUp.filter((n) => !isNodeApi(n))
  if (strays.length) problems.push(`leaves symbols that are not Node-API's to dynamic lookup (missing from macOS's libSystem): ${strays.join(', ')}`)
  const objectExports = []
  for (const o of objects) {
    const obj = machO(o)
    if (obj.cpu !== cpu) problems.push(`${o} is for ${obj.cpu}`)
    objectExports.push(...obj.exported)
  }
  const extra = objectExports.filter((e) => !MODULE_EXPORTS.includes(e.slice(1)))
  if (extra.length) problems.push(`its objects export more than Node-API's entry points: ${extra.join(', ')}`)
  return {
    cpu: bin.cpu,
    minos: bin.minos,
    exports: [...new Set(objectExports)],
    nodeApiImports: lookedUp.length,
    libSystemImports: bin.undefined.length - lookedUp.length,
    problems
  }
}

module.exports = { GLIBC_MAX, MODULE_EXPORTS, compareVersions, elfSymbols, checkLinux, machO, checkDarwin }
