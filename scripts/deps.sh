#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Install the Debian 12 packages luf needs, only those that are missing.
# Usage: scripts/deps.sh run|test|kernel  (run: the main job; test: every test;
#        kernel: what tests/kernel/ needs: run and vendor (Debian's kernel and
#        headers), kbuild (linux-source-6.1 and the kernel's build dependencies),
#        boot (QEMU, busybox, static guest programs; e2fsprogs for the ext4 images;
#        fio and stress-ng, the peers workload's suites; ndctl, which makes the
#        tier workload's emulated NVDIMM a device-DAX namespace),
#        checkpatch (python3-ply, python3-git))
set -euo pipefail

base=(cmake make gcc pkg-config zlib1g-dev)
tests=(liburcu-dev libck-dev doxygen gnuplot-nox clang libcmocka-dev libcriterion-dev libclang-rt-14-dev valgrind spin python3 linux-source-6.1 abigail-tools)
kernel=(linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static cpio libc6-dev
	linux-source-6.1 xz-utils patch flex bison bc libelf-dev libssl-dev dwarves sparse python3
	python3-ply python3-git e2fsprogs fio stress-ng ndctl)

case "${1:-test}" in
run) want=("${base[@]}" gnuplot-nox) ;;
test) want=("${base[@]}" "${tests[@]}" "${kernel[@]}") ;;
kernel) want=("${base[@]}" "${kernel[@]}") ;;
*) echo "usage: $0 run|test|kernel" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "luf: installing missing Debian packages: ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null; then
		sudo=(sudo)
	else
		echo "luf: not root and no sudo; as root run: apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
