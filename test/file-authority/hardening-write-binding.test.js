'use strict'
// Issue 12 finding 7: when the native binding cannot be loaded, the reason given names
// no path, whatever characters the install location holds (spaces, quotes,
// parentheses, colons: the old filter stopped at whitespace and printed the rest).
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const BINDING = path.join(__dirname, '..', '..', 'lib', 'binding.js')
const NAME = "John Smith (it's) x:y"

function failureAt (root) {
  const r = spawnSync(process.execPath, ['-e', `process.stdout.write(String(require(${JSON.stringify(BINDING)}).loadFailure()))`],
    { encoding: 'utf8', env: { ...process.env, AGENT_OS_BINDING_ROOT: root } })
  assert.equal(r.status, 0, r.stderr)
  return r.stdout
}

// The install location above the package (its own name, @scope/agent-os, may appear).
function assertNoPath (message, root) {
  const above = root.slice(0, root.indexOf(path.join('node_modules', '@scope')))
  for (const part of above.split(path.sep).filter(Boolean)) {
    for (const word of part.split(/[\s()':]+/).filter((w) => w.length > 2)) {
      assert.ok(!message.includes(word), `the message names part of the path (${JSON.stringify(word)}): ${message}`)
    }
  }
  assert.doesNotMatch(message, /[\\/][^\s]*[\\/]/, 'no path-like text')
}

describe('file-authority: a binding that cannot be loaded is described without any path', function () {
  this.timeout(60000)
  let base, root
  beforeEach(function () {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-binding-'))
    root = path.join(base, NAME, 'node_modules', '@scope', 'agent-os')
    fs.mkdirSync(path.join(root, 'build', 'Release'), { recursive: true })
  })
  afterEach(function () { fs.rmSync(base, { recursive: true, force: true }) })

  it('a corrupt binary: what failed and how to fix it, no path', function () {
    fs.writeFileSync(path.join(root, 'build', 'Release', 'agent_os.node'), 'not a binary at all')
    const message = failureAt(root)
    assert.match(message, /failed to load \(it is not a binary for this platform and architecture\); reinstall/)
    assertNoPath(message, root)
  })

  it('a binary for another architecture: no path', function () {
    if (process.platform !== 'linux') this.skip()
    const cc = process.arch === 'arm64' ? 'x86_64-linux-gnu-gcc' : 'aarch64-linux-gnu-gcc'
    const src = path.join(base, 'x.c')
    fs.writeFileSync(src, 'int aos_x(void) { return 1; }\n')
    const out = path.join(root, 'build', 'Release', 'agent_os.node')
    if (spawnSync(cc, ['-shared', '-fPIC', '-o', out, src]).status !== 0) this.skip() // no cross compiler here
    const message = failureAt(root)
    // glibc reports another machine's ELF file as one it cannot open.
    assert.match(message, /failed to load \((it is not a binary for this platform and architecture|a file it needs could not be opened)\); reinstall/)
    assertNoPath(message, root)
  })

  it('no binary at all: how to build one, no path', function () {
    const message = failureAt(root)
    assert.match(message, /^no prebuilt binary for /)
    assertNoPath(message, root)
  })
})
