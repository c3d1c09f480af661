// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/main.c - runs the unit test groups; an optional argument is a
 * cmocka test-name filter (e.g. 'abort_*'). Exit status: 0 iff all passed.
 */
#include "unit.h"

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	failed += unit_run_flush();
	failed += unit_run_freelist();
	failed += unit_run_upgrade();
	failed += unit_run_badinput();
	failed += unit_run_debug();
	return failed ? 1 : 0;
}
