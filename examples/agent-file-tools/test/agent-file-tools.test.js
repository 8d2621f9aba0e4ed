'use strict'
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { openFileTools, ToolError } = require('../agent-file-tools.js')

describe('examples/agent-file-tools', function () {
  let dir, outside, tools
  beforeEach(async function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-file-tools-test-'))
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-file-tools-outside-'))
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'SECRET')
    fs.mkdirSync(path.join(dir, 'src', 'lib'), { recursive: true })
    fs.writeFileSync(path.join(dir, 'src', 'a.js'), 'let x = 1\n')
    fs.writeFileSync(path.join(dir, 'src', 'lib', 'b.js'), 'let y = 2\n')
    fs.writeFileSync(path.join(dir, 'README.md'), '# readme\n')
    tools = await openFileTools(dir)
  })
  afterEach(async function () {
    await tools.close()
    fs.rmSync(dir, { recursive: true, force: true })
    fs.rmSync(outside, { recursive: true, force: true })
  })

  function plantLink (ctx, target, at) {
    try { fs.symlinkSync(target, at) } catch {}
    let linked = false
    try { linked = fs.lstatSync(at).isSymbolicLink() } catch {}
    if (!linked) ctx.skip() // a platform that made no symlink (wine 8)
  }

  it('read gives a slice with the size, and says when it is partial', async function () {
    const whole = await tools.read('src/a.js')
    assert.equal(whole.text, 'let x = 1\n')
    assert.equal(whole.truncated, false)
    const part = await tools.read('src/a.js', { offset: 4, length: 1 })
    assert.deepEqual([part.text, part.size, part.truncated], ['x', 10, true])
    await assert.rejects(tools.read('missing.js'), (e) => e instanceof ToolError && e.code === 'NOT_FOUND')
  })

  it('edit replaces one exact occurrence', async function () {
    await tools.edit('src/a.js', 'x = 1', 'x = 42')
    assert.equal(fs.readFileSync(path.join(dir, 'src', 'a.js'), 'utf8'), 'let x = 42\n')
    await assert.rejects(tools.edit('src/a.js', 'nope', 'x'), (e) => e.code === 'NO_UNIQUE_MATCH')
  })

  it('edit never loses a change another writer made after its read (CONFLICT)', async function () {
    const file = path.join(dir, 'src', 'a.js')
    // The edit's read happens, then another process rewrites the file, then the edit writes.
    const { openWriteAuthority } = require('@scope/agent-os/file-authority')
    const w = await openWriteAuthority(dir)
    const realWrite = w.constructor.prototype.writeText
    const original = Object.getOwnPropertyDescriptor(w.constructor.prototype, 'writeText')
    Object.defineProperty(w.constructor.prototype, 'writeText', {
      ...original,
      value: function (...args) {
        fs.writeFileSync(file + '.tmp', 'let x = 7 // theirs\n')
        fs.renameSync(file + '.tmp', file)
        return realWrite.apply(this, args)
      }
    })
    try {
      await assert.rejects(tools.edit('src/a.js', 'x = 1', 'x = 2'), (e) => e instanceof ToolError && e.code === 'CONFLICT')
    } finally {
      Object.defineProperty(w.constructor.prototype, 'writeText', original)
      await w.close()
    }
    assert.equal(fs.readFileSync(file, 'utf8'), 'let x = 7 // theirs\n')
    await tools.edit('src/a.js', '7', '8')
    assert.equal(fs.readFileSync(file, 'utf8'), 'let x = 8 // theirs\n')
  })

  it('create never overwrites', async function () {
    await tools.create('new/dir/c.txt', 'c')
    assert.equal(fs.readFileSync(path.join(dir, 'new', 'dir', 'c.txt'), 'utf8'), 'c')
    await assert.rejects(tools.create('README.md', 'x'), (e) => e.code === 'EXISTS')
    assert.equal(fs.readFileSync(path.join(dir, 'README.md'), 'utf8'), '# readme\n')
  })

  it('glob matches ** and *, never through a link to outside', async function () {
    plantLink(this, outside, path.join(dir, 'src', 'escape'))
    const all = await tools.glob('**/*.js')
    assert.deepEqual(all.paths, ['src/a.js', 'src/lib/b.js'])
    assert.deepEqual((await tools.glob('*.md')).paths, ['README.md'])
    assert.deepEqual((await tools.glob('**/*.txt')).paths, [])
    assert.deepEqual((await tools.glob('**', { limit: 1 })).truncated, true)
  })

  it('delete removes a link, never what it points to', async function () {
    plantLink(this, path.join(outside, 'secret.txt'), path.join(dir, 'link.txt'))
    assert.equal(await tools.delete('link.txt'), true)
    assert.equal(await tools.delete('link.txt'), false)
    assert.equal(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'SECRET')
    await assert.rejects(tools.read('../' + path.basename(outside) + '/secret.txt'), (e) => e.code === 'INVALID_PATH')
  })

  it('move refuses to overwrite unless asked, and stays inside the workspace', async function () {
    await assert.rejects(tools.move('src/a.js', 'README.md'), (e) => e.code === 'EXISTS')
    await tools.move('src/a.js', 'README.md', { overwrite: true })
    assert.equal(fs.readFileSync(path.join(dir, 'README.md'), 'utf8'), 'let x = 1\n')
    await tools.move('src/lib', 'lib')
    assert.deepEqual(fs.readdirSync(path.join(dir, 'lib')), ['b.js'])
    plantLink(this, outside, path.join(dir, 'out'))
    await assert.rejects(tools.move('lib/b.js', 'out/b.js'), (e) => e.code === 'UNSAFE_ENTRY')
    assert.deepEqual(fs.readdirSync(outside), ['secret.txt'])
  })
})
