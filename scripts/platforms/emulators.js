'use strict'
// How to run a program of another platform here: linux-arm64 through qemu-user,
// win32-x64 through wine. Each returns { cmd, args, env, notes } for spawning a node
// binary of that platform, or throws with what to install.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { cacheDir, run } = require('./lib.js')

const AARCH64_SYSROOT = '/usr/aarch64-linux-gnu'
const BINFMT = '/proc/sys/fs/binfmt_misc/qemu-aarch64'

function which (cmd) {
  const res = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' })
  return res.status === 0 ? res.stdout.trim() : undefined
}

const INSTALL = 'run `bash scripts/platforms/install-toolchains.sh` first'

/**
 * linux-arm64. With qemu-aarch64 registered in binfmt_misc, the arm64 node is executed
 * directly and every arm64 program it spawns (its own execPath) runs emulated too; the
 * loader's search path comes from QEMU_LD_PREFIX, which children inherit. Without
 * binfmt, node runs under qemu-aarch64 explicitly and cannot start arm64 children.
 */
function arm64 (nodeBin) {
  if (!which('qemu-aarch64')) throw new Error(`qemu-aarch64 is missing: ${INSTALL}`)
  if (!fs.existsSync(path.join(AARCH64_SYSROOT, 'lib', 'ld-linux-aarch64.so.1'))) {
    throw new Error(`the arm64 C library (${AARCH64_SYSROOT}) is missing: ${INSTALL}`)
  }
  const env = { QEMU_LD_PREFIX: AARCH64_SYSROOT }
  if (binfmtEnabled()) {
    // A child started with an environment of its own loses QEMU_LD_PREFIX; qemu then
    // looks in /etc/qemu-binfmt/aarch64, which install-toolchains.sh links.
    const notes = fs.existsSync('/etc/qemu-binfmt/aarch64/lib/ld-linux-aarch64.so.1')
      ? undefined
      : '/etc/qemu-binfmt/aarch64 is missing: arm64 children started with a replaced environment cannot start'
    return { cmd: nodeBin, args: [], env, binfmt: true, notes }
  }
  return {
    cmd: 'qemu-aarch64',
    args: ['-L', AARCH64_SYSROOT, nodeBin],
    env,
    binfmt: false,
    notes: 'qemu-aarch64 is not registered in binfmt_misc: arm64 child processes cannot start'
  }
}

function binfmtEnabled () {
  try {
    return fs.readFileSync(BINFMT, 'utf8').startsWith('enabled')
  } catch {
    return false
  }
}

function wineBinary () {
  for (const cand of ['/usr/lib/wine/wine64', which('wine64'), which('wine')]) {
    if (cand && fs.existsSync(cand)) return cand
  }
  throw new Error(`wine64 is missing: ${INSTALL}`)
}

function wineServer () {
  for (const cand of ['/usr/lib/wine/wineserver64', '/usr/lib/wine/wineserver', which('wineserver')]) {
    if (cand && fs.existsSync(cand)) return cand
  }
  return undefined
}

/**
 * win32-x64: wine64 with a prefix of its own in the cache, set to report Windows 10
 * (Node 20 refuses older versions; NODE_SKIP_PLATFORM_CHECK covers wine's own version
 * check too). AGENT_OS_WINE=1 tells the tests they run under wine, so a test whose
 * check wine cannot honour skips itself and says why (see docs/platforms.md).
 */
function win32 (nodeBin) {
  const wine = wineBinary()
  const prefix = cacheDir('wine-prefix')
  const env = {
    WINEPREFIX: prefix,
    WINEARCH: 'win64',
    WINEDEBUG: '-all',
    // No Mono / Gecko installers: nothing may be downloaded.
    WINEDLLOVERRIDES: 'mscoree,mshtml=',
    NODE_SKIP_PLATFORM_CHECK: '1',
    AGENT_OS_WINE: '1'
  }
  const ready = path.join(prefix, '.agent-os-win10')
  if (!fs.existsSync(ready)) {
    const opts = { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] }
    run(wine, ['wineboot', '--init'], opts)
    run(wine, ['reg', 'add', 'HKCU\\Software\\Wine', '/v', 'Version', '/d', 'win10', '/f'], opts)
    fs.writeFileSync(ready, '')
  }
  return { cmd: wine, args: [nodeBin], env }
}

/** Ends the wineserver of the project's own prefix (started by the runs above). */
function stopWine () {
  const server = wineServer()
  if (!server) return
  const prefix = cacheDir('wine-prefix')
  spawnSync(server, ['-k'], { env: { ...process.env, WINEPREFIX: prefix }, stdio: 'ignore' })
}

module.exports = { arm64, win32, stopWine, binfmtEnabled, which }
