'use strict'
// What the host offers process scopes (lib/internal/process-scope.js): the package's
// own helper program, the cgroup v2 directory of this process, the kernel features
// the Linux backends need, and the namespaces this user may make. Each is found once
// per process. Every refusal that makes a scope weaker than the host could give is
// reported through NODE_DEBUG=agent-os, with the reason in words of this package
// (never a path). See docs/process-scopes.md.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const util = require('node:util')
const childProcess = require('node:child_process')
const binding = require('../binding.js')

const HELPER_NAME = process.platform === 'win32' ? 'agent_os_scope_helper.exe' : 'agent_os_scope_helper'
// Private, for the project's tests (read once, at load): act as if the kernel lacked
// pidfd_open (Linux before 5.3); act as if this user could make no namespace.
const NO_PIDFD = process.env.AGENT_OS_PROCESS_SCOPE_NO_PIDFD === '1'
const NO_NAMESPACE = process.env.AGENT_OS_PROCESS_SCOPE_NO_NAMESPACE === '1'

const debuglog = util.debuglog('agent-os')

/** One NODE_DEBUG=agent-os line: `openProcessScope <what>`, fixed words only. */
function note (what) {
  debuglog('openProcessScope %s', what)
}

// errno numbers the helper prints, by name.
const ERRNO_NAMES = new Map(Object.entries(os.constants.errno).map(([name, n]) => [n, name]))

function errnoName (n) {
  return ERRNO_NAMES.get(n) || 'EIO'
}

// ---- the helper program -------------------------------------------------------------

let helperPath // string | null, found once
// The helper program is the package's own: the file beside the binding node-gyp-build
// resolves for the package directory (build/Release for a source build,
// prebuilds/<platform>-<arch>/ for a prebuilt one), never one found on PATH, in the
// working directory or anywhere the caller names. The root is the binding loader's
// (lib/binding.js: the package directory; AGENT_OS_BINDING_ROOT only in the
// project's own sanitizer run, which loads its .node from there too). It must be a
// regular file (not a symlink) whose real path stays inside the package directory,
// owned by root or by the package directory's owner, executable, and neither it nor
// its directory writable by group or others: a file someone else could plant or swap
// is not run, and the scope falls back to `tree` (NODE_DEBUG=agent-os says why; the
// install sets these modes, scripts/install.js).
//
// On Windows (agent_os_scope_helper.exe) the file checks are the ones Windows can
// answer through fs: a regular file, not a symlink, its real path inside the package
// directory. Owners and mode bits are POSIX notions fs.stat cannot report there (who
// may write the package directory is its ACL's business, as for the .node itself).
function findHelper () {
  if (helperPath !== undefined) return helperPath
  helperPath = null
  if (process.platform !== 'linux' && process.platform !== 'win32') return helperPath
  let why
  try {
    const root = fs.realpathSync(process.env.AGENT_OS_BINDING_ROOT || path.join(__dirname, '..', '..'))
    const binding = require('node-gyp-build').resolve(root)
    const file = path.join(path.dirname(binding), HELPER_NAME)
    why = helperRefusal(root, file)
    if (why === undefined) helperPath = file
  } catch {
    why = 'no binding was found to look beside'
  }
  if (why !== undefined) note(`scope helper not used: ${why}; scopes use the tree backend`)
  return helperPath
}

/** Why the helper at `file` is not run, or undefined when it may be. */
function helperRefusal (root, file) {
  let st
  try {
    st = fs.lstatSync(file)
  } catch (err) {
    return err.code === 'ENOENT' ? 'it was not built' : `it cannot be read (${err.code})`
  }
  if (!st.isFile()) return 'it is not a regular file'
  const real = fs.realpathSync(file)
  if (!real.startsWith(root + path.sep)) return 'it is outside the package directory'
  if (process.platform === 'win32') return undefined
  const owner = fs.statSync(root).uid
  const dir = fs.statSync(path.dirname(real))
  if (st.uid !== 0 && st.uid !== owner) return 'it is owned by neither root nor the package directory\'s owner'
  if (dir.uid !== 0 && dir.uid !== owner) return 'its directory is owned by neither root nor the package directory\'s owner'
  if ((st.mode & 0o022) !== 0) return `it is writable by group or others (mode ${(st.mode & 0o777).toString(8)})`
  if ((dir.mode & 0o022) !== 0) return `its directory is writable by group or others (mode ${(dir.mode & 0o777).toString(8)})`
  try {
    fs.accessSync(real, fs.constants.X_OK)
  } catch {
    return 'it is not executable'
  }
  return undefined
}

// ---- cgroup v2 ----------------------------------------------------------------------

let cgroupBase // { dir, cgpath } | null, found once
/** This process's own cgroup v2 directory (the mount from /proc/self/mountinfo, the
 * path from /proc/self/cgroup), or null. */
function findCgroup () {
  if (cgroupBase !== undefined) return cgroupBase
  cgroupBase = null
  if (process.platform !== 'linux') return cgroupBase
  try {
    const own = /^0::(\/.*)$/m.exec(fs.readFileSync('/proc/self/cgroup', 'utf8'))
    if (own === null) return cgroupBase
    for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const sep = line.indexOf(' - ')
      if (sep < 0 || line.slice(sep + 3).split(' ')[0] !== 'cgroup2') continue
      const f = line.slice(0, sep).split(' ')
      if (f[3] !== '/') continue // a bind of a sub-tree: our path is not relative to it
      const mount = f[4].replace(/\\(\d{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)))
      const cgpath = own[1] === '/' ? '' : own[1]
      const dir = mount + cgpath
      if (fs.existsSync(path.join(dir, 'cgroup.procs'))) {
        cgroupBase = { dir, cgpath }
        break
      }
    }
  } catch {}
  return cgroupBase
}

// ---- the kernel ---------------------------------------------------------------------

function nativeScope () {
  const part = binding.part('process')
  return part === undefined ? undefined : part.scope
}

let kernelOk // boolean, checked once
/** pidfd_open (5.3) and waitid(P_PIDFD) (5.4): both Linux backends control and reap
 * through them. Without them a scope could not be ended. */
function kernelSupport (native) {
  if (kernelOk === undefined) {
    const rc = NO_PIDFD ? 'ENOSYS' : native.kernelSupport()
    kernelOk = rc === 0
    if (!kernelOk) note(`kernel lacks pidfd_open or waitid(P_PIDFD) (${rc}); scopes use the tree backend`)
  }
  return kernelOk
}

// ---- namespaces ---------------------------------------------------------------------

let nsMode // Promise<string>: 'n', 'nu' or '' (none), asked once
let cloneOk // Promise<boolean>, asked once

// The helper's probe: makes the namespaces as a scope's command would get them, and
// says "ok" or the step refused and its errno.
function probe (helper, opts) {
  return new Promise((resolve) => {
    let out = ''
    let child
    try {
      child = childProcess.spawn(helper, ['probe', opts], { stdio: ['ignore', 'pipe', 'ignore'] })
    } catch {
      return resolve('spawn EIO')
    }
    child.stdout.setEncoding('latin1')
    child.stdout.on('data', (d) => { out += d })
    child.once('error', () => resolve('spawn EIO'))
    child.once('close', () => {
      const m = /^(ok|[a-z_]+ (\d+))\n/.exec(out)
      if (m === null) return resolve('probe EIO')
      resolve(m[1] === 'ok' ? 'ok' : `${m[1].split(' ')[0]} ${errnoName(Number(m[2]))}`)
    })
  })
}

/**
 * The namespaces a scope's commands run in, for this user on this host: 'n' (a PID
 * and mount namespace; a caller privileged for it, such as root), 'nu' (with a user
 * namespace too, mapping the caller's own ids: an unprivileged caller where the host
 * allows user namespaces), or '' where neither can be made (a sysctl, Ubuntu's
 * AppArmor restriction, a container's seccomp profile): the scope then runs without,
 * and NODE_DEBUG=agent-os says why.
 */
function namespaceMode (helper) {
  if (nsMode !== undefined) return nsMode
  nsMode = (async () => {
    if (NO_NAMESPACE) {
      note('namespaces turned off (AGENT_OS_PROCESS_SCOPE_NO_NAMESPACE); a command can end its scope\'s helpers')
      return ''
    }
    const reasons = []
    for (const opts of process.geteuid() === 0 ? ['n', 'nu'] : ['nu']) {
      const got = await probe(helper, opts)
      if (got === 'ok') return opts
      reasons.push(`${opts === 'n' ? 'pid namespace' : 'user namespace'}: ${got}`)
    }
    note(`no namespace for scope commands (${reasons.join('; ')}); a command can end its scope's helpers`)
    return ''
  })()
  return nsMode
}

/**
 * Whether the helper can start a reaper at all here: clone(CLONE_PARENT) (every Linux
 * kernel has it; qemu-user refuses it). Where it cannot, scopes use `tree`, and
 * NODE_DEBUG=agent-os says why.
 */
function reaperPossible (helper) {
  if (cloneOk !== undefined) return cloneOk
  cloneOk = probe(helper, 'p').then((got) => {
    if (got !== 'ok') note(`the helper cannot start a reaper here (${got}); scopes use the tree backend`)
    return got === 'ok'
  })
  return cloneOk
}

module.exports = { HELPER_NAME, note, findHelper, findCgroup, nativeScope, kernelSupport, namespaceMode, reaperPossible }
