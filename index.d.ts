// Public types of @scope/agent-os. Each subpath's declaration file (types/*.d.ts)
// re-exports its part of this file; the package has no root export, and a root import
// fails type-checking too (package.json "types" names types/no-root-export.d.ts).
//
// Self-contained: these declarations type-check without @types/node or lib "dom",
// and agree with them when they are present (see "shared declarations" below).
// To add a declaration: put it in its subpath's section here and name it in that
// subpath's types/<subpath>.d.ts export list.

// ---------------------------------------------------------- shared declarations

declare global {
  // As declared by lib esnext.disposable and by @types/node, so a consumer on an
  // older `lib` setting still sees the symbols the authorities and guards implement.
  interface SymbolConstructor {
    readonly dispose: unique symbol
    readonly asyncDispose: unique symbol
  }
}

/** The part of an AbortSignal that `acquire` reads; pass a real AbortSignal. */
export interface AbortSignalLike {
  readonly aborted: boolean
  readonly reason: any
  addEventListener(type: 'abort', listener: (this: any, event: any) => any, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: (this: any, event: any) => any): void
}

/**
 * What a read returns: a Node Buffer (a Uint8Array, as `fs` returns). With @types/node
 * present this is its `Buffer`; without it, a Uint8Array that has `toString`.
 */
export type BufferLike = typeof globalThis extends { Buffer: { from(data: string): infer B } }
  ? B
  : Uint8Array

/** A signal name: the same list as NodeJS.Signals of @types/node. */
export type SignalName =
  | 'SIGABRT' | 'SIGALRM' | 'SIGBUS' | 'SIGCHLD' | 'SIGCONT' | 'SIGFPE' | 'SIGHUP' | 'SIGILL'
  | 'SIGINT' | 'SIGIO' | 'SIGIOT' | 'SIGKILL' | 'SIGPIPE' | 'SIGPOLL' | 'SIGPROF' | 'SIGPWR'
  | 'SIGQUIT' | 'SIGSEGV' | 'SIGSTKFLT' | 'SIGSTOP' | 'SIGSYS' | 'SIGTERM' | 'SIGTRAP' | 'SIGTSTP'
  | 'SIGTTIN' | 'SIGTTOU' | 'SIGUNUSED' | 'SIGURG' | 'SIGUSR1' | 'SIGUSR2' | 'SIGVTALRM' | 'SIGWINCH'
  | 'SIGXCPU' | 'SIGXFSZ' | 'SIGBREAK' | 'SIGLOST' | 'SIGINFO'

// ---------------------------------------------------------------- file-authority

export type FileAuthorityErrorCode =
  | 'INVALID_PATH'
  | 'INVALID_OPTION'
  | 'INVALID_CONTENT'
  | 'UNSAFE_ENTRY'
  | 'UNSUPPORTED_BACKEND'
  | 'AUTHORITY_CLOSED'
  | 'ROOT_CHANGED'
  | 'FILE_CHANGED'
  | 'OVER_BUDGET'
  | 'ENTRY_EXISTS'
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
  /** A bad argument: which argument or option is at fault ('segments', 'options.maxBytes', ...). */
  readonly argument?: string
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
  /** Only with `withStats: true`: the entry's stat, observed without following it. */
  readonly stat?: FileStat
}

/** A listing's entries (with `withStats: true`, each has its `stat`). */
export type DirectoryListing<Entry extends DirectoryEntry = DirectoryEntry> = Entry[] & { readonly omitted: number }

export interface ListOptions {
  /** Each entry's `stat`, as `stat` returns it. Default false. */
  withStats?: boolean
}

export interface FileStat {
  readonly kind: 'file' | 'directory' | 'symlink' | 'other'
  /** Bytes (a symlink: the link's own size). */
  readonly size: number
  readonly mtimeMs: number
  /** Permission bits only (mode & 0o777). */
  readonly mode: number
  /** Opaque; equal only for the same entry with the same size, mtime and ctime. */
  readonly version: string
}

export interface VersionedBytes {
  readonly bytes: BufferLike
  readonly version: string
}

export interface RangeRead {
  readonly bytes: BufferLike
  readonly size: number
  readonly version: string
}

export interface WalkEntry {
  readonly path: readonly string[]
  readonly kind: 'file' | 'directory' | 'symlink' | 'other'
  /** Only with `withStats: true`: the entry's stat, observed without following it. */
  readonly stat?: FileStat
}

export type WalkListing<Entry extends WalkEntry = WalkEntry> = Entry[] & { readonly omitted: number; readonly truncated: boolean }

export interface WalkOptions {
  /** The most entries listed; also bounds the work (no directory is read once reached). */
  maxEntries: number
  /** Descend while depth < maxDepth (0: the directory only). Default: no bound. */
  maxDepth?: number
  /** Entry names (each a segment) left out wherever they occur, with their subtrees. */
  exclude?: readonly string[]
  /** Each entry's `stat`, as `stat` returns it. Default false. */
  withStats?: boolean
}

export interface WriteOptions {
  createParents?: boolean
  /** New files only: an integer 0 ... 0o777, less the umask. Default 0o666. */
  mode?: number
  /** Replace only the file of this version (else FILE_CHANGED). */
  ifVersion?: string
  /** Create only; never replace (else ENTRY_EXISTS). */
  ifAbsent?: boolean
  /** false: skip the flushes to disk (file and parent directory); atomicity stays. Default true. */
  durable?: boolean
}

export interface AppendOptions {
  createParents?: boolean
  /** A new file's permission bits: an integer 0 ... 0o777, less the umask. Default 0o666. */
  mode?: number
  /** false: skip the flushes to disk (file, and the parent when created); contiguity stays. Default true. */
  durable?: boolean
}

export interface ReadAuthority extends FileAuthority {
  readBytes(segments: readonly string[], options: { maxBytes: number }): Promise<BufferLike | undefined>
  readBytesSync(segments: readonly string[], options: { maxBytes: number }): BufferLike | undefined
  readVersioned(segments: readonly string[], options: { maxBytes: number }): Promise<VersionedBytes | undefined>
  readVersionedSync(segments: readonly string[], options: { maxBytes: number }): VersionedBytes | undefined
  readRange(segments: readonly string[], options: { offset: number; length: number }): Promise<RangeRead | undefined>
  readRangeSync(segments: readonly string[], options: { offset: number; length: number }): RangeRead | undefined
  /** readBytes decoded as UTF-8 (not UTF-8: INVALID_CONTENT; a byte-order mark is kept). */
  readText(segments: readonly string[], options: { maxBytes: number }): Promise<string | undefined>
  readTextSync(segments: readonly string[], options: { maxBytes: number }): string | undefined
  list(segments: readonly string[], options: ListOptions & { withStats: true }): Promise<DirectoryListing<DirectoryEntry & { readonly stat: FileStat }> | undefined>
  list(segments: readonly string[], options?: ListOptions): Promise<DirectoryListing | undefined>
  listSync(segments: readonly string[], options: ListOptions & { withStats: true }): DirectoryListing<DirectoryEntry & { readonly stat: FileStat }> | undefined
  listSync(segments: readonly string[], options?: ListOptions): DirectoryListing | undefined
  walk(segments: readonly string[], options: WalkOptions & { withStats: true }): Promise<WalkListing<WalkEntry & { readonly stat: FileStat }> | undefined>
  walk(segments: readonly string[], options: WalkOptions): Promise<WalkListing | undefined>
  walkSync(segments: readonly string[], options: WalkOptions & { withStats: true }): WalkListing<WalkEntry & { readonly stat: FileStat }> | undefined
  walkSync(segments: readonly string[], options: WalkOptions): WalkListing | undefined
  stat(segments: readonly string[]): Promise<FileStat | undefined>
  statSync(segments: readonly string[]): FileStat | undefined
}

export interface WriteAuthority extends FileAuthority {
  writeText(segments: readonly string[], text: string | Uint8Array, options?: WriteOptions): Promise<void>
  writeTextSync(segments: readonly string[], text: string | Uint8Array, options?: WriteOptions): void
  writeBytes(segments: readonly string[], bytes: Uint8Array, options?: WriteOptions): Promise<void>
  writeBytesSync(segments: readonly string[], bytes: Uint8Array, options?: WriteOptions): void
  /** Adds the text (UTF-8) at the end of the file, in one piece no other append can split. */
  appendText(segments: readonly string[], text: string | Uint8Array, options?: AppendOptions): Promise<void>
  appendTextSync(segments: readonly string[], text: string | Uint8Array, options?: AppendOptions): void
  appendBytes(segments: readonly string[], bytes: Uint8Array, options?: AppendOptions): Promise<void>
  appendBytesSync(segments: readonly string[], bytes: Uint8Array, options?: AppendOptions): void
  remove(segments: readonly string[], options?: { directory?: boolean }): Promise<boolean>
  removeSync(segments: readonly string[], options?: { directory?: boolean }): boolean
  makeDirectory(segments: readonly string[], options?: { parents?: boolean; mode?: number }): Promise<boolean>
  makeDirectorySync(segments: readonly string[], options?: { parents?: boolean; mode?: number }): boolean
  rename(from: readonly string[], to: readonly string[], options?: { replace?: boolean }): Promise<void>
  renameSync(from: readonly string[], to: readonly string[], options?: { replace?: boolean }): void
  stat(segments: readonly string[]): Promise<FileStat | undefined>
  statSync(segments: readonly string[]): FileStat | undefined
}

export declare function openReadAuthority(root: string, options?: OpenOptions): Promise<ReadAuthority>
export declare function openReadAuthoritySync(root: string, options?: OpenOptions): ReadAuthority
export declare function openWriteAuthority(root: string, options?: OpenOptions): Promise<WriteAuthority>
export declare function openWriteAuthoritySync(root: string, options?: OpenOptions): WriteAuthority
/** A path string (a caller's or a model's) as segments, without touching the filesystem. */
export declare function toSegments(path: string, options?: { root?: string }): string[]

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
  | 'INVALID_OPTION'
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
  /** A bad argument: 'lockPath', 'fn', 'options.timeoutMs', ... */
  readonly argument?: string
}

export interface LockGuard {
  readonly released: boolean
  release(): void
  [Symbol.dispose](): void
}

export declare function tryAcquire(lockPath: string): LockGuard | undefined
export declare function acquire(
  lockPath: string,
  options?: { timeoutMs?: number; signal?: AbortSignalLike }
): Promise<LockGuard>
export declare function withLock<T>(
  lockPath: string,
  fn: () => T | Promise<T>,
  options?: { timeoutMs?: number; signal?: AbortSignalLike }
): Promise<T>

// ----------------------------------------------------------------------- process

export declare const DEFAULT_KILL_GRACE_MS: 2000

export interface KillProcessTreeOptions {
  /** Default 'SIGTERM'. */
  signal?: SignalName
  /** Default DEFAULT_KILL_GRACE_MS; a finite number >= 0. */
  graceMs?: number
  preKill?: () => void | Promise<void>
}

/** What killProcessTree reads of a ChildProcess; a real ChildProcess satisfies it. */
export interface ChildProcessLike {
  readonly pid?: number
  readonly exitCode: number | null
  readonly signalCode: SignalName | null
  once(event: 'exit', listener: (...args: any[]) => void): unknown
  removeListener(event: 'exit', listener: (...args: any[]) => void): unknown
}

export declare function killProcessTree(target: ChildProcessLike | number, options?: KillProcessTreeOptions): Promise<void>

export type ProcessTreeErrorCode = 'NOT_SPAWNED' | 'INVALID_OPTION' | 'HOST_IO' | 'UNSUPPORTED_BACKEND' | 'SCOPE_CLOSED'

/** killProcessTree's, or a process scope's (openProcessScope, its spawn and kill). */
export type ProcessTreeErrorOperation = 'killProcessTree' | 'openProcessScope' | 'spawn' | 'kill'

export interface ProcessTreeErrorDetails {
  /** The argument at fault: 'target', 'target.pid', 'options', 'options.graceMs', ... */
  argument?: string
  hostCode?: string
}

/** HOST_IO, UNSUPPORTED_BACKEND and SCOPE_CLOSED. `instanceof ProcessTreeError` also
 * holds for a ProcessTreeTypeError. */
export declare class ProcessTreeError extends Error {
  constructor(code: 'HOST_IO' | 'UNSUPPORTED_BACKEND' | 'SCOPE_CLOSED', details?: ProcessTreeErrorDetails)
  readonly code: ProcessTreeErrorCode
  readonly operation: ProcessTreeErrorOperation
  readonly argument?: string
  readonly hostCode?: string
}

/** NOT_SPAWNED and INVALID_OPTION: a TypeError. */
export declare class ProcessTreeTypeError extends TypeError {
  constructor(code: 'NOT_SPAWNED' | 'INVALID_OPTION', details?: ProcessTreeErrorDetails)
  readonly code: 'NOT_SPAWNED' | 'INVALID_OPTION'
  readonly operation: ProcessTreeErrorOperation
  readonly argument?: string
  readonly hostCode?: string
}
