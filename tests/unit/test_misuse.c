// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/test_misuse.c - every contract break gets an error (issue 14).
 * One group per class of misuse that the headers accepted without a word,
 * three of which broke S1 or S3; each test failed on the headers before
 * the fix. Run one by hand: luf_unit_misuse <test name>.
 */
#include "unit.h"

/*
 * Class 1: a writable removal reported without ACCESSIBLE is flushed at
 * fold (the table of every combination is unmap_classify_table in
 * test_flush.c).
 */
static void misuse_writable_without_accessible_flushes(void **state)
{
	struct uenv *e = *state;
	unsigned short key = 99;

	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 1, 2), LUF_PTE_WRITABLE), 0);
	EXPECT_FLUSH(e, uenv_next_ugen(e), 0, 1, 2);
	assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0);
	assert_int_equal(key, 0);
	assert_int_equal(ustat(e, LUF_STAT_WRITABLE_FLUSH), 1);
}

/*
 * Class 2: a key no fold named stays refused, even after another call
 * (flushing that empty key) wrote its entry.
 */
static void misuse_unnamed_key_after_flush(void **state)
{
	struct uenv *e = *state;
	struct luf_folio *f = &e->folios[0].lf;

	assert_int_equal(luf_free(e->fl, e->pc[0], f, 5), -EINVAL);
	assert_int_equal(luf_key_flush(e->pc[0], 5), 0); /* nothing to flush */
	assert_int_equal(luf_free(e->fl, e->pc[0], f, 5), -EINVAL);
	assert_int_equal(f->state, LUF_FOLIO_IN_USE);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 0);
}

/*
 * Class 3: a key table of one instance used by another. Instance B starts
 * its ugens far ahead of A, so with A's key table B's done counters would
 * look past A's stamps: B would free A's folio to its clean list and hand
 * it out while CPU 1 never flushed.
 */
static void misuse_keytab_of_other_instance(void **state)
{
	struct uenv *e = *state;
	struct uenv *b = uenv_new(4, 16, 4, 512, 0, 1000);
	struct luf_pcpu *pc = testenv_zalloc(luf_pcpu_size(4));

	assert_int_equal(luf_pcpu_init(pc, b->l, e->kt, 0, 512), -EINVAL);
	assert_int_equal(luf_freelist_fini(b->fl2), 0);
	assert_int_equal(luf_freelist_init(b->fl2, b->l, e->kt, 0), -EINVAL);
	free(pc);
	uenv_free(b);
}

/* Class 3: a domain of one instance used by another instance's CPU. */
static void misuse_domain_of_other_instance(void **state)
{
	struct uenv *e = *state;
	struct uenv *b = uenv_new(4, 16, 4, 512, 0, 0);
	struct usnap *s = usnap_take(e);

	assert_int_equal(luf_unmap(b->pc[0], e->dom, UMASK(b, 1), RO), -EINVAL);
	assert_int_equal(luf_pcpu_defer(b->pc[0], e->dom, UMASK(b, 1), false), -EINVAL);
	assert_int_equal(luf_abort_domain(b->pc[0], e->dom, LUF_ABORT_WRITE_FAULT), -EINVAL);
	assert_int_equal(luf_upgrade_check(b->pc[0], 0, e->dom), -EINVAL);
	assert_int_equal(luf_domain_settle(b->l, 0, e->dom, b->scratch), -EINVAL);
	usnap_check(e, s, true);
	uenv_free(b);
}

/* Class 4: a zeroed, never initialised struct luf_pcpu is refused everywhere. */
static void misuse_uninitialised_pcpu(void **state)
{
	struct uenv *e = *state;
	struct luf_pcpu *pc = testenv_zalloc(luf_pcpu_size(e->nr_cpus));
	struct luf_folio *f = &e->folios[0].lf, *got = NULL;
	unsigned short key = 0;

	assert_int_equal(luf_unmap(pc, NULL, UMASK(e, 1), RO), -EINVAL);
	assert_int_equal(luf_pcpu_defer(pc, NULL, UMASK(e, 1), false), -EINVAL);
	assert_int_equal(luf_pcpu_fold(pc, &key), -EINVAL);
	assert_int_equal(luf_key_flush(pc, 1), -EINVAL);
	assert_int_equal(luf_abort_key(pc, 1, LUF_ABORT_WRITE_OTHER), -EINVAL);
	assert_int_equal(luf_abort_domain(pc, e->dom, LUF_ABORT_WRITE_FAULT), -EINVAL);
	assert_int_equal(luf_upgrade_check(pc, 0, NULL), -EINVAL);
	assert_int_equal(luf_free(e->fl, pc, f, 0), -EINVAL);
	assert_int_equal(luf_alloc(e->fl, pc, 0, &got), -EINVAL);
	free(pc);
}

/* Class 4: zeroed instance, key table, free list and domain are refused too. */
static void misuse_uninitialised_objects(void **state)
{
	struct uenv *e = *state;
	struct luf *l = testenv_zalloc(sizeof(*l));
	struct luf_keytab *kt = testenv_zalloc(luf_keytab_size(16, e->nr_cpus));
	struct luf_freelist *fl = testenv_zalloc(luf_freelist_size(e->nr_cpus));
	struct luf_domain *dom = testenv_zalloc(luf_domain_size(e->nr_cpus));
	struct luf_pcpu *pc = testenv_zalloc(luf_pcpu_size(e->nr_cpus));
	struct luf_folio *f = &e->folios[0].lf, *got = NULL;

	assert_int_equal(luf_pcpu_init(pc, l, e->kt, 0, 4), -EINVAL);
	assert_int_equal(luf_pcpu_init(pc, e->l, kt, 0, 4), -EINVAL);
	assert_int_equal(luf_flush_batch(l, 0, e->scratch), -EINVAL);
	assert_int_equal(luf_free(fl, e->pc[0], f, 0), -EINVAL);
	assert_int_equal(luf_alloc(fl, e->pc[0], 0, &got), -EINVAL);
	assert_int_equal(luf_unmap(e->pc[0], dom, UMASK(e, 1), RO), -EINVAL);
	assert_int_equal(luf_abort_domain(e->pc[0], dom, LUF_ABORT_WRITE_FAULT), -EINVAL);
	assert_int_equal(luf_domain_settle(e->l, 0, dom, e->scratch), -EINVAL);
	free(pc);
	free(dom);
	free(fl);
	free(kt);
	free(l);
}

/* Class 4: re-initialising a live object is refused; its pending state stays. */
static void misuse_reinit_live_objects(void **state)
{
	struct uenv *e = *state;
	unsigned short key;

	assert_int_equal(luf_unmap(e->pc[0], e->dom, UMASK(e, 1), RO), 0);
	assert_int_equal(luf_pcpu_init(e->pc[0], e->l, e->kt, 0, 4), -EBUSY);
	assert_int_equal(luf_freelist_init(e->fl, e->l, e->kt, 0), -EBUSY);
	assert_int_equal(luf_init(e->l, &mock_ops, &e->arch, e->done, e->stats, 0), -EBUSY);
	assert_int_equal(luf_keytab_init(e->kt, e->l, 16), -EBUSY);
	assert_int_equal(luf_domain_init(e->dom, e->l), -EBUSY);
	key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 2), RO);
	assert_true(key != 0);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 0);
	assert_true(luf_domain_pending(e->dom));
}

/*
 * Class 4: the fini functions refuse to end an object whose pending state
 * would be lost, and end it otherwise (then init works again).
 */
static void misuse_fini_keeps_pending_state(void **state)
{
	struct uenv *e = *state;
	unsigned short key = 0;

	assert_int_equal(luf_unmap(e->pc[0], e->dom, UMASK(e, 1), RO), 0);
	assert_int_equal(luf_pcpu_fini(e->pc[0]), -EBUSY); /* a removal is open */
	assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0);
	uenv_free_range(e, e->fl, 0, key, 0, 1);
	assert_int_equal(luf_freelist_fini(e->fl), -EBUSY); /* a folio is on it */
	assert_int_equal(luf_domain_fini(e->dom), -EBUSY);  /* a flush is owed */
	assert_int_equal(luf_pcpu_fini(e->pc[0]), 0);
	assert_int_equal(luf_pcpu_fini(e->pc[0]), -EINVAL);
	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 1), RO), -EINVAL);
	assert_int_equal(luf_pcpu_init(e->pc[0], e->l, e->kt, 0, 4), 0);
	EXPECT_FLUSH(e, uenv_next_ugen(e), 0, 1);
	assert_int_equal(luf_domain_settle(e->l, 0, e->dom, e->scratch), 1);
	assert_int_equal(luf_domain_fini(e->dom), 0);
	assert_int_equal(luf_domain_pending(e->dom), false);
	assert_int_equal(luf_domain_init(e->dom, e->l), 0);
	assert_int_equal(luf_fini(e->l), 0);
	assert_int_equal(luf_fini(e->l), -EINVAL);
	assert_int_equal(luf_flush_batch(e->l, 0, e->scratch), -EINVAL);
	assert_int_equal(luf_init(e->l, &mock_ops, &e->arch, e->done, e->stats, 0), 0);
}

/*
 * Class 5: a caller reporting a flush never raises done past what the
 * source handed out (the next removal on that CPU would then be reused
 * without a flush).
 */
static void misuse_mark_done_in_the_future(void **state)
{
	struct uenv *e = *state;
	unsigned long cur = luf_ugen_current(&e->l->ugen);
	unsigned short key;

	assert_int_equal(luf_local_flush_end(e->l, 1, cur + 100), -EINVAL);
	assert_false(u_before(cur, luf_done_read(&e->l->done, 1)));
	key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 0);
}

/* Class 5: a writable batch cannot be folded into the key table (S3). */
static void misuse_keytab_fold_writable(void **state)
{
	struct uenv *e = *state;

	luf_batch_clear(e->scratch);
	assert_int_equal(luf_batch_add(e->scratch, UMASK(e, 1), luf_ugen_stamp(&e->l->ugen), true),
			 0);
	assert_int_equal(__luf_keytab_fold(e->kt, 3, e->scratch), -EINVAL);
	assert_int_equal(luf_keytab_check_done(e->kt, 3), 1);
}

/*
 * Class 7: a writable batch whose CPUs all flushed since (diet empties it)
 * issues no flush, and is not counted as one.
 */
static void misuse_stats_writable_flush_skipped(void **state)
{
	struct uenv *e = *state;
	unsigned long snap;
	unsigned short key;

	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 1), LUF_PTE_WRITABLE), 0);
	/* CPU 1 flushes fully for its own reasons, after the removal. */
	snap = luf_local_flush_begin(e->l);
	assert_int_equal(luf_local_flush_end(e->l, 1, snap), 0);
	assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0); /* no flush call expected */
	assert_int_equal(ustat(e, LUF_STAT_WRITABLE_FLUSH), 0);
	assert_int_equal(ustat(e, LUF_STAT_FLUSH_SKIPPED), 1);
}

/* Class 7: an abort whose flush failed is not counted as an abort. */
static void misuse_stats_failed_abort_not_counted(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 0, e->dom, UMASK(e, 1), RO);

	EXPECT_FLUSH(e, uenv_next_ugen(e), -EIO, 1);
	assert_int_equal(luf_abort_key(e->pc[0], key, LUF_ABORT_WRITE_OTHER), -EIO);
	assert_int_equal(ustat(e, LUF_STAT_ABORT + LUF_ABORT_WRITE_OTHER), 0);
	EXPECT_FLUSH(e, uenv_next_ugen(e), -EIO, 1);
	assert_int_equal(luf_abort_domain(e->pc[0], e->dom, LUF_ABORT_WRITE_FAULT), -EIO);
	assert_int_equal(ustat(e, LUF_STAT_ABORT + LUF_ABORT_WRITE_FAULT), 0);
	EXPECT_FLUSH(e, uenv_next_ugen(e), 0, 1);
	assert_int_equal(luf_abort_key(e->pc[0], key, LUF_ABORT_WRITE_OTHER), 0);
	assert_int_equal(ustat(e, LUF_STAT_ABORT + LUF_ABORT_WRITE_OTHER), 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(misuse_writable_without_accessible_flushes, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_unnamed_key_after_flush, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_keytab_of_other_instance, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_domain_of_other_instance, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_uninitialised_pcpu, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_uninitialised_objects, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_reinit_live_objects, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_fini_keeps_pending_state, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_mark_done_in_the_future, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_keytab_fold_writable, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_stats_writable_flush_skipped, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(misuse_stats_failed_abort_not_counted, uenv_setup,
					    uenv_teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("misuse", tests, NULL, NULL);
}
