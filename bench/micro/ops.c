// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/micro/ops.c - the fast paths luf-micro measures.
 *
 * Each operation is inlined into a loop with a compiler barrier per
 * iteration (micro_barrier()), as a caller's loop over folios or PTEs
 * would call it, and folds its result into th->sink or th->bad so the
 * compiler cannot drop it and a wrong result fails the run (the smoke
 * test relies on that; it asserts no timing).
 *
 * Sets of N CPUs are sets of an instance of N CPUs with every CPU in the
 * set, which is the worst case for check_done and diet (they walk every
 * CPU). "All done" sets have been flushed (done[cpu] >= the set's ugen on
 * every CPU).
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
	th->fl = NULL;
	th->folios = NULL;
	th->set = th->tmpl = NULL;
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

/* check_done: luf_batch_check_done() of an all-done set (walks every CPU). */
static int check_done_init(struct micro_thread *th)
{
	th->set = micro_full_set(th);
	micro_mark_done(th);
	return luf_batch_check_done(th->set, th->env->t.done) ? 0 : -1;
}

static void check_done_run(struct micro_thread *th, unsigned long n)
{
	const struct luf_done_cpu *d = th->env->t.done;
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
	const struct luf_done_cpu *d = th->env->t.done;
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

#define MICRO_SET_OPS(n, it_check, it_diet, it_fold)                                                \
	{"check_done_" #n, "luf_batch_check_done, every CPU done", n, it_check, check_done_init,    \
	 check_done_run},                                                                           \
	    {"keytab_check_done_" #n,                                                               \
	     "luf_keytab_check_done (seqcount read), all done",                                     \
	     n,                                                                                     \
	     it_check,                                                                              \
	     keytab_check_done_init,                                                                \
	     keytab_check_done_run},                                                                \
	    {"diet_" #n, "luf_batch_diet, all done; reset (copy) in the timed loop",                \
	     n,		 it_diet,                                                                   \
	     diet_init,	 diet_run},                                                                 \
	    {"copy_" #n, "luf_batch_copy alone (the diet reset)", n, it_fold, diet_init, copy_run}, \
	{                                                                                           \
		"fold_" #n, "luf_batch_fold of a full set", n, it_fold, fold_init, fold_run         \
	}

const struct micro_op micro_ops[] = {
    {"defer_free", "luf_free to pend; one key per run of 512 folios", 64, 10000000, defer_free_init,
     defer_free_run},
    {"defer_free_miss", "luf_free to pend; key changes every folio", 64, 2000000,
     defer_free_miss_init, defer_free_miss_run},
    {"unmap_ro", "luf_unmap of a read-only PTE (the defer record)", 64, 10000000, unmap_ro_init,
     unmap_ro_run},
    {"alloc_clean", "luf_alloc(0) of a clean folio; refill untimed", 64, 10000000, alloc_clean_init,
     alloc_clean_run},
    {"free_alloc", "luf_alloc(0) + luf_free to clean (a pair)", 64, 10000000, free_alloc_init,
     free_alloc_run},
    MICRO_SET_OPS(4, 10000000, 10000000, 10000000),
    MICRO_SET_OPS(64, 1000000, 1000000, 10000000),
    MICRO_SET_OPS(1024, 50000, 100000, 1000000),
};

const unsigned int micro_nr_ops = sizeof(micro_ops) / sizeof(micro_ops[0]);
