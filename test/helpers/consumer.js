'use strict'
// A throwaway consumer project whose node_modules/@scope/agent-os is this repository,
// so tests resolve the package by its name through its `exports` map as users do.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const repo = path.join(__dirname, '..', '..')

function makeConsumer () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-os-consumer-'))
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
  fs.mkdirSync(path.join(dir, 'node_modules', '@scope'), { recursive: true })
  fs.symlinkSync(repo, path.join(dir, 'node_modules', '@scope', 'agent-os'), 'dir')
  const types = path.join(repo, 'node_modules', '@types')
  if (fs.existsSync(types)) fs.symlinkSync(types, path.join(dir, 'node_modules', '@types'), 'dir')
  return {
    dir,
    /** Runs node with `args` in the consumer; returns { status, stdout, stderr }. */
    node (args, env = {}) {
      return spawnSync(process.execPath, args, {
        cwd: dir,
        env: { ...process.env, ...env },
        encoding: 'utf8',
        timeout: 60000
      })
    },
    cleanup () {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

module.exports = { makeConsumer, repo }
