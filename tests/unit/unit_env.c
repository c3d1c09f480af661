// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/unit_env.c - the mocked backend and the fixture of the unit
 * tests (see unit.h).
 */
#include "unit.h"

#include <stdio.h>

int mock_flush(void *arch, const unsigned long *cpus, unsigned int nr_cpus, const struct luf_range *r)
{
	struct mock_arch *m = arch;
	unsigned long words[UNIT_MAX_WORDS] = {0};
	const unsigned long *cpus_seen = words;
	unsigned long ugen = luf_ugen_current(&m->luf->ugen);
	unsigned int c;

	m->calls++;
	if (m->lenient)
		return 0;
	assert_int_equal(nr_cpus, m->nr_cpus);
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		words[i] = __luf_read_once(&cpus[i]);
	assert_null(r);
	check_expected(nr_cpus);
	check_expected_ptr(cpus_seen);
	check_expected(ugen);
	/*
	 * The protocol marks done only after the flush returned 0: while it
	 * runs, no CPU being flushed may already count as done at the snapshot.
	 */
	luf_for_each_cpu (c, cpus, nr_cpus) {
		if (!u_before(luf_done_read(&m->luf->done, c), ugen))
			fail_msg("done[%u] = %lu already marked while flushing at ugen %lu", c,
				 luf_done_read(&m->luf->done, c), ugen);
	}
	if (m->during_flush)
		m->during_flush(m->during_ctx);
	return mock_type(int);
}

static unsigned int mock_nr_cpu_ids(void *arch)
{
	return ((struct mock_arch *)arch)->nr_cpus;
}

static unsigned int mock_this_cpu(void *arch)
{
	(void)arch;
	return 0;
}

const struct luf_arch_ops mock_ops = {
    .flush = mock_flush,
    .nr_cpu_ids = mock_nr_cpu_ids,
    .this_cpu = mock_this_cpu,
};

void expect_flush_list(unsigned int nr_cpus, const unsigned int *list, unsigned int n,
		       unsigned long ugen, int ret)
{
	unsigned long words[UNIT_MAX_WORDS] = {0};

	for (unsigned int i = 0; i < n; i++) {
		assert_true(list[i] < nr_cpus);
		words[list[i] / LUF_BITS_PER_LONG] |= 1UL << (list[i] % LUF_BITS_PER_LONG);
	}
	expect_value(mock_flush, nr_cpus, nr_cpus);
	expect_memory(mock_flush, cpus_seen, words, LUF_CPUMASK_WORDS(nr_cpus) * sizeof(words[0]));
	expect_value(mock_flush, ugen, ugen);
	will_return(mock_flush, ret);
}

#if defined(LUF_DEBUG)
static struct uenv *report_env;

static void uenv_report(const char *what, const void *obj, const char *file, int line)
{
	(void)what, (void)obj, (void)file, (void)line;
	if (report_env)
		report_env->reports++;
}
#endif

struct uenv *uenv_new(unsigned int nr_cpus, unsigned int nr_keys, unsigned int nr_folios,
		      unsigned int threshold, unsigned long reserve, unsigned long start)
{
	struct uenv *e = testenv_zalloc(sizeof(*e));

	e->nr_cpus = nr_cpus;
	e->nr_keys = nr_keys;
	e->nr_folios = nr_folios;
	e->threshold = threshold;
	e->reserve = reserve;
	e->arch.nr_cpus = nr_cpus;
	e->l = testenv_zalloc(sizeof(struct luf));
	e->done = testenv_zalloc(luf_done_size(nr_cpus));
	e->stats = testenv_zalloc(luf_stats_size(nr_cpus));
	assert_int_equal(luf_init(e->l, &mock_ops, &e->arch, e->done, e->stats, start), 0);
	e->arch.luf = e->l;
	e->kt = testenv_zalloc(luf_keytab_size(nr_keys, nr_cpus));
	assert_int_equal(luf_keytab_init(e->kt, e->l, nr_keys), 0);
	e->pc = testenv_zalloc(nr_cpus * sizeof(*e->pc));
	for (unsigned int c = 0; c < nr_cpus; c++) {
		e->pc[c] = testenv_zalloc(luf_pcpu_size(nr_cpus));
		assert_int_equal(luf_pcpu_init(e->pc[c], e->l, e->kt, c, threshold), 0);
	}
	e->fl = testenv_zalloc(luf_freelist_size(nr_cpus));
	assert_int_equal(luf_freelist_init(e->fl, e->l, e->kt, reserve), 0);
	e->fl2 = testenv_zalloc(luf_freelist_size(nr_cpus));
	assert_int_equal(luf_freelist_init(e->fl2, e->l, e->kt, 0), 0);
	e->dom = testenv_zalloc(luf_domain_size(nr_cpus));
	assert_int_equal(luf_domain_init(e->dom, e->l), 0);
	e->dom2 = testenv_zalloc(luf_domain_size(nr_cpus));
	assert_int_equal(luf_domain_init(e->dom2, e->l), 0);
	e->scratch = testenv_zalloc(luf_batch_size(nr_cpus));
	assert_int_equal(luf_batch_init(e->scratch, nr_cpus), 0);
	e->scratch2 = testenv_zalloc(luf_batch_size(nr_cpus));
	assert_int_equal(luf_batch_init(e->scratch2, nr_cpus), 0);
	e->folios = testenv_zalloc((nr_folios ? nr_folios : 1) * sizeof(*e->folios));
	for (unsigned int i = 0; i < nr_folios; i++)
		e->folios[i].id = i;
#if defined(LUF_DEBUG)
	report_env = e;
	luf_set_report(e->l, uenv_report);
#endif
	return e;
}

void uenv_free(struct uenv *e)
{
	if (!e)
		return;
#if defined(LUF_DEBUG)
	if (report_env == e)
		report_env = NULL;
#endif
	for (unsigned int c = 0; c < e->nr_cpus; c++)
		free(e->pc[c]);
	free(e->pc);
	free(e->fl);
	free(e->fl2);
	free(e->dom);
	free(e->dom2);
	free(e->scratch);
	free(e->scratch2);
	free(e->kt);
	free(e->stats);
	free(e->done);
	free(e->l);
	free(e->folios);
	free(e);
}

int uenv_setup(void **state)
{
	*state = uenv_new(4, 16, 128, 512, 0, 0);
	return 0;
}

int uenv_teardown(void **state)
{
	uenv_free(*state);
	*state = NULL;
	return 0;
}

struct uenv *uenv_reset(void **state, unsigned int nr_cpus, unsigned int nr_keys,
			unsigned int nr_folios, unsigned int threshold, unsigned long reserve,
			unsigned long start)
{
	uenv_free(*state);
	*state = NULL;
	*state = uenv_new(nr_cpus, nr_keys, nr_folios, threshold, reserve, start);
	return *state;
}

const unsigned long *uenv_mask(struct uenv *e, const unsigned int *list, unsigned int n)
{
	unsigned long *m = e->masks[e->next_mask++ % 4];

	luf_cpumask_clear(m, LUF_MAX_CPUS);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(luf_cpumask_set_cpu(m, e->nr_cpus, list[i]), 0);
	return m;
}

unsigned long uenv_next_ugen(const struct uenv *e)
{
	return u_next(luf_ugen_current(&e->l->ugen));
}

long ustat(const struct uenv *e, enum luf_stat_item item)
{
	return luf_stats_sum(e->l, item);
}

unsigned short uenv_unmap_fold(struct uenv *e, unsigned int cpu, struct luf_domain *dom,
			  const unsigned long *mask, unsigned int pte_flags)
{
	unsigned short key = 0xffff;

	assert_int_equal(luf_unmap(e->pc[cpu], dom, mask, pte_flags), 0);
	assert_int_equal(luf_pcpu_fold(e->pc[cpu], &key), 0);
	return key;
}

void uenv_free_range(struct uenv *e, struct luf_freelist *fl, unsigned int cpu, unsigned int key,
		     unsigned int first, unsigned int n)
{
	for (unsigned int i = first; i < first + n; i++)
		assert_int_equal(luf_free(fl, e->pc[cpu], &e->folios[i].lf, key), 0);
}

unsigned long ufolio_id(const struct luf_folio *f)
{
	return luf_folio_entry(f, const struct ufolio, lf)->id;
}

/* ---- snapshots ---- */

enum { USNAP_STATS, USNAP_FIXED_NR };

struct usnap_region {
	const char *name;
	const void *p;
	size_t size;
	unsigned char *copy;
};

struct usnap {
	unsigned long calls;
	unsigned int nr;
	struct usnap_region r[];
};

static void usnap_add(struct usnap *s, const char *name, const void *p, size_t size)
{
	struct usnap_region *r = &s->r[s->nr++];

	r->name = name;
	r->p = p;
	r->size = size;
	r->copy = malloc(size);
	assert_non_null(r->copy);
	memcpy(r->copy, p, size);
}

struct usnap *usnap_take(const struct uenv *e)
{
	unsigned int n = USNAP_FIXED_NR + 11 + e->nr_cpus;
	struct usnap *s = malloc(sizeof(*s) + n * sizeof(s->r[0]));

	assert_non_null(s);
	s->nr = 0;
	s->calls = e->arch.calls;
	/* The statistics first (index USNAP_STATS): usnap_check() may skip them. */
	usnap_add(s, "stats", e->stats, luf_stats_size(e->nr_cpus));
	usnap_add(s, "luf", e->l, sizeof(struct luf));
	usnap_add(s, "done", e->done, luf_done_size(e->nr_cpus));
	usnap_add(s, "keytab", e->kt, luf_keytab_size(e->nr_keys, e->nr_cpus));
	usnap_add(s, "freelist", e->fl, luf_freelist_size(e->nr_cpus));
	usnap_add(s, "freelist2", e->fl2, luf_freelist_size(e->nr_cpus));
	usnap_add(s, "domain", e->dom, luf_domain_size(e->nr_cpus));
	usnap_add(s, "domain2", e->dom2, luf_domain_size(e->nr_cpus));
	usnap_add(s, "scratch", e->scratch, luf_batch_size(e->nr_cpus));
	usnap_add(s, "scratch2", e->scratch2, luf_batch_size(e->nr_cpus));
	usnap_add(s, "folios", e->folios, (e->nr_folios ? e->nr_folios : 1) * sizeof(*e->folios));
	for (unsigned int c = 0; c < e->nr_cpus; c++)
		usnap_add(s, "pcpu", e->pc[c], luf_pcpu_size(e->nr_cpus));
	return s;
}

void usnap_check(const struct uenv *e, struct usnap *s, bool with_stats)
{
	const char *changed = NULL;
	unsigned long calls = s->calls;

	for (unsigned int i = 0; i < s->nr; i++) {
		if ((i != USNAP_STATS || with_stats) && !changed &&
		    memcmp(s->r[i].p, s->r[i].copy, s->r[i].size))
			changed = s->r[i].name;
		free(s->r[i].copy);
	}
	free(s);
	assert_int_equal(e->arch.calls, calls);
	if (changed)
		fail_msg("%s changed", changed);
}
