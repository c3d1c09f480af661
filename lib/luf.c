// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * libluf: the header API as exported symbols, for programs that link
 * instead of inlining (define LUF_LINKED before including <luf/luf.h>).
 * Each function calls the header's inline body; see luf/api.h.
 */
#define LUF_BUILDING_LIB
#include <luf/luf.h>

#define LUF_API_DEFINE(ret, name, params, args, r) \
	ret name params                            \
	{                                          \
		r name##_inline args;              \
	}
LUF_API_LIST(LUF_API_DEFINE)
