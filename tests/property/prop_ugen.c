// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Property tests of ugens across the wrap point (luf/ugen.h, S4):
 *  - a source started at ULONG_MAX - k hands out, through a random mix of
 *    __luf_ugen_new() and luf_ugen_stamp(), values that are never 0 and that
 *    luf_ugen_before() / luf_ugen_newer() order exactly as they were taken;
 *  - a whole instance started there (testenv_init(..., ULONG_MAX - k)) defers,
 *    refuses to reuse, flushes and releases exactly as it does far from the
 *    wrap, round after round across it, and done never moves back.
 */
#include "prop.h"

#include <string.h>

#define NR_TAKES 1200

struct params {
	unsigned int nr_cpus;
	unsigned int seeds;
};

struct take {
	unsigned long v;
	bool is_new; /* __luf_ugen_new() (else luf_ugen_stamp()) */
};

static void order_case(struct prop_rng *r, struct take *t)
{
	unsigned long k = (unsigned long)prop_below(r, NR_TAKES / 2);
	struct luf_ugen_src src;
	unsigned long last_new;

	__luf_ugen_src_init(&src, ULONG_MAX - k);
	last_new = luf_ugen_current(&src);
	for (unsigned int i = 0; i < NR_TAKES; i++) {
		unsigned long cur = luf_ugen_current(&src), want = cur + 1 ? cur + 1 : 1;

		t[i].is_new = prop_chance(r, 2, 3);
		t[i].v = t[i].is_new ? __luf_ugen_new(&src) : luf_ugen_stamp(&src);
		PASSERT(t[i].v != 0, "take %u (%s) from start ULONG_MAX-%lu returned 0", i,
			t[i].is_new ? "new" : "stamp", k);
		PASSERT(t[i].v == want, "take %u (%s): %lu, want %lu (current %lu)", i,
			t[i].is_new ? "new" : "stamp", t[i].v, want, cur);
		if (t[i].is_new) {
			PASSERT(luf_ugen_before(last_new, t[i].v),
				"new ugen %lu not after the previous %lu", t[i].v, last_new);
			last_new = t[i].v;
		}
		PASSERT(luf_ugen_current(&src) == last_new, "current %lu, last new %lu",
			luf_ugen_current(&src), last_new);
	}
	/* Every pair, in the order taken. */
	for (unsigned int i = 0; i < NR_TAKES; i++) {
		for (unsigned int j = i + 1; j < NR_TAKES; j++) {
			unsigned long a = t[i].v, b = t[j].v;

			PASSERT(!luf_ugen_before(b, a), "take %u (%lu) before take %u (%lu)", j, b,
				i, a);
			if (a == b) {
				/* Only a stamp followed by the new ugen(s) it names. */
				PASSERT(!t[i].is_new, "new ugen %lu taken twice (takes %u, %u)", a,
					i, j);
				continue;
			}
			PASSERT(luf_ugen_before(a, b), "take %u (%lu) not before take %u (%lu)", i,
				a, j, b);
			PASSERT(luf_ugen_newer(a, b) == b && luf_ugen_newer(b, a) == b,
				"newer(%lu, %lu) is not %lu", a, b, b);
		}
		PASSERT(luf_ugen_newer(t[i].v, 0) == t[i].v && luf_ugen_newer(0, t[i].v) == t[i].v,
			"newer with 0 (none) is not the other");
	}
}

Test(ugen, order_across_wrap, .timeout = 60)
{
	struct take *t = calloc(NR_TAKES, sizeof(*t));

	for (unsigned int i = 0; i < prop_nr_seeds(600); i++) {
		struct prop_rng r;

		prop_rng_init(&r, prop_seed(0x06e40000u, i));
		order_case(&r, t);
	}
	free(t);
}

/* The wrap points themselves, without randomness. */
Test(ugen, wrap_points)
{
	struct luf_ugen_src src;

	__luf_ugen_src_init(&src, ULONG_MAX - 1);
	cr_assert_eq(luf_ugen_stamp(&src), ULONG_MAX);
	cr_assert_eq(__luf_ugen_new(&src), ULONG_MAX);
	cr_assert_eq(luf_ugen_stamp(&src), 1, "stamp at ULONG_MAX must skip 0");
	cr_assert_eq(__luf_ugen_new(&src), 1, "new at ULONG_MAX must skip 0");
	cr_assert(luf_ugen_before(ULONG_MAX, 1));
	cr_assert(!luf_ugen_before(1, ULONG_MAX));
	cr_assert(luf_ugen_before(ULONG_MAX - 5, 3));
	cr_assert(!luf_ugen_before(7, 7));
	cr_assert_eq(luf_ugen_newer(ULONG_MAX, 2), 2);
}

/* --- a whole instance across the wrap --- */

struct wctx {
	struct testenv t;
	struct prop_rng r;
	unsigned long *prev_done;
	unsigned int nr;
};

static void check_done_monotonic(struct wctx *w, const char *when)
{
	for (unsigned int c = 0; c < w->nr; c++) {
		unsigned long now = luf_done_read(&w->t.luf->done, c);

		PASSERT(!luf_ugen_before(now, w->prev_done[c]),
			"S4 (%s): done[%u] went back from %lu to %lu", when, c, w->prev_done[c],
			now);
		w->prev_done[c] = now;
	}
}

/*
 * One round: a flush of some CPUs, then an unmap on them (so that flush must
 * not count), fold, free: the folio must be pend; an allocation that may not
 * flush must fail without flushing; a failed flush keeps it pend; then a
 * flush (by the allocation, or settling the domain first) frees it.
 */
static void wrap_round(struct wctx *w, unsigned int round)
{
	struct testenv *t = &w->t;
	struct prop_rng *r = &w->r;
	unsigned int x = (unsigned int)prop_below(r, w->nr), y = (unsigned int)prop_below(r, w->nr);
	struct luf_folio *f = &t->folios[0].lf, *out = NULL;
	unsigned long flushes;
	unsigned short key = 0;
	unsigned long stamp;
	prop_mask_t m;

	prop_random_mask(r, m, w->nr);
	if (luf_cpumask_empty(m, w->nr))
		luf_cpumask_set_cpu(m, w->nr, x);
	/* A flush of exactly these CPUs just before the unmap. */
	testenv_external_flush(t->luf, m, w->nr);
	stamp = luf_ugen_stamp(&t->luf->ugen);
	PASSERT(luf_unmap(t->pc[x], t->dom, m, LUF_PTE_ACCESSIBLE) == 0, "round %u: unmap", round);
	PASSERT(luf_pcpu_fold(t->pc[x], &key) == 0 && key, "round %u: fold gave key %u", round,
		key);
	PASSERT(luf_keytab_check_done(t->kt, key) == 0,
		"round %u: key done right after the unmap (stamp %lu, current %lu)", round, stamp,
		luf_ugen_current(&t->luf->ugen));
	PASSERT(luf_domain_pending(t->dom), "round %u: domain not pending", round);
	PASSERT(luf_free(t->fl, t->pc[x], f, key) == 0 && f->state == LUF_FOLIO_PEND,
		"round %u: free: state %d, want pend (stamp %lu)", round, f->state, stamp);
	check_done_monotonic(w, "after free");

	flushes = t->arch.flushes;
	PASSERT(luf_alloc(t->fl, t->pc[y], 0, &out) == -EAGAIN && t->arch.flushes == flushes,
		"round %u: alloc without MAY_FLUSH handed out a pend folio or flushed", round);
	if (prop_chance(r, 1, 3)) {
		t->arch.fail_next = 1;
		PASSERT(luf_alloc(t->fl, t->pc[y], LUF_ALLOC_MAY_FLUSH, &out) == -EIO,
			"round %u: failed flush not reported", round);
		PASSERT(f->state == LUF_FOLIO_PEND && luf_freelist_nr_pend(t->fl) == 1,
			"round %u: failed flush released the folio", round);
		PASSERT(luf_keytab_check_done(t->kt, key) == 0,
			"round %u: failed flush marked done", round);
		check_done_monotonic(w, "after failed flush");
	}
	flushes = t->arch.flushes;
	if (prop_chance(r, 1, 2)) {
		PASSERT(luf_alloc(t->fl, t->pc[y], LUF_ALLOC_MAY_FLUSH, &out) == 0 && out == f,
			"round %u: MAY_FLUSH alloc failed", round);
		PASSERT(t->arch.flushes == flushes + 1 &&
			    luf_cpumask_equal(t->arch.last_cpus, m, w->nr),
			"round %u: alloc flushed %lu times, or other CPUs", round,
			t->arch.flushes - flushes);
	} else {
		PASSERT(luf_domain_settle(t->luf, y, t->dom, t->pc[y]->scratch) == 1,
			"round %u: settle", round);
		PASSERT(t->arch.flushes == flushes + 1 &&
			    luf_cpumask_subset(m, t->arch.last_cpus, w->nr),
			"round %u: settle flushed %lu times, or missed CPUs", round,
			t->arch.flushes - flushes);
		flushes = t->arch.flushes;
		PASSERT(luf_alloc(t->fl, t->pc[y], 0, &out) == 0 && out == f &&
			    t->arch.flushes == flushes,
			"round %u: alloc after settle failed or flushed", round);
	}
	PASSERT(f->state == LUF_FOLIO_IN_USE, "round %u: allocated folio not in use", round);
	PASSERT(luf_keytab_check_done(t->kt, key) == 1 && !luf_domain_pending(t->dom),
		"round %u: still pending after the flush", round);
	for (unsigned int c = 0; c < w->nr; c++)
		if (luf_cpumask_test_cpu(m, w->nr, c))
			PASSERT(!luf_ugen_before(luf_done_read(&t->luf->done, c), stamp),
				"round %u: done[%u] %lu below the stamp %lu", round, c,
				luf_done_read(&t->luf->done, c), stamp);
	check_done_monotonic(w, "after flush");
	PASSERT(luf_ugen_current(&t->luf->ugen) != 0, "round %u: the source sits at 0", round);
}

ParameterizedTestParameters(ugen, instance_across_wrap)
{
	static struct params p[] = {{4, 600}, {64, 400}, {130, 200}};

	return cr_make_param_array(struct params, p, sizeof(p) / sizeof(p[0]));
}

ParameterizedTest(struct params *p, ugen, instance_across_wrap, .timeout = 60)
{
	struct wctx w;

	memset(&w, 0, sizeof(w));
	w.nr = p->nr_cpus;
	w.prev_done = calloc(w.nr, sizeof(*w.prev_done));
	for (unsigned int i = 0; i < prop_nr_seeds(p->seeds); i++) {
		unsigned long k;

		prop_rng_init(&w.r, prop_seed(0x0a7a0000u + w.nr, i));
		k = (unsigned long)prop_below(&w.r, 40);
		testenv_init(&w.t, w.nr, 64, 4, 1 + (unsigned int)prop_below(&w.r, 4), 0,
			     ULONG_MAX - k);
		for (unsigned int c = 0; c < w.nr; c++)
			w.prev_done[c] = luf_done_read(&w.t.luf->done, c);
		PASSERT(w.prev_done[0] == ULONG_MAX - k, "done starts at %lu", w.prev_done[0]);
		for (unsigned int round = 0; round < 120; round++) {
			prop_step = round + 1;
			wrap_round(&w, round);
		}
		PASSERT(luf_ugen_before(ULONG_MAX - k, luf_ugen_current(&w.t.luf->ugen)) &&
			    luf_ugen_current(&w.t.luf->ugen) < 1000,
			"the run did not cross the wrap (current %lu)",
			luf_ugen_current(&w.t.luf->ugen));
		testenv_destroy(&w.t);
	}
	free(w.prev_done);
}
