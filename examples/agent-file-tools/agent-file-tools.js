'use strict'
// An agent's file tools over one workspace: read (a slice of any file, or the whole of a
// small one), edit (replace one exact string, written back only if nobody changed the
// file since it was read), glob (a bounded walk filtered by a pattern), delete and move.
// Built only on the public API of @scope/agent-os/file-authority: every path is a
// segment list beneath the workspace root, never a pathname, so no link or rename can
// take a tool outside the workspace.

const { openReadAuthority, openWriteAuthority, FileAuthorityError } = require('@scope/agent-os/file-authority')

const MAX_READ = 256 * 1024
const MAX_EDIT = 4 * 1024 * 1024

class ToolError extends Error {
  constructor (code, message) {
    super(message)
    this.name = 'ToolError'
    this.code = code
  }
}

/** 'a/b/c.txt' -> ['a', 'b', 'c.txt']; the authority refuses '..', '.', empty segments. */
function segmentsOf (relative) {
  if (typeof relative !== 'string') throw new ToolError('BAD_PATH', 'path must be a string')
  return relative.split('/').filter((s) => s !== '')
}

/** A glob of '*' (within one segment), '**' (any number of segments) and literals. */
function globMatcher (pattern) {
  const parts = segmentsOf(pattern).map((p) => (p === '**' ? p : new RegExp('^' + p.replace(/[.+^${}()|[\]\\?]/g, '\\$&').replace(/\*/g, '[^/]*') + '$')))
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

async function openFileTools (root) {
  const reader = await openReadAuthority(root)
  let writer
  try {
    writer = await openWriteAuthority(root, { sameRootAs: reader })
  } catch (err) {
    await reader.close()
    throw err
  }
  return {
    /** { text, size, version, truncated } of `length` bytes from `offset`. */
    async read (relative, { offset = 0, length = MAX_READ } = {}) {
      const got = await reader.readRange(segmentsOf(relative), { offset, length })
      if (got === undefined) throw new ToolError('NOT_FOUND', 'no such file')
      return {
        text: Buffer.from(got.bytes).toString('utf8'),
        size: got.size,
        version: got.version,
        truncated: offset + got.bytes.length < got.size
      }
    },

    /** Replaces the one occurrence of `before` with `after`; refuses when the file
     * changed since it was read (another agent, an editor): CONFLICT, nothing lost. */
    async edit (relative, before, after) {
      const segs = segmentsOf(relative)
      const got = await reader.readVersioned(segs, { maxBytes: MAX_EDIT })
      if (got === undefined) throw new ToolError('NOT_FOUND', 'no such file')
      const text = Buffer.from(got.bytes).toString('utf8')
      const at = text.indexOf(before)
      if (at < 0 || text.indexOf(before, at + 1) >= 0) throw new ToolError('NO_UNIQUE_MATCH', 'the text to replace must occur exactly once')
      const next = text.slice(0, at) + after + text.slice(at + before.length)
      try {
        await writer.writeText(segs, next, { ifVersion: got.version })
      } catch (err) {
        if (err instanceof FileAuthorityError && err.code === 'FILE_CHANGED') throw new ToolError('CONFLICT', 'the file changed since it was read')
        throw err
      }
    },

    /** Create a new file; never overwrites. */
    async create (relative, text) {
      try {
        await writer.writeText(segmentsOf(relative), text, { ifAbsent: true, createParents: true })
      } catch (err) {
        if (err instanceof FileAuthorityError && err.code === 'ENTRY_EXISTS') throw new ToolError('EXISTS', 'the file already exists')
        throw err
      }
    },

    /** Paths ('a/b.txt') matching `pattern`, at most `limit`, and whether more exist. */
    async glob (pattern, { limit = 1000 } = {}) {
      const matches = globMatcher(pattern)
      const walked = await reader.walk([], { maxEntries: 100000 })
      const paths = walked.filter((e) => e.kind === 'file' && matches(e.path)).map((e) => e.path.join('/'))
      return { paths: paths.slice(0, limit), truncated: walked.truncated || paths.length > limit }
    },

    /** true when it deleted the file (a link is removed, never followed). */
    async delete (relative) {
      return writer.remove(segmentsOf(relative))
    },

    /** Moves a file or directory; refuses to overwrite unless `overwrite`. */
    async move (from, to, { overwrite = false } = {}) {
      try {
        await writer.rename(segmentsOf(from), segmentsOf(to), { replace: overwrite })
      } catch (err) {
        if (err instanceof FileAuthorityError && err.code === 'ENTRY_EXISTS') throw new ToolError('EXISTS', 'the target exists')
        throw err
      }
    },

    async close () {
      await Promise.all([reader.close(), writer.close()])
    }
  }
}

module.exports = { openFileTools, ToolError, globMatcher }
