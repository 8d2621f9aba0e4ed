'use strict'
// What the figures were measured on: cores, kernel, Node, and the filesystem type of
// every directory the bench uses.

const fs = require('node:fs')
const os = require('node:os')
const { spawnSync } = require('node:child_process')

/** The filesystem type of `dir` as statfs reports it (GNU `stat -f`), e.g. 'ext2/ext3'
 * for ext4, 'tmpfs'. Undefined when it cannot be told. */
function fsType (dir) {
  const r = spawnSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' })
  if (r.status !== 0) return undefined
  return r.stdout.trim() || undefined
}

/** The mount's type as `df -T` names it (e.g. 'ext4'); falls back to fsType. */
function mountType (dir) {
  const r = spawnSync('df', ['-T', '-P', dir], { encoding: 'utf8' })
  if (r.status === 0) {
    const line = r.stdout.trim().split('\n')[1]
    const type = line && line.split(/\s+/)[1]
    if (type) return type
  }
  return fsType(dir)
}

const MEMORY_FS = new Set(['tmpfs', 'ramfs'])

function isMemoryFs (dir) {
  const t = mountType(dir)
  return t === undefined ? undefined : MEMORY_FS.has(t)
}

function osName () {
  try {
    const text = fs.readFileSync('/etc/os-release', 'utf8')
    const m = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(text)
    if (m) return m[1]
  } catch {}
  return `${os.type()} ${os.release()}`
}

function describe (compiler) {
  const cpus = os.cpus()
  return {
    cpuModel: cpus.length ? cpus[0].model.trim() : 'unknown',
    cores: cpus.length, // the machine's, not this process's share (a pinned run has one)
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${process.platform}-${process.arch}`,
    os: osName(),
    kernel: os.release(),
    node: process.version,
    compiler: compiler || 'none'
  }
}

module.exports = { describe, fsType, mountType, isMemoryFs }
