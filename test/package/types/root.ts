// Must NOT type-check: the package has no root export (require and import of
// '@scope/agent-os' fail with ERR_PACKAGE_PATH_NOT_EXPORTED), so under every
// moduleResolution an import of the root, or of a file that is not a subpath, is a
// "not a module" (node10) or "cannot find module" (node16, bundler) error.
import { tryAcquire } from '@scope/agent-os' // expect-error
import * as everything from '@scope/agent-os' // expect-error
import type { LockGuard } from '@scope/agent-os' // expect-error
import * as declarations from '@scope/agent-os/index' // expect-error
import * as internal from '@scope/agent-os/lib/node-lock' // expect-error
import * as typesFile from '@scope/agent-os/types/node-lock' // expect-error

export const used: unknown[] = [tryAcquire, everything, declarations, internal, typesFile]
export type Used = LockGuard
