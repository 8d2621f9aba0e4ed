'use strict'
// Reads a memcheck log (scripts/valgrind.sh) and fails when any error or definitely
// lost block has a frame in the binding: a frame "in .../agent_os.node", or, where the
// debug build's symbols are resolved, a function of the binding (aos_*, named after
// its layer). Prints one figure line.
const fs = require('node:fs')

const log = fs.readFileSync(process.argv[2], 'utf8')
// Blocks: runs of "==pid== " lines separated by an empty "==pid== " line.
const blocks = []
let cur = []
for (const line of log.split('\n')) {
  const m = /^==\d+== ?(.*)$/.exec(line)
  if (m === null) continue
  if (m[1] === '') {
    if (cur.length) blocks.push(cur)
    cur = []
  } else {
    cur.push(m[1])
  }
}
if (cur.length) blocks.push(cur)

const KINDS = /^(Invalid (read|write|free)|Mismatched free|Conditional jump or move depends on uninitialised|Use of uninitialised|Syscall param .* (points to unaddressable|uninitialised)|Source and destination overlap|.* bytes in .* blocks are definitely lost|Argument 'size' of function .* has a fishy)/
let binding = 0
let other = 0
const shown = []
for (const b of blocks) {
  if (!KINDS.test(b[0])) continue
  if (b.some((l) => l.includes('agent_os.node') || /\b(at|by) 0x[0-9A-F]+: aos_\w+ \(/.test(l))) {
    binding++
    if (shown.length < 10) shown.push(b.join('\n'))
  } else {
    other++
  }
}
const summary = (/ERROR SUMMARY: (\d+) errors/.exec(log) || [])[1]
const suppressed = (/ERROR SUMMARY: .*suppressed: (\d+) from/.exec(log) || [])[1]
const definitely = (/definitely lost: ([\d,]+) bytes in ([\d,]+) blocks/.exec(log) || [])
console.log(`figure: valgrind bindingErrors=${binding} otherReports=${other} errorSummary=${summary} suppressed=${suppressed} ` +
  `definitelyLostTotal=${definitely[1] || 0}B`)
for (const s of shown) console.error(`\n${s}`)
process.exitCode = binding === 0 ? 0 : 1
