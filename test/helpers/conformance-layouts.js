'use strict'
// The conformance battery's data: hostile layouts (as MemoryTrees), a table of
// operations on them with the outcome the contract requires, and the tools to put a
// MemoryTree on disk and to read a directory back as one. The same table runs against
// the in-memory stand-in and against the native authorities (test/file-authority/
// conformance.test.js); both must give exactly the listed outcome.

const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const util = require('node:util')
const { constants: { MAX_LENGTH } } = require('node:buffer')

const { segmentProblem } = require('../../lib/internal/file-authority-common.js')
const { makeSymlink, REASONS } = require('./platform.js')

const windows = process.platform === 'win32'

// ------------------------------------------------------------------------ layouts

// Materialised next to the root (as ../outside) for the native face, so an escape
// would find something to read or overwrite.
const OUTSIDE = {
  'secret.txt': 'outside secret',
  subdir: {}
}

const HOSTILE = {
  'a.txt': 'alpha',
  'empty.txt': '',
  'bin.dat': Uint8Array.of(0x00, 0xff, 0xfe, 0x80, 0x0a),
  'utf8.txt': 'h\u00e9llo \u{1F600}\n',
  docs: {
    'b.txt': 'beta',
    empty: {},
    nested: { 'c.txt': 'gamma' }
  },
  fifo: { other: true },
  'link-file': { symlink: 'a.txt' },
  'link-dir': { symlink: 'docs' },
  'link-self': { symlink: '.' },
  'link-parent': { symlink: '..' },
  'link-outside-file': { symlink: '../outside/secret.txt' },
  'link-outside-dir': { symlink: '../outside' },
  'link-absolute-file': { symlink: '/etc/passwd' },
  'link-absolute-dir': { symlink: '/' },
  'link-chain': { symlink: 'link-chain-2' },
  'link-chain-2': { symlink: 'link-dir' },
  'link-loop': { symlink: 'link-loop' },
  'link-dangling': { symlink: 'does-not-exist' },
  sub: {
    'link-up': { symlink: '../docs' },
    deep: {
      'd.txt': 'delta',
      'link-out': { symlink: '../../../outside' }
    }
  }
}

// Every symlink of HOSTILE at the top level, and the names the others walk through.
const TOP_LINKS = Object.keys(HOSTILE).filter((name) => name.startsWith('link-'))

const HOSTILE_ROOT_LISTING = [
  ['a.txt', 'file'],
  ['bin.dat', 'file'],
  ['docs', 'directory'],
  ['empty.txt', 'file'],
  ['fifo', 'other'],
  ['link-absolute-dir', 'symlink'],
  ['link-absolute-file', 'symlink'],
  ['link-chain', 'symlink'],
  ['link-chain-2', 'symlink'],
  ['link-dangling', 'symlink'],
  ['link-dir', 'symlink'],
  ['link-file', 'symlink'],
  ['link-loop', 'symlink'],
  ['link-outside-dir', 'symlink'],
  ['link-outside-file', 'symlink'],
  ['link-parent', 'symlink'],
  ['link-self', 'symlink'],
  ['sub', 'directory'],
  ['utf8.txt', 'file']
]

// Names whose UTF-16 code-unit order differs from their UTF-8 byte order and from a
// locale-aware order: U+1F600 (surrogates 0xD83D 0xDE00) sorts before U+FF5E in code
// units but after it in UTF-8 bytes; capitals before small letters; digits as text.
// Windows file names are case-insensitive ('b' and 'B' name one entry), so there 'B'
// is left out and 'Z' alone shows capitals sorting first.
const SORTING = {
  b: '',
  ...(windows ? {} : { B: '' }),
  a: '',
  'a b': '',
  _: '',
  10: '',
  9: '',
  '\u00e9': '',
  '\uff5e': '',
  '\u{1F600}': '',
  Z: {}
}

const SORTING_LISTING = [
  ['10', 'file'],
  ['9', 'file'],
  ...(windows ? [] : [['B', 'file']]),
  ['Z', 'directory'],
  ['_', 'file'],
  ['a', 'file'],
  ['a b', 'file'],
  ['b', 'file'],
  ['\u00e9', 'file'],
  ['\u{1F600}', 'file'],
  ['\uff5e', 'file']
]

const LONG_ASCII = 'x'.repeat(255)
const LONG_UTF8 = '\u00e9'.repeat(127) + 'a' // 255 bytes in UTF-8, 128 code units

// Every name here is valid on POSIX; the ones Windows refuses (a trailing dot, ':', a
// device name: segmentProblem(name, true)) are kept out there, where WINDOWS_NAMES
// checks they are refused.
const ALL_NAMES = {
  [LONG_ASCII]: 'long ascii',
  [LONG_UTF8]: 'long utf-8',
  'sp ace': 'space',
  '-dash': 'dash',
  '.hidden': 'hidden',
  '...': 'dots',
  '\u{1F600}.txt': 'emoji',
  'colon:name': 'colon',
  'trailing.': 'dot',
  con: 'device name'
}
const NAMES = Object.fromEntries(Object.entries(ALL_NAMES).filter(([name]) => !segmentProblem(name, windows)))

const NAMES_LISTING = [
  ['-dash', 'file'],
  ['...', 'file'],
  ['.hidden', 'file'],
  ['colon:name', 'file'],
  ['con', 'file'],
  ['sp ace', 'file'],
  ['trailing.', 'file'],
  [LONG_ASCII, 'file'],
  [LONG_UTF8, 'file'],
  ['\u{1F600}.txt', 'file']
].filter(([name]) => name in NAMES)

// 254 nested directories `d` holding a file `f` and an empty directory `e`: the deepest
// file and directory 255 segments can name.
const DEEP_DIRS = new Array(254).fill('d')
const DEEP = (() => {
  let tree = { f: 'bottom', e: {} }
  for (let i = 0; i < DEEP_DIRS.length; i++) tree = { d: tree }
  return tree
})()

const LAYOUTS = { HOSTILE, SORTING, NAMES, DEEP }

// ---------------------------------------------------------------- outcome helpers

const bytes = (content) => ({ bytes: typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content) })
const none = () => ({ absent: true })
const listing = (pairs) => ({ listing: pairs })
const error = (code, segmentIndex, hostCode) => ({ code, segmentIndex, hostCode })
const written = () => ({ written: true })

const BUDGET = { maxBytes: 1 << 20 }

// ----------------------------------------------------------------- validation rows

// Segment lists every operation refuses with INVALID_PATH; [title, segments, index].
const BAD_SEGMENTS = [
  ['a string instead of an array', 'a.txt', undefined],
  ['undefined instead of an array', undefined, undefined],
  ['null instead of an array', null, undefined],
  ['a number instead of an array', 7, undefined],
  ['an array-like object', { length: 1, 0: 'a.txt' }, undefined],
  ['more than 255 segments', new Array(256).fill('d'), undefined],
  ['an empty segment', [''], 0],
  ['a "." segment', ['.'], 0],
  ['a ".." segment', ['..'], 0],
  ['a ".." after a valid segment', ['docs', '..', 'a.txt'], 1],
  ['a segment with "/"', ['docs/b.txt'], 0],
  ['an absolute path as one segment', ['/etc'], 0],
  ['a segment with "\\"', ['docs\\b.txt'], 0],
  ['a segment with NUL', ['a.txt\0'], 0],
  ['a segment of 256 ASCII bytes', ['x'.repeat(256)], 0],
  ['a segment of 256 UTF-8 bytes in 128 code units', ['\u00e9'.repeat(128)], 0],
  ['a lone high surrogate', ['\ud800'], 0],
  ['a lone low surrogate after text', ['a\udc00'], 0],
  ['a number segment', ['docs', 42], 1],
  ['an undefined segment', ['docs', undefined], 1],
  ['a hole in the array', [, 'a.txt'], 0], // eslint-disable-line no-sparse-arrays
  ['the first of several bad segments', ['docs', '', '..'], 1]
]

// Names only Windows refuses; elsewhere they are ordinary (and here, missing) entries.
const WINDOWS_NAMES = [
  ['a reserved device name', ['con'], 0],
  ['a reserved device name with extension', ['docs', 'NUL.txt'], 1],
  ['a ":" (alternate data stream)', ['a.txt:stream'], 0],
  ['a trailing dot', ['docs.'], 0],
  ['a trailing space', ['docs '], 0],
  ['a "<"', ['a<b'], 0]
]

// Budgets readBytes refuses; [title, options, code]. A missing or bad byte budget is
// INVALID_PATH (the contract counts maxBytes with the path arguments); an options
// argument that is not an object at all, or holds a key readBytes does not know, is
// INVALID_OPTION.
const BAD_BUDGETS = [
  ['options missing', undefined, 'INVALID_PATH'],
  ['options null', null, 'INVALID_PATH'],
  ['options a number', 5, 'INVALID_OPTION'],
  ['options a string', 'utf8', 'INVALID_OPTION'],
  ['maxBytes missing', {}, 'INVALID_PATH'],
  ['maxBytes negative', { maxBytes: -1 }, 'INVALID_PATH'],
  ['maxBytes fractional', { maxBytes: 1.5 }, 'INVALID_PATH'],
  ['maxBytes NaN', { maxBytes: NaN }, 'INVALID_PATH'],
  ['maxBytes Infinity', { maxBytes: Infinity }, 'INVALID_PATH'],
  ['maxBytes a numeric string', { maxBytes: '5' }, 'INVALID_PATH'],
  ['maxBytes a bigint', { maxBytes: 5n }, 'INVALID_PATH'],
  ['maxBytes above buffer.constants.MAX_LENGTH', { maxBytes: MAX_LENGTH + 1 }, 'INVALID_PATH'],
  ['maxBytes 2 ** 53', { maxBytes: 2 ** 53 }, 'INVALID_PATH'],
  ['an unknown option (encoding)', { maxBytes: 5, encoding: 'utf8' }, 'INVALID_OPTION'],
  ['an unknown option (signal)', { maxBytes: 5, signal: new AbortController().signal }, 'INVALID_OPTION'],
  ['an inherited unknown option', Object.assign(Object.create({ flag: 'r' }), { maxBytes: 5 }), 'INVALID_OPTION']
]

// Content writeText refuses with INVALID_CONTENT; [title, text].
const BAD_TEXT = [
  ['a lone high surrogate', '\ud800'],
  ['a lone low surrogate inside text', 'ok\udc00ok'],
  ['a high surrogate at the end', 'ok\ud83d'],
  ['an 0xff byte', Uint8Array.of(0x6f, 0xff)],
  ['an overlong NUL (C0 80)', Uint8Array.of(0xc0, 0x80)],
  ['an encoded surrogate (ED A0 80)', Uint8Array.of(0xed, 0xa0, 0x80)],
  ['a truncated sequence', Uint8Array.of(0x61, 0xe2, 0x82)],
  ['a code point above U+10FFFF', Uint8Array.of(0xf4, 0x90, 0x80, 0x80)],
  ['a lone continuation byte', Uint8Array.of(0x80)]
]

// Text arguments of the wrong type (INVALID_OPTION: a bad argument that is not a path).
const BAD_TEXT_TYPES = [
  ['a number', 42],
  ['null', null],
  ['undefined', undefined],
  ['a plain object', {}],
  ['an array of bytes', [104, 105]],
  ['a Uint16Array', new Uint16Array(2)],
  ['an ArrayBuffer', new ArrayBuffer(2)]
]

const BAD_WRITE_OPTIONS = [
  ['options a string', 'yes'],
  ['options a number', 5],
  ['createParents a string', { createParents: 'yes' }],
  ['createParents a number', { createParents: 1 }],
  ["an unknown option (flag: 'a', which must not replace the file)", { flag: 'a' }],
  ['an unknown option (encoding)', { encoding: 'utf8' }],
  ['an unknown option whose name is not an identifier', { 'create parents': true }]
]

// -------------------------------------------------------------------- the table

// Each row: { title, layout, op, segments, maxBytes?/options, text?, expect }.
// op is 'readBytes' | 'list' | 'writeText'; the battery runs both the async and sync
// form of each. For writeText, `written` means the file now holds `text`, everything
// else unchanged; an error means the whole tree (and ../outside) is unchanged.
function buildCases () {
  const rows = []
  const read = (title, segments, expect, options = BUDGET, layout = 'HOSTILE') =>
    rows.push({ title: `readBytes ${title}`, layout, op: 'readBytes', segments, options, expect })
  const list = (title, segments, expect, layout = 'HOSTILE') =>
    rows.push({ title: `list ${title}`, layout, op: 'list', segments, expect })
  const write = (title, segments, text, options, expect, layout = 'HOSTILE') =>
    rows.push({ title: `writeText ${title}`, layout, op: 'writeText', segments, text, options, expect })

  // readBytes: results
  read('a file', ['a.txt'], bytes('alpha'))
  read('a file exactly at its budget', ['a.txt'], bytes('alpha'), { maxBytes: 5 })
  read('a file one byte over its budget', ['a.txt'], error('OVER_BUDGET'), { maxBytes: 4 })
  read('a non-empty file with budget 0', ['a.txt'], error('OVER_BUDGET'), { maxBytes: 0 })
  read('an empty file with budget 0', ['empty.txt'], bytes(''), { maxBytes: 0 })
  read('with the largest budget', ['a.txt'], bytes('alpha'), { maxBytes: MAX_LENGTH })
  read('bytes that are not UTF-8', ['bin.dat'], bytes(HOSTILE['bin.dat']))
  read('UTF-8 text', ['utf8.txt'], bytes(HOSTILE['utf8.txt']))
  read('a nested file', ['docs', 'nested', 'c.txt'], bytes('gamma'))
  read('a file below a directory holding links', ['sub', 'deep', 'd.txt'], bytes('delta'))
  read('a missing file', ['nope'], none())
  read('below a missing directory', ['nope', 'x'], none())
  read('below a missing nested directory', ['docs', 'nope', 'x'], none())
  read('a file 255 segments deep', [...DEEP_DIRS, 'f'], bytes('bottom'), BUDGET, 'DEEP')
  read('a name of 255 ASCII bytes', [LONG_ASCII], bytes('long ascii'), BUDGET, 'NAMES')
  read('a name of 255 UTF-8 bytes', [LONG_UTF8], bytes('long utf-8'), BUDGET, 'NAMES')
  read('a name with an astral character', ['\u{1F600}.txt'], bytes('emoji'), BUDGET, 'NAMES')
  read('a valid segment of 255 bytes that is missing', ['y'.repeat(255)], none())
  read('255 segments below a missing directory', new Array(255).fill('nope'), none())
  // readBytes: refusals
  read('the root itself (no segments)', [], error('UNSAFE_ENTRY'))
  read('a directory', ['docs'], error('UNSAFE_ENTRY', 0))
  read('a nested directory', ['docs', 'empty'], error('UNSAFE_ENTRY', 1))
  read('a FIFO (returns at once, never blocks)', ['fifo'], error('UNSAFE_ENTRY', 0))
  read('below a FIFO', ['fifo', 'x'], error('UNSAFE_ENTRY', 0))
  read('below a file', ['a.txt', 'x'], error('UNSAFE_ENTRY', 0))
  read('below a nested file', ['docs', 'b.txt', 'x'], error('UNSAFE_ENTRY', 1))
  for (const link of TOP_LINKS) {
    read(`the symlink ${link}`, [link], error('UNSAFE_ENTRY', 0))
  }
  read('through a symlink to a directory inside', ['link-dir', 'b.txt'], error('UNSAFE_ENTRY', 0))
  read('through a symlink to "."', ['link-self', 'a.txt'], error('UNSAFE_ENTRY', 0))
  read('through a symlink to ".."', ['link-parent', 'outside', 'secret.txt'], error('UNSAFE_ENTRY', 0))
  read('through a symlink to a directory outside', ['link-outside-dir', 'secret.txt'], error('UNSAFE_ENTRY', 0))
  read('through a symlink to "/"', ['link-absolute-dir', 'etc', 'passwd'], error('UNSAFE_ENTRY', 0))
  read('through a chain of symlinks', ['link-chain', 'b.txt'], error('UNSAFE_ENTRY', 0))
  read('through a symlink loop', ['link-loop', 'x'], error('UNSAFE_ENTRY', 0))
  read('through a dangling symlink', ['link-dangling', 'x'], error('UNSAFE_ENTRY', 0))
  read('through a symlink to a file', ['link-file', 'x'], error('UNSAFE_ENTRY', 0))
  read('through a symlinked parent at index 1', ['sub', 'link-up', 'b.txt'], error('UNSAFE_ENTRY', 1))
  read('through a symlink to outside at index 2', ['sub', 'deep', 'link-out', 'secret.txt'], error('UNSAFE_ENTRY', 2))
  read('a symlink at index 2', ['sub', 'deep', 'link-out'], error('UNSAFE_ENTRY', 2))

  // list: results
  list('the root', [], listing(HOSTILE_ROOT_LISTING))
  list('a directory', ['docs'], listing([['b.txt', 'file'], ['empty', 'directory'], ['nested', 'directory']]))
  list('an empty directory', ['docs', 'empty'], listing([]))
  list('a directory of symlinks (kinds observed without following)', ['sub'], listing([['deep', 'directory'], ['link-up', 'symlink']]))
  list('a nested directory', ['sub', 'deep'], listing([['d.txt', 'file'], ['link-out', 'symlink']]))
  list('in code-unit order', [], listing(SORTING_LISTING), 'SORTING')
  list('unusual and long names', [], listing(NAMES_LISTING), 'NAMES')
  list('a directory 255 segments deep', [...DEEP_DIRS, 'e'], listing([]), 'DEEP')
  list('a directory 254 segments deep', DEEP_DIRS, listing([['e', 'directory'], ['f', 'file']]), 'DEEP')
  list('a directory 253 segments deep', DEEP_DIRS.slice(1), listing([['d', 'directory']]), 'DEEP')
  list('a missing directory', ['nope'], none())
  list('below a missing directory', ['nope', 'x'], none())
  list('a missing nested directory', ['docs', 'nope'], none())
  // list: refusals
  list('a file', ['a.txt'], error('UNSAFE_ENTRY', 0))
  list('a nested file', ['docs', 'b.txt'], error('UNSAFE_ENTRY', 1))
  list('a FIFO', ['fifo'], error('UNSAFE_ENTRY', 0))
  list('below a file', ['a.txt', 'x'], error('UNSAFE_ENTRY', 0))
  for (const link of TOP_LINKS) {
    list(`the symlink ${link}`, [link], error('UNSAFE_ENTRY', 0))
  }
  list('through a symlink to a directory', ['link-dir', 'nested'], error('UNSAFE_ENTRY', 0))
  list('through a symlink to ".."', ['link-parent', 'outside'], error('UNSAFE_ENTRY', 0))
  list('a symlinked parent at index 1', ['sub', 'link-up'], error('UNSAFE_ENTRY', 1))
  list('a symlink to outside at index 2', ['sub', 'deep', 'link-out'], error('UNSAFE_ENTRY', 2))

  // writeText: results
  const text = 'new content \u00e9\u{1F600}\n'
  write('a new file', ['new.txt'], text, undefined, written())
  write('over an existing file', ['a.txt'], text, undefined, written())
  write('UTF-8 bytes over an existing file', ['a.txt'], Buffer.from(text, 'utf8'), undefined, written())
  write('an empty string', ['a.txt'], '', undefined, written())
  write('an empty byte array', ['new.txt'], new Uint8Array(0), undefined, written())
  write('a nested file', ['docs', 'nested', 'c.txt'], text, undefined, written())
  write('a new file in an existing directory', ['docs', 'new.txt'], text, undefined, written())
  write('with createParents: false and existing parents', ['docs', 'new.txt'], text, { createParents: false }, written())
  write('with options null', ['docs', 'new.txt'], text, null, written())
  write('creating one parent', ['new-dir', 'x.txt'], text, { createParents: true }, written())
  write('creating several parents', ['new-dir', 'a', 'b', 'c.txt'], text, { createParents: true }, written())
  write('creating parents below an existing one', ['docs', 'new', 'x.txt'], text, { createParents: true }, written())
  write('with createParents over an existing file', ['a.txt'], text, { createParents: true }, written())
  write('a name of 255 UTF-8 bytes', [LONG_UTF8], text, undefined, written())
  write('255 segments deep', [...DEEP_DIRS, 'f'], text, undefined, written(), 'DEEP')
  write('creating 254 parents', new Array(255).fill('n'), text, { createParents: true }, written(), 'SORTING')
  // writeText: refusals
  write('below a missing directory', ['nope', 'x.txt'], text, undefined, error('HOST_IO', 0, 'ENOENT'))
  write('below a missing nested directory', ['docs', 'nope', 'x.txt'], text, undefined, error('HOST_IO', 1, 'ENOENT'))
  write('below two missing directories', ['nope', 'deeper', 'x.txt'], text, { createParents: false }, error('HOST_IO', 0, 'ENOENT'))
  write('the root itself (no segments)', [], text, undefined, error('UNSAFE_ENTRY'))
  write('over a directory', ['docs'], text, undefined, error('UNSAFE_ENTRY', 0))
  write('over an empty nested directory', ['docs', 'empty'], text, undefined, error('UNSAFE_ENTRY', 1))
  write('over a FIFO', ['fifo'], text, undefined, error('UNSAFE_ENTRY', 0))
  for (const link of TOP_LINKS) {
    write(`over the symlink ${link}`, [link], text, undefined, error('UNSAFE_ENTRY', 0))
  }
  write('over a symlink at index 2', ['sub', 'deep', 'link-out'], text, undefined, error('UNSAFE_ENTRY', 2))
  write('below a file', ['a.txt', 'x'], text, undefined, error('UNSAFE_ENTRY', 0))
  write('below a file with createParents', ['a.txt', 'x', 'y'], text, { createParents: true }, error('UNSAFE_ENTRY', 0))
  write('below a FIFO with createParents', ['fifo', 'x'], text, { createParents: true }, error('UNSAFE_ENTRY', 0))
  write('through a symlink to a directory', ['link-dir', 'x.txt'], text, undefined, error('UNSAFE_ENTRY', 0))
  write('through a symlink to "."', ['link-self', 'x.txt'], text, undefined, error('UNSAFE_ENTRY', 0))
  write('through a symlink to ".."', ['link-parent', 'x.txt'], text, undefined, error('UNSAFE_ENTRY', 0))
  write('through a symlink to outside', ['link-outside-dir', 'secret.txt'], text, undefined, error('UNSAFE_ENTRY', 0))
  write('through a symlink to "/"', ['link-absolute-dir', 'agent-os-conformance-escape.txt'], text, undefined, error('UNSAFE_ENTRY', 0))
  write('through a chain of symlinks', ['link-chain', 'x.txt'], text, undefined, error('UNSAFE_ENTRY', 0))
  write('through a symlink loop', ['link-loop', 'x.txt'], text, undefined, error('UNSAFE_ENTRY', 0))
  write('createParents through a symlink to a directory', ['link-dir', 'new', 'x.txt'], text, { createParents: true }, error('UNSAFE_ENTRY', 0))
  write('createParents through a symlink to outside', ['link-outside-dir', 'new', 'x.txt'], text, { createParents: true }, error('UNSAFE_ENTRY', 0))
  write('createParents through a dangling symlink', ['link-dangling', 'x.txt'], text, { createParents: true }, error('UNSAFE_ENTRY', 0))
  write('createParents through a symlink to ".."', ['link-parent', 'outside', 'x.txt'], text, { createParents: true }, error('UNSAFE_ENTRY', 0))
  write('createParents through a symlinked parent at index 1', ['sub', 'link-up', 'new', 'x.txt'], text, { createParents: true }, error('UNSAFE_ENTRY', 1))
  write('createParents through a symlink to outside at index 2', ['sub', 'deep', 'link-out', 'new', 'x.txt'], text, { createParents: true }, error('UNSAFE_ENTRY', 2))
  for (const [title, bad] of BAD_TEXT) {
    write(`over a file with ${title}`, ['a.txt'], bad, undefined, error('INVALID_CONTENT'))
    write(`a new file with ${title}`, ['new.txt'], bad, { createParents: true }, error('INVALID_CONTENT'))
  }
  for (const [title, bad] of BAD_TEXT_TYPES) {
    write(`with text ${title}`, ['new.txt'], bad, undefined, error('INVALID_OPTION'))
  }
  for (const [title, options] of BAD_WRITE_OPTIONS) {
    write(`with ${title}`, ['new.txt'], text, options, error('INVALID_OPTION'))
    write(`over a file with ${title}`, ['a.txt'], text, options, error('INVALID_OPTION'))
  }

  // Segment rules, for every operation.
  for (const [title, segments, index] of BAD_SEGMENTS) {
    read(`with ${title}`, segments, error('INVALID_PATH', index))
    list(`with ${title}`, segments, error('INVALID_PATH', index))
    write(`with ${title}`, segments, text, { createParents: true }, error('INVALID_PATH', index))
  }
  for (const [title, segments, index] of WINDOWS_NAMES) {
    read(`with ${title}`, segments, windows ? error('INVALID_PATH', index) : none())
    list(`with ${title}`, segments, windows ? error('INVALID_PATH', index) : none())
  }
  for (const [title, options, code] of BAD_BUDGETS) {
    // Pushed directly: read() would put its default budget in place of undefined.
    rows.push({ title: `readBytes with ${title}`, layout: 'HOSTILE', op: 'readBytes', segments: ['a.txt'], options, expect: error(code) })
  }
  return rows
}

const CASES = buildCases()

// ------------------------------------------------------- trees on disk and back

function classify (value) {
  if (typeof value === 'string' || value instanceof Uint8Array) return 'file'
  const keys = Object.keys(value)
  if (keys.length === 1 && keys[0] === 'symlink' && typeof value.symlink === 'string') return 'symlink'
  if (keys.length === 1 && keys[0] === 'other' && value.other === true) return 'other'
  return 'directory'
}

/** Creates `tree` inside the existing directory `dir`: files, directories, symlinks with
 * the given target text, and `{ other: true }` as a FIFO. Returns the entries this
 * platform could not create, as [{ segments, reason }]: a FIFO on Windows, a symlink
 * the host refused or (wine) reported as made without making it. */
function materialize (tree, dir, missing = [], prefix = []) {
  for (const name of Object.keys(tree)) {
    const value = tree[name]
    const at = path.join(dir, name)
    switch (classify(value)) {
      case 'file':
        fs.writeFileSync(at, value)
        break
      case 'symlink':
        if (!makeSymlink(value.symlink, at)) missing.push({ segments: [...prefix, name], reason: REASONS.noSymlink })
        break
      case 'other':
        if (windows) {
          missing.push({ segments: [...prefix, name], reason: REASONS.noFifo })
          break
        }
        // Node has no mkfifo; coreutils' does exactly that.
        execFileSync('mkfifo', [at])
        break
      default:
        fs.mkdirSync(at)
        materialize(value, at, missing, [...prefix, name])
    }
  }
  return missing
}

/** A normalised tree less the entries `missing` names (what materialize made). */
function withoutMissing (normalized, missing) {
  const copy = structuredClone(normalized)
  for (const { segments } of missing) {
    let dir = copy
    for (const name of segments.slice(0, -1)) dir = dir[name].directory
    delete dir[segments[segments.length - 1]]
  }
  return copy
}

const startsWith = (list, prefix) => prefix.length <= list.length && prefix.every((name, i) => list[i] === name)

/** Why `row` cannot run over a tree lacking `missing`, or undefined when it can: its
 * segments reach a missing entry, or its expected listing holds one. */
function missingReason (row, missing) {
  if (!Array.isArray(row.segments)) return undefined
  for (const entry of missing) {
    if (startsWith(row.segments, entry.segments)) return entry.reason
    if (row.expect.listing && startsWith(entry.segments, row.segments) && entry.segments.length === row.segments.length + 1) return entry.reason
  }
  return undefined
}

/** Reads a directory on disk back as a normalised tree (see normalize), never
 * following links and never opening anything but regular files. */
function readDiskTree (dir) {
  const out = {}
  for (const name of fs.readdirSync(dir).sort()) {
    const at = path.join(dir, name)
    const st = fs.lstatSync(at)
    if (st.isFile()) out[name] = { file: fs.readFileSync(at).toString('hex') }
    else if (st.isDirectory()) out[name] = { directory: readDiskTree(at) }
    else if (st.isSymbolicLink()) out[name] = { symlink: fs.readlinkSync(at) }
    else out[name] = { other: true }
  }
  return out
}

/** A MemoryTree in one unambiguous, comparable form: every entry tagged, file content
 * as hex, names sorted. */
function normalize (tree) {
  const out = {}
  for (const name of Object.keys(tree).sort()) {
    const value = tree[name]
    switch (classify(value)) {
      case 'file':
        out[name] = { file: Buffer.from(value).toString('hex') }
        break
      case 'symlink':
        out[name] = { symlink: value.symlink }
        break
      case 'other':
        out[name] = { other: true }
        break
      default:
        out[name] = { directory: normalize(value) }
    }
  }
  return out
}

/** The normalised `tree` with `content` at `segments`, creating directories on the way. */
function withFile (normalized, segments, content) {
  const copy = structuredClone(normalized)
  let dir = copy
  for (const name of segments.slice(0, -1)) {
    if (dir[name] === undefined) dir[name] = { directory: {} }
    dir = dir[name].directory
  }
  const hex = (typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content)).toString('hex')
  dir[segments[segments.length - 1]] = { file: hex }
  return sortKeys(copy)
}

function sortKeys (normalized) {
  const out = {}
  for (const name of Object.keys(normalized).sort()) {
    const entry = normalized[name]
    out[name] = entry.directory ? { directory: sortKeys(entry.directory) } : entry
  }
  return out
}

module.exports = {
  LAYOUTS,
  OUTSIDE,
  HOSTILE,
  TOP_LINKS,
  CASES,
  BAD_SEGMENTS,
  BAD_BUDGETS,
  BAD_TEXT,
  materialize,
  withoutMissing,
  missingReason,
  readDiskTree,
  normalize,
  withFile
}

// ------------------------------------------------ the 0.2 operations (contract 0.2)
//
// Rows of OPERATION_CASES: { title, side: 'reader' | 'writer', op, args (an array, or
// (versionOf) => array, where versionOf(segments) is the version a stat gives now),
// expect: error(...) | { value } | { check: (value) => void }, tree: (normalized) =>
// the normalised tree after the call (default: unchanged), needs: segments lists whose
// entries the row needs (a row skips where the platform could not make one) }.

function clone (normalized) {
  return structuredClone(normalized)
}

function dirOf (tree, segments) {
  let dir = tree
  for (const name of segments.slice(0, -1)) {
    if (dir[name] === undefined) dir[name] = { directory: {} }
    dir = dir[name].directory
  }
  return dir
}

/** The normalised tree less the entry at `segments`. */
function without (segments) {
  return (tree) => {
    const copy = clone(tree)
    delete dirOf(copy, segments)[segments[segments.length - 1]]
    return sortKeys(copy)
  }
}

/** The normalised tree with `entry` (normalised) at `segments`. */
function withEntry (segments, entry) {
  return (tree) => {
    const copy = clone(tree)
    dirOf(copy, segments)[segments[segments.length - 1]] = entry
    return sortKeys(copy)
  }
}

/** The normalised tree with the entry at `from` moved to `to`. */
function moved (from, to) {
  return (tree) => {
    const copy = clone(tree)
    const src = dirOf(copy, from)
    const entry = src[from[from.length - 1]]
    delete src[from[from.length - 1]]
    dirOf(copy, to)[to[to.length - 1]] = entry
    return sortKeys(copy)
  }
}

const hex = (content) => ({ file: Buffer.from(content).toString('hex') })
const value = (v) => ({ value: v })
const check = (fn) => ({ check: fn })

// Every path-position of a link: the link itself as the final entry, and as a parent.
function linkCases (link) {
  const rows = []
  const at0 = error('UNSAFE_ENTRY', 0)
  const needs = [[link]]
  const r = (title, side, op, args, expect, tree) => rows.push({ title: `${link}: ${title}`, side, op, args, expect, tree, needs })
  r('stat reports the link itself', 'reader', 'stat', [[link]], check((s) => { if (s.kind !== 'symlink') throw new Error(`kind ${s.kind}`) }))
  r('stat below it', 'reader', 'stat', [[link, 'x']], at0)
  r('stat below it (writer)', 'writer', 'stat', [[link, 'x']], at0)
  r('readVersioned of it', 'reader', 'readVersioned', [[link], BUDGET], at0)
  r('readVersioned below it', 'reader', 'readVersioned', [[link, 'a.txt'], BUDGET], at0)
  r('readRange of it', 'reader', 'readRange', [[link], { offset: 0, length: 4 }], at0)
  r('readRange below it', 'reader', 'readRange', [[link, 'a.txt'], { offset: 0, length: 4 }], at0)
  r('walk of it', 'reader', 'walk', [[link], { maxEntries: 100 }], at0)
  r('walk below it', 'reader', 'walk', [[link, 'x'], { maxEntries: 100 }], at0)
  r('writeBytes over it', 'writer', 'writeBytes', [[link], Uint8Array.of(1)], at0)
  r('writeBytes below it', 'writer', 'writeBytes', [[link, 'new.bin'], Uint8Array.of(1)], at0)
  r('writeText ifAbsent over it', 'writer', 'writeText', [[link], 'x', { ifAbsent: true }], error('ENTRY_EXISTS', 0))
  r('writeText below it, createParents', 'writer', 'writeText', [[link, 'n', 'x.txt'], 'x', { createParents: true }], at0)
  r('remove of it removes the link, not its target', 'writer', 'remove', [[link]], value(true), without([link]))
  r('remove below it', 'writer', 'remove', [[link, 'a.txt']], at0)
  r('makeDirectory at it', 'writer', 'makeDirectory', [[link]], at0)
  r('makeDirectory below it, parents', 'writer', 'makeDirectory', [[link, 'n', 'm'], { parents: true }], at0)
  r('rename from below it', 'writer', 'rename', [[link, 'a.txt'], ['moved']], at0)
  r('rename to below it', 'writer', 'rename', [['a.txt'], [link, 'moved']], error('UNSAFE_ENTRY', 1))
  r('rename onto it', 'writer', 'rename', [['a.txt'], [link]], error('ENTRY_EXISTS', 1))
  r('rename onto it, replace', 'writer', 'rename', [['a.txt'], [link], { replace: true }], error('UNSAFE_ENTRY', 1))
  r('rename of it moves the link as an entry', 'writer', 'rename', [[link], ['moved-link']], value(undefined), moved([link], ['moved-link']))
  return rows
}

function buildOperationCases () {
  const rows = []
  const r = (title, side, op, args, expect, tree, needs) => rows.push({ title, side, op, args, expect, tree, needs })
  for (const link of TOP_LINKS) rows.push(...linkCases(link))
  for (const link of ['link-up', 'link-out']) {
    const base = link === 'link-up' ? ['sub'] : ['sub', 'deep']
    const i = base.length
    const needs = [[...base, link]]
    r(`${link} (depth ${i}): stat below it`, 'reader', 'stat', [[...base, link, 'b.txt']], error('UNSAFE_ENTRY', i), undefined, needs)
    r(`${link} (depth ${i}): walk below it`, 'reader', 'walk', [[...base, link], { maxEntries: 9 }], error('UNSAFE_ENTRY', i), undefined, needs)
    r(`${link} (depth ${i}): remove below it`, 'writer', 'remove', [[...base, link, 'b.txt']], error('UNSAFE_ENTRY', i), undefined, needs)
    r(`${link} (depth ${i}): rename to below it`, 'writer', 'rename', [['a.txt'], [...base, link, 'x']], error('UNSAFE_ENTRY', 1 + i), undefined, needs)
  }
  // A parent that is not a directory: a file, a FIFO.
  for (const parent of ['a.txt', 'fifo']) {
    const e = error('UNSAFE_ENTRY', 0, 'ENOTDIR')
    const needs = [[parent]]
    r(`${parent} as a parent: stat`, 'reader', 'stat', [[parent, 'x']], e, undefined, needs)
    r(`${parent} as a parent: readVersioned`, 'reader', 'readVersioned', [[parent, 'x'], BUDGET], e, undefined, needs)
    r(`${parent} as a parent: readRange`, 'reader', 'readRange', [[parent, 'x'], { offset: 0, length: 1 }], e, undefined, needs)
    r(`${parent} as a parent: walk`, 'reader', 'walk', [[parent, 'x'], { maxEntries: 1 }], e, undefined, needs)
    r(`${parent} as a parent: writeBytes`, 'writer', 'writeBytes', [[parent, 'x'], Uint8Array.of(1)], e, undefined, needs)
    r(`${parent} as a parent: remove`, 'writer', 'remove', [[parent, 'x']], e, undefined, needs)
    r(`${parent} as a parent: makeDirectory`, 'writer', 'makeDirectory', [[parent, 'x']], e, undefined, needs)
    r(`${parent} as a parent: rename from`, 'writer', 'rename', [[parent, 'x'], ['y']], e, undefined, needs)
    r(`${parent} as a parent: rename to`, 'writer', 'rename', [['a.txt'], [parent, 'x']], error('UNSAFE_ENTRY', 1, 'ENOTDIR'), undefined, needs)
    r(`${parent} as the walked directory`, 'reader', 'walk', [[parent], { maxEntries: 1 }], error('UNSAFE_ENTRY', 0), undefined, needs)
  }
  // What each operation gives for the ordinary entries.
  r('stat of a file', 'reader', 'stat', [['docs', 'b.txt']], check((s) => {
    const keys = Object.keys(s).join()
    if (keys !== 'kind,size,mtimeMs,mode,version') throw new Error(keys)
    if (s.kind !== 'file' || s.size !== 4 || !/^[0-9a-f]{96}$/.test(s.version) || s.mode !== (s.mode & 0o777)) throw new Error(JSON.stringify(s))
  }))
  r('stat of the root', 'reader', 'stat', [[]], check((s) => { if (s.kind !== 'directory') throw new Error(s.kind) }))
  r('stat of a FIFO', 'reader', 'stat', [['fifo']], check((s) => { if (s.kind !== 'other') throw new Error(s.kind) }), undefined, [['fifo']])
  r('stat of a missing entry', 'writer', 'stat', [['docs', 'missing']], value(undefined))
  r('stat below a missing directory', 'reader', 'stat', [['missing', 'x']], value(undefined))
  r('readVersioned: the bytes and the version a stat gives', 'reader', 'readVersioned', [['a.txt'], BUDGET], check(() => {}))
  r('readVersioned over budget', 'reader', 'readVersioned', [['a.txt'], { maxBytes: 4 }], error('OVER_BUDGET'))
  r('readVersioned of a directory', 'reader', 'readVersioned', [['docs'], BUDGET], error('UNSAFE_ENTRY', 0))
  r('readVersioned of a FIFO', 'reader', 'readVersioned', [['fifo'], BUDGET], error('UNSAFE_ENTRY', 0), undefined, [['fifo']])
  r('readVersioned of the root', 'reader', 'readVersioned', [[], BUDGET], error('UNSAFE_ENTRY'))
  r('readVersioned of a missing file', 'reader', 'readVersioned', [['missing'], BUDGET], value(undefined))
  r('readRange: a slice', 'reader', 'readRange', [['a.txt'], { offset: 1, length: 3 }], check((v) => {
    if (Buffer.from(v.bytes).toString() !== 'lph' || v.size !== 5) throw new Error(JSON.stringify(v))
  }))
  r('readRange: fewer at end of file', 'reader', 'readRange', [['a.txt'], { offset: 3, length: 100 }], check((v) => {
    if (Buffer.from(v.bytes).toString() !== 'ha' || v.size !== 5) throw new Error(JSON.stringify(v))
  }))
  r('readRange: none past it', 'reader', 'readRange', [['a.txt'], { offset: 99, length: 100 }], check((v) => {
    if (v.bytes.length !== 0 || v.size !== 5 || !Buffer.isBuffer(v.bytes)) throw new Error(JSON.stringify(v))
  }))
  r('readRange: length 0', 'reader', 'readRange', [['bin.dat'], { offset: 0, length: 0 }], check((v) => {
    if (v.bytes.length !== 0 || v.size !== 5) throw new Error(JSON.stringify(v))
  }))
  r('readRange of a directory', 'reader', 'readRange', [['docs'], { offset: 0, length: 1 }], error('UNSAFE_ENTRY', 0))
  r('readRange of a FIFO', 'reader', 'readRange', [['fifo'], { offset: 0, length: 1 }], error('UNSAFE_ENTRY', 0), undefined, [['fifo']])
  r('readRange of a missing file', 'reader', 'readRange', [['docs', 'missing'], { offset: 0, length: 1 }], value(undefined))
  r('walk of docs', 'reader', 'walk', [['docs'], { maxEntries: 100 }], check(walkIs([
    [['b.txt'], 'file'], [['empty'], 'directory'], [['nested'], 'directory'], [['nested', 'c.txt'], 'file']
  ], false)))
  r('walk of sub: links reported, never followed', 'reader', 'walk', [['sub'], { maxEntries: 100 }], check(walkIs([
    [['deep'], 'directory'], [['deep', 'd.txt'], 'file'], [['deep', 'link-out'], 'symlink'], [['link-up'], 'symlink']
  ], false)), undefined, [['sub', 'link-up'], ['sub', 'deep', 'link-out']])
  r('walk: maxEntries exactly reached is not truncated', 'reader', 'walk', [['docs'], { maxEntries: 4 }], check(walkIs([
    [['b.txt'], 'file'], [['empty'], 'directory'], [['nested'], 'directory'], [['nested', 'c.txt'], 'file']
  ], false)))
  r('walk: maxEntries below the count truncates', 'reader', 'walk', [['docs'], { maxEntries: 3 }], check(walkIs([
    [['b.txt'], 'file'], [['empty'], 'directory'], [['nested'], 'directory']
  ], true)))
  r('walk: maxEntries 0', 'reader', 'walk', [['docs'], { maxEntries: 0 }], check(walkIs([], true)))
  r('walk: maxDepth 0 lists the directory only', 'reader', 'walk', [['docs'], { maxEntries: 100, maxDepth: 0 }], check(walkIs([
    [['b.txt'], 'file'], [['empty'], 'directory'], [['nested'], 'directory']
  ], false)))
  r('walk of an empty directory', 'reader', 'walk', [['docs', 'empty'], { maxEntries: 5 }], check(walkIs([], false)))
  r('walk of a missing directory', 'reader', 'walk', [['missing'], { maxEntries: 5 }], value(undefined))
  r('writeBytes: any bytes', 'writer', 'writeBytes', [['bin.dat'], Uint8Array.of(0xff, 0xfe)], value(undefined), withEntry(['bin.dat'], hex([0xff, 0xfe])))
  r('writeBytes: createParents', 'writer', 'writeBytes', [['n', 'm', 'x'], Uint8Array.of(0x80), { createParents: true }], value(undefined),
    withEntry(['n', 'm', 'x'], hex([0x80])))
  r('writeBytes: a missing parent', 'writer', 'writeBytes', [['n', 'x'], Uint8Array.of(1)], error('HOST_IO', 0, 'ENOENT'))
  r('writeBytes over a directory', 'writer', 'writeBytes', [['docs'], Uint8Array.of(1)], error('UNSAFE_ENTRY', 0))
  r('writeText ifAbsent creates', 'writer', 'writeText', [['new.txt'], 'n', { ifAbsent: true }], value(undefined), withEntry(['new.txt'], hex('n')))
  r('writeText ifAbsent over a file', 'writer', 'writeText', [['a.txt'], 'n', { ifAbsent: true }], error('ENTRY_EXISTS', 0))
  r('writeText ifAbsent over a directory', 'writer', 'writeText', [['docs'], 'n', { ifAbsent: true }], error('ENTRY_EXISTS', 0))
  r('writeBytes ifAbsent over a FIFO', 'writer', 'writeBytes', [['fifo'], Uint8Array.of(1), { ifAbsent: true }], error('ENTRY_EXISTS', 0), undefined, [['fifo']])
  r('writeText ifVersion of the current version replaces', 'writer', 'writeText', (v) => [['a.txt'], 'new', { ifVersion: v(['a.txt']) }],
    value(undefined), withEntry(['a.txt'], hex('new')))
  r('writeText ifVersion of another file\'s version', 'writer', 'writeText', (v) => [['a.txt'], 'new', { ifVersion: v(['docs', 'b.txt']) }],
    error('FILE_CHANGED'))
  r('writeText ifVersion on a missing file', 'writer', 'writeText', (v) => [['missing.txt'], 'new', { ifVersion: v(['a.txt']) }], error('FILE_CHANGED'))
  r('remove of a file', 'writer', 'remove', [['docs', 'b.txt']], value(true), without(['docs', 'b.txt']))
  r('remove of a FIFO', 'writer', 'remove', [['fifo']], value(true), without(['fifo']), [['fifo']])
  r('remove of a missing entry', 'writer', 'remove', [['missing']], value(false))
  r('remove below a missing directory', 'writer', 'remove', [['missing', 'x']], value(false))
  r('remove of a directory without directory: true', 'writer', 'remove', [['docs', 'empty']], error('UNSAFE_ENTRY', 1, 'EISDIR'))
  r('remove of an empty directory', 'writer', 'remove', [['docs', 'empty'], { directory: true }], value(true), without(['docs', 'empty']))
  r('remove of a directory not empty', 'writer', 'remove', [['docs'], { directory: true }], error('HOST_IO', 0, 'ENOTEMPTY'))
  r('remove of the root', 'writer', 'remove', [[], { directory: true }], error('UNSAFE_ENTRY'))
  r('makeDirectory creates one', 'writer', 'makeDirectory', [['docs', 'made']], value(true), withEntry(['docs', 'made'], { directory: {} }))
  r('makeDirectory: parents', 'writer', 'makeDirectory', [['p', 'q', 'r'], { parents: true, mode: 0o700 }], value(true),
    withEntry(['p', 'q', 'r'], { directory: {} }))
  r('makeDirectory: a missing parent', 'writer', 'makeDirectory', [['p', 'q']], error('HOST_IO', 0, 'ENOENT'))
  r('makeDirectory: a directory already there', 'writer', 'makeDirectory', [['docs']], value(false))
  r('makeDirectory: the root', 'writer', 'makeDirectory', [[]], value(false))
  r('makeDirectory over a file', 'writer', 'makeDirectory', [['a.txt']], error('ENTRY_EXISTS', 0, 'EEXIST'))
  r('makeDirectory over a FIFO', 'writer', 'makeDirectory', [['fifo']], error('ENTRY_EXISTS', 0, 'EEXIST'), undefined, [['fifo']])
  r('makeDirectory with parents over a file parent', 'writer', 'makeDirectory', [['a.txt', 'x'], { parents: true }], error('UNSAFE_ENTRY', 0, 'ENOTDIR'))
  r('rename a file to a new name', 'writer', 'rename', [['a.txt'], ['docs', 'a2.txt']], value(undefined), moved(['a.txt'], ['docs', 'a2.txt']))
  r('rename a directory', 'writer', 'rename', [['docs'], ['sub', 'docs2']], value(undefined), moved(['docs'], ['sub', 'docs2']))
  r('rename a FIFO', 'writer', 'rename', [['fifo'], ['fifo2']], value(undefined), moved(['fifo'], ['fifo2']), [['fifo']])
  r('rename onto a file', 'writer', 'rename', [['a.txt'], ['docs', 'b.txt']], error('ENTRY_EXISTS', 2, 'EEXIST'))
  r('rename onto a directory', 'writer', 'rename', [['a.txt'], ['docs', 'empty']], error('ENTRY_EXISTS', 2, 'EEXIST'))
  r('rename onto a file, replace', 'writer', 'rename', [['a.txt'], ['docs', 'b.txt'], { replace: true }], value(undefined), moved(['a.txt'], ['docs', 'b.txt']))
  r('rename onto a directory, replace', 'writer', 'rename', [['a.txt'], ['docs', 'empty'], { replace: true }], error('UNSAFE_ENTRY', 2))
  r('rename onto a FIFO, replace', 'writer', 'rename', [['a.txt'], ['fifo'], { replace: true }], error('UNSAFE_ENTRY', 1), undefined, [['fifo']])
  r('rename a missing source', 'writer', 'rename', [['missing'], ['x']], error('HOST_IO', 0, 'ENOENT'))
  r('rename below a missing directory', 'writer', 'rename', [['missing', 'a'], ['x']], error('HOST_IO', 0, 'ENOENT'))
  r('rename to below a missing directory', 'writer', 'rename', [['a.txt'], ['missing', 'x']], error('HOST_IO', 1, 'ENOENT'))
  r('rename of the root', 'writer', 'rename', [[], ['x']], error('UNSAFE_ENTRY'))
  r('rename to the root', 'writer', 'rename', [['a.txt'], []], error('UNSAFE_ENTRY', 1))
  r('rename a directory below itself', 'writer', 'rename', [['docs'], ['docs', 'nested', 'x']], error('HOST_IO', undefined, 'EINVAL'))
  // Bad arguments, every operation, naming no value: a bad path (segment lists, the
  // byte budget) is INVALID_PATH, every other bad argument or option INVALID_OPTION.
  const PATHS = new Set(["rename to 'x'", 'stat of a string', 'readVersioned maxBytes -1'])
  for (const [op, side, args, what] of [
    ['readRange', 'reader', [['a.txt'], { offset: -1, length: 1 }]],
    ['readRange', 'reader', [['a.txt'], { offset: 0, length: MAX_LENGTH + 1 }]],
    ['readRange', 'reader', [['a.txt'], { offset: 0.5, length: 1 }]],
    ['readRange', 'reader', [['a.txt']]],
    ['walk', 'reader', [[], {}]],
    ['walk', 'reader', [[], { maxEntries: -1 }]],
    ['walk', 'reader', [[], { maxEntries: 1, maxDepth: 1.5 }]],
    ['walk', 'reader', [[]]],
    ['writeBytes', 'writer', [['x'], 'text']],
    ['writeBytes', 'writer', [['x'], Object.create(Uint8Array.prototype)]],
    ['writeBytes', 'writer', [['x'], new Proxy(new Uint8Array(1), {})]],
    ['writeText', 'writer', [['x'], Object.create(Uint8Array.prototype)]],
    ['writeText', 'writer', [['x'], new Proxy(new Uint8Array(1), {})]],
    ['writeText', 'writer', [['x'], 'x', { mode: 0o1777 }]],
    ['writeText', 'writer', [['x'], 'x', { mode: 0o4644 }]],
    ['writeText', 'writer', [['x'], 'x', { mode: '644' }]],
    ['writeText', 'writer', [['x'], 'x', { ifVersion: 'abc' }]],
    ['writeText', 'writer', [['x'], 'x', { ifVersion: 'A'.repeat(96) }]],
    ['writeText', 'writer', [['x'], 'x', { ifAbsent: 'yes' }]],
    ['writeText', 'writer', [['x'], 'x', { ifAbsent: true, ifVersion: '0'.repeat(96) }]],
    ['remove', 'writer', [['x'], { directory: 1 }]],
    ['makeDirectory', 'writer', [['x'], { mode: 0o1777 }]],
    ['makeDirectory', 'writer', [['x'], { mode: 0o2755 }]],
    ['makeDirectory', 'writer', [['x'], { mode: -1 }]],
    ['makeDirectory', 'writer', [['x'], { parents: 'yes' }]],
    ['rename', 'writer', [['a.txt'], ['x'], { replace: 1 }]],
    ['rename', 'writer', [['a.txt'], 'x'], "rename to 'x'"],
    ['stat', 'reader', ['a.txt'], 'stat of a string'],
    ['readVersioned', 'reader', [['a.txt'], { maxBytes: -1 }], 'readVersioned maxBytes -1'],
    ['readVersioned', 'reader', [['a.txt'], { maxBytes: 1, encoding: 'utf8' }]],
    ['readRange', 'reader', [['a.txt'], { offset: 0, length: 1, position: 0 }]],
    ['walk', 'reader', [[], { maxEntries: 1, recursive: true }]],
    ['stat', 'reader', [['a.txt'], { followSymlinks: true }]],
    ['list', 'reader', [[], { withFileTypes: true }]],
    ['writeBytes', 'writer', [['x'], new Uint8Array(1), { flag: 'a' }]],
    ['remove', 'writer', [['x'], { recursive: true }]],
    ['remove', 'writer', [['x'], { force: true }]],
    ['makeDirectory', 'writer', [['x'], { recursive: true }]],
    ['rename', 'writer', [['a.txt'], ['x'], { overwrite: true }]],
    ['rename', 'writer', [['a.txt'], ['x'], 'replace']]
  ]) {
    const code = PATHS.has(what) ? 'INVALID_PATH' : 'INVALID_OPTION'
    r(`${op} refuses a bad argument (${util.inspect(args, { breakLength: Infinity })}): ${code}`, side, op, args, error(code))
  }
  r('rename names the first bad target segment after the source\'s', 'writer', 'rename', [['a.txt'], ['ok', '..']], error('INVALID_PATH', 2))
  return rows
}

function walkIs (expected, truncated) {
  return (listing) => {
    const got = listing.map((e) => [e.path, e.kind])
    if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`walk gave ${JSON.stringify(got)}`)
    if (listing.truncated !== truncated || listing.omitted !== 0) throw new Error(`truncated ${listing.truncated}, omitted ${listing.omitted}`)
  }
}

const OPERATION_CASES = buildOperationCases()
module.exports.OPERATION_CASES = OPERATION_CASES

// ------------------------------------------------ the 0.3 operations (contract 0.3)
//
// Rows of OPERATION_03_CASES, in OPERATION_CASES' form, plus `layout` (a LAYOUTS name;
// HOSTILE when left out): readText, list and walk withStats, walk's exclude and its
// budget and depth rules, appendText / appendBytes, durable. A row's check gets the
// face's context too ({ reader, writer, ... }), to compare with what stat says.

// A workspace an agent's tools walk: node_modules and .git hold most of it.
const WORKSPACE = {
  '.git': { HEAD: 'ref: refs/heads/main\n', objects: { ab: { cdef: Uint8Array.of(1, 2, 3) } } },
  'README.md': '\ufeff# readme\n',
  'bin.dat': Uint8Array.of(0xff, 0x00, 0x80),
  node_modules: { lib: { 'index.js': 'module.exports = 1\n' }, '.bin': {} },
  src: { 'a.ts': 'export {}\n', node_modules: { 'x.js': 'x' }, util: { 'b.ts': 'b', empty: {} } },
  'z.log': 'line\n'
}
LAYOUTS.WORKSPACE = WORKSPACE

const KEYS = 'kind,size,mtimeMs,mode,version'

/** Each listed entry's stat is what stat gives for its path (`base`: the listed or
 * walked directory's segments; an entry's own segments: [name] or path). */
function statsAreStats (base, count) {
  return (entries, ctx) => {
    if (count !== undefined && entries.length !== count) throw new Error(`${entries.length} entries`)
    for (const e of entries) {
      const segments = [...base, ...(e.path || [e.name])]
      if (Object.keys(e).join() !== (e.path ? 'path,kind,stat' : 'name,kind,stat')) throw new Error(Object.keys(e).join())
      if (Object.keys(e.stat).join() !== KEYS) throw new Error(Object.keys(e.stat).join())
      const s = ctx.reader.statSync(segments)
      if (JSON.stringify(e.stat) !== JSON.stringify(s)) throw new Error(`${segments.join('/')}: ${JSON.stringify(e.stat)} is not ${JSON.stringify(s)}`)
      if (e.kind !== s.kind) throw new Error(`${segments.join('/')}: kind ${e.kind}`)
    }
  }
}

function walkGives (expected, truncated, omitted = 0) {
  return (listing) => {
    const got = listing.map((e) => [e.path.join('/'), e.kind])
    if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`walk gave ${JSON.stringify(got)}`)
    if (listing.truncated !== truncated || listing.omitted !== omitted) throw new Error(`truncated ${listing.truncated}, omitted ${listing.omitted}`)
    if (Object.keys(listing[0] || { path: 0, kind: 0 }).join() !== 'path,kind') throw new Error('without withStats: no stat')
  }
}

const isText = (text) => check((v) => {
  if (typeof v !== 'string' || v !== text) throw new Error(`readText gave ${JSON.stringify(v)}`)
})

function buildOperation03Cases () {
  const rows = []
  const r = (title, side, op, args, expect, tree, needs, layout) => rows.push({ title, side, op, args, expect, tree, needs, layout })
  const ws = (title, side, op, args, expect, tree) => r(title, side, op, args, expect, tree, undefined, 'WORKSPACE')

  // readText: readBytes decoded as UTF-8; not UTF-8: INVALID_CONTENT; a BOM kept.
  r('readText of a file', 'reader', 'readText', [['a.txt'], BUDGET], isText('alpha'))
  r('readText of UTF-8 text', 'reader', 'readText', [['utf8.txt'], BUDGET], isText(HOSTILE['utf8.txt']))
  r('readText of an empty file', 'reader', 'readText', [['empty.txt'], { maxBytes: 0 }], isText(''))
  r('readText exactly at its budget', 'reader', 'readText', [['a.txt'], { maxBytes: 5 }], isText('alpha'))
  r('readText one byte over its budget', 'reader', 'readText', [['a.txt'], { maxBytes: 4 }], error('OVER_BUDGET'))
  r('readText of bytes that are not UTF-8', 'reader', 'readText', [['bin.dat'], BUDGET], error('INVALID_CONTENT'))
  ws('readText keeps a byte-order mark', 'reader', 'readText', [['README.md'], BUDGET], isText('\ufeff# readme\n'))
  r('readText of a directory', 'reader', 'readText', [['docs'], BUDGET], error('UNSAFE_ENTRY', 0, 'EISDIR'))
  r('readText of the root', 'reader', 'readText', [[], BUDGET], error('UNSAFE_ENTRY', undefined, 'EISDIR'))
  r('readText of a FIFO (at once)', 'reader', 'readText', [['fifo'], BUDGET], error('UNSAFE_ENTRY', 0), undefined, [['fifo']])
  r('readText of a symlink', 'reader', 'readText', [['link-file'], BUDGET], error('UNSAFE_ENTRY', 0, 'ELOOP'), undefined, [['link-file']])
  r('readText through a symlink to outside', 'reader', 'readText', [['link-outside-dir', 'secret.txt'], BUDGET], error('UNSAFE_ENTRY', 0, 'ELOOP'),
    undefined, [['link-outside-dir']])
  r('readText below a file', 'reader', 'readText', [['a.txt', 'x'], BUDGET], error('UNSAFE_ENTRY', 0, 'ENOTDIR'))
  r('readText of a missing file', 'reader', 'readText', [['missing'], BUDGET], value(undefined))
  r('readText 255 segments deep', 'reader', 'readText', [[...DEEP_DIRS, 'f'], BUDGET], isText('bottom'), undefined, undefined, 'DEEP')

  // list with stats
  r('list withStats: each entry\'s stat is stat\'s', 'reader', 'list', [['docs'], { withStats: true }], check(statsAreStats(['docs'], 3)))
  r('list withStats of the root: links and a FIFO looked at, never followed or opened', 'reader', 'list', [[], { withStats: true }],
    check((entries, ctx) => {
      statsAreStats([])(entries.filter((e) => !ctx.missing.some((m) => m.segments.length === 1 && m.segments[0] === e.name)), ctx)
      const link = entries.find((e) => e.name === 'link-file')
      if (link && (link.kind !== 'symlink' || link.stat.kind !== 'symlink' || link.stat.size !== Buffer.byteLength('a.txt'))) throw new Error(JSON.stringify(link))
      const fifo = entries.find((e) => e.name === 'fifo')
      if (fifo && fifo.stat.kind !== 'other') throw new Error(JSON.stringify(fifo))
    }))
  r('list withStats false: no stat', 'reader', 'list', [['docs'], { withStats: false }], check((entries) => {
    if (entries.map((e) => Object.keys(e).join()).join(';') !== 'name,kind;name,kind;name,kind') throw new Error('a stat without withStats')
  }))
  r('list withStats of a file', 'reader', 'list', [['a.txt'], { withStats: true }], error('UNSAFE_ENTRY', 0))
  r('list withStats of a missing directory', 'reader', 'list', [['missing'], { withStats: true }], value(undefined))

  // walk: exclude, the budget and truncated, the segment limit, stats
  const all = [['README.md', 'file'], ['bin.dat', 'file'], ['src', 'directory'], ['src/a.ts', 'file'], ['src/util', 'directory'],
    ['src/util/b.ts', 'file'], ['src/util/empty', 'directory'], ['z.log', 'file']]
  const EX = ['node_modules', '.git']
  ws('walk with exclude: left out wherever they occur, with their subtrees', 'reader', 'walk', [[], { maxEntries: 100, exclude: EX }],
    check(walkGives(all, false)))
  ws('walk with exclude: exactly maxEntries, the last a file: not truncated', 'reader', 'walk', [[], { maxEntries: 8, exclude: EX }],
    check(walkGives(all, false)))
  ws('walk with exclude: excluded names not counted in maxEntries', 'reader', 'walk', [[], { maxEntries: 3, exclude: EX }],
    check(walkGives(all.slice(0, 3), true)))
  ws('walk: the last entry a directory found but not read: truncated', 'reader', 'walk', [[], { maxEntries: 7, exclude: EX }],
    check(walkGives(all.slice(0, 7), true)))
  ws('walk: an empty directory listed last, never read: truncated (not visited, empty or not)', 'reader', 'walk',
    [['src', 'util'], { maxEntries: 2 }], check(walkGives([['b.ts', 'file'], ['empty', 'directory']], true)))
  ws('walk: the same with room to read it: not truncated', 'reader', 'walk', [['src', 'util'], { maxEntries: 3 }],
    check(walkGives([['b.ts', 'file'], ['empty', 'directory']], false)))
  ws('walk: entries left in directories already read: truncated', 'reader', 'walk', [[], { maxEntries: 4, exclude: EX }],
    check(walkGives(all.slice(0, 4), true)))
  ws('walk: maxEntries 0 reads nothing: truncated', 'reader', 'walk', [[], { maxEntries: 0, exclude: EX }], check(walkGives([], true)))
  ws('walk: maxDepth 0 with exclude: no truncation for the depth asked', 'reader', 'walk', [[], { maxEntries: 4, maxDepth: 0, exclude: EX }],
    check(walkGives([['README.md', 'file'], ['bin.dat', 'file'], ['src', 'directory'], ['z.log', 'file']], false)))
  ws('walk with exclude of a nested name and a file name', 'reader', 'walk', [['src'], { maxEntries: 100, exclude: ['util', 'a.ts'] }],
    check(walkGives([['node_modules', 'directory'], ['node_modules/x.js', 'file']], false)))
  ws('walk with an exclude that matches nothing', 'reader', 'walk', [['src'], { maxEntries: 100, exclude: ['nothing'] }],
    check(walkGives([['a.ts', 'file'], ['node_modules', 'directory'], ['node_modules/x.js', 'file'], ['util', 'directory'],
      ['util/b.ts', 'file'], ['util/empty', 'directory']], false)))
  ws('walk without exclude lists node_modules and .git', 'reader', 'walk', [[], { maxEntries: 3 }],
    check(walkGives([['.git', 'directory'], ['.git/HEAD', 'file'], ['.git/objects', 'directory']], true)))
  ws('walk withStats: each entry\'s stat is stat\'s', 'reader', 'walk', [[], { maxEntries: 100, exclude: EX, withStats: true }],
    check(statsAreStats([], 8)))
  ws('walk withStats of a subdirectory', 'reader', 'walk', [['src', 'util'], { maxEntries: 100, withStats: true }], check(statsAreStats(['src', 'util'], 2)))
  r('walk withStats: links looked at as links', 'reader', 'walk', [['sub'], { maxEntries: 100, withStats: true }], check((entries, ctx) => {
    statsAreStats(['sub'], 4)(entries, ctx)
    if (entries[2].stat.kind !== 'symlink') throw new Error(JSON.stringify(entries[2]))
  }), undefined, [['sub', 'link-up'], ['sub', 'deep', 'link-out']])
  // DEEP: 254 directories `d`, then `f` and the empty directory `e` at 255 segments:
  // `e` is listed, but nothing below it can be named, so it is not entered.
  r('walk of 255 segments: the subtree the limit keeps out is omitted and truncates', 'reader', 'walk', [[], { maxEntries: 1000 }],
    check((listing) => {
      const longest = Math.max(...listing.map((e) => e.path.length))
      if (listing.length !== 256 || longest !== 255 || listing.omitted !== 1 || listing.truncated !== true) {
        throw new Error(`${listing.length} entries, longest ${longest}, omitted ${listing.omitted}, truncated ${listing.truncated}`)
      }
      const last = listing[listing.length - 1]
      if (last.path.length !== 255 || last.path[254] !== 'f' || listing[listing.length - 2].path[254] !== 'e') throw new Error(JSON.stringify(last))
    }), undefined, undefined, 'DEEP')
  r('walk of 255 segments, from a directory: the same limit from the root', 'reader', 'walk', [DEEP_DIRS.slice(0, 200), { maxEntries: 1000 }],
    check((listing) => {
      const longest = Math.max(...listing.map((e) => e.path.length))
      if (listing.length !== 56 || longest !== 55 || listing.omitted !== 1 || listing.truncated !== true) {
        throw new Error(`${listing.length} entries, longest ${longest}, omitted ${listing.omitted}, truncated ${listing.truncated}`)
      }
    }), undefined, undefined, 'DEEP')
  r('walk of 255 segments with a maxDepth above it: no omission below the bound', 'reader', 'walk', [[], { maxEntries: 1000, maxDepth: 10 }],
    check((listing) => {
      if (listing.length !== 11 || listing.omitted !== 0 || listing.truncated !== false) throw new Error(`${listing.length}, ${listing.omitted}, ${listing.truncated}`)
    }), undefined, undefined, 'DEEP')

  // appendText / appendBytes
  r('appendText to a file: at its end', 'writer', 'appendText', [['a.txt'], ' beta'], value(undefined), withEntry(['a.txt'], hex('alpha beta')))
  r('appendBytes to a file: any bytes', 'writer', 'appendBytes', [['bin.dat'], Uint8Array.of(0xfe, 0x00)], value(undefined),
    withEntry(['bin.dat'], hex([0x00, 0xff, 0xfe, 0x80, 0x0a, 0xfe, 0x00])))
  r('appendText creates a missing file', 'writer', 'appendText', [['docs', 'log.txt'], 'one\n'], value(undefined), withEntry(['docs', 'log.txt'], hex('one\n')))
  r('appendText with createParents', 'writer', 'appendText', [['logs', 'day', 'log.jsonl'], '{}\n', { createParents: true, mode: 0o600 }], value(undefined),
    withEntry(['logs', 'day', 'log.jsonl'], hex('{}\n')))
  r('appendText durable: false', 'writer', 'appendText', [['a.txt'], '!', { durable: false }], value(undefined), withEntry(['a.txt'], hex('alpha!')))
  r('appendText of nothing creates an empty file', 'writer', 'appendText', [['new.txt'], ''], value(undefined), withEntry(['new.txt'], hex('')))
  r('appendText of nothing to a file changes nothing', 'writer', 'appendText', [['a.txt'], ''], value(undefined))
  r('appendText of bytes that are UTF-8', 'writer', 'appendText', [['a.txt'], Buffer.from(' \u00e9')], value(undefined), withEntry(['a.txt'], hex('alpha \u00e9')))
  r('appendText of bytes that are not UTF-8', 'writer', 'appendText', [['a.txt'], Uint8Array.of(0xff)], error('INVALID_CONTENT'))
  r('appendText of a lone surrogate', 'writer', 'appendText', [['a.txt'], 'x\ud800'], error('INVALID_CONTENT'))
  r('appendText: a missing parent', 'writer', 'appendText', [['n', 'log'], 'x'], error('HOST_IO', 0, 'ENOENT'))
  r('appendText to a directory', 'writer', 'appendText', [['docs'], 'x'], error('UNSAFE_ENTRY', 0, 'EISDIR'))
  r('appendText to the root', 'writer', 'appendText', [[], 'x'], error('UNSAFE_ENTRY', undefined, 'EISDIR'))
  r('appendBytes to a FIFO (at once, never opened)', 'writer', 'appendBytes', [['fifo'], Uint8Array.of(1)], error('UNSAFE_ENTRY', 0), undefined, [['fifo']])
  r('appendText to a symlink (its target untouched)', 'writer', 'appendText', [['link-file'], 'x'], error('UNSAFE_ENTRY', 0, 'ELOOP'), undefined, [['link-file']])
  r('appendText to a dangling symlink (nothing created through it)', 'writer', 'appendText', [['link-dangling'], 'x'], error('UNSAFE_ENTRY', 0, 'ELOOP'),
    undefined, [['link-dangling']])
  r('appendText to a symlink to outside', 'writer', 'appendText', [['link-outside-file'], 'x'], error('UNSAFE_ENTRY', 0, 'ELOOP'),
    undefined, [['link-outside-file']])
  r('appendText below a symlink to outside, createParents', 'writer', 'appendText', [['link-outside-dir', 'n', 'x'], 'x', { createParents: true }],
    error('UNSAFE_ENTRY', 0, 'ELOOP'), undefined, [['link-outside-dir']])
  r('appendText below a file', 'writer', 'appendText', [['a.txt', 'x'], 'x'], error('UNSAFE_ENTRY', 0, 'ENOTDIR'))
  r('appendText 255 segments deep', 'writer', 'appendText', [[...DEEP_DIRS, 'f'], '!'], value(undefined),
    withEntry([...DEEP_DIRS, 'f'], hex('bottom!')), undefined, 'DEEP')

  // durable on writes
  r('writeText durable: false', 'writer', 'writeText', [['a.txt'], 'new', { durable: false }], value(undefined), withEntry(['a.txt'], hex('new')))
  r('writeBytes durable: false, createParents', 'writer', 'writeBytes', [['n', 'b.bin'], Uint8Array.of(7), { durable: false, createParents: true }],
    value(undefined), withEntry(['n', 'b.bin'], hex([7])))

  // Bad arguments of the 0.3 operations and options: INVALID_PATH for a path or budget,
  // INVALID_OPTION for everything else, nothing changed.
  for (const [op, side, args, code] of [
    ['readText', 'reader', [['a.txt']], 'INVALID_PATH'],
    ['readText', 'reader', [['a.txt'], { maxBytes: -1 }], 'INVALID_PATH'],
    ['readText', 'reader', [['a.txt'], { maxBytes: 5, encoding: 'latin1' }], 'INVALID_OPTION'],
    ['list', 'reader', [[], { withStats: 'yes' }], 'INVALID_OPTION'],
    ['list', 'reader', [[], { withFileTypes: true }], 'INVALID_OPTION'],
    ['list', 'reader', [[], 'withStats'], 'INVALID_OPTION'],
    ['walk', 'reader', [[], { maxEntries: 1, exclude: 'node_modules' }], 'INVALID_OPTION'],
    ['walk', 'reader', [[], { maxEntries: 1, exclude: [''] }], 'INVALID_OPTION'],
    ['walk', 'reader', [[], { maxEntries: 1, exclude: ['..'] }], 'INVALID_OPTION'],
    ['walk', 'reader', [[], { maxEntries: 1, exclude: ['a/b'] }], 'INVALID_OPTION'],
    ['walk', 'reader', [[], { maxEntries: 1, exclude: [42] }], 'INVALID_OPTION'],
    ['walk', 'reader', [[], { maxEntries: 1, exclude: ['\ud800'] }], 'INVALID_OPTION'],
    ['walk', 'reader', [[], { maxEntries: 1, exclude: [{ toString: () => 'x' }] }], 'INVALID_OPTION'],
    ['walk', 'reader', [[], { maxEntries: 1, withStats: 'yes' }], 'INVALID_OPTION'],
    ['walk', 'reader', [[], { maxEntries: 1, excludePatterns: ['*.js'] }], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], 'x', { flag: 'a' }], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], 'x', { ifAbsent: true }], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], 'x', { ifVersion: '0'.repeat(96) }], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], 'x', { mode: 0o4644 }], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], 'x', { mode: -1 }], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], 'x', { durable: 'no' }], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], 'x', { createParents: 1 }], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], 'x', 'a'], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], 42], 'INVALID_OPTION'],
    ['appendText', 'writer', [['a.txt'], null], 'INVALID_OPTION'],
    ['appendBytes', 'writer', [['a.txt'], 'text'], 'INVALID_OPTION'],
    ['appendBytes', 'writer', [['a.txt'], new Proxy(new Uint8Array(1), {})], 'INVALID_OPTION'],
    ['appendBytes', 'writer', [['a.txt'], [1, 2]], 'INVALID_OPTION'],
    ['appendBytes', 'writer', [['a.txt'], new Uint8Array(1), { encoding: 'binary' }], 'INVALID_OPTION'],
    ['appendBytes', 'writer', ['a.txt', new Uint8Array(1)], 'INVALID_PATH'],
    ['writeText', 'writer', [['a.txt'], 'x', { durable: 'no' }], 'INVALID_OPTION'],
    ['writeBytes', 'writer', [['a.txt'], new Uint8Array(1), { durable: 1 }], 'INVALID_OPTION']
  ]) {
    r(`${op} refuses a bad argument (${util.inspect(args, { breakLength: Infinity })}): ${code}`, side, op, args, error(code))
  }
  r('readText refuses a ".." segment', 'reader', 'readText', [['..'], BUDGET], error('INVALID_PATH', 0))
  r('appendText refuses a ".." segment after a valid one', 'writer', 'appendText', [['a.txt', '..'], 'x'], error('INVALID_PATH', 1))
  // A reader cannot append, a writer cannot read text.
  r('a writer has no readText', 'writer', 'stat', [['a.txt']], check(function (s, ctx) {
    if (typeof ctx.writer.readText === 'function' || typeof ctx.reader.appendText === 'function') throw new Error('crossed methods')
  }))
  return rows
}

const OPERATION_03_CASES = buildOperation03Cases()
module.exports.OPERATION_03_CASES = OPERATION_03_CASES
