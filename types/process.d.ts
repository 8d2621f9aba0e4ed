export {
  DEFAULT_KILL_GRACE_MS,
  KillProcessTreeOptions,
  ChildProcessLike,
  killProcessTree
} from '../index'
export { SignalName } from '../index'
import type { SignalName } from '../index'
export { ProcessTreeErrorCode, ProcessTreeErrorOperation, ProcessTreeErrorDetails, ProcessTreeError, ProcessTreeTypeError } from '../index'

// The scope types below stay here, not in index.d.ts: they name Node's own types
// (ChildProcess, SpawnOptions). With @types/node installed they are Node's own; without
// it the import below resolves to nothing and `spawn` is typed loosely (any), so the
// package still type-checks without @types/node (the directive covers only that line).

// Process scopes (docs/process-scopes.md).
// @ts-ignore: node:child_process has types only where @types/node is installed
import type { ChildProcess, SpawnOptions } from 'node:child_process'

/** Which mechanism holds a scope: a cgroup v2 cgroup (Linux, where the caller may make
 * one; its commands in a PID namespace too), a reaper helper (Linux: the init of a PID
 * namespace of its own where the host allows one, else a child subreaper), a
 * kill-on-close Job Object (Windows), or process groups and tree walks (macOS, or no
 * usable helper). docs/process-scopes.md says what each holds. */
export type ProcessScopeBackend = 'cgroup' | 'subreaper' | 'job' | 'tree'

export interface ProcessScopeKillOptions {
  /** Sent to every process in the scope first; default 'SIGTERM'. */
  signal?: SignalName
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
  /** Signals everything, SIGKILL after graceMs; settles when the scope is empty (on
   * Windows everything is ended at once: no signal, no grace). Never rejects for a
   * process that will not die; rejects only for bad options (ProcessTreeTypeError). */
  kill(options?: ProcessScopeKillOptions): Promise<void>
  /** SIGKILL to everything, settles when empty, releases the scope. Idempotent. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** Opens an empty process scope on the best backend this host offers. */
export declare function openProcessScope(options?: Record<string, never>): Promise<ProcessScope>
