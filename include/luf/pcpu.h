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
};

/* Bytes of storage for one CPU's state, for an instance of @nr_cpus CPUs. */
static inline size_t luf_pcpu_size(unsigned int nr_cpus)
{
	return sizeof(struct luf_pcpu) + 2 * luf_batch_size(nr_cpus);
}

/**
 * luf_pcpu_init() - set up CPU @cpu's state.
 * @pc: luf_pcpu_size(l->nr_cpus) bytes (one owner; cache-line aligned
 *      storage keeps CPUs off each other's lines). @l: the instance.
 * @kt: its key table (same CPU count). @cpu: the owner's CPU id.
 * @threshold: removals per automatic fold, >= 1 (LUF_PCPU_DEFAULT_THRESHOLD).
 * Return: 0, or -EINVAL for NULL, a CPU id >= l->nr_cpus, a table of
 * another CPU count or a zero threshold.
 */
static inline int luf_pcpu_init(struct luf_pcpu *pc, struct luf *l, struct luf_keytab *kt,
				unsigned int cpu, unsigned int threshold)
{
	char *p;

	if (!pc || !l || !kt || cpu >= l->nr_cpus || kt->nr_cpus != l->nr_cpus || !threshold)
		return -EINVAL;
	p = (char *)(pc + 1);
	pc->luf = l;
	pc->kt = kt;
	pc->stats = &l->stats[cpu];
	pc->open = (struct luf_batch *)p;
	pc->scratch = (struct luf_batch *)(p + luf_batch_size(l->nr_cpus));
	pc->cpu = cpu;
	pc->threshold = threshold;
	pc->nr_open = 0;
	pc->key = 0;
	luf_batch_init(pc->open, l->nr_cpus);
	luf_batch_init(pc->scratch, l->nr_cpus);
	return 0;
}

/*
 * Move the open set into the key table (or flush it, if it holds a writable
 * translation). Keeps pc->key. Return: 0 or the flush's error (the open set
 * then stays as it was).
 */
static inline int luf_pcpu_flush_open(struct luf_pcpu *pc)
{
	struct luf *l = pc->luf;
	int ret;

	if (luf_batch_empty(pc->open)) {
		pc->nr_open = 0; /* removals cached nowhere: nothing to fold */
		return 0;
	}
#if !defined(LUF_MUTANT_DEFER_WRITABLE)
	if (luf_batch_writable(pc->open)) {
		/* S3: a writable or dirty translation is flushed before any free. */
		ret = luf_flush_batch(l, pc->cpu, pc->open);
		if (ret)
			return ret;
		luf_stat_inc(pc->stats, LUF_STAT_WRITABLE_FLUSH);
		pc->nr_open = 0;
		return 0;
	}
#endif
	if (!pc->key)
		pc->key = luf_keytab_new_key(pc->kt);
	ret = luf_keytab_fold(pc->kt, pc->key, pc->open, l->done);
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
 * Return: 0; -EINVAL for NULL @pc/@cpus, a domain of another CPU count or
 * bits set at or above nr_cpus (nothing recorded); or the error of a writable batch's flush at the
 * threshold (the removal is recorded and still pending).
 */
static inline int luf_pcpu_defer(struct luf_pcpu *pc, struct luf_domain *dom,
				 const luf_aulong *cpus, bool writable)
{
	luf_ugen_t stamp;

	if (!pc || !cpus || !luf_cpumask_valid(cpus, pc->luf->nr_cpus) ||
	    !luf_domain_fits(dom, pc->luf->nr_cpus))
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
 * Return: 0, -EINVAL for NULL, or the flush's error (*@key is then not set
 * and the batch stays open: do not free its folios).
 */
static inline int luf_pcpu_fold(struct luf_pcpu *pc, luf_key_t *key)
{
	int ret;

	if (!pc || !key)
		return -EINVAL;
	ret = luf_pcpu_flush_open(pc);
	if (ret)
		return ret;
	*key = pc->key;
	pc->key = 0;
	return 0;
}

/**
 * luf_key_flush() - flush what @key's set still needs, now.
 * @pc: this CPU's state (its open set is folded first, so a removal this
 *      CPU deferred under @key is included). @key: a key, or 0 (no-op).
 * May flush. Return: 0, -EINVAL for a bad key, or the flush's error
 * (everything stays pending).
 */
static inline int luf_key_flush(struct luf_pcpu *pc, unsigned int key)
{
	int ret;

	if (!pc || (key && !luf_keytab_valid(pc->kt, key)))
		return -EINVAL;
	if (!key)
		return 0;
	ret = luf_pcpu_flush_open(pc);
	if (ret)
		return ret;
	return luf_shared_flush(pc->luf, pc->cpu, luf_keytab_entry(pc->kt, (luf_key_t)key),
				pc->scratch);
}

#endif /* LUF_PCPU_H */
