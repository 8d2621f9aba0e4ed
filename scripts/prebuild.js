'use strict'
// `npm run prebuild`: prebuildify (--napi --strip) into prebuilds/<platform>-<arch>/,
// using the running Node's own headers when it ships them (no header download).
// On Linux and Windows the process-scope helper program node-gyp built beside the .node
// (build/Release/agent_os_scope_helper, agent_os_scope_helper.exe on Windows) is copied
// into the same prebuilds/ directory,
// where lib/internal/process-scope.js looks for it (prebuildify copies .node files only).

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { localNodeDir } = require('./node-gyp.js')

const root = path.join(__dirname, '..')
const env = { ...process.env }
const nodedir = localNodeDir()
if (nodedir) env.npm_config_nodedir = nodedir
const bin = require.resolve('prebuildify/bin.js')
const res = spawnSync(process.execPath, [bin, '--napi', '--strip', ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: 'inherit'
})
process.exitCode = res.status === null ? 1 : res.status
const platform = process.argv.includes('--platform') ? process.argv[process.argv.indexOf('--platform') + 1] : process.platform
const arch = process.argv.includes('--arch') ? process.argv[process.argv.indexOf('--arch') + 1] : process.arch
if (process.exitCode === 0 && (platform === 'linux' || platform === 'win32')) {
  const name = platform === 'win32' ? 'agent_os_scope_helper.exe' : 'agent_os_scope_helper'
  const helper = path.join(root, 'build', 'Release', name)
  const dest = path.join(root, 'prebuilds', `${platform}-${arch}`, name)
  try {
    fs.rmSync(dest, { force: true })
    fs.copyFileSync(helper, dest)
    fs.chmodSync(dest, 0o755)
  } catch (err) {
    console.error(`prebuild: the scope helper program could not be copied (${err.code || err.message})`)
    process.exitCode = 1
  }
}
