'use strict'
// Shared helpers of the platform scripts: the cache of npm-fetched Node binaries and
// headers (.platforms/ in the repository, ignored by git through its own .gitignore;
// AGENT_OS_PLATFORMS_CACHE moves it), and running commands with their time measured.

const { spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const VERSIONS = require('./versions.json')
const CACHE = path.resolve(process.env.AGENT_OS_PLATFORMS_CACHE || path.join(ROOT, '.platforms'))

function cacheDir (...parts) {
  fs.mkdirSync(CACHE, { recursive: true })
  const ignore = path.join(CACHE, '.gitignore')
  if (!fs.existsSync(ignore)) fs.writeFileSync(ignore, '# fetched binaries and headers: never committed\n*\n')
  const dir = path.join(CACHE, ...parts)
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

function run (cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { stdio: 'inherit', ...opts })
  if (res.error) throw new Error(`${cmd}: ${res.error.message}`)
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited with ${res.status === null ? res.signal : res.status}`)
  }
  return res
}

/**
 * Unpacks npm package `name@version` into the cache (once) and returns the directory
 * holding its files (the tarball's `package/`). Uses `npm pack`, so the registry and
 * proxy settings of npm apply and nothing is installed into the project. `integrity`
 * (the registry's `dist.integrity`, pinned in versions.json) is checked against the
 * tarball itself before it is unpacked: a package that differs is refused.
 */
function npmPackage (name, version, integrity) {
  const dir = path.join(cacheDir('packages'), `${name.replace('/', '+')}-${version}`)
  const done = path.join(dir, '.complete')
  if (fs.existsSync(done)) return path.join(dir, 'package')
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const tarballs = cacheDir('tarballs')
  const res = spawnSync('npm', ['pack', `${name}@${version}`, '--json', '--pack-destination', tarballs], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024, // the JSON lists every file (Zig's: 13 000)
    stdio: ['ignore', 'pipe', 'inherit']
  })
  if (res.status !== 0) throw new Error(`npm pack ${name}@${version} failed${res.error ? `: ${res.error.message}` : ''}`)
  const file = path.join(tarballs, JSON.parse(res.stdout)[0].filename)
  if (integrity) {
    const [algo] = integrity.split('-')
    const got = `${algo}-${crypto.createHash(algo).update(fs.readFileSync(file)).digest('base64')}`
    if (got !== integrity) {
      fs.rmSync(file)
      throw new Error(`${name}@${version}: tarball integrity ${got} is not the pinned ${integrity}`)
    }
  }
  run('tar', ['-xzf', file, '-C', dir])
  fs.rmSync(file)
  fs.writeFileSync(done, '')
  return path.join(dir, 'package')
}

/** The node binary for a key of versions.json's "nodes" (node22, node24, node26, linux-arm64, win32-x64). */
function nodeBinary (key) {
  const spec = VERSIONS.nodes[key]
  if (!spec) throw new Error(`unknown node target '${key}' (known: ${Object.keys(VERSIONS.nodes).join(', ')})`)
  const dir = npmPackage(spec.package, spec.version, spec.integrity)
  const bin = path.join(dir, 'bin', spec.platform === 'win32' ? 'node.exe' : 'node')
  if (!fs.existsSync(bin)) throw new Error(`${spec.package}@${spec.version} has no ${path.relative(dir, bin)}`)
  return { bin, dir, ...spec }
}

/** The node-api-headers package: { include, def } (headers and the node.exe export list). */
function nodeApiHeaders () {
  const { package: name, version, integrity } = VERSIONS.nodeApiHeaders
  const dir = npmPackage(name, version, integrity)
  return { include: path.join(dir, 'include'), def: path.join(dir, 'def', 'node_api.def') }
}

/**
 * Zig's C compiler (versions.json "zig": the official Linux x64 distribution, as npm
 * serves it): { cc: [zig, 'cc'], env } with Zig's caches inside the platforms cache.
 */
function zig () {
  const { package: name, version, integrity } = VERSIONS.zig
  const dir = npmPackage(name, version, integrity)
  const bin = path.join(dir, 'zig')
  if (!fs.existsSync(bin)) throw new Error(`${name}@${version} has no zig binary`)
  const cache = cacheDir('zig-cache')
  return { bin, version, env: { ZIG_GLOBAL_CACHE_DIR: cache, ZIG_LOCAL_CACHE_DIR: cache } }
}

function seconds (ms) {
  return `${(ms / 1000).toFixed(1)} s`
}

module.exports = { ROOT, CACHE, VERSIONS, cacheDir, run, npmPackage, nodeBinary, nodeApiHeaders, zig, seconds }
