// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/micro/ops.c - the fast paths luf-micro measures, and the flush path
 * (marking CPUs done, luf_flush_batch) with a baseline of the code before
 * the done summary.
 *
 * Each operation is inlined into a loop with a compiler barrier per
 * iteration (micro_barrier()), as a caller's loop over folios or PTEs
 * would call it, and folds its result into th->sink or th->bad so the
 * compiler cannot drop it and a wrong result fails the run (the smoke
 * test relies on that; it asserts no timing).
 *
 * Sets of N CPUs are sets of an instance of N CPUs with every CPU in the
 * set. "All done" sets have been flushed (done[cpu] >= the set's ugen on
 * every CPU) through the real path, luf_local_flush_end() of every CPU, so
 * the done summary (luf/done.h) is in the state that path leaves it in,
 * never written by hand: check_done of such a set is one comparison
 * (the summary's all), whatever N; diet still visits and clears every
 * cpumask word of the set. The check_done_lag_* sets have one CPU in the
 * middle of the set not done (luf_flush_batch() of all the others).
 */
#include "micro.h"

static struct luf_batch *micro_new_batch(unsigned int nr_cpus)
{
	struct luf_batch *b = testenv_zalloc(luf_batch_size(nr_cpus));

	if (luf_batch_init(b, nr_cpus))
		abort();
	return b;
}

/* @m = @n CPUs from @first on (modulo @nr_cpus). */
static void micro_mask(unsigned long *m, unsigned int nr_cpus, unsigned int first, unsigned int n)
{
	luf_cpumask_clear(m, nr_cpus);
	for (unsigned int i = 0; i < n && i < nr_cpus; i++)
		luf_cpumask_set_cpu(m, nr_cpus, (first + i) % nr_cpus);
}

/* Mark every CPU of th->mask done with a new generation, as a flush would. */
static void micro_mark_done(struct micro_thread *th)
{
	struct luf *l = th->env->t.luf;

	testenv_external_flush(l, th->mask, l->nr_cpus);
}

/* A set of every CPU of the instance, stamped now (not done yet). */
static struct luf_batch *micro_full_set(struct micro_thread *th)
{
	struct luf *l = th->env->t.luf;
	struct luf_batch *b = micro_new_batch(l->nr_cpus);

	micro_mask(th->mask, l->nr_cpus, 0, l->nr_cpus);
	if (luf_batch_add(b, th->mask, luf_ugen_stamp(&l->ugen), false))
		abort();
	return b;
}

void micro_thread_fini(struct micro_thread *th)
{
	free(th->fl);
	free(th->folios);
	free(th->set);
	free(th->tmpl);
	free(th->snaps);
	free(th->base);
	th->fl = NULL;
	th->folios = NULL;
	th->set = th->tmpl = NULL;
	th->snaps = NULL;
	th->base = NULL;
}

/* A private free list and MICRO_RUN folios for @th. */
static int micro_init_freelist(struct micro_thread *th)
{
	struct testenv *t = &th->env->t;

	th->fl = testenv_zalloc(luf_freelist_size(t->nr_cpus));
	th->folios = testenv_zalloc(MICRO_RUN * sizeof(*th->folios));
	return luf_freelist_init(th->fl, t->luf, t->kt, 0) ? -1 : 0;
}

/*
 * Empty the free list and return every folio to IN_USE (not measured).
 * The folios on it are dropped on purpose: the storage is zeroed first,
 * since luf_freelist_init() refuses a live list (-EBUSY) and
 * luf_freelist_fini() one that still holds folios.
 */
static void micro_reset_freelist(struct micro_thread *th, unsigned int nr)
{
	struct testenv *t = &th->env->t;

	memset(th->fl, 0, luf_freelist_size(t->nr_cpus));
	luf_freelist_init(th->fl, t->luf, t->kt, 0);
	memset(th->folios, 0, nr * sizeof(*th->folios));
}

/* Put @nr folios on the clean list (free with key 0: no flush owed). */
static int micro_fill_clean(struct micro_thread *th, unsigned int nr)
{
	int err = 0;

	micro_reset_freelist(th, nr);
	for (unsigned int i = 0; i < nr; i++)
		err |= luf_free(th->fl, th->pc, &th->folios[i].lf, 0);
	return err;
}

/*
 * defer_free: luf_free() of folios whose key's set is not done: they go
 * to the pend list. One key per run of MICRO_RUN folios, as reclaim frees
 * the folios of one unmap batch; the first free of each run reads the
 * key's set (the verdict cache is cold after the list's re-init), the
 * others hit the cache. The list is re-initialised between runs, outside
 * the measured stretch.
 */
static int defer_free_init(struct micro_thread *th)
{
	struct testenv *t = &th->env->t;

	if (micro_init_freelist(th))
		return -1;
	micro_mask(th->mask, t->nr_cpus, th->cpu, 4);
	if (luf_unmap(th->pc, NULL, th->mask, LUF_PTE_ACCESSIBLE) ||
	    luf_pcpu_fold(th->pc, &th->key))
		return -1;
	return th->key && luf_keytab_check_done(t->kt, th->key) == 0 ? 0 : -1;
}

static void defer_free_run(struct micro_thread *th, unsigned long n)
{
	while (n) {
		unsigned int nr = n < MICRO_RUN ? (unsigned int)n : MICRO_RUN;
		int err = 0;

		micro_reset_freelist(th, nr);
		micro_meter_start(&th->meter);
		for (unsigned int i = 0; i < nr; i++) {
			err |= luf_free(th->fl, th->pc, &th->folios[i].lf, th->key);
			micro_barrier();
		}
		micro_meter_stop(&th->meter);
		if (err || luf_freelist_nr_pend(th->fl) != nr)
			th->bad++;
		n -= nr;
	}
}

/*
 * defer_free_miss: as defer_free, but the key alternates between two keys
 * whose sets are not done, so every free misses the verdict cache: it
 * copies the key's set (seqcount read), checks it and folds it into the
 * list's pend set. The worst case of luf_free(); reclaim frees runs of
 * one key instead.
 */
static int defer_free_miss_init(struct micro_thread *th)
{
	struct testenv *t = &th->env->t;

	if (defer_free_init(th))
		return -1;
	if (luf_unmap(th->pc, NULL, th->mask, LUF_PTE_ACCESSIBLE) ||
	    luf_pcpu_fold(th->pc, &th->key2))
		return -1;
	return th->key2 && th->key2 != th->key && luf_keytab_check_done(t->kt, th->key2) == 0 ? 0
											      : -1;
}

static void defer_free_miss_run(struct micro_thread *th, unsigned long n)
{
	while (n) {
		unsigned int nr = n < MICRO_RUN ? (unsigned int)n : MICRO_RUN;
		int err = 0;

		micro_reset_freelist(th, nr);
		micro_meter_start(&th->meter);
		for (unsigned int i = 0; i < nr; i++) {
			err |=
			    luf_free(th->fl, th->pc, &th->folios[i].lf, i & 1 ? th->key2 : th->key);
			micro_barrier();
		}
		micro_meter_stop(&th->meter);
		if (err || luf_freelist_nr_pend(th->fl) != nr)
			th->bad++;
		n -= nr;
	}
}

/*
 * unmap_ro: luf_unmap() of a read-only, clean translation cached on 4
 * CPUs, in a domain: luf_pcpu_defer() stamps it, finds the domain already
 * covering it and adds it to the open per-CPU set. Every
 * LUF_PCPU_DEFAULT_THRESHOLD calls the set folds into the key table; that
 * cost is in the average.
 */
static int unmap_ro_init(struct micro_thread *th)
{
	micro_mask(th->mask, th->env->t.nr_cpus, th->cpu, 4);
	return 0;
}

static void unmap_ro_run(struct micro_thread *th, unsigned long n)
{
	struct luf_domain *dom = th->env->t.dom;
	int err = 0;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		err |= luf_unmap(th->pc, dom, th->mask, LUF_PTE_ACCESSIBLE);
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	if (err)
		th->bad++;
}

/*
 * alloc_clean: luf_alloc() with flags 0 popping a clean folio. The list
 * is refilled with MICRO_RUN clean folios between runs, outside the
 * measured stretch: only the allocations are measured.
 */
static int alloc_clean_init(struct micro_thread *th)
{
	return micro_init_freelist(th);
}

static void alloc_clean_run(struct micro_thread *th, unsigned long n)
{
	while (n) {
		unsigned int nr = n < MICRO_RUN ? (unsigned int)n : MICRO_RUN;
		uintptr_t acc = 0;
		int err = micro_fill_clean(th, nr);

		micro_meter_start(&th->meter);
		for (unsigned int i = 0; i < nr; i++) {
			struct luf_folio *f = NULL;

			err |= luf_alloc(th->fl, th->pc, 0, &f);
			acc += (uintptr_t)f;
			micro_barrier();
		}
		micro_meter_stop(&th->meter);
		if (err || luf_freelist_nr_clean(th->fl) != 0)
			th->bad++;
		th->sink += acc;
		n -= nr;
	}
}

/* free_alloc: one clean luf_alloc() and one luf_free() to clean (key 0): a stable list. */
static int free_alloc_init(struct micro_thread *th)
{
	return micro_init_freelist(th) || micro_fill_clean(th, MICRO_RUN) ? -1 : 0;
}

static void free_alloc_run(struct micro_thread *th, unsigned long n)
{
	int err = 0;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		struct luf_folio *f = NULL;

		err |= luf_alloc(th->fl, th->pc, 0, &f);
		err |= luf_free(th->fl, th->pc, f, 0);
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	if (err || luf_freelist_nr_clean(th->fl) != MICRO_RUN)
		th->bad++;
}

/*
 * check_done: luf_batch_check_done() of an all-done set: one comparison
 * (the summary's all has passed the set's ugen), whatever its CPU count.
 */
static int check_done_init(struct micro_thread *th)
{
	th->set = micro_full_set(th);
	micro_mark_done(th);
	return luf_batch_check_done(th->set, &th->env->t.luf->done) ? 0 : -1;
}

static void check_done_run(struct micro_thread *th, unsigned long n)
{
	const struct luf_done *d = &th->env->t.luf->done;
	unsigned long ok = 0;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		ok += luf_batch_check_done(th->set, d);
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	if (ok != n)
		th->bad++;
}

/* keytab_check_done: luf_keytab_check_done() of a key whose set is all done. */
static int keytab_check_done_init(struct micro_thread *th)
{
	struct testenv *t = &th->env->t;

	th->set = micro_full_set(th);
	th->key = __luf_keytab_new_key(t->kt);
	if (__luf_keytab_fold(t->kt, th->key, th->set))
		return -1;
	micro_mark_done(th);
	return luf_keytab_check_done(t->kt, th->key) == 1 ? 0 : -1;
}

static void keytab_check_done_run(struct micro_thread *th, unsigned long n)
{
	const struct luf_keytab *kt = th->env->t.kt;
	unsigned long ok = 0;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		ok += (unsigned long)luf_keytab_check_done(kt, th->key);
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	if (ok != n)
		th->bad++;
}

/*
 * diet: luf_batch_diet() of an all-done set: every CPU is dropped and the
 * set ends empty. The set is reset from a template with luf_batch_copy()
 * INSIDE the measured loop (the copy_* rows measure that reset alone).
 */
static int diet_init(struct micro_thread *th)
{
	th->tmpl = micro_full_set(th);
	micro_mark_done(th);
	th->set = micro_new_batch(th->env->t.nr_cpus);
	return 0;
}

static void diet_run(struct micro_thread *th, unsigned long n)
{
	const struct luf_done *d = &th->env->t.luf->done;
	unsigned long dropped = 0;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		luf_batch_copy(th->set, th->tmpl);
		dropped += luf_batch_diet(th->set, d);
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	if (dropped != n * th->env->t.nr_cpus || !luf_batch_empty(th->set))
		th->bad++;
}

/* copy: luf_batch_copy() of a full set alone (the reset inside the diet rows). */
static void copy_run(struct micro_thread *th, unsigned long n)
{
	unsigned long acc = 0;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		luf_batch_copy(th->set, th->tmpl);
		acc += luf_batch_ugen(th->set);
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	if (acc != n * luf_batch_ugen(th->tmpl))
		th->bad++;
}

/*
 * fold: luf_batch_fold() of a full set into a set holding it already
 * (fold is idempotent, so no reset is needed; it still writes every word).
 */
static int fold_init(struct micro_thread *th)
{
	th->tmpl = micro_full_set(th);
	th->set = micro_new_batch(th->env->t.nr_cpus);
	return 0;
}

static void fold_run(struct micro_thread *th, unsigned long n)
{
	int err = 0;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		err |= luf_batch_fold(th->set, th->tmpl);
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	if (err || !luf_batch_equal(th->set, th->tmpl))
		th->bad++;
}

/*
 * check_done_lag: luf_batch_check_done() of a set of every CPU where one
 * CPU in the middle (micro_laggard(): CPU 700 of 1024, 2800 of 4096) has
 * not flushed: luf_flush_batch() of every other CPU brought them and the
 * summary past the set's ugen. The answer is "not done" every time.
 */
static unsigned int micro_laggard(unsigned int nr_cpus)
{
	return nr_cpus * 700u / 1024u;
}

static int check_done_lag_init(struct micro_thread *th)
{
	struct luf *l = th->env->t.luf;
	struct luf_batch *others = micro_new_batch(l->nr_cpus);
	int ret;

	th->set = micro_full_set(th);
	if (luf_cpumask_clear_cpu(th->mask, l->nr_cpus, micro_laggard(l->nr_cpus)) ||
	    luf_batch_add(others, th->mask, luf_ugen_stamp(&l->ugen), false))
		abort();
	ret = luf_flush_batch(l, th->cpu, others);
	free(others);
	if (ret != 1 || luf_batch_check_done(th->set, &l->done) ||
	    __luf_batch_check_done_scan(th->set, &l->done))
		return -1;
	return 0;
}

static void check_done_lag_run(struct micro_thread *th, unsigned long n)
{
	const struct luf_done *d = &th->env->t.luf->done;
	unsigned long done = 0;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		done += luf_batch_check_done(th->set, d);
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	if (done)
		th->bad++;
}

/*
 * The baseline of the mark rows: marking done as luf did before the done
 * summary (include/luf/done.h and lib/flush.c of commit 824f87d~1, luf's
 * own code, renamed): a bare array of per-CPU counters, one
 * compare-and-swap per CPU, no summary. It runs on storage of its own
 * (th->base), laid out as the instance's counters, in the same run as the
 * new code, so that new/old is a ratio of one run.
 */
static inline unsigned long base_done_mark_cpu(struct luf_done_cpu *d, unsigned int cpu,
					       unsigned long ugen)
{
	unsigned long *p = &__luf_per_cpu(d, cpu)->done;
	unsigned long old = __luf_read_once(p), retries = 0;

	if (luf_unlikely(!ugen))
		return 0;
	while (luf_ugen_before(old, ugen)) {
		/* Release: the completed flush before the new value (luf_done_read()). */
		if (__luf_try_cmpxchg_release(p, &old, ugen))
			break;
		retries++;
	}
	return retries;
}

static inline unsigned long base_done_mark(struct luf_done_cpu *d, const unsigned long *cpus,
					   unsigned int nr_cpus, unsigned long ugen)
{
	unsigned long retries = 0;
	unsigned int cpu;

	luf_for_each_cpu(cpu, cpus, nr_cpus) {
		__luf_add_relaxed(&__luf_per_cpu(d, cpu)->received, 1);
		retries += base_done_mark_cpu(d, cpu, ugen);
	}
	return retries;
}

/* The old luf_local_flush_end(), on @d. Not inlined: the real one is a call into libluf. */
static __attribute__((noinline)) int base_local_flush_end(struct luf *l, struct luf_done_cpu *d,
							  unsigned int cpu, unsigned long snap)
{
	if (!__luf_live(l) || cpu >= l->nr_cpus || !snap ||
	    luf_ugen_before(luf_ugen_current(&l->ugen), snap))
		return -EINVAL;
	__luf_stat_add(l->stats, cpu, LUF_STAT_CAS_RETRY, (long)base_done_mark_cpu(d, cpu, snap));
	return 0;
}

/*
 * The mark rows: th->mask holds every CPU of the instance; the snapshots
 * of a run of MICRO_RUN marks are taken before it (luf_local_flush_begin(),
 * outside the measured part), so that every mark raises the counters it
 * marks, as a flush that just returned does. th->base: the baseline's
 * counters, started where luf_init() started the instance's.
 */
static int mark_init(struct micro_thread *th)
{
	struct luf *l = th->env->t.luf;
	unsigned long start = luf_ugen_current(&l->ugen);

	micro_mask(th->mask, l->nr_cpus, 0, l->nr_cpus);
	th->snaps = testenv_zalloc(MICRO_RUN * sizeof(*th->snaps));
	th->base = testenv_zalloc(luf_done_size(l->nr_cpus));
	for (unsigned int c = 0; c < l->nr_cpus; c++) {
		__luf_write_once(&th->base[c].done, start);
		__luf_write_once(&th->base[c].received, 0);
	}
	return 0;
}

static void micro_take_snaps(struct micro_thread *th, unsigned int nr)
{
	struct luf *l = th->env->t.luf;

	for (unsigned int i = 0; i < nr; i++)
		th->snaps[i] = luf_local_flush_begin(l);
}

/* Did the marks of the run reach @cpu's counter (of @d, or of the baseline's)? */
static void micro_check_marked(struct micro_thread *th, const struct luf_done_cpu *base,
			       unsigned int cpu, unsigned int nr)
{
	unsigned long v =
	    base ? __luf_read_once(&base[cpu].done) : luf_done_read(&th->env->t.luf->done, cpu);

	if (luf_ugen_before(v, th->snaps[nr - 1]))
		th->bad++;
}

/*
 * mark_done: __luf_done_mark() of every CPU of the instance (what
 * luf_flush_batch() does after the flush), the summary kept; per CPU.
 * base_mark_done: the same with the old __luf_done_mark().
 */
static void mark_done_run(struct micro_thread *th, unsigned long n, bool base)
{
	struct luf *l = th->env->t.luf;
	unsigned long retries = 0;

	while (n) {
		unsigned int nr = n < MICRO_RUN ? (unsigned int)n : MICRO_RUN;

		micro_take_snaps(th, nr);
		micro_meter_start(&th->meter);
		if (base) {
			for (unsigned int i = 0; i < nr; i++) {
				retries +=
				    base_done_mark(th->base, th->mask, l->nr_cpus, th->snaps[i]);
				micro_barrier();
			}
		} else {
			for (unsigned int i = 0; i < nr; i++) {
				retries +=
				    __luf_done_mark(&l->done, th->mask, l->nr_cpus, th->snaps[i]);
				micro_barrier();
			}
		}
		micro_meter_stop(&th->meter);
		micro_check_marked(th, base ? th->base : NULL, l->nr_cpus - 1, nr);
		n -= nr;
	}
	th->sink += retries;
}

static void mark_done_new_run(struct micro_thread *th, unsigned long n)
{
	mark_done_run(th, n, false);
}

static void mark_done_base_run(struct micro_thread *th, unsigned long n)
{
	mark_done_run(th, n, true);
}

/*
 * mark_local: luf_local_flush_end() of the thread's own CPU with a fresh
 * snapshot each time (a CPU that flushed its own TLB, again and again: it
 * is ahead of its group, whose summary another CPU holds back).
 * base_mark_local: the old luf_local_flush_end().
 */
static void mark_local_run(struct micro_thread *th, unsigned long n, bool base)
{
	struct luf *l = th->env->t.luf;
	int err = 0;

	while (n) {
		unsigned int nr = n < MICRO_RUN ? (unsigned int)n : MICRO_RUN;

		micro_take_snaps(th, nr);
		micro_meter_start(&th->meter);
		if (base) {
			for (unsigned int i = 0; i < nr; i++) {
				err |= base_local_flush_end(l, th->base, th->cpu, th->snaps[i]);
				micro_barrier();
			}
		} else {
			for (unsigned int i = 0; i < nr; i++) {
				err |= luf_local_flush_end(l, th->cpu, th->snaps[i]);
				micro_barrier();
			}
		}
		micro_meter_stop(&th->meter);
		micro_check_marked(th, base ? th->base : NULL, th->cpu, nr);
		n -= nr;
	}
	if (err)
		th->bad++;
}

static void mark_local_new_run(struct micro_thread *th, unsigned long n)
{
	mark_local_run(th, n, false);
}

static void mark_local_base_run(struct micro_thread *th, unsigned long n)
{
	mark_local_run(th, n, true);
}

/*
 * mark_each: one snapshot, then luf_local_flush_end() of every CPU of the
 * instance in turn (a flush each CPU did itself, reported CPU by CPU, as
 * testenv_external_flush() does); per CPU. Every CPU of a word held the
 * group's minimum with the others, so each mark clears its bit in the
 * group's hold mask (one atomic) and the last one recomputes the group.
 * base_mark_each: the old luf_local_flush_end().
 */
static void mark_each_run(struct micro_thread *th, unsigned long n, bool base)
{
	struct luf *l = th->env->t.luf;
	int err = 0;

	while (n) {
		unsigned int nr = n < MICRO_RUN ? (unsigned int)n : MICRO_RUN;

		micro_take_snaps(th, nr);
		micro_meter_start(&th->meter);
		for (unsigned int i = 0; i < nr; i++) {
			for (unsigned int c = 0; c < l->nr_cpus; c++) {
				if (base)
					err |= base_local_flush_end(l, th->base, c, th->snaps[i]);
				else
					err |= luf_local_flush_end(l, c, th->snaps[i]);
			}
			micro_barrier();
		}
		micro_meter_stop(&th->meter);
		micro_check_marked(th, base ? th->base : NULL, l->nr_cpus - 1, nr);
		n -= nr;
	}
	if (err)
		th->bad++;
}

static void mark_each_new_run(struct micro_thread *th, unsigned long n)
{
	mark_each_run(th, n, false);
}

static void mark_each_base_run(struct micro_thread *th, unsigned long n)
{
	mark_each_run(th, n, true);
}

/*
 * The kernel's TLB-flush hooks (luf_tlb_flush_begin() and _end() of mm/luf.c,
 * with interrupts off in every TLB flush of a CPU, flush_tlb_func(), and in
 * switch_mm_irqs_off()) are luf_flush_snapshot() and luf_local_flush_end() of
 * the CPU that flushed.
 * hook_idle: the source has not moved since this CPU's last flush (reclaim
 * deferred nothing meanwhile: the case of every flush of a program that
 * reclaim leaves alone): a load of the source, the checks, a load of the
 * CPU's counter, no write but the statistics.
 */
static int hook_idle_init(struct micro_thread *th)
{
	struct luf *l = th->env->t.luf;

	/* Once, so that the CPU's counter is at the source. */
	return luf_local_flush_end(l, th->cpu, luf_local_flush_begin(l)) ? -1 : 0;
}

static void hook_idle_run(struct micro_thread *th, unsigned long n)
{
	struct luf *l = th->env->t.luf;
	int err = 0;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		err |= luf_local_flush_end(l, th->cpu, luf_flush_snapshot(l));
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	if (err)
		th->bad++;
}

/*
 * hook_regroup_64: the same hook's dearest case without contention: the
 * source moved, every other CPU of the 64-CPU word has flushed past the
 * group's minimum (marked outside the measured part), and this CPU was the
 * last at it: its mark clears the group's hold mask and recomputes the
 * group (64 counter loads, the stores of the summary, a barrier, the
 * second reads). While other CPUs keep moving the group under it, a
 * recomputation goes round again, at most __LUF_DONE_SUM_ROUNDS + 1 times,
 * then recomputes the summary's "all" once, in at most
 * __LUF_DONE_SUM_ROUNDS + 1 passes of two loads per cpumask word (a
 * compare-and-swap retry is another CPU's raise of the same word). Only
 * thread 0 runs it: the other threads' CPUs are in the same word.
 */
static void hook_regroup_run(struct micro_thread *th, unsigned long n)
{
	struct luf *l = th->env->t.luf;
	unsigned long snap;
	int err = 0;

	/* The instance's 64 CPUs are one word: one thread moves it (others would race it). */
	if (th->cpu)
		return;
	for (unsigned long i = 0; i < n; i++) {
		snap = luf_local_flush_begin(l);
		for (unsigned int c = 1; c < l->nr_cpus; c++)
			err |= luf_local_flush_end(l, c, snap);
		/* CPU 0 holds the group back: the measured mark must move it. */
		if (__luf_done_group(&l->done, 0) == snap)
			th->bad++;
		micro_meter_start(&th->meter);
		err |= luf_local_flush_end(l, 0, snap);
		micro_meter_stop(&th->meter);
		if (__luf_done_group(&l->done, 0) != snap)
			th->bad++;
	}
	if (err)
		th->bad++;
}

/*
 * flush: luf_flush_batch() of a set of every CPU of the instance, with the
 * micro env's backend (it counts and copies the mask; no TLB is flushed):
 * the diet (no CPU has flushed: every counter is read), a new ugen, the
 * backend call, __luf_done_mark() of every CPU and the summary; per CPU
 * flushed. The set is refilled INSIDE the timed loop (luf_batch_add() of
 * every CPU with a fresh stamp, after the previous flush: a stamp taken
 * before it would make the set done and the flush a no-op); that refill
 * is O(cpumask words) and one barrier.
 */
static int flush_init(struct micro_thread *th)
{
	struct luf *l = th->env->t.luf;

	micro_mask(th->mask, l->nr_cpus, 0, l->nr_cpus);
	th->set = micro_new_batch(l->nr_cpus);
	return 0;
}

static void flush_run(struct micro_thread *th, unsigned long n)
{
	struct luf *l = th->env->t.luf;
	unsigned long flushed = 0;
	int err = 0, ret;

	micro_meter_start(&th->meter);
	for (unsigned long i = 0; i < n; i++) {
		err |= luf_batch_add(th->set, th->mask, luf_ugen_stamp(&l->ugen), false);
		ret = luf_flush_batch(l, th->cpu, th->set);
		if (ret < 0)
			err = 1;
		else
			flushed += (unsigned long)ret;
		micro_barrier();
	}
	micro_meter_stop(&th->meter);
	/* Alone, every call flushes; with other threads, another flush may make it a no-op. */
	if (err || !luf_batch_empty(th->set) || (th->env->nr_threads == 1 && flushed != n))
		th->bad++;
}

/*
 * The MICRO_PAIR operations: thread 0 runs check_done of an all-done set
 * of every CPU (as check_done_*); every other thread marks CPUs done until
 * thread 0 has finished the same round (each thread counts its calls of
 * run(), warm-up included: all threads make the same calls).
 * mark_own: luf_local_flush_begin(), then luf_local_flush_end() of the
 * thread's own CPU: after the first round its CPU is ahead of its group,
 * and the summary does not move (one barrier and one load of the group).
 * mark_all: luf_local_flush_begin(), then luf_local_flush_end() of every
 * CPU in turn: the last CPU of the round moves the group and all, the
 * line thread 0 reads, once per round.
 */
static int pair_init(struct micro_thread *th)
{
	struct luf *l = th->env->t.luf;

	if (th->cpu == 0)
		return check_done_init(th);
	micro_mask(th->mask, l->nr_cpus, 0, l->nr_cpus);
	return 0;
}

static void pair_run(struct micro_thread *th, unsigned long n, bool all)
{
	struct luf *l = th->env->t.luf;
	unsigned long round = ++th->round, snap, marks = 0;
	int err = 0;

	if (th->cpu == 0) {
		check_done_run(th, n);
		__luf_store_release(&th->env->stop, round);
		return;
	}
	while (__luf_load_acquire(&th->env->stop) < round) {
		snap = luf_local_flush_begin(l);
		if (!all) {
			err |= luf_local_flush_end(l, th->cpu, snap);
			marks++;
			continue;
		}
		for (unsigned int c = 0; c < l->nr_cpus; c++)
			err |= luf_local_flush_end(l, c, snap);
		marks += l->nr_cpus;
	}
	th->sink += marks;
	if (err)
		th->bad++;
}

static void pair_own_run(struct micro_thread *th, unsigned long n)
{
	pair_run(th, n, false);
}

static void pair_all_run(struct micro_thread *th, unsigned long n)
{
	pair_run(th, n, true);
}

/* A row of the table: every field, so that no initializer is missing one. */
#define MICRO_OP(name, label, cpus, iters, init, run, per, flags) \
	{                                                         \
		name, label, cpus, iters, init, run, per, flags   \
	}

#define MICRO_SET_OPS(n, it_check, it_diet, it_fold)                                              \
	MICRO_OP("check_done_" #n, "luf_batch_check_done, every CPU done (the summary)", n,       \
		 it_check, check_done_init, check_done_run, 1, 0),                                \
	    MICRO_OP("keytab_check_done_" #n, "luf_keytab_check_done (seqcount read), all done",  \
		     n, it_check, keytab_check_done_init, keytab_check_done_run, 1, 0),           \
	    MICRO_OP("diet_" #n, "luf_batch_diet, all done; reset (copy) in the timed loop", n,   \
		     it_diet, diet_init, diet_run, 1, 0),                                         \
	    MICRO_OP("copy_" #n, "luf_batch_copy alone (the diet reset)", n, it_fold, diet_init,  \
		     copy_run, 1, 0),                                                             \
	    MICRO_OP("fold_" #n, "luf_batch_fold of a full set", n, it_fold, fold_init, fold_run, \
		     1, 0)

const struct micro_op micro_ops[] = {
    MICRO_OP("defer_free", "luf_free to pend; one key per run of 512 folios", 64, 10000000,
	     defer_free_init, defer_free_run, 1, 0),
    MICRO_OP("defer_free_miss", "luf_free to pend; key changes every folio", 64, 2000000,
	     defer_free_miss_init, defer_free_miss_run, 1, 0),
    MICRO_OP("unmap_ro", "luf_unmap of a read-only PTE (the defer record)", 64, 10000000,
	     unmap_ro_init, unmap_ro_run, 1, 0),
    MICRO_OP("alloc_clean", "luf_alloc(0) of a clean folio; refill untimed", 64, 10000000,
	     alloc_clean_init, alloc_clean_run, 1, 0),
    MICRO_OP("free_alloc", "luf_alloc(0) + luf_free to clean (a pair)", 64, 10000000,
	     free_alloc_init, free_alloc_run, 1, 0),
    MICRO_SET_OPS(4, 10000000, 10000000, 10000000),
    MICRO_SET_OPS(64, 10000000, 1000000, 10000000),
    MICRO_SET_OPS(1024, 10000000, 1000000, 1000000),
    MICRO_SET_OPS(4096, 10000000, 500000, 500000),
    MICRO_OP("check_done_lag_1024", "luf_batch_check_done, CPU 700 not done, others done", 1024,
	     2000000, check_done_lag_init, check_done_lag_run, 1, 0),
    MICRO_OP("check_done_lag_4096", "luf_batch_check_done, CPU 2800 not done, others done", 4096,
	     2000000, check_done_lag_init, check_done_lag_run, 1, 0),
    MICRO_OP("mark_done_64", "__luf_done_mark of every CPU, summary kept; per CPU", 64, 50000,
	     mark_init, mark_done_new_run, 64, 0),
    MICRO_OP("base_mark_done_64", "the same, code before the summary (824f87d~1)", 64, 50000,
	     mark_init, mark_done_base_run, 64, 0),
    MICRO_OP("mark_done_1024", "__luf_done_mark of every CPU, summary kept; per CPU", 1024, 4000,
	     mark_init, mark_done_new_run, 1024, 0),
    MICRO_OP("base_mark_done_1024", "the same, code before the summary (824f87d~1)", 1024, 4000,
	     mark_init, mark_done_base_run, 1024, 0),
    MICRO_OP("mark_local", "luf_local_flush_end of its own CPU, fresh snapshots", 64, 2000000,
	     mark_init, mark_local_new_run, 1, 0),
    MICRO_OP("base_mark_local", "the same, code before the summary (824f87d~1)", 64, 2000000,
	     mark_init, mark_local_base_run, 1, 0),
    MICRO_OP("mark_each_64", "luf_local_flush_end of each CPU, one snapshot; per CPU", 64, 20000,
	     mark_init, mark_each_new_run, 64, 0),
    MICRO_OP("base_mark_each_64", "the same, code before the summary (824f87d~1)", 64, 20000,
	     mark_init, mark_each_base_run, 64, 0),
    MICRO_OP("hook_idle", "flush hook: snapshot + luf_local_flush_end, source still", 64, 10000000,
	     hook_idle_init, hook_idle_run, 1, 0),
    MICRO_OP("hook_regroup_64", "flush hook: last CPU at the group's minimum, recomputes", 64,
	     50000, mark_init, hook_regroup_run, 1, 0),
    MICRO_OP("flush_64", "luf_flush_batch of every CPU (no TLB flush); per CPU", 64, 20000,
	     flush_init, flush_run, 64, 0),
    MICRO_OP("flush_1024", "luf_flush_batch of every CPU (no TLB flush); per CPU", 1024, 2000,
	     flush_init, flush_run, 1024, 0),
    MICRO_OP("check_done_64_mark_own", "thread 0: check_done_64; others: mark their own CPU", 64,
	     10000000, pair_init, pair_own_run, 1, MICRO_PAIR),
    MICRO_OP("check_done_64_mark_all", "thread 0: check_done_64; others: mark every CPU", 64,
	     10000000, pair_init, pair_all_run, 1, MICRO_PAIR),
};

const unsigned int micro_nr_ops = sizeof(micro_ops) / sizeof(micro_ops[0]);
