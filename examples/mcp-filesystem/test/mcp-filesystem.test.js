'use strict'
// examples/mcp-filesystem on ordinary files, driven by the MCP SDK's client over stdio:
// the tool list and schemas are upstream's, every tool gives upstream's result on the
// same files (run side by side on two copies of one tree), the roots protocol replaces
// the command line's directories, and the command line behaves as upstream's.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { pathToFileURL } = require('node:url')
const { startServer, SERVERS } = require('./harness.js')

/** The same small tree in `dir`. */
function plantTree (dir) {
  fs.mkdirSync(path.join(dir, 'src', 'lib'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'node_modules', 'pkg'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'docs'))
  fs.writeFileSync(path.join(dir, 'a.txt'), 'one\ntwo\nthree\nfour\nfive\n')
  fs.writeFileSync(path.join(dir, 'crlf.txt'), 'one\r\ntwo\r\nthree\r\n')
  fs.writeFileSync(path.join(dir, 'no-newline.txt'), 'alpha\nbeta\ngamma')
  fs.writeFileSync(path.join(dir, 'empty.txt'), '')
  fs.writeFileSync(path.join(dir, 'utf8.txt'), '\ufeffé🙂 line\nzweite Zeile ü\n')
  fs.writeFileSync(path.join(dir, 'README.md'), '# readme\n')
  fs.writeFileSync(path.join(dir, 'src', 'app.js'), 'function main () {\n    const x = 1\n    return x\n}\n')
  fs.writeFileSync(path.join(dir, 'src', 'lib', 'util.js'), 'module.exports = 1\n')
  fs.writeFileSync(path.join(dir, 'src', 'debug.log'), 'log\n')
  fs.writeFileSync(path.join(dir, 'node_modules', 'pkg', 'index.js'), '\n')
  fs.writeFileSync(path.join(dir, 'docs', 'guide.md'), '# guide\n'.repeat(40))
  fs.writeFileSync(path.join(dir, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]))
  fs.writeFileSync(path.join(dir, 'sound.wav'), Buffer.from('RIFF....WAVE'))
  fs.writeFileSync(path.join(dir, 'data.bin'), Buffer.from([0, 1, 2, 3]))
}

/** A result's text with the tree's location as <ROOT>, so two copies compare equal. */
function portable (res, root) {
  return res.text.split(root).join('<ROOT>')
}

function sortedLines (text) {
  return text.split('\n').sort().join('\n')
}

function sortTree (nodes) {
  for (const n of nodes) if (n.children) sortTree(n.children)
  return nodes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

describe('examples/mcp-filesystem: tools on ordinary files, beside upstream', function () {
  this.timeout(60000)
  let base, ours, theirs, rootOurs, rootTheirs

  before(async function () {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-fs-tools-')))
    rootOurs = path.join(base, 'ours')
    rootTheirs = path.join(base, 'theirs')
    for (const r of [rootOurs, rootTheirs]) plantTree(r)
    ;[ours, theirs] = await Promise.all([startServer('agent-os', [rootOurs]), startServer('upstream', [rootTheirs])])
  })
  after(async function () {
    await Promise.all([ours && ours.close(), theirs && theirs.close()])
    fs.rmSync(base, { recursive: true, force: true })
  })

  /** Calls `tool` on both servers with `args(root)`; returns both results, made portable. */
  async function both (tool, args) {
    const [a, b] = await Promise.all([ours.call(tool, args(rootOurs)), theirs.call(tool, args(rootTheirs))])
    return { ours: { ...a, text: portable(a, rootOurs) }, theirs: { ...b, text: portable(b, rootTheirs) } }
  }

  async function same (tool, args, compare = (t) => t) {
    const r = await both(tool, args)
    assert.equal(r.ours.isError, false, `${tool}: ${r.ours.text}`)
    assert.equal(r.theirs.isError, false, `upstream ${tool}: ${r.theirs.text}`)
    assert.deepEqual(compare(r.ours.text), compare(r.theirs.text), tool)
    return r.ours
  }

  it('offers upstream\'s tools with the same input and output schemas and annotations', async function () {
    const [a, b] = await Promise.all([ours.client.listTools(), theirs.client.listTools()])
    const shape = (t) => ({ name: t.name, title: t.title, inputSchema: t.inputSchema, outputSchema: t.outputSchema, annotations: t.annotations })
    assert.deepEqual(a.tools.map(shape), b.tools.map(shape))
    assert.equal(a.tools.length, 14)
    assert.equal(ours.client.getServerVersion().name, theirs.client.getServerVersion().name)
  })

  it('read_text_file and read_file: whole files, head and tail as upstream gives them', async function () {
    for (const tool of ['read_text_file', 'read_file']) {
      for (const file of ['a.txt', 'crlf.txt', 'no-newline.txt', 'empty.txt', 'utf8.txt', 'src/app.js']) {
        const p = (r) => path.join(r, file)
        await same(tool, (r) => ({ path: p(r) }))
        for (const n of [1, 2, 3, 100]) {
          await same(tool, (r) => ({ path: p(r), head: n }))
          await same(tool, (r) => ({ path: p(r), tail: n }))
        }
      }
    }
    // A relative path is taken in the first allowed directory.
    await same('read_text_file', () => ({ path: 'src/lib/util.js' }))
    const r = await ours.call('read_text_file', { path: path.join(rootOurs, 'a.txt'), head: 1, tail: 1 })
    assert.equal(r.isError, true)
    assert.match(r.text, /Cannot specify both head and tail/)
  })

  it('head and tail read only the part of a long file they need', async function () {
    const long = path.join(rootOurs, 'long.txt')
    const lines = Array.from({ length: 200000 }, (_, i) => `line ${i}`)
    fs.writeFileSync(long, lines.join('\n') + '\n')
    try {
      const head = await ours.call('read_text_file', { path: long, head: 3 })
      assert.equal(head.text, 'line 0\nline 1\nline 2')
      const tail = await ours.call('read_text_file', { path: long, tail: 3 })
      assert.equal(tail.text, 'line 199998\nline 199999\n')
      // With a read limit far below the file's size, head and tail still answer.
      const small = await startServer('agent-os', [rootOurs], { env: { MCP_FILESYSTEM_MAX_BYTES: '65536' } })
      try {
        assert.equal((await small.call('read_text_file', { path: long, tail: 2 })).text, 'line 199999\n')
        assert.equal((await small.call('read_text_file', { path: long, head: 2 })).text, 'line 0\nline 1')
        const whole = await small.call('read_text_file', { path: long })
        assert.equal(whole.isError, true)
        assert.match(whole.text, /^File too large - path has more than 65536 bytes/)
        const far = await small.call('read_text_file', { path: long, head: 100000 })
        assert.equal(far.isError, true)
        assert.match(far.text, /^Lines too long/)
      } finally {
        await small.close()
      }
    } finally {
      fs.rmSync(long)
    }
  })

  it('read_media_file and read_multiple_files', async function () {
    for (const file of ['image.png', 'sound.wav', 'data.bin']) {
      const r = await both('read_media_file', (root) => ({ path: path.join(root, file) }))
      assert.equal(r.ours.isError, false, r.ours.text)
      const strip = (res, root) => JSON.parse(JSON.stringify(res.result.content).split(root).join('<ROOT>'))
      assert.deepEqual(strip(r.ours, rootOurs), strip(r.theirs, rootTheirs))
      assert.deepEqual(r.ours.result.structuredContent, { content: r.ours.result.content })
    }
    await same('read_multiple_files', (r) => ({ paths: [path.join(r, 'a.txt'), path.join(r, 'README.md'), 'docs/guide.md'] }))
    const mixed = await ours.call('read_multiple_files', { paths: [path.join(rootOurs, 'a.txt'), path.join(rootOurs, 'missing.txt')] })
    assert.equal(mixed.isError, false)
    assert.match(mixed.text, /a\.txt:\none\n/)
    assert.match(mixed.text, /missing\.txt: Error - ENOENT/)
  })

  it('write_file creates and replaces, keeping the permission bits', async function () {
    await same('write_file', (r) => ({ path: path.join(r, 'new.txt'), content: 'fresh\n' }))
    fs.chmodSync(path.join(rootOurs, 'new.txt'), 0o640)
    await same('write_file', (r) => ({ path: path.join(r, 'new.txt'), content: 'replaced\n' }))
    assert.equal(fs.readFileSync(path.join(rootOurs, 'new.txt'), 'utf8'), 'replaced\n')
    assert.equal(fs.statSync(path.join(rootOurs, 'new.txt')).mode & 0o777, 0o640)
    const r = await ours.call('write_file', { path: path.join(rootOurs, 'nowhere', 'x.txt'), content: 'x' })
    assert.equal(r.isError, true)
    assert.match(r.text, /Parent directory does not exist/)
  })

  it('edit_file: exact and indentation-blind edits, dry run, the same diff as upstream', async function () {
    const edit = (edits, dryRun) => (r) => ({ path: path.join(r, 'src', 'app.js'), edits, dryRun })
    await same('edit_file', edit([{ oldText: 'const x = 1', newText: 'const x = 2' }], true))
    assert.equal(fs.readFileSync(path.join(rootOurs, 'src', 'app.js'), 'utf8'), 'function main () {\n    const x = 1\n    return x\n}\n')
    await same('edit_file', edit([{ oldText: 'const x = 1', newText: 'const x = 2' }, { oldText: 'return x\n  }', newText: 'return x + 1\n}' }], false))
    await same('edit_file', edit([{ oldText: 'const x = 2\nreturn x + 1', newText: 'const y = 3\n  return y' }], false))
    assert.equal(fs.readFileSync(path.join(rootOurs, 'src', 'app.js'), 'utf8'), fs.readFileSync(path.join(rootTheirs, 'src', 'app.js'), 'utf8'))
    // CRLF files come back with LF, as upstream writes them.
    await same('edit_file', (r) => ({ path: path.join(r, 'crlf.txt'), edits: [{ oldText: 'two', newText: '2' }] }))
    assert.equal(fs.readFileSync(path.join(rootOurs, 'crlf.txt'), 'utf8'), 'one\n2\nthree\n')
    const r = await ours.call('edit_file', { path: path.join(rootOurs, 'a.txt'), edits: [{ oldText: 'absent', newText: 'x' }] })
    assert.equal(r.isError, true)
    assert.match(r.text, /Could not find exact match for edit:\nabsent/)
  })

  it('create_directory and move_file', async function () {
    await same('create_directory', (r) => ({ path: path.join(r, 'x', 'y', 'z') }))
    await same('create_directory', (r) => ({ path: path.join(r, 'x', 'y') }))
    assert.ok(fs.statSync(path.join(rootOurs, 'x', 'y', 'z')).isDirectory())
    await same('move_file', (r) => ({ source: path.join(r, 'README.md'), destination: path.join(r, 'x', 'README.md') }))
    assert.ok(fs.existsSync(path.join(rootOurs, 'x', 'README.md')))
    await same('move_file', (r) => ({ source: path.join(r, 'x', 'y'), destination: path.join(r, 'y') }))
    const both_ = await both('move_file', (r) => ({ source: path.join(r, 'a.txt'), destination: path.join(r, 'docs', 'guide.md') }))
    assert.equal(both_.ours.isError, true)
    assert.equal(both_.theirs.isError, true)
    assert.match(both_.ours.text, /Destination already exists/)
    assert.equal(fs.readFileSync(path.join(rootOurs, 'a.txt'), 'utf8'), 'one\ntwo\nthree\nfour\nfive\n')
  })

  it('list_directory, list_directory_with_sizes, directory_tree, search_files', async function () {
    await same('list_directory', (r) => ({ path: r }), sortedLines)
    await same('list_directory', (r) => ({ path: path.join(r, 'src') }), sortedLines)
    await same('list_directory_with_sizes', (r) => ({ path: r }))
    await same('list_directory_with_sizes', (r) => ({ path: path.join(r, 'src'), sortBy: 'name' }))
    const bySize = await same('list_directory_with_sizes', (r) => ({ path: r, sortBy: 'size' }), sortedLines)
    const sizes = bySize.text.split('\n').filter((l) => l.startsWith('[FILE]')).map((l) => l.slice(38).trim())
    assert.ok(sizes.length > 5)
    const tree = (t) => sortTree(JSON.parse(t))
    await same('directory_tree', (r) => ({ path: r }), tree)
    for (const excludePatterns of [['node_modules'], ['*.log', 'lib'], ['src/lib'], ['**/*.md', 'node_modules/**'], ['?ocs'], ['x'.repeat(300), 'a\u0000b']]) {
      await same('directory_tree', (r) => ({ path: r, excludePatterns }), tree)
    }
    for (const [pattern, excludePatterns] of [['**/*.js', []], ['*.md', []], ['**/*', ['node_modules']], ['**/*.js', ['**/node_modules']],
      ['**/*', ['src/**']], ['src/*', []], ['**/lib', []], ['nothing-matches', []]]) {
      await same('search_files', (r) => ({ path: r, pattern, excludePatterns }), sortedLines)
    }
    await same('search_files', (r) => ({ path: path.join(r, 'src'), pattern: '**/*.js' }), sortedLines)
  })

  it('directory_tree and search_files refuse a walk past MCP_FILESYSTEM_MAX_ENTRIES, and a plain exclude keeps it under', async function () {
    const dir = path.join(base, 'limits')
    for (const sub of ['node_modules', 'src']) {
      fs.mkdirSync(path.join(dir, sub), { recursive: true })
      for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(dir, sub, `f${i}.js`), '')
    }
    for (const f of ['a.md', 'b.md', 'c.txt']) fs.writeFileSync(path.join(dir, f), '')
    const small = await startServer('agent-os', [dir], { env: { MCP_FILESYSTEM_MAX_ENTRIES: '10' } })
    try {
      for (const [tool, args] of [['directory_tree', { path: dir }], ['search_files', { path: dir, pattern: '**/*.js' }]]) {
        const res = await small.call(tool, args)
        assert.equal(res.isError, true, tool)
        assert.match(res.text, /^Too many entries - path holds more than 10 entries \(MCP_FILESYSTEM_MAX_ENTRIES\)/)
      }
      // Left out by the walk itself, node_modules and src do not count.
      const tree = await small.call('directory_tree', { path: dir, excludePatterns: ['node_modules', 'src'] })
      assert.deepEqual(JSON.parse(tree.text).map((n) => n.name), ['a.md', 'b.md', 'c.txt'])
      const found = await small.call('search_files', { path: dir, pattern: '**/*.md', excludePatterns: ['**/node_modules', '**/src'] })
      assert.equal(found.text, [path.join(dir, 'a.md'), path.join(dir, 'b.md')].join('\n'))
    } finally {
      await small.close()
    }
  })

  it('get_file_info and list_allowed_directories', async function () {
    const r = await both('get_file_info', (root) => ({ path: path.join(root, 'a.txt') }))
    const fields = (t) => Object.fromEntries(t.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]))
    const a = fields(r.ours.text)
    const b = fields(r.theirs.text)
    for (const key of ['size', 'isDirectory', 'isFile', 'permissions']) assert.equal(a[key], b[key], key)
    assert.equal(a.modified, fs.statSync(path.join(rootOurs, 'a.txt')).mtime.toString())
    assert.equal(a.isSymbolicLink, 'false')
    const dir = fields((await ours.call('get_file_info', { path: path.join(rootOurs, 'src') })).text)
    assert.equal(dir.isDirectory, 'true')
    await same('list_allowed_directories', (root) => ({}))
  })

  it('refuses a path beneath no allowed directory, and a missing file, with an error text', async function () {
    for (const [tool, args] of [['read_text_file', { path: '/etc/hostname' }], ['list_directory', { path: base }],
      ['write_file', { path: path.join(base, 'x.txt'), content: 'x' }], ['read_text_file', { path: path.join(rootOurs, 'missing.txt') }],
      ['list_directory', { path: path.join(rootOurs, 'missing') }], ['get_file_info', { path: path.join(rootOurs, 'missing') }]]) {
      const r = await ours.call(tool, args)
      assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)}`)
      assert.match(r.text, /^(Access denied - path outside allowed directories|ENOENT: no such file or directory \(path\))/)
    }
    assert.equal(fs.existsSync(path.join(base, 'x.txt')), false)
  })
})

describe('examples/mcp-filesystem: roots and the command line', function () {
  this.timeout(60000)
  let base
  beforeEach(function () {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-fs-roots-')))
    for (const d of ['a', 'b', 'c']) {
      fs.mkdirSync(path.join(base, d))
      fs.writeFileSync(path.join(base, d, `${d}.txt`), d)
    }
  })
  afterEach(function () {
    fs.rmSync(base, { recursive: true, force: true })
  })

  async function allowedOf (server) {
    return (await server.call('list_allowed_directories')).text.split('\n').slice(1)
  }

  async function waitFor (fn, what) {
    for (let i = 0; i < 200; i++) {
      if (await fn()) return
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error(`timed out waiting for ${what}`)
  }

  it('the client\'s roots replace the command line\'s directories, and a roots change replaces them again', async function () {
    const dir = (d) => path.join(base, d)
    const server = await startServer('agent-os', [dir('a')], { roots: [{ uri: pathToFileURL(dir('b')).href, name: 'b' }] })
    try {
      await waitFor(async () => (await allowedOf(server)).join() === dir('b'), 'roots b')
      assert.equal((await server.call('read_text_file', { path: path.join(dir('b'), 'b.txt') })).text, 'b')
      assert.equal((await server.call('read_text_file', { path: path.join(dir('a'), 'a.txt') })).isError, true)
      await server.setRoots([{ uri: pathToFileURL(dir('c')).href }, { uri: pathToFileURL(dir('a')).href }])
      await waitFor(async () => (await allowedOf(server)).join() === [dir('c'), dir('a')].join(), 'roots c, a')
      assert.equal((await server.call('read_text_file', { path: 'c.txt' })).text, 'c')
      assert.equal((await server.call('read_text_file', { path: path.join(dir('a'), 'a.txt') })).text, 'a')
      assert.equal((await server.call('read_text_file', { path: path.join(dir('b'), 'b.txt') })).isError, true)
      // Roots of which none is usable leave the directories as they were.
      await server.setRoots([{ uri: pathToFileURL(path.join(base, 'missing')).href }, { uri: pathToFileURL(path.join(dir('a'), 'a.txt')).href }])
      await waitFor(async () => server.stderr.includes('No valid root directories provided by client'), 'the refusal')
      assert.deepEqual(await allowedOf(server), [dir('c'), dir('a')])
    } finally {
      await server.close()
    }
  })

  it('without the roots capability, the command line\'s directories stay; both spellings of a linked directory are listed', async function () {
    try { fs.symlinkSync(path.join(base, 'a'), path.join(base, 'alias')) } catch { this.skip() } // no symlinks (Windows without the privilege)
    const server = await startServer('agent-os', [path.join(base, 'alias'), path.join(base, 'b')])
    try {
      assert.deepEqual(await allowedOf(server), [path.join(base, 'alias'), path.join(base, 'a'), path.join(base, 'b')])
      assert.equal((await server.call('read_text_file', { path: path.join(base, 'alias', 'a.txt') })).text, 'a')
      assert.equal((await server.call('read_text_file', { path: path.join(base, 'a', 'a.txt') })).text, 'a')
      const moved = await server.call('move_file', { source: path.join(base, 'a', 'a.txt'), destination: path.join(base, 'b', 'a.txt') })
      assert.equal(moved.isError, true)
      assert.match(moved.text, /^Cross-directory move refused/)
    } finally {
      await server.close()
    }
  })

  it('node examples/mcp-filesystem exits 1 when no directory given can be opened, as upstream', function () {
    for (const kind of ['agent-os', 'upstream']) {
      const r = spawnSync(process.execPath, [SERVERS[kind], path.join(base, 'missing'), path.join(base, 'a', 'a.txt')], { input: '', encoding: 'utf8', timeout: 20000 })
      assert.equal(r.status, 1, `${kind}: ${r.stderr}`)
      assert.match(r.stderr, /None of the specified directories are accessible/)
    }
  })

  it('serves a client started with no directory once the client gives roots', async function () {
    const server = await startServer('agent-os', [], { roots: [{ uri: pathToFileURL(path.join(base, 'c')).href }] })
    try {
      await waitFor(async () => (await allowedOf(server)).join() === path.join(base, 'c'), 'roots c')
      assert.equal((await server.call('read_text_file', { path: 'c.txt' })).text, 'c')
    } finally {
      await server.close()
    }
  })
})
