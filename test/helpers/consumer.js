'use strict'
// A throwaway consumer project whose node_modules/@scope/agent-os is this repository,
// so tests resolve the package by its name through its `exports` map as users do.
// On Linux and macOS it is a symlink to the checkout. On Windows a directory symlink
// needs a privilege and wine never creates one (docs/platforms.md), so there the
// package's published files are copied instead, with node-gyp-build beside them.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const repo = path.join(__dirname, '..', '..')

function makeConsumer () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-consumer-'))
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
  fs.mkdirSync(path.join(dir, 'node_modules', '@scope'), { recursive: true })
  const types = path.join(repo, 'node_modules', '@types')
  if (process.platform === 'win32') {
    copyPackage(path.join(dir, 'node_modules'))
    // Only the type-checking tests need @types, and they do not run under wine, where
    // junctions fail (ENOTSUP): there the consumer simply has none.
    if (fs.existsSync(types) && process.env.AGENT_OS_WINE !== '1') {
      fs.symlinkSync(types, path.join(dir, 'node_modules', '@types'), 'junction')
    }
  } else {
    fs.symlinkSync(repo, path.join(dir, 'node_modules', '@scope', 'agent-os'), 'dir')
    if (fs.existsSync(types)) fs.symlinkSync(types, path.join(dir, 'node_modules', '@types'), 'dir')
  }
  return {
    dir,
    /** Runs node with `args` in the consumer; returns { status, stdout, stderr }. */
    node (args, env = {}) {
      return spawnSync(process.execPath, args, {
        cwd: dir,
        env: { ...process.env, ...bindingRoot(), ...env },
        encoding: 'utf8',
        timeout: 60000
      })
    },
    cleanup () {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** AGENT_OS_BINDING_ROOT made absolute for a child in another directory: the wine
 * runner gives a drive-relative path ("/home/..."), which in the consumer's directory
 * (on drive C:) would name another place. */
function bindingRoot () {
  const root = process.env.AGENT_OS_BINDING_ROOT
  return root === undefined ? {} : { AGENT_OS_BINDING_ROOT: path.resolve(root) }
}

/** Copies what the package publishes (and the binding built or prebuilt here) into
 * `nodeModules`/@scope/agent-os, and its runtime dependency node-gyp-build. */
function copyPackage (nodeModules) {
  const into = path.join(nodeModules, '@scope', 'agent-os')
  fs.mkdirSync(into, { recursive: true })
  for (const name of ['package.json', 'index.d.ts', 'lib', 'types', 'build', 'prebuilds']) {
    const from = path.join(repo, name)
    if (fs.existsSync(from)) fs.cpSync(from, path.join(into, name), { recursive: true })
  }
  const gypBuild = path.dirname(require.resolve('node-gyp-build/package.json', { paths: [repo] }))
  fs.cpSync(gypBuild, path.join(nodeModules, 'node-gyp-build'), { recursive: true })
}

module.exports = { makeConsumer, repo }
