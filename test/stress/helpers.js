'use strict'
// Shared by the stress tests of test/stress/: the size switch, the figure line, small
// C helpers compiled on first use (swappers and writers that must run faster than a
// node process can), and child-process plumbing.
//
// Sizes: AGENT_OS_STRESS=ci selects the reduced size the CI job runs (the whole of
// test/stress/ in about five minutes on two cores); anything else (the default of
// `npm run test:stress`) is the full size.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')

const CI = process.env.AGENT_OS_STRESS === 'ci'

/** `full` at full size, `ci` under AGENT_OS_STRESS=ci. */
function size (full, ci) {
  return CI ? ci : full
}

/** Prints one figure line: `figure: <name> key=value ...`. */
function figure (name, values) {
  const line = `figure: ${name} ` + Object.entries(values).map(([k, v]) => `${k}=${v}`).join(' ')
  console.log(line)
  return line
}

const built = new Map()
let buildDir

/** Compiles test/stress/native/<name>.c once per run; returns the binary's path, or
 * null when no C compiler is available. */
function nativeTool (name) {
  if (built.has(name)) return built.get(name)
  if (buildDir === undefined) buildDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-stress-tools-'))
  const out = path.join(buildDir, name)
  const r = spawnSync(process.env.CC || 'cc', ['-std=c11', '-O2', '-D_GNU_SOURCE', '-Wall', '-o', out,
    path.join(__dirname, 'native', `${name}.c`)], { encoding: 'utf8' })
  const bin = r.status === 0 ? out : null
  if (bin === null) process.stderr.write(r.stderr || '')
  built.set(name, bin)
  return bin
}

function removeTools () {
  if (buildDir !== undefined) fs.rmSync(buildDir, { recursive: true, force: true })
  buildDir = undefined
  built.clear()
}

/** Starts a helper that prints "go" once running; resolves to the child. */
async function startReady (cmd, args, options = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], ...options })
  await new Promise((resolve, reject) => {
    let out = ''
    const onData = (d) => {
      out += d
      if (out.includes('go\n')) {
        child.stdout.off('data', onData)
        child.removeListener('exit', onExit)
        resolve()
      }
    }
    const onExit = (c, s) => reject(new Error(`${path.basename(cmd)} exited (${c ?? s}) before it was ready`))
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', onData)
    child.once('exit', onExit)
  })
  child.stdout.resume()
  return child
}

/** SIGKILLs a child (if still running) and waits for its exit. */
async function killAndWait (child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Catches a synchronous call's exception and returns it instead. */
function outcome (fn) {
  try {
    return fn()
  } catch (err) {
    return err
  }
}

/** True when pid is gone or a zombie (Linux /proc): it holds no descriptor any more. */
function isDead (pid) {
  let stat
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return true
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state === 'Z' || state === 'X' || state === 'x'
}

module.exports = { CI, size, figure, nativeTool, removeTools, startReady, killAndWait, sleep, outcome, isDead }
