'use strict'
// `npm run prebuild`: prebuildify (--napi --strip) into prebuilds/<platform>-<arch>/,
// using the running Node's own headers when it ships them (no header download).

const { spawnSync } = require('node:child_process')
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
