'use strict'
// lib/internal/message.js: the one message format of the three subpaths, and that no
// caller-supplied value can reach a message through it.

const assert = require('node:assert/strict')
const { formatMessage, kMessage } = require('../../lib/internal/message.js')

describe('internal: the message format', function () {
  const cases = [
    [{ operation: 'readBytes', code: 'INVALID_PATH', argument: 'options.maxBytes', expected: 'must be a safe integer from 0 to buffer.constants.MAX_LENGTH' },
      'readBytes failed: INVALID_PATH: options.maxBytes must be a safe integer from 0 to buffer.constants.MAX_LENGTH'],
    [{ operation: 'readBytes', code: 'INVALID_PATH', segmentIndex: 2, argument: 'segments[2]', expected: 'must be one path segment' },
      'readBytes failed: INVALID_PATH at segment 2: segments[2] must be one path segment'],
    [{ operation: 'writeText', code: 'INVALID_CONTENT', argument: 'text' }, 'writeText failed: INVALID_CONTENT: text is not valid'],
    [{ operation: 'readBytes', code: 'UNSAFE_ENTRY', segmentIndex: 1, hostCode: 'ELOOP' }, 'readBytes failed: UNSAFE_ENTRY at segment 1 (ELOOP)'],
    [{ operation: 'writeText', code: 'HOST_IO', segmentIndex: 0, hostCode: 'ENOSPC' }, 'writeText failed: HOST_IO at segment 0 (ENOSPC)'],
    [{ operation: 'list', code: 'AUTHORITY_CLOSED' }, 'list failed: AUTHORITY_CLOSED'],
    [{ operation: 'acquire', code: 'LOCK_TIMEOUT', holderPid: 23569 }, 'acquire failed: LOCK_TIMEOUT: held by pid 23569 when the time ran out'],
    [{ operation: 'acquire', code: 'LOCK_TIMEOUT' }, 'acquire failed: LOCK_TIMEOUT: still held when the time ran out'],
    [{ operation: 'withLock', code: 'LOCK_HELD', holderPid: 77 }, 'withLock failed: LOCK_HELD: held by pid 77'],
    [{ operation: 'tryAcquire', code: 'UNSAFE_ENTRY', hostCode: 'ELOOP' }, 'tryAcquire failed: UNSAFE_ENTRY (ELOOP)'],
    [{ operation: 'killProcessTree', code: 'INVALID_OPTION', argument: 'options.graceMs', expected: 'must be a finite number >= 0' },
      'killProcessTree failed: INVALID_OPTION: options.graceMs must be a finite number >= 0'],
    [{ operation: 'killProcessTree', code: 'HOST_IO', reason: 'cannot hold the child process', hostCode: 'EPERM' },
      'killProcessTree failed: HOST_IO: cannot hold the child process (EPERM)'],
    [{ operation: 'openReadAuthority', code: 'UNSUPPORTED_BACKEND', reason: 'no prebuilt binary for this platform and none compiled' },
      'openReadAuthority failed: UNSUPPORTED_BACKEND: no prebuilt binary for this platform and none compiled']
  ]
  for (const [details, want] of cases) {
    it(want, function () { assert.equal(formatMessage(details), want) })
  }

  it('prefers the argument at fault over a holder or a reason, and puts the host code last', function () {
    assert.equal(formatMessage({ operation: 'acquire', code: 'INVALID_PATH', argument: 'options.timeoutMs', expected: 'must be a finite number >= 0', holderPid: 5, reason: 'x', hostCode: 'EINVAL' }),
      'acquire failed: INVALID_PATH: options.timeoutMs must be a finite number >= 0 (EINVAL)')
  })

  it('leaves out, never echoes, a part that is not what it claims to be', function () {
    const secret = '/home/alice/.ssh/id_rsa'
    const msg = formatMessage({
      operation: secret,
      code: 'not a code ' + secret,
      argument: secret,
      expected: 'must be\n' + secret,
      segmentIndex: -1,
      hostCode: secret,
      holderPid: 1.5,
      reason: 'x'.repeat(401)
    }, 'readBytes')
    assert.equal(msg, 'readBytes failed: ERROR')
    for (const argument of ['options..maxBytes', 'segments[-1]', 'a b', 'options.maxBytes=1', '1abc', 'options["x"]']) {
      assert.equal(formatMessage({ operation: 'op', code: 'INVALID_PATH', argument }), 'op failed: INVALID_PATH', argument)
    }
    assert.equal(formatMessage({ operation: 'op', code: 'HOST_IO', hostCode: 'EIO; rm -rf' }), 'op failed: HOST_IO')
  })

  it('keeps a long fixed reason whole (the binding load failure says how to fix it)', function () {
    const reason = 'no prebuilt binary for linux-x64 (Node-API 8) ships with this package and none was compiled at install; reinstall with a C compiler and Python available (npm rebuild @scope/agent-os) so node-gyp can build it from source'
    assert.equal(formatMessage({ operation: 'tryAcquire', code: 'UNSUPPORTED_BACKEND', reason }), `tryAcquire failed: UNSUPPORTED_BACKEND: ${reason}`)
  })

  it('reads nothing but the named parts (an internal details key is a symbol)', function () {
    assert.equal(typeof kMessage, 'symbol')
    assert.equal(formatMessage(undefined, 'tryAcquire'), 'tryAcquire failed: ERROR')
    assert.equal(formatMessage({ operation: 'op', code: 'LOCK_HELD', extra: 'ignored' }), 'op failed: LOCK_HELD')
  })
})
