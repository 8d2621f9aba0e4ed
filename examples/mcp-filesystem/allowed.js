'use strict'
// The allowed directories of the server: one read authority and one write authority per
// directory (bound to the directory object when it was opened), and the mapping of a
// path string a client sent to (that pair, a segment list) with toSegments. Nothing
// here opens, stats or reads anything by pathname after a directory was opened: every
// file access goes through the pair.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { openReadAuthority, openWriteAuthority, toSegments, FileAuthorityError } = require('@scope/agent-os/file-authority')

/** '~' and '~/x' as the user's home, as the upstream server and a shell take them. */
function expandHome (p) {
  if (p === '~' || p.startsWith('~/')) return path.join(os.homedir(), p.slice(1))
  return p
}

/** '/a//b/' as '/a/b': the spelling used in listings and results. */
function tidy (p) {
  return path.resolve(p)
}

class ToolError extends Error {
  constructor (message) {
    super(message)
    this.name = 'ToolError'
  }
}

/**
 * Opens the pair of authorities for one directory, given as a path (command line) or as
 * a path from a file: URI (roots). `names` are the spellings a client may use for it:
 * the path as given (made absolute) and its real path, when they differ.
 * Resolves undefined (with the reason on standard error) when it is not a directory
 * that can be opened.
 */
async function openDirectory (given) {
  const absolute = tidy(expandHome(given))
  let reader
  try {
    reader = await openReadAuthority(absolute)
  } catch (err) {
    const why = err instanceof FileAuthorityError ? err.code + (err.hostCode ? ' ' + err.hostCode : '') : 'error'
    console.error(`Warning: Cannot open allowed directory ${absolute} (${why}), skipping`)
    return undefined
  }
  let writer
  try {
    writer = await openWriteAuthority(absolute, { sameRootAs: reader })
  } catch (err) {
    await reader.close()
    const why = err instanceof FileAuthorityError ? err.code : 'error'
    console.error(`Warning: Cannot open allowed directory ${absolute} for writing (${why}), skipping`)
    return undefined
  }
  // The real path only adds a spelling a client may use (macOS's /tmp is /private/tmp);
  // the authorities are already bound to the directory, whatever the name says later.
  let real = absolute
  try { real = tidy(await fs.promises.realpath(absolute)) } catch {}
  const names = real === absolute ? [absolute] : [absolute, real]
  return { names, real, reader, writer }
}

class AllowedDirectories {
  constructor (dirs) {
    this.dirs = dirs
  }

  /** Opens every directory it can; those it cannot are skipped with a warning. */
  static async open (given) {
    const dirs = []
    for (const g of given) {
      const d = await openDirectory(g)
      if (d === undefined) continue
      // Two spellings of one directory object share one pair.
      const same = dirs.find((o) => o.reader.sharesRootWith(d.reader))
      if (same !== undefined) {
        for (const n of d.names) if (!same.names.includes(n)) same.names.push(n)
        await Promise.all([d.reader.close(), d.writer.close()])
        continue
      }
      dirs.push(d)
    }
    return new AllowedDirectories(dirs)
  }

  get size () { return this.dirs.length }

  /** Every spelling, as list_allowed_directories shows them. */
  names () {
    return this.dirs.flatMap((d) => d.names)
  }

  /**
   * The directory and segments a client's path names, or a ToolError that says why
   * none. `what` names the argument in messages ('path', 'source', 'destination').
   * An absolute path must lie beneath an allowed directory by whole components, exactly
   * as written (no trimming, no unquoting); a relative one is taken in the first
   * allowed directory. '..' is refused anywhere.
   */
  resolve (given, what = 'path') {
    if (this.dirs.length === 0) throw new ToolError('No allowed directories: start the server with a directory, or give it roots')
    const p = expandHome(given)
    if (!path.isAbsolute(p)) {
      const dir = this.dirs[0]
      const segments = segmentsOrRefuse(p, what)
      return { dir, segments, display: path.join(dir.real, ...segments) }
    }
    let best
    for (const dir of this.dirs) {
      for (const name of dir.names) {
        let segments
        try {
          segments = toSegments(p, { root: name })
        } catch (err) {
          // Beneath this name but with a bad component ('..', NUL): say so now.
          if (err instanceof FileAuthorityError && err.segmentIndex !== undefined) throw badComponent(what)
          continue
        }
        if (best === undefined || name.length > best.name.length) best = { dir, name, segments }
      }
    }
    if (best === undefined) throw new ToolError(`Access denied - ${what} outside allowed directories (compared component by component, exactly as written: no trimming or unquoting)`)
    return { dir: best.dir, segments: best.segments, display: path.join(best.dir.real, ...best.segments) }
  }

  async close () {
    const dirs = this.dirs
    this.dirs = []
    await Promise.all(dirs.flatMap((d) => [d.reader.close(), d.writer.close()]))
  }
}

function badComponent (what) {
  return new ToolError(`Invalid ${what}: '..', a NUL or a component that is not a valid file name; ` +
    "this server takes no '..' (give the path beneath an allowed directory directly)")
}

function segmentsOrRefuse (p, what) {
  try {
    return toSegments(p)
  } catch (err) {
    if (err instanceof FileAuthorityError) throw badComponent(what)
    throw err
  }
}

module.exports = { AllowedDirectories, ToolError, expandHome }
