'use strict'
// `node scripts/platforms/reparse-probe.js`: builds scripts/platforms/reparse-probe.c
// with mingw and runs it under the platform runs' wine, in a scratch directory, to see
// which reparse points this wine makes and honours (a junction through
// FSCTL_SET_REPARSE_POINT, CreateSymbolicLinkW, a mount point through
// SetVolumeMountPointW). The Windows tests that plant a link skip, naming the reason,
// exactly when the link is not made (test/helpers/platform.js); this says why.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { cacheDir, run } = require('./lib.js')
const emulators = require('./emulators.js')

const exe = path.join(cacheDir('reparse-probe'), 'reparse-probe.exe')
run('x86_64-w64-mingw32-gcc', ['-municode', '-std=c11', '-Wall', '-Wextra', '-Werror', '-O2', '-o', exe, path.join(__dirname, 'reparse-probe.c')])
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-reparse-'))
const out = path.join(cacheDir('results'), 'reparse-probe.out')
const fd = fs.openSync(out, 'w')
try {
  const emu = emulators.win32(exe)
  // Output to a file: a wine program cannot write to a Unix pipe.
  const res = spawnSync(emu.cmd, [exe, `Z:${scratch.replace(/\//g, '\\')}`], { env: { ...process.env, ...emu.env }, stdio: ['ignore', fd, fd] })
  fs.closeSync(fd)
  process.stdout.write(fs.readFileSync(out, 'utf8'))
  if (res.status !== 0) {
    console.error(`reparse-probe exited with ${res.status === null ? res.signal : res.status}`)
    process.exitCode = 1
  }
} finally {
  emulators.stopWine()
  fs.rmSync(scratch, { recursive: true, force: true })
}
