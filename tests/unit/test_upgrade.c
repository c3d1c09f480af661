// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/test_upgrade.c - the write-upgrade abort (S2): every cause,
 * through a folio's key and through a domain; no flush and no count when
 * nothing is pending; a failed abort leaves everything pending.
 */
#include "unit.h"

static void abort_counts(const struct uenv *e, long *out)
{
	for (unsigned int i = 0; i < LUF_ABORT_NR_CAUSES; i++)
		out[i] = ustat(e, (enum luf_stat_item)(LUF_STAT_ABORT + i));
}

static void assert_abort_counted(const struct uenv *e, const long *before, unsigned int cause)
{
	long now[LUF_ABORT_NR_CAUSES];

	abort_counts(e, now);
	for (unsigned int i = 0; i < LUF_ABORT_NR_CAUSES; i++)
		assert_int_equal(now[i], before[i] + (i == cause));
}

/* Each cause, through a free folio's key: flush before returning, counted once. */
static void abort_key_each_cause(void **state)
{
	struct uenv *e = *state;
	long before[LUF_ABORT_NR_CAUSES];
	struct luf_folio *f = NULL;

	for (unsigned int c = 0; c < LUF_ABORT_NR_CAUSES; c++) {
		unsigned short key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1, 2), RO);
		unsigned long g = uenv_next_ugen(e);

		uenv_free_range(e, e->fl, 0, key, c, 1);
		assert_int_equal(luf_upgrade_check(e->pc[3], key, NULL), -EBUSY);
		abort_counts(e, before);
		EXPECT_FLUSH(e, g, 0, 1, 2);
		assert_int_equal(luf_abort_key(e->pc[3], key, (enum luf_abort_cause)c), 0);
		assert_int_equal(e->arch.calls, c + 1);
		assert_abort_counted(e, before, c);
		assert_int_equal(luf_done_read(&e->l->done, 1), g);
		assert_int_equal(luf_done_read(&e->l->done, 2), g);
		assert_int_equal(luf_keytab_check_done(e->kt, key), 1);
		assert_int_equal(luf_upgrade_check(e->pc[3], key, NULL), 0);
		/* The folio may now be handed out by a caller that cannot flush. */
		assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
		assert_int_equal(ufolio_id(f), c);
	}
}

/* Each cause, through a domain: settle (flush its CPUs) before returning, counted once. */
static void abort_domain_each_cause(void **state)
{
	struct uenv *e = *state;
	long before[LUF_ABORT_NR_CAUSES];

	for (unsigned int c = 0; c < LUF_ABORT_NR_CAUSES; c++) {
		unsigned long g = uenv_next_ugen(e);
		unsigned short key = 0;

		assert_int_equal(luf_unmap(e->pc[0], e->dom, UMASK(e, 1, 3), RO), 0);
		assert_true(luf_domain_pending(e->dom));
		assert_int_equal(luf_upgrade_check(e->pc[2], 0, e->dom), -EBUSY);
		abort_counts(e, before);
		EXPECT_FLUSH(e, g, 0, 1, 3);
		assert_int_equal(luf_abort_domain(e->pc[2], e->dom, (enum luf_abort_cause)c), 0);
		assert_int_equal(e->arch.calls, c + 1);
		assert_abort_counted(e, before, c);
		assert_false(luf_domain_pending(e->dom));
		assert_int_equal(luf_upgrade_check(e->pc[2], 0, e->dom), 0);
		/* The batch's own key is covered by that flush too. */
		assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0);
		assert_int_equal(luf_keytab_check_done(e->kt, key), 1);
	}
}

/* Nothing pending: no flush and no count, for every cause, key 0, a done key, a clean domain. */
static void abort_nothing_pending(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 0, e->dom2, UMASK(e, 2), RO);
	struct usnap *s;

	EXPECT_FLUSH(e, 1, 0, 2);
	assert_int_equal(luf_key_flush(e->pc[0], key), 1);
	assert_false(luf_domain_pending(e->dom2));

	s = usnap_take(e);
	for (unsigned int c = 0; c < LUF_ABORT_NR_CAUSES; c++) {
		enum luf_abort_cause cause = (enum luf_abort_cause)c;

		assert_int_equal(luf_abort_key(e->pc[1], 0, cause), 0);
		assert_int_equal(luf_abort_key(e->pc[1], key, cause), 0);
		assert_int_equal(luf_abort_domain(e->pc[1], e->dom, cause), 0);
		assert_int_equal(luf_abort_domain(e->pc[1], e->dom2, cause), 0);
	}
	usnap_check(e, s, true);
	assert_int_equal(e->arch.calls, 1);
}

/* A failed abort: the caller must not write, everything stays pending; a retry works. */
static void abort_failed_flush_stays_pending(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 0, e->dom, UMASK(e, 1), RO);
	struct luf_folio *f = NULL;

	uenv_free_range(e, e->fl, 0, key, 0, 1);
	EXPECT_FLUSH(e, 1, -EIO, 1);
	assert_int_equal(luf_abort_key(e->pc[0], key, LUF_ABORT_WRITE_OTHER), -EIO);
	EXPECT_FLUSH(e, 2, -EIO, 1);
	assert_int_equal(luf_abort_domain(e->pc[0], e->dom, LUF_ABORT_PROT_UPGRADE), -EIO);
	assert_int_equal(luf_done_read(&e->l->done, 1), 0);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 0);
	assert_true(luf_domain_pending(e->dom));
	assert_int_equal(luf_upgrade_check(e->pc[0], key, e->dom), -EBUSY);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), -EAGAIN);

	EXPECT_FLUSH(e, 3, 0, 1);
	assert_int_equal(luf_abort_domain(e->pc[0], e->dom, LUF_ABORT_PROT_UPGRADE), 0);
	assert_int_equal(luf_upgrade_check(e->pc[0], key, e->dom), 0);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_int_equal(e->arch.calls, 3);
}

/*
 * A stamp kept per object (a file): the CPUs not done with it are flushed,
 * the done ones dropped; a later stamp is not covered by an earlier flush;
 * a failed flush leaves it pending; bad arguments change nothing.
 */
static void abort_stamp_flushes_cpus_not_done(void **state)
{
	struct uenv *e = *state;
	long before[LUF_ABORT_NR_CAUSES];
	unsigned long stamp, g;

	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 1, 2), RO), 0);
	stamp = luf_ugen_stamp(&e->l->ugen);
	/* CPU 2 flushes for its own reasons: only CPUs 0, 1 and 3 are left of "all". */
	g = luf_local_flush_begin(e->l);
	assert_int_equal(luf_local_flush_end(e->l, 2, g), 0);

	assert_int_equal(luf_abort_stamp(e->pc[0], NULL, stamp, LUF_ABORT_WRITE_OTHER), -EINVAL);
	assert_int_equal(luf_abort_stamp(e->pc[0], UMASK(e, 0), stamp, LUF_ABORT_NR_CAUSES),
			 -EINVAL);
	EXPECT_FLUSH(e, g + 1, -EIO, 0, 1, 3);
	assert_int_equal(luf_abort_stamp(e->pc[0], UMASK(e, 0, 1, 2, 3), stamp,
					 LUF_ABORT_WRITE_OTHER),
			 -EIO);
	assert_true(luf_ugen_before(luf_done_read(&e->l->done, 1), stamp));

	abort_counts(e, before);
	EXPECT_FLUSH(e, g + 2, 0, 0, 1, 3);
	assert_int_equal(luf_abort_stamp(e->pc[0], UMASK(e, 0, 1, 2, 3), stamp,
					 LUF_ABORT_WRITE_OTHER),
			 1);
	assert_abort_counted(e, before, LUF_ABORT_WRITE_OTHER);
	for (unsigned int c = 0; c < 4; c++)
		assert_false(luf_ugen_before(luf_done_read(&e->l->done, c), stamp));

	/* Covered now: no flush. Nothing stamped: no flush. */
	assert_int_equal(luf_abort_stamp(e->pc[0], UMASK(e, 0, 1, 2, 3), stamp,
					 LUF_ABORT_WRITE_OTHER),
			 0);
	assert_int_equal(luf_abort_stamp(e->pc[0], UMASK(e, 0, 1, 2, 3), 0, LUF_ABORT_WRITE_OTHER),
			 0);
	/* A later removal's stamp is not covered by that flush. */
	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 1), RO), 0);
	EXPECT_FLUSH(e, g + 3, 0, 1);
	assert_int_equal(luf_abort_stamp(e->pc[0], UMASK(e, 1), luf_ugen_stamp(&e->l->ugen),
					 LUF_ABORT_WRITE_OTHER),
			 1);
	assert_int_equal(e->arch.calls, 3);
}

/* luf_upgrade_check(): -EBUSY while the key or the domain owes a flush. */
static void upgrade_check_sees_owed_flush(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 1, NULL, UMASK(e, 0, 3), RO);

	assert_int_equal(luf_upgrade_check(e->pc[0], 0, NULL), 0);
	assert_int_equal(luf_upgrade_check(e->pc[0], 0, e->dom), 0);
	assert_int_equal(luf_upgrade_check(e->pc[0], key, NULL), -EBUSY);
	assert_int_equal(luf_upgrade_check(e->pc[0], key, e->dom), -EBUSY);
	assert_int_equal(luf_unmap(e->pc[2], e->dom, UMASK(e, 2), RO), 0);
	assert_int_equal(luf_upgrade_check(e->pc[0], 0, e->dom), -EBUSY);

	EXPECT_FLUSH(e, 1, 0, 0, 3);
	assert_int_equal(luf_abort_key(e->pc[0], key, LUF_ABORT_WRITE_FAULT), 0);
	assert_int_equal(luf_upgrade_check(e->pc[0], key, NULL), 0);
	assert_int_equal(luf_upgrade_check(e->pc[0], key, e->dom), -EBUSY);
	EXPECT_FLUSH(e, 2, 0, 2);
	assert_int_equal(luf_abort_domain(e->pc[0], e->dom, LUF_ABORT_WRITE_FAULT), 0);
	assert_int_equal(luf_upgrade_check(e->pc[0], key, e->dom), 0);
}

/*
 * A batch past the fold threshold keeps one key for all its removals, and
 * luf_key_flush() folds the CPU's still-open removals into the key first.
 */
static void key_flush_includes_open_batch(void **state)
{
	struct uenv *e = uenv_reset(state, 4, 16, 4, 2, 0, 0);
	unsigned short key = 0;

	/* Two removals reach the threshold: folded into a key the CPU keeps. */
	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 1), RO), 0);
	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 2), RO), 0);
	assert_int_equal(ustat(e, LUF_STAT_FOLD), 1);
	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 3), RO), 0);
	assert_int_equal(luf_pcpu_fold(e->pc[0], &key), 0);
	assert_int_not_equal(key, 0);
	assert_int_equal(ustat(e, LUF_STAT_FOLD), 2);
	EXPECT_FLUSH(e, 1, 0, 1, 2, 3);
	assert_int_equal(luf_key_flush(e->pc[1], key), 1);
	assert_int_equal(luf_key_flush(e->pc[1], 0), 0); /* key 0: nothing */
	assert_int_equal(e->arch.calls, 1);

	assert_int_equal(luf_unmap(e->pc[2], NULL, UMASK(e, 1), RO), 0);
	assert_int_equal(luf_unmap(e->pc[2], NULL, UMASK(e, 0), RO), 0); /* threshold: keyed */
	assert_int_equal(luf_unmap(e->pc[2], NULL, UMASK(e, 3), RO), 0); /* still open */
	key = e->pc[2]->key;
	assert_int_not_equal(key, 0);
	EXPECT_FLUSH(e, 2, 0, 0, 1, 3);
	assert_int_equal(luf_key_flush(e->pc[2], key), 1);
	assert_int_equal(luf_keytab_check_done(e->kt, key), 1);
}

int unit_run_upgrade(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(abort_key_each_cause, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(abort_domain_each_cause, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(abort_nothing_pending, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(abort_failed_flush_stays_pending, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(abort_stamp_flushes_cpus_not_done, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(upgrade_check_sees_owed_flush, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(key_flush_includes_open_batch, uenv_setup,
					    uenv_teardown),
	};

	return cmocka_run_group_tests_name("upgrade", tests, NULL, NULL);
}
