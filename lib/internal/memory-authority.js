'use strict'
// The in-memory ReadAuthority and WriteAuthority of file-authority/testing. Pure
// JavaScript: argument rules and the error class come from file-authority-common.js,
// the tree from memory-tree.js. No native binding is involved.
//
// Every operation runs in this order: receiver, arguments, closed state, injected fault,
// then the operation itself. The asynchronous forms act at the moment of the call and
// settle on a later tick; any failure, bad arguments included, is a rejection.

const {
  FileAuthorityError,
  RECOVERABLE,
  fail,
  checkSegments,
  checkMaxBytes,
  checkWriteOptions,
  encodeText
} = require('./file-authority-common.js')
const memoryTree = require('./memory-tree.js')

const kConstruct = Symbol('MemoryAuthority')
const inspectCustom = Symbol.for('nodejs.util.inspect.custom')

/** What a reader and a writer from one createMemoryAuthorities call share. */
class MemoryRoot {
  constructor (dir, fault) {
    this.dir = dir
    this.fault = fault
  }
}

// Each authority's state, { root, closed, side }, kept outside the object so nothing of
// it is reachable from JavaScript; membership is also the brand check.
const states = new WeakMap()
const READ = 'read'
const WRITE = 'write'

/** The state of `self`, which must be an authority (of `side`, when given: a reader's
 * method called on a writer does not let the writer read, and the other way round). */
function stateOf (self, operation, side) {
  const state = typeof self === 'object' && self !== null ? states.get(self) : undefined
  if (state === undefined || (side !== undefined && state.side !== side)) throw fail('INVALID_PATH', operation)
  return state
}

/** The root of an open authority, after the receiver and argument checks. */
function openRoot (state, operation) {
  if (state.closed) throw fail('AUTHORITY_CLOSED', operation)
  return state.root
}

class MemoryAuthority {
  constructor (token, root, side) {
    if (token !== kConstruct || new.target === MemoryAuthority) throw new TypeError('Illegal constructor')
    states.set(this, { root, closed: false, side })
  }

  get closed () {
    return stateOf(this, 'closed').closed
  }

  sharesRootWith (other) {
    const operation = 'sharesRootWith'
    const mine = stateOf(this, operation)
    const theirs = stateOf(other, operation)
    return openRoot(mine, operation) === openRoot(theirs, operation)
  }

  async close () {
    stateOf(this, 'close').closed = true
  }

  closeSync () {
    stateOf(this, 'close').closed = true
  }

  async [Symbol.asyncDispose] () {
    stateOf(this, 'close').closed = true
  }

  [Symbol.dispose] () {
    stateOf(this, 'close').closed = true
  }

  [inspectCustom] (depth, options) {
    const state = typeof this === 'object' && this !== null ? states.get(this) : undefined
    if (state === undefined) {
      // A prototype or an object made from one: its class, nothing more.
      return this instanceof WriteAuthority ? 'WriteAuthority' : this instanceof ReadAuthority ? 'ReadAuthority' : 'MemoryAuthority'
    }
    const name = state.side === READ ? 'ReadAuthority' : 'WriteAuthority'
    const closed = String(state.closed)
    const shown = options && typeof options.stylize === 'function' ? options.stylize(closed, 'boolean') : closed
    return `${name} { closed: ${shown} }`
  }
}

/**
 * Calls the caller's fault hook before `operation` runs. A returned code becomes a
 * FileAuthorityError of that code and operation (HOST_IO carries hostCode 'EIO', as a real
 * one always has a host code); undefined lets the operation run; anything else is a
 * TypeError, since it is a mistake in the test that supplied the hook.
 */
function injectFault (root, operation, segments) {
  if (root.fault === undefined) return
  const code = Reflect.apply(root.fault, undefined, [operation, segments])
  if (code === undefined) return
  if (typeof code !== 'string' || !Object.prototype.hasOwnProperty.call(RECOVERABLE, code)) {
    const err = new TypeError('fault must return a FileAuthorityErrorCode or undefined')
    err.code = 'ERR_INVALID_RETURN_VALUE'
    throw err
  }
  throw new FileAuthorityError(code, { operation, hostCode: code === 'HOST_IO' ? 'EIO' : undefined })
}

// The sync and async forms share one implementation and one operation name.

function readBytes (self, segments, options) {
  const operation = 'readBytes'
  const state = stateOf(self, operation, READ)
  const segs = checkSegments(segments, operation)
  const maxBytes = checkMaxBytes(options, operation)
  const root = openRoot(state, operation)
  injectFault(root, operation, segs)
  return memoryTree.readFile(root.dir, segs, maxBytes, operation)
}

function list (self, segments) {
  const operation = 'list'
  const state = stateOf(self, operation, READ)
  const segs = checkSegments(segments, operation)
  const root = openRoot(state, operation)
  injectFault(root, operation, segs)
  return memoryTree.listDirectory(root.dir, segs, operation)
}

function writeText (self, segments, text, options) {
  const operation = 'writeText'
  const state = stateOf(self, operation, WRITE)
  const segs = checkSegments(segments, operation)
  const bytes = new Uint8Array(encodeText(text, operation))
  const createParents = checkWriteOptions(options, operation)
  const root = openRoot(state, operation)
  injectFault(root, operation, segs)
  memoryTree.writeFile(root.dir, segs, bytes, typeof text === 'string' ? text : undefined, createParents, operation)
}

class ReadAuthority extends MemoryAuthority {
  async readBytes (segments, options) {
    return readBytes(this, segments, options)
  }

  readBytesSync (segments, options) {
    return readBytes(this, segments, options)
  }

  async list (segments) {
    return list(this, segments)
  }

  listSync (segments) {
    return list(this, segments)
  }
}

class WriteAuthority extends MemoryAuthority {
  async writeText (segments, text, options) {
    writeText(this, segments, text, options)
  }

  writeTextSync (segments, text, options) {
    writeText(this, segments, text, options)
  }
}

/**
 * A reader and a writer over one in-memory tree (a deep copy of `tree`), and
 * snapshot() returning a deep copy of the tree as it is now. Bad arguments throw
 * FileAuthorityError (INVALID_PATH; INVALID_CONTENT for file text that is not
 * well-formed) with operation 'createMemoryAuthorities'.
 */
function createMemoryAuthorities (tree, options) {
  const operation = 'createMemoryAuthorities'
  let fault
  // Options may be left out or null, like every options argument of the package.
  if (options !== undefined && options !== null) {
    if (typeof options !== 'object') throw fail('INVALID_PATH', operation)
    try {
      fault = options.fault
    } catch {
      throw fail('INVALID_PATH', operation)
    }
    if (fault !== undefined && typeof fault !== 'function') throw fail('INVALID_PATH', operation)
  }
  const root = new MemoryRoot(memoryTree.parseTree(tree), fault)
  return {
    reader: new ReadAuthority(kConstruct, root, READ),
    writer: new WriteAuthority(kConstruct, root, WRITE),
    snapshot: () => memoryTree.snapshotTree(root.dir)
  }
}

module.exports = { createMemoryAuthorities }
