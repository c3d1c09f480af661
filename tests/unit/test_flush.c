// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/test_flush.c - the flush protocol (diet, snapshot, flush, mark),
 * failed flushes, S3 (writable and dirty translations are never deferred),
 * inaccessible translations, domains, S4 (monotonic done) and the ugen wrap.
 */
/* Another flusher moving the groups under a recomputation of @all (summary_all_*). */
struct luf_done;
static void sum_all_round(struct luf_done *d);
#define __luf_done_sum_all_round(d) sum_all_round(d)
#include "unit.h"

/* A flush marks done at its snapshot, after it returned 0, for its CPUs only. */
static void flush_marks_done_after_return(void **state)
{
	struct uenv *e = *state;
	struct luf_batch *b = e->scratch;

	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 2), luf_ugen_stamp(&e->l->ugen), false), 0);
	EXPECT_FLUSH(e, 1, 0, 1, 2);
	assert_int_equal(luf_flush_batch(e->l, 0, b), 1);
	assert_true(luf_batch_empty(b));
	assert_int_equal(e->arch.calls, 1);
	assert_int_equal(luf_done_read(&e->l->done, 0), 0);
	assert_int_equal(luf_done_read(&e->l->done, 1), 1);
	assert_int_equal(luf_done_read(&e->l->done, 2), 1);
	assert_int_equal(luf_done_read(&e->l->done, 3), 0);
	assert_int_equal(luf_flush_received(e->l, 1), 1);
	assert_int_equal(luf_flush_received(e->l, 3), 0);
	assert_int_equal(ustat(e, LUF_STAT_REMOTE_FLUSH), 1);
	assert_int_equal(ustat(e, LUF_STAT_LOCAL_FLUSH), 0);

	/* Only the caller's own CPU: a local flush. */
	assert_int_equal(luf_batch_add(b, UMASK(e, 0), luf_ugen_stamp(&e->l->ugen), false), 0);
	EXPECT_FLUSH(e, 2, 0, 0);
	assert_int_equal(luf_flush_batch(e->l, 0, b), 1);
	assert_int_equal(luf_done_read(&e->l->done, 0), 2);
	assert_int_equal(luf_done_read(&e->l->done, 1), 1);
	assert_int_equal(ustat(e, LUF_STAT_LOCAL_FLUSH), 1);
	assert_int_equal(ustat(e, LUF_STAT_REMOTE_FLUSH), 1);
}

/*
 * The done summary (luf/done.h) follows the slowest CPU: a flush of some
 * CPUs does not move it while another CPU lags, and a check of a set of
 * the CPUs that flushed still says done (from their counters).
 */
static void done_summary_follows_slowest_cpu(void **state)
{
	struct uenv *e = *state;
	struct luf_batch *b = e->scratch;
	unsigned long snap;

	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 2, 3), luf_ugen_stamp(&e->l->ugen), false),
			 0);
	EXPECT_FLUSH(e, 1, 0, 1, 2, 3);
	assert_int_equal(luf_flush_batch(e->l, 0, b), 1);
	assert_int_equal(luf_done_all(&e->l->done), 0); /* CPU 0 has not flushed */
	assert_int_equal(__luf_done_group(&e->l->done, 0), 0);
	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 3), 1, false), 0);
	assert_true(luf_batch_check_done(b, &e->l->done));
	luf_batch_clear(b);
	assert_int_equal(luf_batch_add(b, UMASK(e, 0, 1), 1, false), 0);
	assert_false(luf_batch_check_done(b, &e->l->done));
	assert_int_equal(luf_batch_diet(b, &e->l->done), 1); /* CPU 1 only */

	/* CPU 0 flushes for its own reasons: now every CPU is past ugen 1. */
	snap = luf_local_flush_begin(e->l);
	assert_int_equal(luf_local_flush_end(e->l, 0, snap), 0);
	assert_int_equal(luf_done_all(&e->l->done), 1);
	assert_int_equal(__luf_done_group(&e->l->done, 0), 1);
	assert_true(luf_batch_check_done(b, &e->l->done));
	assert_int_equal(luf_batch_diet(b, &e->l->done), 1);
	assert_true(luf_batch_empty(b));
	/* ... but not past a stamp taken after the flush. */
	assert_int_equal(luf_batch_add(b, UMASK(e, 2), luf_ugen_stamp(&e->l->ugen), false), 0);
	assert_false(luf_batch_check_done(b, &e->l->done));
}

/*
 * A read-only snapshot (luf_flush_snapshot()) covers only the removals
 * stamped before the ugen source last moved: a CPU that flushes with it
 * right after a fold is not done with that fold's key until the source is
 * advanced (luf_ugen_advance()) and a later flush snapshots again.
 */
static void snapshot_covers_only_advanced(void **state)
{
	struct uenv *e = *state;
	unsigned short key;
	unsigned long snap;

	/* A source that never moved has no snapshot to give. */
	assert_int_equal(luf_flush_snapshot(e->l), 0);
	assert_true(luf_ugen_advance(e->l) != 0);
	key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);

	snap = luf_flush_snapshot(e->l);
	assert_int_equal(luf_local_flush_end(e->l, 1, snap), 0);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 0);

	assert_true(luf_ugen_advance(e->l) != 0);
	snap = luf_flush_snapshot(e->l);
	assert_int_equal(luf_local_flush_end(e->l, 1, snap), 0);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 1);
	assert_int_equal(e->arch.calls, 0);
}

/* Every CPU of the set flushed since (for any reason): no flush call at all. */
static void diet_skips_flush_when_all_done(void **state)
{
	struct uenv *e = *state;
	struct luf_batch *b = e->scratch;
	unsigned short key;

	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 2), luf_ugen_stamp(&e->l->ugen), false), 0);
	/* Another flusher covers CPUs 1..3 (a key's set, through luf_key_flush()). */
	key = uenv_unmap_fold(e, 3, NULL, UMASK(e, 1, 2, 3), RO);
	EXPECT_FLUSH(e, 1, 0, 1, 2, 3);
	assert_int_equal(luf_key_flush(e->pc[3], key), 1);
	assert_int_equal(e->arch.calls, 1);

	assert_true(luf_batch_check_done(b, &e->l->done));
	assert_int_equal(luf_flush_batch(e->l, 0, b), 0); /* no EXPECT_FLUSH: no call */
	assert_int_equal(e->arch.calls, 1);
	assert_true(luf_batch_empty(b));
	assert_int_equal(ustat(e, LUF_STAT_FLUSH_SKIPPED), 1);
	assert_int_equal(ustat(e, LUF_STAT_DIET_DROPPED), 2);

	/* The same through a key: its set is done, flushing it again skips. */
	assert_int_equal(luf_key_flush(e->pc[0], key), 0);
	assert_int_equal(e->arch.calls, 1);
	assert_int_equal(ustat(e, LUF_STAT_FLUSH_SKIPPED), 2);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 1);
}

/* Diet drops only the CPUs that flushed; the rest are flushed, once. */
static void diet_flushes_only_cpus_left(void **state)
{
	struct uenv *e = *state;
	struct luf_batch *b = e->scratch;
	unsigned short key;

	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 2, 3), luf_ugen_stamp(&e->l->ugen), false),
			 0);
	key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 2), RO);
	EXPECT_FLUSH(e, 1, 0, 2);
	assert_int_equal(luf_key_flush(e->pc[0], key), 1);

	assert_int_equal(luf_batch_diet(b, &e->l->done), 1);
	assert_false(luf_cpumask_test_cpu(b->cpus, e->nr_cpus, 2));
	EXPECT_FLUSH(e, 2, 0, 1, 3);
	assert_int_equal(luf_flush_batch(e->l, 0, b), 1);
	assert_int_equal(e->arch.calls, 2);
	assert_int_equal(luf_done_read(&e->l->done, 1), 2);
	assert_int_equal(luf_done_read(&e->l->done, 2), 1);
	assert_int_equal(luf_done_read(&e->l->done, 3), 2);
}

/* A CPU whose done is one generation behind the set's ugen is not done (S1). */
static void diet_keeps_cpu_one_behind(void **state)
{
	struct uenv *e = *state;
	struct luf_batch *b = e->scratch;
	unsigned long stamp;
	unsigned short key;

	key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	EXPECT_FLUSH(e, 1, 0, 1);
	assert_int_equal(luf_key_flush(e->pc[0], key), 1);
	assert_int_equal(luf_done_read(&e->l->done, 1), 1);

	stamp = luf_ugen_stamp(&e->l->ugen);
	assert_int_equal(stamp, 2); /* done[1] + 1 */
	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 2), stamp, false), 0);
	assert_false(luf_batch_check_done(b, &e->l->done));
	assert_int_equal(luf_batch_diet(b, &e->l->done), 0);
	EXPECT_FLUSH(e, 2, 0, 1, 2);
	assert_int_equal(luf_flush_batch(e->l, 0, b), 1);

	/* The same on the allocation path: the folio must wait for a flush. */
	key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 2), RO);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 0);
	uenv_free_range(e, e->fl, 0, key, 0, 1);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 1);
}

/* A failed flush: the set stays pending, done is not marked, nothing counted as done. */
static void flush_failed_keeps_done(void **state)
{
	struct uenv *e = *state;
	struct luf_batch *b = e->scratch;
	struct luf_batch *copy = testenv_zalloc(luf_batch_size(e->nr_cpus));
	unsigned long done[4], received[4];

	assert_int_equal(luf_batch_init(copy, e->nr_cpus), 0);
	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 3), luf_ugen_stamp(&e->l->ugen), false), 0);
	assert_int_equal(luf_batch_copy(copy, b), 0);
	for (unsigned int c = 0; c < 4; c++) {
		done[c] = luf_done_read(&e->l->done, c);
		received[c] = luf_flush_received(e->l, c);
	}

	EXPECT_FLUSH(e, 1, -EIO, 1, 3);
	assert_int_equal(luf_flush_batch(e->l, 0, b), -EIO);
	/* A positive value from the backend is an error too. */
	EXPECT_FLUSH(e, 2, 7, 1, 3);
	assert_int_equal(luf_flush_batch(e->l, 0, b), -EIO);

	assert_true(luf_batch_equal(b, copy));
	for (unsigned int c = 0; c < 4; c++) {
		assert_int_equal(luf_done_read(&e->l->done, c), done[c]);
		assert_int_equal(luf_flush_received(e->l, c), received[c]);
	}
	assert_false(luf_batch_check_done(b, &e->l->done));
	assert_int_equal(ustat(e, LUF_STAT_FLUSH_FAILED), 2);
	assert_int_equal(ustat(e, LUF_STAT_REMOTE_FLUSH), 0);

	/* A later successful flush works and marks its own snapshot. */
	EXPECT_FLUSH(e, 3, 0, 1, 3);
	assert_int_equal(luf_flush_batch(e->l, 0, b), 1);
	assert_int_equal(luf_done_read(&e->l->done, 1), 3);
	assert_int_equal(luf_done_read(&e->l->done, 3), 3);
	assert_int_equal(luf_done_read(&e->l->done, 2), 0);
	assert_true(luf_batch_check_done(copy, &e->l->done));
	free(copy);
}

static void unmap_classify_table(void **state)
{
	(void)state;
	for (unsigned int f = 0; f < 16; f++) {
		enum luf_unmap_kind want;

		/*
		 * A protection change that has not flushed yet: the PTE's bits
		 * understate what CPUs may cache (a PROT_NONE or read-only PTE
		 * may still be writable in a TLB), so it is always flushed.
		 */
		if (f & LUF_PTE_FLUSH_PENDING)
			want = LUF_UNMAP_FLUSH;
		/*
		 * Writable or dirty: flushed, with or without ACCESSIBLE (the
		 * combination is contradictory, and a CPU may still hold the
		 * entry writable: issue 14, class 1).
		 */
		else if (f & (LUF_PTE_WRITABLE | LUF_PTE_DIRTY))
			want = LUF_UNMAP_FLUSH;
		else if (!(f & LUF_PTE_ACCESSIBLE))
			want = LUF_UNMAP_NO_FLUSH;
		else
			want = LUF_UNMAP_DEFER;
		assert_int_equal(luf_unmap_classify(f), want);
		assert_int_equal(luf_can_defer(f), want == LUF_UNMAP_DEFER);
	}
}

/* S3: a writable or dirty translation is flushed at fold, and its key is 0. */
static void check_never_deferred(struct uenv *e, unsigned int pte_flags)
{
	unsigned short key = 0xffff;

	assert_int_equal(luf_unmap(e->pc[0], e->dom, UMASK(e, 1, 2), pte_flags), 0);
	assert_int_equal(e->arch.calls, 0); /* not before the fold (threshold 512) */
	EXPECT_FLUSH(e, 1, 0, 1, 2);
	assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0);
	assert_int_equal(key, 0);
	assert_int_equal(e->arch.calls, 1);
	assert_int_equal(luf_done_read(&e->l->done, 1), 1);
	assert_int_equal(luf_done_read(&e->l->done, 2), 1);
	assert_int_equal(ustat(e, LUF_STAT_WRITABLE_FLUSH), 1);
	assert_false(luf_domain_pending(e->dom));
	/* Its folio goes straight to the clean list and out without a flush. */
	uenv_free_range(e, e->fl, 0, key, 0, 1);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 1);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 0);
}

static void writable_unmap_flushes_at_fold(void **state)
{
	check_never_deferred(*state, LUF_PTE_ACCESSIBLE | LUF_PTE_WRITABLE);
}

static void dirty_unmap_flushes_at_fold(void **state)
{
	check_never_deferred(*state, LUF_PTE_ACCESSIBLE | LUF_PTE_DIRTY);
}

/* One writable translation in a batch: the whole open batch is flushed, key 0. */
static void writable_flushes_whole_batch(void **state)
{
	struct uenv *e = *state;
	unsigned short key = 0xffff;

	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 1), RO), 0);
	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 3), RO | LUF_PTE_WRITABLE), 0);
	EXPECT_FLUSH(e, 1, 0, 1, 3);
	assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0);
	assert_int_equal(key, 0);

	/* At the threshold the flush happens inside the unmap itself. */
	e = uenv_reset(state, 4, 16, 8, 2, 0, 0);
	assert_int_equal(luf_unmap(e->pc[1], NULL, UMASK(e, 2), RO), 0);
	EXPECT_FLUSH(e, 1, 0, 2, 3);
	assert_int_equal(luf_unmap(e->pc[1], NULL, UMASK(e, 3), RO | LUF_PTE_DIRTY), 0);
	assert_int_equal(e->arch.calls, 1);
	assert_int_equal(luf_pcpu_fold(e->pc[1], &key), 0);
	assert_int_equal(key, 0);
	assert_int_equal(e->arch.calls, 1);
}

/* An inaccessible translation owes nothing: nothing recorded, nothing flushed. */
static void inaccessible_unmap_adds_nothing(void **state)
{
	struct uenv *e = *state;
	struct usnap *s = usnap_take(e);
	unsigned short key = 0xffff;

	assert_int_equal(luf_unmap(e->pc[0], e->dom, UMASK(e, 1, 2), 0), 0);
	assert_int_equal(luf_unmap(e->pc[0], e->dom, UMASK(e, 1, 2, 3), 0), 0);
	usnap_check(e, s, false);
	assert_int_equal(ustat(e, LUF_STAT_NO_FLUSH), 2);
	assert_int_equal(ustat(e, LUF_STAT_DEFERRED), 0);
	assert_false(luf_domain_pending(e->dom));
	assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0);
	assert_int_equal(key, 0);
	assert_int_equal(e->arch.calls, 0);
}

/* A deferral recorded on a domain: pending until settled, settle flushes its CPUs only. */
static void domain_settle_flushes_domain_cpus(void **state)
{
	struct uenv *e = uenv_reset(state, 6, 16, 8, 512, 0, 0);
	unsigned short key;

	assert_false(luf_domain_pending(e->dom));
	assert_int_equal(luf_unmap(e->pc[0], e->dom, UMASK(e, 1, 4), RO), 0);
	assert_int_equal(luf_unmap(e->pc[2], e->dom2, UMASK(e, 2, 5), RO), 0);
	assert_true(luf_domain_pending(e->dom));
	assert_true(luf_domain_pending(e->dom2));
	assert_int_equal(luf_upgrade_check(e->pc[3], 0, e->dom), -EBUSY);

	EXPECT_FLUSH(e, 1, 0, 1, 4);
	assert_int_equal(luf_domain_settle(e->l, 3, e->dom, e->scratch), 1);
	assert_int_equal(e->arch.calls, 1);
	assert_false(luf_domain_pending(e->dom));
	assert_true(luf_domain_pending(e->dom2));
	assert_int_equal(luf_upgrade_check(e->pc[3], 0, e->dom), 0);
	for (unsigned int c = 0; c < 6; c++)
		assert_int_equal(luf_done_read(&e->l->done, c), c == 1 || c == 4 ? 1 : 0);

	/* Settling again finds nothing left: no flush. */
	assert_int_equal(luf_domain_settle(e->l, 3, e->dom, e->scratch), 0);
	assert_int_equal(e->arch.calls, 1);

	/* The batch's key is done already: its folio is freed clean. */
	key = 0;
	assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0);
	assert_int_not_equal(key, 0);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 1);
	uenv_free_range(e, e->fl, 0, key, 0, 1);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 1);

	EXPECT_FLUSH(e, 2, 0, 2, 5);
	assert_int_equal(luf_domain_settle(e->l, 0, e->dom2, e->scratch), 1);
	assert_false(luf_domain_pending(e->dom2));
}

/*
 * The 2017 reclaim-vs-mprotect race (Linux 3ea277194daa), with luf:
 *
 *   CPU0 (reclaim)                          CPU1 (mprotect, same range)
 *   clear PTE; luf_unmap(dom, {0,1,2}, RO)
 *   (flush deferred; the domain records it)
 *                                           PTE already clear: "nothing to
 *                                           flush"? No: luf_domain_settle(dom)
 *                                           finds CPU0's removal pending and
 *                                           flushes {0,1,2} before the change
 *                                           change protection, grant write
 *   luf_pcpu_fold() -> key; free the folio
 *   (its set is done: straight to clean)
 *
 * Without the settle, a CPU of {0,1,2} could write through its stale entry
 * after CPU1 returned.
 */
static void reclaim_vs_mprotect_2017(void **state)
{
	struct uenv *e = *state;
	unsigned short key;

	/* CPU0 */
	assert_int_equal(luf_unmap(e->pc[0], e->dom, UMASK(e, 0, 1, 2), RO), 0);
	assert_int_equal(e->arch.calls, 0);
	/* CPU1 */
	assert_true(luf_domain_pending(e->dom));
	EXPECT_FLUSH(e, 1, 0, 0, 1, 2);
	assert_int_equal(luf_domain_settle(e->l, 1, e->dom, e->pc[1]->scratch), 1);
	assert_false(luf_domain_pending(e->dom));
	assert_int_equal(luf_upgrade_check(e->pc[1], 0, e->dom), 0);
	/* CPU0 again */
	key = 0;
	assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0);
	assert_int_not_equal(key, 0);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 1);
	uenv_free_range(e, e->fl, 0, key, 0, 1);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 0);
	assert_int_equal(e->arch.calls, 1);
}

/* S4: marking an older ugen never lowers done, also across the wrap. */
static void mark_done_monotonic(void **state)
{
	struct uenv *e = uenv_reset(state, 4, 16, 8, 512, 0, ULONG_MAX - 3);
	const unsigned long *m1 = UMASK(e, 1);

	__luf_done_mark(&e->l->done, m1, e->nr_cpus, ULONG_MAX - 1);
	assert_int_equal(luf_done_read(&e->l->done, 1), ULONG_MAX - 1);
	__luf_done_mark(&e->l->done, m1, e->nr_cpus, ULONG_MAX - 2); /* older */
	assert_int_equal(luf_done_read(&e->l->done, 1), ULONG_MAX - 1);
	__luf_done_mark(&e->l->done, m1, e->nr_cpus, 2); /* newer, past the wrap */
	assert_int_equal(luf_done_read(&e->l->done, 1), 2);
	__luf_done_mark(&e->l->done, m1, e->nr_cpus, ULONG_MAX); /* older than 2 */
	assert_int_equal(luf_done_read(&e->l->done, 1), 2);
	__luf_done_mark(&e->l->done, m1, e->nr_cpus, 2);
	assert_int_equal(luf_done_read(&e->l->done, 1), 2);
	assert_int_equal(luf_flush_received(e->l, 1), 5);
	assert_int_equal(luf_done_read(&e->l->done, 0), ULONG_MAX - 3);
}

static struct {
	bool on;
	unsigned int rounds;
} mover;

/* Every CPU flushed once more and its group moved: what a racing flusher leaves. */
static void sum_all_round(struct luf_done *d)
{
	unsigned long v;

	if (!mover.on || mover.rounds == 4 * __LUF_DONE_SUM_ROUNDS)
		return; /* finite, should the cap be gone */
	mover.rounds++;
	v = __luf_done_group(d, 0) + 1;
	for (unsigned int c = 0; c < d->nr_cpus; c++)
		__luf_write_once(&__luf_per_cpu(d->cpu, c)->done, v);
	__luf_write_once(&d->group[0], v);
}

/*
 * A recomputation of @all whose groups keep moving goes round
 * __LUF_DONE_SUM_ROUNDS times, no more (interrupts are off), and leaves
 * @all behind but never ahead; the next move of a group catches it up.
 */
static void summary_all_capped_and_caught_up(void **state)
{
	struct uenv *e = *state;
	struct luf_done *d = &e->l->done;
	unsigned long retries = 0, group;

	for (unsigned int c = 0; c < e->nr_cpus; c++)
		__luf_write_once(&__luf_per_cpu(d->cpu, c)->done, 10);
	__luf_write_once(&d->group[0], 10);
	mover.on = true;
	mover.rounds = 0;
	__luf_done_sum_all(d, &retries);
	mover.on = false;
	group = __luf_done_group(d, 0);
	assert_int_equal(mover.rounds, __LUF_DONE_SUM_ROUNDS);
	assert_int_equal(group, 10 + __LUF_DONE_SUM_ROUNDS);
	assert_int_equal(luf_done_all(d), group - 1); /* behind, not ahead */
	assert_true(__luf_read_once(&d->lag_all) & __LUF_DONE_ALL_BEHIND);
	/* A check still answers, from the groups, and the hint is not used. */
	assert_int_equal(luf_batch_add(e->scratch, UMASK(e, 0, 3), group, false), 0);
	assert_true(luf_batch_check_done(e->scratch, d));

	/* The group's next move (each CPU flushed again) recomputes @all. */
	__luf_done_mark(d, UMASK(e, 0, 1, 2, 3), e->nr_cpus, group + 1);
	assert_int_equal(__luf_done_group(d, 0), group + 1);
	assert_int_equal(luf_done_all(d), group + 1);
	assert_false(__luf_read_once(&d->lag_all) & __LUF_DONE_ALL_BEHIND);
}

/* A quiet recomputation settles in one round and leaves no mark. */
static void summary_all_settles_at_once(void **state)
{
	struct uenv *e = *state;
	struct luf_done *d = &e->l->done;

	mover.on = false;
	__luf_done_mark(d, UMASK(e, 0, 1, 2, 3), e->nr_cpus, 7);
	assert_int_equal(luf_done_all(d), 7);
	assert_int_equal(__luf_read_once(&d->lag_all), 0);
}

/* Two racing flushers: the older snapshot, marked last, does not lower done. */
static void racing_flush(void *ctx)
{
	struct uenv *e = ctx;
	struct luf_batch *b = e->scratch2;

	e->arch.during_flush = NULL;
	assert_int_equal(luf_batch_add(b, UMASK(e, 1), luf_ugen_stamp(&e->l->ugen), false), 0);
	assert_int_equal(luf_flush_batch(e->l, 1, b), 1);
	assert_int_equal(luf_done_read(&e->l->done, 1), 2);
}

static void mark_done_lost_race(void **state)
{
	struct uenv *e = *state;
	struct luf_batch *b = e->scratch;

	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 2), luf_ugen_stamp(&e->l->ugen), false), 0);
	EXPECT_FLUSH(e, 1, 0, 1, 2); /* the first flusher, snapshot 1 */
	EXPECT_FLUSH(e, 2, 0, 1);    /* the second, inside the first's flush, snapshot 2 */
	e->arch.during_flush = racing_flush;
	e->arch.during_ctx = e;
	assert_int_equal(luf_flush_batch(e->l, 0, b), 1);
	assert_int_equal(e->arch.calls, 2);
	assert_int_equal(luf_done_read(&e->l->done, 1), 2);
	assert_int_equal(luf_done_read(&e->l->done, 2), 1);
}

static void ugen_before_wraps(void **state)
{
	struct luf_ugen_src src;

	(void)state;
	assert_true(luf_ugen_before(1, 2));
	assert_false(luf_ugen_before(2, 1));
	assert_false(luf_ugen_before(5, 5));
	assert_true(luf_ugen_before(ULONG_MAX, 1));
	assert_false(luf_ugen_before(1, ULONG_MAX));
	assert_true(luf_ugen_before(ULONG_MAX - 3, 2));
	assert_int_equal(luf_ugen_newer(ULONG_MAX, 2), 2);
	assert_int_equal(luf_ugen_newer(2, ULONG_MAX), 2);
	assert_int_equal(luf_ugen_newer(0, 7), 7);
	assert_int_equal(luf_ugen_newer(7, 0), 7);
	__luf_ugen_src_init(&src, ULONG_MAX - 1);
	assert_int_equal(luf_ugen_stamp(&src), ULONG_MAX);
	assert_int_equal(__luf_ugen_new(&src), ULONG_MAX);
	assert_int_equal(luf_ugen_stamp(&src), 1); /* never 0 */
	assert_int_equal(__luf_ugen_new(&src), 1); /* skips 0 */
	assert_int_equal(luf_ugen_current(&src), 1);
	assert_int_equal(__luf_ugen_new(&src), 2);
}

/* An instance started at ULONG_MAX - 3: deferrals before and after the wrap. */
static void ugen_wrap_instance(void **state)
{
	struct uenv *e = uenv_reset(state, 4, 16, 8, 512, 0, ULONG_MAX - 3);
	struct luf_batch *b = e->scratch;
	struct luf_folio *f0 = NULL, *f1 = NULL;
	unsigned short ka, kb, kc;

	for (unsigned int c = 0; c < 4; c++)
		assert_int_equal(luf_done_read(&e->l->done, c), ULONG_MAX - 3);
	/* Before the wrap: stamped ULONG_MAX - 2. */
	ka = uenv_unmap_fold(e, 0, e->dom, UMASK(e, 1), RO);
	assert_int_equal(luf_keytab_check_done(e->kt, ka), 0);
	uenv_free_range(e, e->fl, 0, ka, 0, 1);

	/* Three flushes of CPU 2 take the source to ULONG_MAX. */
	for (unsigned long g = ULONG_MAX - 2; g != 0; g++) {
		assert_int_equal(luf_ugen_stamp(&e->l->ugen), g);
		assert_int_equal(luf_batch_add(b, UMASK(e, 2), luf_ugen_stamp(&e->l->ugen), false),
				 0);
		EXPECT_FLUSH(e, g, 0, 2);
		assert_int_equal(luf_flush_batch(e->l, 2, b), 1);
		assert_int_equal(luf_done_read(&e->l->done, 2), g);
	}
	assert_int_equal(luf_ugen_current(&e->l->ugen), ULONG_MAX);

	/* After the wrap: stamped 1, which done[2] = ULONG_MAX has not reached. */
	assert_int_equal(luf_ugen_stamp(&e->l->ugen), 1);
	kb = uenv_unmap_fold(e, 1, e->dom, UMASK(e, 2), RO);
	assert_int_equal(luf_keytab_check_done(e->kt, kb), 0);
	assert_int_equal(luf_keytab_check_done(e->kt, ka), 0);
	assert_true(luf_domain_pending(e->dom));
	uenv_free_range(e, e->fl, 1, kb, 1, 1);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 2);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f0), -EAGAIN);

	/* One flush covers both, at snapshot 1 (0 is skipped). */
	EXPECT_FLUSH(e, 1, 0, 1, 2);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f0), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f1), 0);
	assert_int_equal(ufolio_id(f0) + ufolio_id(f1), 1);
	assert_int_equal(luf_done_read(&e->l->done, 1), 1);
	assert_int_equal(luf_done_read(&e->l->done, 2), 1);
	assert_int_equal(luf_done_read(&e->l->done, 0), ULONG_MAX - 3);
	assert_int_equal(luf_keytab_check_done(e->kt, ka), 1);
	assert_int_equal(luf_keytab_check_done(e->kt, kb), 1);
	assert_false(luf_domain_pending(e->dom));

	/* Diet across the wrap: done 1 is newer than ULONG_MAX - 1, done ULONG_MAX - 3 is not. */
	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 3), ULONG_MAX - 1, false), 0);
	assert_int_equal(luf_batch_diet(b, &e->l->done), 1);
	assert_false(luf_cpumask_test_cpu(b->cpus, e->nr_cpus, 1));
	assert_true(luf_cpumask_test_cpu(b->cpus, e->nr_cpus, 3));
	luf_batch_clear(b);

	/* A deferral after the wrap (stamp 2) is pending again, on the domain too. */
	kc = uenv_unmap_fold(e, 0, e->dom, UMASK(e, 1), RO);
	assert_int_equal(luf_keytab_check_done(e->kt, kc), 0);
	assert_true(luf_domain_pending(e->dom));
	EXPECT_FLUSH(e, 2, 0, 1);
	assert_int_equal(luf_domain_settle(e->l, 0, e->dom, b), 1);
	assert_int_equal(luf_keytab_check_done(e->kt, kc), 1);
}

int unit_run_flush(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(flush_marks_done_after_return, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(snapshot_covers_only_advanced, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(diet_skips_flush_when_all_done, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(diet_flushes_only_cpus_left, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(diet_keeps_cpu_one_behind, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(flush_failed_keeps_done, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(done_summary_follows_slowest_cpu, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test(unmap_classify_table),
	    cmocka_unit_test_setup_teardown(writable_unmap_flushes_at_fold, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(dirty_unmap_flushes_at_fold, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(writable_flushes_whole_batch, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(inaccessible_unmap_adds_nothing, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(domain_settle_flushes_domain_cpus, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(reclaim_vs_mprotect_2017, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(mark_done_monotonic, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(mark_done_lost_race, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(summary_all_capped_and_caught_up, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(summary_all_settles_at_once, uenv_setup, uenv_teardown),
	    cmocka_unit_test(ugen_before_wraps),
	    cmocka_unit_test_setup_teardown(ugen_wrap_instance, uenv_setup, uenv_teardown),
	};

	return cmocka_run_group_tests_name("flush", tests, NULL, NULL);
}
