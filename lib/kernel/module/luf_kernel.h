/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf_kernel.h - the kernel backend of luf: arch ops that flush by IPI.
 *
 * A luf instance for the running kernel, with its storage:
 *
 *   flush(cpus)   copies the luf cpumask into this CPU's scratch struct
 *                 cpumask and calls on_each_cpu_mask(wait = true): every
 *                 CPU of the set (the caller's own included, locally) runs
 *                 a full local TLB flush in the IPI handler and records it.
 *   nr_cpu_ids    nr_cpu_ids (possible CPU ids, fixed after boot).
 *   this_cpu      raw_smp_processor_id(): exact when the caller is bound to
 *                 a CPU or runs with preemption disabled, as luf's per-CPU
 *                 callers do; luf uses it for statistics only.
 *   flush_all     the same IPI to every online CPU.
 *   mm_cpus       not set: a luf_domain does not know its mm. Callers pass
 *                 mm_cpumask(mm) through luf_kernel_mask_from_cpumask().
 *
 * The local flush is __flush_tlb_all() on x86 (exported to GPL-compatible
 * modules; it flushes global entries too, like flush_tlb_all() does on
 * each CPU). Other architectures have no local full-flush helper exported
 * to modules, so there the handler only records the flush: luf's protocol,
 * its IPIs and its bookkeeping are exercised, the TLB itself is not.
 * LUF_KERNEL_REAL_FLUSH tells which one this build does.
 *
 * Besides the luf state, the backend keeps its own count of flushes, the
 * flush generation: gen is incremented (fully ordered) when a flush starts,
 * and each CPU's seen value is the newest generation whose handler ran on
 * it. It is independent of luf's ugen and done counters, so a test can
 * check luf against it: a translation removed when gen read g is gone from
 * CPU c once seen[c] > g (luf_kernel_gen_stamp(), luf_kernel_covered()).
 *
 * Context: flush and flush_all send IPIs and wait for them, so they need
 * interrupts enabled and task context; elsewhere they return -EDEADLK and
 * luf leaves everything pending. Call luf from process context only (see
 * platform/kernel.h).
 */
#ifndef LUF_KERNEL_H
#define LUF_KERNEL_H

#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <luf/luf.h>

#if defined(CONFIG_X86)
#define LUF_KERNEL_REAL_FLUSH 1
#else
#define LUF_KERNEL_REAL_FLUSH 0
#endif

/* Per-CPU backend state (alloc_percpu()): touched by its own CPU only, except seen. */
struct luf_kernel_cpu {
	cpumask_var_t mask;	     /* scratch: the set of a flush this CPU initiates */
	unsigned long runs;	     /* flush handlers run here (IPI or local) */
	unsigned long ipis;	     /* of which sent by another CPU: IPIs received */
	unsigned long local_flushes; /* luf_kernel_local_flush() calls here */
	atomic_long_t seen;	     /* newest flush generation run here */
};

struct luf_kernel {
	struct luf luf; /* first: cache-line aligned like the whole struct */
	struct luf_done_cpu __percpu *done;
	struct luf_stats_cpu __percpu *stats;
	struct luf_kernel_cpu __percpu *pcpu;
	void *raw_self;

	LUF_CACHE_ALIGNED atomic_long_t gen; /* flush generation: own line */
	atomic_long_t flush_calls;	     /* ops->flush / flush_all calls that sent IPIs */
};

extern const struct luf_arch_ops luf_kernel_ops;

/**
 * luf_kernel_create() - a luf instance flushing by IPI, with its done
 * counters and statistics (nr_cpu_ids of each, cache-line aligned).
 * @start: the ugen the instance starts at (0 normally; tests use values
 *         just below the wrap, e.g. ULONG_MAX - 4).
 * Sleeps (GFP_KERNEL). Return: the instance, or NULL (out of memory, or
 * nr_cpu_ids above LUF_MAX_CPUS).
 */
struct luf_kernel *luf_kernel_create(unsigned long start);

/* Free an instance from luf_kernel_create() (NULL is a no-op). No flush may be running. */
void luf_kernel_destroy(struct luf_kernel *k);

/**
 * luf_kernel_local_flush() - flush this CPU's TLB fully and tell luf, so
 * diet drops this CPU from every set stamped before the flush began
 * (luf_local_flush_begin()/_end()). For a kernel user: the hook for a
 * context switch that flushed anyway. Disables preemption inside.
 * Return: 0, or -EINVAL if @k is NULL.
 */
int luf_kernel_local_flush(struct luf_kernel *k);

/* Copy a kernel cpumask (e.g. mm_cpumask(mm)) into a luf mask of @nr_cpus bits. */
void luf_kernel_mask_from_cpumask(unsigned long *dst, unsigned int nr_cpus,
				  const struct cpumask *src);

/* Copy a luf mask of @nr_cpus bits into a kernel cpumask; O(CPUs in the set). */
void luf_kernel_mask_to_cpumask(struct cpumask *dst, const unsigned long *src,
				unsigned int nr_cpus);

/**
 * luf_kernel_gen_stamp() - the flush generation a flush must reach to cover
 * a translation removed before the call: full barrier, then gen + 1.
 * Take it after the removal and before luf_ugen_stamp() (luf_unmap()), so
 * that every flush luf counts for the removal also counts here.
 */
unsigned long luf_kernel_gen_stamp(struct luf_kernel *k);

/* Has CPU @cpu run a flush of generation @stamp or newer? (@stamp 0: yes.) */
bool luf_kernel_covered(struct luf_kernel *k, unsigned int cpu, unsigned long stamp);

/* Sums over possible CPUs of the per-CPU counters above. */
unsigned long luf_kernel_ipis(struct luf_kernel *k);
unsigned long luf_kernel_runs(struct luf_kernel *k, unsigned int cpu);

/**
 * luf_kernel_zalloc() - zeroed, cache-line aligned storage for luf objects
 * (luf_init() and luf_keytab_init() check the alignment). @raw gets the
 * pointer to free with kvfree(). Sleeps. Return: the storage or NULL.
 */
void *luf_kernel_zalloc(size_t size, void **raw);

#endif /* LUF_KERNEL_H */
