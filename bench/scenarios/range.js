'use strict'
// file-authority readRange: a 64 KiB slice at a random offset of a 1 GiB file, against
// fs.openSync + fs.readSync + fs.closeSync of the same slice; the same over 8 names of
// the file in turn (more than an authority keeps descriptors of: every read a first one).

const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { timeSync } = require('../lib/measure.js')
const { runRow } = require('../lib/row.js')
const { writeFile, linkNames } = require('../lib/fixtures.js')
const { Unavailable } = require('../lib/pkg.js')
const { packageReader, cLoop } = require('./common.js')

const KiB = 1024
const GiB = 1024 * 1024 * 1024
const SIZE = GiB
const SLICE = 64 * KiB
const TURN = 8 // names of the file read in turn: more than an authority keeps (posix_fdcache.c)

/** `count` offsets, uniform over [0, SIZE - SLICE], not aligned to anything. */
function offsets (count) {
  const raw = crypto.randomBytes(count * 4)
  const span = SIZE - SLICE + 1
  return Array.from({ length: count }, (_, i) => Math.floor((raw.readUInt32LE(i * 4) / 2 ** 32) * span))
}

async function rows (ctx) {
  const root = path.join(ctx.disk.dir, 'range')
  const file = path.join(root, 'big.bin')
  const free = fs.statfsSync(ctx.disk.dir)
  if (free.bavail * free.bsize < 2 * SIZE) {
    return [{ id: 'range-64k-of-1g', short: 'readRangeSync 64 KiB of 1 GiB', status: 'unavailable', reason: 'not available (under 2 GiB free for the 1 GiB file)', impls: [], comparisons: [], notes: [] }]
  }
  ctx.log('  readRange: writing a 1 GiB file')
  writeFile(file, SIZE) // real blocks (1 MiB of random bytes repeated), written once
  const turn = linkNames(file, TURN) // before any reader's atRest(): links move the ctime
  const n = ctx.quick ? 500 : 2000
  const at = offsets(n)
  // The package and fs reading the n slices through `names` in turn (one name: the
  // same file each time); `check(authority)` before timing.
  const impls = (names, check) => [
    {
      id: 'pkg',
      label: 'agent-os readRangeSync',
      role: 'package',
      setup: () => {
        const a = packageReader(ctx, root, null)
        if (typeof a.readRangeSync !== 'function') throw new Unavailable('not available (primitive not built): no readRangeSync()')
        if (check) check(a)
        const segs = names.map((name) => [name])
        return () => {
          let i = 0
          return timeSync(n, () => a.readRangeSync(segs[i % segs.length], { offset: at[i++], length: SLICE }).bytes)
        }
      }
    },
    {
      id: 'fs',
      label: 'fs.openSync + readSync + closeSync',
      role: 'alternative',
      setup: () => () => {
        const paths = names.map((name) => path.join(root, name))
        let i = 0
        return timeSync(n, () => {
          const fd = fs.openSync(paths[i % paths.length], 'r')
          try {
            const buf = Buffer.allocUnsafe(SLICE)
            fs.readSync(fd, buf, 0, SLICE, at[i++])
            return buf
          } finally {
            fs.closeSync(fd)
          }
        })
      }
    }
  ]
  const row = await runRow({
    id: 'range-64k-of-1g',
    short: 'readRangeSync 64 KiB of 1 GiB',
    title: 'readRangeSync, 64 KiB at a random offset of a 1 GiB file',
    where: `${ctx.disk.type}, ${ctx.disk.where}`,
    n,
    rounds: ctx.quick ? 9 : 21,
    bytesPerOp: SLICE,
    notes: [
      'The file holds real data (1 MiB of random bytes written 1024 times, not a sparse file, whose holes would read as zeros without touching the page cache), written once; it stays in the page cache (the reads are warm).',
      `Each round reads the same ${n} slices (offsets drawn once, uniform, unaligned) with both implementations; every read returns a fresh buffer (the alternative: Buffer.allocUnsafe(65536) per read, so neither zero-fills it).`,
      'The package reads one file again and again, as an agent paging through a log does: after its first read the authority keeps the descriptor (src/file_authority/posix_fdcache.c), and each read looks at the name (fstatat: the kept file, same identity and ctime), preadv through the kept descriptor and fstats it (the consistency check); the alternative opens the path, preads and closes. The row after next times these sequences in C, and the next row the package with nothing kept.'
    ],
    impls: impls(['big.bin'], (a) => {
      const probe = a.readRangeSync(['big.bin'], { offset: at[0], length: SLICE })
      const want = Buffer.alloc(SLICE)
      const fd = fs.openSync(file, 'r')
      fs.readSync(fd, want, 0, SLICE, at[0])
      fs.closeSync(fd)
      if (probe.size !== SIZE || !want.equals(probe.bytes)) throw new Error('readRangeSync did not return the slice the alternative reads')
    }),
    comparisons: [{ pkg: 'pkg', alt: 'fs', limit: 1.0, target: '<= 1.0x' }]
  }, ctx)
  // Every read a first read: the same slices over TURN names of the file in turn.
  const turnRow = await runRow({
    id: 'range-64k-of-1g-turn',
    short: `readRangeSync 64 KiB of 1 GiB, ${TURN} names in turn`,
    title: `readRangeSync, 64 KiB at a random offset of a 1 GiB file, through ${TURN} names of it in turn (nothing kept)`,
    where: `${ctx.disk.type}, ${ctx.disk.where}`,
    n,
    rounds: ctx.quick ? 9 : 21,
    bytesPerOp: SLICE,
    notes: [
      `The file has ${TURN} more names (hard links); read in turn, each read names a different path than the last ${TURN - 1}, more than the descriptors an authority keeps, so every package read is a first read: fstatat, openat, fstat, preadv, fstat, close. The alternative reads the same names.`
    ],
    impls: impls(turn),
    comparisons: [{ pkg: 'pkg', alt: 'fs', target: '-', note: 'reference: every read a first read' }]
  }, ctx)
  // The C loops in a row of their own: each is a process the harness spawns, and a
  // fork of this process between two JavaScript implementations' rounds made the one
  // after it pay page faults (copy-on-write of the heap its buffers come from) that the
  // other then did not; alternating only the two JavaScript implementations is fair.
  const cRow = await runRow({
    id: 'range-64k-of-1g-c',
    short: 'readRange calls in C, 64 KiB of 1 GiB',
    title: 'the two call sequences of the readRangeSync row in C (bench/c/range_loop.c), same file and slice size',
    where: `${ctx.disk.type}, ${ctx.disk.where}`,
    n,
    rounds: ctx.quick ? 9 : 21,
    bytesPerOp: SLICE,
    notes: [
      'The package\'s calls, a file read before: fstatat of the name in the retained root (the kept file), preadv through the kept descriptor, fstat; a first read: fstatat, openat (O_NOFOLLOW | O_NONBLOCK | O_NOCTTY), fstat, preadv, fstat, close; the plain ones: openat of the joined path, pread, close (what fs.openSync + readSync + closeSync make). Offsets of their own (a fixed pseudo-random sequence), a fresh malloc buffer per read.'
    ],
    impls: [
      {
        id: 'c-package',
        label: 'C loop, the package\'s calls',
        role: 'reference',
        setup: () => cLoop(ctx, 'range_loop', () => ['package', root, 'big.bin', String(n), String(SLICE)])
      },
      {
        id: 'c-first',
        label: 'C loop, the package\'s calls, a first read',
        role: 'reference',
        setup: () => cLoop(ctx, 'range_loop', () => ['first', root, 'big.bin', String(n), String(SLICE)])
      },
      {
        id: 'c-plain',
        label: 'C loop, openat + pread + close',
        role: 'reference',
        setup: () => cLoop(ctx, 'range_loop', () => ['plain', root, 'big.bin', String(n), String(SLICE)])
      }
    ],
    comparisons: [
      { pkg: 'c-package', alt: 'c-plain', target: '-', note: 'reference' },
      { pkg: 'c-first', alt: 'c-plain', target: '-', note: 'reference' }
    ],
    teardown: () => fs.rmSync(root, { recursive: true, force: true })
  }, ctx)
  return [row, turnRow, cRow]
}

module.exports = { rows }
