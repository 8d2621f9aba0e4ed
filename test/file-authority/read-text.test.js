'use strict'
// readText decodes in C (src/file_authority/napi.c: all-ASCII text as a one-byte string,
// other text through aos_fa_utf8_to_utf16 in segments.c): held against Node's own
// decoder and validator. For byte strings made to sit on every edge of UTF-8 (each
// length of lead and continuation bytes, overlong forms, surrogates, the largest code
// points, truncations at every position, ASCII runs of every length before and after
// a multi-byte character), readTextSync and readText must give exactly
// `buffer.toString('utf8')` when `buffer.isUtf8` holds, and INVALID_CONTENT when not.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { isUtf8 } = require('node:buffer')
const fa = require('../../lib/file-authority.js')

const CHARS = ['a', '\u007f', '\u0080', '\u00e9', '\u07ff', '\u0800', '\u20ac', '\ud7ff', '\ue000', '\uffef', '\ufeff', '\uffff', '\u{10000}', '\u{1F600}', '\u{10FFFF}', '\n', '\0']
const BAD = [[0x80], [0xbf], [0xc0, 0x80], [0xc1, 0xbf], [0xc2], [0xe0, 0x80, 0x80], [0xe0, 0x9f, 0xbf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
  [0xef, 0xbf], [0xf0, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xf8], [0xff], [0xfe], [0xe2, 0x82], [0xf0, 0x9f, 0x98]]

function * cases () {
  for (const c of CHARS) {
    const b = Buffer.from(c)
    for (let pre = 0; pre <= 40; pre += (pre < 10 ? 1 : 7)) {
      const left = Buffer.alloc(pre, 0x41)
      yield Buffer.concat([left, b])
      yield Buffer.concat([left, b, left])
      for (let cut = 1; cut < b.length; cut++) yield Buffer.concat([left, b.subarray(0, cut), left]) // truncated inside
    }
  }
  for (const bad of BAD) {
    for (let pre = 0; pre <= 33; pre += 3) yield Buffer.concat([Buffer.alloc(pre, 0x61), Buffer.from(bad), Buffer.from('z\u00e9')])
  }
  // Random mixes, seeded.
  let x = 0x9e3779b9
  const next = () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x }
  for (let i = 0; i < 1500; i++) {
    const parts = []
    const n = 1 + (next() % 12)
    for (let k = 0; k < n; k++) {
      const r = next() % 10
      if (r < 6) parts.push(Buffer.from(CHARS[next() % CHARS.length].repeat(1 + (next() % 9))))
      else if (r < 9) parts.push(Buffer.alloc(next() % 40, 0x20 + (next() % 90)))
      else parts.push(Buffer.from(BAD[next() % BAD.length]))
    }
    yield Buffer.concat(parts)
  }
}

describe('file-authority: readText decodes as Node does, refuses what Node\'s isUtf8 refuses', function () {
  this.timeout(120000)
  let dir, reader
  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-read-text-'))
    reader = fa.openReadAuthoritySync(dir)
  })
  after(function () {
    reader.closeSync()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('edges and random mixes: the same string, or INVALID_CONTENT exactly when not UTF-8 (sync and async)', async function () {
    let valid = 0
    let invalid = 0
    let i = 0
    for (const bytes of cases()) {
      const name = `t${i++}`
      fs.writeFileSync(path.join(dir, name), bytes)
      const ok = isUtf8(bytes)
      for (const form of ['sync', 'async']) {
        let got, err
        try {
          got = form === 'sync' ? reader.readTextSync([name], { maxBytes: 1 << 20 }) : await reader.readText([name], { maxBytes: 1 << 20 })
        } catch (e) {
          err = e
        }
        if (ok) {
          assert.equal(err, undefined, `${bytes.toString('hex')}: ${err && err.code}`)
          assert.equal(got, bytes.toString('utf8'), bytes.toString('hex'))
        } else {
          assert.equal(err && err.code, 'INVALID_CONTENT', bytes.toString('hex'))
        }
      }
      if (ok) valid++
      else invalid++
      fs.unlinkSync(path.join(dir, name))
    }
    assert.ok(valid > 500 && invalid > 500, `${valid} valid, ${invalid} invalid`)
  })

  it('a large text, in one-byte and two-byte form', function () {
    const ascii = 'x'.repeat(3 << 20)
    const mixed = 'h\u00e9llo \u{1F600} '.repeat(300000)
    fs.writeFileSync(path.join(dir, 'ascii'), ascii)
    fs.writeFileSync(path.join(dir, 'mixed'), mixed)
    assert.equal(reader.readTextSync(['ascii'], { maxBytes: 8 << 20 }), ascii)
    assert.equal(reader.readTextSync(['mixed'], { maxBytes: 8 << 20 }), mixed)
  })
})
