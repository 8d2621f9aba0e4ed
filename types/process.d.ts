export {
  DEFAULT_KILL_GRACE_MS,
  KillProcessTreeOptions,
  ChildProcessLike,
  killProcessTree
} from '../index'
export { SignalName } from '../index'
