'use strict'
// Issue 12, the write side, through the public API and real users (CI runs as root;
// the other user is `nobody` through setpriv), under both resolvers:
// - finding 1: a file planted by another user with mode 06777 and replaced by the
//   (privileged) writer keeps no set-id bit: 0o777, owned by the writer;
// - finding 2: another user watching the directory with inotify, opening every
//   temporary file the moment it appears, never opens the temporary file of a 0600
//   file's replacement (and so never reads the secret written into it).
// The C attacker is test/file-authority/native/watch_open.c.
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { once } = require('node:events')
const fa = require('../../lib/file-authority.js')
const { makeSandbox, resolvers, useResolver } = require('../helpers/fs-layouts.js')

const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups']
const { packageCopyForOtherUser } = require('../helpers/other-user.js')
const WRITES = Number(process.env.AOS_HARDEN_WRITES || 200)

function canActAsNobody () {
  return process.platform === 'linux' && process.getuid() === 0 &&
    spawnSync('setpriv', [...NOBODY, 'true'], { stdio: 'ignore' }).status === 0
}

function asNobody (cmd, args, options) {
  return spawnSync('setpriv', [...NOBODY, cmd, ...args], { encoding: 'utf8', ...options })
}

function hostCompiler () {
  for (const cc of [process.env.CC, 'cc', 'gcc', 'clang']) {
    if (cc && spawnSync(cc, ['--version'], { stdio: 'ignore' }).status === 0) return cc
  }
  return undefined
}

for (const resolver of resolvers()) {
  describe(`file-authority write hardening, another user (${resolver} resolver)`, function () {
    this.timeout(300000)
    let s, w
    beforeEach(function () {
      if (!canActAsNobody()) this.skip() // needs Linux, root and setpriv (CI has all three)
      s = makeSandbox('aos-harden-')
      fs.chmodSync(s.base, 0o755)
      useResolver(resolver)
      w = fa.openWriteAuthoritySync(s.root)
    })
    afterEach(function () {
      if (w) w.closeSync()
      if (s) s.cleanup()
      w = s = undefined
    })

    it('an ifVersion write by a writer who may replace a file but not read it (mode 0, another owner) still commits, sync and async', function () {
      // The commit's lock on the replaced file needs a descriptor of it; a file the
      // writer cannot open is committed as without that lock, never refused.
      fs.chmodSync(s.base, 0o777)
      fs.chmodSync(s.root, 0o777)
      for (const mode of ['sync', 'async']) {
        const p = path.join(s.root, `unreadable-${mode}`)
        fs.writeFileSync(p, 'old')
        fs.chmodSync(p, 0)
        const r = asNobody(process.execPath, ['-e', `
          const fa = require(${JSON.stringify(path.join(packageCopyForOtherUser(), 'lib', 'file-authority.js'))})
          const root = ${JSON.stringify(s.root)}
          const v = fa.openReadAuthoritySync(root).statSync([${JSON.stringify(path.basename(p))}]).version
          const w = fa.openWriteAuthoritySync(root)
          const seg = [${JSON.stringify(path.basename(p))}]
          Promise.resolve(${JSON.stringify(mode)} === 'sync' ? w.writeTextSync(seg, 'new', { ifVersion: v }) : w.writeText(seg, 'new', { ifVersion: v }))
            .then(() => console.log('ok'), (err) => console.log(err.code, err.hostCode))`])
        assert.equal(r.stdout.trim(), 'ok', r.stderr)
        assert.equal(fs.readFileSync(p, 'utf8'), 'new')
      }
    })

    it('finding 1: a planted 06777 file, replaced, keeps no set-id bit and belongs to the writer', async function () {
      fs.chmodSync(s.root, 0o1777)
      for (const [name, write] of [['sync', (seg) => w.writeTextSync(seg, 'new')], ['async', (seg) => w.writeText(seg, 'new')]]) {
        const p = path.join(s.root, `planted-${name}`)
        const planted = asNobody('sh', ['-c', 'printf "#!/bin/sh\\n" > "$0" && chmod 6777 "$0"', p])
        assert.equal(planted.status, 0, planted.stderr)
        const before = fs.statSync(p)
        assert.equal(before.uid, 65534)
        assert.equal((before.mode & 0o7777).toString(8), '6777', 'the planter set both set-id bits')
        await write([`planted-${name}`])
        const after = fs.statSync(p)
        assert.equal(fs.readFileSync(p, 'utf8'), 'new')
        assert.equal(after.uid, process.getuid(), 'the new file belongs to the writer')
        assert.equal((after.mode & 0o7777).toString(8), '777', 'mode & 0o777: no set-uid, no set-gid')
      }
    })

    it(`finding 2: a watcher who may not read a 0600 file never opens its temporary file (${WRITES} writes)`, async function () {
      const cc = hostCompiler()
      if (cc === undefined) this.skip()
      const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-watch-'))
      try {
        fs.chmodSync(bin, 0o755)
        const exe = path.join(bin, 'watch_open')
        const built = spawnSync(cc, ['-std=c11', '-Wall', '-Wextra', '-Werror', '-o', exe, path.join(__dirname, 'native', 'watch_open.c')], { encoding: 'utf8' })
        assert.equal(built.status, 0, built.stderr)
        fs.chmodSync(s.root, 0o755)
        const secret = path.join(s.root, 'secret')
        fs.writeFileSync(secret, 'old')
        fs.chmodSync(secret, 0o600)
        assert.notEqual(asNobody('cat', [secret]).status, 0, 'nobody may not read the file itself')
        const watcher = spawn('setpriv', [...NOBODY, exe, s.root, 'SECRET-'], { stdio: ['pipe', 'pipe', 'inherit'] })
        let out = ''
        watcher.stdout.setEncoding('utf8')
        watcher.stdout.on('data', (d) => { out += d })
        while (!out.includes('watching\n')) {
          if (watcher.exitCode !== null) throw new Error('watcher failed: ' + out)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        for (let i = 0; i < WRITES; i++) {
          if (i % 2) w.writeTextSync(['secret'], `SECRET-${i}`)
          else await w.writeText(['secret'], `SECRET-${i}`)
        }
        const exited = once(watcher, 'exit')
        watcher.stdin.end()
        await exited
        const m = /^opened (\d+) leaked (\d+)$/m.exec(out)
        assert.ok(m, out)
        console.log(`      ${resolver}: ${WRITES} writes, watcher opened ${m[1]}, leaked ${m[2]}`)
        assert.equal((fs.statSync(secret).mode & 0o777).toString(8), '600')
        assert.deepEqual([Number(m[1]), Number(m[2])], [0, 0], 'no temporary file opened, no secret read')
      } finally {
        fs.rmSync(bin, { recursive: true, force: true })
      }
    })
  })
}
