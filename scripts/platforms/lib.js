'use strict'
// Shared helpers of the platform scripts: the cache of npm-fetched Node binaries and
// headers (.platforms/ in the repository, ignored by git through its own .gitignore;
// AGENT_OS_PLATFORMS_CACHE moves it), and running commands with their time measured.

const { spawnSync } = require('node:child_process')
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
 * proxy settings of npm apply and nothing is installed into the project.
 */
function npmPackage (name, version) {
  const dir = path.join(cacheDir('packages'), `${name}-${version}`)
  const done = path.join(dir, '.complete')
  if (fs.existsSync(done)) return path.join(dir, 'package')
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  const tarballs = cacheDir('tarballs')
  const res = spawnSync('npm', ['pack', `${name}@${version}`, '--json', '--pack-destination', tarballs], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit']
  })
  if (res.status !== 0) throw new Error(`npm pack ${name}@${version} failed`)
  const file = path.join(tarballs, JSON.parse(res.stdout)[0].filename)
  run('tar', ['-xzf', file, '-C', dir])
  fs.rmSync(file)
  fs.writeFileSync(done, '')
  return path.join(dir, 'package')
}

/** The node binary for a key of versions.json's "nodes" (node22, node24, linux-arm64, win32-x64). */
function nodeBinary (key) {
  const spec = VERSIONS.nodes[key]
  if (!spec) throw new Error(`unknown node target '${key}' (known: ${Object.keys(VERSIONS.nodes).join(', ')})`)
  const dir = npmPackage(spec.package, spec.version)
  const bin = path.join(dir, 'bin', spec.platform === 'win32' ? 'node.exe' : 'node')
  if (!fs.existsSync(bin)) throw new Error(`${spec.package}@${spec.version} has no ${path.relative(dir, bin)}`)
  return { bin, dir, ...spec }
}

/** The node-api-headers package: { include, def } (headers and the node.exe export list). */
function nodeApiHeaders () {
  const { package: name, version } = VERSIONS.nodeApiHeaders
  const dir = npmPackage(name, version)
  return { include: path.join(dir, 'include'), def: path.join(dir, 'def', 'node_api.def') }
}

function seconds (ms) {
  return `${(ms / 1000).toFixed(1)} s`
}

module.exports = { ROOT, CACHE, VERSIONS, cacheDir, run, npmPackage, nodeBinary, nodeApiHeaders, seconds }
