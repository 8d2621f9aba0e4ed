'use strict'
// The in-memory tree behind file-authority/testing: turning a caller's MemoryTree into
// private nodes, resolving segments through them with the same refusals as the native
// walker, and copying the tree back out (snapshot). Knows nothing of authorities.
//
// Nodes:
//   { kind: 'directory', entries: Map<string, node> }
//   { kind: 'file', bytes: Uint8Array, text: string | undefined }  (text: the string the
//     content was given as, kept so snapshot() can hand it back as given)
//   { kind: 'symlink', target: string }   never followed
//   { kind: 'other' }                     stands for a FIFO, socket or device

const {
  MAX_SEGMENTS,
  fail,
  segmentProblem
} = require('./file-authority-common.js')

const OPERATION = 'createMemoryAuthorities'
// A directory at depth 255 can still be listed (255 segments), so its entries, at
// segment index 255, are the deepest observable names; a directory there must be empty.
const MAX_DEPTH = MAX_SEGMENTS
// Longest symlink target the tree accepts, in UTF-8 bytes: what Linux stores (PATH_MAX - 1).
const MAX_TARGET_BYTES = 4095

function newDirectory () {
  return { kind: 'directory', entries: new Map() }
}

function fileFromText (text) {
  return { kind: 'file', bytes: new Uint8Array(Buffer.from(text, 'utf8')), text }
}

function fileFromBytes (bytes) {
  return { kind: 'file', bytes: new Uint8Array(bytes), text: undefined }
}

function isBytes (value) {
  try {
    return value instanceof Uint8Array
  } catch {
    return false // a revoked proxy, or a proxy whose trap throws
  }
}

function isPlainObject (value) {
  if (typeof value !== 'object' || value === null) return false
  try {
    const proto = Object.getPrototypeOf(value)
    return proto === null || Object.getPrototypeOf(proto) === null
  } catch {
    return false // a revoked proxy, or a proxy whose trap throws
  }
}

/** Reads a value's own enumerable string keys and their values, each exactly once. */
function ownEntries (object, index) {
  try {
    const names = Object.keys(object)
    const values = names.map((name) => object[name])
    return { names, values }
  } catch {
    throw fail('INVALID_PATH', OPERATION, index)
  }
}

/**
 * Turns a caller's MemoryTree into a private directory node (a deep copy: later changes
 * to the caller's objects or buffers do not reach it). Throws INVALID_PATH (segmentIndex:
 * the depth of the first bad entry) for a value that is not a tree, and INVALID_CONTENT
 * for file text that is not well-formed UTF-16.
 */
function parseTree (tree) {
  if (tree === undefined) return newDirectory()
  if (!isPlainObject(tree)) throw fail('INVALID_PATH', OPERATION)
  return parseDirectory(tree, 0, new Set())
}

function parseDirectory (object, depth, ancestors) {
  if (ancestors.has(object)) throw fail('INVALID_PATH', OPERATION, depth - 1)
  ancestors.add(object)
  const dir = newDirectory()
  const { names, values } = ownEntries(object, depth === 0 ? undefined : depth - 1)
  // Entries no segment list can reach (deeper than a 255-segment listing shows).
  if (names.length > 0 && depth > MAX_DEPTH) throw fail('INVALID_PATH', OPERATION, depth)
  for (let i = 0; i < names.length; i++) {
    if (segmentProblem(names[i], process.platform === 'win32')) throw fail('INVALID_PATH', OPERATION, depth)
    dir.entries.set(names[i], parseNode(values[i], depth, ancestors))
  }
  ancestors.delete(object)
  return dir
}

function parseNode (value, index, ancestors) {
  if (typeof value === 'string') {
    if (!value.isWellFormed()) throw fail('INVALID_CONTENT', OPERATION, index)
    return fileFromText(value)
  }
  if (isBytes(value)) return fileFromBytes(value)
  if (!isPlainObject(value)) throw fail('INVALID_PATH', OPERATION, index)
  // `{ symlink: string }` and `{ other: true }` are leaves; any other object is a directory.
  const { names, values } = ownEntries(value, index)
  if (names.length === 1 && names[0] === 'symlink' && typeof values[0] === 'string') {
    return parseSymlink(values[0], index)
  }
  if (names.length === 1 && names[0] === 'other' && values[0] === true) {
    return { kind: 'other' }
  }
  return parseDirectory(value, index + 1, ancestors)
}

function parseSymlink (target, index) {
  if (target.length === 0 || target.includes('\0') || !target.isWellFormed() ||
      Buffer.byteLength(target, 'utf8') > MAX_TARGET_BYTES) {
    throw fail('INVALID_PATH', OPERATION, index)
  }
  return { kind: 'symlink', target }
}

function setOwn (object, key, value) {
  // defineProperty, so a name like '__proto__' becomes an own entry, not a prototype.
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
}

/**
 * A deep copy of a directory node as a MemoryTree: files as the string they were given
 * or written as, else as a new Uint8Array; `{ symlink }`, `{ other: true }`, directories
 * as objects. The one ambiguous shape, a directory whose only entry is a text file named
 * `symlink` (it would read back as a symlink), gets that file as bytes instead.
 */
function snapshotTree (dir) {
  const out = {}
  const names = [...dir.entries.keys()].sort()
  for (const name of names) {
    const node = dir.entries.get(name)
    switch (node.kind) {
      case 'directory':
        setOwn(out, name, snapshotTree(node))
        break
      case 'file':
        setOwn(out, name, node.text !== undefined ? node.text : new Uint8Array(node.bytes))
        break
      case 'symlink':
        setOwn(out, name, { symlink: node.target })
        break
      default:
        setOwn(out, name, { other: true })
    }
  }
  if (names.length === 1 && names[0] === 'symlink' && typeof out.symlink === 'string') {
    out.symlink = new Uint8Array(dir.entries.get('symlink').bytes)
  }
  return out
}

/**
 * Walks the first `count` segments as directories from `root`, never following a
 * symlink. Returns { dir } or { missing: index of the first missing one }. A symlink,
 * file or other entry on the way is UNSAFE_ENTRY at its index. With `create`, missing
 * directories are made one by one (once one is missing every later one is too, so the
 * walk cannot fail after it has started creating).
 */
function walkDirectories (root, segments, count, operation, create) {
  let dir = root
  for (let i = 0; i < count; i++) {
    let node = dir.entries.get(segments[i])
    if (node === undefined) {
      if (!create) return { missing: i }
      node = newDirectory()
      dir.entries.set(segments[i], node)
    } else if (node.kind !== 'directory') {
      throw fail('UNSAFE_ENTRY', operation, i)
    }
    dir = node
  }
  return { dir }
}

function readFile (root, segments, maxBytes, operation) {
  const last = segments.length - 1
  // No segments names the root itself: a directory, not a regular file.
  if (last < 0) throw fail('UNSAFE_ENTRY', operation)
  const { dir } = walkDirectories(root, segments, last, operation, false)
  if (dir === undefined) return undefined
  const node = dir.entries.get(segments[last])
  if (node === undefined) return undefined
  if (node.kind !== 'file') throw fail('UNSAFE_ENTRY', operation, last)
  if (node.bytes.length > maxBytes) throw fail('OVER_BUDGET', operation)
  return new Uint8Array(node.bytes)
}

function listDirectory (root, segments, operation) {
  const { dir } = walkDirectories(root, segments, segments.length, operation, false)
  if (dir === undefined) return undefined
  // Default sort compares UTF-16 code units: the contract's code-unit order.
  const names = [...dir.entries.keys()].sort()
  const listing = names.map((name) => ({ name, kind: dir.entries.get(name).kind }))
  // Names here are JavaScript strings already checked well-formed, so none is ever left
  // out. `omitted` is an own, read-only, non-enumerable property: it does not show in
  // JSON, Object.keys or assert.deepStrictEqual against a plain array.
  Object.defineProperty(listing, 'omitted', { value: 0, enumerable: false, writable: false, configurable: false })
  return listing
}

/** `bytes` (already UTF-8) replaces or creates the file; `text` is kept for snapshot(). */
function writeFile (root, segments, bytes, text, createParents, operation) {
  const last = segments.length - 1
  if (last < 0) throw fail('UNSAFE_ENTRY', operation)
  const walked = walkDirectories(root, segments, last, operation, createParents)
  if (walked.dir === undefined) throw fail('HOST_IO', operation, walked.missing, 'ENOENT')
  const existing = walked.dir.entries.get(segments[last])
  if (existing !== undefined && existing.kind !== 'file') throw fail('UNSAFE_ENTRY', operation, last)
  // One assignment swaps the whole node: old readers' copies and the new content never mix.
  walked.dir.entries.set(segments[last], { kind: 'file', bytes, text })
}

module.exports = {
  parseTree,
  snapshotTree,
  readFile,
  listDirectory,
  writeFile
}
