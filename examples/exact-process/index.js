'use strict'
// node examples/exact-process
// Runs three commands in a temporary directory: one that exits and leaves an output
// file (read under a budget), one that forks a SIGTERM-ignoring grandchild and times
// out (the whole tree is ended), and one whose output file is over the budget.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { runExact } = require('./exact-process.js')

const NODE = process.execPath

// A grandchild in a session of its own that ignores SIGTERM and records its pid.
const STUBBORN = 'process.on("SIGTERM", () => {}); require("fs").writeFileSync("grandchild.pid", String(process.pid)); setInterval(() => {}, 1000)'
const FORKER = `require("child_process").spawn(process.execPath, ["-e", ${JSON.stringify(STUBBORN)}], { detached: true, stdio: "ignore" }); setInterval(() => {}, 1000)`

function alive (pid) {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try { // a zombie has exited
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return process.platform !== 'linux'
  }
}

async function main () {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'exact-process-'))
  try {
    const summarise = 'require("fs").writeFileSync("summary.json", JSON.stringify({ env: process.env, argv: process.argv.slice(1) }))'
    const first = await runExact({
      argv: [NODE, '-e', summarise, 'two words', '$(whoami); *'],
      env: { LANG: 'C.UTF-8', JOB: 'demo' },
      cwd,
      timeoutMs: 10000,
      output: { segments: ['summary.json'], maxBytes: 4096 }
    })
    console.log(`1. ${first.reason} (exit code ${first.exitCode}); output read under 4096 bytes: ${Buffer.from(first.output).toString()}`)

    const second = await runExact({ argv: [NODE, '-e', FORKER], env: {}, cwd, timeoutMs: 1500, graceMs: 300 })
    const pidFile = path.join(cwd, 'grandchild.pid')
    if (!fs.existsSync(pidFile)) throw new Error('the grandchild had not started before the timeout (a very slow host?)')
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'))
    console.log(`2. ${second.reason} (the command ended by ${second.signal}); its grandchild ${grandchild}, which ignored SIGTERM in a session of its own: ${alive(grandchild) ? 'STILL RUNNING' : 'gone'}`)

    try {
      await runExact({
        argv: [NODE, '-e', 'require("fs").writeFileSync("big.bin", Buffer.alloc(2 << 20))'],
        env: {},
        cwd,
        timeoutMs: 10000,
        output: { segments: ['big.bin'], maxBytes: 1 << 20 }
      })
    } catch (err) {
      console.log(`3. a 2 MiB output file under a 1 MiB budget: ${err.code} (decided from its size, nothing loaded)`)
    }
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
