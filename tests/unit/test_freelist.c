// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/test_freelist.c - the deferred free list (one flush pays for
 * every pend folio, no-flush allocations, the reserve, failed flushes) and
 * the key table (round-robin keys, fold on collision).
 */
#include "unit.h"

/* Allocate everything left with @flags: exactly @n distinct folios, then -ENOMEM. */
static void drain_ids(struct uenv *e, struct luf_freelist *fl, unsigned int flags, unsigned int n)
{
	unsigned char *seen = calloc(e->nr_folios, 1);
	struct luf_folio *f = NULL;

	assert_non_null(seen);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(luf_alloc(fl, e->pc[0], flags, &f), 0);
		assert_int_equal(f->state, LUF_FOLIO_IN_USE);
		assert_true(ufolio_id(f) < e->nr_folios);
		assert_false(seen[ufolio_id(f)]);
		seen[ufolio_id(f)] = 1;
	}
	free(seen);
	assert_int_equal(luf_freelist_nr_clean(fl) + luf_freelist_nr_pend(fl), 0);
	assert_int_equal(luf_alloc(fl, e->pc[0], flags, &f), -ENOMEM);
}

/* No flush owed (key 0, or a set already done): the folio goes clean, LIFO. */
static void free_clean_when_done(void **state)
{
	struct uenv *e = *state;
	struct luf_folio *f = NULL;
	unsigned short key;

	uenv_free_range(e, e->fl, 0, 0, 0, 2);
	key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	EXPECT_FLUSH(e, 1, 0, 1);
	assert_int_equal(luf_key_flush(e->pc[0], key), 1);
	uenv_free_range(e, e->fl, 0, key, 2, 1);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 3);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 0);
	assert_int_equal(ustat(e, LUF_STAT_FREE_CLEAN), 3);
	assert_int_equal(luf_stats_nr_clean(e->l), 3);
	assert_int_equal(e->folios[2].lf.state, LUF_FOLIO_CLEAN);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), 0);
	assert_int_equal(ufolio_id(f), 2); /* hottest first */
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_int_equal(ufolio_id(f), 1);
	assert_int_equal(e->arch.calls, 1);
	/* An allocated folio may be freed again. */
	assert_int_equal(luf_free(e->fl, e->pc[0], f, 0), 0);
	assert_int_equal(luf_stats_nr_clean(e->l), 2);
}

/* 100 folios under one key, then one MAY_FLUSH allocation: exactly one flush. */
static void one_flush_for_many_pend_folios_one_key(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1, 2), RO);

	uenv_free_range(e, e->fl, 0, key, 0, 100);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 100);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 0);
	assert_int_equal(ustat(e, LUF_STAT_FREE_PEND), 100);
	assert_int_equal(e->folios[50].lf.state, LUF_FOLIO_PEND);
	assert_int_equal(e->arch.calls, 0);

	EXPECT_FLUSH(e, 1, 0, 1, 2);
	drain_ids(e, e->fl, LUF_ALLOC_MAY_FLUSH, 100);
	assert_int_equal(e->arch.calls, 1);
	assert_int_equal(ustat(e, LUF_STAT_ALLOC_FLUSH), 1);
	assert_int_equal(ustat(e, LUF_STAT_ALLOC_CLEAN), 100);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 1);
}

/* Several keys on several CPUs: one flush of the union of their CPUs. */
static void one_flush_for_many_pend_folios_many_keys(void **state)
{
	struct uenv *e = uenv_reset(state, 8, 16, 100, 512, 0, 0);
	unsigned short k1, k2, k3;

	k1 = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1, 2), RO);
	uenv_free_range(e, e->fl, 0, k1, 0, 40);
	k2 = uenv_unmap_fold(e, 3, NULL, UMASK(e, 3, 5), RO);
	uenv_free_range(e, e->fl, 3, k2, 40, 30);
	k3 = uenv_unmap_fold(e, 0, NULL, UMASK(e, 6, 2), RO);
	uenv_free_range(e, e->fl, 4, k3, 70, 30);
	assert_true(k1 != k2 && k2 != k3 && k1 != k3);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 100);

	EXPECT_FLUSH(e, 1, 0, 1, 2, 3, 5, 6);
	drain_ids(e, e->fl, LUF_ALLOC_MAY_FLUSH, 100);
	assert_int_equal(e->arch.calls, 1);
}

/* The same, run differently: the first allocation flushes, the other 99 may not. */
static void one_flush_then_noflush_allocs(void **state)
{
	struct uenv *e = uenv_reset(state, 8, 16, 100, 512, 0, 0);
	struct luf_folio *f = NULL;
	unsigned short k;

	for (unsigned int i = 0; i < 4; i++) {
		k = uenv_unmap_fold(e, i, NULL, UMASK(e, i + 1, 7), RO);
		uenv_free_range(e, e->fl, i, k, 25 * i, 25);
	}
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), -EAGAIN);
	EXPECT_FLUSH(e, 1, 0, 1, 2, 3, 4, 7);
	assert_int_equal(luf_alloc(e->fl, e->pc[5], LUF_ALLOC_MAY_FLUSH, &f), 0);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 99);
	drain_ids(e, e->fl, 0, 99);
	assert_int_equal(e->arch.calls, 1);
	assert_int_equal(ustat(e, LUF_STAT_REMOTE_FLUSH), 1);
}

/* 130 CPUs (three words): the union spans every word. */
static void one_flush_union_multiword(void **state)
{
	struct uenv *e = uenv_reset(state, 130, 16, 30, 512, 0, 0);
	unsigned short k;

	k = uenv_unmap_fold(e, 0, NULL, UMASK(e, 0, 63), RO);
	uenv_free_range(e, e->fl, 0, k, 0, 10);
	k = uenv_unmap_fold(e, 64, NULL, UMASK(e, 64, 100), RO);
	uenv_free_range(e, e->fl, 64, k, 10, 10);
	k = uenv_unmap_fold(e, 129, NULL, UMASK(e, 128, 129), RO);
	uenv_free_range(e, e->fl, 129, k, 20, 10);
	EXPECT_FLUSH(e, 1, 0, 0, 63, 64, 100, 128, 129);
	drain_ids(e, e->fl, LUF_ALLOC_MAY_FLUSH, 30);
	for (unsigned int c = 0; c < 130; c++)
		assert_int_equal(luf_done_read(&e->l->done, c),
				 c == 0 || c == 63 || c == 64 || c == 100 || c >= 128 ? 1 : 0);
}

/* Without LUF_ALLOC_MAY_FLUSH: never a flush, never a pend folio. */
static void noflush_alloc_never_flushes(void **state)
{
	struct uenv *e = *state;
	struct luf_folio *f = NULL;
	struct usnap *s;
	unsigned short key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 2), RO);

	uenv_free_range(e, e->fl, 0, 0, 0, 1);	 /* one clean */
	uenv_free_range(e, e->fl, 0, key, 1, 5); /* five pend */
	assert_int_equal(luf_alloc(e->fl, e->pc[1], 0, &f), 0);
	assert_int_equal(ufolio_id(f), 0);

	s = usnap_take(e);
	f = NULL;
	assert_int_equal(luf_alloc(e->fl, e->pc[1], 0, &f), -EAGAIN);
	assert_null(f);
	usnap_check(e, s, false);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 5);
	assert_int_equal(ustat(e, LUF_STAT_ALLOC_FAIL), 1);

	/* Their set gets flushed by someone else: now they come out, still no flush here. */
	EXPECT_FLUSH(e, 1, 0, 2);
	assert_int_equal(luf_key_flush(e->pc[3], key), 1);
	drain_ids(e, e->fl, 0, 5);
	assert_int_equal(e->arch.calls, 1);
	assert_int_equal(ustat(e, LUF_STAT_ALLOC_FLUSH), 0);
}

/* The reserve is for callers that cannot flush; MAY_FLUSH callers never get it. */
static void reserve_only_for_noflush(void **state)
{
	struct uenv *e = uenv_reset(state, 4, 16, 16, 512, 2, 0);
	struct luf_folio *f = NULL;
	struct usnap *s;
	unsigned short key;

	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), -ENOMEM);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), -ENOMEM);
	uenv_free_range(e, e->fl, 0, 0, 0, 3);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), 0);

	/* Only the reserve left and nothing pend: -ENOMEM, nothing handed out. */
	s = usnap_take(e);
	f = NULL;
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), -ENOMEM);
	assert_null(f);
	usnap_check(e, s, false);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 2);

	/* With pend folios: a MAY_FLUSH caller flushes them rather than take the reserve. */
	key = uenv_unmap_fold(e, 1, NULL, UMASK(e, 3), RO);
	uenv_free_range(e, e->fl, 1, key, 4, 3);
	/* A no-flush caller takes the reserve (clean) and never the pend folios. */
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_true(ufolio_id(f) < 3);
	assert_int_equal(luf_free(e->fl, e->pc[0], f, 0), 0);
	EXPECT_FLUSH(e, 1, 0, 3);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), 0);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 4);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), -ENOMEM);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), -ENOMEM);
	assert_int_equal(e->arch.calls, 1);
}

/* A failed flush in the allocation: every folio stays pend, done unmarked; later it works. */
static void alloc_failed_flush_keeps_pend(void **state)
{
	struct uenv *e = *state;
	struct luf_folio *f = NULL;
	unsigned long done[4];
	unsigned short key = uenv_unmap_fold(e, 2, NULL, UMASK(e, 1, 3), RO);

	uenv_free_range(e, e->fl, 2, key, 0, 10);
	for (unsigned int c = 0; c < 4; c++)
		done[c] = luf_done_read(&e->l->done, c);

	EXPECT_FLUSH(e, 1, -EIO, 1, 3);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), -EIO);
	assert_null(f);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 10);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 0);
	for (unsigned int c = 0; c < 4; c++)
		assert_int_equal(luf_done_read(&e->l->done, c), done[c]);
	for (unsigned int i = 0; i < 10; i++)
		assert_int_equal(e->folios[i].lf.state, LUF_FOLIO_PEND);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), -EAGAIN);
	assert_int_equal(ustat(e, LUF_STAT_FLUSH_FAILED), 1);
	assert_int_equal(ustat(e, LUF_STAT_ALLOC_FAIL), 2);

	/* The same folios come out after a later successful flush. */
	EXPECT_FLUSH(e, 2, 0, 1, 3);
	drain_ids(e, e->fl, LUF_ALLOC_MAY_FLUSH, 10);
	assert_int_equal(luf_done_read(&e->l->done, 1), 2);
	assert_int_equal(luf_done_read(&e->l->done, 3), 2);
	assert_int_equal(luf_done_read(&e->l->done, 0), done[0]);
}

/* Keys are handed out round-robin over 1..nr_keys-1, never 0. */
static void keytab_round_robin(void **state)
{
	struct uenv *e = uenv_reset(state, 4, 5, 4, 512, 0, 0);
	unsigned int count[5] = {0};
	unsigned short prev = __luf_keytab_new_key(e->kt), k;
	struct luf_keytab *big;

	assert_true(prev >= 1 && prev <= 4);
	for (unsigned int i = 0; i < 12; i++) {
		k = __luf_keytab_new_key(e->kt);
		assert_int_equal(k, prev % 4 + 1);
		count[k]++;
		prev = k;
	}
	assert_int_equal(count[0], 0);
	for (unsigned int i = 1; i < 5; i++)
		assert_int_equal(count[i], 3);

	/* Successive batches get successive keys. */
	k = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	assert_int_equal(k, prev % 4 + 1);
	assert_int_equal(uenv_unmap_fold(e, 1, NULL, UMASK(e, 2), RO), k % 4 + 1);

	/* A table of two keys has one: always 1. */
	e = uenv_reset(state, 4, 2, 4, 512, 0, 0);
	for (unsigned int i = 0; i < 5; i++)
		assert_int_equal(__luf_keytab_new_key(e->kt), 1);

	/* The largest table: 65535 keys, each once per round. */
	big = testenv_zalloc(luf_keytab_size(LUF_KEYTAB_MAX_KEYS, e->nr_cpus));
	assert_int_equal(luf_keytab_init(big, e->l, LUF_KEYTAB_MAX_KEYS), 0);
	{
		unsigned char *seen = calloc(LUF_KEYTAB_MAX_KEYS, 1);

		assert_non_null(seen);
		for (unsigned int i = 0; i < LUF_KEYTAB_MAX_KEYS - 1; i++) {
			k = __luf_keytab_new_key(big);
			assert_int_not_equal(k, 0);
			assert_false(seen[k]);
			seen[k] = 1;
		}
		free(seen);
	}
	free(big);
}

/*
 * Collisions fold: with one key, the second batch folds into the first's
 * set; a folio freed after that waits for both sets to be flushed.
 */
static void keytab_collision_folds(void **state)
{
	struct uenv *e = uenv_reset(state, 4, 2, 4, 512, 0, 0);
	struct luf_batch *b = e->scratch;
	struct luf_folio *f = NULL;
	unsigned short k1, k2;

	k1 = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	uenv_free_range(e, e->fl, 0, k1, 0, 1); /* set {1} */
	k2 = uenv_unmap_fold(e, 0, NULL, UMASK(e, 2), RO);
	assert_int_equal(k1, k2);
	uenv_free_range(e, e->fl2, 0, k2, 1, 1); /* set {1} folded with {2} */

	/* CPU 2 flushes: folio 1 still owes CPU 1 (the collision's fold). */
	assert_int_equal(luf_batch_add(b, UMASK(e, 2), luf_ugen_stamp(&e->l->ugen), false), 0);
	EXPECT_FLUSH(e, 1, 0, 2);
	assert_int_equal(luf_flush_batch(e->l, 0, b), 1);
	assert_int_equal(luf_keytab_check_done(e->kt, k2), 0);
	assert_int_equal(luf_alloc(e->fl2, e->pc[0], 0, &f), -EAGAIN);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), -EAGAIN);

	/* CPU 1 flushes too: both come out without a flush of their own. */
	assert_int_equal(luf_batch_add(b, UMASK(e, 1), luf_ugen_stamp(&e->l->ugen), false), 0);
	EXPECT_FLUSH(e, 2, 0, 1);
	assert_int_equal(luf_flush_batch(e->l, 0, b), 1);
	assert_int_equal(luf_keytab_check_done(e->kt, k2), 1);
	assert_int_equal(luf_alloc(e->fl2, e->pc[0], 0, &f), 0);
	assert_int_equal(ufolio_id(f), 1);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_int_equal(ufolio_id(f), 0);
	assert_int_equal(e->arch.calls, 2);

	/* A MAY_FLUSH allocation of a collided key flushes the whole folded set. */
	k1 = uenv_unmap_fold(e, 0, NULL, UMASK(e, 0), RO);
	k2 = uenv_unmap_fold(e, 3, NULL, UMASK(e, 3), RO);
	uenv_free_range(e, e->fl, 3, k2, 2, 1);
	EXPECT_FLUSH(e, 3, 0, 0, 3);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), 0);
	assert_int_equal(ufolio_id(f), 2);
}

/*
 * A key is reused once the table wraps: a run of frees with that key saw its
 * old set done (clean), but after a new batch folded into the key the next
 * folio freed with it owes a flush again and must go pend (the free path's
 * per-key verdict must follow the set, S1).
 */
static void free_verdict_follows_key_reuse(void **state)
{
	struct uenv *e = uenv_reset(state, 4, 2, 8, 512, 0, 0);
	struct luf_folio *f = NULL;
	unsigned short k1, k2;

	k1 = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	EXPECT_FLUSH(e, 1, 0, 1);
	assert_int_equal(luf_key_flush(e->pc[0], k1), 1);
	uenv_free_range(e, e->fl, 0, k1, 0, 2); /* done: clean */
	assert_int_equal(luf_freelist_nr_clean(e->fl), 2);

	k2 = uenv_unmap_fold(e, 1, NULL, UMASK(e, 2), RO); /* the same key, a new set */
	assert_int_equal(k1, k2);
	uenv_free_range(e, e->fl, 0, k2, 2, 2);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 2);
	assert_int_equal(e->folios[3].lf.state, LUF_FOLIO_PEND);

	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), -EAGAIN);
	EXPECT_FLUSH(e, 2, 0, 2);
	drain_ids(e, e->fl, LUF_ALLOC_MAY_FLUSH, 2);
}

int unit_run_freelist(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(free_clean_when_done, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(one_flush_for_many_pend_folios_one_key, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(one_flush_for_many_pend_folios_many_keys, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(one_flush_then_noflush_allocs, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(one_flush_union_multiword, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(noflush_alloc_never_flushes, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(reserve_only_for_noflush, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(alloc_failed_flush_keeps_pend, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(keytab_round_robin, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(keytab_collision_folds, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(free_verdict_follows_key_reuse, uenv_setup,
					    uenv_teardown),
	};

	return cmocka_run_group_tests_name("freelist", tests, NULL, NULL);
}
