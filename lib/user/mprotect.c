// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/user/mprotect.c - the mprotect fallback backend.
 *
 * A flush forces a real TLB shootdown of a private helper page:
 *
 *   lock                                     (one flush at a time)
 *   mprotect(page, READ|WRITE)
 *   write to the page                        (translation present, dirty)
 *   mprotect(page, NONE)                     (the kernel must invalidate it
 *                                             on every CPU running this mm)
 *   unlock
 *
 * On x86-64 Linux the last step sends an IPI to every other CPU whose
 * current address space is this process's and waits for each to answer;
 * taking an interrupt is a full barrier on that CPU. CPUs that run another
 * process, or a kernel thread in lazy-TLB mode, get no IPI, but no thread
 * of ours is running there: each passed a context switch, itself a full
 * barrier, since it last ran. This is the reasoning behind the .NET
 * runtime's FlushProcessWriteBuffers fallback on Linux (helper page, lock,
 * touch, protection change); this file reimplements the idea, not its code.
 *
 * Where it fails: architectures that invalidate TLBs by hardware broadcast
 * (arm64's TLBI ...IS, POWER's tlbie) send no IPI, so remote CPUs execute
 * no barrier; and x86-64 CPUs with INVLPGB, which Linux 6.15+ uses to
 * broadcast invalidations for processes active on several CPUs. There
 * luf_user_mprotect_open() refuses unless forced. Under a hypervisor with
 * paravirtual TLB flush (KVM PV, Hyper-V), a preempted vCPU is flushed on
 * its next entry instead of by IPI; it was stopped by a VM exit, so its
 * earlier stores are already visible.
 */
#define _GNU_SOURCE
#include "user_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
/* True iff /proc/cpuinfo lists the "invlpgb" flag (broadcast TLB invalidation). */
static bool luf_user_cpu_has_invlpgb(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		found = strstr(line, " invlpgb") != NULL;
		break;
	}
	fclose(f);
	return found;
}
#endif

/* Refuse where a protection change is not known to interrupt other CPUs. */
static int luf_user_mprotect_sound(struct luf_user *u)
{
	bool force = u->flags & LUF_USER_FORCE_MPROTECT;

	if (u->flags & LUF_USER_SYNC_CORE) {
		__luf_user_set_why(u, "mprotect: cannot core-serialise a thread that is in the "
				    "kernel when the IPI arrives (SYNC_CORE needs membarrier) "
				    "(-EOPNOTSUPP)");
		return -EOPNOTSUPP;
	}
#if defined(__x86_64__)
	if (!force && luf_user_cpu_has_invlpgb()) {
		__luf_user_set_why(u, "mprotect: refused: this CPU has INVLPGB, Linux may invalidate "
				    "TLBs by broadcast with no IPI, so no barrier "
				    "(LUF_USER_FORCE_MPROTECT overrides) (-EOPNOTSUPP)");
		return -EOPNOTSUPP;
	}
#else
	if (!force) {
		__luf_user_set_why(u,
				 "mprotect: refused on this architecture: TLB invalidation is "
				 "broadcast by hardware, no IPI reaches other CPUs, so they pass "
				 "no barrier (LUF_USER_FORCE_MPROTECT overrides) (-EOPNOTSUPP)");
		return -EOPNOTSUPP;
	}
#endif
	return 0;
}

void __luf_user_mprotect_teardown(struct luf_user *u)
{
	if (u->page) {
		munlock(u->page, u->page_size);
		munmap(u->page, u->page_size);
	}
	if (u->lock) {
		pthread_mutex_destroy(u->lock);
		free(u->lock);
	}
	u->page = NULL;
	u->lock = NULL;
}

int __luf_user_mprotect_flush(struct luf_user *u)
{
	volatile unsigned long *word = u->page;
	int ret = 0;

	pthread_mutex_lock(u->lock);
	__luf_add_relaxed(&u->calls, 1);
	if (mprotect(u->page, u->page_size, PROT_READ | PROT_WRITE)) {
		ret = -errno;
	} else {
		/* The write makes the translation present and dirty on this CPU. */
		*word = *word + 1;
		if (mprotect(u->page, u->page_size, PROT_NONE))
			ret = -errno;
	}
	pthread_mutex_unlock(u->lock);
	return ret;
}

int __luf_user_mprotect_setup(struct luf_user *u)
{
	const char *step = "mmap";
	long ps = sysconf(_SC_PAGESIZE);
	char buf[24]; /* "errno -2147483648" */
	int ret;

	ret = luf_user_mprotect_sound(u);
	if (ret)
		return ret;
	u->page_size = ps > 0 ? (size_t)ps : 4096;
	u->page =
	    mmap(NULL, u->page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u->page == MAP_FAILED) {
		u->page = NULL;
		ret = -errno;
		goto fail;
	}
	step = "mlock";
	if (mlock(u->page, u->page_size)) {
		ret = -errno;
		goto fail;
	}
	step = "mutex";
	u->lock = malloc(sizeof(pthread_mutex_t));
	if (!u->lock) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = -pthread_mutex_init(u->lock, NULL);
	if (ret) {
		free(u->lock);
		u->lock = NULL;
		goto fail;
	}
	step = "trial flush";
	if (!(u->flags & LUF_USER_NO_TRIAL)) {
		ret = __luf_user_mprotect_flush(u);
		if (ret)
			goto fail;
		__luf_write_once(&u->calls, 0); /* count the caller's flushes only */
	}
	__luf_user_set_why(u, "mprotect: helper-page shootdown%s",
#if defined(__x86_64__)
			 ""
#else
			 " (forced: no IPI is known to be sent here)"
#endif
	);
	return 0;
fail:
	__luf_user_set_why(u, "mprotect: %s failed (-%s)", step,
			 __luf_user_errname(ret, buf, sizeof(buf)));
	__luf_user_mprotect_teardown(u);
	return ret;
}
