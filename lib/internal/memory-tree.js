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

const { isUtf8 } = require('node:buffer')
const {
  MAX_SEGMENTS,
  fail,
  invalid,
  segmentProblem
} = require('./file-authority-common.js')

const OPERATION = 'createMemoryAuthorities'
// A directory at depth 255 can still be listed (255 segments), so its entries, at
// segment index 255, are the deepest observable names; a directory there must be empty.
const MAX_DEPTH = MAX_SEGMENTS
// Longest symlink target the tree accepts, in UTF-8 bytes: what Linux stores (PATH_MAX - 1).
const MAX_TARGET_BYTES = 4095

// Every node also carries what stat reports: `mode` (permission bits), `mtimeMs`, and
// an identity (`id`, never reused within the process) and change count (`gen`) that
// make its version. The stand-in applies a fixed umask of 0o022 (the common default)
// where the native authorities apply the process's.
const UMASK = 0o022
let nextId = 1
// Distinguishes this process's versions from another's (versions compare within a host).
const SALT = require('node:crypto').randomBytes(16).toString('hex')

function meta (node, mode) {
  node.id = nextId++
  node.gen = 0
  node.mode = mode & ~UMASK & 0o777
  node.mtimeMs = Date.now()
  return node
}

/** A change to `node`'s content or metadata: a new version, a new mtime. */
function touch (node) {
  node.gen++
  node.mtimeMs = Date.now()
}

function hex32 (n) {
  return n.toString(16).padStart(32, '0')
}

/** The node's version: 96 lowercase hex digits, like the native authorities'. */
function versionOf (node) {
  return SALT + hex32(node.id) + hex32(node.gen)
}

function newDirectory (mode = 0o777) {
  return meta({ kind: 'directory', entries: new Map() }, mode)
}

function fileFromText (text) {
  return meta({ kind: 'file', bytes: new Uint8Array(Buffer.from(text, 'utf8')), text }, 0o666)
}

function fileFromBytes (bytes) {
  return meta({ kind: 'file', bytes: new Uint8Array(bytes), text: undefined }, 0o666)
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

// What a bad tree must be instead (createMemoryAuthorities' `tree` argument). The
// segment index is the depth of the first bad entry.
const TREE_EXPECTED = 'must be a MemoryTree: plain objects of names (each one path segment) holding a string, a Uint8Array, { symlink: target }, { other: true } or another such object'
const badTree = (index) => invalid(OPERATION, 'tree', TREE_EXPECTED, index)

/** Reads a value's own enumerable string keys and their values, each exactly once. */
function ownEntries (object, index) {
  try {
    const names = Object.keys(object)
    const values = names.map((name) => object[name])
    return { names, values }
  } catch {
    throw badTree(index)
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
  if (!isPlainObject(tree)) throw badTree()
  return parseDirectory(tree, 0, new Set())
}

function parseDirectory (object, depth, ancestors) {
  if (ancestors.has(object)) throw badTree(depth - 1)
  ancestors.add(object)
  const dir = newDirectory()
  const { names, values } = ownEntries(object, depth === 0 ? undefined : depth - 1)
  // Entries no segment list can reach (deeper than a 255-segment listing shows).
  if (names.length > 0 && depth > MAX_DEPTH) throw badTree(depth)
  for (let i = 0; i < names.length; i++) {
    if (segmentProblem(names[i], process.platform === 'win32')) throw badTree(depth)
    dir.entries.set(names[i], parseNode(values[i], depth, ancestors))
  }
  ancestors.delete(object)
  return dir
}

function parseNode (value, index, ancestors) {
  if (typeof value === 'string') {
    if (!value.isWellFormed()) throw invalid(OPERATION, 'tree', 'file text must be well-formed UTF-16', index, 'INVALID_CONTENT')
    return fileFromText(value)
  }
  if (isBytes(value)) return fileFromBytes(value)
  if (!isPlainObject(value)) throw badTree(index)
  // `{ symlink: string }` and `{ other: true }` are leaves; any other object is a directory.
  const { names, values } = ownEntries(value, index)
  if (names.length === 1 && names[0] === 'symlink' && typeof values[0] === 'string') {
    return parseSymlink(values[0], index)
  }
  if (names.length === 1 && names[0] === 'other' && values[0] === true) {
    return meta({ kind: 'other' }, 0o666)
  }
  return parseDirectory(value, index + 1, ancestors)
}

function parseSymlink (target, index) {
  if (target.length === 0 || target.includes('\0') || !target.isWellFormed() ||
      Buffer.byteLength(target, 'utf8') > MAX_TARGET_BYTES) {
    throw badTree(index)
  }
  return meta({ kind: 'symlink', target }, 0o777 | UMASK)
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
      // The host codes the native walker reports: ELOOP for a link, ENOTDIR otherwise.
      throw fail('UNSAFE_ENTRY', operation, i, node.kind === 'symlink' ? 'ELOOP' : 'ENOTDIR')
    }
    dir = node
  }
  return { dir }
}

/** The host code of UNSAFE_ENTRY for a node where a regular file is needed, as the
 * native authorities report it: ELOOP for a link, EISDIR for a directory. */
function notFileCode (node) {
  return node.kind === 'symlink' ? 'ELOOP' : node.kind === 'directory' ? 'EISDIR' : undefined
}

function readFile (root, segments, maxBytes, operation) {
  const last = segments.length - 1
  // No segments names the root itself: a directory, not a regular file.
  if (last < 0) throw fail('UNSAFE_ENTRY', operation, undefined, 'EISDIR')
  const { dir } = walkDirectories(root, segments, last, operation, false)
  if (dir === undefined) return undefined
  const node = dir.entries.get(segments[last])
  if (node === undefined) return undefined
  if (node.kind !== 'file') throw fail('UNSAFE_ENTRY', operation, last, notFileCode(node))
  if (node.bytes.length > maxBytes) throw fail('OVER_BUDGET', operation)
  return new Uint8Array(node.bytes)
}

/** readFile decoded as UTF-8: bytes that are not UTF-8 are INVALID_CONTENT; a byte-order
 * mark is kept (Buffer's decoder keeps it, as the native authorities' does). */
function readText (root, segments, maxBytes, operation) {
  const bytes = readFile(root, segments, maxBytes, operation)
  if (bytes === undefined) return undefined
  if (!isUtf8(bytes)) throw fail('INVALID_CONTENT', operation)
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
}

function listDirectory (root, segments, withStats, operation) {
  const { dir } = walkDirectories(root, segments, segments.length, operation, false)
  if (dir === undefined) return undefined
  // Default sort compares UTF-16 code units: the contract's code-unit order.
  const names = [...dir.entries.keys()].sort()
  const listing = names.map((name) => {
    const node = dir.entries.get(name)
    return withStats ? { name, kind: node.kind, stat: statInfo(node) } : { name, kind: node.kind }
  })
  // Names here are JavaScript strings already checked well-formed, so none is ever left
  // out. `omitted` is an own, read-only, non-enumerable property: it does not show in
  // JSON, Object.keys or assert.deepStrictEqual against a plain array.
  Object.defineProperty(listing, 'omitted', { value: 0, enumerable: false, writable: false, configurable: false })
  return listing
}

/** The directory holding segments[last] and the node there (or undefined), or
 * { missing } when a parent is missing. */
function locate (root, segments, operation, create) {
  const last = segments.length - 1
  const walked = walkDirectories(root, segments, last, operation, create)
  if (walked.dir === undefined) return walked
  return { dir: walked.dir, name: segments[last], node: walked.dir.entries.get(segments[last]), last }
}

/** Adds `bytes` at the end of the file `segments` (`text`: the string they were given
 * as), or creates it with `o.mode` less the umask; `o`: AppendOptions, checked already.
 * Nothing is written to anything but a regular file. */
function appendFile (root, segments, bytes, text, o, operation) {
  const last = segments.length - 1
  if (last < 0) throw fail('UNSAFE_ENTRY', operation, undefined, 'EISDIR')
  const found = locate(root, segments, operation, o.createParents)
  if (found.dir === undefined) throw fail('HOST_IO', operation, found.missing, 'ENOENT')
  const existing = found.node
  if (existing === undefined) {
    found.dir.entries.set(found.name, meta({ kind: 'file', bytes, text }, o.mode))
    touch(found.dir)
    return
  }
  if (existing.kind !== 'file') throw fail('UNSAFE_ENTRY', operation, last, notFileCode(existing))
  if (bytes.length === 0) return // nothing written: the file is unchanged
  const joined = new Uint8Array(existing.bytes.length + bytes.length)
  joined.set(existing.bytes, 0)
  joined.set(bytes, existing.bytes.length)
  existing.text = existing.text !== undefined && text !== undefined ? existing.text + text : undefined
  existing.bytes = joined
  touch(existing)
}

/** Replaces or creates the file `segments` with `bytes` (`text`: the string it was
 * given as, kept for snapshot()), under WriteOptions `o` (checked already). */
function writeFile (root, segments, bytes, text, o, operation) {
  const last = segments.length - 1
  if (last < 0) throw fail('UNSAFE_ENTRY', operation, undefined, 'EISDIR')
  const found = locate(root, segments, operation, o.createParents)
  if (found.dir === undefined) throw fail('HOST_IO', operation, found.missing, 'ENOENT')
  const existing = found.node
  if (o.ifAbsent && existing !== undefined) throw fail('ENTRY_EXISTS', operation, last, 'EEXIST')
  if (existing !== undefined && existing.kind !== 'file') throw fail('UNSAFE_ENTRY', operation, last, notFileCode(existing))
  if (o.ifVersion !== undefined && (existing === undefined || versionOf(existing) !== o.ifVersion)) {
    throw fail('FILE_CHANGED', operation)
  }
  // One assignment swaps the whole node: old readers' copies and the new content never mix.
  const node = meta({ kind: 'file', bytes, text }, existing !== undefined ? existing.mode | UMASK : o.mode)
  if (existing !== undefined) node.mode = existing.mode
  found.dir.entries.set(found.name, node)
}

function statInfo (node) {
  let size = 0
  if (node.kind === 'file') size = node.bytes.length
  else if (node.kind === 'symlink') size = Buffer.byteLength(node.target, 'utf8')
  return { kind: node.kind, size, mtimeMs: node.mtimeMs, mode: node.mode, version: versionOf(node) }
}

function stat (root, segments, operation) {
  if (segments.length === 0) return statInfo(root)
  const found = locate(root, segments, operation, false)
  if (found.dir === undefined || found.node === undefined) return undefined
  return statInfo(found.node)
}

function readVersioned (root, segments, maxBytes, operation) {
  const last = segments.length - 1
  if (last < 0) throw fail('UNSAFE_ENTRY', operation, undefined, 'EISDIR')
  const found = locate(root, segments, operation, false)
  if (found.dir === undefined || found.node === undefined) return undefined
  const node = found.node
  if (node.kind !== 'file') throw fail('UNSAFE_ENTRY', operation, last, notFileCode(node))
  if (node.bytes.length > maxBytes) throw fail('OVER_BUDGET', operation)
  return { bytes: new Uint8Array(node.bytes), version: versionOf(node) }
}

function readRange (root, segments, offset, length, operation) {
  const last = segments.length - 1
  if (last < 0) throw fail('UNSAFE_ENTRY', operation, undefined, 'EISDIR')
  const found = locate(root, segments, operation, false)
  if (found.dir === undefined || found.node === undefined) return undefined
  const node = found.node
  if (node.kind !== 'file') throw fail('UNSAFE_ENTRY', operation, last, notFileCode(node))
  const size = node.bytes.length
  const start = Math.min(offset, size)
  const end = Math.min(size, start + length)
  return { bytes: node.bytes.slice(start, end), size, version: versionOf(node) }
}

/**
 * Depth-first, code-unit order, a directory before its contents, as the native walk
 * (src/file_authority/tree.c): `w` is { maxEntries, maxDepth (-1: no limit), exclude,
 * withStats }. Excluded names are left out wherever they occur, with their subtrees.
 * Once maxEntries entries are listed nothing more is visited, and `truncated` says
 * whether anything found was left: an entry of a directory already read, or the last
 * entry listed being a directory that would have been read (found, not read: not
 * visited, empty or not). A directory is entered while depth < maxDepth (a bound the
 * caller chose: no truncation) and while paths stay within MAX_SEGMENTS segments from
 * the root: a subtree that limit keeps out is counted in `omitted` and sets
 * `truncated`. maxEntries 0 reads nothing: truncated.
 */
function walk (root, segments, w, operation) {
  const { dir } = walkDirectories(root, segments, segments.length, operation, false)
  if (dir === undefined) return undefined
  const limit = Math.max(0, MAX_SEGMENTS - 1 - segments.length)
  const depthMax = w.maxDepth < 0 ? Infinity : w.maxDepth
  const excluded = new Set(w.exclude)
  const out = []
  let truncated = false
  let omitted = 0
  const read = (node) => [...node.entries.keys()].filter((name) => !excluded.has(name)).sort()
  if (w.maxEntries === 0) {
    truncated = true
  } else {
    const stack = [{ node: dir, names: read(dir), next: 0, prefix: [] }]
    while (stack.length > 0) {
      const f = stack[stack.length - 1]
      if (f.next === f.names.length) {
        stack.pop()
        continue
      }
      const name = f.names[f.next++]
      const child = f.node.entries.get(name)
      const depth = f.prefix.length
      const path = [...f.prefix, name]
      out.push(w.withStats ? { path, kind: child.kind, stat: statInfo(child) } : { path, kind: child.kind })
      const isDir = child.kind === 'directory' && depth < depthMax
      const beyond = isDir && depth >= limit
      if (beyond) {
        omitted++
        truncated = true
      }
      if (out.length === w.maxEntries) {
        if ((isDir && !beyond) || stack.some((g) => g.next < g.names.length)) truncated = true
        break
      }
      if (isDir && !beyond) stack.push({ node: child, names: read(child), next: 0, prefix: path })
    }
  }
  Object.defineProperty(out, 'omitted', { value: omitted, enumerable: false, writable: false, configurable: false })
  Object.defineProperty(out, 'truncated', { value: truncated, enumerable: false, writable: false, configurable: false })
  return out
}

function remove (root, segments, directory, operation) {
  const last = segments.length - 1
  if (last < 0) throw fail('UNSAFE_ENTRY', operation)
  const found = locate(root, segments, operation, false)
  if (found.dir === undefined || found.node === undefined) return false
  const node = found.node
  if (node.kind === 'directory') {
    if (!directory) throw fail('UNSAFE_ENTRY', operation, last, 'EISDIR')
    if (node.entries.size > 0) throw fail('HOST_IO', operation, last, 'ENOTEMPTY')
  }
  found.dir.entries.delete(found.name)
  touch(found.dir)
  return true
}

function makeDirectory (root, segments, parents, mode, operation) {
  const last = segments.length - 1
  if (last < 0) return false // the root: a directory already there
  const found = locate(root, segments, operation, parents)
  if (found.dir === undefined) throw fail('HOST_IO', operation, found.missing, 'ENOENT')
  const node = found.node
  if (node !== undefined) {
    if (node.kind === 'directory') return false
    if (node.kind === 'symlink') throw fail('UNSAFE_ENTRY', operation, last, 'ELOOP')
    throw fail('ENTRY_EXISTS', operation, last, 'EEXIST')
  }
  found.dir.entries.set(found.name, newDirectory(mode))
  touch(found.dir)
  return true
}

/** Moves from -> to; target-side segment indexes count after the source's. */
function rename (root, from, to, replace, operation) {
  if (from.length === 0) throw fail('UNSAFE_ENTRY', operation)
  if (to.length === 0) throw fail('UNSAFE_ENTRY', operation, from.length)
  const fromLast = from.length - 1
  const toLast = from.length + to.length - 1
  const src = locate(root, from, operation, false)
  if (src.dir === undefined) throw fail('HOST_IO', operation, src.missing, 'ENOENT')
  let dst
  try {
    dst = locate(root, to, operation, false)
  } catch (err) {
    throw fail(err.code, operation, from.length + err.segmentIndex, err.hostCode)
  }
  if (dst.dir === undefined) throw fail('HOST_IO', operation, from.length + dst.missing, 'ENOENT')
  const node = src.node
  if (node === undefined) throw fail('HOST_IO', operation, fromLast, 'ENOENT')
  const target = dst.node
  if (target !== undefined) {
    if (!replace) throw fail('ENTRY_EXISTS', operation, toLast, 'EEXIST')
    if (target.kind !== 'file') throw fail('UNSAFE_ENTRY', operation, toLast, notFileCode(target))
    if (target === node) return
    if (node.kind === 'directory') throw fail('UNSAFE_ENTRY', operation, toLast, 'ENOTDIR')
  }
  // A directory cannot move into itself or below itself (the host's EINVAL).
  if (node.kind === 'directory' && to.length >= from.length && from.every((s, i) => s === to[i])) {
    throw fail('HOST_IO', operation, undefined, 'EINVAL')
  }
  src.dir.entries.delete(src.name)
  dst.dir.entries.set(dst.name, node)
  touch(node)
  touch(src.dir)
  if (dst.dir !== src.dir) touch(dst.dir)
}

module.exports = {
  parseTree,
  snapshotTree,
  readFile,
  readText,
  listDirectory,
  writeFile,
  appendFile,
  stat,
  readVersioned,
  readRange,
  walk,
  remove,
  makeDirectory,
  rename
}
