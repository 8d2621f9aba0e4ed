'use strict'
// `node scripts/platforms/cross-build.js <linux-arm64|win32-x64> [--out FILE] [--root DIR]`
//
// Builds the binding for another platform on a Linux x64 machine, without node-gyp:
// the C sources, defines, include dirs and flags come from binding.gyp evaluated for the
// target OS (scripts/platforms/gyp.js), with warnings as errors (aos_werror=1).
//   linux-arm64  aarch64-linux-gnu-gcc, -shared -fPIC, the gyp file's Linux flags
//                (RELRO, BIND_NOW, non-executable stack), stripped.
//   win32-x64    x86_64-w64-mingw32-gcc, linked against an import library of Node-API
//                made with dlltool from node-api-headers' def/node_api.def, which names
//                NODE.EXE as the DLL, so the .node imports its Node-API symbols from the
//                node.exe that loads it; -static-libgcc, so it needs no mingw DLL.
// Output (default): prebuilds/<target>/@scope+agent-os.node, the name prebuildify
// --napi gives and node-gyp-build picks (a Node-API build for every Node version).
// --root DIR builds the sources of another checkout (binding.gyp and src/ in DIR).

const fs = require('node:fs')
const path = require('node:path')
const { ROOT, cacheDir, run, nodeApiHeaders } = require('./lib.js')
const { targetFor } = require('./gyp.js')

const TARGETS = {
  'linux-arm64': {
    os: 'linux',
    cc: 'aarch64-linux-gnu-gcc',
    strip: 'aarch64-linux-gnu-strip',
    cflags: ['-O2', '-fPIC', '-pthread', '-g0'],
    ldflags: ['-shared', '-pthread'],
    // The gyp file's cflags_c / ldflags for OS!='win' and OS=='linux' apply as well.
    useGypFlags: true
  },
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

function crossBuild (targetName, { out, root = ROOT } = {}) {
  const t = TARGETS[targetName]
  const file = out || path.join(root, 'prebuilds', targetName, '@scope+agent-os.node')
  // A failed build must not leave an older binary behind to be packed or tested.
  fs.rmSync(file, { force: true })
  const gyp = targetFor(path.join(root, 'binding.gyp'), 'agent_os', { OS: t.os, aos_werror: 1, aos_sanitize: 0 })
  const missing = gyp.sources.filter((s) => !fs.existsSync(path.join(root, s)))
  if (missing.length) {
    throw new Error(`${targetName}: binding.gyp lists sources that do not exist: ${missing.join(', ')}`)
  }
  const headers = nodeApiHeaders()
  const obj = cacheDir('obj', targetName)
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
    ...defines.map((d) => `-D${d}`),
    ...gyp.include_dirs.map((d) => `-I${path.join(root, d)}`),
    `-I${headers.include}`
  ]
  const objects = []
  for (const src of gyp.sources) {
    const o = path.join(obj, src.replace(/[\\/]/g, '__').replace(/\.c$/, '.o'))
    run(t.cc, [...cflags, '-c', path.join(root, src), '-o', o], { cwd: root })
    objects.push(o)
  }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const libs = gyp.libraries.map((l) => `-l${l.replace(/\.lib$/, '').replace(/^-l/, '')}`)
  const ldflags = [...t.ldflags, ...(t.useGypFlags ? gyp.ldflags : [])]
  if (t.os === 'win') libs.push(nodeImportLibrary(headers.def))
  run(t.cc, [...ldflags, '-o', file, ...objects, ...libs], { cwd: root })
  run(t.strip, ['--strip-unneeded', file])
  return file
}

if (require.main === module) {
  try {
    const args = parseArgs(process.argv.slice(2))
    const file = crossBuild(args.target, args)
    console.log(`${args.target}: ${path.relative(process.cwd(), file)}`)
  } catch (err) {
    console.error(`cross-build: ${err.message}`)
    process.exitCode = 1
  }
}

module.exports = { crossBuild, TARGETS }
