export { NodeLockErrorCode, NodeLockError, LockGuard, tryAcquire, acquire, withLock } from '../index'
export { AbortSignalLike } from '../index'
