'use strict'
// `npm run test:prebuilds` (after `npm run prebuild:all`; .ci/run runs both): what the
// shipped Linux prebuilds ask of the system that loads them, read from their dynamic
// symbol tables with readelf, and the macOS compile-and-link check.
//  - prebuilds/linux-x64 and prebuilds/linux-arm64 need no GLIBC_ symbol version above
//    2.28 (RHEL 8), export only Node-API's module entry points, and carry no private
//    thread-local errno (scripts/platforms/glibc-stat.c says why);
//  - the checks themselves catch what they are for: a library built against glibc 2.33
//    or later that calls fstat (fstat@GLIBC_2.33, what a build on Debian 12 links) fails the
//    glibc check, and a macOS object that exports a symbol of its own or calls a
//    function macOS lacks fails the macOS check;
//  - both macOS targets compile and link from today's sources with -Werror;
//  - prebuilds/win32-x64 ships the process-scope helper, agent_os_scope_helper.exe (x64,
//    a console program, importing only kernel32 and msvcrt).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { run, zig } = require('../../scripts/platforms/lib.js')
const { checkLinux, checkDarwin, compareVersions, GLIBC_MAX } = require('../../scripts/platforms/binaries.js')
const { buildAndCheck } = require('../../scripts/platforms/cross-build.js')

const repo = path.join(__dirname, '..', '..')
const FILE = '@scope+agent-os.node'
const LINUX = { 'linux-x64': 'Advanced Micro Devices X86-64', 'linux-arm64': 'AArch64' }

function zigCc (args, cwd) {
  const z = zig()
  run(z.bin, ['cc', ...args], { cwd, env: { ...process.env, ...z.env }, stdio: ['ignore', 'inherit', 'inherit'] })
}

describe('prebuilds: what they need from the system that loads them', function () {
  let tmp
  before(function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aos-prebuilds-'))
  })
  after(function () {
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  for (const [target, machine] of Object.entries(LINUX)) {
    it(`${target}: no GLIBC_ version above ${GLIBC_MAX}, only Node-API's entry points exported`, function () {
      const file = path.join(repo, 'prebuilds', target, FILE)
      assert.ok(fs.existsSync(file), `prebuilds/${target}/${FILE} is missing: run npm run prebuild:all first`)
      const r = checkLinux(file)
      assert.equal(r.machine, machine)
      assert.ok(r.symbols > 0, 'no versioned glibc symbol read: the reading is broken')
      assert.deepEqual(r.problems, [])
      console.log(`      ${target}: highest GLIBC_${r.highest} over ${r.symbols} symbols (${r.versions.join(' ')})`)
    })
  }

  it('win32-x64: ships agent_os_scope_helper.exe, an x64 console program that needs only kernel32 and msvcrt', function () {
    const file = path.join(repo, 'prebuilds', 'win32-x64', 'agent_os_scope_helper.exe')
    assert.ok(fs.existsSync(file), 'prebuilds/win32-x64/agent_os_scope_helper.exe is missing: run npm run prebuild:all first')
    const { spawnSync } = require('node:child_process')
    const res = spawnSync('x86_64-w64-mingw32-objdump', ['-p', file], { encoding: 'utf8' })
    assert.equal(res.status, 0, res.stderr)
    assert.match(res.stdout, /file format pei-x86-64/)
    assert.match(res.stdout, /Subsystem\s+00000003\s+\(Windows CUI\)/)
    const dlls = [...res.stdout.matchAll(/DLL Name: (\S+)/g)].map((m) => m[1].toLowerCase()).sort()
    assert.deepEqual(dlls, ['kernel32.dll', 'msvcrt.dll'], 'no mingw runtime DLL (libgcc, winpthread) may be needed')
  })

  it('the glibc check fails a library that needs fstat@GLIBC_2.33', function () {
    const src = path.join(tmp, 'new-glibc.c')
    fs.writeFileSync(src, '#include <sys/stat.h>\nint probe(int fd) { struct stat st; return fstat(fd, &st); }\n')
    const so = path.join(tmp, 'new-glibc.so')
    // This machine's compiler links fstat@GLIBC_2.33 when its glibc is 2.33 or later
    // (Debian 12: 2.36), in a fraction of a second; else Zig against glibc 2.34 (it
    // builds that glibc's stubs first, about 50 s).
    const host = process.report.getReport().header.glibcVersionRuntime
    if (host && compareVersions(host, '2.33') >= 0) run('cc', ['-shared', '-fPIC', '-o', so, src], { stdio: ['ignore', 'inherit', 'inherit'] })
    else zigCc(['-target', 'x86_64-linux-gnu.2.34', '-shared', '-fPIC', '-o', so, src], tmp)
    const r = checkLinux(so)
    assert.equal(r.highest, '2.33')
    assert.ok(r.problems.some((p) => p === 'needs fstat@GLIBC_2.33 (above GLIBC_2.28)'), r.problems.join('; '))
    assert.ok(r.problems.some((p) => /exports more than Node-API's entry points: .*probe/.test(p)), r.problems.join('; '))
  })

  it('the glibc check fails a library with its own thread-local errno (what Zig 0.11 links for glibc 2.28 without scripts/platforms/glibc-stat.c)', function () {
    const src = path.join(tmp, 'own-errno.c')
    fs.writeFileSync(src, '__attribute__((visibility("hidden"))) _Thread_local int errno_copy;\nint napi_register_module_v1(void) { return errno_copy; }\n')
    const so = path.join(tmp, 'own-errno.so')
    zigCc(['-target', 'x86_64-linux-gnu.2.28', '-shared', '-fPIC', '-o', so, src], tmp)
    const r = checkLinux(so)
    assert.deepEqual(r.problems, ['has a thread-local storage segment (a private errno the C library never sets)'])
  })

  for (const [target, cpu] of [['darwin-x64', 'x86_64'], ['darwin-arm64', 'arm64']]) {
    it(`${target}: compiles and links with -Werror, -undefined dynamic_lookup; exports checked`, function () {
      const out = path.join(tmp, `${target}.node`)
      const { report } = buildAndCheck(target, { out })
      assert.equal(report.cpu, cpu)
      assert.equal(report.minos, '11.0')
      assert.deepEqual(report.exports.sort(), ['_napi_register_module_v1', '_node_api_module_get_api_version_v1'])
      assert.ok(report.nodeApiImports > 20, `only ${report.nodeApiImports} Node-API symbols imported`)
    })
  }

  it('the macOS check fails an object that exports its own symbol or calls what macOS lacks', function () {
    const src = path.join(tmp, 'bad-mac.c')
    // accept4 is Linux's; macOS's libSystem has none.
    fs.writeFileSync(src, [
      'extern int accept4(int, void *, void *, int);',
      'extern int napi_create_object(void *, void **);',
      'int leaked(int fd) { return accept4(fd, 0, 0, 0); }',
      '__attribute__((visibility("default"))) int napi_register_module_v1(void *env) { void *o; return napi_create_object(env, &o); }',
      ''
    ].join('\n'))
    const obj = path.join(tmp, 'bad-mac.o')
    const bin = path.join(tmp, 'bad-mac.node')
    zigCc(['-target', 'aarch64-macos.11.0', '-c', '-o', obj, src], tmp)
    zigCc(['-target', 'aarch64-macos.11.0', '-shared', '-undefined', 'dynamic_lookup', '-o', bin, obj], tmp)
    const r = checkDarwin(bin, [obj], { cpu: 'arm64', minos: '11.0' })
    assert.ok(r.problems.some((p) => /not Node-API's to dynamic lookup.*_accept4/.test(p)), r.problems.join('; '))
    assert.ok(r.problems.some((p) => /objects export more than Node-API's entry points: _leaked/.test(p)), r.problems.join('; '))
    const wrongCpu = checkDarwin(bin, [obj], { cpu: 'x86_64', minos: '11.0' })
    assert.ok(wrongCpu.problems.some((p) => /is for arm64, not x86_64/.test(p)), wrongCpu.problems.join('; '))
  })
})
