#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# expect_fail.sh - show that a mutant build of the unit tests is caught.
#
#   expect_fail.sh --ref REF MUTANT TEST...
#       REF (the normal build) must pass and report every TEST as OK;
#       MUTANT (the same tests built with one safety rule switched off) must
#       exit non-zero and report every TEST as FAILED. Exit 0 iff both hold.
#   expect_fail.sh --all MANIFEST
#       the check above for each line "NAME REF MUTANT TEST..." of MANIFEST,
#       then "mutants caught: N/M"; exit 0 iff every mutant was caught.
set -u

# check_one REF MUTANT TEST...: prints what it found; returns 0 iff caught.
check_one() {
	local ref=$1 mutant=$2
	shift 2
	local out rc t bad=0

	if [ "$#" -eq 0 ]; then
		echo "no guarding tests named"
		return 1
	fi
	out=$("$ref" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "the normal build fails (exit $rc):"
		printf '%s\n' "$out"
		return 1
	fi
	for t in "$@"; do
		if ! grep -qxF "[       OK ] $t" <<<"$out"; then
			echo "test $t did not pass in the normal build (misspelt?)"
			bad=1
		fi
	done
	[ "$bad" -eq 0 ] || return 1

	out=$("$mutant" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "NOT CAUGHT: $(basename "$mutant") exited 0"
		printf '%s\n' "$out"
		return 1
	fi
	for t in "$@"; do
		if grep -qxF "[  FAILED  ] $t" <<<"$out"; then
			echo "  caught by $t"
		else
			echo "  NOT caught by $t (it did not fail)"
			bad=1
		fi
	done
	if [ "$bad" -ne 0 ]; then
		printf '%s\n' "$out"
		return 1
	fi
	echo "  ($(grep '^\[  FAILED  \] [a-z_0-9]*$' <<<"$out" | sort -u | wc -l) tests failed in all, exit $rc)"
	return 0
}

case "${1-}" in
--ref)
	[ "$#" -ge 4 ] || { echo "usage: $0 --ref REF MUTANT TEST..." >&2; exit 2; }
	shift
	echo "mutant $(basename "$2"):"
	check_one "$@"
	;;
--all)
	[ "$#" -eq 2 ] || { echo "usage: $0 --all MANIFEST" >&2; exit 2; }
	caught=0
	total=0
	while read -r name ref mutant tests; do
		[ -n "${name-}" ] || continue
		total=$((total + 1))
		echo "mutant $name:"
		# shellcheck disable=SC2086 # the test names are words
		if check_one "$ref" "$mutant" $tests; then
			caught=$((caught + 1))
		fi
	done <"$2"
	echo "mutants caught: $caught/$total"
	[ "$total" -gt 0 ] && [ "$caught" -eq "$total" ]
	;;
*)
	echo "usage: $0 --ref REF MUTANT TEST... | --all MANIFEST" >&2
	exit 2
	;;
esac
