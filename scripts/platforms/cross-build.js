'use strict'
// `node scripts/platforms/cross-build.js <TARGET> [--out FILE] [--root DIR]`
//
// Builds the binding for a platform on a Linux x64 machine, without node-gyp: the C
// sources, defines, include dirs and flags come from binding.gyp evaluated for the
// target OS (scripts/platforms/gyp.js), with warnings as errors (aos_werror=1).
//   linux-x64,     Zig's C compiler (`zig cc`, versions.json "zig", fetched from npm into
//   linux-arm64    the platforms cache) targeting glibc 2.28 (x86_64-linux-gnu.2.28,
//                  aarch64-linux-gnu.2.28): the binary links only symbol versions that
//                  glibc 2.28 (RHEL 8, Debian 10, Ubuntu 18.10) has, whatever glibc this
//                  machine runs. -shared -fPIC, the gyp file's Linux flags (RELRO,
//                  BIND_NOW, non-executable stack), stripped with binutils.
//   darwin-x64,    `zig cc -target x86_64-macos.11.0` / `aarch64-macos.11.0` (Zig ships
//   darwin-arm64   the macOS headers and links Mach-O) with the gyp file's macOS settings
//                  (xcode_settings: C11, -Wall -Wextra, hidden symbols, stack protector,
//                  deployment target 11.0, warnings as errors), linked like node-gyp's
//                  loadable module: -undefined dynamic_lookup (Node-API resolves from the
//                  node that loads it). A compile-and-link check: the binaries cannot run
//                  here and are never shipped (the release workflow builds macOS natively).
//   linux-x64-musl zig cc -target x86_64-linux-musl, the Linux flags: a compile-and-link
//                  check of the source build on Alpine (musl), never shipped.
//   win32-x64      x86_64-w64-mingw32-gcc, linked against an import library of Node-API
//                  made with dlltool from node-api-headers' def/node_api.def, which names
//                  NODE.EXE as the DLL, so the .node imports its Node-API symbols from the
//                  node.exe that loads it; -static-libgcc, so it needs no mingw DLL.
// Output (default): prebuilds/<target>/@scope+agent-os.node, the name prebuildify
// --napi gives and node-gyp-build picks (a Node-API build for every Node version); the
// checks that are never shipped (darwin-*, linux-x64-musl) write into the platforms cache
// instead (.platforms/checks/<target>/).
// --root DIR builds the sources of another checkout (binding.gyp and src/ in DIR).

const fs = require('node:fs')
const path = require('node:path')
const { ROOT, cacheDir, run, nodeApiHeaders, zig } = require('./lib.js')
const { targetFor } = require('./gyp.js')
const { MODULE_EXPORTS, checkLinux, checkDarwin } = require('./binaries.js')

// The oldest glibc the Linux prebuilds may need (docs/platforms.md): RHEL 8's.
const GLIBC = '2.28'
const MACOS_MIN = '11.0' // binding.gyp's MACOSX_DEPLOYMENT_TARGET

const linuxZig = (triple, strip) => ({
  os: 'linux',
  zig: `${triple}.${GLIBC}`,
  strip,
  cflags: ['-O2', '-fPIC', '-pthread', '-g0'],
  // The version script keeps the dynamic symbol table to Node-API's entry points: Zig
  // links glibc 2.28's libc_nonshared.a (its stat wrappers and an errno object) into
  // the binary, and would export those.
  ldflags: ['-shared', '-pthread', 'VERSION_SCRIPT'],
  // The gyp file's cflags_c / ldflags for OS!='win' and OS=='linux' apply as well.
  useGypFlags: true,
  // glibc 2.28's stat wrappers (scripts/platforms/glibc-stat.c), linked first.
  glibcStat: true
})

const darwinZig = (triple) => ({
  os: 'mac',
  zig: `${triple}.${MACOS_MIN}`,
  // binding.gyp's xcode_settings, as Xcode turns them into clang options:
  // GCC_C_LANGUAGE_STANDARD c11, GCC_SYMBOLS_PRIVATE_EXTERN (hidden), OTHER_CFLAGS,
  // GCC_TREAT_WARNINGS_AS_ERRORS (aos_werror=1). The gyp file's cflags_c for OS!='win'
  // are not used by Xcode builds and are not applied here either.
  cflags: ['-O2', '-fPIC', '-g0', '-std=c11', '-fvisibility=hidden', '-Werror'],
  xcode: true,
  ldflags: ['-shared', '-undefined', 'dynamic_lookup'],
  useGypFlags: false,
  check: true // compile and link only: never shipped
})

// Alpine's libc: a compile-and-link check of the source build an Alpine user gets (no
// musl prebuild ships; no musl Node could be had here to load it).
const muslZig = (triple) => ({ ...linuxZig(triple, undefined), zig: triple, check: true, glibcStat: false })

const TARGETS = {
  'linux-x64': linuxZig('x86_64-linux-gnu', 'strip'),
  'linux-arm64': linuxZig('aarch64-linux-gnu', 'aarch64-linux-gnu-strip'),
  'linux-x64-musl': muslZig('x86_64-linux-musl'),
  'darwin-x64': darwinZig('x86_64-macos'),
  'darwin-arm64': darwinZig('aarch64-macos'),
  'win32-x64': {
    os: 'win',
    cc: 'x86_64-w64-mingw32-gcc',
    strip: 'x86_64-w64-mingw32-strip',
    // binding.gyp gives MSVC options only (msvs_settings); these are their gcc
    // counterparts: C11, all warnings as errors; the gyp file's defines still apply.
    cflags: ['-O2', '-std=c11', '-Wall', '-Wextra', '-Werror', '-g0'],
    defines: ['WIN32', '_WIN32_WINNT=0x0A00', '_CRT_SECURE_NO_DEPRECATE', '_CRT_NONSTDC_NO_DEPRECATE'],
    ldflags: ['-shared', '-static-libgcc', '-Wl,--dynamicbase', '-Wl,--nxcompat', '-Wl,--high-entropy-va'],
    useGypFlags: false
  }
}

function parseArgs (argv) {
  const out = { target: undefined, out: undefined, root: ROOT }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out') out.out = path.resolve(argv[++i])
    else if (argv[i] === '--root') out.root = path.resolve(argv[++i])
    else if (!out.target) out.target = argv[i]
    else throw new Error(`unexpected argument ${argv[i]}`)
  }
  if (!TARGETS[out.target]) throw new Error(`usage: cross-build.js <${Object.keys(TARGETS).join('|')}> [--out FILE] [--root DIR]`)
  return out
}

/** Makes (once) the import library for node.exe's Node-API exports; returns its path. */
function nodeImportLibrary (def) {
  const lib = path.join(cacheDir('mingw'), 'libnode_api.a')
  if (!fs.existsSync(lib) || fs.statSync(lib).mtimeMs < fs.statSync(def).mtimeMs) {
    run('x86_64-w64-mingw32-dlltool', ['-d', def, '-l', lib, '-m', 'i386:x86-64'])
  }
  return lib
}

/** The compiler command of target `t`: [cmd, ...leading args], and its environment. */
function compiler (t) {
  if (!t.zig) return { cc: [t.cc], env: process.env }
  const z = zig()
  return { cc: [z.bin, 'cc', '-target', t.zig], env: { ...process.env, ...z.env } }
}

function defaultOut (targetName, root) {
  if (TARGETS[targetName].check) return path.join(cacheDir('checks', targetName), 'agent_os.node')
  return path.join(root, 'prebuilds', targetName, '@scope+agent-os.node')
}

function versionScript () {
  const file = path.join(cacheDir('zig-cache'), 'agent_os.map')
  const text = `{\n  global: ${MODULE_EXPORTS.join('; ')};\n  local: *;\n};\n`
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text) fs.writeFileSync(file, text)
  return `-Wl,--version-script=${file}`
}

// The second program the Linux and Windows packages ship (binding.gyp target
// agent_os_scope_helper, docs/process-scopes.md), beside the .node file: on Linux a
// position-independent executable; on Windows agent_os_scope_helper.exe, a console
// program with a wmain (-municode), -static-libgcc so it needs no mingw DLL.
const HELPER = 'agent_os_scope_helper'
const helperOf = (t) => t.os === 'win'
  ? { ...t, ldflags: ['-municode', '-static-libgcc', '-Wl,--dynamicbase', '-Wl,--nxcompat', '-Wl,--high-entropy-va'] }
  : {
      ...t,
      cflags: t.cflags.map((f) => f === '-fPIC' ? '-fPIE' : f),
      ldflags: ['-pie', '-pthread']
    }
/** The helper's file name on target `targetName`. */
const helperFile = (targetName) => TARGETS[targetName].os === 'win' ? `${HELPER}.exe` : HELPER

function defaultHelperOut (targetName, root) {
  if (TARGETS[targetName].check) return path.join(cacheDir('checks', targetName), helperFile(targetName))
  return path.join(root, 'prebuilds', targetName, helperFile(targetName))
}

/** Builds `targetName`; returns { file, objects }. `helper`: the scope helper program. */
function build (targetName, { out, root = ROOT, helper = false } = {}) {
  const t = helper ? helperOf(TARGETS[targetName]) : TARGETS[targetName]
  const gypTarget = helper ? HELPER : 'agent_os'
  if (helper && t.os !== 'linux' && t.os !== 'win') throw new Error(`${targetName}: the scope helper program is built for Linux and Windows only`)
  const file = out || (helper ? defaultHelperOut(targetName, root) : defaultOut(targetName, root))
  // A failed build must not leave an older binary behind to be packed or tested.
  fs.rmSync(file, { force: true })
  const gyp = targetFor(path.join(root, 'binding.gyp'), gypTarget, { OS: t.os, aos_werror: 1, aos_sanitize: 0 })
  const missing = gyp.sources.filter((s) => !fs.existsSync(path.join(root, s)))
  if (missing.length) {
    throw new Error(`${targetName}: binding.gyp lists sources that do not exist: ${missing.join(', ')}`)
  }
  const headers = nodeApiHeaders()
  const obj = cacheDir('obj', helper ? `${targetName}-helper` : targetName)
  const xcode = gyp.xcode_settings || {}
  const defines = [
    ...gyp.defines,
    ...(t.defines || []),
    'BUILDING_NODE_EXTENSION',
    'NODE_GYP_MODULE_NAME=agent_os',
    ...(t.os === 'linux' ? ['_LARGEFILE_SOURCE', '_FILE_OFFSET_BITS=64'] : [])
  ]
  const cflags = [
    ...(t.useGypFlags ? [...gyp.cflags, ...gyp.cflags_c] : []),
    ...t.cflags,
    ...(t.xcode ? xcode.OTHER_CFLAGS || [] : []),
    ...defines.map((d) => `-D${d}`),
    ...gyp.include_dirs.map((d) => `-I${path.join(root, d)}`),
    `-I${headers.include}`
  ]
  if (t.xcode && xcode.MACOSX_DEPLOYMENT_TARGET !== MACOS_MIN) {
    throw new Error(`${targetName}: binding.gyp's MACOSX_DEPLOYMENT_TARGET is ${xcode.MACOSX_DEPLOYMENT_TARGET}; cross-build.js targets ${MACOS_MIN}`)
  }
  const { cc, env } = compiler(t)
  const objects = []
  for (const src of gyp.sources) {
    const o = path.join(obj, src.replace(/[\\/]/g, '__').replace(/\.c$/, '.o'))
    run(cc[0], [...cc.slice(1), ...cflags, '-c', path.join(root, src), '-o', o], { cwd: root, env })
    objects.push(o)
  }
  if (t.glibcStat) {
    // Not a source of the binding: its own flags, and no _GNU_SOURCE or
    // _FILE_OFFSET_BITS (it defines the 64-bit names with struct stat).
    const o = path.join(obj, 'glibc-stat.o')
    run(cc[0], [...cc.slice(1), '-O2', helper ? '-fPIE' : '-fPIC', '-g0', '-std=gnu11', '-Wall', '-Wextra', '-Werror',
      '-c', path.join(__dirname, 'glibc-stat.c'), '-o', o], { cwd: root, env })
    objects.unshift(o)
  }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const libs = gyp.libraries.map((l) => `-l${l.replace(/\.lib$/, '').replace(/^-l/, '')}`)
  const ldflags = [...t.ldflags, ...(t.useGypFlags ? gyp.ldflags : [])].map((f) => f === 'VERSION_SCRIPT' ? versionScript() : f)
  if (t.os === 'win' && !helper) libs.push(nodeImportLibrary(headers.def))
  run(cc[0], [...cc.slice(1), ...ldflags, '-o', file, ...objects, ...libs], { cwd: root, env })
  if (t.strip) run(t.strip, ['--strip-unneeded', file])
  return { file, objects }
}

function crossBuild (targetName, opts) {
  return build(targetName, opts).file
}

/**
 * Builds `targetName` and checks the binary (scripts/platforms/binaries.js): a Linux one
 * needs nothing above GLIBC_2.28 and exports only Node-API's entry points; a macOS one
 * is for the right CPU and macOS 11.0, its objects export only those entry points, and
 * nothing but Node-API is left to dynamic lookup. Throws naming every problem.
 */
function buildAndCheck (targetName, opts) {
  if (opts && opts.helper) return buildHelperAndCheck(targetName, opts)
  const t = TARGETS[targetName]
  const { file, objects } = build(targetName, opts)
  let report
  if (t.os === 'linux' && !t.check) report = checkLinux(file)
  else if (t.os === 'linux') report = { problems: [] }
  else if (t.os === 'mac') report = checkDarwin(file, objects, { cpu: t.zig.startsWith('x86_64') ? 'x86_64' : 'arm64', minos: MACOS_MIN })
  else return { file }
  if (report.problems.length) throw new Error(`${targetName}: ${report.problems.join('; ')}`)
  return { file, report }
}

/**
 * Builds the scope helper program for a Linux or Windows target and checks a Linux one
 * like the .node: no GLIBC_ version above 2.28, no private thread-local errno, nothing
 * exported (a Windows one is checked by running it: scripts/platforms/prebuild-all.js
 * and the scope tests under wine).
 */
function buildHelperAndCheck (targetName, opts) {
  const t = TARGETS[targetName]
  const { file, objects } = build(targetName, { ...opts, helper: true })
  if (t.check || t.os === 'win') return { file, objects, report: { problems: [] } }
  const report = checkLinux(file, { exports: [] })
  if (report.problems.length) throw new Error(`${targetName} ${HELPER}: ${report.problems.join('; ')}`)
  return { file, report }
}

if (require.main === module) {
  try {
    const args = parseArgs(process.argv.slice(2))
    const { file, report } = buildAndCheck(args.target, args)
    if ((TARGETS[args.target].os === 'linux' || TARGETS[args.target].os === 'win') && !args.out) {
      const helper = buildHelperAndCheck(args.target, args)
      console.log(`${args.target}: ${path.relative(process.cwd(), helper.file)}${helper.report ? ` ${JSON.stringify({ ...helper.report, problems: undefined })}` : ''}`)
    }
    console.log(`${args.target}: ${path.relative(process.cwd(), file)}${report ? ` ${JSON.stringify({ ...report, problems: undefined })}` : ''}`)
  } catch (err) {
    console.error(`cross-build: ${err.message}`)
    process.exitCode = 1
  }
}

module.exports = { crossBuild, buildAndCheck, buildHelperAndCheck, HELPER, helperFile, TARGETS, GLIBC, MACOS_MIN }
