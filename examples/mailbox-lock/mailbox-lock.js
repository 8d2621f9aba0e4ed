'use strict'
// Mailboxes shared by cooperating processes on one host: each box is a JSON file,
// `<box>.json`, appended to and drained with read-modify-write, so each box has its own
// cross-process lock, `<box>.lock`, taken with a bounded wait.
//
// - A holder that dies, even by SIGKILL, frees the box at once: the lock is the
//   kernel's, carried by the holder's open file, not a lease that has to expire.
// - A live holder is never treated as abandoned, however slow: a waiter times out
//   instead (MAILBOX_BUSY), naming the holder's pid so an operator can look at it.
// - The box files are read and replaced through a file authority, so a symlink planted
//   in the mailbox directory cannot redirect a delivery.

const path = require('node:path')
const { acquire, NodeLockError } = require('@scope/agent-os/node-lock')
const { openReadAuthority, openWriteAuthority } = require('@scope/agent-os/file-authority')

const BOX_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/
// "con.lock" and "nul.json" are devices on Windows, whatever the extension.
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/
const MAX_BOX_BYTES = 1 << 20
const DEFAULT_TIMEOUT_MS = 5000

class MailboxError extends Error {
  constructor (code, message, details = {}) {
    super(details.holderPid === undefined ? message : `${message} (held by pid ${details.holderPid})`)
    this.name = 'MailboxError'
    this.code = code
    if (details.holderPid !== undefined) this.holderPid = details.holderPid
  }
}

function checkBox (box) {
  if (typeof box !== 'string' || !BOX_NAME.test(box) || WINDOWS_DEVICE.test(box)) {
    throw new MailboxError('BOX_NAME', 'a box name matches [a-z0-9][a-z0-9-]{0,63} and is not a Windows device name')
  }
  return box
}

const decoder = new TextDecoder('utf-8', { fatal: true })

class Mailboxes {
  #dir
  #reader
  #writer

  constructor (dir, reader, writer) {
    this.#dir = dir
    this.#reader = reader
    this.#writer = writer
  }

  /** Runs `fn` holding the box's lock. Waits at most `timeoutMs` for it (MAILBOX_BUSY,
   * with the holder's pid), or until `signal` aborts (its reason). */
  async withBox (box, options, fn) {
    checkBox(box)
    const { timeoutMs = DEFAULT_TIMEOUT_MS, signal } = options ?? {}
    let guard
    try {
      guard = await acquire(path.join(this.#dir, `${box}.lock`), { timeoutMs, signal })
    } catch (err) {
      if (err instanceof NodeLockError && err.code === 'LOCK_TIMEOUT') {
        throw new MailboxError('MAILBOX_BUSY', 'the mailbox stayed locked for the whole wait', { holderPid: err.holderPid })
      }
      throw err
    }
    try {
      return await fn()
    } finally {
      guard.release()
    }
  }

  /** Appends `message` (any JSON value) to the box. */
  deliver (box, message, options) {
    return this.withBox(box, options, async () => {
      const messages = await this.#load(box)
      messages.push(message)
      const text = JSON.stringify(messages)
      if (Buffer.byteLength(text) > MAX_BOX_BYTES) throw new MailboxError('MAILBOX_FULL', 'the mailbox is full')
      await this.#writer.writeText([`${box}.json`], text)
      return messages.length
    })
  }

  /** Removes and returns every message in the box, oldest first. */
  take (box, options) {
    return this.withBox(box, options, async () => {
      const messages = await this.#load(box)
      if (messages.length > 0) await this.#writer.writeText([`${box}.json`], '[]')
      return messages
    })
  }

  /** The messages in the box, without taking its lock (a snapshot: the file is only ever
   * replaced whole). */
  async peek (box) {
    return this.#load(checkBox(box))
  }

  async #load (box) {
    const bytes = await this.#reader.readBytes([`${box}.json`], { maxBytes: MAX_BOX_BYTES })
    if (bytes === undefined) return []
    let messages
    try {
      messages = JSON.parse(decoder.decode(bytes))
    } catch {
      messages = undefined
    }
    if (!Array.isArray(messages)) throw new MailboxError('MAILBOX_DAMAGED', 'the mailbox file is not a JSON array')
    return messages
  }

  async close () {
    await Promise.all([this.#reader.close(), this.#writer.close()])
  }
}

/** Opens the mailboxes kept in the existing directory `dir` (absolute). */
async function openMailboxes (dir) {
  if (typeof dir !== 'string' || !path.isAbsolute(dir)) throw new TypeError('dir must be an absolute path')
  const writer = await openWriteAuthority(dir)
  let reader
  try {
    reader = await openReadAuthority(dir, { sameRootAs: writer })
  } catch (err) {
    await writer.close()
    throw err
  }
  return new Mailboxes(dir, reader, writer)
}

module.exports = { openMailboxes, MailboxError, checkBox }
