'use strict'
// node examples/mailbox-lock [directory]
// Delivers to a box, lets another process hold the box so a delivery times out naming
// that process, kills the holder with SIGKILL and delivers at once. Uses a temporary
// directory unless given one.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { fork } = require('node:child_process')
const { once } = require('node:events')
const { openMailboxes } = require('./mailbox-lock.js')

// The second role of this file: a slow process that holds a box until it is killed.
async function hold (dir, box) {
  const mailboxes = await openMailboxes(dir)
  await mailboxes.withBox(box, { timeoutMs: 10000 }, () => {
    process.send('holding')
    // Forever, until killed: the IPC listener keeps this process alive.
    return new Promise(() => process.on('message', () => {}))
  })
}

async function main () {
  const given = process.argv[2]
  const dir = given === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'mailbox-lock-')) : path.resolve(given)
  const mailboxes = await openMailboxes(dir)
  try {
    console.log(`mailboxes in ${dir}`)
    await mailboxes.deliver('inbox', { from: 'planner', text: 'start step 1' })
    const n = await mailboxes.deliver('inbox', { from: 'planner', text: 'start step 2' })
    console.log(`delivered 2 messages to inbox (${n} waiting)`)

    const holder = fork(__filename, ['--hold', dir, 'inbox'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    await once(holder, 'message')
    console.log(`pid ${holder.pid} holds inbox and is slow`)
    const refused = await mailboxes.deliver('inbox', { text: 'step 3' }, { timeoutMs: 300 }).then(() => undefined, (err) => err)
    if (refused === undefined || refused.code !== 'MAILBOX_BUSY') throw refused ?? new Error('delivered although the box was held')
    console.log(`deliver with a 300 ms wait: ${refused.code}: ${refused.message}`)
    holder.kill('SIGKILL')
    await once(holder, 'exit')
    console.log(`pid ${holder.pid} was killed with SIGKILL`)
    await mailboxes.deliver('inbox', { text: 'step 3' }, { timeoutMs: 0 })
    console.log('deliver with no wait at all: delivered (the dead holder freed the box at once)')
    const messages = await mailboxes.take('inbox')
    console.log(`took ${messages.length} messages: ${messages.map((m) => m.text).join(' | ')}`)
  } finally {
    await mailboxes.close()
    if (given === undefined) fs.rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] === '--hold') {
  hold(process.argv[3], process.argv[4]).catch((err) => { console.error(err); process.exit(1) })
} else {
  main().catch((err) => {
    console.error(err)
    process.exitCode = 1
  })
}
