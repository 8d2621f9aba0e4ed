'use strict'
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { openFileTools, ToolError, wholeCharacters } = require('../agent-file-tools.js')

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

  it('paths: relative, or absolute inside the workspace; never outside it or in a sibling, untrimmed', async function () {
    assert.equal((await tools.read(path.join(dir, 'src', 'a.js'))).text, 'let x = 1\n')
    assert.equal((await tools.read('./src//a.js')).text, 'let x = 1\n')
    const elsewhere = path.join(path.parse(dir).root, 'etc', 'passwd')
    for (const bad of [elsewhere, `${dir}_evil/x`, `${dir} /src/a.js`, `${dir}'/src/a.js`, 'src/../../x', '../x']) {
      await assert.rejects(tools.read(bad), (e) => e.code === 'INVALID_PATH', bad)
    }
    // A name with quotes (and, but on Windows, a trailing space) inside the workspace is
    // simply a name.
    const name = process.platform === 'win32' ? "it's a file" : "it's a file "
    await tools.create(name, 'q')
    assert.equal(fs.readFileSync(path.join(dir, name), 'utf8'), 'q')
  })

  it('read cuts a slice at character boundaries; a file that is not text is BINARY', async function () {
    fs.writeFileSync(path.join(dir, 'u.txt'), 'h\u00e9llo \u{1F600}!') // h, é (2 bytes), llo, space, 😀 (4 bytes), !
    const a = await tools.read('u.txt', { length: 2 }) // ends inside é
    assert.deepEqual([a.text, a.start, a.end, a.truncated], ['h', 0, 1, true])
    const b = await tools.read('u.txt', { offset: 2, length: 8 }) // starts inside é, ends inside 😀
    assert.deepEqual([b.text, b.start, b.end], ['llo ', 3, 7])
    const c = await tools.read('u.txt', { offset: b.end })
    assert.deepEqual([c.text, c.end, c.truncated], ['\u{1F600}!', 12, false])
    assert.equal(wholeCharacters(Buffer.from('ab\u{1F600}').subarray(0, 5)), 2)
    fs.writeFileSync(path.join(dir, 'bin'), Buffer.from([0xff, 0xfe, 0x00]))
    await assert.rejects(tools.read('bin'), (e) => e.code === 'BINARY')
    await assert.rejects(tools.readText('bin'), (e) => e.code === 'BINARY')
  })

  it('readText: the whole text, its head or its tail', async function () {
    fs.writeFileSync(path.join(dir, 'lines.txt'), 'one\ntwo\nthree\n')
    assert.equal(await tools.readText('lines.txt'), 'one\ntwo\nthree\n')
    assert.equal(await tools.readText('lines.txt', { head: 2 }), 'one\ntwo\n')
    assert.equal(await tools.readText('lines.txt', { tail: 1 }), 'three\n')
    await assert.rejects(tools.readText('nope'), (e) => e.code === 'NOT_FOUND')
  })

  it('list gives sizes in one call; info never follows a link', async function () {
    assert.deepEqual(await tools.list('src'), [{ name: 'a.js', kind: 'file', size: 10 }, { name: 'lib', kind: 'directory', size: fs.statSync(path.join(dir, 'src', 'lib')).size }])
    plantLink(this, path.join(outside, 'secret.txt'), path.join(dir, 'src', 'link'))
    const entry = (await tools.list('src')).find((e) => e.name === 'link')
    assert.deepEqual([entry.kind, entry.size], ['symlink', Buffer.byteLength(path.join(outside, 'secret.txt'))])
    assert.equal((await tools.info('src/link')).kind, 'symlink')
  })

  it('every call is one whole line of the session log, also from two processes at once', async function () {
    await tools.read('src/a.js')
    await assert.rejects(tools.read('missing.js'))
    const own = await tools.history()
    assert.deepEqual(own.map((e) => [e.tool, e.path, e.outcome]), [['read', 'src/a.js', 'ok'], ['read', 'missing.js', 'NOT_FOUND']])
    const script = `
      const { openFileTools } = require(${JSON.stringify(path.join(__dirname, '..', 'agent-file-tools.js'))})
      openFileTools(process.argv[1]).then(async (t) => {
        for (let i = 0; i < 200; i++) await t.info('src/a.js')
        await t.close()
      })`
    const run = () => new Promise((resolve) => spawn(process.execPath, ['-e', script, dir], { stdio: 'inherit' }).on('exit', resolve))
    assert.deepEqual(await Promise.all([run(), run()]), [0, 0])
    const lines = fs.readFileSync(path.join(dir, '.agent', 'session.jsonl'), 'utf8').split('\n')
    assert.equal(lines.pop(), '')
    assert.equal(lines.length, 402)
    for (const l of lines) JSON.parse(l)
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

  it('glob matches ** and *, never through a link to outside; node_modules and .git are not entered', async function () {
    for (const skipped of ['node_modules', path.join('src', 'node_modules'), '.git']) {
      fs.mkdirSync(path.join(dir, skipped, 'pkg'), { recursive: true })
      for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(dir, skipped, 'pkg', `f${i}.js`), '')
    }
    const small = await tools.glob('**/*.js', { maxEntries: 6 }) // README.md, src, src/a.js, src/lib, src/lib/b.js
    assert.deepEqual([small.paths, small.truncated], [['src/a.js', 'src/lib/b.js'], false])
    assert.equal((await tools.glob('**/*.js', { exclude: [] })).paths.length, 152)
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
    await assert.rejects(tools.read(path.join(outside, 'secret.txt')), (e) => e.code === 'INVALID_PATH')
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
