// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/test_regress.c - regression tests for bugs found by the unit
 * suite, each failing on the headers before its fix.
 * Run one by hand: luf_unit_regress <test name>.
 */
#include "unit.h"

/*
 * Bug 1 (pcpu.h, luf_pcpu_defer()), fixed: a domain of another CPU count
 * was not rejected. Its set gets bits at or above its own nr_cpus (breaking the
 * cpumask invariant); luf_domain_pending() never looks at those CPUs, so
 * luf_upgrade_check() passes while CPU 3 may hold a stale entry (S2), and
 * luf_domain_settle() can never flush it (-EINVAL: the scratch batch has
 * the instance's CPU count).
 */
static void regress_defer_domain_of_other_cpu_count(void **state)
{
	struct uenv *e = *state;
	struct uenv *e2 = uenv_new(2, 4, 1, 512, 0, 0);
	struct luf_domain *small = e2->dom;
	unsigned char before[256];
	size_t size = luf_domain_size(2);
	bool changed;
	int ret;

	assert_true(size <= sizeof(before));
	memcpy(before, small, size);
	ret = luf_pcpu_defer(e->pc[0], small, UMASK(e, 3), false);
	if (ret == 0) {
		/* Show the damage before failing. */
		print_message(
		    "defer returned 0; the 2-CPU domain now holds CPU 3: %d\n",
		    (int)((__luf_read_once(&__luf_shared_batch(&small->set)->cpus[0]) >> 3) & 1));
	}
	changed = memcmp(small, before, size) != 0;
	uenv_free(e2);
	assert_int_equal(ret, -EINVAL);
	assert_false(changed);
}

/*
 * Bug 2 (freelist.h, luf_free_at()), fixed: a struct luf_pcpu of another
 * instance was not rejected. With another CPU count, __luf_shared_read() into
 * pc->scratch fails silently (luf_batch_copy() returns -EINVAL, ignored),
 * the stale empty scratch passes check_done, and a folio that still owes a
 * flush is put on the CLEAN list: the next allocation hands it out without
 * a flush (an S1 violation).
 */
static void regress_free_with_pcpu_of_other_instance(void **state)
{
	struct uenv *e = *state;
	struct uenv *other = uenv_new(2, 4, 1, 512, 0, 0);
	unsigned short key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1, 2), RO);
	struct luf_folio *f = &e->folios[0].lf;
	int ret;

	assert_int_equal(luf_keytab_check_done(e->kt, key), 0);
	ret = luf_free(e->fl, other->pc[0], f, key);
	if (ret == 0 && f->state == LUF_FOLIO_CLEAN)
		print_message("a folio owing a flush of CPUs {1,2} went to the clean list\n");
	uenv_free(other);
	assert_int_equal(ret, -EINVAL);
	assert_int_equal(f->state, LUF_FOLIO_IN_USE);
}

/*
 * Bug 3 (domain.h, luf_domain_init()), fixed: a CPU count of 0 (or above
 * LUF_MAX_CPUS) returned -EINVAL only after __luf_shared_init() wrote the
 * seqcount and the lock. The CPU count now comes from the instance: an
 * instance that is not live takes its place.
 */
static void regress_domain_init_bad_count_writes(void **state)
{
	size_t size = luf_domain_size(4);
	unsigned char *p = testenv_zalloc(size);
	struct luf *dead = testenv_zalloc(sizeof(*dead));
	unsigned int written = 0;

	(void)state;
	memset(p, 0xa5, size);
	assert_int_equal(luf_domain_init((struct luf_domain *)(void *)p, dead), -EINVAL);
	free(dead);
	for (size_t i = 0; i < size; i++)
		written += p[i] != 0xa5;
	free(p);
	assert_int_equal(written, 0);
}

/*
 * The reserve and L1 (freelist.h, luf_alloc_at()): with one clean folio
 * under a reserve of 2 and one pend folio, a caller that may flush must not
 * fail (L1: pend folios exist) and must not take the clean folio the
 * reserve holds back: it flushes once and gets the formerly pend folio, and
 * the clean count stays at min(reserve, clean count at the call) = 1.
 */
static void regress_may_flush_keeps_reserve(void **state)
{
	struct uenv *e = uenv_reset(state, 4, 16, 4, 512, 2, 0);
	unsigned short key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	struct luf_folio *f = NULL;

	uenv_free_range(e, e->fl, 0, 0, 0, 1);	 /* folio 0: clean, under the reserve */
	uenv_free_range(e, e->fl, 0, key, 1, 1); /* folio 1: pend */
	e->arch.lenient = true;
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), 0);
	assert_int_equal(e->arch.calls, 1);
	assert_ptr_equal(f, &e->folios[1].lf);
	assert_int_equal(luf_freelist_nr_clean(e->fl), 1);
	assert_int_equal(luf_freelist_nr_pend(e->fl), 0);
	/* Now only the reserve is left: a caller that may flush gets -ENOMEM ... */
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), -ENOMEM);
	/* ... and one that cannot flush gets the reserve. */
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_ptr_equal(f, &e->folios[0].lf);
}

/*
 * Found by a review that attacked the API (each failed before its fix):
 * bad input must get -EINVAL and change nothing, and misuse must never let
 * a folio out without its flush.
 */

/* F1: a mask with bits at or above nr_cpus made diet read past done[]. */
static void regress_batch_add_rejects_high_bits(void **state)
{
	struct uenv *e = *state;
	unsigned long high[1] = {1UL << 40};

	luf_batch_clear(e->scratch);
	assert_int_equal(luf_batch_add(e->scratch, high, 1, false), -EINVAL);
	assert_true(luf_batch_empty(e->scratch));
	assert_true(luf_cpumask_empty(e->scratch->cpus, e->nr_cpus));
}

/* F2: a domain of another CPU count reached done[] of the wrong size. */
static void regress_foreign_domain_rejected(void **state)
{
	struct uenv *e = *state;
	struct uenv *e8 = uenv_new(8, 4, 1, 512, 0, 0);
	struct luf_domain *big = e8->dom;
	int r1, r2, r3, r4;

	r1 = luf_abort_domain(e->pc[0], big, LUF_ABORT_WRITE_FAULT);
	r2 = luf_upgrade_check(e->pc[0], 0, big);
	r3 = luf_domain_settle(e->l, 0, big, e->scratch);
	r4 = luf_unmap(e->pc[0], big, UMASK(e, 1), 0);
	uenv_free(e8);
	assert_int_equal(r1, -EINVAL);
	assert_int_equal(r2, -EINVAL);
	assert_int_equal(r3, -EINVAL);
	assert_int_equal(r4, -EINVAL);
	assert_int_equal(ustat(e, LUF_STAT_NO_FLUSH), 0);
}

/* F3: a key folded into one table, looked up in another, read as done (S1). */
static void regress_free_into_list_of_other_keytab(void **state)
{
	struct uenv *e = *state;
	struct luf_keytab *kb = testenv_zalloc(luf_keytab_size(16, e->nr_cpus));
	struct luf_freelist *fb = testenv_zalloc(luf_freelist_size(e->nr_cpus));
	unsigned short key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1, 2), RO);
	int ret;

	assert_int_equal(luf_keytab_init(kb, e->l, 16), 0);
	assert_int_equal(luf_freelist_init(fb, e->l, kb, 0), 0);
	ret = luf_free(fb, e->pc[0], &e->folios[0].lf, key);
	free(fb);
	free(kb);
	assert_int_equal(ret, -EINVAL);
	assert_int_equal(e->folios[0].lf.state, LUF_FOLIO_IN_USE);
}

/* F4: a valid key that no fold ever named was read as an empty set (S1). */
static void regress_free_with_unfolded_key(void **state)
{
	struct uenv *e = *state;

	uenv_unmap_fold(e, 0, NULL, UMASK(e, 1, 2), RO); /* names key 1 */
	assert_int_equal(luf_free(e->fl, e->pc[0], &e->folios[0].lf, 7), -EINVAL);
	assert_int_equal(e->folios[0].lf.state, LUF_FOLIO_IN_USE);
	assert_int_equal(luf_freelist_nr_clean(e->fl) + luf_freelist_nr_pend(e->fl), 0);
}

/* F5: a local-flush snapshot newer than any ugen made later stamps look done. */
static void regress_local_flush_future_snapshot(void **state)
{
	struct uenv *e = *state;
	unsigned long before = luf_done_read(&e->l->done, 1);

	assert_int_equal(luf_local_flush_end(e->l, 1, 1000000), -EINVAL);
	assert_int_equal(luf_done_read(&e->l->done, 1), before);
}

/* F6: marking ugen 0 ("none") moved done to 0, past the wrap (S1, S4). */
static void regress_mark_zero_marks_nothing(void **state)
{
	struct uenv *e = uenv_reset(state, 4, 16, 4, 512, 0, ULONG_MAX - 1);
	unsigned long before = luf_done_read(&e->l->done, 3);

	__luf_done_mark_cpu(&e->l->done, 3, 0);
	assert_int_equal(luf_done_read(&e->l->done, 3), before);
}

/* F7: NULL crashed these instead of returning -EINVAL. */
static void regress_null_arguments(void **state)
{
	struct uenv *e = *state;

	assert_int_equal(luf_batch_add(NULL, UMASK(e, 1), 1, false), -EINVAL);
	assert_int_equal(luf_batch_add(e->scratch, NULL, 1, false), -EINVAL);
	assert_int_equal(luf_batch_fold(NULL, e->scratch), -EINVAL);
	assert_int_equal(luf_batch_fold(e->scratch, NULL), -EINVAL);
	assert_int_equal(luf_batch_copy(NULL, e->scratch), -EINVAL);
	assert_int_equal(luf_keytab_check_done(NULL, 1), -EINVAL);
	assert_int_equal(__luf_keytab_fold(NULL, 1, e->scratch), -EINVAL);
	assert_int_equal(__luf_keytab_fold(e->kt, 1, NULL), -EINVAL);
}

/* F8: unknown PTE bits were accepted (and counted) silently. */
static void regress_unmap_unknown_flags(void **state)
{
	struct uenv *e = *state;

	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 1), 0x80000000u), -EINVAL);
	assert_int_equal(luf_unmap(e->pc[0], NULL, UMASK(e, 1), 0x10u | RO), -EINVAL);
	assert_int_equal(ustat(e, LUF_STAT_NO_FLUSH) + ustat(e, LUF_STAT_DEFERRED), 0);
	assert_true(luf_batch_empty(e->pc[0]->open));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(regress_defer_domain_of_other_cpu_count, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_free_with_pcpu_of_other_instance, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test(regress_domain_init_bad_count_writes),
	    cmocka_unit_test_setup_teardown(regress_batch_add_rejects_high_bits, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_foreign_domain_rejected, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_free_into_list_of_other_keytab, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_free_with_unfolded_key, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_local_flush_future_snapshot, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_mark_zero_marks_nothing, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_null_arguments, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_unmap_unknown_flags, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_may_flush_keeps_reserve, uenv_setup,
					    uenv_teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("regress", tests, NULL, NULL) ? 1 : 0;
}
