'use strict'
// toSegments (contract 0.3): a path string a caller or a model chose, as segments,
// without touching the filesystem. One table, POSIX and Windows forms, run through the
// function both subpaths export (the same function) and through the internal entry
// that takes either platform's rules, so both tables run on every host.
//
// The prefix and sibling cases are the Model Context Protocol filesystem server's
// CVE-2025-53110 (a sibling `/tmp/allowed_evil` passing a prefix test for
// `/tmp/allowed`) and its later sibling bug (`ROOT'`, `ROOT"`, `ROOT `, `ROOT\t`
// accepted after trimming and unquoting): here nothing is trimmed, unquoted or
// case-folded, and "beneath" is decided component by component, so they cannot pass.

const assert = require('node:assert/strict')
const fa = require('../../lib/file-authority.js')
const testing = require('../../lib/file-authority-testing.js')
const { convert } = require('../../lib/internal/to-segments.js')

const ok = (segments) => ({ segments })
const bad = (code, argument, segmentIndex) => ({ code, argument, segmentIndex })

// [path, options, expected]
const POSIX = [
  ['a', undefined, ok(['a'])],
  ['src/a.ts', undefined, ok(['src', 'a.ts'])],
  ['./a//b/', undefined, ok(['a', 'b'])],
  ['', undefined, ok([])],
  ['.', undefined, ok([])],
  ['./', undefined, ok([])],
  ['a/./b/.', undefined, ok(['a', 'b'])],
  ['..', undefined, bad('INVALID_PATH', 'path', 0)],
  ['a/..', undefined, bad('INVALID_PATH', 'path', 1)],
  ['a/../b', undefined, bad('INVALID_PATH', 'path', 1)],
  ['./x/./../y', undefined, bad('INVALID_PATH', 'path', 1)],
  ['a/b\0c', undefined, bad('INVALID_PATH', 'path', 1)],
  ['a/\ud800', undefined, bad('INVALID_PATH', 'path', 1)],
  ['a/' + 'x'.repeat(256), undefined, bad('INVALID_PATH', 'path', 1)],
  ['a\\b', undefined, bad('INVALID_PATH', 'path', 0)], // a backslash is no separator here, and no segment
  [Array(256).fill('d').join('/'), undefined, bad('INVALID_PATH', 'path', 255)],
  [Array(255).fill('d').join('/'), undefined, ok(Array(255).fill('d'))],
  ['/etc/passwd', undefined, bad('INVALID_PATH', 'path')], // absolute without a root: refused, never re-rooted
  ['/', undefined, bad('INVALID_PATH', 'path')],
  ['//a', undefined, bad('INVALID_PATH', 'path')],
  ['C:\\a', undefined, bad('INVALID_PATH', 'path', 0)],
  ['\\\\server\\share', undefined, bad('INVALID_PATH', 'path', 0)],
  // with a root
  ['/srv/ws/a/b', { root: '/srv/ws' }, ok(['a', 'b'])],
  ['/srv/ws/a', { root: '/srv/ws/' }, ok(['a'])],
  ['/srv/ws', { root: '/srv/ws' }, ok([])],
  ['/srv/ws/', { root: '/srv/ws' }, ok([])],
  ['/srv/ws/.', { root: '/srv/ws' }, ok([])],
  ['/srv/ws', { root: '/srv/ws/' }, ok([])],
  ['/x//ws/a', { root: '/x/ws' }, ok(['a'])],
  ['/x/ws/a', { root: '/x//ws/' }, ok(['a'])],
  ['/x/./ws/a', { root: '/x/ws' }, ok(['a'])],
  ['a/b', { root: '/srv/ws' }, ok(['a', 'b'])],
  ['', { root: '/srv/ws' }, ok([])],
  ['a', { root: '/' }, ok(['a'])],
  ['/a/b', { root: '/' }, ok(['a', 'b'])],
  ['/srv/ws_evil/x', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv/ws_evil', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv/wsx', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv/ws /x', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ["/srv/ws'", { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv/ws"', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv/ws ', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv/ws\t', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv/ws\n', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  [' /srv/ws/a', { root: '/srv/ws' }, ok([' ', 'srv', 'ws', 'a'])], // relative (it does not start with '/'): beneath the root
  ["'/srv/ws/a'", { root: '/srv/ws' }, ok(["'", 'srv', 'ws', "a'"])],
  ['/SRV/WS/a', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv/../srv/ws/a', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['/srv/ws/../ws/a', { root: '/srv/ws' }, bad('INVALID_PATH', 'path', 0)],
  ['/srv/ws/a/../../..', { root: '/srv/ws' }, bad('INVALID_PATH', 'path', 1)],
  ['../ws/a', { root: '/srv/ws' }, bad('INVALID_PATH', 'path', 0)],
  ['/srv/ws/a\0', { root: '/srv/ws' }, bad('INVALID_PATH', 'path', 0)],
  ['/etc/passwd', { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['a', { root: 'srv/ws' }, bad('INVALID_PATH', 'options.root')],
  ['a', { root: '' }, bad('INVALID_PATH', 'options.root')],
  ['a', { root: '/srv/../ws' }, bad('INVALID_PATH', 'options.root')],
  ['a', { root: '/srv/\0ws' }, bad('INVALID_PATH', 'options.root')],
  ['a', { root: 5 }, bad('INVALID_PATH', 'options.root')],
  ['a', { root: Buffer.from('/srv') }, bad('INVALID_PATH', 'options.root')],
  ['a', { root: new URL('file:///srv/ws') }, bad('INVALID_PATH', 'options.root')],
  // arguments
  [5, undefined, bad('INVALID_PATH', 'path')],
  [undefined, undefined, bad('INVALID_PATH', 'path')],
  [['a', 'b'], undefined, bad('INVALID_PATH', 'path')],
  [Buffer.from('a'), undefined, bad('INVALID_PATH', 'path')],
  [new URL('file:///srv/ws/a'), { root: '/srv/ws' }, bad('INVALID_PATH', 'path')],
  ['a', { rot: '/srv' }, bad('INVALID_OPTION', 'options.rot')],
  ['a', { root: '/srv', trim: true }, bad('INVALID_OPTION', 'options.trim')],
  ['a', '/srv/ws', bad('INVALID_OPTION', 'options')],
  ['a', null, ok(['a'])]
]

const WINDOWS = [
  ['a\\b/c', undefined, ok(['a', 'b', 'c'])],
  ['.\\a\\\\b\\', undefined, ok(['a', 'b'])],
  ['a\\..\\b', undefined, bad('INVALID_PATH', 'path', 1)],
  ['C:\\a', undefined, bad('INVALID_PATH', 'path')],
  ['C:/a', undefined, bad('INVALID_PATH', 'path')],
  ['\\\\server\\share\\a', undefined, bad('INVALID_PATH', 'path')],
  ['\\a', undefined, bad('INVALID_PATH', 'path')],
  ['/a', undefined, bad('INVALID_PATH', 'path')],
  ['C:a', undefined, bad('INVALID_PATH', 'path', 0)], // drive-relative: ':' is no name character
  ['a\\con', undefined, bad('INVALID_PATH', 'path', 1)],
  ['a\\NUL.txt', undefined, bad('INVALID_PATH', 'path', 1)],
  ['a\\b.', undefined, bad('INVALID_PATH', 'path', 1)],
  ['a\\b ', undefined, bad('INVALID_PATH', 'path', 1)],
  ['a\\b:stream', undefined, bad('INVALID_PATH', 'path', 1)],
  ['C:\\ws\\a\\b', { root: 'C:\\ws' }, ok(['a', 'b'])],
  ['C:/ws/a', { root: 'C:\\ws\\' }, ok(['a'])],
  ['C:\\ws', { root: 'C:\\ws' }, ok([])],
  ['C:\\ws\\', { root: 'C:/ws' }, ok([])],
  ['c:\\ws\\a', { root: 'C:\\ws' }, bad('INVALID_PATH', 'path')], // never case-folded
  ['C:\\WS\\a', { root: 'C:\\ws' }, bad('INVALID_PATH', 'path')],
  ['D:\\ws\\a', { root: 'C:\\ws' }, bad('INVALID_PATH', 'path')],
  ['C:\\ws_evil\\a', { root: 'C:\\ws' }, bad('INVALID_PATH', 'path')],
  ['C:\\ws \\a', { root: 'C:\\ws' }, bad('INVALID_PATH', 'path')],
  ["C:\\ws'", { root: 'C:\\ws' }, bad('INVALID_PATH', 'path')],
  ['\\ws\\a', { root: 'C:\\ws' }, bad('INVALID_PATH', 'path')],
  ['\\\\srv\\share\\a', { root: '\\\\srv\\share' }, ok(['a'])],
  ['//srv/share/a', { root: '\\\\srv\\share\\' }, ok(['a'])],
  ['\\\\srv\\share2\\a', { root: '\\\\srv\\share' }, bad('INVALID_PATH', 'path')],
  ['\\\\?\\C:\\ws\\a', { root: 'C:\\ws' }, bad('INVALID_PATH', 'path')],
  ['a\\b', { root: 'C:\\ws' }, ok(['a', 'b'])],
  ['a', { root: 'ws' }, bad('INVALID_PATH', 'options.root')],
  ['a', { root: 'C:ws' }, bad('INVALID_PATH', 'options.root')],
  ['a', { root: '\\\\srv' }, bad('INVALID_PATH', 'options.root')]
]

function run (fn, path, options) {
  try {
    return { segments: fn(path, options) }
  } catch (err) {
    return { err }
  }
}

function check (got, expected, path, options) {
  if (expected.segments !== undefined) {
    if (got.err !== undefined) throw got.err
    assert.deepStrictEqual(got.segments, expected.segments)
    assert.ok(Array.isArray(got.segments) && !Object.isFrozen(got.segments), 'a plain, fresh array')
    return
  }
  assert.ok(got.err !== undefined, `refused, got ${JSON.stringify(got.segments)}`)
  const err = got.err
  assert.ok(err instanceof fa.FileAuthorityError, String(err))
  assert.ok(err instanceof testing.FileAuthorityError)
  assert.deepStrictEqual(
    { code: err.code, argument: err.argument, segmentIndex: err.segmentIndex, operation: err.operation },
    { code: expected.code, argument: expected.argument, segmentIndex: expected.segmentIndex, operation: 'toSegments' })
  // The message never holds the path or the root, nor a part of them.
  for (const text of [path, options && options.root]) {
    if (typeof text !== 'string') continue
    if (text.length >= 3) assert.ok(!err.message.includes(text), err.message)
    for (const part of text.split(/[\\/]/)) if (part.length >= 3) assert.ok(!err.message.includes(part), err.message)
  }
}

const show = (v) => JSON.stringify(v, (k, x) => (typeof x === 'string' && x.length > 40 ? `${x.slice(0, 12)}...(${x.length})` : x))

describe('file-authority: toSegments', function () {
  it('is the same function in file-authority and file-authority/testing', function () {
    assert.equal(typeof fa.toSegments, 'function')
    assert.equal(fa.toSegments, testing.toSegments)
  })

  for (const [table, windows] of [[POSIX, false], [WINDOWS, true]]) {
    describe(windows ? 'Windows forms' : 'POSIX forms', function () {
      for (const [path, options, expected] of table) {
        it(`${show(path)}${options === undefined ? '' : ` with ${show(options)}`} -> ${expected.segments ? show(expected.segments) : `${expected.code} (${expected.argument})`}`, function () {
          check(run((p, o) => convert(p, o, windows), path, options), expected, path, options)
          if (windows === (process.platform === 'win32')) check(run(fa.toSegments, path, options), expected, path, options)
        })
      }
    })
  }

  it('every result is accepted by the operations as a segment list (a round trip through a stand-in)', async function () {
    const { writer, reader } = testing.createMemoryAuthorities({})
    const segments = fa.toSegments('/srv/ws/notes/a b/c.md', { root: '/srv/ws' })
    await writer.writeText(segments, 'x', { createParents: true })
    assert.equal((await reader.readBytes(['notes', 'a b', 'c.md'], { maxBytes: 1 })).toString(), 'x')
  })
})
