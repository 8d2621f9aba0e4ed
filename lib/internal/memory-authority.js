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
  invalidOption,
  raise,
  toBuffer,
  OPERATIONS
} = require('./file-authority-common.js')
const args = require('./args.js')
const memoryTree = require('./memory-tree.js')
const debug = require('./debug.js')

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
  if (state === undefined || (side !== undefined && state.side !== side)) throw invalidOption(operation, 'this', side === undefined ? 'must be a file authority' : `must be a ${side === READ ? 'ReadAuthority' : 'WriteAuthority'}`)
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
    const theirs = typeof other === 'object' && other !== null ? states.get(other) : undefined
    if (theirs === undefined) throw invalidOption(operation, 'other', 'must be a file authority of this module')
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

// How this face runs each row of OPERATIONS, on the tree, with the checked arguments.
const MEMORY = {
  readBytes: (dir, [segs, max], o) => toBuffer(memoryTree.readFile(dir, segs, max, o)),
  readVersioned: (dir, [segs, max], o) => {
    const r = memoryTree.readVersioned(dir, segs, max, o)
    return r === undefined ? undefined : { bytes: toBuffer(r.bytes), version: r.version }
  },
  readRange: (dir, [segs, r], o) => {
    const got = memoryTree.readRange(dir, segs, r.offset, r.length, o)
    return got === undefined ? undefined : { bytes: toBuffer(got.bytes), size: got.size, version: got.version }
  },
  readText: (dir, [segs, max], o) => memoryTree.readText(dir, segs, max, o),
  list: (dir, [segs, withStats], o) => memoryTree.listDirectory(dir, segs, withStats, o),
  walk: (dir, [segs, w], o) => memoryTree.walk(dir, segs, w, o),
  stat: (dir, [segs], o) => memoryTree.stat(dir, segs, o),
  writeText: (dir, [segs, bytes, options, text], o) => {
    memoryTree.writeFile(dir, segs, new Uint8Array(bytes), text, options, o)
  },
  writeBytes: (dir, [segs, bytes, options], o) => {
    memoryTree.writeFile(dir, segs, new Uint8Array(bytes), undefined, options, o)
  },
  appendText: (dir, [segs, bytes, options, text], o) => {
    memoryTree.appendFile(dir, segs, new Uint8Array(bytes), text, options, o)
  },
  appendBytes: (dir, [segs, bytes, options], o) => {
    memoryTree.appendFile(dir, segs, new Uint8Array(bytes), undefined, options, o)
  },
  remove: (dir, [segs, directory], o) => memoryTree.remove(dir, segs, directory, o),
  makeDirectory: (dir, [segs, parents, mode], o) => memoryTree.makeDirectory(dir, segs, parents, mode, o),
  rename: (dir, [from, to, replace], o) => { memoryTree.rename(dir, from, to, replace, o) }
}

class ReadAuthority extends MemoryAuthority {}
class WriteAuthority extends MemoryAuthority {}

/** Defines `name` (async: acts at the call, settles later, every failure a rejection)
 * and `nameSync` from one implementation: receiver, arguments, closed state, injected
 * fault (with the operation's first segment list), then the operation. */
function defineOperation (row) {
  const { name, side, check } = row
  const run = MEMORY[name]
  const sides = side === 'read' ? [READ] : side === 'write' ? [WRITE] : [undefined]
  const perform = (self, a, b, c) => {
    const state = stateOf(self, name, sides[0])
    const args = check(name, a, b, c)
    const root = openRoot(state, name)
    injectFault(root, name, args[0])
    return run(root.dir, args, name)
  }
  const methods = {
    async [name] (a, b, c) {
      return perform(this, a, b, c)
    },
    [`${name}Sync`] (a, b, c) {
      return perform(this, a, b, c)
    }
  }
  const classes = side === 'read' ? [ReadAuthority] : side === 'write' ? [WriteAuthority] : [ReadAuthority, WriteAuthority]
  for (const Class of classes) {
    for (const key of Object.keys(methods)) {
      Object.defineProperty(Class.prototype, key, { value: methods[key], writable: true, enumerable: false, configurable: true })
    }
  }
}

for (const row of OPERATIONS) defineOperation(row)

// NODE_DEBUG=agent-os: one line per operation (lib/internal/debug.js); with it off,
// nothing is wrapped.
if (debug.enabled) {
  for (const { name, side } of OPERATIONS) {
    const classes = side === 'read' ? [ReadAuthority] : side === 'write' ? [WriteAuthority] : [ReadAuthority, WriteAuthority]
    for (const Class of classes) debug.traceMethods(Class.prototype, { [name]: 'async', [`${name}Sync`]: 'sync' })
  }
}

/**
 * A reader and a writer over one in-memory tree (a deep copy of `tree`), and
 * snapshot() returning a deep copy of the tree as it is now. Bad arguments throw
 * FileAuthorityError (INVALID_PATH; INVALID_CONTENT for file text that is not
 * well-formed) with operation 'createMemoryAuthorities'.
 */
const CREATE_OPTIONS = args.defineOptions('createMemoryAuthorities', { fault: args.func() })

function createMemoryAuthorities (tree, options) {
  // Options may be left out or null, like every options argument of the package.
  const { fault } = CREATE_OPTIONS.read(options, raise)
  const root = new MemoryRoot(memoryTree.parseTree(tree), fault)
  return {
    reader: new ReadAuthority(kConstruct, root, READ),
    writer: new WriteAuthority(kConstruct, root, WRITE),
    snapshot: () => memoryTree.snapshotTree(root.dir)
  }
}

module.exports = { createMemoryAuthorities }
