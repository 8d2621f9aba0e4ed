// Must NOT type-check: test/package/types.test.js expects an error on every line
// marked below, so the declarations are known to constrain, not just to exist.
import { openReadAuthoritySync, openWriteAuthoritySync } from '@scope/agent-os/file-authority'
import { tryAcquire } from '@scope/agent-os/node-lock'
import { killProcessTree, openProcessScope } from '@scope/agent-os/process'

const r = openReadAuthoritySync('/x')
r.readBytesSync(['a']) // expect-error: maxBytes is required
r.writeTextSync(['a'], 'x') // expect-error: a reader cannot write
r.walkSync([], {}) // expect-error: maxEntries is required
r.readRangeSync(['a'], { offset: 0 }) // expect-error: length is required
r.removeSync(['a']) // expect-error: a reader cannot remove
r.appendTextSync(['a'], 'x') // expect-error: a reader cannot append
r.readTextSync(['a']) // expect-error: maxBytes is required
r.listSync([])?.[0]?.stat.size // expect-error: without withStats a stat may be absent
r.walkSync([], { maxEntries: 1, exclude: 'node_modules' }) // expect-error: exclude is a list of names
const w = openWriteAuthoritySync('/x')
w.writeBytesSync(['a'], 'text') // expect-error: writeBytes takes bytes
w.renameSync(['a'], 'b') // expect-error: the target is a segment list
w.writeTextSync(['a'], 'x', { ifVersion: 1 }) // expect-error: a version is a string
w.appendBytesSync(['a'], 'text') // expect-error: appendBytes takes bytes
w.appendTextSync(['a'], 'x', { ifAbsent: true }) // expect-error: appends take no ifAbsent
tryAcquire('/x')?.release(1) // expect-error: release takes no argument
killProcessTree({ pid: 1 }) // expect-error: not a ChildProcessLike
killProcessTree({ pid: 1, exitCode: null, signalCode: null, once: () => 0, removeListener: () => 0 }, { signal: 'SIGNOPE' }) // expect-error: unknown signal
openProcessScope().then((s) => s.kill({ signal: 'SIGNOPE' })) // expect-error: unknown signal
openProcessScope().then((s) => s.spawn(['sh'])) // expect-error: command is a string
