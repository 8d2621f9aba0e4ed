'use strict'
// node-lock: this process holds a lock; another process is refused at once and
// told who holds it; after release the other process gets it.
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { tryAcquire, acquire } = require('../lib/node-lock.js')

const LIB = path.join(__dirname, '..', 'lib', 'node-lock.js')

// Runs in a second process: one tryAcquire, and one withLock to learn the holder.
function otherProcess (lockPath) {
  const script = `
    const { tryAcquire, withLock } = require(${JSON.stringify(LIB)})
    const lockPath = ${JSON.stringify(lockPath)}
    const guard = tryAcquire(lockPath)
    if (guard !== undefined) {
      console.log('pid ' + process.pid + ': tryAcquire -> acquired')
      guard.release()
    } else {
      withLock(lockPath, () => {}).catch((err) => {
        console.log('pid ' + process.pid + ': tryAcquire -> undefined; withLock -> ' + err.code +
          ' (holderPid ' + err.holderPid + ')')
      })
    }`
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim()
}

module.exports = async function demo (dir) {
  const lockPath = path.join(dir, 'agent.lock')
  const guard = tryAcquire(lockPath)
  console.log(`pid ${process.pid}: tryAcquire -> acquired`)
  console.log(`  another process while it is held: ${otherProcess(lockPath)}`)
  guard.release()
  console.log(`pid ${process.pid}: released (released: ${guard.released})`)
  console.log(`  another process now: ${otherProcess(lockPath)}`)
  const again = await acquire(lockPath, { timeoutMs: 1000 })
  again[Symbol.dispose]()
  console.log(`pid ${process.pid}: acquire -> acquired and disposed`)
}
