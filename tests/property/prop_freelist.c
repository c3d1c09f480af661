// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Property test of the whole defer/free/alloc cycle against a model.
 *
 * Each seed runs >= 10^5 random operations on one instance (testenv):
 * unmaps of random CPU sets with random PTE flags (luf_unmap), folds,
 * frees, allocations with and without LUF_ALLOC_MAY_FLUSH, key flushes,
 * write-upgrade aborts, domain settles, flushes from outside luf (a
 * context switch: snapshot, flush, mark_done) and injected flush failures.
 *
 * The model keeps its own truth, independent of luf's done counters: the
 * test's arch flush callback records, per CPU, the time of its last
 * successful flush; each unmap records, per folio and CPU, the time a
 * translation was removed. A CPU still holds a stale translation of a folio
 * iff it has not flushed since. Checked after every operation:
 *   - conservation: clean + pend + in use == all folios; no folio handed
 *     out twice, none lost; the lists and states agree with the model;
 *   - S1: no folio is handed out (or put on the clean list) while a CPU
 *     may hold a stale translation of it;
 *   - S3: no folio is freed while a CPU may hold a stale writable or dirty
 *     translation of it;
 *   - S2: after a settle (abort) of the domain or a key, no CPU holds a
 *     stale translation removed from that domain or folded under that key;
 *   - L1: a MAY_FLUSH allocation never fails while pend folios exist,
 *     unless an injected flush failure hit it; an allocation without the
 *     flag never flushes; one with it takes no clean folio of the reserve
 *     unless it released every pend folio to clean first.
 */
#include "prop.h"

#include <string.h>

#define NR_OPS 100000ul
#define NR_OP_KINDS 10

enum mstate { M_HELD, M_UNMAPPED, M_FOLDED, M_FREE, M_NR };

struct params {
	unsigned int nr_cpus, nr_keys, nr_folios, seeds;
	unsigned long start;
};

struct bag {
	unsigned int *ids, n;
};

struct model {
	struct testenv t;
	struct luf_arch_ops ops;
	struct prop_rng r;
	unsigned int nr, nr_folios, nr_keys;
	unsigned long reserve;
	uint64_t now;	      /* event clock: unmaps and flushes */
	uint64_t *last_flush; /* [cpu]: time of its last successful flush */
	uint64_t *stale;      /* [folio * nr + cpu]: time of the newest removal, 0: none */
	uint64_t *stale_w;    /* the same, writable or dirty removals only */
	uint64_t *stale_dom;  /* [cpu]: newest removal recorded in the domain */
	unsigned char *st;    /* enum mstate per folio */
	unsigned int *owner, *pos;
	unsigned short *key;
	struct bag bag[M_NR];
	unsigned long flush_ok, flush_failed;
	unsigned int weight[NR_OP_KINDS], total; /* this seed's mix of operations */
	unsigned long n_pend_free, n_alloc_flush, n_eagain, n_injected, n_s1, n_prefix;
};

static const char *const mstate_name[] = {"held", "unmapped", "folded", "free"};

/* LUF_DEBUG misuse reports (luf_set_report()): counted, not printed. */
static unsigned long nr_reports;

static void count_report(const char *what, const void *obj, const char *file, int line)
{
	(void)what, (void)obj, (void)file, (void)line;
	nr_reports++;
}

/* The test's arch flush: the recording backend, plus the model's clock. */
static int model_flush(void *arch, const unsigned long *cpus, unsigned int nr,
		       const struct luf_range *rg)
{
	struct model *m = (struct model *)(void *)((char *)arch - offsetof(struct model, t.arch));
	int ret = testenv_flush(arch, cpus, nr, rg);
	unsigned int c;

	if (ret) {
		m->flush_failed++;
		return ret;
	}
	m->flush_ok++;
	if (rg)
		return 0; /* a range flush is not a full flush: the model ignores it */
	m->now++;
	luf_for_each_cpu(c, cpus, nr) {
		m->last_flush[c] = m->now;
	}
	return 0;
}

static void bag_put(struct model *m, unsigned int f, enum mstate s)
{
	struct bag *b = &m->bag[s];

	m->st[f] = (unsigned char)s;
	m->pos[f] = b->n;
	b->ids[b->n++] = f;
}

static void bag_move(struct model *m, unsigned int f, enum mstate s)
{
	struct bag *b = &m->bag[m->st[f]];
	unsigned int last = b->ids[--b->n];

	b->ids[m->pos[f]] = last;
	m->pos[last] = m->pos[f];
	bag_put(m, f, s);
}

static bool bag_pick(struct model *m, enum mstate s, unsigned int *f)
{
	if (!m->bag[s].n)
		return false;
	*f = m->bag[s].ids[prop_below(&m->r, m->bag[s].n)];
	return true;
}

static struct luf_folio *lf_of(struct model *m, unsigned int f)
{
	return &m->t.folios[f].lf;
}

/*
 * Every CPU with a removal in @row has flushed since; else report @what
 * about folio @f (NO_FOLIO: the domain).
 */
#define NO_FOLIO (~0u)

static void check_row(struct model *m, const uint64_t *row, unsigned int f, const char *what)
{
	for (unsigned int c = 0; c < m->nr; c++) {
		char obj[48];

		if (!row[c] || m->last_flush[c] > row[c])
			continue;
		if (f == NO_FOLIO)
			snprintf(obj, sizeof(obj), "the domain");
		else
			snprintf(obj, sizeof(obj), "folio %u (key %u)", f, m->key[f]);
		PASSERT(false,
			"%s: %s, cpu %u removed a translation at t=%llu and last flushed at "
			"t=%llu (ugen now %lu, done %lu)",
			what, obj, c, (unsigned long long)row[c],
			(unsigned long long)m->last_flush[c], luf_ugen_current(&m->t.luf->ugen),
			luf_done_read(&m->t.luf->done, c));
	}
}

static uint64_t *row(uint64_t *a, struct model *m, unsigned int f)
{
	return a + (size_t)f * m->nr;
}

static bool injected(const struct model *m, unsigned long failed0)
{
	return m->flush_failed != failed0;
}

static unsigned int random_cpu(struct model *m)
{
	return (unsigned int)prop_below(&m->r, m->nr);
}

static void op_unmap(struct model *m)
{
	unsigned int f, x, flags = 0;
	unsigned long failed0 = m->flush_failed;
	bool use_dom = prop_chance(&m->r, 1, 2);
	prop_mask_t mask;
	int ret;

	if (prop_chance(&m->r, 3, 4) && bag_pick(m, M_HELD, &f)) {
		x = random_cpu(m);
	} else if (bag_pick(m, M_UNMAPPED, &f)) {
		x = m->owner[f]; /* another translation of it, same batch */
	} else {
		return;
	}
	prop_random_mask(&m->r, mask, m->nr);
	if (prop_chance(&m->r, 1, 2))
		luf_cpumask_set_cpu(mask, m->nr, x);
	if (prop_chance(&m->r, 6, 7))
		flags |= LUF_PTE_ACCESSIBLE;
	if (prop_chance(&m->r, 1, 7))
		flags |= LUF_PTE_WRITABLE;
	if (prop_chance(&m->r, 1, 10))
		flags |= LUF_PTE_DIRTY;
	m->now++;
	if (flags & LUF_PTE_ACCESSIBLE) {
		unsigned int c;

		luf_for_each_cpu(c, mask, m->nr) {
			row(m->stale, m, f)[c] = m->now;
			if (flags & (LUF_PTE_WRITABLE | LUF_PTE_DIRTY))
				row(m->stale_w, m, f)[c] = m->now;
			if (use_dom)
				m->stale_dom[c] = m->now;
		}
	}
	ret = luf_unmap(m->t.pc[x], use_dom ? m->t.dom : NULL, mask, flags);
	PASSERT(ret == 0 || (ret == -EIO && injected(m, failed0)), "unmap returned %d", ret);
	m->owner[f] = x;
	if (m->st[f] != M_UNMAPPED)
		bag_move(m, f, M_UNMAPPED);
}

static void op_fold(struct model *m)
{
	unsigned int f, x = random_cpu(m);
	unsigned long failed0 = m->flush_failed;
	unsigned short k = 0;
	int ret;

	if (prop_chance(&m->r, 4, 5) && bag_pick(m, M_UNMAPPED, &f))
		x = m->owner[f];
	ret = luf_pcpu_fold(m->t.pc[x], &k);
	if (ret) {
		PASSERT(ret == -EIO && injected(m, failed0), "fold returned %d", ret);
		return;
	}
	PASSERT(!k || __luf_keytab_valid(m->t.kt, k), "fold named key %u", k);
	for (unsigned int i = m->bag[M_UNMAPPED].n; i--;) {
		f = m->bag[M_UNMAPPED].ids[i];
		if (m->owner[f] != x)
			continue;
		m->key[f] = k;
		bag_move(m, f, M_FOLDED);
	}
}

static void op_free(struct model *m)
{
	unsigned int f, y = random_cpu(m);
	struct luf_folio *lf;
	int ret;

	if (prop_chance(&m->r, 1, 6) && bag_pick(m, M_HELD, &f))
		m->key[f] = 0; /* never mapped since allocated: no flush owed */
	else if (!bag_pick(m, M_FOLDED, &f))
		return;
	lf = lf_of(m, f);
	check_row(m, row(m->stale_w, m, f), f, "S3: freed with a stale writable translation");
	ret = luf_free(m->t.fl, m->t.pc[y], lf, m->key[f]);
	PASSERT(ret == 0, "free of folio %u (key %u) returned %d", f, m->key[f], ret);
	PASSERT(lf->state == LUF_FOLIO_CLEAN || lf->state == LUF_FOLIO_PEND,
		"freed folio %u in state %d", f, lf->state);
	if (lf->state == LUF_FOLIO_CLEAN)
		check_row(m, row(m->stale, m, f), f, "S1: freed to the clean list while stale");
	else
		m->n_pend_free++;
	bag_move(m, f, M_FREE);
}

static void op_alloc(struct model *m, unsigned int flags)
{
	struct luf_freelist *fl = m->t.fl;
	unsigned long clean0 = luf_freelist_nr_clean(fl), pend0 = luf_freelist_nr_pend(fl);
	unsigned long failed0 = m->flush_failed, calls0 = m->t.arch.flushes;
	bool may = flags & LUF_ALLOC_MAY_FLUSH;
	struct luf_folio *lf = NULL;
	unsigned int f;
	int ret;

	ret = luf_alloc(fl, m->t.pc[random_cpu(m)], flags, &lf);
	PASSERT(may || m->t.arch.flushes == calls0, "alloc without MAY_FLUSH flushed");
	if (ret) {
		if (ret == -ENOMEM)
			PASSERT(!pend0 && clean0 <= (may ? m->reserve : 0),
				"-ENOMEM with %lu clean, %lu pend (reserve %lu, flags %u)", clean0,
				pend0, m->reserve, flags);
		else if (ret == -EAGAIN)
			PASSERT(!may && !clean0 && pend0 && ++m->n_eagain,
				"-EAGAIN with %lu clean, %lu pend", clean0, pend0);
		else
			PASSERT(may && ret == -EIO && injected(m, failed0),
				"L1: MAY_FLUSH alloc failed (%d) with %lu pend folios and no "
				"injected flush failure",
				ret, pend0);
		PASSERT(luf_freelist_nr_clean(fl) == clean0 && luf_freelist_nr_pend(fl) == pend0,
			"failed alloc changed the lists");
		return;
	}
	f = (unsigned int)(luf_folio_entry(lf, struct testenv_folio, lf) - m->t.folios);
	PASSERT(f < m->nr_folios, "alloc returned a foreign folio");
	PASSERT(m->st[f] == M_FREE, "folio %u handed out while %s (allocated twice?)", f,
		mstate_name[m->st[f]]);
	PASSERT(lf->state == LUF_FOLIO_IN_USE, "allocated folio %u in state %d", f, lf->state);
	check_row(m, row(m->stale, m, f), f, "S1: handed out while a CPU may hold it");
	check_row(m, row(m->stale_w, m, f), f, "S1: handed out while writable-stale");
	m->n_s1++;
	if (luf_freelist_nr_pend(fl) != pend0) {
		unsigned long moved = pend0 - luf_freelist_nr_pend(fl);

		/*
		 * All pend folios became clean (after one flush, or none needed),
		 * or a done prefix of them without a flush.
		 */
		PASSERT(moved <= pend0 && luf_freelist_nr_clean(fl) == clean0 + moved - 1 &&
			    (!luf_freelist_nr_pend(fl) || m->t.arch.flushes == calls0),
			"release: %lu clean + %lu pend became %lu + %lu", clean0, pend0,
			luf_freelist_nr_clean(fl), luf_freelist_nr_pend(fl));
		m->n_prefix += luf_freelist_nr_pend(fl) != 0;
		m->n_alloc_flush += m->t.arch.flushes != calls0;
	} else if (may) {
		PASSERT(clean0 > m->reserve,
			"L1: MAY_FLUSH alloc took the reserve (%lu clean, "
			"reserve %lu)",
			clean0, m->reserve);
	}
	memset(row(m->stale, m, f), 0, m->nr * sizeof(uint64_t));
	memset(row(m->stale_w, m, f), 0, m->nr * sizeof(uint64_t));
	bag_move(m, f, M_HELD);
}

/* After @k's set was flushed: no folio folded or freed under @k is stale. */
static void check_key_settled(struct model *m, unsigned int k, const char *what)
{
	static const enum mstate states[] = {M_FOLDED, M_FREE};

	for (unsigned int s = 0; s < 2; s++)
		for (unsigned int i = 0; i < m->bag[states[s]].n; i++) {
			unsigned int f = m->bag[states[s]].ids[i];

			if (m->key[f] == k)
				check_row(m, row(m->stale, m, f), f, what);
		}
}

static void op_key(struct model *m)
{
	unsigned int f, x = random_cpu(m), k = (unsigned int)prop_below(&m->r, m->nr_keys);
	unsigned long failed0 = m->flush_failed;
	bool abort = prop_chance(&m->r, 1, 2);
	int ret;

	if (prop_chance(&m->r, 2, 3) &&
	    bag_pick(m, prop_chance(&m->r, 1, 2) ? M_FOLDED : M_FREE, &f))
		k = m->key[f];
	if (abort)
		ret = luf_abort_key(m->t.pc[x], k,
				    (enum luf_abort_cause)prop_below(&m->r, LUF_ABORT_NR_CAUSES));
	else
		ret = luf_key_flush(m->t.pc[x], k);
	if (ret < 0) {
		PASSERT(ret == -EIO && injected(m, failed0), "key %u flush/abort returned %d", k,
			ret);
		return;
	}
	PASSERT(luf_keytab_check_done(m->t.kt, k) == 1, "key %u pending after flush", k);
	if (k)
		check_key_settled(m, k,
				  abort ? "S2: stale after luf_abort_key"
					: "S1: stale after luf_key_flush");
}

static void op_settle(struct model *m)
{
	unsigned int x = random_cpu(m);
	unsigned long failed0 = m->flush_failed;
	int ret;

	if (prop_chance(&m->r, 1, 2))
		ret = luf_domain_settle(m->t.luf, x, m->t.dom, m->t.pc[x]->scratch);
	else
		ret =
		    luf_abort_domain(m->t.pc[x], m->t.dom,
				     (enum luf_abort_cause)prop_below(&m->r, LUF_ABORT_NR_CAUSES));
	if (ret < 0) {
		PASSERT(ret == -EIO && injected(m, failed0), "settle returned %d", ret);
		return;
	}
	PASSERT(!luf_domain_pending(m->t.dom), "domain pending after settle");
	check_row(m, m->stale_dom, NO_FOLIO, "S2: stale translation of the domain after settle");
}

/* A flush from outside luf (a context switch): snapshot, flush, mark. */
static void op_external_flush(struct model *m)
{
	prop_mask_t mask;
	unsigned int c;

	prop_random_mask(&m->r, mask, m->nr);
	m->now++;
	luf_for_each_cpu(c, mask, m->nr) {
		m->last_flush[c] = m->now;
	}
	testenv_external_flush(m->t.luf, mask, m->nr);
}

/* Misuse changes nothing: a double free, a bad key, bad flags. */
static void op_misuse(struct model *m)
{
	struct luf_freelist *fl = m->t.fl;
	unsigned long clean0 = luf_freelist_nr_clean(fl), pend0 = luf_freelist_nr_pend(fl);
	struct luf_pcpu *pc = m->t.pc[random_cpu(m)];
	struct luf_folio *lf = NULL;
	unsigned int f;
	unsigned char s;

	if (bag_pick(m, M_FREE, &f)) {
		unsigned long reports = nr_reports;

		s = lf_of(m, f)->state;
		PASSERT(luf_free(fl, pc, lf_of(m, f), 0) == -EBUSY, "double free accepted");
		PASSERT(lf_of(m, f)->state == s, "double free changed the folio");
#if defined(LUF_DEBUG)
		PASSERT(nr_reports == reports + 1, "LUF_DEBUG did not report the double free");
#else
		(void)reports;
#endif
	}
	if (bag_pick(m, M_HELD, &f)) {
		PASSERT(luf_free(fl, pc, lf_of(m, f), m->nr_keys) == -EINVAL, "bad key accepted");
		PASSERT(lf_of(m, f)->state == LUF_FOLIO_IN_USE, "bad-key free changed the folio");
	}
	PASSERT(luf_alloc(fl, pc, 0x80, &lf) == -EINVAL, "bad alloc flags accepted");
	PASSERT(luf_freelist_nr_clean(fl) == clean0 && luf_freelist_nr_pend(fl) == pend0,
		"misuse changed the lists");
}

static void check_conservation(struct model *m)
{
	unsigned long clean = luf_freelist_nr_clean(m->t.fl), pend = luf_freelist_nr_pend(m->t.fl);
	unsigned long in_use = m->bag[M_HELD].n + m->bag[M_UNMAPPED].n + m->bag[M_FOLDED].n;

	PASSERT(clean + pend + in_use == m->nr_folios,
		"conservation: %lu clean + %lu pend + %lu in use != %u folios", clean, pend, in_use,
		m->nr_folios);
	PASSERT(m->bag[M_FREE].n == clean + pend, "%u folios freed, lists hold %lu",
		m->bag[M_FREE].n, clean + pend);
}

/* Walk both lists and every folio: states, lengths and gauges agree. */
static void check_lists(struct model *m)
{
	struct luf_freelist *fl = m->t.fl;
	unsigned long n = 0;
	const struct luf_folio *p;

	for (p = fl->clean; p && n <= m->nr_folios; p = p->next, n++)
		PASSERT(p->state == LUF_FOLIO_CLEAN, "clean list holds a folio in state %d",
			p->state);
	PASSERT(n == fl->nr_clean, "clean list has %lu folios, nr_clean %lu", n, fl->nr_clean);
	n = 0;
	for (p = fl->pend; p && n <= m->nr_folios; p = p->next, n++)
		PASSERT(p->state == LUF_FOLIO_PEND, "pend list holds a folio in state %d",
			p->state);
	PASSERT(n == fl->nr_pend, "pend list has %lu folios, nr_pend %lu", n, fl->nr_pend);
	for (unsigned int f = 0; f < m->nr_folios; f++)
		PASSERT((m->st[f] == M_FREE) == (lf_of(m, f)->state != LUF_FOLIO_IN_USE),
			"folio %u is %s in the model, state %d in luf", f, mstate_name[m->st[f]],
			lf_of(m, f)->state);
	PASSERT(luf_stats_nr_clean(m->t.luf) == (long)fl->nr_clean &&
		    luf_stats_nr_pend(m->t.luf) == (long)fl->nr_pend,
		"gauges: NR_CLEAN %ld NR_PEND %ld, lists %lu %lu", luf_stats_nr_clean(m->t.luf),
		luf_stats_nr_pend(m->t.luf), fl->nr_clean, fl->nr_pend);
}

static void op_alloc_may_flush(struct model *m)
{
	op_alloc(m, LUF_ALLOC_MAY_FLUSH);
}

static void op_alloc_no_flush(struct model *m)
{
	op_alloc(m, 0);
}

static void op_inject_failure(struct model *m)
{
	m->t.arch.fail_next = 1 + (int)prop_below(&m->r, 2);
	m->n_injected++;
}

/*
 * The operations and, per seed, each one's weight: one of three, so that
 * flush-heavy and flush-light mixes both occur.
 */
static const struct {
	void (*fn)(struct model *m);
	unsigned int weight[3];
} ops[NR_OP_KINDS] = {
    {op_unmap, {20, 28, 40}},	      {op_fold, {4, 8, 16}},
    {op_free, {15, 20, 30}},	      {op_alloc_may_flush, {6, 12, 20}},
    {op_alloc_no_flush, {6, 14, 20}}, {op_key, {1, 4, 8}},
    {op_settle, {0, 1, 3}},	      {op_external_flush, {0, 2, 5}},
    {op_inject_failure, {1, 1, 2}},   {op_misuse, {1, 1, 1}},
};

static void step(struct model *m)
{
	unsigned int pick = (unsigned int)prop_below(&m->r, m->total), op = 0;
	unsigned long reports = nr_reports;

	while (pick >= m->weight[op])
		pick -= m->weight[op++];
	ops[op].fn(m);
	PASSERT(ops[op].fn == op_misuse || nr_reports == reports,
		"LUF_DEBUG reported misuse the test did not commit");
	check_conservation(m);
}

static void model_init(struct model *m, const struct params *p, uint64_t seed)
{
	static const unsigned int thresholds[] = {1, 2, 3, 8, 64, LUF_PCPU_DEFAULT_THRESHOLD};
	static const unsigned long reserves[] = {0, 0, 1, 4};
	unsigned int nf = p->nr_folios;

	memset(m, 0, sizeof(*m));
	prop_rng_init(&m->r, seed);
	m->nr = p->nr_cpus;
	m->nr_folios = nf;
	m->nr_keys = p->nr_keys;
	m->reserve = reserves[prop_below(&m->r, 4)];
	for (unsigned int op = 0; op < NR_OP_KINDS; op++) {
		m->weight[op] = ops[op].weight[prop_below(&m->r, 3)];
		m->total += m->weight[op];
	}
	testenv_init(&m->t, m->nr, m->nr_keys, nf, thresholds[prop_below(&m->r, 6)], m->reserve,
		     p->start);
	m->ops = testenv_ops;
	m->ops.flush = model_flush;
	m->t.luf->ops = &m->ops;
	luf_set_report(m->t.luf, count_report);
	m->now = 1;
	m->last_flush = calloc(m->nr, sizeof(uint64_t));
	m->stale = calloc((size_t)nf * m->nr, sizeof(uint64_t));
	m->stale_w = calloc((size_t)nf * m->nr, sizeof(uint64_t));
	m->stale_dom = calloc(m->nr, sizeof(uint64_t));
	m->st = calloc(nf, 1);
	m->owner = calloc(nf, sizeof(unsigned int));
	m->pos = calloc(nf, sizeof(unsigned int));
	m->key = calloc(nf, sizeof(unsigned short));
	for (unsigned int s = 0; s < M_NR; s++)
		m->bag[s].ids = calloc(nf, sizeof(unsigned int));
	for (unsigned int f = 0; f < nf; f++)
		bag_put(m, f, M_HELD);
}

static void model_destroy(struct model *m)
{
	testenv_destroy(&m->t);
	free(m->last_flush), free(m->stale), free(m->stale_w), free(m->stale_dom);
	free(m->st), free(m->owner), free(m->pos), free(m->key);
	for (unsigned int s = 0; s < M_NR; s++)
		free(m->bag[s].ids);
}

ParameterizedTestParameters(freelist, model)
{
	/* {cpus, keys, folios, seeds, ugen start}: few keys force collisions. */
	static struct params p[] = {
	    {4, 4, 48, 120, 0},
	    {64, 64, 256, 48, 0},
	    {8, 16, 32, 120, ULONG_MAX - 20},
	    {130, 1024, 96, 40, ULONG_MAX - 700},
	};

	return cr_make_param_array(struct params, p, sizeof(p) / sizeof(p[0]));
}

ParameterizedTest(struct params *p, freelist, model, .timeout = 60)
{
	struct model *m = malloc(sizeof(*m));
	unsigned long cover[4] = {0, 0, 0, 0};
	unsigned int n = prop_nr_seeds(p->seeds);

	for (unsigned int i = 0; i < n; i++) {
		uint64_t seed = prop_seed(0xf7ee0000u + p->nr_cpus, i);

		model_init(m, p, seed);
		for (prop_step = 1; prop_step <= NR_OPS; prop_step++) {
			step(m);
			if (!(prop_step & 1023))
				check_lists(m);
		}
		check_lists(m);
		if (prop_verbose())
			fprintf(
			    stderr,
			    "freelist: %u cpus seed 0x%016llx: %lu pend frees, %lu flushing "
			    "allocs, %lu prefix releases, %lu -EAGAIN, %lu injections (%lu failed "
			    "flushes), %lu checked allocs, %lu flushes, ugen %lu\n",
			    m->nr, (unsigned long long)seed, m->n_pend_free, m->n_alloc_flush,
			    m->n_prefix, m->n_eagain, m->n_injected, m->flush_failed, m->n_s1,
			    m->flush_ok, luf_ugen_current(&m->t.luf->ugen));
		PASSERT(m->n_s1 > 1000 && m->n_injected,
			"coverage: %lu checked allocs, %lu injections", m->n_s1, m->n_injected);
		cover[0] += m->n_pend_free, cover[1] += m->n_alloc_flush, cover[2] += m->n_eagain;
		cover[3] += m->n_prefix;
		if (p->start > ULONG_MAX / 2)
			PASSERT(luf_ugen_current(&m->t.luf->ugen) < ULONG_MAX / 2,
				"the run did not cross the wrap (current %lu)",
				luf_ugen_current(&m->t.luf->ugen));
		model_destroy(m);
	}
	/* The runs reached the interesting paths (else they prove little). */
	PASSERT(n < 4 || (cover[0] && cover[1] && cover[2] && cover[3]),
		"coverage: %lu pend frees, %lu flushing allocs, %lu -EAGAIN, %lu prefix releases",
		cover[0], cover[1], cover[2], cover[3]);
	free(m);
}
