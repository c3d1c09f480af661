// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Property tests of pending sets (luf/batch.h, luf/done.h):
 *  - fold is commutative, associative and idempotent, has the empty set as
 *    identity, and equals a reference model (union of CPUs, newest ugen,
 *    writable OR writable), for random sets over 4, 64, 130 and 1024 CPUs
 *    with ugens on both sides of the wrap; luf_batch_add() refuses ugen 0;
 *  - diet drops exactly the CPUs whose done >= ugen (wrap-safe) and keeps
 *    every CPU whose done < ugen; check_done agrees with "every CPU has
 *    done >= ugen" and with the scan of every counter; mark_done never
 *    lowers a counter (S4), and leaves the done summary at the minimum of
 *    the counters, never above.
 */
#include "prop.h"

#include <string.h>

struct params {
	unsigned int nr_cpus;
	unsigned int seeds;
};

/* The reference model of a batch: plain arrays, no luf code. */
struct ref {
	unsigned char cpu[LUF_MAX_CPUS];
	bool any;	      /* some CPU was added */
	unsigned long maxoff; /* newest ugen, as an offset from the base */
	bool writable;
};

struct world {
	unsigned int nr;
	unsigned long base;
	unsigned long win; /* ugens are base + [0, win): a wrap-safe total order */
	struct luf_batch *a, *b, *c, *x, *y, *z, *e, *tmp;
	struct ref ra, rb, rc, rx;
};

static struct luf_batch *new_batch(unsigned int nr)
{
	struct luf_batch *b = testenv_zalloc(luf_batch_size(nr));

	cr_assert_eq(luf_batch_init(b, nr), 0);
	return b;
}

static void ref_fold(struct ref *dst, const struct ref *src, unsigned int nr)
{
	if (!src->any)
		return;
	for (unsigned int c = 0; c < nr; c++)
		dst->cpu[c] |= src->cpu[c];
	dst->maxoff = dst->any && dst->maxoff > src->maxoff ? dst->maxoff : src->maxoff;
	dst->any = true;
	dst->writable |= src->writable;
}

static void check_ref(const struct world *w, const struct luf_batch *b, const struct ref *r,
		      const char *what)
{
	unsigned long want = r->any ? w->base + r->maxoff : 0;

	PASSERT(luf_batch_ugen(b) == want, "%s: ugen %lu, model %lu (base %lu, nr_cpus %u)", what,
		luf_batch_ugen(b), want, w->base, w->nr);
	PASSERT(luf_batch_writable(b) == (r->any && r->writable), "%s: writable %d, model %d", what,
		luf_batch_writable(b), r->any && r->writable);
	PASSERT(luf_batch_empty(b) == !r->any, "%s: empty %d, model %d", what, luf_batch_empty(b),
		!r->any);
	for (unsigned int c = 0; c < w->nr; c++)
		PASSERT(luf_cpumask_test_cpu(b->cpus, w->nr, c) == (r->cpu[c] != 0),
			"%s: cpu %u in set %d, model %d", what, c,
			luf_cpumask_test_cpu(b->cpus, w->nr, c), r->cpu[c]);
}

/* A random batch built by luf_batch_add(), and its reference. */
static void gen(struct prop_rng *r, struct world *w, struct luf_batch *b, struct ref *ref)
{
	prop_mask_t m;

	luf_batch_clear(b);
	memset(ref, 0, sizeof(*ref));
	if (prop_chance(r, 1, 6))
		return; /* the empty set (ugen 0) */
	for (unsigned int n = 1 + (unsigned int)prop_below(r, 4); n; n--) {
		unsigned long off = (unsigned long)prop_below(r, w->win);
		bool wr = prop_chance(r, 1, 4);

		if (!(unsigned long)(w->base + off))
			off++; /* 0 is never a stamp */
		prop_random_mask(r, m, w->nr);
		if (prop_chance(r, 1, 8)) {
			luf_batch_copy(w->tmp, b);
			PASSERT(luf_batch_add(b, m, 0, wr) == -EINVAL, "add with ugen 0 accepted");
			PASSERT(luf_batch_equal(b, w->tmp), "add with ugen 0 changed the batch");
		}
		PASSERT(luf_batch_add(b, m, w->base + off, wr) == 0, "add failed");
		if (luf_cpumask_empty(m, w->nr))
			continue; /* cached nowhere: adds nothing */
		for (unsigned int c = 0; c < w->nr; c++)
			ref->cpu[c] |= luf_cpumask_test_cpu(m, w->nr, c);
		ref->maxoff = ref->any && ref->maxoff > off ? ref->maxoff : off;
		ref->any = true;
		ref->writable |= wr;
	}
}

/* dst = copy of a, then fold b into it. */
static void fold2(struct luf_batch *dst, const struct luf_batch *a, const struct luf_batch *b)
{
	PASSERT(luf_batch_copy(dst, a) == 0, "copy failed");
	PASSERT(luf_batch_fold(dst, b) == 0, "fold failed");
}

static void fold_round(struct prop_rng *r, struct world *w)
{
	static const unsigned long wins[] = {1, 8, 1000, 1UL << 40};

	w->base = prop_random_base(r);
	w->win = wins[prop_below(r, 4)];
	gen(r, w, w->a, &w->ra);
	check_ref(w, w->a, &w->ra, "add(a)");
	gen(r, w, w->b, &w->rb);
	gen(r, w, w->c, &w->rc);

	/* Commutative, and equal to the model. */
	fold2(w->x, w->a, w->b);
	fold2(w->y, w->b, w->a);
	PASSERT(luf_batch_equal(w->x, w->y), "a|b != b|a (base %lu win %lu)", w->base, w->win);
	w->rx = w->ra;
	ref_fold(&w->rx, &w->rb, w->nr);
	check_ref(w, w->x, &w->rx, "a|b");

	/* Associative. */
	fold2(w->y, w->x, w->c);   /* (a|b)|c */
	fold2(w->z, w->b, w->c);   /* b|c */
	fold2(w->tmp, w->a, w->z); /* a|(b|c) */
	PASSERT(luf_batch_equal(w->y, w->tmp), "(a|b)|c != a|(b|c) (base %lu win %lu)", w->base,
		w->win);

	/* Idempotent; the empty set is the identity. */
	fold2(w->y, w->a, w->a);
	PASSERT(luf_batch_equal(w->y, w->a), "a|a != a");
	fold2(w->y, w->x, w->b);
	PASSERT(luf_batch_equal(w->y, w->x), "(a|b)|b != a|b");
	fold2(w->y, w->a, w->e);
	PASSERT(luf_batch_equal(w->y, w->a), "a|empty != a");
	fold2(w->y, w->e, w->a);
	PASSERT(luf_batch_equal(w->y, w->a), "empty|a != a");
	PASSERT(luf_batch_empty(w->e) && luf_batch_ugen(w->e) == 0, "empty set changed");
}

/* Fold a batch of another CPU count: refused, nothing changed. */
static void fold_mismatch(struct world *w)
{
	unsigned int other = w->nr == 1 ? 2 : w->nr - 1;
	struct luf_batch *o = new_batch(other);

	luf_batch_copy(w->tmp, w->a);
	PASSERT(luf_batch_fold(w->a, o) == -EINVAL, "fold of %u into %u CPUs accepted", other,
		w->nr);
	PASSERT(luf_batch_equal(w->a, w->tmp), "refused fold changed the batch");
	free(o);
}

static struct world *world_new(unsigned int nr)
{
	struct world *w = calloc(1, sizeof(*w));

	w->nr = nr;
	w->a = new_batch(nr);
	w->b = new_batch(nr);
	w->c = new_batch(nr);
	w->x = new_batch(nr);
	w->y = new_batch(nr);
	w->z = new_batch(nr);
	w->e = new_batch(nr);
	w->tmp = new_batch(nr);
	return w;
}

static void world_free(struct world *w)
{
	free(w->a), free(w->b), free(w->c), free(w->x);
	free(w->y), free(w->z), free(w->e), free(w->tmp);
	free(w);
}

ParameterizedTestParameters(batch, fold)
{
	static struct params p[] = {{4, 1200}, {64, 1200}, {130, 800}, {1024, 500}};

	return cr_make_param_array(struct params, p, sizeof(p) / sizeof(p[0]));
}

ParameterizedTest(struct params *p, batch, fold, .timeout = 60)
{
	struct world *w = world_new(p->nr_cpus);

	for (unsigned int i = 0; i < prop_nr_seeds(p->seeds); i++) {
		struct prop_rng r;

		prop_rng_init(&r, prop_seed(0xf01d0000u + p->nr_cpus, i));
		for (prop_step = 1; prop_step <= 100; prop_step++)
			fold_round(&r, w);
		fold_mismatch(w);
	}
	world_free(w);
}

/* A random signed distance of done from the set's ugen, often -1, 0 or 1. */
static long random_delta(struct prop_rng *r)
{
	long mag;

	switch (prop_below(r, 5)) {
	case 0:
	case 1:
	case 2:
		return (long)prop_below(r, 5) - 2;
	case 3:
		mag = 1 + (long)prop_below(r, 1000);
		break;
	default:
		mag = 1 + (long)prop_below(r, 1UL << 40);
		break;
	}
	return prop_next(r) & 1 ? mag : -mag;
}

struct diet_world {
	unsigned int nr;
	struct luf_done_cpu *cpus;
	struct luf_done *d; /* the counters and their summary */
	long *delta;
	struct luf_batch *b, *b0, *e;
};

/*
 * The summary after sequential marks: each group is exactly the minimum of
 * its CPUs' counters (never above it: that would be a check saying done
 * too early; not below it: with no race, nothing lags), and @all the
 * minimum of the groups.
 */
static void check_summary(const struct luf_done *d, unsigned int nr)
{
	unsigned long all = 0;

	for (unsigned int g = 0; g < LUF_CPUMASK_WORDS(nr); g++) {
		unsigned long min = luf_done_read(d, g * LUF_BITS_PER_LONG), v;

		for (unsigned int c = g * LUF_BITS_PER_LONG;
		     c < nr && c < (g + 1) * LUF_BITS_PER_LONG; c++) {
			v = luf_done_read(d, c);
			if (luf_ugen_before(v, min))
				min = v;
		}
		PASSERT(!luf_ugen_before(min, __luf_done_group(d, g)),
			"summary ahead: group %u at %lu, its slowest CPU at %lu", g,
			__luf_done_group(d, g), min);
		PASSERT(__luf_done_group(d, g) == min, "group %u lags: %lu, its minimum %lu", g,
			__luf_done_group(d, g), min);
		if (!g || luf_ugen_before(min, all))
			all = min;
	}
	PASSERT(luf_done_all(d) == all, "all at %lu, the groups' minimum %lu", luf_done_all(d),
		all);
}

static void diet_round(struct prop_rng *r, struct diet_world *w)
{
	unsigned long u = prop_random_base(r);
	unsigned int nr = w->nr, expect_dropped = 0;
	bool all_done = true, any_left = false, got, wr = prop_chance(r, 1, 3);
	prop_mask_t m;

	if (!u)
		u = 1;
	/* Done counters at u + delta[c], raised by __luf_done_mark() from far behind. */
	__luf_done_init(w->d, w->cpus, nr, u - (1UL << 41));
	luf_cpumask_clear(m, nr);
	for (unsigned int c = 0; c < nr; c++) {
		unsigned long v, older;

		w->delta[c] = random_delta(r);
		if (!(unsigned long)(u + (unsigned long)w->delta[c]))
			w->delta[c] += w->delta[c] < 0 ? -1 : 1;
		v = u + (unsigned long)w->delta[c];
		luf_cpumask_set_cpu(m, nr, c);
		__luf_done_mark(w->d, m, nr, v);
		PASSERT(luf_done_read(w->d, c) == v, "mark_done: cpu %u at %lu, want %lu", c,
			luf_done_read(w->d, c), v);
		older = v - 1 - (unsigned long)prop_below(r, 1000);
		if (older) {
			__luf_done_mark(w->d, m, nr, older);
			PASSERT(luf_done_read(w->d, c) == v,
				"S4: mark_done(%lu) moved cpu %u back from %lu to %lu", older, c, v,
				luf_done_read(w->d, c));
		}
		luf_cpumask_clear_cpu(m, nr, c);
	}
	check_summary(w->d, nr);

	/* The set: CPUs at ugen u, sometimes folded from an older add too. */
	luf_batch_clear(w->b);
	prop_random_mask(r, m, nr);
	if (luf_cpumask_empty(m, nr))
		luf_cpumask_set_cpu(m, nr, (unsigned int)prop_below(r, nr));
	if (prop_chance(r, 1, 2)) {
		prop_mask_t m2;
		unsigned long older = u - 1 - (unsigned long)prop_below(r, 4);

		prop_random_mask(r, m2, nr);
		if (older)
			luf_batch_add(w->b, m2, older, false);
	}
	luf_batch_add(w->b, m, u, wr);
	PASSERT(luf_batch_ugen(w->b) == u, "set ugen %lu, want %lu", luf_batch_ugen(w->b), u);
	luf_batch_copy(w->b0, w->b);

	for (unsigned int c = 0; c < nr; c++) {
		if (!luf_cpumask_test_cpu(w->b0->cpus, nr, c))
			continue;
		if (w->delta[c] >= 0)
			expect_dropped++;
		else
			all_done = false;
	}
	got = luf_batch_check_done(w->b0, w->d);
	PASSERT(got == __luf_batch_check_done_scan(w->b0, w->d), "check_done %d, scan %d", got,
		!got);
	PASSERT(got == all_done, "check_done %d, model %d (ugen %lu, nr_cpus %u)", got, all_done, u,
		nr);

	PASSERT(luf_batch_diet(w->b, w->d) == expect_dropped, "diet dropped the wrong count");
	for (unsigned int c = 0; c < nr; c++) {
		bool was = luf_cpumask_test_cpu(w->b0->cpus, nr, c);
		bool is = luf_cpumask_test_cpu(w->b->cpus, nr, c);

		PASSERT(!(was && w->delta[c] < 0 && !is),
			"diet dropped cpu %u with done %lu < ugen %lu (delta %ld)", c,
			luf_done_read(w->d, c), u, w->delta[c]);
		PASSERT(!(was && w->delta[c] >= 0 && is),
			"diet kept cpu %u with done %lu >= ugen %lu (delta %ld)", c,
			luf_done_read(w->d, c), u, w->delta[c]);
		PASSERT(was || !is, "diet added cpu %u", c);
		any_left |= is;
	}
	if (any_left) {
		PASSERT(luf_batch_ugen(w->b) == u && luf_batch_writable(w->b) == wr,
			"diet changed the ugen or writable flag of a non-empty set");
	} else {
		PASSERT(luf_batch_empty(w->b) && !luf_batch_writable(w->b) &&
			    luf_batch_ugen(w->b) == 0,
			"dieted to no CPU but not empty (ugen %lu)", luf_batch_ugen(w->b));
	}
	PASSERT(luf_batch_check_done(w->b, w->d) == !any_left, "check_done after diet");
	PASSERT(luf_batch_diet(w->b, w->d) == 0, "second diet dropped more");
	PASSERT(luf_batch_diet(w->e, w->d) == 0 && luf_batch_check_done(w->e, w->d),
		"empty set: diet or check_done");
}

ParameterizedTestParameters(batch, diet)
{
	static struct params p[] = {{4, 2000}, {64, 1200}, {130, 800}, {1024, 300}};

	return cr_make_param_array(struct params, p, sizeof(p) / sizeof(p[0]));
}

ParameterizedTest(struct params *p, batch, diet, .timeout = 60)
{
	struct diet_world w = {.nr = p->nr_cpus};

	w.cpus = testenv_zalloc(luf_done_size(w.nr));
	w.d = testenv_zalloc(sizeof(*w.d));
	w.delta = calloc(w.nr, sizeof(*w.delta));
	w.b = new_batch(w.nr);
	w.b0 = new_batch(w.nr);
	w.e = new_batch(w.nr);
	for (unsigned int i = 0; i < prop_nr_seeds(p->seeds); i++) {
		struct prop_rng r;

		prop_rng_init(&r, prop_seed(0xd1e70000u + p->nr_cpus, i));
		for (prop_step = 1; prop_step <= 100; prop_step++)
			diet_round(&r, &w);
	}
	free(w.cpus), free(w.d), free(w.delta), free(w.b), free(w.b0), free(w.e);
}
