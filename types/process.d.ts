export {
  DEFAULT_KILL_GRACE_MS,
  KillProcessTreeOptions,
  ChildProcessLike,
  killProcessTree
} from '../index'
export { SignalName } from '../index'

export type ProcessTreeErrorCode = 'NOT_SPAWNED' | 'INVALID_OPTION' | 'HOST_IO' | 'UNSUPPORTED_BACKEND'

interface ProcessTreeErrorDetails {
  /** The argument at fault: 'target', 'target.pid', 'options', 'options.graceMs', ... */
  argument?: string
  hostCode?: string
}

/** HOST_IO and UNSUPPORTED_BACKEND. `instanceof ProcessTreeError` also holds for a
 * ProcessTreeTypeError. */
export declare class ProcessTreeError extends Error {
  constructor(code: 'HOST_IO' | 'UNSUPPORTED_BACKEND', details?: ProcessTreeErrorDetails)
  readonly code: ProcessTreeErrorCode
  readonly operation: 'killProcessTree'
  readonly argument?: string
  readonly hostCode?: string
}

/** NOT_SPAWNED and INVALID_OPTION: a TypeError. */
export declare class ProcessTreeTypeError extends TypeError {
  constructor(code: 'NOT_SPAWNED' | 'INVALID_OPTION', details?: ProcessTreeErrorDetails)
  readonly code: 'NOT_SPAWNED' | 'INVALID_OPTION'
  readonly operation: 'killProcessTree'
  readonly argument?: string
  readonly hostCode?: string
}

// Process scopes (docs/process-scopes.md).
import type { ChildProcess, SpawnOptions } from 'node:child_process'

/** Which mechanism holds a scope: a cgroup v2 cgroup, a child-subreaper helper
 * (Linux), or process groups and tree walks (macOS, Windows, no helper). */
export type ProcessScopeBackend = 'cgroup' | 'subreaper' | 'tree'

export interface ProcessScopeKillOptions {
  /** Sent to every process in the scope first; default 'SIGTERM'. */
  signal?: NodeJS.Signals
  /** Wait this long for the scope to empty before SIGKILL; default 2000. */
  graceMs?: number
}

export interface ProcessScope {
  readonly backend: ProcessScopeBackend
  readonly closed: boolean
  /** child_process.spawn's signature; the command and everything it starts are in the scope. */
  spawn(command: string, args?: readonly string[], options?: SpawnOptions): ChildProcess
  spawn(command: string, options?: SpawnOptions): ChildProcess
  /** Pids of the processes in the scope now. */
  pids(): number[]
  /** Signals everything, SIGKILL after graceMs; settles when the scope is empty. Never
   * rejects for a process that will not die; rejects only for bad options. */
  kill(options?: ProcessScopeKillOptions): Promise<void>
  /** SIGKILL to everything, settles when empty, releases the scope. Idempotent. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** Opens an empty process scope on the best backend this host offers. */
export declare function openProcessScope(options?: Record<string, never>): Promise<ProcessScope>
