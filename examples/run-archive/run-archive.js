'use strict'
// A run archive: one JSON file per run id, `runs/<id>.json` beneath a root directory,
// written atomically through a WriteAuthority and read back through a ReadAuthority
// under a byte budget. Nothing here touches a pathname below the root: a symlink or
// a swapped directory inside the archive cannot redirect a save or a read.
//
// The run id becomes a file name, so the id -> name mapping must be injective on every
// filesystem this may run on (case-folding macOS and Windows, Windows' device names
// and its stripping of trailing dots and spaces, 8.3 short-name aliases). Rather than
// escaping, ids are restricted to a set that needs no escaping anywhere.

const { openReadAuthority, openWriteAuthority, FileAuthorityError } = require('@scope/agent-os/file-authority')

const MAX_RUN_ID_LENGTH = 200
const RUN_ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/
// A Windows device name is reserved with any extension ("nul.json", "com1.tar.gz").
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/
const SUFFIX = '.json'
const DIRECTORY = 'runs'
const DEFAULT_MAX_BYTES = 1 << 20
const FORMAT = 'run-archive/1'

const REASONS = {
  RUN_ID_TYPE: 'a run id must be a string',
  RUN_ID_EMPTY: 'a run id must not be empty',
  RUN_ID_TOO_LONG: `a run id has at most ${MAX_RUN_ID_LENGTH} characters`,
  RUN_ID_PATTERN: 'a run id matches [a-z0-9][a-z0-9._-]* (lowercase ASCII only)',
  RUN_ID_TRAILING_DOT: 'a run id must not end with a dot (Windows strips it)',
  RUN_ID_DEVICE_NAME: 'a run id must not be a Windows device name, with or without an extension'
}

/** A refused run id. `code` names the rule; the message never repeats the id. */
class RunIdError extends Error {
  constructor (code) {
    super(`invalid run id: ${code}: ${REASONS[code]}`)
    this.name = 'RunIdError'
    this.code = code
  }
}

/** A stored archive that is not what `save` writes (not UTF-8 JSON, or another id inside). */
class ArchiveDamagedError extends Error {
  constructor (reason) {
    super(`run archive damaged: ${reason}`)
    this.name = 'ArchiveDamagedError'
    this.code = 'ARCHIVE_DAMAGED'
    this.reason = reason
  }
}

/** Throws RunIdError unless `runId` is an id this archive can store on any filesystem. */
function checkRunId (runId) {
  if (typeof runId !== 'string') throw new RunIdError('RUN_ID_TYPE')
  if (runId.length === 0) throw new RunIdError('RUN_ID_EMPTY')
  if (runId.length > MAX_RUN_ID_LENGTH) throw new RunIdError('RUN_ID_TOO_LONG')
  if (!RUN_ID_PATTERN.test(runId)) throw new RunIdError('RUN_ID_PATTERN')
  if (runId.endsWith('.')) throw new RunIdError('RUN_ID_TRAILING_DOT')
  if (WINDOWS_DEVICE.test(runId)) throw new RunIdError('RUN_ID_DEVICE_NAME')
  return runId
}

function isRunId (runId) {
  try {
    checkRunId(runId)
    return true
  } catch {
    return false
  }
}

/** The file name of a run id; injective because the suffix is fixed. */
function fileNameOf (runId) {
  return checkRunId(runId) + SUFFIX
}

/** The run id a file name stands for, or undefined for any other name (including the
 * package's own staging files, `.aos-<hex>.tmp`, which a killed writer can leave). */
function runIdOf (fileName) {
  if (!fileName.endsWith(SUFFIX)) return undefined
  const runId = fileName.slice(0, -SUFFIX.length)
  return isRunId(runId) ? runId : undefined
}

const decoder = new TextDecoder('utf-8', { fatal: true })

function checkBudget (options) {
  const maxBytes = options === undefined ? DEFAULT_MAX_BYTES : options.maxBytes
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new TypeError('maxBytes must be a safe integer >= 0')
  return maxBytes
}

class RunArchive {
  #reader
  #writer

  constructor (reader, writer) {
    this.#reader = reader
    this.#writer = writer
  }

  /** Atomically creates or replaces the archive of `runId`. A reader sees the previous
   * archive or this one, never a mix. */
  async save (runId, record) {
    const name = fileNameOf(runId)
    const text = JSON.stringify({ format: FORMAT, runId, record })
    if (text === undefined) throw new TypeError('record must be JSON-serialisable')
    await this.#writer.writeText([DIRECTORY, name], text, { createParents: true })
    return Buffer.byteLength(text)
  }

  /** The record saved for `runId`, or undefined when there is none. A file larger than
   * `maxBytes` is refused (OVER_BUDGET) before it is loaded. */
  async read (runId, options) {
    const name = fileNameOf(runId)
    const maxBytes = checkBudget(options)
    const bytes = await this.#reader.readBytes([DIRECTORY, name], { maxBytes })
    if (bytes === undefined) return undefined
    return parse(bytes, runId)
  }

  /** The run ids present, sorted. Entries that are not `<run id>.json` regular files
   * are skipped and counted in `skipped`. */
  async list () {
    const entries = await this.#reader.list([DIRECTORY])
    const ids = []
    let skipped = 0
    for (const entry of entries === undefined ? [] : entries) {
      const runId = entry.kind === 'file' ? runIdOf(entry.name) : undefined
      if (runId === undefined) skipped++
      else ids.push(runId)
    }
    // The listing is sorted by file name ("a.b.json" before "a.json"); sort by id.
    ids.sort()
    return { ids, skipped: skipped + (entries === undefined ? 0 : entries.omitted) }
  }

  /** Every archive, read under one total byte budget: each read may use what the
   * previous ones left. Stops with OVER_BUDGET when the budget cannot cover the next. */
  async readAll (options) {
    let left = checkBudget(options)
    const runs = new Map()
    for (const runId of (await this.list()).ids) {
      const bytes = await this.#reader.readBytes([DIRECTORY, fileNameOf(runId)], { maxBytes: left })
      if (bytes === undefined) continue // removed since the listing
      left -= bytes.length
      runs.set(runId, parse(bytes, runId))
    }
    return runs
  }

  async close () {
    await Promise.all([this.#reader.close(), this.#writer.close()])
  }
}

function parse (bytes, runId) {
  let value
  try {
    value = JSON.parse(decoder.decode(bytes))
  } catch {
    throw new ArchiveDamagedError('not UTF-8 JSON')
  }
  if (value === null || typeof value !== 'object' || value.format !== FORMAT || !('record' in value)) {
    throw new ArchiveDamagedError('not a run archive')
  }
  if (value.runId !== runId) throw new ArchiveDamagedError('archive of another run id')
  return value.record
}

/** Opens the archive rooted at the existing directory `root` (an absolute path). */
async function openRunArchive (root) {
  const writer = await openWriteAuthority(root)
  let reader
  try {
    reader = await openReadAuthority(root, { sameRootAs: writer })
  } catch (err) {
    await writer.close()
    throw err
  }
  return new RunArchive(reader, writer)
}

module.exports = {
  openRunArchive,
  checkRunId,
  isRunId,
  fileNameOf,
  runIdOf,
  RunIdError,
  ArchiveDamagedError,
  FileAuthorityError,
  MAX_RUN_ID_LENGTH
}
