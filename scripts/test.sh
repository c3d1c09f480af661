#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Build and run every test of luf, in these stages (each its own build dir
# under build/):
#   gcc      -Werror build with gcc; every ctest label but tsan-only runs
#   clang    -Werror build with clang; unit, property and fuzz (libFuzzer) tests
#   asan     AddressSanitizer + UndefinedBehaviorSanitizer; unit, property
#            (no mutants: -DLUF_BUILD_MUTANTS=OFF, they run in gcc and clang)
#   tsan     ThreadSanitizer (clang); the tests labelled tsan (of the mutants
#            only the memory-ordering one only ThreadSanitizer can catch)
#   valgrind memcheck over the unit tests (--error-exitcode)
# Usage: scripts/test.sh [stage...]   (default: all stages)
# A user can run one group from a build dir: ctest -L unit|property|tsan|valgrind|model|...
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
jobs=$(nproc)
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(gcc clang asan tsan valgrind)
total_pass=0
total_fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

build() { # dir, cmake args...
	local dir=$1
	shift
	if ! cmake -S . -B "$dir" -DLUF_BUILD_EXAMPLES=ON "$@" >"$log" 2>&1 ||
		! cmake --build "$dir" -j"$jobs" >"$log" 2>&1; then
		tail -n 40 "$log"
		echo "luf: stage $stage: the build failed" >&2
		return 1
	fi
}

run_ctest() { # dir, ctest args...
	local dir=$1 rc=0 pass fail
	shift
	(cd "$dir" && ctest --output-on-failure -j"$jobs" "$@") 2>&1 | tee "$log" || rc=1
	cp "$dir/Testing/Temporary/LastTest.log" "$dir/Testing/Temporary/LastTest-$stage.log" 2>/dev/null || true
	if grep -q "No tests were found" "$log"; then
		echo "luf: no tests found in $dir for: $*" >&2
		rc=1
	fi
	pass=$(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\2 \1/p' "$log" | tail -n1)
	if [ -n "$pass" ]; then
		set -- $pass
		fail=$2
		total_pass=$((total_pass + $1 - fail))
		total_fail=$((total_fail + fail))
	fi
	return $rc
}

status=0
for stage in "${stages[@]}"; do
	echo "=== luf test stage: $stage"
	t0=$(date +%s)
	case "$stage" in
	gcc)
		build build/gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo || { status=1; continue; }
		run_ctest build/gcc -LE '^valgrind$' || status=1
		;;
	clang)
		build build/clang -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo || { status=1; continue; }
		run_ctest build/clang -L '^(unit|property|fuzz)$' || status=1
		;;
	asan)
		build build/asan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DLUF_BUILD_BENCH=OFF \
			-DLUF_BUILD_MUTANTS=OFF "-DCMAKE_C_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1" ||
			{ status=1; continue; }
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			run_ctest build/asan -L '^(unit|property)$' -LE '^(valgrind|mutant)$' || status=1
		;;
	tsan)
		build build/tsan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DLUF_BUILD_BENCH=OFF \
			-DLUF_BUILD_MUTANTS=OFF "-DCMAKE_C_FLAGS=-fsanitize=thread -fno-omit-frame-pointer -O1" || { status=1; continue; }
		TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_ctest build/tsan -L '^tsan$' || status=1
		;;
	valgrind)
		build build/gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo || { status=1; continue; }
		run_ctest build/gcc -L '^valgrind$' || status=1
		;;
	*)
		echo "unknown stage $stage" >&2
		exit 2
		;;
	esac
	echo "=== stage $stage took $(($(date +%s) - t0)) s"
done
# The mutant summaries (each suite counts the rule-breaking builds it caught).
for f in build/*/Testing/Temporary/LastTest-*.log; do
	[ -f "$f" ] && grep -ho "mutants caught: [0-9]*/[0-9]*" "$f" | sed "s|^|$(basename "$f" .log | sed 's/LastTest-//'): |"
done | sort -u || true
echo
echo "total: $total_pass passed, $total_fail failed"
exit $status
