// Type-checked by test/package/types.test.js and test/packaging/install.spec.js with
// no @types/node and no lib "dom" (lib es2022 only): every subpath's declarations stand
// on their own. It uses no Node API itself, so nothing here needs Node's types.
import {
  openReadAuthority,
  openWriteAuthoritySync,
  FileAuthorityError,
  type ReadAuthority,
  type DirectoryListing,
  type FileAuthorityErrorCode
} from '@scope/agent-os/file-authority'
import { createMemoryAuthorities, type MemoryTree } from '@scope/agent-os/file-authority/testing'
import { tryAcquire, acquire, withLock, NodeLockError, type LockGuard, type AbortSignalLike } from '@scope/agent-os/node-lock'
import {
  killProcessTree,
  DEFAULT_KILL_GRACE_MS,
  type ChildProcessLike,
  type KillProcessTreeOptions,
  type SignalName,
  ProcessTreeError,
  ProcessTreeTypeError,
  type ProcessTreeErrorCode
} from '@scope/agent-os/process'

// The process error classes type-check without @types/node too.
export function processErrorCode (err: unknown): ProcessTreeErrorCode | undefined {
  if (err instanceof ProcessTreeTypeError) return err.code
  if (err instanceof ProcessTreeError) return err.code
  return undefined
}

export async function everySubpath (root: string, signal: AbortSignalLike, child: ChildProcessLike): Promise<number> {
  const reader: ReadAuthority = await openReadAuthority(root)
  const writer = openWriteAuthoritySync(root, { sameRootAs: reader })
  writer.writeTextSync(['a.txt'], 'text', { createParents: false })
  const bytes: Uint8Array | undefined = reader.readBytesSync(['a.txt'], { maxBytes: 16 })
  const listing: DirectoryListing | undefined = await reader.list([])
  await reader[Symbol.asyncDispose]()
  writer[Symbol.dispose]()

  const tree: MemoryTree = { d: { 'f.txt': 'x' } }
  const memory = createMemoryAuthorities(tree)
  const snapshot: MemoryTree = memory.snapshot()

  const guard: LockGuard | undefined = tryAcquire(root + '/lock')
  guard?.[Symbol.dispose]()
  const waited: LockGuard = await acquire(root + '/lock', { timeoutMs: 10, signal })
  waited.release()
  const result: string = await withLock(root + '/lock', () => 'ok')

  const signalName: SignalName = 'SIGINT'
  const options: KillProcessTreeOptions = { signal: signalName, graceMs: DEFAULT_KILL_GRACE_MS }
  await killProcessTree(child, options)

  try {
    reader.listSync([])
  } catch (err) {
    if (err instanceof FileAuthorityError) { const code: FileAuthorityErrorCode = err.code; void code }
    if (err instanceof NodeLockError) { const pid: number | undefined = err.holderPid; void pid }
  }
  void [bytes, listing, snapshot, result]
  return 0
}
