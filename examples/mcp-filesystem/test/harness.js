'use strict'
// What the tests and the comparison script (compare.js) share: starting a filesystem
// server (this one or upstream's) under the MCP SDK's client over stdio, the swap
// helper (fixtures/exchange.c, compiled on first use), the attack fixtures, and the
// race scenarios with their leak and outside-write counts.

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, execFileSync } = require('node:child_process')
const { performance } = require('node:perf_hooks')
const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js')
const { ListRootsRequestSchema } = require('@modelcontextprotocol/sdk/types.js')

const SERVERS = {
  // The documented command line: node examples/mcp-filesystem <dir>...
  'agent-os': path.join(__dirname, '..'),
  upstream: require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
}

/**
 * Starts a server (`kind`: 'agent-os' or 'upstream') with `dirs` on its command line
 * and connects the SDK's client. `roots`: an array of { uri } the client offers (then
 * the client declares the roots capability); `env`: added to the server's environment.
 */
async function startServer (kind, dirs, { roots, env } = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVERS[kind], ...dirs],
    env: { ...process.env, ...env },
    stderr: 'pipe'
  })
  let stderr = ''
  transport.stderr.on('data', (chunk) => { stderr += chunk })
  const client = new Client({ name: 'mcp-filesystem-test', version: '1.0.0' }, roots ? { capabilities: { roots: { listChanged: true } } } : {})
  let currentRoots = roots
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: currentRoots }))
  await client.connect(transport)
  const server = {
    kind,
    client,
    get pid () { return transport.pid },
    get stderr () { return stderr },
    /** Calls a tool: { text, isError, ms, result }; `text` joins every text, data and blob. */
    async call (name, args = {}, { timeoutMs = 30000 } = {}) {
      const t0 = performance.now()
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })
      const ms = performance.now() - t0
      const text = (result.content || []).map((c) => c.text ?? c.data ?? c.resource?.blob ?? '').join('\n')
      return { text, isError: result.isError === true, ms, result }
    },
    /** Offers new roots and tells the server they changed. */
    async setRoots (next) {
      currentRoots = next
      await client.sendRootsListChanged()
    },
    /** The server process's peak resident memory (VmHWM, KiB), Linux only. */
    peakKiB () {
      try {
        const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${transport.pid}/status`, 'utf8'))
        return m ? Number(m[1]) : undefined
      } catch {
        return undefined
      }
    },
    async close () {
      await client.close().catch(() => {})
    }
  }
  return server
}

/** The swap helper, compiled once per source version into the temporary directory; undefined where it cannot run (not Linux, no C compiler). */
function exchangeHelper () {
  if (process.platform !== 'linux') return undefined
  const source = path.join(__dirname, 'fixtures', 'exchange.c')
  const hash = crypto.createHash('sha256').update(fs.readFileSync(source)).digest('hex').slice(0, 16)
  const dir = path.join(os.tmpdir(), `agent-os-mcp-exchange-${process.getuid()}-${hash}`)
  const binary = path.join(dir, 'exchange')
  if (fs.existsSync(binary)) return binary
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const tmp = `${binary}.${process.pid}`
  try {
    execFileSync(process.env.CC || 'cc', ['-std=c11', '-O2', '-Wall', '-Wextra', '-Werror', '-o', tmp, source], { stdio: 'pipe' })
  } catch {
    return undefined
  }
  fs.renameSync(tmp, binary)
  return binary
}

/** Starts swapping names `a` and `b`; `stop()` resolves the number of swaps (even: both names are back). */
async function startExchange (binary, a, b) {
  const child = spawn(binary, [a, b], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (c) => { out += c })
  child.stderr.on('data', (c) => { err += c })
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
  await new Promise((resolve, reject) => {
    const check = () => { if (out.includes('ready\n')) resolve() }
    child.stdout.on('data', check)
    child.on('exit', () => reject(new Error(`exchange helper exited: ${err}`)))
  })
  return {
    async stop () {
      child.kill('SIGTERM')
      const code = await exited
      if (code !== 0) throw new Error(`exchange helper failed: ${err}`)
      return Number(out.split('\n')[1])
    }
  }
}

/**
 * A temporary base directory with the allowed directory `root` and, beside it, what no
 * call may reach: `out` (a secret file and a marker-named file), and the prefix and
 * quote siblings of root (root_evil, root', root", 'root ', 'root\t'), each with a
 * secret. Inside root: d/ (a directory the race swaps with dlink, a link to out), e/
 * (f.txt swapped with flink, a link to out/f.txt).
 */
function makeFixture (prefix = 'mcp-fs-') {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const token = crypto.randomBytes(6).toString('hex')
  const fx = {
    base,
    root: path.join(base, 'root'),
    out: path.join(base, 'out'),
    secret: `OUTSIDE-SECRET-${token}`,
    marker: `outside-marker-${token}.txt`,
    siblings: ['_evil', "'", '"', ' ', '\t'].map((s) => path.join(base, 'root' + s))
  }
  fs.mkdirSync(path.join(fx.root, 'd', 'sub'), { recursive: true })
  fs.mkdirSync(path.join(fx.root, 'e'))
  fs.writeFileSync(path.join(fx.root, 'd', 'f.txt'), 'inside edit-me\n')
  fs.writeFileSync(path.join(fx.root, 'd', 'inside-name.txt'), 'inside\n')
  fs.writeFileSync(path.join(fx.root, 'e', 'f.txt'), 'inside edit-me\n')
  fs.mkdirSync(path.join(fx.out, 'sub'), { recursive: true })
  // Longer than the inside f.txt, so a size seen outside is recognisable.
  fs.writeFileSync(path.join(fx.out, 'f.txt'), `${fx.secret} edit-me and more bytes than inside\n`)
  fs.writeFileSync(path.join(fx.out, fx.marker), fx.secret)
  fx.outSize = fs.statSync(path.join(fx.out, 'f.txt')).size
  fs.symlinkSync(fx.out, path.join(fx.root, 'dlink'))
  fs.symlinkSync(path.join(fx.out, 'f.txt'), path.join(fx.root, 'e', 'flink'))
  for (const s of fx.siblings) {
    fs.mkdirSync(s)
    fs.writeFileSync(path.join(s, 'secret.txt'), fx.secret)
    fs.writeFileSync(path.join(s, fx.marker), fx.secret)
  }
  return fx
}

function removeFixture (fx) {
  fs.rmSync(fx.base, { recursive: true, force: true })
}

/** What no call may change: the entries of out (recursively) with identity, size, mtime and mode. */
function outsideState (fx) {
  const rows = []
  const visit = (dir, rel) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const st = fs.lstatSync(path.join(dir, name), { bigint: true })
      rows.push(`${rel}${name} ${st.ino} ${st.size} ${st.mtimeNs} ${st.mode}`)
      if (st.isDirectory()) visit(path.join(dir, name), `${rel}${name}/`)
    }
  }
  visit(fx.out, '')
  for (const s of fx.siblings) visit(s, `${path.basename(s)}/`)
  return rows.join('\n')
}

/** A tool's refusal: an error result, or read_multiple_files's error in place of the file. */
function refused (res) {
  return res.isError || /: Error - /.test(res.text)
}

/** Whether a result shows anything of outside: the secret (also base64-encoded content), the marker name, or the outside file's size. */
function leaked (fx, res, { size = false } = {}) {
  if (res.isError) return false
  const t = res.text
  if (t.includes(fx.secret) || t.includes(fx.marker)) return true
  for (const c of res.result.content || []) {
    const b64 = c.data ?? c.resource?.blob
    if (b64 && Buffer.from(b64, 'base64').toString('latin1').includes(fx.secret)) return true
  }
  return size && new RegExp(`^size: ${fx.outSize}$`, 'm').test(t)
}

/**
 * The race scenarios: `swap` says which names the helper exchanges ('dir': root/d with
 * root/dlink -> out; 'file': root/e/f.txt with root/e/flink -> out/f.txt), `args(fx, i)`
 * the i-th call's arguments. Under the file swap every exchange changes the file's
 * ctime, so a read or conditional write of this server may find the file changed
 * (FILE_CHANGED) on every call: there a refusal of every call is a right answer.
 */
const RACES = [
  { tool: 'read_text_file', swap: 'dir', args: (fx) => ({ path: path.join(fx.root, 'd', 'f.txt') }) },
  { tool: 'read_media_file', swap: 'dir', args: (fx) => ({ path: path.join(fx.root, 'd', 'f.txt') }) },
  { tool: 'read_multiple_files', swap: 'dir', args: (fx) => ({ paths: [path.join(fx.root, 'd', 'f.txt')] }) },
  { tool: 'get_file_info', swap: 'dir', size: true, args: (fx) => ({ path: path.join(fx.root, 'd', 'f.txt') }) },
  { tool: 'list_directory', swap: 'dir', args: (fx) => ({ path: path.join(fx.root, 'd') }) },
  { tool: 'list_directory_with_sizes', swap: 'dir', args: (fx) => ({ path: path.join(fx.root, 'd') }) },
  { tool: 'directory_tree', swap: 'dir', args: (fx) => ({ path: fx.root }) },
  { tool: 'search_files', swap: 'dir', args: (fx) => ({ path: fx.root, pattern: '**/*' }) },
  { tool: 'write_file', swap: 'dir', args: (fx, i) => ({ path: path.join(fx.root, 'd', `new-${i}.txt`), content: 'written\n' }) },
  { tool: 'edit_file', swap: 'dir', args: (fx) => ({ path: path.join(fx.root, 'd', 'f.txt'), edits: [{ oldText: 'edit-me', newText: 'edit-me' }] }) },
  { tool: 'create_directory', swap: 'dir', args: (fx, i) => ({ path: path.join(fx.root, 'd', `newdir-${i}`) }) },
  { tool: 'read_text_file', swap: 'file', args: (fx) => ({ path: path.join(fx.root, 'e', 'f.txt') }) },
  { tool: 'read_media_file', swap: 'file', args: (fx) => ({ path: path.join(fx.root, 'e', 'f.txt') }) },
  { tool: 'get_file_info', swap: 'file', size: true, args: (fx) => ({ path: path.join(fx.root, 'e', 'f.txt') }) },
  { tool: 'edit_file', swap: 'file', args: (fx) => ({ path: path.join(fx.root, 'e', 'f.txt'), edits: [{ oldText: 'edit-me', newText: 'edit-me' }] }) },
  { tool: 'write_file', swap: 'file', args: (fx, i) => ({ path: path.join(fx.root, 'e', 'f.txt'), content: `inside ${i} edit-me\n` }) }
]

/**
 * Runs one race: a fresh fixture, the server on its root, the helper swapping, `calls`
 * calls (stopping early after `untilLeak` leaks, if given). Counts per call: answered
 * (not refused), a leak (outside content, names or size in a result) and an outside
 * write (out changed).
 */
async function runRace (kind, race, { calls, binary, untilLeak, env } = {}) {
  const fx = makeFixture(`mcp-race-${kind}-`)
  const server = await startServer(kind, [fx.root], { env })
  const [a, b] = race.swap === 'dir'
    ? [path.join(fx.root, 'd'), path.join(fx.root, 'dlink')]
    : [path.join(fx.root, 'e', 'f.txt'), path.join(fx.root, 'e', 'flink')]
  const counts = { calls: 0, answered: 0, leaks: 0, outsideWrites: 0, errors: 0, swaps: 0 }
  let before = outsideState(fx)
  const swapper = await startExchange(binary, a, b)
  try {
    for (let i = 0; i < calls; i++) {
      const res = await server.call(race.tool, race.args(fx, i))
      counts.calls++
      if (res.isError) counts.errors++
      if (!refused(res)) counts.answered++
      if (leaked(fx, res, { size: race.size })) counts.leaks++
      const now = outsideState(fx)
      if (now !== before) counts.outsideWrites++
      before = now
      if (untilLeak !== undefined && counts.leaks + counts.outsideWrites >= untilLeak) break
    }
  } finally {
    counts.swaps = await swapper.stop()
    await server.close()
    removeFixture(fx)
  }
  return counts
}

/** Adds to root a FIFO (fifo), a sparse file of `hugeBytes` with no newline (huge.bin)
 * and a link to a file inside (inlink -> d/f.txt). */
function addSpecials (fx, { hugeBytes = 8 * 1024 ** 3 } = {}) {
  execFileSync('mkfifo', [path.join(fx.root, 'fifo')])
  const fd = fs.openSync(path.join(fx.root, 'huge.bin'), 'w')
  try { fs.ftruncateSync(fd, hugeBytes) } finally { fs.closeSync(fd) }
  fs.symlinkSync(path.join(fx.root, 'd', 'f.txt'), path.join(fx.root, 'inlink'))
}

/**
 * The attacks that need no race, by class: each a tool call that must be refused (an
 * error text), must not show anything of outside, must not change outside, and must
 * answer at once (a FIFO must not hang the call; a huge file must not be loaded).
 */
function staticAttacks (fx) {
  const j = (...p) => path.join(fx.root, ...p)
  const list = [
    ['link', 'read_text_file', { path: j('dlink', 'f.txt') }],
    ['link', 'read_text_file', { path: j('e', 'flink') }],
    ['link', 'list_directory', { path: j('dlink') }],
    ['link', 'directory_tree', { path: j('dlink') }],
    ['link', 'write_file', { path: j('dlink', 'planted.txt'), content: 'planted' }],
    ['link', 'write_file', { path: j('e', 'flink'), content: 'planted' }],
    ['link', 'edit_file', { path: j('e', 'flink'), edits: [{ oldText: 'edit-me', newText: 'edited' }] }],
    ['link', 'create_directory', { path: j('dlink', 'planted-dir') }],
    ['dotdot', 'read_text_file', { path: `${fx.root}/../out/f.txt` }],
    ['dotdot', 'read_text_file', { path: `${fx.root}/d/../../out/f.txt` }],
    ['dotdot', 'list_directory', { path: `${fx.root}/..` }],
    ['dotdot', 'write_file', { path: `${fx.root}/../out/planted.txt`, content: 'planted' }],
    ['dotdot', 'read_text_file', { path: '../out/f.txt' }]
  ]
  for (const s of fx.siblings) {
    const name = `sibling ${JSON.stringify(path.basename(s))}`
    list.push([name, 'list_directory', { path: s }])
    list.push([name, 'read_text_file', { path: path.join(s, 'secret.txt') }])
    list.push([name, 'search_files', { path: s, pattern: '**/*' }])
    list.push([name, 'directory_tree', { path: s }])
    list.push([name, 'write_file', { path: path.join(s, 'planted.txt'), content: 'planted' }])
  }
  for (const [tool, args] of [['read_text_file', { path: j('fifo') }], ['read_text_file', { path: j('fifo'), head: 1 }],
    ['read_media_file', { path: j('fifo') }], ['read_multiple_files', { paths: [j('fifo')] }],
    ['edit_file', { path: j('fifo'), edits: [{ oldText: 'a', newText: 'b' }] }]]) {
    list.push(['fifo', tool, args])
  }
  for (const [tool, args] of [['read_media_file', { path: j('huge.bin') }], ['read_text_file', { path: j('huge.bin') }],
    ['read_multiple_files', { paths: [j('huge.bin')] }], ['edit_file', { path: j('huge.bin'), edits: [{ oldText: 'a', newText: 'b' }] }]]) {
    list.push(['huge sparse file', tool, args])
  }
  return list.map(([kind, tool, args]) => ({ kind, tool, args }))
}

module.exports = { refused, addSpecials, staticAttacks, SERVERS, startServer, exchangeHelper, startExchange, makeFixture, removeFixture, outsideState, leaked, RACES, runRace }
