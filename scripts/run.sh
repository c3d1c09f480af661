#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# The main job: build luf, run the demo (shootdowns saved on a reclaim
# workload, immediate vs batched vs luf), then replay the bundled strace
# traces of real programs under immediate, batched, luf and oracle policies
# and draw the chart.
# Usage: scripts/run.sh [luf-demo options]   (scripts/run.sh --help lists them)
# Extra arguments go to luf-demo; a bad one stops the run before the replay
# with luf-demo's message and its exit status (2). Otherwise the exit status
# is luf-demo's or luf-replay's (see luf-replay --help). LUF_RUN_BUILD: the
# build directory (default build/run).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${LUF_RUN_BUILD:-build/run}
scripts/deps.sh run
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DLUF_BUILD_TESTS=OFF -DLUF_BUILD_BENCH=ON &&
	cmake --build "$build" -j"$(nproc)" --target luf-demo luf-replay; } >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "scripts/run.sh: the build in $build failed" >&2
	exit 1
fi
for a in "$@"; do
	case $a in
	-h | --help)
		echo "usage: scripts/run.sh [luf-demo options]: the demo, then luf-replay on bench/traces"
		"$build/examples/demo/luf-demo" --help
		exit 0
		;;
	esac
done
"$build/examples/demo/luf-demo" "$@"
echo
echo "The demo above models kernel reclaim of read-only page cache, where luf defers"
echo "nearly every flush: that is where its savings are (reclaim, migration, tiering)."
echo "The traces below are programs' own munmaps, mostly of writable heap that no policy"
echo "may defer. What luf saves there against batched comes from elsewhere: the kernel's"
echo "batching flushes a whole address space when another thread changes it while a"
echo "batch is pending (flush_tlb_batched_pending()); luf flushes only the CPUs that"
echo "still owe a flush (bench/replay/README.md)."
echo
status=0
"$build/bench/replay/luf-replay" --png "$build/shootdowns.png" bench/traces/*.strace.gz || status=$?
if compgen -G "bench/traces/kernel/*.trace.gz" >/dev/null; then
	echo
	echo "The kernel's own reclaim, traced in the pristine Linux 6.1 under QEMU (-smp 4;"
	echo "tests/kernel/capture): each policy's IPIs, predicted from the kernel's events,"
	echo "beside the TLB shootdowns the traced kernel received (bench/RESULTS.md section 4"
	echo "compares them with the pristine and patched kernels' measured medians)."
	echo
	"$build/bench/replay/luf-replay" --cpus 4 bench/traces/kernel/*.trace.gz || {
		s=$?
		[ "$status" -ne 0 ] || status=$s
	}
fi
exit "$status"
