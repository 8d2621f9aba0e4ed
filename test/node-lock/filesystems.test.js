'use strict'
// holderPid on every local filesystem (issue 13): a holder in another process takes
// the guard, and refused attempts here must name its pid. Linux, as root: tmpfs, ext4
// (a loop-mounted image), overlayfs (upper and lower on tmpfs; a guard created in the
// overlay and one copied up from the lower layer), btrfs (a loop-mounted image, at its
// top level and in a subvolume; its stat device is not the superblock device that
// /proc/locks shows). Each filesystem this machine cannot make or mount is skipped,
// and the test says why. Prints, per filesystem, how many refused attempts named the
// holder.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { withLock, tryAcquire } = require('../../lib/node-lock.js')
const { tempDir, startHolder } = require('./helpers.js')
const { skipBecause } = require('../helpers/platform.js')

const ROUNDS = 20

function ok (cmd, args) {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0
}

describe('node-lock: holderPid on every local filesystem', function () {
  this.timeout(120000)
  let dir
  const mounts = []
  before(function () {
    if (process.platform !== 'linux') skipBecause(this, 'mounting filesystems: Linux only')
    if (process.getuid() !== 0) skipBecause(this, 'mounting filesystems needs root (CI runs as root)')
    dir = tempDir()
  })
  after(function () {
    for (const m of mounts.splice(0).reverse()) spawnSync('umount', ['-l', m])
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  function mount (args, at) {
    fs.mkdirSync(at, { recursive: true })
    const r = spawnSync('mount', [...args, at], { encoding: 'utf8' })
    if (r.status !== 0) return (r.stderr || '').trim().split('\n')[0] || `mount exited ${r.status}`
    mounts.push(at)
    return undefined
  }

  // A holder in another process takes `lockPath`; ROUNDS refused attempts here must
  // name it (withLock rejects LOCK_HELD with holderPid), then it releases.
  async function holderNamed (label, lockPath) {
    const h = await startHolder()
    try {
      assert.equal((await h.request('tryAcquire', { lockPath })).held, true)
      let named = 0
      for (let i = 0; i < ROUNDS; i++) {
        try {
          await withLock(lockPath, () => 1)
        } catch (err) {
          assert.equal(err.code, 'LOCK_HELD')
          if (err.holderPid === h.pid) named++
        }
      }
      console.log(`      ${label}: holderPid named the holder in ${named}/${ROUNDS} refused attempts`)
      assert.equal(named, ROUNDS)
      await h.request('release', { lockPath })
      const g = tryAcquire(lockPath)
      assert.ok(g !== undefined, 'free after the holder released')
      g.release()
    } finally {
      await h.stop()
    }
  }

  it('tmpfs', async function () {
    const at = path.join(dir, 'tmpfs')
    const why = mount(['-t', 'tmpfs', '-o', 'size=8m', 'agent-os-test'], at)
    if (why) skipBecause(this, `cannot mount tmpfs here: ${why}`)
    await holderNamed('tmpfs', path.join(at, 'guard.lock'))
  })

  it('ext4 (loop-mounted image)', async function () {
    if (!ok('mkfs.ext4', ['-V'])) skipBecause(this, 'mkfs.ext4 is missing (Debian package e2fsprogs)')
    const img = path.join(dir, 'ext4.img')
    fs.writeFileSync(img, '')
    fs.truncateSync(img, 32 * 1024 * 1024)
    execFileSync('mkfs.ext4', ['-q', '-F', img], { stdio: 'ignore' })
    const at = path.join(dir, 'ext4')
    const why = mount(['-o', 'loop', img], at)
    if (why) skipBecause(this, `cannot loop-mount ext4 here: ${why}`)
    await holderNamed('ext4', path.join(at, 'guard.lock'))
  })

  it('overlayfs (a guard created in the overlay, and one copied up from the lower layer)', async function () {
    const base = path.join(dir, 'ovl')
    const why = mount(['-t', 'tmpfs', '-o', 'size=8m', 'agent-os-test'], base)
    if (why) skipBecause(this, `cannot mount tmpfs for the layers here: ${why}`)
    for (const d of ['lower', 'upper', 'work']) fs.mkdirSync(path.join(base, d))
    fs.writeFileSync(path.join(base, 'lower', 'lower.lock'), '')
    const at = path.join(dir, 'overlay')
    const why2 = mount(['-t', 'overlay', 'agent-os-test', '-o',
      `lowerdir=${path.join(base, 'lower')},upperdir=${path.join(base, 'upper')},workdir=${path.join(base, 'work')}`], at)
    if (why2) skipBecause(this, `cannot mount overlayfs here: ${why2}`)
    await holderNamed('overlayfs, new guard', path.join(at, 'guard.lock'))
    await holderNamed('overlayfs, guard from the lower layer', path.join(at, 'lower.lock'))
  })

  it('btrfs (loop-mounted image: top level and a subvolume)', async function () {
    if (!ok('mkfs.btrfs', ['--version'])) skipBecause(this, 'mkfs.btrfs is missing (Debian package btrfs-progs)')
    const img = path.join(dir, 'btrfs.img')
    fs.writeFileSync(img, '')
    fs.truncateSync(img, 128 * 1024 * 1024)
    const mk = spawnSync('mkfs.btrfs', ['-q', '-f', img], { encoding: 'utf8' })
    if (mk.status !== 0) skipBecause(this, `mkfs.btrfs failed here: ${(mk.stderr || '').trim().split('\n')[0]}`)
    const at = path.join(dir, 'btrfs')
    const why = mount(['-o', 'loop', img], at)
    if (why) skipBecause(this, `cannot loop-mount btrfs here (no btrfs in this kernel?): ${why}`)
    await holderNamed('btrfs, top level', path.join(at, 'guard.lock'))
    const sub = path.join(at, 'sub')
    if (!ok('btrfs', ['subvolume', 'create', sub])) skipBecause(this, 'btrfs subvolume create failed')
    await holderNamed('btrfs, subvolume', path.join(sub, 'guard.lock'))
  })
})
