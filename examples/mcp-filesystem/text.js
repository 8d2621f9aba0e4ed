'use strict'
// Text work of the tools that needs no file access: line windows (head, tail) over
// bytes read in bounded chunks, the edit algorithm of edit_file, its diff, sizes and
// media types. The results have the upstream server's shapes.

const { createTwoFilesPatch } = require('diff')

const NEWLINE = 0x0a

/** Bytes as UTF-8 text, or undefined when they are not valid UTF-8 (never mangled). */
function decodeUtf8 (bytes) {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return undefined
  }
}

function toLf (text) {
  return text.replace(/\r\n/g, '\n')
}

/** The first `count` lines of `text` (lines split on '\n', a final newline ends the
 * last line rather than starting an empty one), joined with '\n'. */
function firstLines (text, count) {
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines.slice(0, count).join('\n')
}

/** The last `count` lines of `text` with CRLF as LF; a final newline gives a last empty
 * line, as the upstream server returns it. */
function lastLines (text, count) {
  return toLf(text).split('\n').slice(-count).join('\n')
}

/** Index of the n-th (1-based) newline in `bytes` from the start, or -1. */
function nthNewline (bytes, n) {
  let at = -1
  for (let k = 0; k < n; k++) {
    at = bytes.indexOf(NEWLINE, at + 1)
    if (at < 0) return -1
  }
  return at
}

/** Index of the n-th (1-based) newline in `bytes` counting from the end, or -1 with
 * `found` set to how many there were. */
function nthNewlineFromEnd (bytes, n) {
  let at = bytes.length
  let found = 0
  while (found < n) {
    at = at === 0 ? -1 : bytes.lastIndexOf(NEWLINE, at - 1)
    if (at < 0) return { at: -1, found }
    found++
  }
  return { at, found }
}

/** The edits of edit_file applied in order to LF-normalised `content`: each `oldText`
 * replaces its first exact occurrence, else the first run of lines equal to it with
 * surrounding white space ignored (keeping that run's indentation). */
function applyEdits (content, edits) {
  let text = content
  for (const edit of edits) {
    const before = toLf(edit.oldText)
    const after = toLf(edit.newText)
    const at = text.indexOf(before)
    if (at >= 0) {
      text = text.slice(0, at) + after + text.slice(at + before.length)
      continue
    }
    const want = before.split('\n')
    const lines = text.split('\n')
    let done = false
    for (let i = 0; i + want.length <= lines.length && !done; i++) {
      if (!want.every((w, j) => w.trim() === lines[i + j].trim())) continue
      const indent = /^\s*/.exec(lines[i])[0]
      const replacement = after.split('\n').map((line, j) => {
        if (j === 0) return indent + line.trimStart()
        const oldIndent = want[j] === undefined ? '' : /^\s*/.exec(want[j])[0]
        const newIndent = /^\s*/.exec(line)[0]
        if (oldIndent !== '' && newIndent !== '') {
          return indent + ' '.repeat(Math.max(0, newIndent.length - oldIndent.length)) + line.trimStart()
        }
        return line
      })
      lines.splice(i, want.length, ...replacement)
      text = lines.join('\n')
      done = true
    }
    if (!done) throw new Error(`Could not find exact match for edit:\n${edit.oldText}`)
  }
  return text
}

/** A unified diff of the edit in a fenced block whose fence no line of it contains. */
function fencedDiff (name, before, after) {
  const diff = createTwoFilesPatch(name, name, toLf(before), toLf(after), 'original', 'modified')
  let fence = '```'
  while (diff.includes(fence)) fence += '`'
  return `${fence}diff\n${diff}${fence}\n\n`
}

/** 1536 as '1.50 KB', as the upstream server writes sizes. */
function formatSize (bytes) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  if (bytes <= 0) return '0 B'
  const i = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), units.length - 1)
  if (i <= 0) return `${bytes} B`
  return `${(bytes / Math.pow(1024, i)).toFixed(2)} ${units[i]}`
}

const MEDIA_TYPES = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.bmp': 'image/bmp',
  '.svg': 'image/svg+xml',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac'
}

function mediaType (name) {
  const dot = name.lastIndexOf('.')
  const ext = dot > 0 ? name.slice(dot).toLowerCase() : ''
  return MEDIA_TYPES[ext] || 'application/octet-stream'
}

module.exports = { decodeUtf8, toLf, firstLines, lastLines, nthNewline, nthNewlineFromEnd, applyEdits, fencedDiff, formatSize, mediaType }
