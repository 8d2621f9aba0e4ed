'use strict'
// file-authority atomic writes, 4 KiB, on tmpfs and on a disk filesystem.

const fs = require('node:fs')
const path = require('node:path')
const { timeSync } = require('../lib/measure.js')
const { runRow } = require('../lib/row.js')
const { writeFile } = require('../lib/fixtures.js')
const { need, probe, alternative, Unavailable } = require('../lib/pkg.js')
const { cLoop, needOpenat2 } = require('./common.js')

const SIZE = 4096
const TEXT = 'abcdefghijklmnopqrstuvwxyz0123456789\n'.repeat(Math.ceil(SIZE / 37)).slice(0, SIZE)

async function writeRow (ctx, base, kind) {
  const root = path.join(base.dir, 'write')
  for (const sub of ['pkg', 'wfa', 'c-excl', 'c-tmpfile']) writeFile(path.join(root, sub, 'file.txt'), SIZE)
  const onTmpfs = kind === 'tmpfs'
  const n = onTmpfs ? (ctx.quick ? 300 : 3000) : (ctx.quick ? 6 : 40)
  const cMode = ctx.cWriteMode
  const impls = [
    {
      id: 'pkg',
      label: 'agent-os writeTextSync',
      role: 'package',
      setup: () => {
        const fa = need(ctx.parts.fileAuthority, ['openWriteAuthoritySync'])
        const w = probe('openWriteAuthoritySync', () => fa.openWriteAuthoritySync(root))
        ctx.onExit(() => w.closeSync())
        probe('writeTextSync', () => w.writeTextSync(['pkg', 'file.txt'], TEXT))
        if (fs.readFileSync(path.join(root, 'pkg', 'file.txt'), 'utf8') !== TEXT) throw new Error('writeTextSync wrote other bytes')
        return () => timeSync(n, () => w.writeTextSync(['pkg', 'file.txt'], TEXT))
      }
    },
    {
      id: 'wfa',
      label: 'write-file-atomic (sync)',
      role: 'alternative',
      setup: () => {
        const writeFileAtomic = alternative('write-file-atomic')
        const file = path.join(root, 'wfa', 'file.txt')
        return () => timeSync(n, () => writeFileAtomic.sync(file, TEXT))
      }
    }
  ]
  for (const mode of [cMode, cMode === 'excl' ? 'tmpfile' : 'excl']) {
    impls.push({
      id: `c-${mode}`,
      label: mode === 'excl' ? 'C loop, exclusive temp name' : 'C loop, O_TMPFILE + linkat',
      role: mode === cMode ? 'alternative' : 'reference',
      setup: () => {
        needOpenat2(ctx)
        return cLoop(ctx, 'write_loop', () => [mode, 'openat2', root, `c-${mode}/file.txt`, String(SIZE), String(n)])
      }
    })
  }
  const comparisons = [
    onTmpfs
      ? { pkg: 'pkg', alt: 'wfa', limit: 0.2, target: '<= 0.2x' }
      : { pkg: 'pkg', alt: 'wfa', target: '-', note: 'reference' },
    { pkg: 'pkg', alt: `c-${cMode}`, limit: 1.2, target: '<= 1.2x' },
    { pkg: 'pkg', alt: `c-${cMode === 'excl' ? 'tmpfile' : 'excl'}`, target: '-', note: 'reference' }
  ]
  const row = await runRow({
    id: `write-4k-${kind}`,
    short: `writeTextSync 4 KiB, ${kind}`,
    title: `writeTextSync, 4 KiB, replacing a file on ${kind === 'tmpfs' ? 'tmpfs' : 'a disk filesystem'}`,
    where: `${base.type}, ${base.where}`,
    n,
    rounds: ctx.quick ? (onTmpfs ? 9 : 5) : (onTmpfs ? 21 : 11),
    notes: [
      'The C loops make the package\'s calls: openat2 parent, fstatat target, O_TMPFILE (or getrandom + exclusive temp name), fstat, write, fchmod, fsync, (getrandom + linkat), close, renameat2 (exchange), fstatat and unlinkat of the replaced entry, fsync parent, fstatat re-check, close. The target is on the loop the syscall check found equal to the package.',
      'write-file-atomic fsyncs the file but not the parent directory, and resolves the path with realpath.'
    ],
    impls,
    comparisons,
    teardown: () => fs.rmSync(root, { recursive: true, force: true })
  }, ctx)
  return row
}

/** writeTextSync 4 KiB with durable: false on tmpfs, against the C loop of the same
 * calls without the fsyncs. */
async function volatileWriteRow (ctx) {
  const base = ctx.tmpfs
  const root = path.join(base.dir, 'write-volatile')
  for (const sub of ['pkg', 'c']) writeFile(path.join(root, sub, 'file.txt'), SIZE)
  const n = ctx.quick ? 300 : 3000
  const cMode = `${ctx.cWriteMode === 'excl' ? 'excl' : 'tmpfile'}-nosync`
  return runRow({
    id: 'write-4k-tmpfs-volatile',
    short: 'writeTextSync 4 KiB, tmpfs, durable: false',
    title: 'writeTextSync(segments, text, { durable: false }), 4 KiB, replacing a file on tmpfs',
    where: `${base.type}, ${base.where}`,
    n,
    rounds: ctx.quick ? 9 : 21,
    notes: ['The C loop makes the package\'s calls for a write (write-4k rows) without the two fsyncs, as durable: false skips them; atomicity stays (the staged file, the exchange, the check of the committed name).'],
    impls: [
      {
        id: 'pkg',
        label: 'agent-os writeTextSync({ durable: false })',
        role: 'package',
        setup: () => {
          const fa = need(ctx.parts.fileAuthority, ['openWriteAuthoritySync'])
          const w = probe('openWriteAuthoritySync', () => fa.openWriteAuthoritySync(root))
          ctx.onExit(() => w.closeSync())
          probe('writeTextSync', () => w.writeTextSync(['pkg', 'file.txt'], TEXT, { durable: false }))
          if (fs.readFileSync(path.join(root, 'pkg', 'file.txt'), 'utf8') !== TEXT) throw new Error('writeTextSync wrote other bytes')
          return () => timeSync(n, () => w.writeTextSync(['pkg', 'file.txt'], TEXT, { durable: false }))
        }
      },
      {
        id: 'c',
        label: 'C loop, the same calls without fsync',
        role: 'alternative',
        setup: () => {
          needOpenat2(ctx)
          return cLoop(ctx, 'write_loop', () => [cMode, 'openat2', root, 'c/file.txt', String(SIZE), String(n)])
        }
      }
    ],
    comparisons: [{ pkg: 'pkg', alt: 'c', limit: 1.5, target: '<= 1.5x' }],
    teardown: () => fs.rmSync(root, { recursive: true, force: true })
  }, ctx)
}

/** writeTextSync then readBytesSync of the same 4 KiB file, in a loop, on tmpfs: an
 * agent reading back what it just wrote (issue 28). */
async function cycleRow (ctx) {
  const base = ctx.tmpfs
  const root = path.join(base.dir, 'cycle')
  const segments = ['d1', 'd2', 'd3', 'file.txt']
  const ids = ['pkg', 'wfa', 'fs']
  for (const id of ids) writeFile(path.join(root, id, ...segments), SIZE)
  const file = (id) => path.join(root, id, ...segments)
  const expected = Buffer.from(TEXT)
  const check = (bytes, what) => {
    if (!bytes || Buffer.compare(bytes, expected) !== 0) throw new Error(`${what} read back other bytes than were written`)
  }
  const n = ctx.quick ? 200 : 2000
  const budget = { maxBytes: 1 << 20 }
  return runRow({
    id: 'write-read-cycle-tmpfs',
    short: 'write + read 4 KiB, tmpfs',
    title: 'a 4 KiB text written, then read back whole, in a loop, 3 directories deep on tmpfs',
    where: `${base.type}, ${base.where}`,
    n,
    rounds: ctx.quick ? 9 : 21,
    notes: [
      'One operation is a cycle: the write of the 4 KiB text (replacing the file) and the read of the same file right after it, so every read is of a file changed microseconds before (the package reads it on its checked path for files changed within the last second). Each implementation has its own file, 3 directories deep, under the same tmpfs directory; the first cycle of each is checked to read back the bytes written.',
      'The package: writeTextSync(segments, text) (durable, its default) on a WriteAuthority and readBytesSync(segments) on a ReadAuthority opened with sameRootAs, both opened once. write-file-atomic: .sync(path, text) with its defaults (fsync on), as in the writeTextSync rows, then fs.readFileSync(path). The reference fs.writeFileSync + fs.readFileSync rewrites the file in place, neither atomic nor durable.'
    ],
    impls: [
      {
        id: 'pkg',
        label: 'agent-os writeTextSync + readBytesSync',
        role: 'package',
        setup: () => {
          const fa = need(ctx.parts.fileAuthority, ['openWriteAuthoritySync', 'openReadAuthoritySync'])
          const w = probe('openWriteAuthoritySync', () => fa.openWriteAuthoritySync(path.join(root, 'pkg')))
          ctx.onExit(() => w.closeSync())
          const r = probe('openReadAuthoritySync', () => fa.openReadAuthoritySync(path.join(root, 'pkg'), { sameRootAs: w }))
          ctx.onExit(() => r.closeSync())
          const cycle = () => {
            w.writeTextSync(segments, TEXT)
            return r.readBytesSync(segments, budget)
          }
          check(probe('writeTextSync + readBytesSync', cycle), 'writeTextSync + readBytesSync')
          return () => timeSync(n, cycle)
        }
      },
      {
        id: 'wfa',
        label: 'write-file-atomic (sync) + fs.readFileSync',
        role: 'alternative',
        setup: () => {
          const writeFileAtomic = alternative('write-file-atomic')
          const f = file('wfa')
          const cycle = () => {
            writeFileAtomic.sync(f, TEXT)
            return fs.readFileSync(f)
          }
          check(cycle(), 'write-file-atomic + fs.readFileSync')
          return () => timeSync(n, cycle)
        }
      },
      {
        id: 'fs',
        label: 'fs.writeFileSync + fs.readFileSync',
        role: 'reference',
        setup: () => {
          const f = file('fs')
          const cycle = () => {
            fs.writeFileSync(f, TEXT)
            return fs.readFileSync(f)
          }
          check(cycle(), 'fs.writeFileSync + fs.readFileSync')
          return () => timeSync(n, cycle)
        }
      }
    ],
    comparisons: [
      { pkg: 'pkg', alt: 'wfa', limit: 0.5, target: '<= 0.5x' },
      { pkg: 'pkg', alt: 'fs', target: '-', note: 'reference' }
    ],
    teardown: () => fs.rmSync(root, { recursive: true, force: true })
  }, ctx)
}

const LINE = JSON.stringify({ at: '2026-01-01T00:00:00.000Z', tool: 'read', path: 'src/a.ts', outcome: 'ok', note: 'x'.repeat(100) }).padEnd(199, ' ') + '\n'

/** appendTextSync of a 200-byte line, durable or not, against fs.appendFileSync (with
 * fsync for the durable row). */
async function appendRow (ctx, durable) {
  const base = ctx.disk
  const root = path.join(base.dir, durable ? 'append-durable' : 'append')
  fs.mkdirSync(root, { recursive: true })
  const n = durable ? (ctx.quick ? 20 : 200) : (ctx.quick ? 2000 : 20000)
  const file = path.join(root, 'fs.log')
  const impls = [
    {
      id: 'pkg',
      label: `agent-os appendTextSync${durable ? '' : '({ durable: false })'}`,
      role: 'package',
      setup: () => {
        const fa = need(ctx.parts.fileAuthority, ['openWriteAuthoritySync'])
        const w = probe('openWriteAuthoritySync', () => fa.openWriteAuthoritySync(root))
        ctx.onExit(() => w.closeSync())
        if (typeof w.appendTextSync !== 'function') throw new Unavailable('not available (primitive not built): no appendTextSync()')
        const options = { durable }
        w.appendTextSync(['pkg.log'], LINE, options)
        return () => timeSync(n, () => w.appendTextSync(['pkg.log'], LINE, options))
      }
    },
    durable
      ? {
          id: 'fs',
          label: 'fs.openSync(a) + appendFileSync(fd) + fsyncSync + closeSync',
          role: 'alternative',
          setup: () => () => timeSync(n, () => {
            const fd = fs.openSync(file, 'a')
            try {
              fs.appendFileSync(fd, LINE)
              fs.fsyncSync(fd)
            } finally {
              fs.closeSync(fd)
            }
          })
        }
      : {
          id: 'fs',
          label: 'fs.appendFileSync',
          role: 'alternative',
          setup: () => () => timeSync(n, () => fs.appendFileSync(file, LINE))
        }
  ]
  return runRow({
    id: durable ? 'append-200-durable' : 'append-200',
    short: `appendTextSync 200 B${durable ? ', durable' : ', durable: false'}`,
    title: `appendTextSync, a 200-byte line, ${durable ? 'durable (fdatasync)' : 'durable: false'}, to a file directly in the root`,
    where: `${base.type}, ${base.where}`,
    n,
    rounds: ctx.quick ? 9 : 21,
    notes: [
      'The package looks at the entry before opening it (no link, FIFO or device is ever opened) and checks the descriptor after: fstatat, openat (O_APPEND | O_NOFOLLOW | O_NONBLOCK), fstat, write, ' + (durable ? 'fdatasync, ' : '') + 'close; fs.appendFileSync opens, writes and closes.'
    ],
    impls,
    comparisons: [{ pkg: 'pkg', alt: 'fs', limit: 1.2, target: '<= 1.2x' }],
    teardown: () => fs.rmSync(root, { recursive: true, force: true })
  }, ctx)
}

async function rows (ctx) {
  const out = []
  if (ctx.tmpfs.dir) out.push(await writeRow(ctx, ctx.tmpfs, 'tmpfs'))
  else out.push({ id: 'write-4k-tmpfs', short: 'writeTextSync 4 KiB, tmpfs', status: 'unavailable', reason: `not available (${ctx.tmpfs.note})`, impls: [], comparisons: [], notes: [] })
  if (ctx.disk.dir) out.push(await writeRow(ctx, ctx.disk, 'disk'))
  if (ctx.tmpfs.dir) out.push(await volatileWriteRow(ctx))
  else out.push({ id: 'write-4k-tmpfs-volatile', short: 'writeTextSync 4 KiB, tmpfs, durable: false', status: 'unavailable', reason: `not available (${ctx.tmpfs.note})`, impls: [], comparisons: [], notes: [] })
  if (ctx.tmpfs.dir) out.push(await cycleRow(ctx))
  else out.push({ id: 'write-read-cycle-tmpfs', short: 'write + read 4 KiB, tmpfs', status: 'unavailable', reason: `not available (${ctx.tmpfs.note})`, impls: [], comparisons: [], notes: [] })
  if (ctx.disk.dir) out.push(await appendRow(ctx, false), await appendRow(ctx, true))
  return out
}

module.exports = { rows }
