// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* lib/sim/sim_zalloc.h - storage for luf's objects in the simulators (not installed). */
#ifndef LUF_SIM_ZALLOC_H
#define LUF_SIM_ZALLOC_H

#include <stdlib.h>
#include <string.h>
#include <luf/luf.h>

/* Zeroed, cache-line aligned storage (luf's per-CPU arrays require it); free() it. */
static inline void *sim_zalloc(size_t size)
{
	size_t rounded = (size + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	void *p = aligned_alloc(LUF_CACHELINE, rounded ? rounded : LUF_CACHELINE);

	if (p)
		memset(p, 0, rounded ? rounded : LUF_CACHELINE);
	return p;
}

#endif /* LUF_SIM_ZALLOC_H */
