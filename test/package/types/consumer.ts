// Type-checked by test/package/types.test.js under moduleResolution node10, node16
// and bundler: every public type and function, resolved through the package's name.
import {
  openReadAuthority,
  openReadAuthoritySync,
  openWriteAuthority,
  openWriteAuthoritySync,
  FileAuthorityError,
  type FileAuthority,
  type ReadAuthority,
  type WriteAuthority,
  type OpenOptions,
  type DirectoryEntry,
  type DirectoryListing,
  type FileAuthorityErrorCode
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
  type ProcessScopeKillOptions
} from '@scope/agent-os/process'
import { spawn } from 'node:child_process'

export async function useFileAuthority (root: string): Promise<number> {
  const reader: ReadAuthority = await openReadAuthority(root)
  const opts: OpenOptions = { sameRootAs: reader }
  const writer: WriteAuthority = await openWriteAuthority(root, opts)
  const same: boolean = reader.sharesRootWith(writer)
  await writer.writeText(['docs', 'a.txt'], 'hello', { createParents: true })
  writer.writeTextSync(['b.txt'], new Uint8Array([104, 105]))
  const bytes: Uint8Array | undefined = await reader.readBytes(['docs', 'a.txt'], { maxBytes: 1024 })
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
  void grace
}

export async function useProcessScope (): Promise<number[]> {
  const scope: ProcessScope = await openProcessScope()
  const backend: ProcessScopeBackend = scope.backend
  const child = scope.spawn('sh', ['-c', 'sleep 5 &'], { stdio: 'pipe' })
  const pid: number | undefined = child.pid
  const other = scope.spawn('true', { stdio: 'ignore' })
  const options: ProcessScopeKillOptions = { signal: 'SIGTERM', graceMs: 100 }
  await scope.kill(options)
  const pids: number[] = scope.pids()
  const closed: boolean = scope.closed
  await scope.close()
  void [backend, pid, other, closed]
  return pids
}
