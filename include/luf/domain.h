/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/domain.h - the pending set of an address space (an mm).
 *
 * Every deferred removal is also recorded in its domain's set, at the time
 * it is deferred (luf_pcpu_defer()), so that a protection change can first
 * settle what is pending on the domain. This is the lesson of the 2017
 * reclaim-vs-mprotect race (Linux commit 3ea277194daa, "mm, mprotect:
 * flush TLB if potentially racing with a parallel reclaim leaving stale
 * TLB entries"):
 *
 *   CPU0 (reclaim)                        CPU1 (mprotect, same range)
 *   clear PTE, batch (defer) its flush
 *                                         PTE not present: no flush needed?
 *                                         change protection, return
 *   ...                                   user writes through the stale
 *                                         entry CPU0 has not flushed yet
 *
 * With luf, CPU1 calls luf_domain_settle() first and finds CPU0's removal
 * pending in the domain: it flushes before it changes anything.
 */
#ifndef LUF_DOMAIN_H
#define LUF_DOMAIN_H

#include "platform.h"
#include "shared.h"

/*
 * An address space's pending set (the mm's): luf_domain_size() bytes, set
 * up by luf_domain_init(), settled before any protection change on it.
 */
struct luf_domain {
	struct luf_shared set; /* followed by the batch: luf_domain_size() bytes */
};

/* Bytes of storage for a domain of @nr_cpus CPUs. */
static inline size_t luf_domain_size(unsigned int nr_cpus)
{
	return luf_shared_size(nr_cpus);
}

/**
 * luf_domain_init() - set up a domain with nothing pending.
 * @dom: luf_domain_size(@nr_cpus) bytes. @nr_cpus: the instance's CPU count.
 * Return: 0, or -EINVAL (NULL, or a CPU count out of range).
 */
static inline int luf_domain_init(struct luf_domain *dom, unsigned int nr_cpus)
{
	if (!dom || !nr_cpus || nr_cpus > LUF_MAX_CPUS)
		return -EINVAL;
	return luf_shared_init(&dom->set, nr_cpus);
}

/* True iff @dom is NULL or was set up for @nr_cpus CPUs (bad-input check). */
static inline bool luf_domain_fits(const struct luf_domain *dom, unsigned int nr_cpus)
{
	return !dom || luf_shared_batch(&dom->set)->nr_cpus == nr_cpus;
}

/**
 * luf_domain_pending() - does the domain still owe a flush?
 * Lock-free and write-free. Return: true iff some CPU in its set has
 * done < the set's ugen.
 */
static inline bool luf_domain_pending(const struct luf_domain *dom, const struct luf_done_cpu *d)
{
	return !luf_shared_check_done(&dom->set, d);
}

/**
 * luf_domain_settle() - flush everything pending on @dom; call before any
 * protection change on it (downgrade or upgrade), before a write fault
 * installs a writable PTE, and before a translation is moved. Call it with
 * the page-table lock held, after looking at the PTEs and before changing
 * them (as flush_tlb_batched_pending() is called): a removal recorded
 * under that lock before (luf_unmap()) is then always seen.
 * @l: the instance. @cpu: the caller's CPU id. @dom: the domain.
 * @scratch: a batch of l->nr_cpus CPUs owned by the caller (struct luf_pcpu
 *           has one; luf_abort_domain() passes it).
 *
 * May flush (ops->flush) the CPUs of the domain's set that have not
 * flushed since; flushes nothing if diet empties the set.
 * Return: 0 (nothing is pending on @dom any more that was pending at the
 * call), -EINVAL for a bad argument (NULL, a CPU id out of range, a domain
 * of another CPU count), or the flush's error (everything stays
 * pending). Source: Linux flush_tlb_batched_pending().
 */
static inline int luf_domain_settle(struct luf *l, unsigned int cpu, struct luf_domain *dom,
				    struct luf_batch *scratch)
{
	if (!l || !dom || !scratch || cpu >= l->nr_cpus || !luf_domain_fits(dom, l->nr_cpus))
		return -EINVAL;
#if defined(LUF_MUTANT_NO_SETTLE)
	/* Mutant: settles nothing (breaks S2). */
	return 0;
#else
	return luf_shared_flush(l, cpu, &dom->set, scratch);
#endif
}

#endif /* LUF_DOMAIN_H */
