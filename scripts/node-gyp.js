'use strict'
// Runs node-gyp for this package. Shared by the install step and the project's own
// build scripts.
//
// node-gyp downloads Node's headers unless told where local ones are. Node installs
// that ship their headers keep them under <prefix>/include/node, <prefix> being two
// levels above the node binary; when they are there (and the user has not chosen a
// nodedir), node-gyp is pointed at them, so an offline machine can build.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

function localNodeDir () {
  if (process.env.npm_config_nodedir) return undefined
  const prefix = path.resolve(path.dirname(process.execPath), '..')
  const headers = path.join(prefix, 'include', 'node')
  const ok = ['node_api.h', 'common.gypi'].every((f) => fs.existsSync(path.join(headers, f)))
  return ok ? prefix : undefined
}

function nodeGypCommand () {
  // npm tells lifecycle scripts where its bundled node-gyp is.
  const fromNpm = process.env.npm_config_node_gyp
  if (fromNpm && fs.existsSync(fromNpm)) return [process.execPath, fromNpm]
  try {
    return [process.execPath, require.resolve('node-gyp/bin/node-gyp.js')]
  } catch {
    return [process.platform === 'win32' ? 'node-gyp.cmd' : 'node-gyp']
  }
}

/** Runs `node-gyp <args>` in `cwd` with extra environment; returns the exit code. */
function runNodeGyp (args, { cwd, env = {} } = {}) {
  const [cmd, ...pre] = nodeGypCommand()
  const nodedir = localNodeDir()
  const full = [...pre, ...args]
  if (nodedir) full.push(`--nodedir=${nodedir}`)
  const res = spawnSync(cmd, full, {
    cwd,
    env: { ...process.env, ...env },
    stdio: 'inherit',
    shell: process.platform === 'win32' && pre.length === 0
  })
  if (res.error) throw res.error
  return res.status === null ? 1 : res.status
}

module.exports = { runNodeGyp, localNodeDir }
