export { NodeLockErrorCode, NodeLockError, LockGuard, tryAcquire, acquire, withLock } from '../index'
