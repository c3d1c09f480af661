// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_kernel.c - the kernel backend of luf (see luf_kernel.h).
 *
 * The flush is the kernel's own shootdown mechanism: on_each_cpu_mask()
 * with wait = true returns only when the handler has run on every online
 * CPU of the mask, each with interrupts disabled. The handler flushes the
 * local TLB and publishes the flush generation the initiator took before
 * sending, which is what luf's protocol needs: its ugen snapshot precedes
 * the flush (luf_flush_batch() takes it before calling us), and done is
 * marked by luf after we return 0.
 *
 *   initiator (CPU0)                       target (CPU1)
 *   f = __luf_ugen_new()      [luf]
 *   g = ++gen               (fully ordered)
 *   on_each_cpu_mask() ---- IPI ---------> luf_kernel_ipi(): flush TLB,
 *     waits for CPU1 <-------------------   seen[1] = max(seen[1], g)
 *   __luf_done_mark(f)      [luf]
 *
 * CPUs of the set that are offline get no IPI: an offline CPU holds no
 * translations, and one coming online starts with a flushed TLB.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/smp.h>
#include <linux/preempt.h>
#include <linux/irqflags.h>
#include <asm/tlbflush.h>

#include "luf_kernel.h"

struct luf_kernel_ipi_info {
	struct luf_kernel *k;
	unsigned long gen;   /* flush generation of this flush */
	unsigned int sender; /* CPU that called on_each_cpu_mask() */
};

/* Raise @cpu's seen generation to @gen (monotonic; IPIs may arrive out of order). */
static void luf_kernel_record(struct luf_kernel_cpu *kc, unsigned long gen)
{
	long old = atomic_long_read(&kc->seen);

	while ((long)(gen - (unsigned long)old) > 0) {
		if (atomic_long_try_cmpxchg_release(&kc->seen, &old, (long)gen))
			break;
	}
}

/* Full flush of this CPU's TLB; runs with preemption (or interrupts) disabled. */
static void luf_kernel_flush_local(void)
{
#if LUF_KERNEL_REAL_FLUSH
	__flush_tlb_all();
#endif
}

/* The IPI handler: runs on every CPU of the set, interrupts disabled. */
static void luf_kernel_ipi(void *data)
{
	const struct luf_kernel_ipi_info *info = data;
	struct luf_kernel_cpu *kc = this_cpu_ptr(info->k->pcpu);

	luf_kernel_flush_local();
	WRITE_ONCE(kc->runs, kc->runs + 1);
	if (smp_processor_id() != info->sender)
		WRITE_ONCE(kc->ipis, kc->ipis + 1);
	luf_kernel_record(kc, info->gen);
}

/*
 * Send the flush to @mask (or, if NULL, to the luf mask @cpus copied into
 * this CPU's scratch mask) and wait. on_each_cpu_mask() must not be called
 * with interrupts disabled or outside task context (it could deadlock on
 * the IPI it waits for): refuse there, and luf keeps the set pending.
 */
static int luf_kernel_send(struct luf_kernel *k, const unsigned long *cpus, unsigned int nr_cpus,
			   const struct cpumask *mask)
{
	struct luf_kernel_ipi_info info;

	if (irqs_disabled() || !in_task())
		return -EDEADLK;
	info.k = k;
	info.gen = (unsigned long)atomic_long_inc_return(&k->gen);
	info.sender = get_cpu();
	if (!mask) {
		struct cpumask *scratch = this_cpu_ptr(k->pcpu)->mask;

		luf_kernel_mask_to_cpumask(scratch, cpus, nr_cpus);
		mask = scratch;
	}
	on_each_cpu_mask(mask, luf_kernel_ipi, &info, true);
	put_cpu();
	atomic_long_inc(&k->flush_calls);
	return 0;
}

static int luf_kernel_flush(void *arch, const unsigned long *cpus, unsigned int nr_cpus,
			    const struct luf_range *r)
{
	/* @r is not used: the handler flushes everything, a superset of any range. */
	if (!arch || !cpus || nr_cpus > nr_cpu_ids)
		return -EINVAL;
	return luf_kernel_send(arch, cpus, nr_cpus, NULL);
}

static int luf_kernel_flush_all(void *arch)
{
	if (!arch)
		return -EINVAL;
	return luf_kernel_send(arch, NULL, 0, cpu_online_mask);
}

static unsigned int luf_kernel_nr_cpu_ids(void *arch)
{
	return nr_cpu_ids;
}

static unsigned int luf_kernel_this_cpu(void *arch)
{
	return raw_smp_processor_id();
}

/* clang-format off */
const struct luf_arch_ops luf_kernel_ops = {
	.flush = luf_kernel_flush,
	.nr_cpu_ids = luf_kernel_nr_cpu_ids,
	.this_cpu = luf_kernel_this_cpu,
	.flush_all = luf_kernel_flush_all,
	.mm_cpus = NULL,
};

/* clang-format on */

void *luf_kernel_zalloc(size_t size, void **raw)
{
	void *p;

	*raw = NULL;
	if (!size || size > SIZE_MAX - SMP_CACHE_BYTES)
		return NULL;
	p = kvzalloc(size + SMP_CACHE_BYTES - 1, GFP_KERNEL);
	if (!p)
		return NULL;
	*raw = p;
	return PTR_ALIGN(p, SMP_CACHE_BYTES);
}

void luf_kernel_destroy(struct luf_kernel *k)
{
	unsigned int cpu;

	if (!k)
		return;
	if (k->pcpu) {
		for_each_possible_cpu(cpu) {
			free_cpumask_var(per_cpu_ptr(k->pcpu, cpu)->mask);
		}
		free_percpu(k->pcpu);
	}
	free_percpu(k->done);
	free_percpu(k->stats);
	kvfree(k->raw_self);
}

struct luf_kernel *luf_kernel_create(unsigned long start)
{
	unsigned int nr = nr_cpu_ids, cpu;
	struct luf_kernel *k;
	void *raw;

	if (!nr || nr > LUF_MAX_CPUS)
		return NULL;
	k = luf_kernel_zalloc(sizeof(*k), &raw);
	if (!k)
		return NULL;
	k->raw_self = raw;
	k->done = alloc_percpu(struct luf_done_cpu);
	k->stats = alloc_percpu(struct luf_stats_cpu);
	k->pcpu = alloc_percpu(struct luf_kernel_cpu);
	if (!k->done || !k->stats || !k->pcpu)
		goto fail;
	for_each_possible_cpu(cpu) {
		if (!zalloc_cpumask_var(&per_cpu_ptr(k->pcpu, cpu)->mask, GFP_KERNEL))
			goto fail;
	}
	if (luf_init(&k->luf, &luf_kernel_ops, k, k->done, k->stats, start))
		goto fail;
	return k;
fail:
	luf_kernel_destroy(k);
	return NULL;
}

int luf_kernel_local_flush(struct luf_kernel *k)
{
	struct luf_kernel_cpu *kc;
	unsigned long gen;
	unsigned int cpu;
	unsigned long snap;
	int ret;

	if (!k)
		return -EINVAL;
	cpu = get_cpu();
	kc = this_cpu_ptr(k->pcpu);
	gen = (unsigned long)atomic_long_inc_return(&k->gen);
	snap = luf_local_flush_begin(&k->luf);
	luf_kernel_flush_local();
	kc->local_flushes++;
	luf_kernel_record(kc, gen);
	ret = luf_local_flush_end(&k->luf, cpu, snap);
	put_cpu();
	return ret;
}

void luf_kernel_mask_from_cpumask(unsigned long *dst, unsigned int nr_cpus,
				  const struct cpumask *src)
{
	unsigned int cpu;

	luf_cpumask_clear(dst, nr_cpus);
	for_each_cpu(cpu, src) {
		if (cpu >= nr_cpus)
			break;
		luf_cpumask_set_cpu(dst, nr_cpus, cpu);
	}
}

void luf_kernel_mask_to_cpumask(struct cpumask *dst, const unsigned long *src, unsigned int nr_cpus)
{
	unsigned int cpu;

	cpumask_clear(dst);
	luf_for_each_cpu(cpu, src, nr_cpus) {
		if (cpu >= nr_cpu_ids)
			break;
		__cpumask_set_cpu(cpu, dst);
	}
}

unsigned long luf_kernel_gen_stamp(struct luf_kernel *k)
{
	smp_mb(); /* the removal before the read: the store-buffering pattern of ugen.h */
	return (unsigned long)atomic_long_read(&k->gen) + 1;
}

bool luf_kernel_covered(struct luf_kernel *k, unsigned int cpu, unsigned long stamp)
{
	unsigned long seen;

	if (!stamp)
		return true;
	if (cpu >= nr_cpu_ids)
		return false;
	seen = (unsigned long)atomic_long_read_acquire(&per_cpu_ptr(k->pcpu, cpu)->seen);
	return (long)(seen - stamp) >= 0;
}

unsigned long luf_kernel_ipis(struct luf_kernel *k)
{
	unsigned long n = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		n += READ_ONCE(per_cpu_ptr(k->pcpu, cpu)->ipis);
	}
	return n;
}

unsigned long luf_kernel_runs(struct luf_kernel *k, unsigned int cpu)
{
	return cpu < nr_cpu_ids ? READ_ONCE(per_cpu_ptr(k->pcpu, cpu)->runs) : 0;
}
