/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/pcpu.h - per-CPU batching of deferred removals.
 *
 * Each CPU (in user space: each thread that owns a CPU id) keeps a private
 * open pending set. luf_pcpu_defer() adds a removed translation to it with
 * no write to any shared line: the stamp only reads the ugen source, and
 * the domain is written only when its set does not already cover the
 * removal. The open set is folded into the key table (one shared write per
 * batch) when it has taken @threshold removals, when the caller is about
 * to free the folios (luf_pcpu_fold(), which hands out their key), and
 * before this CPU flushes a key. A set holding a writable or dirty
 * translation is never deferred (S3): it is flushed at fold, before any
 * folio of it can be freed, as the kernel's batched unmap flush does.
 *
 * One struct luf_pcpu has one owner at a time; luf does no locking for it.
 * Source: LUF RFC v12 (tlb_ubc_ro per task, folded into luf_batch[key]
 * when the folios are freed); Linux try_to_unmap_flush().
 */
#ifndef LUF_PCPU_H
#define LUF_PCPU_H

#include "platform.h"
#include "flush.h"
#include "keytab.h"
#include "domain.h"

LUF_BEGIN_DECLS

/* Removals a CPU batches before it folds on its own (luf_pcpu_init()'s threshold). */
#define LUF_PCPU_DEFAULT_THRESHOLD 512u

/**
 * struct luf_pcpu - one CPU's batching state, written by that CPU only
 * @luf: the instance
 * @kt: where its batches fold
 * @open: removals not folded yet
 * @scratch: a private copy for flushing shared sets
 * @cpu: this CPU's id
 * @threshold: fold after this many removals
 * @nr_open: removals since the last fold
 * @key: the key this batch folds into; 0 = none yet
 * @magic: the init marker
 *
 * luf_pcpu_size() bytes of caller storage, set up by luf_pcpu_init();
 * the two batches follow the header.
 */
struct luf_pcpu {
	struct luf *luf;
	struct luf_keytab *kt;
	struct luf_batch *open;
	struct luf_batch *scratch;
	unsigned int cpu;
	unsigned int threshold;
	unsigned int nr_open;
	unsigned short key;
	unsigned long magic;
};

/**
 * luf_pcpu_size() - bytes of storage for one CPU's state
 * @nr_cpus: the instance's CPU count
 *
 * Return: a size in bytes.
 */
static inline size_t luf_pcpu_size(unsigned int nr_cpus)
{
	return sizeof(struct luf_pcpu) + 2 * luf_batch_size(nr_cpus);
}

/* True iff @pc is a live per-CPU state (luf_pcpu_init() returned 0). */
static inline bool __luf_pcpu_live(const struct luf_pcpu *pc)
{
	return pc && pc->magic == __luf_magic(pc, __LUF_MAGIC_PCPU);
}

/**
 * luf_pcpu_init() - set up CPU @cpu's state
 * @pc: luf_pcpu_size(l->nr_cpus) bytes (one owner; cache-line aligned
 *	storage keeps CPUs off each other's lines)
 * @l: a live instance
 * @kt: its key table (bound to @l)
 * @cpu: the owner's CPU id
 * @threshold: removals per automatic fold, >= 1 (LUF_PCPU_DEFAULT_THRESHOLD)
 *
 * Return: 0; -EINVAL for NULL, an instance or table that is not live, a
 * table of another instance, a CPU id >= l->nr_cpus or a zero threshold;
 * -EBUSY if @pc is live already (luf_pcpu_fini() it). Nothing is written
 * on error.
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_pcpu_init(struct luf_pcpu *pc, struct luf *l, struct luf_keytab *kt, unsigned int cpu,
		  unsigned int threshold);

/**
 * luf_pcpu_fini() - end a CPU's state (the CPU goes offline, the thread exits)
 * @pc: a live per-CPU state
 *
 * Its storage may be reused afterwards.
 * Return: 0; -EINVAL if @pc is not live; -EBUSY if removals are still
 * open on it (luf_pcpu_fold() them first, or they would be lost).
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_pcpu_fini(struct luf_pcpu *pc);

/*
 * Move the open set into the key table, or flush it if it holds a writable
 * translation (S3). Keeps pc->key. Returns 0 or the flush's error (the
 * open set then stays as it was).
 */
static inline int __luf_pcpu_flush_open(struct luf_pcpu *pc)
{
	int ret;

	if (luf_batch_empty(pc->open)) {
		pc->nr_open = 0; /* removals cached nowhere: nothing to fold */
		return 0;
	}
#if !defined(LUF_MUTANT_DEFER_WRITABLE)
	if (luf_batch_writable(pc->open)) {
		/* S3: a writable or dirty translation is flushed before any free. */
		ret = luf_flush_batch(pc->luf, pc->cpu, pc->open);
		if (ret < 0)
			return ret;
		if (ret)
			__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_WRITABLE_FLUSH);
		pc->nr_open = 0;
		return 0;
	}
#else
	__luf_write_once(&pc->open->writable, 0); /* the mutant defers it like a read-only one */
#endif
	if (!pc->key)
		pc->key = __luf_keytab_new_key(pc->kt);
	ret = __luf_keytab_fold(pc->kt, pc->key, pc->open);
	if (ret)
		return ret;
	luf_batch_clear(pc->open);
	pc->nr_open = 0;
	__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_FOLD);
	return 0;
}

/**
 * luf_pcpu_defer() - record one removed translation whose flush may wait
 * @pc: this CPU's state
 * @dom: the address space it was removed from, or NULL if no protection
 *	change can race with it
 * @cpus: the CPUs that may cache it (the domain's mm_cpumask), l->nr_cpus bits
 * @writable: the translation was writable or dirty (flushed at the next
 *	fold, not deferred: S3)
 *
 * Call after the PTE is cleared and before the page-table lock covering
 * it is released (see luf_unmap() and luf_domain_settle()). Every
 * @threshold calls it folds into the key table (a shared write).
 *
 * Context: any; no system call, no allocation; writes only @pc's lines,
 * plus the domain's set when it does not cover this removal yet; may
 * flush at the threshold if the batch holds a writable translation.
 * Return: 0; -EINVAL for NULL @cpus, a @pc or domain that is not live, a
 * domain of another instance or bits set at or above nr_cpus (nothing
 * recorded); or the error of a writable batch's flush at the threshold
 * (the removal is recorded and still pending).
 */
static inline int luf_pcpu_defer(struct luf_pcpu *pc, struct luf_domain *dom,
				 const unsigned long *cpus, bool writable)
{
	unsigned long stamp;

	if (!__luf_pcpu_live(pc) || !cpus || !luf_cpumask_valid(cpus, pc->luf->nr_cpus) ||
	    !__luf_domain_fits(dom, pc->luf))
		return -EINVAL;
	stamp = luf_ugen_stamp(&pc->luf->ugen);
	if (dom && !__luf_shared_covers(&dom->set, cpus, stamp, writable))
		__luf_shared_add(&dom->set, cpus, stamp, writable, &pc->luf->done);
	luf_batch_add(pc->open, cpus, stamp, writable);
	if (!writable)
		__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_DEFERRED);
	if (++pc->nr_open >= pc->threshold)
		return __luf_pcpu_flush_open(pc);
	return 0;
}

/**
 * luf_pcpu_fold() - close this CPU's batch and name its key
 * @pc: this CPU's state
 * @key: out: the key whose set covers every removal deferred on @pc
 *	since the previous luf_pcpu_fold(), or 0 if none is owed (nothing
 *	deferred, or only writable ones, which were flushed)
 *
 * Free the folios of the batch with this key. The next defer starts a new
 * key.
 * Context: may flush (a writable batch).
 * Return: 0, -EINVAL for NULL or a @pc that is not live, or the flush's
 * error (*@key is then not set and the batch stays open: do not free its
 * folios).
 */
static inline int luf_pcpu_fold(struct luf_pcpu *pc, unsigned short *key)
{
	int ret;

	if (!__luf_pcpu_live(pc) || !key)
		return -EINVAL;
	ret = __luf_pcpu_flush_open(pc);
	if (ret)
		return ret;
	*key = pc->key;
	pc->key = 0;
	return 0;
}

/**
 * luf_key_flush() - flush what @key's set still needs, now
 * @pc: this CPU's state (its open set is folded first, so a removal this
 *	CPU deferred under @key is included)
 * @key: a key, or 0 (nothing to do)
 *
 * Context: may flush.
 * Return: 1 if it flushed, 0 if nothing needed flushing; -EINVAL for a
 * @pc that is not live or a bad key; or the flush's error (everything
 * stays pending).
 */
int luf_key_flush(struct luf_pcpu *pc, unsigned int key);

LUF_END_DECLS

#endif /* LUF_PCPU_H */
