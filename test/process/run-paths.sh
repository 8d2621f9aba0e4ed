#!/usr/bin/env bash
# The process suite (test/process) under each fallback path, forced on a host that
# has the feature (docs/process.md, "Fallback paths"). `npm test` runs the default
# path; this runs the others, each in its own Node process, since the switches are
# read once when lib/process.js loads:
#   no-pgroup-fd  no PIDFD_SIGNAL_PROCESS_GROUP (kernels before 6.9)
#   no-pidfd      no pidfd at all: pid + start time identities, guarded kill(-pgid),
#                 the portable walk macOS takes (kernels before 5.3)
#   no-proc       /proc hidden: a private mount namespace with an empty tmpfs on
#                 /proc (root and unshare(1) needed; the tests read a second mount of
#                 the real /proc, handed over in AOS_TEST_PROC)
# Usage: test/process/run-paths.sh [path...]   (default: all three and no-proc)
# Extra mocha arguments (e.g. a --grep) may be given in AOS_MOCHA_ARGS.
set -uo pipefail
cd "$(dirname "$0")/../.."

paths=("$@")
[ ${#paths[@]} -eq 0 ] && paths=(no-pgroup-fd no-pidfd no-proc)
# shellcheck disable=SC2206 # word splitting of AOS_MOCHA_ARGS is meant
mocha=(node node_modules/mocha/bin/mocha.js --no-config --exit --timeout 120000 --reporter spec ${AOS_MOCHA_ARGS:-} 'test/process/*.test.js')
status=0
for p in "${paths[@]}"; do
  echo "::: process suite, forced path: $p"
  case "$p" in
    no-proc)
      if [ "$(id -u)" -ne 0 ] || ! command -v unshare > /dev/null; then
        echo "::: no-proc skipped: needs root and unshare"
        continue
      fi
      real=$(mktemp -d)
      AOS_TEST_PROC="$real" unshare -m sh -c '
        mount --make-rprivate / && mount --bind /proc "$AOS_TEST_PROC" &&
        mount -t tmpfs none /proc && exec "$@"' sh "${mocha[@]}" || status=1
      rmdir "$real" 2> /dev/null
      ;;
    *)
      AGENT_OS_PROCESS_FORCE="$p" "${mocha[@]}" || status=1
      ;;
  esac
done
exit "$status"
