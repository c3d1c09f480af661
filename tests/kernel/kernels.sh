# SPDX-License-Identifier: GPL-2.0-only OR MIT
# tests/kernel/kernels.sh - sourced by ci and compare: the kernels they build.
# luf_kernel KIND [kbuild args...] builds (or finds in the cache) one kernel and
# prints its bzImage; progress goes to stderr. Every kind starts from the same
# config (tinyconfig + base.config + kunit.config), so the pristine kernel is the
# patched one without the series:
#   pristine  no patches
#   luf       lib/kernel/patches + luf.config (luf's KUnit suite, CONFIG_LUF_RECLAIM)
#   mutant    luf + luf-debug.config + the test harness (tests/kernel/harness):
#             boot it with luf.mutant=NAME to switch one of luf's rules off, the
#             core's or the memory manager's (one build serves them all; LUF_DEBUG
#             for the rule only its checks can see, DEFER_DIRTY)
#   debug     mutant + debug.config (KASAN, lockdep, DEBUG_VM, ...): the harness
#             changes no behaviour unless luf.mutant=NAME is given, and lets the
#             sanitizer steps show their scan can fail (BAD_ACCESS) without a
#             second build
#   kcsan     debug with KCSAN instead of KASAN (kcsan.config; BAD_RACE)
#   trace     pristine + trace.config (tracepoints and kprobe events: tests/kernel/capture)
luf_kdir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LUF_KERNEL_KEEP=${LUF_KERNEL_KEEP:-24} # every kernel of ci and compare stays cached

luf_kernel() {
	local kind=$1 cfg=$luf_kdir/config series=$luf_kdir/../../lib/kernel/patches/series
	local args=()
	shift
	case "$kind" in
	pristine) args=(--name pristine) ;;
	trace) args=(--name trace --fragment "$cfg/trace.config") ;;
	luf) args=(--name luf --series "$series" --fragment "$cfg/luf.config") ;;
	mutant)
		args=(--name mutant --series "$luf_kdir/harness/series" --fragment "$cfg/luf.config"
			--fragment "$cfg/luf-debug.config" --incremental-from luf)
		;;
	debug | kcsan)
		args=(--name "$kind" --series "$luf_kdir/harness/series" --fragment "$cfg/luf.config"
			--fragment "$cfg/luf-debug.config" --fragment "$cfg/debug.config")
		[ "$kind" = debug ] || args+=(--fragment "$cfg/kcsan.config")
		;;
	*)
		echo "luf_kernel: unknown kind '$kind'" >&2
		return 2
		;;
	esac
	"$luf_kdir/kbuild" --fragment "$cfg/base.config" --fragment "$cfg/kunit.config" \
		"${args[@]}" "$@" | tail -n1
}

# luf_series_hash DIR: the hash of a series file and its patches, in order (the
# "series" of a recorded run: tests/kernel/record, compare's JSON).
luf_series_hash() {
	(cd "$1" && cat series $(grep -v '^#' series)) | sha256sum | cut -c1-16
}

# luf_tree_rev: this tree's commit, with " (with local changes)" if lib/kernel or
# tests/kernel (but the recorded runs in tests/kernel/runs and Markdown) differ from it.
luf_tree_rev() {
	local repo=$luf_kdir/../..
	echo "$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- lib/kernel \
		tests/kernel ':!tests/kernel/runs' ':!*.md' || echo ' (with local changes)')"
}
