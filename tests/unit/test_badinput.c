// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/test_badinput.c - every bad input returns its negative errno
 * and changes nothing: storage handed to an init function keeps its bytes,
 * and a running instance keeps every byte of its state (counters, lists,
 * done values, sets) and sees no flush.
 */
#include "unit.h"

#define POISON 0xa5

/* Storage of @size bytes plus one spare line, cache-line aligned, filled with POISON. */
static unsigned char *poisoned(size_t size)
{
	unsigned char *p = testenv_zalloc(size + LUF_CACHELINE);

	memset(p, POISON, size + LUF_CACHELINE);
	return p;
}

static void assert_poisoned(const unsigned char *p, size_t size)
{
	for (size_t i = 0; i < size + LUF_CACHELINE; i++)
		if (p[i] != POISON)
			fail_msg("byte %zu of the storage was written", i);
}

static void bad_luf_init(void **state)
{
	struct mock_arch a = {.nr_cpus = 4};
	size_t lsz = sizeof(struct luf), dsz = luf_done_size(4), ssz = luf_stats_size(4);
	unsigned char *lb = poisoned(lsz), *db = poisoned(dsz), *sb = poisoned(ssz);
	struct luf *l = (struct luf *)(void *)lb;
	struct luf_done_cpu *d = (struct luf_done_cpu *)(void *)db;
	struct luf_stats_cpu *st = (struct luf_stats_cpu *)(void *)sb;
	struct luf_arch_ops no_flush = mock_ops, no_nr = mock_ops, no_this = mock_ops;

	(void)state;
	no_flush.flush = NULL;
	no_nr.nr_cpu_ids = NULL;
	no_this.this_cpu = NULL;
	assert_int_equal(luf_init(NULL, &mock_ops, &a, d, st, 0), -EINVAL);
	assert_int_equal(luf_init(l, NULL, &a, d, st, 0), -EINVAL);
	assert_int_equal(luf_init(l, &no_flush, &a, d, st, 0), -EINVAL);
	assert_int_equal(luf_init(l, &no_nr, &a, d, st, 0), -EINVAL);
	assert_int_equal(luf_init(l, &no_this, &a, d, st, 0), -EINVAL);
	assert_int_equal(luf_init(l, &mock_ops, &a, NULL, st, 0), -EINVAL);
	assert_int_equal(luf_init(l, &mock_ops, &a, d, NULL, 0), -EINVAL);
	/* Misaligned storage (the API checks the address before any access). */
	assert_int_equal(luf_init((struct luf *)(void *)(lb + 8), &mock_ops, &a, d, st, 0),
			 -EINVAL);
	assert_int_equal(luf_init(l, &mock_ops, &a, (struct luf_done_cpu *)(void *)(db + 8), st, 0),
			 -EINVAL);
	assert_int_equal(luf_init(l, &mock_ops, &a, d, (struct luf_stats_cpu *)(void *)(sb + 8), 0),
			 -EINVAL);
	/* A CPU count of 0 or above LUF_MAX_CPUS. */
	a.nr_cpus = 0;
	assert_int_equal(luf_init(l, &mock_ops, &a, d, st, 0), -EINVAL);
	a.nr_cpus = LUF_MAX_CPUS + 1;
	assert_int_equal(luf_init(l, &mock_ops, &a, d, st, 0), -EINVAL);
	assert_poisoned(lb, lsz);
	assert_poisoned(db, dsz);
	assert_poisoned(sb, ssz);
	a.nr_cpus = 4;
	assert_int_equal(luf_init(l, &mock_ops, &a, d, st, 7), 0);
	assert_int_equal(luf_done_read(&l->done, 3), 7);
	free(lb);
	free(db);
	free(sb);
}

static void bad_keytab_init(void **state)
{
	struct uenv *e = *state;
	size_t sz = luf_keytab_size(4, e->nr_cpus);
	unsigned char *kb = poisoned(sz);
	struct luf_keytab *kt = (struct luf_keytab *)(void *)kb;
	struct luf *dead = testenv_zalloc(sizeof(*dead));

	assert_int_equal(luf_keytab_init(NULL, e->l, 4), -EINVAL);
	assert_int_equal(luf_keytab_init((struct luf_keytab *)(void *)(kb + 8), e->l, 4), -EINVAL);
	assert_int_equal(luf_keytab_init(kt, e->l, 0), -EINVAL);
	assert_int_equal(luf_keytab_init(kt, e->l, 1), -EINVAL);
	assert_int_equal(luf_keytab_init(kt, e->l, LUF_KEYTAB_MAX_KEYS + 1), -EINVAL);
	assert_int_equal(luf_keytab_init(kt, NULL, 4), -EINVAL);
	assert_int_equal(luf_keytab_init(kt, dead, 4), -EINVAL); /* never initialised */
	assert_poisoned(kb, sz);
	assert_int_equal(luf_keytab_init(kt, e->l, 4), 0);
	assert_int_equal(luf_keytab_init(kt, e->l, 4), -EBUSY);
	assert_int_equal(luf_keytab_fini(kt), 0);
	assert_int_equal(luf_keytab_fini(kt), -EINVAL);
	assert_int_equal(luf_keytab_init(kt, e->l, 4), 0);
	free(dead);
	free(kb);
}

/* luf_batch_init(), luf_pcpu_init(), luf_freelist_init(), luf_domain_init(). */
static void bad_part_inits(void **state)
{
	struct uenv *e = *state;
	size_t bsz = luf_batch_size(LUF_MAX_CPUS), psz = luf_pcpu_size(4),
	       fsz = luf_freelist_size(4);
	unsigned char *bb = poisoned(bsz), *pb = poisoned(psz), *fb = poisoned(fsz);
	struct luf_batch *b = (struct luf_batch *)(void *)bb;
	struct luf_pcpu *pc = (struct luf_pcpu *)(void *)pb;
	struct luf_freelist *fl = (struct luf_freelist *)(void *)fb;
	struct uenv *e3 = uenv_new(3, 4, 1, 512, 0, 0);
	struct luf_keytab *kt3 = e3->kt; /* a table of another instance */
	struct usnap *s;

	s = usnap_take(e);
	assert_int_equal(luf_batch_init(NULL, 4), -EINVAL);
	assert_int_equal(luf_batch_init(b, 0), -EINVAL);
	assert_int_equal(luf_batch_init(b, LUF_MAX_CPUS + 1), -EINVAL);
	assert_int_equal(luf_pcpu_init(NULL, e->l, e->kt, 0, 1), -EINVAL);
	assert_int_equal(luf_pcpu_init(pc, NULL, e->kt, 0, 1), -EINVAL);
	assert_int_equal(luf_pcpu_init(pc, e->l, NULL, 0, 1), -EINVAL);
	assert_int_equal(luf_pcpu_init(pc, e->l, e->kt, 4, 1), -EINVAL);
	assert_int_equal(luf_pcpu_init(pc, e->l, e->kt, ~0u, 1), -EINVAL);
	assert_int_equal(luf_pcpu_init(pc, e->l, kt3, 0, 1), -EINVAL);
	assert_int_equal(luf_pcpu_init(pc, e->l, e->kt, 0, 0), -EINVAL);
	assert_int_equal(luf_freelist_init(NULL, e->l, e->kt, 0), -EINVAL);
	assert_int_equal(luf_freelist_init(fl, NULL, e->kt, 0), -EINVAL);
	assert_int_equal(luf_freelist_init(fl, e->l, NULL, 0), -EINVAL);
	assert_int_equal(luf_freelist_init(fl, e->l, kt3, 0), -EINVAL);
	assert_int_equal(luf_domain_init(NULL, e->l), -EINVAL);
	assert_poisoned(bb, bsz);
	assert_poisoned(pb, psz);
	assert_poisoned(fb, fsz);
	usnap_check(e, s, true);
	uenv_free(e3);
	free(bb);
	free(pb);
	free(fb);
}

/* luf_free(): NULL, keys out of range, double frees, a second list. */
static void bad_free(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	struct luf_folio *f0 = &e->folios[0].lf, *f1 = &e->folios[1].lf, *f2 = &e->folios[2].lf;
	struct luf_pcpu *pc = e->pc[0];
	struct usnap *s;

	uenv_free_range(e, e->fl, 0, key, 0, 1); /* pend */
	uenv_free_range(e, e->fl, 0, 0, 1, 1);	 /* clean */
	s = usnap_take(e);
	assert_int_equal(luf_free(NULL, pc, f2, 0), -EINVAL);
	assert_int_equal(luf_free(e->fl, NULL, f2, 0), -EINVAL);
	assert_int_equal(luf_free(e->fl, pc, NULL, 0), -EINVAL);
	assert_int_equal(luf_free(e->fl, pc, f2, e->nr_keys), -EINVAL);
	assert_int_equal(luf_free(e->fl, pc, f2, 0xffff), -EINVAL);
	assert_int_equal(luf_free(e->fl, pc, f2, 0x10001), -EINVAL);
	assert_int_equal(luf_free(e->fl, pc, f2, ~0u), -EINVAL);
	assert_int_equal(luf_free(e->fl, pc, f0, key), -EBUSY); /* double free of a pend folio */
	assert_int_equal(luf_free(e->fl, pc, f1, 0), -EBUSY);	/* double free of a clean folio */
	assert_int_equal(luf_free(e->fl, pc, f1, key), -EBUSY);
	assert_int_equal(luf_free(e->fl2, pc, f0, key), -EBUSY); /* into a second list */
	assert_int_equal(luf_free(e->fl2, e->pc[1], f1, 0), -EBUSY);
	usnap_check(e, s, true);
#if defined(LUF_DEBUG)
	assert_int_equal(e->reports, 5); /* each -EBUSY was reported */
#endif
}

/* luf_alloc(): NULL, unknown flags; nothing handed out, nothing counted. */
static void bad_alloc(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	struct luf_folio *f = (struct luf_folio *)(void *)e; /* a sentinel */
	struct usnap *s;

	uenv_free_range(e, e->fl, 0, key, 0, 1);
	uenv_free_range(e, e->fl, 0, 0, 1, 1);
	s = usnap_take(e);
	assert_int_equal(luf_alloc(NULL, e->pc[0], 0, &f), -EINVAL);
	assert_int_equal(luf_alloc(e->fl, NULL, 0, &f), -EINVAL);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, NULL), -EINVAL);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, NULL), -EINVAL);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0x2, &f), -EINVAL);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH | 0x2, &f), -EINVAL);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0x80000000u, &f), -EINVAL);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], ~0u, &f), -EINVAL);
	assert_ptr_equal(f, (struct luf_folio *)(void *)e);
	usnap_check(e, s, true);
}

/* luf_pcpu_defer() / luf_unmap() / luf_pcpu_fold(): NULL, CPU bits >= nr_cpus. */
static void bad_defer(void **state)
{
	struct uenv *e = *state;
	unsigned long m[UNIT_MAX_WORDS];
	unsigned short key = 0x1234;
	struct usnap *s = usnap_take(e);

	luf_cpumask_clear(m, LUF_MAX_CPUS);
	assert_int_equal(luf_pcpu_defer(NULL, e->dom, UMASK(e, 1), false), -EINVAL);
	assert_int_equal(luf_pcpu_defer(e->pc[0], e->dom, NULL, false), -EINVAL);
	__luf_write_once(&m[0], (1UL << 1) | (1UL << 4)); /* CPU 4 of 4 */
	assert_int_equal(luf_pcpu_defer(e->pc[0], e->dom, m, false), -EINVAL);
	assert_int_equal(luf_pcpu_defer(e->pc[0], NULL, m, true), -EINVAL);
	assert_int_equal(luf_unmap(e->pc[0], e->dom, m, RO), -EINVAL);
	assert_int_equal(luf_unmap(e->pc[0], e->dom, m, RO | LUF_PTE_WRITABLE), -EINVAL);
	__luf_write_once(&m[0], 1UL << (LUF_BITS_PER_LONG - 1));
	assert_int_equal(luf_pcpu_defer(e->pc[0], e->dom, m, false), -EINVAL);
	assert_int_equal(luf_unmap(NULL, e->dom, UMASK(e, 1), RO), -EINVAL);
	assert_int_equal(luf_pcpu_fold(NULL, &key), -EINVAL);
	assert_int_equal(luf_pcpu_fold(e->pc[0], NULL), -EINVAL);
	assert_int_equal(key, 0x1234);
	usnap_check(e, s, true);

	/* 70 CPUs: the bad bits are in the second word. */
	e = uenv_reset(state, 70, 16, 4, 512, 0, 0);
	s = usnap_take(e);
	luf_cpumask_clear(m, LUF_MAX_CPUS);
	__luf_write_once(&m[1], 1UL << 6); /* CPU 70 */
	assert_int_equal(luf_pcpu_defer(e->pc[69], e->dom, m, false), -EINVAL);
	__luf_write_once(&m[1], 1UL << (LUF_BITS_PER_LONG - 1));
	assert_int_equal(luf_unmap(e->pc[69], e->dom, m, RO), -EINVAL);
	usnap_check(e, s, true);
	__luf_write_once(&m[1], 1UL << 5); /* CPU 69 is fine */
	assert_int_equal(luf_pcpu_defer(e->pc[69], e->dom, m, false), 0);
}

/* luf_flush_batch(), luf_domain_settle(), luf_key_flush(): nothing flushed on bad input. */
static void bad_flush_args(void **state)
{
	struct uenv *e = *state;
	struct luf_batch *b = e->scratch;
	struct luf_batch *b3 = testenv_zalloc(luf_batch_size(3));
	unsigned short key = uenv_unmap_fold(e, 0, e->dom, UMASK(e, 1, 2), RO);
	unsigned char b3_before[64];
	struct usnap *s;

	assert_true(luf_batch_size(3) <= sizeof(b3_before));
	assert_int_equal(luf_batch_init(b3, 3), 0);
	assert_int_equal(luf_batch_add(b, UMASK(e, 1, 3), luf_ugen_stamp(&e->l->ugen), false), 0);
	assert_int_equal(luf_batch_add(b3, UMASK(e, 1, 2), luf_ugen_stamp(&e->l->ugen), false), 0);
	memcpy(b3_before, b3, luf_batch_size(3));
	s = usnap_take(e);
	assert_int_equal(luf_flush_batch(e->l, 4, b), -EINVAL);
	assert_int_equal(luf_flush_batch(e->l, ~0u, b), -EINVAL);
	assert_int_equal(luf_flush_batch(e->l, 0, b3), -EINVAL); /* another CPU count */
	assert_int_equal(luf_domain_settle(NULL, 0, e->dom, b), -EINVAL);
	assert_int_equal(luf_domain_settle(e->l, 0, NULL, b), -EINVAL);
	assert_int_equal(luf_domain_settle(e->l, 0, e->dom, NULL), -EINVAL);
	assert_int_equal(luf_domain_settle(e->l, 4, e->dom, b), -EINVAL);
	assert_int_equal(luf_domain_settle(e->l, 0, e->dom, b3), -EINVAL);
	assert_int_equal(luf_key_flush(NULL, key), -EINVAL);
	assert_int_equal(luf_key_flush(e->pc[0], e->nr_keys), -EINVAL);
	assert_int_equal(luf_key_flush(e->pc[0], 0xffff), -EINVAL);
	usnap_check(e, s, true);
	assert_memory_equal(b3, b3_before, luf_batch_size(3));
	free(b3);
}

/* luf_abort_key(), luf_abort_domain(), luf_upgrade_check(): no flush, no count. */
static void bad_abort_args(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 0, e->dom, UMASK(e, 1, 2), RO);
	enum luf_abort_cause bad = (enum luf_abort_cause)LUF_ABORT_NR_CAUSES;
	enum luf_abort_cause worse = (enum luf_abort_cause)100;
	struct usnap *s = usnap_take(e);

	assert_int_equal(luf_abort_key(NULL, key, LUF_ABORT_WRITE_FAULT), -EINVAL);
	assert_int_equal(luf_abort_key(e->pc[0], key, bad), -EINVAL);
	assert_int_equal(luf_abort_key(e->pc[0], key, worse), -EINVAL);
	assert_int_equal(luf_abort_key(e->pc[0], 0, bad), -EINVAL);
	assert_int_equal(luf_abort_key(e->pc[0], e->nr_keys, LUF_ABORT_POISON), -EINVAL);
	assert_int_equal(luf_abort_key(e->pc[0], 0xffff, LUF_ABORT_POISON), -EINVAL);
	assert_int_equal(luf_abort_domain(NULL, e->dom, LUF_ABORT_MOVE), -EINVAL);
	assert_int_equal(luf_abort_domain(e->pc[0], NULL, LUF_ABORT_MOVE), -EINVAL);
	assert_int_equal(luf_abort_domain(e->pc[0], e->dom, bad), -EINVAL);
	assert_int_equal(luf_abort_domain(e->pc[0], e->dom, worse), -EINVAL);
	assert_int_equal(luf_upgrade_check(NULL, key, e->dom), -EINVAL);
	assert_int_equal(luf_upgrade_check(e->pc[0], e->nr_keys, NULL), -EINVAL);
	assert_int_equal(luf_upgrade_check(e->pc[0], 0xffff, e->dom), -EINVAL);
	usnap_check(e, s, true);
}

/* Key table, batch and cpumask operations. */
static void bad_set_ops(void **state)
{
	struct uenv *e = *state;
	struct luf_batch *b = e->scratch;
	struct luf_batch *b3 = testenv_zalloc(luf_batch_size(3));
	unsigned long m[UNIT_MAX_WORDS];
	struct usnap *s;

	assert_int_equal(luf_batch_init(b3, 3), 0);
	assert_int_equal(luf_batch_add(b, UMASK(e, 1), luf_ugen_stamp(&e->l->ugen), false), 0);
	assert_int_equal(luf_batch_add(b3, UMASK(e, 2), luf_ugen_stamp(&e->l->ugen), true), 0);
	luf_cpumask_clear(m, LUF_MAX_CPUS);
	__luf_write_once(&m[0], 1UL << 2);
	s = usnap_take(e);
	assert_int_equal(__luf_keytab_fold(e->kt, 0, b), -EINVAL);
	assert_int_equal(__luf_keytab_fold(e->kt, e->nr_keys, b), -EINVAL);
	assert_int_equal(__luf_keytab_fold(e->kt, 1, b3), -EINVAL); /* another CPU count */
	assert_int_equal(luf_keytab_check_done(e->kt, e->nr_keys), -EINVAL);
	assert_int_equal(luf_keytab_check_done(e->kt, 0xffff), -EINVAL);
	assert_int_equal(luf_batch_add(b, UMASK(e, 3), 0, true), -EINVAL); /* ugen 0 */
	assert_int_equal(luf_batch_fold(b, b3), -EINVAL);
	assert_int_equal(luf_batch_copy(b, b3), -EINVAL);
	assert_int_equal(luf_cpumask_set_cpu(m, 4, 4), -EINVAL);
	assert_int_equal(luf_cpumask_clear_cpu(m, 4, 4), -EINVAL);
	assert_int_equal(luf_cpumask_clear_cpu(m, 4, ~0u), -EINVAL);
	assert_false(luf_cpumask_test_cpu(m, 4, 4));
	assert_int_equal(luf_cpumask_next(m, 4, 4), 4);
	assert_int_equal(luf_flush_received(e->l, 4), 0);
	assert_int_equal(__luf_read_once(&m[0]), 1UL << 2);
	usnap_check(e, s, true);
	free(b3);
}

int unit_run_badinput(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bad_luf_init),
	    cmocka_unit_test_setup_teardown(bad_keytab_init, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(bad_part_inits, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(bad_free, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(bad_alloc, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(bad_defer, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(bad_flush_args, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(bad_abort_args, uenv_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(bad_set_ops, uenv_setup, uenv_teardown),
	};

	return cmocka_run_group_tests_name("badinput", tests, NULL, NULL);
}
