'use strict'
// Reads binding.gyp the way gyp would for one target OS, so the cross builds compile
// exactly the sources, defines, include dirs and flags the gyp file lists for that OS;
// a file a primitive adds to binding.gyp is picked up with no change here.
//
// Supports what the project's gyp file uses: '#' comments, trailing commas, "variables"
// with a "%" default, "conditions" entries [cond, then] and [cond, then, else], where a
// condition is a Python-like expression of names, 'strings', numbers, ==, !=, and, or,
// not and parentheses; and gyp's list merge rules ("key" appends, "key!" removes,
// "key=" replaces, "key+" prepends).

const fs = require('node:fs')

function stripComments (text) {
  let out = ''
  let quote = null
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quote) {
      out += c
      if (c === '\\') out += text[++i] ?? ''
      else if (c === quote) quote = null
    } else if (c === '"' || c === "'") {
      quote = c
      out += c
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++
      out += '\n'
    } else {
      out += c
    }
  }
  return out
}

function parseGyp (text) {
  const clean = stripComments(text).replace(/,(\s*[\]}])/g, '$1')
  try {
    return JSON.parse(clean)
  } catch (err) {
    throw new Error(`binding.gyp is not in the JSON-compatible form this reader supports (double quotes only): ${err.message}`)
  }
}

function tokenize (expr) {
  const re = /\s*(?:(==|!=|\(|\))|'([^']*)'|"([^"]*)"|(-?\d+)|([A-Za-z_][A-Za-z0-9_]*))/y
  const tokens = []
  let pos = 0
  while (pos < expr.length) {
    if (/^\s*$/.test(expr.slice(pos))) break
    re.lastIndex = pos
    const m = re.exec(expr)
    if (!m) throw new Error(`binding.gyp condition not understood: ${expr}`)
    pos = re.lastIndex
    if (m[1]) tokens.push({ op: m[1] })
    else if (m[2] !== undefined || m[3] !== undefined) tokens.push({ value: m[2] ?? m[3] })
    else if (m[4] !== undefined) tokens.push({ value: Number(m[4]) })
    else if (['and', 'or', 'not'].includes(m[5])) tokens.push({ op: m[5] })
    else tokens.push({ name: m[5] })
  }
  return tokens
}

/** Evaluates a gyp condition string against `vars` (e.g. { OS: 'linux' }). */
function evalCondition (expr, vars) {
  const t = tokenize(expr)
  let i = 0
  const peek = () => t[i] || {}
  const value = () => {
    const tok = t[i++]
    if (!tok) throw new Error(`binding.gyp condition ends early: ${expr}`)
    if (tok.op === '(') {
      const v = or()
      if ((t[i++] || {}).op !== ')') throw new Error(`binding.gyp condition: missing ')' in ${expr}`)
      return v
    }
    if (tok.name !== undefined) {
      if (!(tok.name in vars)) throw new Error(`binding.gyp condition names an unknown variable '${tok.name}': ${expr}`)
      return vars[tok.name]
    }
    if (tok.value !== undefined) return tok.value
    throw new Error(`binding.gyp condition not understood: ${expr}`)
  }
  const cmp = () => {
    if (peek().op === 'not') { i++; return !cmp() }
    const a = value()
    const op = peek().op
    if (op === '==' || op === '!=') {
      i++
      // gyp variables are strings: compare '1' and 1 alike.
      const eq = String(a) === String(value())
      return op === '==' ? eq : !eq
    }
    return Boolean(a)
  }
  const and = () => { let v = cmp(); while (peek().op === 'and') { i++; const r = cmp(); v = v && r } return v }
  const or = () => { let v = and(); while (peek().op === 'or') { i++; const r = and(); v = v || r } return v }
  const result = or()
  if (i !== t.length) throw new Error(`binding.gyp condition not understood: ${expr}`)
  return result
}

function mergeInto (dst, src, vars) {
  for (const [rawKey, val] of Object.entries(src)) {
    if (rawKey === 'conditions') continue
    const suffix = /[!=+]$/.test(rawKey) ? rawKey.slice(-1) : ''
    const key = suffix ? rawKey.slice(0, -1) : rawKey
    if (Array.isArray(val)) {
      const cur = Array.isArray(dst[key]) ? dst[key] : []
      if (suffix === '!') dst[key] = cur.filter((x) => !val.includes(x))
      else if (suffix === '=') dst[key] = [...val]
      else if (suffix === '+') dst[key] = [...val, ...cur]
      else dst[key] = [...cur, ...val]
    } else if (val && typeof val === 'object') {
      dst[key] = dst[key] && typeof dst[key] === 'object' ? dst[key] : {}
      mergeInto(dst[key], val, vars)
    } else {
      dst[key] = val
    }
  }
  for (const cond of src.conditions || []) {
    const [expr, then, otherwise] = cond
    if (evalCondition(expr, vars)) mergeInto(dst, then, vars)
    else if (otherwise) mergeInto(dst, otherwise, vars)
  }
  // "key!" written before its list appears in the same dict still applies.
  for (const rawKey of Object.keys(src)) {
    if (rawKey.endsWith('!') && Array.isArray(dst[rawKey.slice(0, -1)])) {
      dst[rawKey.slice(0, -1)] = dst[rawKey.slice(0, -1)].filter((x) => !src[rawKey].includes(x))
    }
  }
  return dst
}

/**
 * The settings of `targetName` in the gyp file at `file` for `vars` (OS plus the file's
 * own variables; variables the caller leaves out take their "%" default when it is a
 * plain value, else must be given).
 */
function targetFor (file, targetName, vars) {
  const gyp = parseGyp(fs.readFileSync(file, 'utf8'))
  const all = { ...vars }
  for (const [k, v] of Object.entries(gyp.variables || {})) {
    const name = k.replace(/%$/, '')
    if (!(name in all) && !(typeof v === 'string' && v.startsWith('<'))) all[name] = v
  }
  const target = (gyp.targets || []).find((t) => t.target_name === targetName)
  if (!target) throw new Error(`binding.gyp has no target '${targetName}'`)
  const merged = mergeInto({}, target, all)
  for (const key of ['sources', 'defines', 'include_dirs', 'cflags', 'cflags_c', 'ldflags', 'libraries']) {
    merged[key] = [...new Set(merged[key] || [])]
  }
  return merged
}

module.exports = { parseGyp, evalCondition, targetFor }
