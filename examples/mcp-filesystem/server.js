'use strict'
// The Model Context Protocol's filesystem server, rebuilt on @scope/agent-os: the tools,
// input schemas, result shapes and command line of @modelcontextprotocol/server-filesystem
// 2026.8.31, with every file access through a file-authority pair per allowed directory.
// A path string from the client becomes a segment list (toSegments) beneath one allowed
// directory, and every call resolves it from that directory's retained descriptor: no
// link, rename or directory swap can take a call outside, and no call uses a pathname
// that was checked earlier. Where the package's policy differs from the upstream
// server's (a link inside the root is refused, not followed; a FIFO or device is refused,
// not read; '..' is refused, not collapsed), the tool says so in its error text;
// README.md lists each difference.

const { pathToFileURL, fileURLToPath } = require('node:url')
const path = require('node:path')
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js')
const { RootsListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js')
const { z } = require('zod')
const { minimatch } = require('minimatch')
const { FileAuthorityError, toSegments } = require('@scope/agent-os/file-authority')
const { AllowedDirectories, ToolError } = require('./allowed.js')
const text = require('./text.js')

const MiB = 1024 * 1024

/** The limits, from the environment (the command line stays upstream's). */
function limitsFromEnv (env = process.env) {
  const int = (name, fallback) => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    const n = Number(raw)
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a whole number >= 0`)
    return n
  }
  return {
    // read_text_file, read_file, read_multiple_files (each file), read_media_file,
    // edit_file, and the lines head / tail may span.
    maxBytes: int('MCP_FILESYSTEM_MAX_BYTES', 32 * MiB),
    // directory_tree and search_files: entries one walk may visit.
    maxEntries: int('MCP_FILESYSTEM_MAX_ENTRIES', 200000),
    // write_file and edit_file flush to disk before they answer (upstream never does).
    durable: env.MCP_FILESYSTEM_DURABLE === '1'
  }
}

const READ_ONLY = { readOnlyHint: true, openWorldHint: false }
const STRING_RESULT = { content: z.string() }

/** A result with the text both as content and as structured content. */
function textResult (value) {
  return { content: [{ type: 'text', text: value }], structuredContent: { content: value } }
}

/**
 * A refusal of the package as a tool error text that says what happened and what to do;
 * it names the argument (`what`), never bytes or names seen in the file system.
 */
function explain (err, what, limits) {
  if (!(err instanceof FileAuthorityError)) return err
  const at = err.segmentIndex !== undefined ? ` (at component ${err.segmentIndex + 1} beneath the allowed directory)` : ''
  switch (err.code) {
    case 'UNSAFE_ENTRY':
      if (err.hostCode === 'ELOOP') return new ToolError(`Access denied - ${what} is or passes through a symbolic link${at}: this server never follows links (give the path of the link's target beneath an allowed directory)`)
      if (err.hostCode === 'ENOTDIR') return new ToolError(`Not a directory - a parent in ${what} is not a directory${at}`)
      if (err.hostCode === 'EISDIR') return new ToolError(`Is a directory - ${what} is a directory${at}; this tool needs a file`)
      return new ToolError(`Access denied - ${what} is not a regular file or directory (a FIFO, socket or device)${at}: this server never opens one`)
    case 'OVER_BUDGET':
      return new ToolError(`File too large - ${what} has more than ${limits.maxBytes} bytes, this server's read limit (MCP_FILESYSTEM_MAX_BYTES); use head or tail on read_text_file for part of a text file`)
    case 'FILE_CHANGED':
      return new ToolError(`Changed during the call - ${what}, or a directory on the way, was replaced or moved while this call ran${at}; nothing outside the allowed directories was read or written: retry`)
    case 'INVALID_CONTENT':
      return new ToolError(`Not UTF-8 text - ${what} holds bytes that are not valid UTF-8 (a binary file?); use read_media_file for binary files`)
    case 'ENTRY_EXISTS':
      return new ToolError(`Already exists - an entry that is not a directory is in the way of ${what}${at}`)
    case 'HOST_IO':
      if (err.hostCode === 'ENOENT') return new ToolError(`ENOENT: no such file or directory (${what})${at}`)
      if (err.hostCode === 'ENOTEMPTY') return new ToolError(`ENOTEMPTY: directory not empty (${what})`)
      return new ToolError(`${err.hostCode || 'EIO'}: the host refused the operation on ${what}${at}`)
    case 'ROOT_CHANGED':
      return new ToolError(`The allowed directory of ${what} was removed or replaced since the server opened it; restart the server or send new roots`)
    case 'AUTHORITY_CLOSED':
      return new ToolError(`The allowed directories changed while this call ran (new roots); retry ${what} against the new ones`)
    case 'INVALID_PATH':
      return new ToolError(`Invalid ${what}: '..', a NUL or a component that is not a valid file name`)
    case 'UNSUPPORTED_BACKEND':
      return new ToolError(`Unsupported here - the file system of ${what} cannot give this guarantee (for edit_file: telling two versions of a file apart, which coarse timestamps cannot); nothing was written`)
    default:
      return new ToolError(`${err.code}: refused on ${what}`)
  }
}

function notFound (what) {
  return new ToolError(`ENOENT: no such file or directory (${what})`)
}

class FilesystemServer {
  constructor ({ directories = [], limits = limitsFromEnv(), log = (line) => console.error(line) } = {}) {
    this.given = directories
    this.limits = limits
    this.log = log
    this.allowed = new AllowedDirectories([])
    this.mcp = new McpServer({ name: 'secure-filesystem-server', version: '0.2.0' })
    this.registerTools()
    this.registerRoots()
  }

  /** Opens the command line's directories; false when some were given and none opened. */
  async open () {
    this.allowed = await AllowedDirectories.open(this.given)
    return !(this.given.length > 0 && this.allowed.size === 0)
  }

  async close () {
    await this.mcp.close()
    await this.allowed.close()
  }

  /** Runs `fn` with the pair and segments of a client's path; explains refusals. */
  async within (given, what, fn) {
    const { dir, segments, display } = this.allowed.resolve(given, what)
    try {
      return await fn(dir, segments, display)
    } catch (err) {
      throw explain(err, what, this.limits)
    }
  }

  // -- reading ------------------------------------------------------------------------

  async readWhole (given, what) {
    return this.within(given, what, async (dir, segments) => {
      const got = await dir.reader.readText(segments, { maxBytes: this.limits.maxBytes })
      if (got === undefined) throw notFound(what)
      return got
    })
  }

  /**
   * The first `count` lines: one read from the start of a window that grows (64 KiB,
   * then 4 times larger) until it holds them or the whole file. Each read is one
   * consistent state of the file (readRange's rule), so no two states are ever mixed.
   */
  async readHead (given, count, what) {
    if (!(count > 0)) return ''
    const need = Math.ceil(count)
    return this.within(given, what, async (dir, segments) => {
      for (let window = 64 * 1024; ; window *= 4) {
        const got = await dir.reader.readRange(segments, { offset: 0, length: Math.min(window, this.limits.maxBytes + 1) })
        if (got === undefined) throw notFound(what)
        const cut = text.nthNewline(got.bytes, need)
        if (cut >= 0 || got.bytes.length >= got.size) {
          const decoded = text.decodeUtf8(cut >= 0 ? got.bytes.subarray(0, cut + 1) : got.bytes)
          if (decoded === undefined) throw new FileAuthorityError('INVALID_CONTENT', { operation: 'readRange' })
          return text.firstLines(decoded, need)
        }
        if (got.bytes.length > this.limits.maxBytes) throw new ToolError(`Lines too long - the first ${need} lines of ${what} span more than ${this.limits.maxBytes} bytes, this server's read limit (MCP_FILESYSTEM_MAX_BYTES)`)
      }
    })
  }

  /**
   * The last `count` lines: one read of a window that ends at the end of the file and
   * grows (16 KiB, then 4 times larger) until it holds them or the whole file; the size
   * comes from an empty read, and a read that no longer ends at the end of the file
   * (the file grew or shrank) is made again.
   */
  async readTail (given, count, what) {
    const need = Math.trunc(count)
    if (!(need > 0)) return ''
    return this.within(given, what, async (dir, segments) => {
      const probe = await dir.reader.readRange(segments, { offset: 0, length: 0 })
      if (probe === undefined) throw notFound(what)
      let size = probe.size
      let changes = 0
      for (let window = 16 * 1024; ;) {
        const start = Math.max(0, size - Math.min(window, this.limits.maxBytes + 1))
        const got = await dir.reader.readRange(segments, { offset: start, length: size - start })
        if (got === undefined) throw notFound(what)
        if (got.size !== start + got.bytes.length) {
          // Not the end of the file any more: read again at its new size, a few times.
          if (++changes > 3) throw new FileAuthorityError('FILE_CHANGED', { operation: 'readRange' })
          size = got.size
          continue
        }
        // The last `need` lines are everything after the need-th newline from the end.
        const { at } = text.nthNewlineFromEnd(got.bytes, need)
        if (at >= 0 || start === 0) {
          const decoded = text.decodeUtf8(at >= 0 ? got.bytes.subarray(at + 1) : got.bytes)
          if (decoded === undefined) throw new FileAuthorityError('INVALID_CONTENT', { operation: 'readRange' })
          return text.lastLines(decoded, need)
        }
        if (got.bytes.length > this.limits.maxBytes) throw new ToolError(`Lines too long - the last ${need} lines of ${what} span more than ${this.limits.maxBytes} bytes, this server's read limit (MCP_FILESYSTEM_MAX_BYTES)`)
        window *= 4
      }
    })
  }

  async readTextTool (args) {
    if (args.head && args.tail) throw new Error('Cannot specify both head and tail parameters simultaneously')
    let content
    if (args.tail) content = await this.readTail(args.path, args.tail, 'path')
    else if (args.head) content = await this.readHead(args.path, args.head, 'path')
    else content = await this.readWhole(args.path, 'path')
    return textResult(content)
  }

  // -- the tools ----------------------------------------------------------------------

  registerTools () {
    const mcp = this.mcp
    const limits = this.limits
    const readTextInput = {
      path: z.string(),
      tail: z.number().optional().describe('If provided, returns only the last N lines of the file'),
      head: z.number().optional().describe('If provided, returns only the first N lines of the file')
    }

    mcp.registerTool('read_file', {
      title: 'Read File (Deprecated)',
      description: 'Read a whole text file. DEPRECATED: use read_text_file, which this tool is the same as.',
      inputSchema: readTextInput,
      outputSchema: STRING_RESULT,
      annotations: READ_ONLY
    }, (args) => this.readTextTool(args))

    mcp.registerTool('read_text_file', {
      title: 'Read Text File',
      description: 'Read a UTF-8 text file beneath an allowed directory: the whole file, or only its ' +
        "first N lines ('head') or last N lines ('tail'), which read only the part of the file they need. " +
        `A whole read is refused for a file over ${limits.maxBytes} bytes, and a file that is not valid UTF-8 ` +
        'is refused rather than altered. Symbolic links are never followed, and FIFOs and devices are never opened.',
      inputSchema: readTextInput,
      outputSchema: STRING_RESULT,
      annotations: READ_ONLY
    }, (args) => this.readTextTool(args))

    const mediaBlock = z.union([
      z.object({ type: z.enum(['image', 'audio']), data: z.string(), mimeType: z.string() }),
      z.object({ type: z.literal('resource'), resource: z.object({ uri: z.string(), mimeType: z.string().optional(), blob: z.string() }) })
    ])
    mcp.registerTool('read_media_file', {
      title: 'Read Media File',
      description: 'Read a file as base64 with its MIME type: an image or audio file as image or audio content, ' +
        `anything else as an embedded resource. Files over ${limits.maxBytes} bytes are refused. Only beneath allowed directories.`,
      inputSchema: { path: z.string() },
      outputSchema: { content: z.array(mediaBlock) },
      annotations: READ_ONLY
    }, async (args) => {
      return this.within(args.path, 'path', async (dir, segments, display) => {
        const bytes = await dir.reader.readBytes(segments, { maxBytes: limits.maxBytes })
        if (bytes === undefined) throw notFound('path')
        const mimeType = text.mediaType(segments.length > 0 ? segments[segments.length - 1] : '')
        const data = bytes.toString('base64')
        const block = mimeType.startsWith('image/')
          ? { type: 'image', data, mimeType }
          : mimeType.startsWith('audio/')
            ? { type: 'audio', data, mimeType }
            : { type: 'resource', resource: { uri: pathToFileURL(display).href, mimeType, blob: data } }
        return { content: [block], structuredContent: { content: [block] } }
      })
    })

    mcp.registerTool('read_multiple_files', {
      title: 'Read Multiple Files',
      description: 'Read several text files in one call; each comes back under its path, and a file that ' +
        'cannot be read gives its error in its place without stopping the others. Only beneath allowed directories.',
      inputSchema: {
        paths: z.array(z.string()).min(1)
          .describe('Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories.')
      },
      outputSchema: STRING_RESULT,
      annotations: READ_ONLY
    }, async (args) => {
      const parts = await Promise.all(args.paths.map(async (p, i) => {
        try {
          return `${p}:\n${await this.readWhole(p, `paths[${i}]`)}\n`
        } catch (err) {
          return `${p}: Error - ${err instanceof Error ? err.message : String(err)}`
        }
      }))
      return textResult(parts.join('\n---\n'))
    })

    mcp.registerTool('write_file', {
      title: 'Write File',
      description: 'Create a file or replace an existing one with new text, atomically (a reader sees the old ' +
        'file or the new one, never a mix). Overwrites without warning. An existing link, directory or FIFO at ' +
        'the path is refused and left as it is. Only beneath allowed directories.',
      inputSchema: { path: z.string(), content: z.string() },
      outputSchema: STRING_RESULT,
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false }
    }, async (args) => {
      await this.within(args.path, 'path', async (dir, segments) => {
        if (segments.length === 0) throw new FileAuthorityError('UNSAFE_ENTRY', { hostCode: 'EISDIR' })
        try {
          await dir.writer.writeText(segments, args.content, { durable: limits.durable })
        } catch (err) {
          if (err instanceof FileAuthorityError && err.code === 'HOST_IO' && err.hostCode === 'ENOENT') {
            throw new ToolError('Parent directory does not exist (path): create it with create_directory first')
          }
          if (err instanceof FileAuthorityError && err.code === 'INVALID_CONTENT') {
            throw new ToolError('Invalid content - the text is not well-formed Unicode (a lone surrogate); nothing was written')
          }
          throw err
        }
      })
      return textResult(`Successfully wrote to ${args.path}`)
    })

    mcp.registerTool('edit_file', {
      title: 'Edit File',
      description: 'Edit a text file: each edit replaces an exact text (or a run of lines equal to it apart from ' +
        'indentation) with new text. Returns a git-style diff; with dryRun, only the diff. The file is written ' +
        'only if nobody changed it since it was read. Only beneath allowed directories.',
      inputSchema: {
        path: z.string(),
        edits: z.array(z.object({
          oldText: z.string().describe('Text to search for - must match exactly'),
          newText: z.string().describe('Text to replace with')
        })),
        dryRun: z.boolean().default(false).describe('Preview changes using git-style diff format')
      },
      outputSchema: STRING_RESULT,
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false }
    }, async (args) => {
      const diff = await this.within(args.path, 'path', async (dir, segments, display) => {
        const got = await dir.reader.readVersioned(segments, { maxBytes: limits.maxBytes })
        if (got === undefined) throw notFound('path')
        const decoded = text.decodeUtf8(got.bytes)
        if (decoded === undefined) throw new FileAuthorityError('INVALID_CONTENT', { operation: 'readVersioned' })
        const before = text.toLf(decoded)
        const after = text.applyEdits(before, args.edits)
        const fenced = text.fencedDiff(display, before, after)
        if (!args.dryRun) {
          try {
            await dir.writer.writeText(segments, after, { ifVersion: got.version, durable: limits.durable })
          } catch (err) {
            if (err instanceof FileAuthorityError && err.code === 'FILE_CHANGED') {
              throw new ToolError('Changed during the call - the file was changed or replaced after it was read; nothing was written: read it again and retry')
            }
            throw err
          }
        }
        return fenced
      })
      return textResult(diff)
    })

    mcp.registerTool('create_directory', {
      title: 'Create Directory',
      description: 'Create a directory and any missing parents; succeeds when it already exists. ' +
        'No directory on the way may be a link. Only beneath allowed directories.',
      inputSchema: { path: z.string() },
      outputSchema: STRING_RESULT,
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false }
    }, async (args) => {
      await this.within(args.path, 'path', async (dir, segments) => {
        await dir.writer.makeDirectory(segments, { parents: true })
      })
      return textResult(`Successfully created directory ${args.path}`)
    })

    mcp.registerTool('list_directory', {
      title: 'List Directory',
      description: 'List a directory: one line per entry, [DIR] for a directory and [FILE] for anything else, ' +
        'sorted by name. Only beneath allowed directories.',
      inputSchema: { path: z.string() },
      outputSchema: STRING_RESULT,
      annotations: READ_ONLY
    }, async (args) => {
      const listed = await this.within(args.path, 'path', async (dir, segments) => {
        const got = await dir.reader.list(segments)
        if (got === undefined) throw notFound('path')
        return got
      })
      const lines = listed.map((e) => `${e.kind === 'directory' ? '[DIR]' : '[FILE]'} ${e.name}`)
      return textResult(lines.join('\n'))
    })

    mcp.registerTool('list_directory_with_sizes', {
      title: 'List Directory with Sizes',
      description: 'List a directory with the size of each file, sorted by name or by size (largest first), ' +
        'and the totals. Links are listed as themselves, never followed. Only beneath allowed directories.',
      inputSchema: {
        path: z.string(),
        sortBy: z.enum(['name', 'size']).optional().default('name').describe('Sort entries by name or size')
      },
      outputSchema: STRING_RESULT,
      annotations: READ_ONLY
    }, async (args) => {
      const listed = await this.within(args.path, 'path', async (dir, segments) => {
        const got = await dir.reader.list(segments, { withStats: true })
        if (got === undefined) throw notFound('path')
        return got
      })
      // An entry removed between the listing and its stat has no size to give (upstream: 0).
      const rows = listed.map((e) => ({ name: e.name, isDirectory: e.kind === 'directory', size: e.stat ? e.stat.size : 0 }))
      const sorted = [...rows].sort(args.sortBy === 'size' ? (a, b) => b.size - a.size : (a, b) => a.name.localeCompare(b.name))
      const lines = sorted.map((r) => `${r.isDirectory ? '[DIR]' : '[FILE]'} ${r.name.padEnd(30)} ${r.isDirectory ? '' : text.formatSize(r.size).padStart(10)}`)
      const files = rows.filter((r) => !r.isDirectory)
      const total = files.reduce((sum, r) => sum + r.size, 0)
      lines.push('', `Total: ${files.length} files, ${rows.length - files.length} directories`, `Combined size: ${text.formatSize(total)}`)
      return textResult(lines.join('\n'))
    })

    mcp.registerTool('directory_tree', {
      title: 'Directory Tree',
      description: "A recursive tree of a directory as JSON: each entry has 'name' and 'type' (file or directory), " +
        "and a directory has 'children'. excludePatterns are glob patterns (a plain name is excluded wherever it occurs). " +
        `Trees of more than ${limits.maxEntries} entries are refused. Links are never followed. Only beneath allowed directories.`,
      inputSchema: { path: z.string(), excludePatterns: z.array(z.string()).optional().default([]) },
      outputSchema: STRING_RESULT,
      annotations: READ_ONLY
    }, async (args) => {
      const patterns = args.excludePatterns
      const entries = await this.walk(args.path, patterns.filter(isPlainName))
      const skip = excluder(patterns.filter((p) => !isPlainName(p)), (p) =>
        p.includes('*') ? [p] : [p, `**/${p}`, `**/${p}/**`])
      const top = []
      const children = new Map() // path key -> children array of that directory
      const dropped = new Set()
      for (const e of entries) {
        const key = e.path.join('/')
        const parentKey = e.path.slice(0, -1).join('/')
        if (e.path.length > 1 && (dropped.has(parentKey) || !children.has(parentKey))) { dropped.add(key); continue }
        if (skip(key)) { dropped.add(key); continue }
        const node = { name: e.path[e.path.length - 1], type: e.kind === 'directory' ? 'directory' : 'file' }
        if (e.kind === 'directory') {
          node.children = []
          children.set(key, node.children)
        }
        ;(e.path.length === 1 ? top : children.get(parentKey)).push(node)
      }
      return textResult(JSON.stringify(top, null, 2))
    })

    mcp.registerTool('move_file', {
      title: 'Move File',
      description: 'Move or rename a file or directory; fails if the destination exists. Source and destination ' +
        'must be beneath the same allowed directory; a link is moved as itself.',
      inputSchema: { source: z.string(), destination: z.string() },
      outputSchema: STRING_RESULT,
      annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false }
    }, async (args) => {
      const from = this.allowed.resolve(args.source, 'source')
      const to = this.allowed.resolve(args.destination, 'destination')
      if (from.dir !== to.dir) throw new ToolError('Cross-directory move refused - source and destination are beneath different allowed directories; this server moves only within one')
      if (from.segments.length === 0 || to.segments.length === 0) throw new ToolError('Access denied - an allowed directory itself cannot be moved or replaced')
      try {
        await from.dir.writer.rename(from.segments, to.segments)
      } catch (err) {
        if (err instanceof FileAuthorityError && err.code === 'ENTRY_EXISTS') throw new ToolError('Destination already exists (destination)')
        const side = err instanceof FileAuthorityError && err.segmentIndex !== undefined && err.segmentIndex >= from.segments.length ? 'destination' : 'source'
        throw explain(err, side, limits)
      }
      return textResult(`Successfully moved ${args.source} to ${args.destination}`)
    })

    mcp.registerTool('search_files', {
      title: 'Search Files',
      description: 'Find files and directories beneath a directory whose path relative to it matches a glob ' +
        "pattern ('*.ext' in that directory, '**/*.ext' at any depth); excludePatterns are globs of paths to leave " +
        `out with their contents. Returns full paths. Searches of more than ${limits.maxEntries} entries are refused; ` +
        'links are listed, never followed. Only beneath allowed directories.',
      inputSchema: { path: z.string(), pattern: z.string(), excludePatterns: z.array(z.string()).optional().default([]) },
      outputSchema: STRING_RESULT,
      annotations: READ_ONLY
    }, async (args) => {
      const start = this.allowed.resolve(args.path, 'path')
      // '**/name' leaves out every entry so named, as the walk's exclude does.
      const anywhere = args.excludePatterns.filter((p) => p.startsWith('**/') && isPlainName(p.slice(3)))
      const entries = await this.walk(args.path, anywhere.map((p) => p.slice(3)))
      const skip = excluder(args.excludePatterns.filter((p) => !anywhere.includes(p)), (p) => [p])
      const match = new minimatch.Minimatch(args.pattern, { dot: true })
      const dropped = new Set()
      const found = []
      for (const e of entries) {
        const key = e.path.join('/')
        if (e.path.length > 1 && dropped.has(e.path.slice(0, -1).join('/'))) { dropped.add(key); continue }
        if (skip(key)) { dropped.add(key); continue }
        if (match.match(key)) found.push(path.join(start.display, ...e.path))
      }
      return textResult(found.length > 0 ? found.join('\n') : 'No matches found')
    })

    mcp.registerTool('get_file_info', {
      title: 'Get File Info',
      description: 'Metadata of a file or directory: size, last modified time, type and permissions, ' +
        'of the entry itself (a link is described, never followed). Only beneath allowed directories.',
      inputSchema: { path: z.string() },
      outputSchema: STRING_RESULT,
      annotations: READ_ONLY
    }, async (args) => {
      const st = await this.within(args.path, 'path', async (dir, segments) => {
        const got = await dir.reader.stat(segments)
        if (got === undefined) throw notFound('path')
        return got
      })
      const info = {
        size: st.size,
        modified: new Date(st.mtimeMs),
        isDirectory: st.kind === 'directory',
        isFile: st.kind === 'file',
        isSymbolicLink: st.kind === 'symlink',
        permissions: st.mode.toString(8).padStart(3, '0').slice(-3)
      }
      return textResult(Object.entries(info).map(([k, v]) => `${k}: ${v}`).join('\n'))
    })

    mcp.registerTool('list_allowed_directories', {
      title: 'List Allowed Directories',
      description: 'The directories this server may access (and everything beneath them). ' +
        'Call it first to know which paths are available.',
      inputSchema: {},
      outputSchema: STRING_RESULT,
      annotations: READ_ONLY
    }, async () => textResult(`Allowed directories:\n${this.allowed.names().join('\n')}`))
  }

  /** The entries beneath a client's directory path, in one bounded walk. */
  async walk (given, exclude) {
    return this.within(given, 'path', async (dir, segments) => {
      const options = { maxEntries: this.limits.maxEntries }
      if (exclude.length > 0) options.exclude = exclude
      const got = await dir.reader.walk(segments, options)
      if (got === undefined) throw notFound('path')
      if (got.truncated) {
        throw new ToolError(`Too many entries - path holds more than ${this.limits.maxEntries} entries (MCP_FILESYSTEM_MAX_ENTRIES); ` +
          'search a subdirectory or add excludePatterns')
      }
      return got
    })
  }

  // -- roots ----------------------------------------------------------------------------

  /** The client's roots replace the allowed directories (when at least one is usable). */
  async useRoots (roots) {
    const given = []
    for (const root of roots) {
      try {
        given.push(root.uri.startsWith('file://') ? fileURLToPath(root.uri) : root.uri)
      } catch {
        this.log('Skipping invalid path or inaccessible root')
      }
    }
    const next = await AllowedDirectories.open(given)
    if (next.size === 0) {
      this.log('No valid root directories provided by client')
      return
    }
    const previous = this.allowed
    this.allowed = next
    this.log(`Updated allowed directories from MCP roots: ${next.size} valid directories`)
    await previous.close()
  }

  registerRoots () {
    const server = this.mcp.server
    const fetchRoots = async () => {
      try {
        const reply = await server.listRoots()
        if (reply && Array.isArray(reply.roots)) await this.useRoots(reply.roots)
      } catch (err) {
        this.log(`Failed to request roots from client: ${err instanceof Error ? err.message : String(err)}`)
      }
    }
    server.setNotificationHandler(RootsListChangedNotificationSchema, fetchRoots)
    server.oninitialized = async () => {
      if (server.getClientCapabilities()?.roots) {
        await fetchRoots()
      } else if (this.allowed.size > 0) {
        this.log('Client does not support MCP Roots, using allowed directories set from server args')
      } else {
        this.log('Server cannot operate: no allowed directories. Start it with directory arguments, or use a client that gives roots.')
      }
    }
  }
}

/** A pattern that is one plain name (no glob syntax, no separator) and a valid segment,
 * so the walk's exclude can take it. */
function isPlainName (p) {
  if (/[*?[\]{}()!+@\\/]/.test(p)) return false
  try {
    const segments = toSegments(p)
    return segments.length === 1 && segments[0] === p
  } catch {
    return false
  }
}

/** A test of a relative path against exclude patterns, each expanded by `forms`. */
function excluder (patterns, forms) {
  const matchers = patterns.flatMap(forms).map((p) => new minimatch.Minimatch(p, { dot: true }))
  if (matchers.length === 0) return () => false
  return (key) => matchers.some((m) => m.match(key))
}

module.exports = { FilesystemServer, limitsFromEnv, explain }
