'use strict'
// Compiles the C comparison programs in bench/c with `cc -O2` into bench/.build
// (ignored by git; binaries are never committed). A program is rebuilt when its
// source or bench/c/bench.h is newer than the binary.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const launcher = require('./launcher.js')

const SOURCE_DIR = path.join(__dirname, '..', 'c')
const BUILD_DIR = path.join(__dirname, '..', '.build')
const PROGRAMS = ['read_loop', 'range_loop', 'write_loop', 'lock_loop', 'proctree', 'subreaper']

function mtime (file) {
  try {
    return fs.statSync(file).mtimeMs
  } catch {
    return -1
  }
}

/** Returns { programs: { name: absolutePath }, compiler, failures: { name: text } }. */
function buildPrograms () {
  fs.mkdirSync(BUILD_DIR, { recursive: true })
  const cc = process.env.CC || 'cc'
  const version = spawnSync(cc, ['--version'], { encoding: 'utf8' })
  const compiler = version.status === 0 ? version.stdout.split('\n')[0].trim() : undefined
  const programs = {}
  const failures = {}
  const header = mtime(path.join(SOURCE_DIR, 'bench.h'))
  for (const name of PROGRAMS) {
    const src = path.join(SOURCE_DIR, `${name}.c`)
    const out = path.join(BUILD_DIR, name)
    if (compiler === undefined) {
      failures[name] = `no C compiler (${cc})`
      continue
    }
    const built = mtime(out)
    if (built < mtime(src) || built < header) {
      const r = spawnSync(cc, ['-O2', '-std=c11', '-Wall', '-Wextra', '-o', out, src], { encoding: 'utf8' })
      if (r.status !== 0) {
        failures[name] = (r.stderr || r.error?.message || 'cc failed').trim().split('\n').slice(0, 3).join(' | ')
        continue
      }
    }
    programs[name] = out
  }
  return { programs, compiler, failures }
}

/** Runs a loop program once, started by the launcher (bench/lib/launcher.js: never
 * a fork of the measuring process), and resolves the ns per iteration it printed. */
async function runLoop (program, args) {
  return (await runLoopLines(program, args))[0]
}

/** As runLoop, resolving every number the program printed, one a line (the first:
 * ns per iteration; read_loop's "-fresh" mode adds the file's age at its timed loop). */
async function runLoopLines (program, args) {
  const r = await launcher.run(program, args)
  const text = (r.stdout || '').trim()
  if (r.error) throw new Error(`${path.basename(program)} could not run: ${r.error}`)
  if (r.status !== 0) {
    const err = new Error(`${path.basename(program)} failed (${r.status ?? r.signal}): ${(r.stderr || text).trim()}`)
    err.output = text
    throw err
  }
  const values = text.split('\n').map(Number)
  if (!values.length || !values.every(Number.isFinite)) throw new Error(`${path.basename(program)} printed ${JSON.stringify(text)}`)
  return values
}

module.exports = { buildPrograms, runLoop, runLoopLines, BUILD_DIR }
