// Type-checked by test/package/types.test.js under moduleResolution node10, node16
// and bundler: every public type and function, resolved through the package's name.
import {
  openReadAuthority,
  openReadAuthoritySync,
  openWriteAuthority,
  openWriteAuthoritySync,
  toSegments,
  FileAuthorityError,
  type FileAuthority,
  type ReadAuthority,
  type WriteAuthority,
  type OpenOptions,
  type DirectoryEntry,
  type DirectoryListing,
  type FileAuthorityErrorCode,
  type FileStat,
  type VersionedBytes,
  type RangeRead,
  type WalkEntry,
  type WalkListing,
  type WriteOptions,
  type AppendOptions,
  type ListOptions,
  type WalkOptions
} from '@scope/agent-os/file-authority'
import { createMemoryAuthorities, type MemoryTree } from '@scope/agent-os/file-authority/testing'
import { tryAcquire, acquire, withLock, NodeLockError, type LockGuard, type NodeLockErrorCode } from '@scope/agent-os/node-lock'
import {
  killProcessTree,
  DEFAULT_KILL_GRACE_MS,
  type ChildProcessLike,
  type KillProcessTreeOptions,
  openProcessScope,
  type ProcessScope,
  type ProcessScopeBackend,
  type ProcessScopeKillOptions,
  ProcessTreeError,
  ProcessTreeTypeError,
  type ProcessTreeErrorCode
} from '@scope/agent-os/process'
import { spawn } from 'node:child_process'

export async function useFileAuthority (root: string): Promise<number> {
  const reader: ReadAuthority = await openReadAuthority(root)
  const opts: OpenOptions = { sameRootAs: reader }
  const writer: WriteAuthority = await openWriteAuthority(root, opts)
  const same: boolean = reader.sharesRootWith(writer)
  await writer.writeText(['docs', 'a.txt'], 'hello', { createParents: true })
  writer.writeTextSync(['b.txt'], new Uint8Array([104, 105]))
  const bytes = await reader.readBytes(['docs', 'a.txt'], { maxBytes: 1024 })
  // Contract 0.3: reads are Buffers, so Buffer's methods type-check with @types/node.
  const asText: string | undefined = bytes?.toString('utf8')
  const buf: Buffer | undefined = reader.readBytesSync(['docs', 'a.txt'], { maxBytes: 1024 })
  const segs: string[] = toSegments('docs/a.txt', { root: '/srv/ws' })
  const err = new FileAuthorityError('INVALID_OPTION', { operation: 'writeText' })
  const at: string | undefined = err.argument
  void asText
  void buf
  void segs
  void at
  const listing: DirectoryListing | undefined = reader.listSync([])
  const first: DirectoryEntry | undefined = listing?.[0]
  const kind: 'file' | 'directory' | 'symlink' | 'other' | undefined = first?.kind
  const omitted: number = listing?.omitted ?? 0
  const sync: ReadAuthority = openReadAuthoritySync(root)
  const w2: WriteAuthority = openWriteAuthoritySync(root)
  const all: FileAuthority[] = [reader, writer, sync, w2]
  for (const a of all) a.closeSync()
  await reader.close()
  await reader[Symbol.asyncDispose]()
  reader[Symbol.dispose]()
  const closed: boolean = reader.closed
  try {
    reader.readBytesSync(['x'], { maxBytes: 1 })
  } catch (err) {
    if (err instanceof FileAuthorityError) {
      const code: FileAuthorityErrorCode = err.code
      const rec: 'yes' | 'no' | 'maybe' = err.recoverable
      const op: string = err.operation
      const idx: number | undefined = err.segmentIndex
      const host: string | undefined = err.hostCode
      void [code, rec, op, idx, host]
    }
  }
  const made = new FileAuthorityError('OVER_BUDGET', { operation: 'readBytes', segmentIndex: 1, hostCode: 'EIO' })
  void [same, bytes, kind, omitted, closed, made, (await reader.list(['docs']))?.length]
  return 0
}

export async function useOperations (reader: ReadAuthority, writer: WriteAuthority): Promise<number> {
  const st: FileStat | undefined = await reader.stat([])
  const st2: FileStat | undefined = writer.statSync(['a'])
  const kind: 'file' | 'directory' | 'symlink' | 'other' | undefined = st?.kind
  const v: VersionedBytes | undefined = await reader.readVersioned(['a'], { maxBytes: 10 })
  const vs: VersionedBytes | undefined = reader.readVersionedSync(['a'], { maxBytes: 10 })
  const range: RangeRead | undefined = await reader.readRange(['log'], { offset: 0, length: 4096 })
  const rs: RangeRead | undefined = reader.readRangeSync(['log'], { offset: 10, length: 1 })
  const walked: WalkListing | undefined = await reader.walk([], { maxEntries: 100, maxDepth: 2 })
  const ws: WalkListing | undefined = reader.walkSync(['docs'], { maxEntries: 1 })
  const first: WalkEntry | undefined = walked?.[0]
  const path: readonly string[] | undefined = first?.path
  const flags: [number, boolean] | undefined = walked === undefined ? undefined : [walked.omitted, walked.truncated]
  const options: WriteOptions = { createParents: true, mode: 0o640, ifVersion: v?.version, ifAbsent: false }
  await writer.writeBytes(['b.bin'], new Uint8Array(1), options)
  writer.writeBytesSync(['b.bin'], new Uint8Array(1), { ifAbsent: true })
  await writer.writeText(['a'], 'x', { ifVersion: st2?.version })
  const removed: boolean = await writer.remove(['x'], { directory: true })
  const removedSync: boolean = writer.removeSync(['x'])
  const made: boolean = await writer.makeDirectory(['d'], { parents: true, mode: 0o700 })
  const madeSync: boolean = writer.makeDirectorySync(['d'])
  await writer.rename(['a'], ['b'], { replace: true })
  writer.renameSync(['b'], ['c'])
  const code: FileAuthorityErrorCode = 'ENTRY_EXISTS'
  // contract 0.3
  const text: string | undefined = await reader.readText(['a'], { maxBytes: 10 })
  const textSync: string | undefined = reader.readTextSync(['a'], { maxBytes: 10 })
  const lo: ListOptions = { withStats: true }
  const sized = reader.listSync(['docs'], { withStats: true })
  const size0: number | undefined = sized?.[0]?.stat.size
  const plain: DirectoryListing | undefined = await reader.list(['docs'], { withStats: false })
  const maybeStat: FileStat | undefined = plain?.[0]?.stat
  const wo: WalkOptions = { maxEntries: 100, exclude: ['node_modules', '.git'], withStats: false }
  const walkedStats = await reader.walk([], { maxEntries: 10, exclude: ['.git'], withStats: true })
  const v0: string | undefined = walkedStats?.[0]?.stat.version
  const wsync: WalkListing | undefined = reader.walkSync([], wo)
  const ao: AppendOptions = { createParents: true, mode: 0o600, durable: false }
  await writer.appendText(['log.jsonl'], '{}\n', ao)
  writer.appendTextSync(['log.jsonl'], new Uint8Array([10]))
  await writer.appendBytes(['b.bin'], new Uint8Array(1), { durable: true })
  writer.appendBytesSync(['b.bin'], new Uint8Array(1))
  writer.writeTextSync(['scratch'], 'x', { durable: false })
  void [kind, vs, range?.bytes, range?.size, rs, ws, path, flags, removed, removedSync, made, madeSync, code, text, textSync, lo, size0, maybeStat, v0, wsync]
  return (st?.size ?? 0) + (st?.mtimeMs ?? 0) + (st?.mode ?? 0)
}

export function useTesting (): MemoryTree {
  const tree: MemoryTree = { a: 'text', b: new Uint8Array(2), c: { d: { symlink: '../x' } }, e: { other: true } }
  const { reader, writer, snapshot } = createMemoryAuthorities(tree, {
    fault: (operation: string, segments: readonly string[]) => (operation === 'readBytes' && segments.length > 3 ? 'HOST_IO' : undefined)
  })
  const r: ReadAuthority = reader
  const w: WriteAuthority = writer
  void [r, w]
  return snapshot()
}

export async function useLock (p: string): Promise<string> {
  const g: LockGuard | undefined = tryAcquire(p)
  if (g !== undefined) {
    const released: boolean = g.released
    g.release()
    g[Symbol.dispose]()
    void released
  }
  const g2: LockGuard = await acquire(p, { timeoutMs: 100, signal: AbortSignal.timeout(50) })
  g2.release()
  try {
    return await withLock(p, async () => 'done')
  } catch (err) {
    if (err instanceof NodeLockError) {
      const code: NodeLockErrorCode = err.code
      const pid: number | undefined = err.holderPid
      void [code, pid]
    }
    return 'held'
  }
}

export async function useProcess (): Promise<void> {
  const child = spawn('sh', ['-c', 'sleep 5'], { detached: true })
  const like: ChildProcessLike = child
  const options: KillProcessTreeOptions = { signal: 'SIGINT', graceMs: DEFAULT_KILL_GRACE_MS, preKill: async () => {} }
  const grace: 2000 = DEFAULT_KILL_GRACE_MS
  await killProcessTree(like, options)
  await killProcessTree({ pid: 1, exitCode: 0, signalCode: null, once: () => undefined, removeListener: () => undefined })
  try {
    await killProcessTree(like, { graceMs: -1 })
  } catch (err) {
    if (err instanceof ProcessTreeTypeError) {
      const typeError: TypeError = err
      const code: 'NOT_SPAWNED' | 'INVALID_OPTION' = err.code
      const argument: string | undefined = err.argument
      void [typeError, code, argument]
    } else if (err instanceof ProcessTreeError) {
      const code: ProcessTreeErrorCode = err.code
      const operation: 'killProcessTree' | 'openProcessScope' | 'spawn' | 'kill' = err.operation
      const hostCode: string | undefined = err.hostCode
      void [code, operation, hostCode]
    }
  }
  void grace
}

export async function useProcessScope (): Promise<number[]> {
  const scope: ProcessScope = await openProcessScope()
  const backend: ProcessScopeBackend = scope.backend
  const onWindows: boolean = backend === 'job'
  const child = scope.spawn('sh', ['-c', 'sleep 5 &'], { stdio: 'pipe' })
  const pid: number | undefined = child.pid
  const other = scope.spawn('true', { stdio: 'ignore' })
  const options: ProcessScopeKillOptions = { signal: 'SIGTERM', graceMs: 100 }
  await scope.kill(options)
  const pids: number[] = scope.pids()
  const closed: boolean = scope.closed
  await scope.close()
  try {
    scope.spawn('true')
  } catch (err) {
    if (err instanceof ProcessTreeError && err.code === 'SCOPE_CLOSED') void err.operation
  }
  void [backend, onWindows, pid, other, closed]
  return pids
}
