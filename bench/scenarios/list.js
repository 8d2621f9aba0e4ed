'use strict'
// file-authority listing: 10 000 entries, and the series by entry count.

const fs = require('node:fs')
const path = require('node:path')
const { timeSync } = require('../lib/measure.js')
const { runRow } = require('../lib/row.js')
const { runSeries } = require('../lib/series.js')
const { makeListing } = require('../lib/fixtures.js')
const { Unavailable } = require('../lib/pkg.js')
const { packageReader } = require('./common.js')

function byName (a, b) {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}

function fsList (dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).sort(byName)
}

function pkgList (ctx, root, segments) {
  const a = packageReader(ctx, root, null)
  if (typeof a.listSync !== 'function') throw new Unavailable('not available (primitive not built): no listSync()')
  const listing = a.listSync(segments)
  if (!Array.isArray(listing)) throw new Unavailable('listSync returned no listing for the fixture directory')
  return a
}

async function rows (ctx) {
  const root = path.join(ctx.disk.dir, 'list')
  const count = 10000
  makeListing(path.join(root, 'big'), count)
  const n = ctx.quick ? 3 : 20
  const row = await runRow({
    id: 'list-10k',
    short: 'listSync 10 000 entries',
    title: 'listSync, a directory of 10 000 entries (every tenth a directory)',
    where: `${ctx.disk.type}, ${ctx.disk.where}`,
    n,
    rounds: ctx.quick ? 9 : 21,
    notes: ['The alternative sorts by name in code-unit order, as listSync returns it.'],
    impls: [
      {
        id: 'pkg',
        label: 'agent-os listSync',
        role: 'package',
        setup: () => {
          const a = pkgList(ctx, root, ['big'])
          const got = a.listSync(['big']).length
          if (got !== count) throw new Error(`listSync returned ${got} entries, expected ${count}`)
          return () => timeSync(n, () => a.listSync(['big']))
        }
      },
      {
        id: 'fs',
        label: 'fs.readdirSync({ withFileTypes }) + sort',
        role: 'alternative',
        setup: () => () => timeSync(n, () => fsList(path.join(root, 'big')))
      }
    ],
    comparisons: [{ pkg: 'pkg', alt: 'fs', limit: 1.0, target: '<= 1.0x' }]
  }, ctx)
  const stats = await runRow({
    id: 'list-stats-10k',
    short: 'listSync withStats 10 000 entries',
    title: 'listSync(segments, { withStats: true }), a directory of 10 000 entries (every tenth a directory)',
    where: `${ctx.disk.type}, ${ctx.disk.where}`,
    n,
    rounds: ctx.quick ? 9 : 21,
    notes: [
      'Each entry gets the stat stat() returns (statx relative to the listed directory\'s descriptor, the version string included). The alternative is what a consumer writes for MCP\'s list_directory_with_sizes: fs.readdirSync, fs.lstatSync of each path, sort by name.'
    ],
    impls: [
      {
        id: 'pkg',
        label: 'agent-os listSync({ withStats: true })',
        role: 'package',
        setup: () => {
          const a = pkgList(ctx, root, ['big'])
          const got = a.listSync(['big'], { withStats: true })
          if (got.length !== count || got.some((e) => e.stat === undefined)) throw new Error('listSync withStats returned other entries')
          return () => timeSync(n, () => a.listSync(['big'], { withStats: true }))
        }
      },
      {
        id: 'fs',
        label: 'fs.readdirSync + fs.lstatSync each + sort',
        role: 'alternative',
        setup: () => () => timeSync(n, () => {
          const dir = path.join(root, 'big')
          return fs.readdirSync(dir).map((name) => ({ name, stat: fs.lstatSync(path.join(dir, name)) })).sort(byName)
        })
      }
    ],
    comparisons: [{ pkg: 'pkg', alt: 'fs', limit: 0.5, target: '<= 0.5x' }]
  }, ctx)
  fs.rmSync(root, { recursive: true, force: true })
  return [row, stats]
}

async function series (ctx) {
  const root = path.join(ctx.disk.dir, 'listing')
  const counts = [10, 100, 1000, 10000, 100000].filter((c) => !ctx.quick || c <= 10000)
  const perRound = ctx.quick ? 10000 : 100000
  let reader
  const s = await runSeries({
    id: 'list-count',
    title: `listing time vs entry count (${ctx.disk.type}; ${ctx.quick ? 5 : 9} rounds; about ${perRound} entries listed per round and implementation)`,
    unitLabel: 'entries',
    perUnit: 'entry',
    rounds: ctx.quick ? 5 : 9,
    points: counts.map((c) => ({ units: c, label: String(c), n: Math.max(2, Math.round(perRound / c)), name: `n${c}` })),
    impls: [
      {
        id: 'pkg',
        label: 'agent-os listSync',
        setup: (p) => {
          if (!fs.existsSync(path.join(root, p.name))) makeListing(path.join(root, p.name), p.units)
          reader = reader || pkgList(ctx, root, [])
          reader.listSync([p.name])
          return () => timeSync(p.n, () => reader.listSync([p.name]))
        }
      },
      {
        id: 'fs',
        label: 'readdirSync + sort',
        setup: (p) => {
          if (!fs.existsSync(path.join(root, p.name))) makeListing(path.join(root, p.name), p.units)
          return () => timeSync(p.n, () => fsList(path.join(root, p.name)))
        }
      }
    ]
  }, ctx)
  fs.rmSync(root, { recursive: true, force: true })
  return [s]
}

module.exports = { rows, series }
