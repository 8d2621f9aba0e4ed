'use strict'
// file-authority walk: a tree of 100 000 entries, against fs.readdirSync's recursive
// listing put into the walk's order.

const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { timeSync } = require('../lib/measure.js')
const { runRow } = require('../lib/row.js')
const { Unavailable } = require('../lib/pkg.js')
const { packageReader } = require('./common.js')

const ENTRIES = 100000
const FANOUT = 10 // directories per level, three levels: 1110 directories
const LEVELS = 3

/** A tree of exactly `count` entries under `dir`: FANOUT^1 + ... + FANOUT^LEVELS
 * directories, the rest empty files spread over the deepest ones, named by a hash so
 * that creation order is not name order. Returns the directory count. */
function makeTree (dir, count) {
  let level = [dir]
  let dirs = 0
  fs.mkdirSync(dir, { recursive: true })
  for (let l = 0; l < LEVELS; l++) {
    const next = []
    for (const parent of level) {
      for (let i = 0; i < FANOUT; i++) {
        const p = path.join(parent, 'd' + crypto.createHash('sha1').update(`${parent}/${i}`).digest('hex').slice(0, 8))
        fs.mkdirSync(p)
        next.push(p)
        dirs++
      }
    }
    level = next
  }
  for (let i = 0; dirs + i < count; i++) {
    const name = 'f' + crypto.createHash('sha1').update(String(i)).digest('hex').slice(0, 12) + '.txt'
    fs.closeSync(fs.openSync(path.join(level[i % level.length], name), 'w'))
  }
  return dirs
}

const KIND = (d) => d.isFile() ? 'file' : d.isDirectory() ? 'directory' : d.isSymbolicLink() ? 'symlink' : 'other'

/** Everything beneath `dir` as { path, kind } with `path` the relative path joined with
 * '/', in the walk's order: depth-first, each directory's entries in code-unit order, a
 * directory before its contents (sorted on the path with the separator as U+0000, which
 * sorts before every character a name may hold). */
function fsWalk (dir) {
  const dirents = fs.readdirSync(dir, { recursive: true, withFileTypes: true })
  const skip = dir.length + 1
  const out = new Array(dirents.length)
  for (let i = 0; i < dirents.length; i++) {
    const d = dirents[i]
    const parent = d.parentPath ?? d.path
    const rel = parent.length > dir.length ? parent.slice(skip) + '/' + d.name : d.name
    out[i] = { path: rel, kind: KIND(d), key: rel.replaceAll('/', '\0') }
  }
  out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return out
}

async function rows (ctx) {
  const root = path.join(ctx.disk.dir, 'walk')
  const tree = path.join(root, 'tree')
  ctx.log(`  walk: building a tree of ${ENTRIES} entries`)
  const dirs = makeTree(tree, ENTRIES)
  const n = 1
  const opts = { maxEntries: ENTRIES }
  const row = await runRow({
    id: 'walk-100k',
    short: 'walkSync 100 000 entries',
    title: `walkSync, a tree of ${ENTRIES} entries (${dirs} directories three levels deep, ${ENTRIES - dirs} empty files in the deepest)`,
    where: `${ctx.disk.type}, ${ctx.disk.where}`,
    n,
    rounds: ctx.quick ? 5 : 11,
    notes: [
      'The alternative is fs.readdirSync(dir, { recursive: true, withFileTypes: true }), each entry made { path, kind } with path the relative path joined with "/" (a string; the package returns an array of segments) and kind from the Dirent (not following links, as walk), then sorted into the walk\'s order (depth-first, code-unit order, a directory before its contents). Checked equal, entry by entry, before timing.',
      'Page cache and dentry cache warm (one untimed round each).'
    ],
    impls: [
      {
        id: 'pkg',
        label: 'agent-os walkSync',
        role: 'package',
        setup: () => {
          const a = packageReader(ctx, root, null)
          if (typeof a.walkSync !== 'function') throw new Unavailable('not available (primitive not built): no walkSync()')
          const got = a.walkSync(['tree'], opts)
          const want = fsWalk(tree)
          if (got.length !== ENTRIES || got.truncated || want.length !== ENTRIES) throw new Error(`walkSync returned ${got.length} entries, readdirSync ${want.length}, expected ${ENTRIES}`)
          for (let i = 0; i < ENTRIES; i++) {
            if (got[i].path.join('/') !== want[i].path || got[i].kind !== want[i].kind) throw new Error(`walkSync and the alternative differ at entry ${i}`)
          }
          return () => timeSync(n, () => a.walkSync(['tree'], opts))
        }
      },
      {
        id: 'fs',
        label: 'fs.readdirSync({ recursive, withFileTypes }) + sort',
        role: 'alternative',
        setup: () => () => timeSync(n, () => fsWalk(tree))
      }
    ],
    comparisons: [{ pkg: 'pkg', alt: 'fs', limit: 1.0, target: '<= 1.0x' }],
    teardown: () => fs.rmSync(root, { recursive: true, force: true })
  }, ctx)
  return [row, await excludeRow(ctx)]
}

/** walkSync with exclude: a workspace of ENTRIES entries whose node_modules and .git hold
 * 90 % of them, against a recursive readdir filtered after the fact. */
async function excludeRow (ctx) {
  const root = path.join(ctx.disk.dir, 'walk-exclude')
  const ws = path.join(root, 'ws')
  ctx.log(`  walk: building a workspace of ${ENTRIES} entries, 90 % in node_modules and .git`)
  fs.mkdirSync(ws, { recursive: true })
  const parts = [['src', ENTRIES * 0.1 - 3], ['node_modules', ENTRIES * 0.8], ['.git', ENTRIES * 0.1]]
  for (const [name, count] of parts) makeTree(path.join(ws, name), count)
  const exclude = ['node_modules', '.git']
  const skip = new Set(exclude)
  const opts = { maxEntries: ENTRIES, exclude }
  const kept = ENTRIES * 0.1 - 3 + 1 // src's contents and src itself
  const fsFiltered = () => fs.readdirSync(ws, { recursive: true, withFileTypes: true })
    .filter((d) => !skip.has(d.name) && !path.relative(ws, d.parentPath ?? d.path).split(path.sep).some((c) => skip.has(c)))
  const n = 1
  return runRow({
    id: 'walk-exclude-100k',
    short: 'walkSync 100 000 entries, exclude',
    title: `walkSync(['ws'], { exclude: ['node_modules', '.git'] }), a workspace of ${ENTRIES} entries, ${ENTRIES * 0.9} of them in node_modules and .git`,
    where: `${ctx.disk.type}, ${ctx.disk.where}`,
    n,
    rounds: ctx.quick ? 5 : 11,
    notes: [
      'The walk never enters an excluded directory; the alternative, fs.readdirSync(dir, { recursive: true, withFileTypes: true }) with the excluded subtrees filtered out afterwards, reads them all (and does not sort). Both give the same entries (checked before timing).',
      'Page cache and dentry cache warm (one untimed round each).'
    ],
    impls: [
      {
        id: 'pkg',
        label: 'agent-os walkSync({ exclude })',
        role: 'package',
        setup: () => {
          const a = packageReader(ctx, root, null)
          if (typeof a.walkSync !== 'function') throw new Unavailable('not available (primitive not built): no walkSync()')
          const got = a.walkSync(['ws'], opts)
          const want = fsFiltered()
          if (got.length !== kept || got.truncated || want.length !== kept) throw new Error(`walkSync returned ${got.length} entries, the filtered readdir ${want.length}, expected ${kept}`)
          return () => timeSync(n, () => a.walkSync(['ws'], opts))
        }
      },
      {
        id: 'fs',
        label: 'fs.readdirSync({ recursive, withFileTypes }) + filter',
        role: 'alternative',
        setup: () => () => timeSync(n, fsFiltered)
      }
    ],
    comparisons: [{ pkg: 'pkg', alt: 'fs', limit: 0.2, target: '<= 0.2x' }],
    teardown: () => fs.rmSync(root, { recursive: true, force: true })
  }, ctx)
}

module.exports = { rows, makeTree, fsWalk }
