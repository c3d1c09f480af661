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

LUF_BEGIN_DECLS

/**
 * struct luf_domain - an address space's pending set (the mm's)
 * @luf: the instance it is bound to
 * @magic: the init marker
 * @set: the shared set; last, its batch follows (luf_domain_size() bytes)
 *
 * Set up by luf_domain_init(), settled before any protection change on it.
 */
struct luf_domain {
	struct luf *luf;
	unsigned long magic;
	struct luf_shared set;
};

/**
 * luf_domain_size() - bytes of storage for a domain
 * @nr_cpus: the instance's CPU count
 *
 * Return: a size in bytes.
 */
static inline size_t luf_domain_size(unsigned int nr_cpus)
{
	return offsetof(struct luf_domain, set) + __luf_shared_size(nr_cpus);
}

/* True iff @dom is a live domain (luf_domain_init() returned 0). */
static inline bool __luf_domain_live(const struct luf_domain *dom)
{
	return dom && dom->magic == __luf_magic(dom, __LUF_MAGIC_DOMAIN);
}

/* True iff @dom is NULL (no domain) or a live domain of instance @l (bad-input check). */
static inline bool __luf_domain_fits(const struct luf_domain *dom, const struct luf *l)
{
	return !dom || (__luf_domain_live(dom) && dom->luf == l);
}

/**
 * luf_domain_init() - set up a domain with nothing pending, bound to instance @l
 * @dom: luf_domain_size(l->nr_cpus) bytes
 * @l: a live instance; only its per-CPU states may record removals in
 *	the domain or settle it
 *
 * Return: 0; -EINVAL (NULL, @l not live); -EBUSY if @dom is a live domain
 * already (luf_domain_fini() it). Nothing is written on error.
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_domain_init(struct luf_domain *dom, struct luf *l);

/**
 * luf_domain_pending() - does the domain still owe a flush?
 * @dom: a domain
 *
 * Context: any; lock-free and write-free.
 * Return: true iff some CPU in its set has done < the set's ugen (false
 * for a domain that is not live).
 */
static inline bool luf_domain_pending(const struct luf_domain *dom)
{
	return __luf_domain_live(dom) && !__luf_shared_check_done(&dom->set, &dom->luf->done);
}

/**
 * luf_domain_fini() - end a domain (the address space is gone)
 * @dom: a live domain
 *
 * Its storage may be reused afterwards.
 * Return: 0; -EINVAL if @dom is not live; -EBUSY if a flush is still owed
 * on it (luf_domain_settle() first: a stale entry of a dead address space
 * may still reach its folios).
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_domain_fini(struct luf_domain *dom);

/**
 * luf_domain_settle() - flush everything pending on @dom
 * @l: the instance
 * @cpu: the caller's CPU id
 * @dom: the domain
 * @scratch: a batch of l->nr_cpus CPUs owned by the caller (struct
 *	luf_pcpu has one; luf_abort_domain() passes it)
 *
 * Call before any protection change on the domain (downgrade or
 * upgrade), before a write fault installs a writable PTE, and before a
 * translation is moved. Call it with the page-table lock held, after
 * looking at the PTEs and before changing them (as
 * flush_tlb_batched_pending() is called): a removal recorded under that
 * lock before (luf_unmap()) is then always seen. Source: Linux
 * flush_tlb_batched_pending().
 *
 * Context: may flush (ops->flush) the CPUs of the domain's set that have
 * not flushed since; flushes nothing if diet empties the set.
 * Return: 1 if it flushed, 0 if nothing needed flushing (either way
 * nothing pending at the call is pending any more); -EINVAL for a bad
 * argument (NULL, an instance or domain that is not live, a domain of
 * another instance, a CPU id out of range); or the flush's error
 * (everything stays pending).
 */
int luf_domain_settle(struct luf *l, unsigned int cpu, struct luf_domain *dom,
		      struct luf_batch *scratch);

LUF_END_DECLS

#endif /* LUF_DOMAIN_H */
