'use strict'
// Loads the package's primitives through its own public subpaths (a self-reference,
// exactly as a user requires them), and says plainly when one has not been built yet.

const fs = require('node:fs')
const path = require('node:path')

const NOT_BUILT = 'not available (primitive not built)'

class Unavailable extends Error {
  constructor (reason) {
    super(reason)
    this.name = 'Unavailable'
  }
}

function load (subpath) {
  let file
  try {
    file = require.resolve(`@scope/agent-os/${subpath}`)
  } catch {
    return { reason: NOT_BUILT }
  }
  if (!fs.existsSync(file)) return { reason: NOT_BUILT }
  try {
    return { mod: require(file) }
  } catch (err) {
    return { reason: `${NOT_BUILT}: ${firstLine(err)}` }
  }
}

function firstLine (err) {
  const text = String((err && err.code ? `${err.code}: ` : '') + ((err && err.message) || err))
  return text.split('\n')[0].slice(0, 140)
}

/** Returns the module or throws Unavailable when any of `names` is not a function on it. */
function need (loaded, names) {
  if (!loaded.mod) throw new Unavailable(loaded.reason)
  for (const name of names) {
    if (typeof loaded.mod[name] !== 'function') throw new Unavailable(`${NOT_BUILT}: no ${name}()`)
  }
  return loaded.mod
}

const NO_BINDING = 'not available (native binding not loaded; run npm install or npm run build)'

/** The Unavailable that an error from a package call stands for. */
function unavailableFrom (what, err) {
  if (err && err.code === 'UNSUPPORTED_BACKEND') return new Unavailable(NO_BINDING)
  return new Unavailable(`${NOT_BUILT}: ${what} failed with ${firstLine(err)}`)
}

/** Runs `probe`; an error from it means the primitive is not usable yet. */
function probe (what, fn) {
  try {
    return fn()
  } catch (err) {
    throw unavailableFrom(what, err)
  }
}

/** require() of an alternative (a devDependency), or Unavailable when not installed. */
function alternative (name) {
  try {
    return require(name)
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND') throw new Unavailable(`not available (devDependency ${name} not installed; run npm install)`)
    throw err
  }
}

function packageRoot () {
  return path.dirname(require.resolve('@scope/agent-os/package.json'))
}

module.exports = { load, need, probe, alternative, unavailableFrom, Unavailable, NOT_BUILT, NO_BINDING, firstLine, packageRoot }
