'use strict'
// The "Koffi rooted reader" of the read row: the transport this package replaced (an
// FFI binding of libc called from JavaScript), making the package's own calls for a
// file at rest: fstatat of the path beneath the retained root, one openat2 of it
// (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, O_NOFOLLOW |
// O_NONBLOCK | O_NOCTTY), fstat, one pread of size + 1 bytes (the last one the growth
// probe), fstat (identity, size, mtime, ctime compared), close. Linux x86-64 and arm64
// (struct stat offsets and the openat2 number of those two). Throws Unavailable-style
// errors (message "not available (...)") where it cannot run.

const { Unavailable } = require('./pkg.js')

const O = { RDONLY: 0, NOCTTY: 0o400, NONBLOCK: 0o4000, DIRECTORY: 0o200000, NOFOLLOW: 0o400000, CLOEXEC: 0o2000000 }
if (process.arch === 'arm64') Object.assign(O, { DIRECTORY: 0o40000, NOFOLLOW: 0o100000 })
const RESOLVE = 0x08 | 0x04 | 0x02
const AT_SYMLINK_NOFOLLOW = 0x100
const SYS_OPENAT2 = 437
// struct stat (x86-64 / arm64 generic): offsets of the fields compared.
const ST = process.arch === 'arm64'
  ? { size: 128, dev: 0, ino: 8, mode: 16, sizeOff: 48, mtime: 88, ctime: 104 }
  : { size: 144, dev: 0, ino: 8, mode: 24, sizeOff: 48, mtime: 88, ctime: 104 }

function koffiReader (root) {
  if (process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch)) {
    throw new Unavailable('not available (the Koffi reader is written for Linux x64/arm64)')
  }
  let koffi
  try {
    koffi = require('koffi')
  } catch (err) {
    throw new Unavailable(`not available (koffi: ${err.message.split('\n')[0]})`)
  }
  const libc = koffi.load('libc.so.6')
  const open = libc.func('int open(const char *path, int flags)')
  const syscall = libc.func('long syscall(long number, ...)')
  const fstatat = libc.func('int fstatat(int dirfd, const char *path, void *buf, int flags)')
  const fstat = libc.func('int fstat(int fd, void *buf)')
  const pread = libc.func('long pread(int fd, void *buf, size_t count, long offset)')
  const close = libc.func('int close(int fd)')
  const rootfd = open(root, O.RDONLY | O.DIRECTORY | O.CLOEXEC)
  if (rootfd < 0) throw new Unavailable('not available (the Koffi reader could not open the root)')
  const how = Buffer.alloc(24)
  how.writeBigUInt64LE(BigInt(O.RDONLY | O.NOFOLLOW | O.NONBLOCK | O.NOCTTY | O.CLOEXEC), 0)
  how.writeBigUInt64LE(BigInt(RESOLVE), 16)
  const look = Buffer.alloc(ST.size)
  const before = Buffer.alloc(ST.size)
  const after = Buffer.alloc(ST.size)
  const same = () => before.compare(after, ST.dev, ST.dev + 16, ST.dev, ST.dev + 16) === 0 &&
    before.compare(after, ST.sizeOff, ST.sizeOff + 8, ST.sizeOff, ST.sizeOff + 8) === 0 &&
    before.compare(after, ST.mtime, ST.mtime + 32, ST.mtime, ST.mtime + 32) === 0

  return {
    /** Reads segments (joined beneath the root) whole; throws on anything unexpected. */
    read (segments) {
      const rel = segments.join('/')
      if (fstatat(rootfd, rel, look, AT_SYMLINK_NOFOLLOW) !== 0) throw new Error('fstatat failed')
      if ((look.readUInt32LE(ST.mode) & 0o170000) !== 0o100000) throw new Error('not a regular file')
      const fd = Number(syscall(SYS_OPENAT2, 'int', rootfd, 'const char *', rel, 'void *', how, 'size_t', 24))
      if (fd < 0) throw new Error('openat2 failed')
      try {
        if (fstat(fd, before) !== 0) throw new Error('fstat failed')
        const size = Number(before.readBigInt64LE(ST.sizeOff))
        const buf = Buffer.allocUnsafe(size + 1)
        const got = Number(pread(fd, buf, size + 1, 0))
        if (got !== size) throw new Error('the file changed size')
        if (fstat(fd, after) !== 0 || !same()) throw new Error('the file changed')
        return buf.subarray(0, size)
      } finally {
        close(fd)
      }
    },
    close () { close(rootfd) }
  }
}

module.exports = { koffiReader }
