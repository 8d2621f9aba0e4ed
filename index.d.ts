// Public types of @scope/agent-os. Each subpath's declaration file (types/*.d.ts)
// re-exports its part of this file; the package has no root export.

// ---------------------------------------------------------------- file-authority

export type FileAuthorityErrorCode =
  | 'INVALID_PATH'
  | 'INVALID_CONTENT'
  | 'UNSAFE_ENTRY'
  | 'UNSUPPORTED_BACKEND'
  | 'AUTHORITY_CLOSED'
  | 'ROOT_CHANGED'
  | 'FILE_CHANGED'
  | 'OVER_BUDGET'
  | 'HOST_IO'

export declare class FileAuthorityError extends Error {
  constructor(
    code: FileAuthorityErrorCode,
    details?: { operation?: string; segmentIndex?: number; hostCode?: string }
  )
  readonly code: FileAuthorityErrorCode
  readonly recoverable: 'yes' | 'no' | 'maybe'
  /** 'openReadAuthority', 'readBytes', 'list', 'writeText', ... */
  readonly operation: string
  readonly segmentIndex?: number
  /** 'ELOOP', 'EACCES', 'STATUS_ACCESS_DENIED', ... */
  readonly hostCode?: string
}

export interface FileAuthority {
  readonly closed: boolean
  sharesRootWith(other: FileAuthority): boolean
  close(): Promise<void>
  closeSync(): void
  [Symbol.asyncDispose](): Promise<void>
  [Symbol.dispose](): void
}

export interface OpenOptions {
  sameRootAs?: FileAuthority
}

export interface DirectoryEntry {
  readonly name: string
  readonly kind: 'file' | 'directory' | 'symlink' | 'other'
}

export type DirectoryListing = DirectoryEntry[] & { readonly omitted: number }

export interface ReadAuthority extends FileAuthority {
  readBytes(segments: readonly string[], options: { maxBytes: number }): Promise<Uint8Array | undefined>
  readBytesSync(segments: readonly string[], options: { maxBytes: number }): Uint8Array | undefined
  list(segments: readonly string[]): Promise<DirectoryListing | undefined>
  listSync(segments: readonly string[]): DirectoryListing | undefined
}

export interface WriteAuthority extends FileAuthority {
  writeText(segments: readonly string[], text: string | Uint8Array, options?: { createParents?: boolean }): Promise<void>
  writeTextSync(segments: readonly string[], text: string | Uint8Array, options?: { createParents?: boolean }): void
}

export declare function openReadAuthority(root: string, options?: OpenOptions): Promise<ReadAuthority>
export declare function openReadAuthoritySync(root: string, options?: OpenOptions): ReadAuthority
export declare function openWriteAuthority(root: string, options?: OpenOptions): Promise<WriteAuthority>
export declare function openWriteAuthoritySync(root: string, options?: OpenOptions): WriteAuthority

// ------------------------------------------------------- file-authority/testing

export type MemoryTree = {
  [name: string]: string | Uint8Array | MemoryTree | { symlink: string } | { other: true }
}

export interface MemoryAuthorityOptions {
  /** Returns an error code to inject before `operation` runs on `segments`. */
  fault?: (operation: string, segments: readonly string[]) => FileAuthorityErrorCode | undefined
}

export declare function createMemoryAuthorities(
  tree?: MemoryTree,
  options?: MemoryAuthorityOptions
): { reader: ReadAuthority; writer: WriteAuthority; snapshot(): MemoryTree }

// --------------------------------------------------------------------- node-lock

export type NodeLockErrorCode =
  | 'INVALID_PATH'
  | 'UNSAFE_ENTRY'
  | 'LOCK_HELD'
  | 'LOCK_TIMEOUT'
  | 'UNSUPPORTED_BACKEND'
  | 'HOST_IO'

export declare class NodeLockError extends Error {
  constructor(code: NodeLockErrorCode, details?: { operation?: string; hostCode?: string; holderPid?: number })
  readonly code: NodeLockErrorCode
  /** 'tryAcquire', 'acquire', 'withLock', ... */
  readonly operation: string
  /** 'ENOENT', 'EACCES', ... where a host failure was behind the error. */
  readonly hostCode?: string
  /** The pid of the live process on this host holding the lock, where it can be known. */
  readonly holderPid?: number
}

export interface LockGuard {
  readonly released: boolean
  release(): void
  [Symbol.dispose](): void
}

export declare function tryAcquire(lockPath: string): LockGuard | undefined
export declare function acquire(
  lockPath: string,
  options?: { timeoutMs?: number; signal?: AbortSignal }
): Promise<LockGuard>
export declare function withLock<T>(
  lockPath: string,
  fn: () => T | Promise<T>,
  options?: { timeoutMs?: number; signal?: AbortSignal }
): Promise<T>

// ----------------------------------------------------------------------- process

export declare const DEFAULT_KILL_GRACE_MS: 2000

export interface KillProcessTreeOptions {
  /** Default 'SIGTERM'. */
  signal?: NodeJS.Signals
  /** Default DEFAULT_KILL_GRACE_MS; a finite number >= 0. */
  graceMs?: number
  preKill?: () => void | Promise<void>
}

/** What killProcessTree reads of a ChildProcess; a real ChildProcess satisfies it. */
export interface ChildProcessLike {
  readonly pid?: number
  readonly exitCode: number | null
  readonly signalCode: NodeJS.Signals | null
  once(event: 'exit', listener: (...args: any[]) => void): unknown
  removeListener(event: 'exit', listener: (...args: any[]) => void): unknown
}

export declare function killProcessTree(child: ChildProcessLike, options?: KillProcessTreeOptions): Promise<void>
