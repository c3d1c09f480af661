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

/* Removals a CPU batches before it folds on its own (luf_pcpu_init()'s threshold). */
#define LUF_PCPU_DEFAULT_THRESHOLD 512u

/*
 * One CPU's batching state, written by that CPU only: luf_pcpu_size()
 * bytes of caller storage, set up by luf_pcpu_init().
 */
struct luf_pcpu {
	struct luf *luf;	     /* the instance */
	struct luf_keytab *kt;	     /* where its batches fold */
	struct luf_stats_cpu *stats; /* this CPU's block */
	struct luf_batch *open;	     /* removals not folded yet */
	struct luf_batch *scratch;   /* private copy for flushing shared sets */
	unsigned int cpu;	     /* this CPU's id */
	unsigned int threshold;	     /* fold after this many removals */
	unsigned int nr_open;	     /* removals since the last fold */
	luf_key_t key;		     /* key this batch folds into; 0 = none yet */
	unsigned long magic;	     /* __luf_magic(this, LUF_MAGIC_PCPU) while live */
};

/* True iff @pc is a live per-CPU state (luf_pcpu_init() returned 0). */
static inline bool __luf_pcpu_live(const struct luf_pcpu *pc)
{
	return pc && pc->magic == __luf_magic(pc, LUF_MAGIC_PCPU);
}

/* Bytes of storage for one CPU's state, for an instance of @nr_cpus CPUs. */
static inline size_t luf_pcpu_size(unsigned int nr_cpus)
{
	return sizeof(struct luf_pcpu) + 2 * luf_batch_size(nr_cpus);
}

/**
 * luf_pcpu_init() - set up CPU @cpu's state.
 * @pc: luf_pcpu_size(l->nr_cpus) bytes (one owner; cache-line aligned
 *      storage keeps CPUs off each other's lines). @l: a live instance.
 * @kt: its key table (bound to @l). @cpu: the owner's CPU id.
 * @threshold: removals per automatic fold, >= 1 (LUF_PCPU_DEFAULT_THRESHOLD).
 * Return: 0; -EINVAL for NULL, an instance or table that is not live, a
 * table of another instance, a CPU id >= l->nr_cpus or a zero threshold;
 * -EBUSY if @pc is live already (luf_pcpu_fini() it). Nothing is written
 * on error.
 */
static inline int luf_pcpu_init(struct luf_pcpu *pc, struct luf *l, struct luf_keytab *kt,
				unsigned int cpu, unsigned int threshold)
{
	char *p;

	if (!pc || !__luf_live(l) || !__luf_keytab_live(kt) || kt->luf != l || cpu >= l->nr_cpus ||
	    !threshold)
		return -EINVAL;
	if (__luf_pcpu_live(pc))
		return -EBUSY;
	p = (char *)(pc + 1);
	pc->luf = l;
	pc->kt = kt;
	pc->stats = &l->stats[cpu];
	pc->open = (struct luf_batch *)(void *)p;
	pc->scratch = (struct luf_batch *)(void *)(p + luf_batch_size(l->nr_cpus));
	pc->cpu = cpu;
	pc->threshold = threshold;
	pc->nr_open = 0;
	pc->key = 0;
	luf_batch_init(pc->open, l->nr_cpus);
	luf_batch_init(pc->scratch, l->nr_cpus);
	pc->magic = __luf_magic(pc, LUF_MAGIC_PCPU);
	return 0;
}

/**
 * luf_pcpu_fini() - end CPU @pc->cpu's state (the CPU goes offline, the
 * thread exits): its storage may be reused.
 * Return: 0; -EINVAL if @pc is not live; -EBUSY if removals are still
 * open on it (luf_pcpu_fold() them first, or they would be lost).
 */
static inline int luf_pcpu_fini(struct luf_pcpu *pc)
{
	if (!__luf_pcpu_live(pc))
		return -EINVAL;
	if (!luf_batch_empty(pc->open) || pc->key)
		return -EBUSY;
	pc->magic = 0;
	return 0;
}

/*
 * Move the open set into the key table (or flush it, if it holds a writable
 * translation). Keeps pc->key. Return: 0 or the flush's error (the open set
 * then stays as it was).
 */
static inline int luf_pcpu_flush_open(struct luf_pcpu *pc)
{
	bool flushed;
	int ret;

	if (luf_batch_empty(pc->open)) {
		pc->nr_open = 0; /* removals cached nowhere: nothing to fold */
		return 0;
	}
#if !defined(LUF_MUTANT_DEFER_WRITABLE)
	if (luf_batch_writable(pc->open)) {
		/* S3: a writable or dirty translation is flushed before any free. */
		ret = __luf_flush_batch(pc->luf, pc->cpu, pc->open, &flushed);
		if (ret)
			return ret;
		if (flushed)
			luf_stat_inc(pc->stats, LUF_STAT_WRITABLE_FLUSH);
		pc->nr_open = 0;
		return 0;
	}
#else
	(void)flushed;
	luf_store_relaxed(&pc->open->writable, 0); /* the mutant defers it like a read-only one */
#endif
	if (!pc->key)
		pc->key = luf_keytab_new_key(pc->kt);
	ret = __luf_keytab_fold(pc->kt, pc->key, pc->open);
	if (ret)
		return ret;
	luf_batch_clear(pc->open);
	pc->nr_open = 0;
	luf_stat_inc(pc->stats, LUF_STAT_FOLD);
	return 0;
}

/**
 * luf_pcpu_defer() - record one removed translation whose flush may wait.
 * @pc: this CPU's state. @dom: the address space it was removed from, or
 *      NULL if no protection change can race with it. @cpus: the CPUs that
 *      may cache it (the domain's mm_cpumask), l->nr_cpus bits.
 * @writable: the translation was writable or dirty (it will be flushed at
 *      the next fold, not deferred: S3).
 *
 * Call after the PTE is cleared and before the page-table lock covering it
 * is released (see luf_unmap() and luf_domain_settle()). No syscall, no allocation; writes only
 * @pc's lines, plus the domain's set when it does not cover this removal
 * yet. Every @threshold calls it folds into the key table (a shared write).
 * Return: 0; -EINVAL for NULL @cpus, a @pc or domain that is not live, a
 * domain of another instance or
 * bits set at or above nr_cpus (nothing recorded); or the error of a writable batch's flush at the
 * threshold (the removal is recorded and still pending).
 */
static inline int luf_pcpu_defer(struct luf_pcpu *pc, struct luf_domain *dom,
				 const luf_aulong *cpus, bool writable)
{
	luf_ugen_t stamp;

	if (!__luf_pcpu_live(pc) || !cpus || !luf_cpumask_valid(cpus, pc->luf->nr_cpus) ||
	    !__luf_domain_fits(dom, pc->luf))
		return -EINVAL;
	stamp = luf_ugen_stamp(&pc->luf->ugen);
	if (dom && !luf_shared_covers(&dom->set, cpus, stamp, writable))
		luf_shared_add(&dom->set, cpus, stamp, writable, pc->luf->done);
	luf_batch_add(pc->open, cpus, stamp, writable);
	if (!writable)
		luf_stat_inc(pc->stats, LUF_STAT_DEFERRED);
	if (++pc->nr_open >= pc->threshold)
		return luf_pcpu_flush_open(pc);
	return 0;
}

/**
 * luf_pcpu_fold() - close this CPU's batch and name its key.
 * @pc: this CPU's state. @key: out: the key whose set covers every removal
 *      deferred on @pc since the previous luf_pcpu_fold(), or 0 if none is
 *      owed (nothing deferred, or only writable ones, which were flushed).
 *
 * Free the folios of the batch with this key. The next defer starts a new
 * key. May flush (a writable batch).
 * Return: 0, -EINVAL for NULL or a @pc that is not live, or the flush's
 * error (*@key is then not set
 * and the batch stays open: do not free its folios).
 */
static inline int luf_pcpu_fold(struct luf_pcpu *pc, luf_key_t *key)
{
	int ret;

	if (!__luf_pcpu_live(pc) || !key)
		return -EINVAL;
	ret = luf_pcpu_flush_open(pc);
	if (ret)
		return ret;
	*key = pc->key;
	pc->key = 0;
	return 0;
}

/* luf_key_flush(); @flushed as for __luf_flush_batch(). */
static inline int __luf_key_flush(struct luf_pcpu *pc, unsigned int key, bool *flushed)
{
	int ret;

	if (flushed)
		*flushed = false;
	if (!__luf_pcpu_live(pc) || (key && !luf_keytab_valid(pc->kt, key)))
		return -EINVAL;
	if (!key)
		return 0;
	ret = luf_pcpu_flush_open(pc);
	if (ret)
		return ret;
	return __luf_shared_flush(pc->luf, pc->cpu, luf_keytab_entry(pc->kt, (luf_key_t)key),
				  pc->scratch, flushed);
}

/**
 * luf_key_flush() - flush what @key's set still needs, now.
 * @pc: this CPU's state (its open set is folded first, so a removal this
 *      CPU deferred under @key is included). @key: a key, or 0 (no-op).
 * May flush. Return: 0, -EINVAL for a @pc that is not live or a bad key,
 * or the flush's error (everything stays pending).
 */
static inline int luf_key_flush(struct luf_pcpu *pc, unsigned int key)
{
	return __luf_key_flush(pc, key, NULL);
}

#endif /* LUF_PCPU_H */
