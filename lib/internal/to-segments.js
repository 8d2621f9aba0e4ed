'use strict'
// toSegments: a path string a caller or a model chose, as the segment list every
// file-authority operation takes. Shared by file-authority and file-authority/testing
// (the same function for both); it never touches the filesystem.
//
// The rules (contract 0.3):
//   - separators are '/' (and '\' on Windows); empty and '.' components are dropped;
//   - '..' anywhere, a NUL, or any component that breaks the segment rules is
//     INVALID_PATH with the index of that component among the ones kept;
//   - without options.root an absolute path ('/a', 'C:\a', '\\server\share') is
//     INVALID_PATH; with it, an absolute path must lie beneath the root by whole
//     components ('/srv/ws_evil/x' and '/srv/ws /x' are not beneath '/srv/ws') and the
//     result is relative to it; a relative path is taken as relative to the root;
//   - nothing is trimmed, unquoted or case-folded: a path is compared exactly as given,
//     so a sibling of the root that differs by a quote, a space or a letter's case is
//     never taken for it.
// Messages never hold the path or the root.

const args = require('./args.js')
const { segmentProblem, invalid, raise, MAX_SEGMENTS } = require('./file-authority-common.js')

const OPERATION = 'toSegments'
const PATH_EXPECTED = 'must be a path string'
const ROOT_EXPECTED = 'must be an absolute path string'
const OPTIONS = args.defineOptions(OPERATION, {
  root: args.custom(ROOT_EXPECTED, (v) => typeof v === 'string', 'INVALID_PATH')
})

/**
 * Splits `text` into { prefix, parts }: `prefix` is '' for a relative path, else the
 * part that makes it absolute, exactly as written ('/'; on Windows 'C:' plus a
 * separator, '\\server\share' or a single separator: compared exactly, never folded);
 * `parts` are the components with the empty ones and '.' dropped.
 */
function parse (text, windows) {
  let prefix = ''
  let rest = text
  if (windows) {
    let m
    if ((m = /^[A-Za-z]:[\\/]/.exec(rest)) !== null) {
      prefix = rest.slice(0, 2) + '\\'
      rest = rest.slice(3)
    } else if ((m = /^[\\/]{2}([^\\/]+)[\\/]+([^\\/]+)/.exec(rest)) !== null) {
      prefix = `\\\\${m[1]}\\${m[2]}`
      rest = rest.slice(m[0].length)
    } else if (/^[\\/]{2}/.test(rest)) {
      return { prefix: '\\\\', parts: null } // a UNC path without a share: never a root or beneath one
    } else if (/^[\\/]/.test(rest)) {
      prefix = '\\'
      rest = rest.slice(1)
    }
  } else if (rest.startsWith('/')) {
    prefix = '/'
    rest = rest.slice(1)
  }
  const parts = rest.split(windows ? /[\\/]/ : '/').filter((part) => part !== '' && part !== '.')
  return { prefix, parts }
}

/** The index of the first component that is not a segment ('..' included), or -1. */
function firstBad (parts, windows) {
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === '..' || segmentProblem(parts[i], windows)) return i
  }
  return -1
}

function badPath (expected, segmentIndex) {
  return invalid(OPERATION, 'path', expected, segmentIndex, 'INVALID_PATH')
}

/** The components beneath the root, checked as a segment list (indices from 0). */
function segmentsOf (parts, windows) {
  const at = firstBad(parts, windows)
  if (at >= 0) throw badPath("must be a path of segments (no '..', no NUL, each a valid name)", at)
  if (parts.length > MAX_SEGMENTS) throw badPath(`must have at most ${MAX_SEGMENTS} segments`, MAX_SEGMENTS)
  return parts
}

/** toSegments with the path rules of Windows (`windows` true) or of POSIX; the public
 * function takes the running platform's. (The project's tests run both tables on any
 * platform through this.) */
function convert (path, options, windows) {
  const { root } = OPTIONS.read(options, raise)
  if (typeof path !== 'string') throw badPath(PATH_EXPECTED)
  const p = parse(path, windows)
  if (root === undefined) {
    if (p.prefix !== '') throw badPath('must be a relative path (options.root allows an absolute path beneath it)')
    return segmentsOf(p.parts, windows)
  }
  const r = parse(root, windows)
  if (r.prefix === '' || r.parts === null || firstBad(r.parts, windows) >= 0) {
    throw invalid(OPERATION, 'options.root', "must be an absolute path of valid names (no '..', no NUL)", undefined, 'INVALID_PATH')
  }
  if (p.prefix === '') return segmentsOf(p.parts, windows)
  const beneath = p.parts !== null && p.prefix === r.prefix && p.parts.length >= r.parts.length &&
    r.parts.every((part, i) => p.parts[i] === part)
  if (!beneath) throw badPath('must lie beneath options.root (compared component by component, exactly as written)')
  return segmentsOf(p.parts.slice(r.parts.length), windows)
}

function toSegments (path, options) {
  return convert(path, options, process.platform === 'win32')
}

module.exports = { toSegments, convert }
