'use strict'
// Whether a ReadAuthority keeps the descriptor of a file changed within the last second
// after reading it consistently (src/file_authority/posix_read.c, aos_fa__keepable):
// only where every change after a stat carries a later ctime than the stat saw, that
// is Linux 6.13+ multigrain stamps (tmpfs, xfs, btrfs, and ext4 mounted as ext4) whose
// ctime has a sub-second part (ext4 made with 128-byte inodes has whole seconds only).

const fs = require('node:fs')
const os = require('node:os')

const MULTIGRAIN_TYPES = [0x01021994, 0x58465342, 0x9123683e] // tmpfs, xfs, btrfs
const EXT_MAGIC = 0xef53

function kernelHasMultigrain () {
  const [major, minor] = os.release().split('.').map((n) => parseInt(n, 10))
  return major > 6 || (major === 6 && minor >= 13)
}

// The type of the mount of device `dev` ("ext4", "ext2", ...) from mountinfo.
function mountType (dev) {
  const major = ((dev >> 8) & 0xfff) | Math.floor(dev / 2 ** 32) & ~0xfff
  const minor = (dev & 0xff) | ((dev >> 12) & ~0xff)
  for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const fields = line.split(' ')
    if (fields[2] !== `${major}:${minor}`) continue
    const sep = fields.indexOf('-')
    if (sep > 0) return fields[sep + 1]
  }
  return undefined
}

function keepsFresh (file) {
  if (process.platform !== 'linux' || !kernelHasMultigrain()) return false
  const st = fs.statSync(file, { bigint: true })
  if (st.ctimeNs % 1000000000n === 0n) return false
  const type = fs.statfsSync(file).type >>> 0
  if (MULTIGRAIN_TYPES.includes(type)) return true
  return type === EXT_MAGIC && mountType(Number(st.dev)) === 'ext4'
}

module.exports = { keepsFresh }
