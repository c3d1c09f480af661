/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/arch.h - the arch-ops vtable: luf's only way out to hardware or an OS.
 *
 * The generic code owns the policy (when to defer, what to diet, when to
 * flush); a backend supplies these few hooks, as each architecture does
 * for the kernel's batched unmap flush (arch_tlbbatch_add_pending,
 * arch_tlbbatch_flush). Backends: lib/user (membarrier, mprotect),
 * lib/sim (simulated TLBs), the kernel's mm/luf.c (the x86 shootdown).
 */
#ifndef LUF_ARCH_H
#define LUF_ARCH_H

#include "platform.h"

LUF_BEGIN_DECLS

struct luf_domain;

/**
 * struct luf_range - a virtual address range in bytes, [@start, @end)
 * @start: the first byte
 * @end: one past the last byte
 */
struct luf_range {
	unsigned long start;
	unsigned long end;
};

/**
 * struct luf_arch_ops - the backend's hooks, passed to luf_init()
 * @flush: invalidate stale translations on every CPU of @cpus (@nr_cpus
 *	bits; the caller's own CPU may be among them) for range @r, or for
 *	everything if @r is NULL, and return only when all of them have done
 *	so. Called with no luf lock held; may sleep or send IPIs. Returns 0,
 *	or a negative errno: then luf assumes nothing was flushed and leaves
 *	every pending set pending. Required.
 * @nr_cpu_ids: the number of CPU ids (the highest id + 1). Required.
 * @this_cpu: the caller's CPU id, below nr_cpu_ids. Required, for callers
 *	and backends that need to find their CPU's struct luf_pcpu; the core
 *	itself takes CPU ids as arguments and never calls it.
 * @flush_all: flush every CPU; returns as @flush. Optional (NULL).
 * @mm_cpus: fill @out (@nr_cpus bits) with the CPUs that may cache
 *	translations of @dom (the kernel's mm_cpumask()); returns 0 or a
 *	negative errno. Optional (NULL).
 *
 * A const table that outlives the instance.
 */
struct luf_arch_ops {
	int (*flush)(void *arch, const unsigned long *cpus, unsigned int nr_cpus,
		     const struct luf_range *r);
	unsigned int (*nr_cpu_ids)(void *arch);
	unsigned int (*this_cpu)(void *arch);
	int (*flush_all)(void *arch);
	int (*mm_cpus)(void *arch, const struct luf_domain *dom, unsigned long *out,
		       unsigned int nr_cpus);
};

LUF_END_DECLS

#endif /* LUF_ARCH_H */
