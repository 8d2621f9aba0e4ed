'use strict'
// A bad argument names itself and what it must be, in the one message format
// (lib/internal/message.js), never its value; an option key the operation does not
// know is refused, never ignored, and named only when it is a plain identifier of at
// most 32 characters (contract 0.3). A bad path (segments, root, the byte budget) is
// INVALID_PATH, every other bad argument INVALID_OPTION, and `argument` names it. Both
// faces (native and in-memory) give the same message: they validate through one table.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const fa = require('../../lib/file-authority.js')
const { createMemoryAuthorities } = require('../../lib/file-authority-testing.js')

const V = '0'.repeat(96)
const MAXB = 'must be a safe integer from 0 to buffer.constants.MAX_LENGTH'
const SAFE = 'must be a safe integer from 0 to Number.MAX_SAFE_INTEGER'
const SEG = 'must be one path segment (a non-empty name without a separator or NUL, not . or .., at most 255 UTF-8 bytes)'

// [method, args, expected message]; SECRET marks caller text that must never appear.
const SECRET = 'secret-value-7'
const WT = 'createParents, mode, ifVersion, ifAbsent, durable'
const CASES = [
  ['readBytes', [['d', 'f'], { maxBytes: -1 }], `readBytes failed: INVALID_PATH: options.maxBytes ${MAXB}`],
  ['readBytes', [['d', 'f'], { maxbytes: 10 }], 'readBytes failed: INVALID_OPTION: options.maxbytes is not an option of readBytes (it takes maxBytes)'],
  ['readBytes', [['d', 'f'], { maxBytes: 1, encoding: 'utf8' }], 'readBytes failed: INVALID_OPTION: options.encoding is not an option of readBytes (it takes maxBytes)'],
  ['readBytes', [['d', 'f'], { maxBytes: 1, [`${SECRET} key`]: 1 }], 'readBytes failed: INVALID_OPTION: options has an unknown option (readBytes takes maxBytes)'],
  ['readBytes', [['d', 'f'], { maxBytes: 1, ['k'.repeat(33)]: 1 }], 'readBytes failed: INVALID_OPTION: options has an unknown option (readBytes takes maxBytes)'],
  ['readBytes', [['d', 'f'], { maxBytes: SECRET }], `readBytes failed: INVALID_PATH: options.maxBytes ${MAXB}`],
  ['readBytes', [['d', 'f']], `readBytes failed: INVALID_PATH: options.maxBytes ${MAXB}`],
  ['readBytes', [['d', 'f'], SECRET], 'readBytes failed: INVALID_OPTION: options must be an object with maxBytes'],
  ['readBytes', [SECRET, { maxBytes: 1 }], 'readBytes failed: INVALID_PATH: segments must be an array of at most 255 path segments'],
  ['readBytes', [['d', `${SECRET}/x`], { maxBytes: 1 }], `readBytes failed: INVALID_PATH at segment 1: segments[1] ${SEG}`],
  ['readVersioned', [['f'], { maxBytes: 1.5 }], `readVersioned failed: INVALID_PATH: options.maxBytes ${MAXB}`],
  ['readRange', [['f'], { offset: -1, length: 1 }], `readRange failed: INVALID_OPTION: options.offset ${SAFE}`],
  ['readRange', [['f'], { offset: 0, lenght: 1 }], 'readRange failed: INVALID_OPTION: options.lenght is not an option of readRange (it takes offset, length)'],
  ['readRange', [['f'], { offset: 0 }], `readRange failed: INVALID_OPTION: options.length ${MAXB}`],
  ['walk', [[], { maxEntries: 'x' }], `walk failed: INVALID_OPTION: options.maxEntries ${SAFE}`],
  ['walk', [[], { maxEntries: 1, maxDepth: -2 }], `walk failed: INVALID_OPTION: options.maxDepth ${SAFE}`],
  ['stat', [['f'], { bigint: true }], 'stat failed: INVALID_OPTION: options must be left out (stat takes no options)'],
  ['writeText', [['x'], 'x', { createParents: 'yes' }], 'writeText failed: INVALID_OPTION: options.createParents must be a boolean'],
  ['writeText', [['x'], 'x', { flag: 'a' }], `writeText failed: INVALID_OPTION: options.flag is not an option of writeText (it takes ${WT})`],
  ['writeText', [['x'], 'x', { mode: 0o4755 }], 'writeText failed: INVALID_OPTION: options.mode must be an integer from 0 to 0o777 (permission bits only)'],
  ['writeText', [['x'], 'x', { ifVersion: SECRET }], 'writeText failed: INVALID_OPTION: options.ifVersion must be a version string (96 lowercase hex digits) from stat or readVersioned'],
  ['writeText', [['x'], 'x', { ifVersion: V, ifAbsent: true }], 'writeText failed: INVALID_OPTION: options.ifVersion must be left out when options.ifAbsent is true'],
  ['writeText', [['x'], 'x', { ifAbsent: 1 }], 'writeText failed: INVALID_OPTION: options.ifAbsent must be a boolean'],
  ['writeText', [['x'], 42], 'writeText failed: INVALID_OPTION: text must be a string or a Uint8Array'],
  ['writeText', [['x'], '\ud800' + SECRET], 'writeText failed: INVALID_CONTENT: text must be well-formed UTF-16'],
  ['writeBytes', [['x'], SECRET], 'writeBytes failed: INVALID_OPTION: bytes must be a Uint8Array'],
  ['writeBytes', [['x'], new Uint8Array(1), SECRET], 'writeBytes failed: INVALID_OPTION: options must be an object'],
  ['remove', [['x'], { directory: 'no' }], 'remove failed: INVALID_OPTION: options.directory must be a boolean'],
  ['remove', [['x'], { recursive: true }], 'remove failed: INVALID_OPTION: options.recursive is not an option of remove (it takes directory)'],
  ['makeDirectory', [['x'], { parents: 0 }], 'makeDirectory failed: INVALID_OPTION: options.parents must be a boolean'],
  ['makeDirectory', [['x'], { mode: 1000 }], 'makeDirectory failed: INVALID_OPTION: options.mode must be an integer from 0 to 0o777 (permission bits only)'],
  ['rename', [['a'], ['b'], { replace: 'yes' }], 'rename failed: INVALID_OPTION: options.replace must be a boolean'],
  ['rename', [[SECRET, '..'], ['b']], `rename failed: INVALID_PATH at segment 1: from[1] ${SEG}`],
  ['rename', [['a', 'b'], ['c', '..']], `rename failed: INVALID_PATH at segment 3: to[1] ${SEG}`],
  // contract 0.3
  ['readText', [['f'], { maxBytes: -1 }], `readText failed: INVALID_PATH: options.maxBytes ${MAXB}`],
  ['readText', [['f'], { maxBytes: 1, encoding: 'utf8' }], 'readText failed: INVALID_OPTION: options.encoding is not an option of readText (it takes maxBytes)'],
  ['list', [[], { withStats: 'yes' }], 'list failed: INVALID_OPTION: options.withStats must be a boolean'],
  ['list', [[], { withFileTypes: true }], 'list failed: INVALID_OPTION: options.withFileTypes is not an option of list (it takes withStats)'],
  ['walk', [[], { maxEntries: 1, exclude: 'node_modules' }], 'walk failed: INVALID_OPTION: options.exclude must be an array of entry names, each one path segment'],
  ['walk', [[], { maxEntries: 1, exclude: [`${SECRET}/x`] }], 'walk failed: INVALID_OPTION: options.exclude must be an array of entry names, each one path segment'],
  ['walk', [[], { maxEntries: 1, withStats: 1 }], 'walk failed: INVALID_OPTION: options.withStats must be a boolean'],
  ['walk', [[], { maxEntries: 1, excludePatterns: ['*.js'] }], 'walk failed: INVALID_OPTION: options.excludePatterns is not an option of walk (it takes maxEntries, maxDepth, exclude, withStats)'],
  ['writeText', [['x'], 'x', { durable: 'no' }], 'writeText failed: INVALID_OPTION: options.durable must be a boolean'],
  ['appendText', [['x'], 'x', { flag: 'a' }], 'appendText failed: INVALID_OPTION: options.flag is not an option of appendText (it takes createParents, mode, durable)'],
  ['appendText', [['x'], 'x', { ifAbsent: true }], 'appendText failed: INVALID_OPTION: options.ifAbsent is not an option of appendText (it takes createParents, mode, durable)'],
  ['appendText', [['x'], 'x', { mode: 0o4644 }], 'appendText failed: INVALID_OPTION: options.mode must be an integer from 0 to 0o777 (permission bits only)'],
  ['appendText', [['x'], 'x', { durable: 0 }], 'appendText failed: INVALID_OPTION: options.durable must be a boolean'],
  ['appendText', [['x'], 42], 'appendText failed: INVALID_OPTION: text must be a string or a Uint8Array'],
  ['appendText', [['x'], '\ud800' + SECRET], 'appendText failed: INVALID_CONTENT: text must be well-formed UTF-16'],
  ['appendText', [['x'], Uint8Array.of(0xff)], 'appendText failed: INVALID_CONTENT: text must be valid UTF-8'],
  ['appendBytes', [['x'], SECRET], 'appendBytes failed: INVALID_OPTION: bytes must be a Uint8Array'],
  ['appendBytes', [['x', '..'], new Uint8Array(1)], `appendBytes failed: INVALID_PATH at segment 1: segments[1] ${SEG}`]
]
const READ_OPS = new Set(['readBytes', 'readVersioned', 'readRange', 'readText', 'list', 'walk', 'stat'])

function check (err, want) {
  assert.ok(err, 'refused')
  assert.equal(err.message, want)
  assert.ok(!err.message.includes('secret'), 'never a value the caller passed')
  // `argument` names what is at fault, as the message does (contract 0.3).
  const named = /failed: [A-Z_]+(?: at segment \d+)?: ([A-Za-z]+(?:\.[A-Za-z$_]+|\[\d+\])?) /.exec(want)
  if (!/INVALID_CONTENT/.test(want)) assert.equal(err.argument, named[1])
}

describe('file-authority: a bad argument names itself and what it must be', function () {
  let dir, faces
  before(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-messages-'))
    const mem = createMemoryAuthorities({})
    faces = {
      native: { reader: await fa.openReadAuthority(dir), writer: await fa.openWriteAuthority(dir) },
      memory: mem
    }
  })
  after(async function () {
    await faces.native.reader.close()
    await faces.native.writer.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  for (const face of ['native', 'memory']) {
    for (const [method, args, want] of CASES) {
      it(`${face}: ${want}`, async function () {
        const a = READ_OPS.has(method) ? faces[face].reader : faces[face].writer
        let err
        try { await a[method](...args) } catch (e) { err = e }
        check(err, want)
        err = undefined
        try { a[`${method}Sync`](...args) } catch (e) { err = e }
        check(err, want)
      })
    }
  }

  it('names the root and the receiver, never their value', async function () {
    let err
    try { await fa.openReadAuthority(`relative/${SECRET}`) } catch (e) { err = e }
    check(err, 'openReadAuthority failed: INVALID_PATH: root must be an absolute path to a directory (a well-formed string without NUL)')
    err = undefined
    try { fa.openWriteAuthoritySync(dir, { sameRootAs: SECRET }) } catch (e) { err = e }
    check(err, 'openWriteAuthority failed: INVALID_OPTION: options.sameRootAs must be a file authority of this module')
    err = undefined
    try { fa.openWriteAuthoritySync(dir, { sameRoot: SECRET }) } catch (e) { err = e }
    check(err, 'openWriteAuthority failed: INVALID_OPTION: options.sameRoot is not an option of openWriteAuthority (it takes sameRootAs)')
    err = undefined
    try { faces.native.reader.listSync.call({}, []) } catch (e) { err = e }
    check(err, 'list failed: INVALID_OPTION: this must be a file authority')
  })
})
