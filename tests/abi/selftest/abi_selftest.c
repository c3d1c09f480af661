/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include "abi_selftest.h"

int abi_selftest_get(const struct abi_selftest_obj *o)
{
	return o->a;
}

#if defined(ABI_SELFTEST_BREAK)
int abi_selftest_set(struct abi_selftest_obj *o, long v)
{
	o->b = v;
	o->a = (int)v;
	return 0;
}
#else
int abi_selftest_set(struct abi_selftest_obj *o, int v)
{
	o->a = v;
	return 0;
}
#endif

#if defined(ABI_SELFTEST_COMPAT)
int abi_selftest_added(void)
{
	return 1;
}
#endif
