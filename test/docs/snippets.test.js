'use strict'
// Every fenced JavaScript snippet of README.md and docs/*.md runs as written, so the
// docs cannot drift from the package.
//
// How a snippet runs: ```js (or ```mjs, ```javascript) is an ES module, with top-level
// await and `import`; ```cjs is a CommonJS file (`require`, no top-level await). Each
// runs alone, as a file in a fresh temporary directory that is its working directory
// and whose node_modules/@scope/agent-os is this package, and must exit 0 within 30 s
// (a thrown error or an unhandled rejection fails it). So a snippet makes what it needs
// (directories, files, child processes) relative to the working directory.
// A snippet that is not meant to run (a signature, a fragment, an output) says so in its
// info string: ```js nocheck, ```ts nocheck. TypeScript is not run, so an unmarked ```ts
// snippet fails. Other languages (```sh, bare ```) are not code to run and are counted.
// A snippet that runs POSIX programs (sh, sleep) says so, ```js posix: it runs
// everywhere but Windows, where it is skipped, titled.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { makeConsumer, repo } = require('../helpers/consumer.js')

const RUN = { js: '.mjs', mjs: '.mjs', javascript: '.mjs', cjs: '.cjs' }
const TYPESCRIPT = new Set(['ts', 'typescript', 'mts', 'cts'])

// Files whose snippets belong to docs being rewritten elsewhere: a failing snippet there
// is reported as pending (with its error) rather than failing the suite. Remove a file
// from this list once its snippets run.
const PENDING = new Set([])

/** The fenced blocks of a Markdown text: [{ line, lang, flags, code }]. */
function fences (text) {
  const out = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)(.*)$/.exec(lines[i])
    if (!open) continue
    const [, indent, marker, lang, rest] = open
    if (marker[0] === '`' && rest.includes('`')) continue // inline code, not a fence (CommonMark)
    const body = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = new RegExp(`^ {0,3}${marker[0]}{${marker.length},}\\s*$`).exec(lines[j])
      if (close) break
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j])
    }
    out.push({ line: i + 1, lang: lang.toLowerCase(), flags: rest.trim().split(/\s+/).filter(Boolean), code: body.join('\n') + '\n' })
    i = j
  }
  return out
}

const docs = ['README.md', ...fs.readdirSync(path.join(repo, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]
const counts = { run: 0, nocheck: 0, other: 0, pending: 0 } // pending: of the run and TypeScript ones

describe('docs: every snippet runs as written', function () {
  this.timeout(60000)

  for (const doc of docs) {
    const blocks = fences(fs.readFileSync(path.join(repo, doc), 'utf8'))
    describe(doc, function () {
      for (const block of blocks) {
        const name = `${doc}:${block.line} (${[block.lang || 'plain', ...block.flags].join(' ')})`
        if (block.flags.includes('nocheck')) {
          counts.nocheck++
          continue
        }
        if (TYPESCRIPT.has(block.lang)) {
          it(name, function () {
            if (PENDING.has(doc)) {
              counts.pending++
              this.test.title += ' — pending, fails today: an unmarked TypeScript snippet'
              this.skip()
            }
            assert.fail(`${name}: TypeScript snippets are not run; mark a type-only one \`${block.lang} nocheck\``)
          })
          continue
        }
        const ext = RUN[block.lang]
        if (!ext) {
          counts.other++
          continue
        }
        counts.run++
        it(name, function () {
          if (block.flags.includes('posix') && process.platform === 'win32') {
            this.test.title += ' [skipped: a POSIX snippet (it runs sh or sleep), which Windows has not]'
            this.skip()
          }
          const consumer = makeConsumer()
          try {
            const file = 'snippet' + ext
            fs.writeFileSync(path.join(consumer.dir, file), block.code)
            const r = consumer.node([file], { NODE_OPTIONS: '' })
            const ok = r.status === 0 && !r.error
            if (!ok && PENDING.has(doc)) {
              counts.pending++
              const first = (r.stderr || String(r.error)).split('\n').find((l) => /^(\w*Error|Error)\b/.test(l)) || `exit ${r.status}`
              this.test.title += ` — pending, fails today: ${first.trim().slice(0, 160)}`
              this.skip()
            }
            assert.ok(ok, `${name} exited ${r.status}${r.signal ? ` (${r.signal})` : ''}:\n${r.stdout}\n${r.stderr}`)
          } finally {
            consumer.cleanup()
          }
        })
      }
    })
  }

  after(function () {
    console.log(`      snippets: ${counts.run} run, ${counts.pending} pending, ${counts.nocheck} marked nocheck, ${counts.other} in other languages`)
  })
})

module.exports = { fences }

describe('docs: the snippet extractor', function () {
  it('reads each fence\'s language, flags and body, and ends a fence only at its own marker', function () {
    const md = ['text', '```` ```js ```` is inline code', '```js nocheck', 'a()', '```', '', '````md', '```js', 'inner', '```', '````', '  ```cjs', '  b()', '  ```', '```'].join('\n')
    assert.deepEqual(fences(md), [
      { line: 3, lang: 'js', flags: ['nocheck'], code: 'a()\n' },
      { line: 7, lang: 'md', flags: [], code: '```js\ninner\n```\n' },
      { line: 12, lang: 'cjs', flags: [], code: 'b()\n' },
      { line: 15, lang: '', flags: [], code: '\n' }
    ])
  })
})
