/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A tiny library in four variants for the self-tests of tests/abi/check:
 * v1 (the "release"), compat (v1 plus a function), break (a struct grows and
 * a signature changes) and bump (break under a new SONAME).
 */
#ifndef ABI_SELFTEST_H
#define ABI_SELFTEST_H

struct abi_selftest_obj {
	int a;
#if defined(ABI_SELFTEST_BREAK)
	long b;
#endif
};

int abi_selftest_get(const struct abi_selftest_obj *o);
#if defined(ABI_SELFTEST_BREAK)
int abi_selftest_set(struct abi_selftest_obj *o, long v);
#else
int abi_selftest_set(struct abi_selftest_obj *o, int v);
#endif
#if defined(ABI_SELFTEST_COMPAT)
int abi_selftest_added(void);
#endif

#endif
