#!/bin/sh
# `npm run test:valgrind`: memcheck over the binding.
#
# 1. Builds a debug copy of the binding (-O1 -g, warnings as errors) out of tree in
#    build-valgrind/ (scripts/build.js --out; the normal build is left alone).
# 2. Runs scripts/valgrind.driver.js (every binding function on its success and error
#    paths, sync and async, GC finalizers, worker teardown, a killed process tree)
#    under valgrind --leak-check=full, node in --jitless mode (no JIT code for memcheck
#    to trip on), against that build (AGENT_OS_BINDING_ROOT).
# 3. scripts/valgrind.report.js reads the log and fails on any error whose stack holds a
#    frame in agent_os.node: invalid reads/writes/frees, uses of uninitialised values,
#    overlapping copies, and "definitely lost" blocks allocated by the binding. Node's
#    own reports (frames outside the binding) are counted but do not fail. Known,
#    bounded costs no Node-API call can avoid are suppressed, each explained, in
#    scripts/valgrind.supp.
#
#   AGENT_OS_VALGRIND_ROUNDS   rounds of the driver's loops (default 20)
#   AGENT_OS_VALGRIND_LOG      where the full log goes (default build-valgrind/memcheck.log)
set -eu
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null 2>&1 || { echo "test:valgrind needs valgrind (apt-get install valgrind)" >&2; exit 1; }
out="$PWD/build-valgrind"
log="${AGENT_OS_VALGRIND_LOG:-$out/memcheck.log}"

CFLAGS="-O1 -g -fno-omit-frame-pointer" node scripts/build.js --werror --out "$out"

status=0
AGENT_OS_BINDING_ROOT="$out" valgrind --tool=memcheck --leak-check=full \
  --show-leak-kinds=definite --errors-for-leak-kinds=definite --num-callers=40 \
  --trace-children=no --suppressions=scripts/valgrind.supp --log-file="$log" \
  node --jitless --expose-gc scripts/valgrind.driver.js || status=$?
if [ "$status" -ne 0 ]; then
  echo "test:valgrind: the driver failed under valgrind (status $status); log: $log" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
node scripts/valgrind.report.js "$log"
