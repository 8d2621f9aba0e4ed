#!/usr/bin/env node
'use strict'
// node bench/update-docs.js RESULTS.json
// Rewrites the figures in docs/performance.md (between the "figures:start" and
// "figures:end" comments) from the JSON a run wrote with --json=RESULTS.json.

const fs = require('node:fs')
const path = require('node:path')
const { render } = require('./lib/markdown.js')

const file = process.argv[2]
if (!file) {
  process.stderr.write('usage: node bench/update-docs.js RESULTS.json\n')
  process.exit(2)
}
const result = JSON.parse(fs.readFileSync(file, 'utf8'))
const doc = path.join(__dirname, '..', 'docs', 'performance.md')
const text = fs.readFileSync(doc, 'utf8')
const start = '<!-- figures:start -->'
const end = '<!-- figures:end -->'
const a = text.indexOf(start)
const b = text.indexOf(end)
if (a === -1 || b === -1 || b < a) {
  process.stderr.write('docs/performance.md has no figures markers\n')
  process.exit(1)
}
fs.writeFileSync(doc, text.slice(0, a + start.length) + '\n' + render(result) + '\n' + text.slice(b))
process.stderr.write('docs/performance.md updated\n')
