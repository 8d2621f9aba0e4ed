'use strict'
// A member's child cgroup whose name starts with "." (red team, contract 0.3: "Nothing is
// left on the host after close(): no cgroup directory (a member's own child cgroups
// included)"). Before: the removal walk skipped every name starting with ".", and
// close() left both the scope's cgroup and ".x" for good (2 of 2 runs).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const h = require('./helpers.js')

describe('process scopes: a member\'s child cgroup named with a leading dot', function () {
  this.timeout(60000)
  it('cgroup backend, as root: close() removes ".x", "..y" and the scope\'s cgroup', async function () {
    if (process.platform !== 'linux' || process.getuid() !== 0) this.skip() // cgroup backend: root
    const mod = h.loadWithBackend('cgroup')
    const found = mod.findCgroup()
    if (found === null) this.skip() // no cgroup2 mount this process may use
    const mount = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')).find((f) => f[f.indexOf('-') + 1] === 'cgroup2')[4]
    const scope = await mod.openProcessScope()
    // The command makes two child cgroups of its own cgroup (its path from
    // /proc/self/cgroup, beneath the cgroup2 mount), then stays.
    const sh = `cg=$(sed -n 's/^0:://p' /proc/self/cgroup); mkdir "${mount}$cg/.x" "${mount}$cg/..y" && echo made; exec sleep 100`
    const c = scope.spawn('sh', ['-c', sh], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    c.stdout.on('data', (d) => { out += d })
    assert.ok(await h.waitFor(() => out.includes('made'), 10000), 'the command made its cgroups')
    await scope.close()
    assert.deepEqual(h.leftoverCgroups(found.dir), [], 'a cgroup outlived close()')
  })
})
