'use strict'
// Replays the libFuzzer targets' seed corpus and every committed crash
// (fuzz/regressions/<target>/) through the same targets built with the system C
// compiler and a plain main() (fuzz/replay_main.c), and compares the C segment rules
// (src/file_authority/segments.c) with the JavaScript ones
// (lib/internal/file-authority-common.js) on a generated corpus. Cheap: part of the
// default suite.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { segmentProblem } = require('../../lib/internal/file-authority-common.js')

const root = path.join(__dirname, '..', '..')
const fuzzDir = path.join(root, 'fuzz')
const CORE = {
  utf8: ['src/file_authority/segments.c'],
  segments: ['src/file_authority/segments.c'],
  resolver: ['src/file_authority/segments.c', 'src/file_authority/posix_walk.c',
    'src/file_authority/posix_read.c', 'src/file_authority/posix_fdcache.c', 'src/file_authority/posix_beneath.c', 'src/file_authority/posix_settle.c', 'src/file_authority/read.c', 'src/file_authority/version.c', 'src/file_authority/posix_list.c']
}

let work

function compile (out, sources) {
  const cc = process.env.CC || 'cc'
  const r = spawnSync(cc, ['-std=c11', '-D_GNU_SOURCE', '-O1', '-g', '-I', path.join(root, 'src'), ...sources, '-o', out],
    { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`cannot compile ${path.basename(out)}: ${r.stderr}`)
  return out
}

function inputs (target) {
  const out = []
  for (const sub of ['corpus', 'regressions']) {
    const dir = path.join(fuzzDir, sub, target)
    if (!fs.existsSync(dir)) continue
    for (const f of fs.readdirSync(dir).sort()) out.push(path.join(dir, f))
  }
  return out
}

describe('fuzz regressions and the C/JavaScript segment rules', function () {
  this.timeout(120000)

  before(function () {
    if (process.platform !== 'linux') this.skip()
    if (spawnSync(process.env.CC || 'cc', ['--version']).status !== 0) this.skip() // no C compiler
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-fuzz-replay-'))
  })
  after(function () {
    if (work) fs.rmSync(work, { recursive: true, force: true })
  })

  for (const target of Object.keys(CORE)) {
    it(`${target}: the seed corpus and every committed crash replay without a broken invariant`, function () {
      const files = inputs(target)
      assert.ok(files.length > 0)
      const bin = compile(path.join(work, `${target}_replay`), [path.join(fuzzDir, `${target}_fuzz.c`),
        path.join(fuzzDir, 'replay_main.c'), ...CORE[target].map((f) => path.join(root, f))])
      const r = spawnSync(bin, files, { encoding: 'utf8', env: { ...process.env, TMPDIR: work } })
      assert.equal(r.status, 0, `${target} replay failed: ${r.stderr}`)
      assert.match(r.stdout, new RegExp(`replayed ${files.length}\\b`))
    })
  }

  it('the C segment check and the JavaScript segment rules agree on 20 000 generated segments', function () {
    const bin = compile(path.join(work, 'segcheck'), [path.join(fuzzDir, 'segcheck.c'), path.join(root, 'src/file_authority/segments.c')])
    // Deterministic corpus: edge cases plus seeded random strings over an alphabet
    // that hits every rule (separators, dots, NUL, lone surrogates, multi-byte, length).
    const cases = ['a', '.', '..', '...', '.a', 'a.', 'a/b', 'a\\b', '', ' ', 'é', '😀', '\ud800', '\udfff', 'a\ud83d',
      'x'.repeat(255), 'x'.repeat(256), 'é'.repeat(127), 'é'.repeat(128), '😀'.repeat(63), '😀'.repeat(64), 'CON', 'a:b']
    let s = 12345
    const next = () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s >>> 8 }
    const alphabet = ['a', '.', '/', '\\', 'é', '😀', '\ud800', '\udc00', '\u0085', 'x'.repeat(40), ' ', ':']
    while (cases.length < 20000) {
      let str = ''
      const n = next() % 10
      for (let i = 0; i < n; i++) str += alphabet[next() % alphabet.length]
      cases.push(str)
    }
    // What the C core receives for a JavaScript string: its UTF-8 bytes, and for lone
    // surrogates the generalized UTF-8 form (which the C check must refuse on its own).
    const wtf8 = (str) => {
      const parts = []
      for (const ch of str) {
        const cp = ch.codePointAt(0)
        if (cp >= 0xd800 && cp <= 0xdfff) parts.push(Buffer.from([0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]))
        else parts.push(Buffer.from(ch, 'utf8'))
      }
      return Buffer.concat(parts)
    }
    const input = cases.map((c) => wtf8(c).toString('hex')).join('\n') + '\n'
    const r = spawnSync(bin, [], { input, encoding: 'utf8', maxBuffer: 1 << 24 })
    assert.equal(r.status, 0, r.stderr)
    const verdicts = r.stdout.trim().split('\n')
    assert.equal(verdicts.length, cases.length)
    let disagreements = 0
    const examples = []
    cases.forEach((c, i) => {
      const js = !segmentProblem(c, false)
      const cOk = verdicts[i] === '1'
      if (js !== cOk) {
        disagreements++
        if (examples.length < 5) examples.push({ segment: JSON.stringify(c), js, c: cOk })
      }
    })
    assert.equal(disagreements, 0, JSON.stringify(examples))
  })
})
