'use strict'
// What a file-authority call came to, for assertions: [code, segmentIndex, hostCode]
// of the FileAuthorityError it threw (any other error fails the test), or 'no error'.

const assert = require('node:assert/strict')
const fa = require('../../lib/file-authority.js')

function outcome (err) {
  assert.ok(err instanceof fa.FileAuthorityError, String(err))
  return [err.code, err.segmentIndex, err.hostCode]
}

function code (fn) {
  try {
    fn()
  } catch (err) {
    return outcome(err)
  }
  return 'no error'
}

async function asyncCode (promise) {
  try {
    await promise
  } catch (err) {
    return outcome(err)
  }
  return 'no error'
}

module.exports = { code, asyncCode }
