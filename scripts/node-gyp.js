'use strict'
// Runs node-gyp for this package. Shared by the install step and the project's own
// build scripts. Quiet by default (one line per step; the full log only when a step
// fails), verbose with `--verbose` or `npm --loglevel verbose`.
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

/** Whether to show node-gyp's own output as it runs: `--verbose` given to the calling
 * script, or npm run with --loglevel verbose or silly (`npm install --verbose`). */
function wantsVerbose (argv = process.argv, env = process.env) {
  return argv.includes('--verbose') || ['verbose', 'silly'].includes(env.npm_config_loglevel)
}

/** Runs `node-gyp <args>` in `cwd` with extra environment; returns the exit code.
 * Quiet by default: node-gyp's output is kept and one line says how the step went;
 * the full log is printed only when the step fails. With `verbose` the output streams
 * as it comes. `log` receives the lines (default: stderr). */
function runNodeGyp (args, { cwd, env = {}, verbose = wantsVerbose(), step = args[0], log = (line) => process.stderr.write(line + '\n') } = {}) {
  const [cmd, ...pre] = nodeGypCommand()
  const nodedir = localNodeDir()
  const full = [...pre, ...args]
  if (nodedir) full.push(`--nodedir=${nodedir}`)
  if (verbose && !full.includes('--verbose')) full.push('--verbose')
  const started = process.hrtime.bigint()
  const res = spawnSync(cmd, full, {
    cwd,
    env: { ...process.env, ...env },
    stdio: verbose ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    shell: process.platform === 'win32' && pre.length === 0
  })
  if (res.error) throw res.error
  const code = res.status === null ? 1 : res.status
  const seconds = (Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)
  if (code === 0) {
    log(`@scope/agent-os: ${step} ok (${seconds} s)`)
  } else {
    if (!verbose) log(`${res.stdout || ''}${res.stderr || ''}`.trimEnd())
    const how = res.status === null ? `signal ${res.signal}` : `exit code ${res.status}`
    log(`@scope/agent-os: ${step} failed (${how}, ${seconds} s)${verbose ? '' : '; the full node-gyp log is above'}`)
  }
  return code
}

module.exports = { runNodeGyp, localNodeDir, wantsVerbose }
