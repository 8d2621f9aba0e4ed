'use strict'
// A single-writer store for a small JSON rule set, kept in one file, `rules.json`,
// with a checksum of the rules stored alongside them:
//
//   {"checksum":"sha256:<hex>","format":"rule-store/1","rules":[...]}
//
// The checksum is sha256 of the canonical serialisation of `rules` (object keys sorted,
// no whitespace), so an edit that only reorders keys or re-indents still verifies and
// any other change does not.
//
// - Reads take no lock. A file that is missing reads as zero rules. A file that cannot
//   be trusted (not JSON, wrong shape, checksum mismatch, over the size budget, or a
//   link or non-file at the name) also reads as zero rules, and the store tells the
//   caller through its `onDisclosure` callback: a damaged rule set is never silent.
// - Writing needs the write face, which holds a node-lock on `rules.lock` beside the
//   file: a second writer, in this process or another, is refused at once, naming the
//   holder's pid. A write refuses while the file on disk is damaged, so the damaged bytes
//   stay in place for whoever repairs them.

const crypto = require('node:crypto')
const path = require('node:path')
const { openReadAuthority, openWriteAuthority } = require('@scope/agent-os/file-authority')
const { acquire, NodeLockError } = require('@scope/agent-os/node-lock')

const FILE = 'rules.json'
const LOCK = 'rules.lock'
const FORMAT = 'rule-store/1'
const MAX_BYTES = 256 * 1024
const CHANGED_RETRIES = 3

const MESSAGES = {
  WRITER_HELD: 'another writer holds the rule store',
  WRITER_CLOSED: 'the write face was closed',
  STORE_DAMAGED: 'the stored rule set is damaged; repair or remove it first',
  INVALID_RULES: 'rules must be an array of plain JSON objects'
}

class RuleStoreError extends Error {
  constructor (code, details = {}) {
    let message = `rule store: ${code}: ${MESSAGES[code]}`
    if (details.holderPid !== undefined) message += ` (pid ${details.holderPid})`
    if (details.reason !== undefined) message += ` (${details.reason})`
    super(message)
    this.name = 'RuleStoreError'
    this.code = code
    if (details.holderPid !== undefined) this.holderPid = details.holderPid
    if (details.reason !== undefined) this.reason = details.reason
  }
}

/** Canonical JSON: keys sorted by code unit, no whitespace, only plain JSON values. */
function canonical (value, seen = new Set()) {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RuleStoreError('INVALID_RULES')
    return JSON.stringify(value)
  }
  if (typeof value !== 'object' || seen.has(value)) throw new RuleStoreError('INVALID_RULES')
  seen.add(value)
  let out
  if (Array.isArray(value)) {
    out = `[${Array.from(value, (v) => canonical(v, seen)).join(',')}]`
  } else {
    const proto = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) throw new RuleStoreError('INVALID_RULES')
    out = `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k], seen)}`).join(',')}}`
  }
  seen.delete(value)
  return out
}

function checksumOf (rulesText) {
  return 'sha256:' + crypto.createHash('sha256').update(rulesText).digest('hex')
}

function checkRules (rules) {
  if (!Array.isArray(rules) || !rules.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r))) {
    throw new RuleStoreError('INVALID_RULES')
  }
  return canonical(rules)
}

/** The whole file for `rules`, canonical itself. */
function serialise (rules) {
  const rulesText = checkRules(rules)
  return `{"checksum":${JSON.stringify(checksumOf(rulesText))},"format":"${FORMAT}","rules":${rulesText}}\n`
}

const decoder = new TextDecoder('utf-8', { fatal: true })

// What the file holds: { state: 'empty' | 'ok', rules } or { state: 'damaged', reason }.
async function inspect (reader) {
  let bytes
  for (let attempt = 0; ; attempt++) {
    try {
      bytes = await reader.readBytes([FILE], { maxBytes: MAX_BYTES })
      break
    } catch (err) {
      if (err.code === 'OVER_BUDGET' || err.code === 'UNSAFE_ENTRY') return { state: 'damaged', reason: err.code }
      // Rewritten in place while we read (not by a writer of this store, which renames).
      if (err.code === 'FILE_CHANGED' && attempt < CHANGED_RETRIES) continue
      throw err
    }
  }
  if (bytes === undefined) return { state: 'empty', rules: [] }
  let doc
  try {
    doc = JSON.parse(decoder.decode(bytes))
  } catch {
    return { state: 'damaged', reason: 'PARSE' }
  }
  if (doc === null || typeof doc !== 'object' || doc.format !== FORMAT || typeof doc.checksum !== 'string') {
    return { state: 'damaged', reason: 'SHAPE' }
  }
  let rulesText
  try {
    rulesText = checkRules(doc.rules)
  } catch {
    return { state: 'damaged', reason: 'SHAPE' }
  }
  if (checksumOf(rulesText) !== doc.checksum) return { state: 'damaged', reason: 'CHECKSUM' }
  return { state: 'ok', rules: doc.rules }
}

class RuleWriter {
  #store
  #writer
  #guard

  constructor (store, writer, guard) {
    this.#store = store
    this.#writer = writer
    this.#guard = guard
  }

  get closed () {
    return this.#guard.released
  }

  /** Atomically replaces the rule set. Refuses (STORE_DAMAGED) while the file on disk
   * is damaged, and leaves it as it is (the damage is disclosed again). */
  async write (rules) {
    if (this.closed) throw new RuleStoreError('WRITER_CLOSED')
    const text = serialise(rules)
    const now = await this.#store.read()
    if (now.state === 'damaged') throw new RuleStoreError('STORE_DAMAGED', { reason: now.reason })
    await this.#writer.writeText([FILE], text)
  }

  async close () {
    if (this.closed) return
    try {
      await this.#writer.close()
    } finally {
      this.#guard.release()
    }
  }

  [Symbol.asyncDispose] () {
    return this.close()
  }
}

class RuleStore {
  #dir
  #reader
  #onDisclosure

  constructor (dir, reader, onDisclosure) {
    this.#dir = dir
    this.#reader = reader
    this.#onDisclosure = onDisclosure
  }

  /** The current rules, taking no lock: { rules, state: 'ok' | 'empty' | 'damaged',
   * reason? }. A damaged file reads as zero rules and is disclosed. */
  async read () {
    const result = await inspect(this.#reader)
    if (result.state !== 'damaged') return result
    this.#onDisclosure({ file: FILE, reason: result.reason })
    return { state: 'damaged', reason: result.reason, rules: [] }
  }

  /** The write face. Refused at once (WRITER_HELD, with the holder's pid) while another
   * write face is open anywhere on this host. */
  async openWriter () {
    let guard
    try {
      // One attempt, no wait: the only call that both takes a guard and names the
      // holder when it cannot (tryAcquire returns undefined without a pid).
      guard = await acquire(path.join(this.#dir, LOCK), { timeoutMs: 0 })
    } catch (err) {
      if (err instanceof NodeLockError && err.code === 'LOCK_TIMEOUT') {
        throw new RuleStoreError('WRITER_HELD', { holderPid: err.holderPid })
      }
      throw err
    }
    try {
      const writer = await openWriteAuthority(this.#dir, { sameRootAs: this.#reader })
      return new RuleWriter(this, writer, guard)
    } catch (err) {
      guard.release()
      throw err
    }
  }

  async close () {
    await this.#reader.close()
  }
}

/** Opens the store kept in the existing directory `dir` (absolute). `onDisclosure` is
 * called with { file, reason } whenever a read finds the file damaged. */
async function openRuleStore (dir, { onDisclosure } = {}) {
  if (typeof onDisclosure !== 'function') throw new TypeError('onDisclosure must be a function')
  if (typeof dir !== 'string' || !path.isAbsolute(dir)) throw new TypeError('dir must be an absolute path')
  const reader = await openReadAuthority(dir)
  return new RuleStore(dir, reader, onDisclosure)
}

module.exports = { openRuleStore, RuleStoreError, canonical, serialise, FILE, LOCK }
