'use strict'
// `npm run test:sanitize`: builds the binding with AddressSanitizer + UndefinedBehavior-
// Sanitizer into build-sanitize/ (the normal build is left alone) and runs the same
// mocha suite against it, with the sanitizer runtimes preloaded into node (and into
// every child node process the tests start, which inherit the environment).
//
// Leak detection is off: node itself does not free everything at exit, and its
// reports would drown the binding's. Leaks are checked by the valgrind run instead.
// Any ASan or UBSan report aborts the process, which fails the test that caused it.

const { spawnSync, execFileSync } = require('node:child_process')
const path = require('node:path')

if (process.platform !== 'linux') {
  console.error('test:sanitize runs on Linux (gcc or clang with libasan and libubsan)')
  process.exit(1)
}

const root = path.join(__dirname, '..')
const out = path.join(root, 'build-sanitize')

function run (cmd, args, env) {
  const res = spawnSync(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: 'inherit' })
  if (res.error) throw res.error
  if (res.status !== 0) process.exit(res.status === null ? 1 : res.status)
}

function runtime (lib) {
  const cc = process.env.CC || 'gcc'
  return execFileSync(cc, [`-print-file-name=${lib}`], { encoding: 'utf8' }).trim()
}

run(process.execPath, [path.join(__dirname, 'build.js'), '--werror', '--sanitize', '--out', out])

const preload = [runtime('libasan.so'), runtime('libubsan.so')].join(' ')
const mocha = require.resolve('mocha/bin/mocha.js')
run(process.execPath, [mocha, ...process.argv.slice(2)], {
  AGENT_OS_BINDING_ROOT: out,
  AGENT_OS_SANITIZED: '1',
  LD_PRELOAD: preload,
  ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1',
  UBSAN_OPTIONS: 'halt_on_error=1:abort_on_error=1:print_stacktrace=1'
})
