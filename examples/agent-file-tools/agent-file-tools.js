'use strict'
// An agent's file tools over one workspace, shaped like the Model Context Protocol's
// filesystem server: read (a slice of a text file cut at character boundaries, or the
// head or tail of one), list (with sizes), info, glob (a bounded walk that skips
// node_modules and .git without entering them), edit (replace one exact string,
// written back only if nobody changed the file since it was read), create, delete and
// move; every call is recorded in a session log (one JSON line appended per call).
// Built only on the public API of @scope/agent-os/file-authority:
// - a path a model chose ('src/a.ts', or an absolute path inside the workspace) becomes
//   segments with toSegments, which refuses '..', absolute paths outside the workspace
//   and its siblings ('/srv/ws_evil' is not inside '/srv/ws'), untrimmed and unquoted;
// - every path is then a segment list beneath the workspace root, never a pathname, so
//   no link or rename can take a tool outside the workspace.

const {
  openReadAuthority,
  openWriteAuthority,
  toSegments,
  FileAuthorityError
} = require('@scope/agent-os/file-authority')

const MAX_READ = 256 * 1024
const MAX_TEXT = 4 * 1024 * 1024
const LOG = ['.agent', 'session.jsonl']
const SKIP = ['node_modules', '.git']

class ToolError extends Error {
  constructor (code, message) {
    super(message)
    this.name = 'ToolError'
    this.code = code
  }
}

/** A glob of '*' (within one segment), '**' (any number of segments) and literals,
 * split at '/' (a pattern is not a path: '*' is no segment on Windows). */
function globMatcher (pattern) {
  if (typeof pattern !== 'string') throw new ToolError('BAD_PATTERN', 'pattern must be a string')
  const parts = pattern.split('/').filter((p) => p !== '' && p !== '.')
    .map((p) => (p === '**' ? p : new RegExp('^' + p.replace(/[.+^${}()|[\]\\?]/g, '\\$&').replace(/\*/g, '[^/]*') + '$')))
  const match = (pi, path, si) => {
    if (pi === parts.length) return si === path.length
    if (parts[pi] === '**') {
      for (let k = si; k <= path.length; k++) if (match(pi + 1, path, k)) return true
      return false
    }
    return si < path.length && parts[pi].test(path[si]) && match(pi + 1, path, si + 1)
  }
  return (path) => match(0, path, 0)
}

const isContinuation = (byte) => (byte & 0xc0) === 0x80

/** The length of the longest prefix of `bytes` (UTF-8) that ends at a character
 * boundary: a multi-byte character cut off at the end is left for the next slice. */
function wholeCharacters (bytes) {
  let end = bytes.length
  let k = end - 1
  while (k >= 0 && end - k <= 4 && isContinuation(bytes[k])) k--
  if (k < 0) return end
  const lead = bytes[k]
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  if (end - k < need) end = k
  return end
}

/** Lines of `text`: the first `head` or the last `tail` (a final newline ends a line). */
function someLines (text, head, tail) {
  const lines = text.split('\n')
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  const picked = head !== undefined ? lines.slice(0, head) : lines.slice(Math.max(0, lines.length - tail))
  return picked.join('\n') + (picked.length > 0 ? '\n' : '')
}

async function openFileTools (root) {
  const reader = await openReadAuthority(root)
  let writer
  try {
    writer = await openWriteAuthority(root, { sameRootAs: reader })
  } catch (err) {
    await reader.close()
    throw err
  }
  /** A model's path as segments beneath the workspace ('' and '.' are the workspace). */
  const at = (path) => {
    if (typeof path !== 'string') throw new ToolError('BAD_PATH', 'path must be a string')
    return toSegments(path, { root })
  }
  /** Records one call in the session log: one line, appended whole (appendText never
   * interleaves two calls' lines, from any process); not flushed to disk per line. */
  const log = async (tool, path, outcome) => {
    const line = JSON.stringify({ at: new Date().toISOString(), tool, path, outcome }) + '\n'
    await writer.appendText(LOG, line, { createParents: true, durable: false })
  }
  /** Runs a tool and logs it: 'ok', or the error's code (never its text). */
  const tool = (name, fn) => async (path, ...rest) => {
    try {
      const result = await fn(path, ...rest)
      await log(name, path, 'ok')
      return result
    } catch (err) {
      await log(name, typeof path === 'string' ? path : null, err.code || 'ERROR')
      throw err
    }
  }

  return {
    /** { text, start, end, size, version, truncated }: the text of the bytes from
     * `offset` (at most `length`), cut at character boundaries: a slice starting inside
     * a character starts after it, one ending inside a character ends before it (read
     * again from `end`). A file that is not UTF-8 is BINARY. */
    read: tool('read', async (path, { offset = 0, length = MAX_READ } = {}) => {
      const got = await reader.readRange(at(path), { offset, length })
      if (got === undefined) throw new ToolError('NOT_FOUND', 'no such file')
      let start = 0
      while (start < got.bytes.length && offset + start > 0 && isContinuation(got.bytes[start])) start++
      const atEnd = offset + got.bytes.length >= got.size
      const end = atEnd ? got.bytes.length : Math.max(start, wholeCharacters(got.bytes))
      const slice = got.bytes.subarray(start, end)
      if (!require('node:buffer').isUtf8(slice)) throw new ToolError('BINARY', 'the file is not UTF-8 text')
      return {
        text: slice.toString('utf8'),
        start: offset + start,
        end: offset + end,
        size: got.size,
        version: got.version,
        truncated: offset + end < got.size
      }
    }),

    /** The whole text of a file of at most 4 MiB, or its first `head` / last `tail`
     * lines (MCP's read_text_file). */
    readText: tool('readText', async (path, { head, tail } = {}) => {
      let text
      try {
        text = await reader.readText(at(path), { maxBytes: MAX_TEXT })
      } catch (err) {
        if (err instanceof FileAuthorityError && err.code === 'INVALID_CONTENT') throw new ToolError('BINARY', 'the file is not UTF-8 text')
        if (err instanceof FileAuthorityError && err.code === 'OVER_BUDGET') throw new ToolError('TOO_LARGE', 'read it in slices')
        throw err
      }
      if (text === undefined) throw new ToolError('NOT_FOUND', 'no such file')
      return head !== undefined || tail !== undefined ? someLines(text, head, tail) : text
    }),

    /** [{ name, kind, size }] of a directory, in one call (MCP's
     * list_directory_with_sizes); a link's size is its own. */
    list: tool('list', async (path) => {
      const listing = await reader.list(at(path), { withStats: true })
      if (listing === undefined) throw new ToolError('NOT_FOUND', 'no such directory')
      return listing.map((e) => ({ name: e.name, kind: e.kind, size: e.stat.size }))
    }),

    /** { kind, size, mtimeMs, mode } of an entry, never following a link. */
    info: tool('info', async (path) => {
      const s = await reader.stat(at(path))
      if (s === undefined) throw new ToolError('NOT_FOUND', 'no such entry')
      return { kind: s.kind, size: s.size, mtimeMs: s.mtimeMs, mode: s.mode }
    }),

    /** Paths ('a/b.txt') of files matching `pattern`, at most `limit`, and whether more
     * may exist; `exclude` (names; node_modules and .git by default) are never entered,
     * so they cost nothing of the walk's budget. */
    glob: tool('glob', async (pattern, { limit = 1000, exclude = SKIP, maxEntries = 100000 } = {}) => {
      const matches = globMatcher(pattern)
      const walked = await reader.walk([], { maxEntries, exclude })
      const paths = walked.filter((e) => e.kind === 'file' && matches(e.path)).map((e) => e.path.join('/'))
      return { paths: paths.slice(0, limit), truncated: walked.truncated || paths.length > limit }
    }),

    /** Replaces the one occurrence of `before` with `after`; refuses when the file
     * changed since it was read (another agent, an editor): CONFLICT, nothing lost. */
    edit: tool('edit', async (path, before, after) => {
      const segs = at(path)
      const got = await reader.readVersioned(segs, { maxBytes: MAX_TEXT })
      if (got === undefined) throw new ToolError('NOT_FOUND', 'no such file')
      const text = got.bytes.toString('utf8')
      const i = text.indexOf(before)
      if (i < 0 || text.indexOf(before, i + 1) >= 0) throw new ToolError('NO_UNIQUE_MATCH', 'the text to replace must occur exactly once')
      const next = text.slice(0, i) + after + text.slice(i + before.length)
      try {
        await writer.writeText(segs, next, { ifVersion: got.version })
      } catch (err) {
        if (err instanceof FileAuthorityError && err.code === 'FILE_CHANGED') throw new ToolError('CONFLICT', 'the file changed since it was read')
        throw err
      }
    }),

    /** Create a new file; never overwrites. */
    create: tool('create', async (path, text) => {
      try {
        await writer.writeText(at(path), text, { ifAbsent: true, createParents: true })
      } catch (err) {
        if (err instanceof FileAuthorityError && err.code === 'ENTRY_EXISTS') throw new ToolError('EXISTS', 'the file already exists')
        throw err
      }
    }),

    /** true when it deleted the file (a link is removed, never followed). */
    delete: tool('delete', async (path) => writer.remove(at(path))),

    /** Moves a file or directory; refuses to overwrite unless `overwrite`. */
    move: tool('move', async (from, to, { overwrite = false } = {}) => {
      try {
        await writer.rename(at(from), at(to), { replace: overwrite })
      } catch (err) {
        if (err instanceof FileAuthorityError && err.code === 'ENTRY_EXISTS') throw new ToolError('EXISTS', 'the target exists')
        throw err
      }
    }),

    /** The session log's entries (the tools' own calls, oldest first). */
    async history () {
      const text = await reader.readText(LOG, { maxBytes: MAX_TEXT })
      return text === undefined ? [] : text.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    },

    async close () {
      await Promise.all([reader.close(), writer.close()])
    }
  }
}

module.exports = { openFileTools, ToolError, globMatcher, wholeCharacters }
