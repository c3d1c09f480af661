// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* bench/common/syscount.c - see syscount.h. */
#define _GNU_SOURCE
#include "syscount.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>

static atomic_ulong membarriers, futexes;

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
#if defined(__NR_membarrier)
	if (nr == __NR_membarrier)
		atomic_fetch_add_explicit(&membarriers, 1, memory_order_relaxed);
#endif
	if (nr == __NR_futex)
		atomic_fetch_add_explicit(&futexes, 1, memory_order_relaxed);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

unsigned long syscount_membarriers(void)
{
	return atomic_load(&membarriers);
}

unsigned long syscount_futexes(void)
{
	return atomic_load(&futexes);
}
