'use strict'
// Real-filesystem fixtures for the file-authority tests: temporary roots, the resolver
// switch, special files (FIFO, socket, device node, non-UTF-8 names), descriptor
// counts, and the table of hostile layouts every operation is run against.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const net = require('node:net')
const { spawnSync } = require('node:child_process')
const binding = require('../../lib/binding.js')
const { windows, makeSymlink, REASONS } = require('./platform.js')

/** A fresh directory holding `root/` and `outside/` (outside/secret = 'OUTSIDE'). */
function makeSandbox (prefix = 'aos-fa-') {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  fs.mkdirSync(root)
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, 'secret'), 'OUTSIDE')
  return {
    base,
    root,
    outside,
    // Windows: a file a just-killed child had open may stay busy for a moment.
    cleanup () { fs.rmSync(base, { recursive: true, force: true, maxRetries: windows ? 20 : 0, retryDelay: 100 }) }
  }
}

/** Resolvers to run every table against; openat2 only where the kernel has it. */
function resolvers () {
  const part = binding.part('fileAuthority')
  const previous = part.resolver()
  const out = ['portable']
  if (part.resolver('openat2') === 'openat2') out.unshift('openat2')
  part.resolver(previous)
  return out
}

/** Makes authorities opened from now on (in this thread) use `mode`; returns the mode
 * actually in effect. Test hook, not public API. */
function useResolver (mode) {
  return binding.part('fileAuthority').resolver(mode)
}

/** A symlink for a layout's set-up; where the host makes none (wine), the sandbox
 * records why, and the layout's tests skip naming it. */
function symlink (s, target, at) {
  if (!makeSymlink(target, at)) s.skip = REASONS.noSymlink
}

function mkfifo (p) {
  const r = spawnSync('mkfifo', [p])
  if (r.status !== 0) throw new Error('mkfifo failed')
}

/** A character device node (like /dev/null: 1,3); needs root. Returns false when it
 * cannot be made here. */
function mknodNull (p) {
  const r = spawnSync('mknod', [p, 'c', '1', '3'])
  return r.status === 0
}

/** A listening Unix socket at `p`; resolves to the server (close it when done). */
function listenSocket (p) {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(p, () => resolve(server))
  })
}

/** Creates a file whose name is the raw bytes `nameBytes` (need not be UTF-8). */
function writeRawName (dir, nameBytes, content) {
  const p = Buffer.concat([Buffer.from(dir + '/'), Buffer.from(nameBytes)])
  fs.writeFileSync(p, content)
}

/** Open descriptors of this process that name filesystem objects (Linux). Pipes,
 * sockets and anonymous inodes are left out: they belong to the runtime and to child
 * processes of other tests, and close on their own schedule. */
function fdCount () {
  let n = 0
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let target
    try {
      target = fs.readlinkSync(`/proc/self/fd/${fd}`)
    } catch {
      continue // the descriptor readdir itself used
    }
    if (target.startsWith('/')) n++
  }
  return n
}

/** Files in `dir` that look like this package's temporary files. */
function tempFiles (dir) {
  return fs.readdirSync(dir).filter((n) => /^\.aos-[0-9a-f]{32}\.tmp$/.test(n))
}

/** Every file below `dir` (relative paths), links not followed. */
function walkTree (dir, prefix = '') {
  const out = []
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix + ent.name
    out.push(rel)
    if (ent.isDirectory()) out.push(...walkTree(path.join(dir, ent.name), rel + '/'))
  }
  return out.sort()
}

// ---------------------------------------------------------------- hostile layouts
//
// Each layout builds itself in a sandbox (async: a socket needs a listening server)
// and names, per operation, the segments to use and the outcome required:
//   { code, segmentIndex }  a FileAuthorityError with that code and index
//   { value: fn }           a result checked by fn(result, sandbox)
// After every write the outside directory must still hold only 'secret' = 'OUTSIDE'.

const LAYOUTS = [
  {
    name: 'symlink to a directory outside',
    setup (s) { symlink(s, s.outside, path.join(s.root, 'link')) },
    read: { segments: ['link', 'secret'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['link'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['link', 'planted'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['link', 'new', 'planted'], code: 'UNSAFE_ENTRY', segmentIndex: 0 }
  },
  {
    name: 'relative symlink to ..',
    setup (s) { symlink(s, '..', path.join(s.root, 'up')) },
    read: { segments: ['up', 'outside', 'secret'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['up'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['up', 'outside', 'planted'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['up', 'outside', 'planted'], code: 'UNSAFE_ENTRY', segmentIndex: 0 }
  },
  {
    name: 'absolute symlink to /',
    setup (s) { symlink(s, '/', path.join(s.root, 'abs')) },
    read: { segments: ['abs', 'etc', 'hostname'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['abs'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['abs', 'tmp', 'planted'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['abs', 'tmp', 'planted'], code: 'UNSAFE_ENTRY', segmentIndex: 0 }
  },
  {
    name: 'chain of symlinks ending outside',
    setup (s) {
      fs.mkdirSync(path.join(s.root, 'a'))
      symlink(s, 'c2', path.join(s.root, 'a', 'c1'))
      symlink(s, s.outside, path.join(s.root, 'a', 'c2'))
    },
    read: { segments: ['a', 'c1', 'secret'], code: 'UNSAFE_ENTRY', segmentIndex: 1 },
    list: { segments: ['a', 'c1'], code: 'UNSAFE_ENTRY', segmentIndex: 1 },
    write: { segments: ['a', 'c1', 'planted'], code: 'UNSAFE_ENTRY', segmentIndex: 1 },
    writeCreate: { segments: ['a', 'c1', 'x', 'planted'], code: 'UNSAFE_ENTRY', segmentIndex: 1 }
  },
  {
    name: 'dangling symlink as the final entry',
    setup (s) { symlink(s, path.join(s.outside, 'made'), path.join(s.root, 'dang')) },
    read: { segments: ['dang'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['dang'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['dang'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['dang'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    after (s, assert) { assert.ok(fs.lstatSync(path.join(s.root, 'dang')).isSymbolicLink()) }
  },
  {
    name: 'symlink to a file outside as the final entry',
    setup (s) { symlink(s, path.join(s.outside, 'secret'), path.join(s.root, 'f')) },
    read: { segments: ['f'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['f'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['f'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['f'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    after (s, assert) { assert.ok(fs.lstatSync(path.join(s.root, 'f')).isSymbolicLink()) }
  },
  {
    name: 'symlink to a file inside',
    setup (s) {
      fs.writeFileSync(path.join(s.root, 'ok.txt'), 'inside')
      symlink(s, 'ok.txt', path.join(s.root, 'lnk'))
    },
    read: { segments: ['lnk'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['lnk'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['lnk'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['lnk'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    after (s, assert) { assert.strictEqual(fs.readFileSync(path.join(s.root, 'ok.txt'), 'utf8'), 'inside') }
  },
  {
    name: 'symlinked parent deep in the path (to a directory inside)',
    setup (s) {
      fs.mkdirSync(path.join(s.root, 'a', 'b'), { recursive: true })
      fs.writeFileSync(path.join(s.root, 'a', 'b', 'x'), 'x')
      symlink(s, 'b', path.join(s.root, 'a', 'l'))
    },
    read: { segments: ['a', 'l', 'x'], code: 'UNSAFE_ENTRY', segmentIndex: 1 },
    list: { segments: ['a', 'l'], code: 'UNSAFE_ENTRY', segmentIndex: 1 },
    write: { segments: ['a', 'l', 'x'], code: 'UNSAFE_ENTRY', segmentIndex: 1 },
    writeCreate: { segments: ['a', 'l', 'y', 'x'], code: 'UNSAFE_ENTRY', segmentIndex: 1 },
    after (s, assert) { assert.strictEqual(fs.readFileSync(path.join(s.root, 'a', 'b', 'x'), 'utf8'), 'x') }
  },
  {
    name: 'regular file as a parent',
    setup (s) { fs.writeFileSync(path.join(s.root, 'file.txt'), 'f') },
    read: { segments: ['file.txt', 'x'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['file.txt'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['file.txt', 'x'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['file.txt', 'y', 'x'], code: 'UNSAFE_ENTRY', segmentIndex: 0 }
  },
  {
    name: 'directory as the final entry',
    setup (s) { fs.mkdirSync(path.join(s.root, 'dir')); fs.writeFileSync(path.join(s.root, 'dir', 'k'), 'k') },
    read: { segments: ['dir'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['dir'], value: (l) => l.length === 1 && l[0].name === 'k' },
    write: { segments: ['dir'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['dir'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    after (s, assert) { assert.deepStrictEqual(fs.readdirSync(path.join(s.root, 'dir')), ['k']) }
  },
  {
    name: 'FIFO with no writer',
    setup (s) {
      if (windows) return REASONS.noFifo
      mkfifo(path.join(s.root, 'fifo'))
    },
    read: { segments: ['fifo'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['fifo'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['fifo'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['fifo', 'x'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    after (s, assert) { assert.ok(fs.lstatSync(path.join(s.root, 'fifo')).isFIFO()) }
  },
  {
    name: 'Unix socket',
    async setup (s) {
      if (windows) return REASONS.unixSocket // Node's net.listen(path) is a named pipe there
      s.server = await listenSocket(path.join(s.root, 'sock'))
    },
    read: { segments: ['sock'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['sock'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['sock'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['sock', 'x'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    after (s, assert) { assert.ok(fs.lstatSync(path.join(s.root, 'sock')).isSocket()) },
    teardown (s) { return new Promise((resolve) => s.server.close(() => resolve())) }
  },
  {
    name: 'character device node (made with mknod, as root)',
    setup (s) {
      if (windows) return REASONS.noDevice
      if (!mknodNull(path.join(s.root, 'dev'))) return 'skip'
    },
    read: { segments: ['dev'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    list: { segments: ['dev'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    write: { segments: ['dev'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    writeCreate: { segments: ['dev', 'x'], code: 'UNSAFE_ENTRY', segmentIndex: 0 },
    after (s, assert) { assert.ok(fs.lstatSync(path.join(s.root, 'dev')).isCharacterDevice()) }
  },
  {
    name: 'hard link to a file inside (an ordinary entry)',
    setup (s) {
      fs.writeFileSync(path.join(s.root, 'orig'), 'shared')
      fs.linkSync(path.join(s.root, 'orig'), path.join(s.root, 'hl'))
    },
    read: { segments: ['hl'], value: (b) => Buffer.from(b).toString() === 'shared' },
    list: { segments: [], value: (l) => l.some((e) => e.name === 'hl' && e.kind === 'file') },
    write: { segments: ['hl'], value: (r, s) => fs.readFileSync(path.join(s.root, 'hl'), 'utf8') === 'written' },
    writeCreate: { segments: ['hl'], value: (r, s) => fs.readFileSync(path.join(s.root, 'hl'), 'utf8') === 'written' },
    // The replacement is a new file: the other name keeps the old content.
    after (s, assert) { assert.strictEqual(fs.readFileSync(path.join(s.root, 'orig'), 'utf8'), 'shared') }
  },
  {
    name: 'hard link to a file outside, made before (already beneath the root)',
    setup (s) { fs.linkSync(path.join(s.outside, 'secret'), path.join(s.root, 'hl')) },
    read: { segments: ['hl'], value: (b) => Buffer.from(b).toString() === 'OUTSIDE' },
    list: { segments: [], value: (l) => l.length === 1 && l[0].kind === 'file' },
    write: { segments: ['hl'], value: (r, s) => fs.readFileSync(path.join(s.root, 'hl'), 'utf8') === 'written' },
    writeCreate: { segments: ['hl'], value: (r, s) => fs.readFileSync(path.join(s.root, 'hl'), 'utf8') === 'written' }
    // The write replaced the name inside; outside/secret keeps 'OUTSIDE' (checked always).
  },
  {
    name: 'non-UTF-8 names',
    setup (s) {
      if (windows) return REASONS.rawNames
      fs.mkdirSync(path.join(s.root, 'd'))
      writeRawName(path.join(s.root, 'd'), [0x62, 0xff, 0x61, 0x64], 'bad')
      writeRawName(path.join(s.root, 'd'), [0xed, 0xa0, 0x80], 'surrogate') // CESU surrogate
      fs.writeFileSync(path.join(s.root, 'd', 'good'), 'good')
    },
    read: { segments: ['d', 'good'], value: (b) => Buffer.from(b).toString() === 'good' },
    list: { segments: ['d'], value: (l) => l.length === 1 && l[0].name === 'good' && l.omitted === 2 },
    write: { segments: ['d', 'good'], value: (r, s) => fs.readFileSync(path.join(s.root, 'd', 'good'), 'utf8') === 'written' },
    writeCreate: { segments: ['d', 'e', 'f'], value: (r, s) => fs.readFileSync(path.join(s.root, 'd', 'e', 'f'), 'utf8') === 'written' },
    // The raw names are still there, byte for byte: never altered into other names.
    after (s, assert) {
      const raw = fs.readdirSync(path.join(s.root, 'd'), { encoding: 'buffer' }).map((b) => b.toString('hex'))
      assert.ok(raw.includes('62ff6164') && raw.includes('eda080'))
    }
  },
  {
    name: 'mount point below the root (a tmpfs, as root; crossing is allowed)',
    setup (s) {
      if (windows) return REASONS.mount
      const mnt = path.join(s.root, 'mnt')
      fs.mkdirSync(mnt)
      if (spawnSync('mount', ['-t', 'tmpfs', 'aos-test', mnt]).status !== 0) return 'skip'
      fs.writeFileSync(path.join(mnt, 'm.txt'), 'mounted')
    },
    read: { segments: ['mnt', 'm.txt'], value: (b) => Buffer.from(b).toString() === 'mounted' },
    list: { segments: ['mnt'], value: (l) => l.length === 1 && l[0].name === 'm.txt' },
    write: { segments: ['mnt', 'm.txt'], value: (r, s) => fs.readFileSync(path.join(s.root, 'mnt', 'm.txt'), 'utf8') === 'written' },
    writeCreate: { segments: ['mnt', 'n', 'o'], value: (r, s) => fs.readFileSync(path.join(s.root, 'mnt', 'n', 'o'), 'utf8') === 'written' },
    teardown (s) { spawnSync('umount', [path.join(s.root, 'mnt')]) }
  }
]

module.exports = {
  makeSandbox,
  resolvers,
  useResolver,
  mkfifo,
  mknodNull,
  listenSocket,
  writeRawName,
  fdCount,
  tempFiles,
  walkTree,
  LAYOUTS
}
