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
	struct luf_domain *small = testenv_zalloc(luf_domain_size(2));
	unsigned char before[256];
	size_t size = luf_domain_size(2);
	bool changed;
	int ret;

	assert_true(size <= sizeof(before));
	assert_int_equal(luf_domain_init(small, 2), 0);
	memcpy(before, small, size);
	ret = luf_pcpu_defer(e->pc[0], small, UMASK(e, 3), false);
	if (ret == 0) {
		/* Show the damage before failing. */
		print_message(
		    "defer returned 0; the 2-CPU domain now holds CPU 3: %d\n",
		    (int)((luf_load_relaxed(&luf_shared_batch(&small->set)->cpus[0]) >> 3) & 1));
	}
	changed = memcmp(small, before, size) != 0;
	free(small);
	assert_int_equal(ret, -EINVAL);
	assert_false(changed);
}

/*
 * Bug 2 (freelist.h, luf_free_at()), fixed: a struct luf_pcpu of another
 * instance was not rejected. With another CPU count, luf_shared_read() into
 * pc->scratch fails silently (luf_batch_copy() returns -EINVAL, ignored),
 * the stale empty scratch passes check_done, and a folio that still owes a
 * flush is put on the CLEAN list: the next allocation hands it out without
 * a flush (an S1 violation).
 */
static void regress_free_with_pcpu_of_other_instance(void **state)
{
	struct uenv *e = *state;
	struct uenv *other = uenv_new(2, 4, 1, 512, 0, 0);
	luf_key_t key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1, 2), RO);
	struct luf_folio *f = &e->folios[0].lf;
	int ret;

	assert_int_equal(luf_keytab_check_done(e->kt, key, e->done), 0);
	ret = luf_free(e->fl, other->pc[0], f, key);
	if (ret == 0 && f->state == LUF_FOLIO_CLEAN)
		print_message("a folio owing a flush of CPUs {1,2} went to the clean list\n");
	uenv_free(other);
	assert_int_equal(ret, -EINVAL);
	assert_int_equal(f->state, LUF_FOLIO_IN_USE);
}

/*
 * Bug 3 (domain.h, luf_domain_init()), fixed: a CPU count of 0 (or above
 * LUF_MAX_CPUS) returned -EINVAL only after luf_shared_init() wrote the
 * seqcount and the lock.
 */
static void regress_domain_init_bad_count_writes(void **state)
{
	size_t size = luf_domain_size(4);
	unsigned char *p = testenv_zalloc(size);
	unsigned int written = 0;

	(void)state;
	memset(p, 0xa5, size);
	assert_int_equal(luf_domain_init((struct luf_domain *)(void *)p, 0), -EINVAL);
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
	luf_key_t key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(regress_defer_domain_of_other_cpu_count, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(regress_free_with_pcpu_of_other_instance, uenv_setup,
					    uenv_teardown),
	    cmocka_unit_test(regress_domain_init_bad_count_writes),
	    cmocka_unit_test_setup_teardown(regress_may_flush_keeps_reserve, uenv_setup,
					    uenv_teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("regress", tests, NULL, NULL) ? 1 : 0;
}
