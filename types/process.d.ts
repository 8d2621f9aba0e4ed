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
