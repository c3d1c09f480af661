/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/arch.h - the arch-ops vtable: luf's only way out to hardware or an OS.
 *
 * The generic code owns the policy (when to defer, what to diet, when to
 * flush); a backend supplies these few hooks, as each architecture does
 * for the kernel's batched unmap flush (arch_tlbbatch_add_pending,
 * arch_tlbbatch_flush). Backends: lib/user (membarrier, mprotect),
 * lib/sim (simulated TLBs), lib/kernel (on_each_cpu_mask()).
 */
#ifndef LUF_ARCH_H
#define LUF_ARCH_H

#include "platform.h"

struct luf_domain;

/* A virtual address range in bytes, [start, end). */
struct luf_range {
	unsigned long start; /* first byte */
	unsigned long end;   /* one past the last byte */
};

/* The backend's hooks, passed to luf_init(); a const table that outlives the instance. */
struct luf_arch_ops {
	/*
	 * Invalidate stale translations on every CPU of @cpus (@nr_cpus bits;
	 * the caller's own CPU may be among them) for range @r, or for
	 * everything if @r is NULL, and return only when all of them have
	 * done so. Called with no luf lock held; may sleep or send IPIs.
	 * Return: 0, or a negative errno: then luf assumes nothing was
	 * flushed and leaves every pending set pending.
	 */
	int (*flush)(void *arch, const luf_aulong *cpus, unsigned int nr_cpus,
		     const struct luf_range *r);
	/* Number of CPU ids (the highest id + 1). Required. */
	unsigned int (*nr_cpu_ids)(void *arch);
	/*
	 * The caller's CPU id, < nr_cpu_ids. Required, for callers and
	 * backends that need to find their CPU's struct luf_pcpu; the core
	 * itself takes CPU ids as arguments and never calls it.
	 */
	unsigned int (*this_cpu)(void *arch);
	/* Optional (may be NULL): flush every CPU. Return as for flush. */
	int (*flush_all)(void *arch);
	/*
	 * Optional (may be NULL): fill @out (@nr_cpus bits) with the CPUs
	 * that may cache translations of @dom (the kernel's mm_cpumask()).
	 * Return: 0 or a negative errno.
	 */
	int (*mm_cpus)(void *arch, const struct luf_domain *dom, luf_aulong *out,
		       unsigned int nr_cpus);
};

#endif /* LUF_ARCH_H */
