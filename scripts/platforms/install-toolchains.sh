#!/usr/bin/env bash
# `bash scripts/platforms/install-toolchains.sh`: installs, from Debian's archive, what
# the cross builds and the emulated test runs need, then registers qemu for arm64
# binaries with the kernel (binfmt_misc), so an emulated node can spawn emulated
# children. Debian 12 (bookworm) or later, as root (or through sudo); safe to run again.
#
#   gcc-aarch64-linux-gnu, libc6-dev-arm64-cross   C cross compiler and glibc, linux-arm64
#   qemu-user, qemu-user-binfmt                     runs linux-arm64 programs
#   gcc-mingw-w64-x86-64, binutils-mingw-w64-x86-64 C cross compiler and dlltool, win32-x64
#   wine64                                          runs win32-x64 programs (64-bit only:
#                                                   no i386 architecture is needed)
#   btrfs-progs                                     mkfs.btrfs, for node-lock's file-system
#                                                   tests (.ci/run runs this script first)
#   strace                                          node-lock's no-sleep test, the read
#                                                   path's outside-lookup test
#
# The Node.js binaries for the other targets and Zig's C compiler (glibc 2.28 and macOS
# builds) come from the npm registry, fetched on first use by scripts/platforms/lib.js
# into .platforms/, each checked against its pinned integrity (see docs/platforms.md).
set -euo pipefail
SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive

$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
  qemu-user qemu-user-binfmt \
  gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 \
  wine64 \
  btrfs-progs strace

# qemu looks for the arm64 loader and C library under /etc/qemu-binfmt/aarch64 unless
# QEMU_LD_PREFIX says otherwise; point it at the cross C library, so an arm64 program
# started with a scrubbed environment (no QEMU_LD_PREFIX) still runs.
if [ ! -e /etc/qemu-binfmt/aarch64 ]; then
  $SUDO mkdir -p /etc/qemu-binfmt
  $SUDO ln -s /usr/aarch64-linux-gnu /etc/qemu-binfmt/aarch64
fi

# qemu-user-binfmt ships /usr/lib/binfmt.d/qemu-aarch64.conf; systemd-binfmt loads it at
# boot. Containers and CI machines without systemd never run that, so load it here.
bin=/proc/sys/fs/binfmt_misc
if [ ! -e "$bin/register" ]; then
  $SUDO mount -t binfmt_misc binfmt_misc "$bin" || true
fi
if [ -e "$bin/register" ]; then
  if [ ! -e "$bin/qemu-aarch64" ]; then
    $SUDO sh -c "cat /usr/lib/binfmt.d/qemu-aarch64.conf > $bin/register" || true
  fi
fi
if [ -e "$bin/qemu-aarch64" ]; then
  echo "binfmt: qemu-aarch64 registered"
else
  echo "binfmt: qemu-aarch64 NOT registered (no binfmt_misc here): the arm64 run cannot" \
    "start arm64 child processes, and tests that spawn node fail" >&2
fi
