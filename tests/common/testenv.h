/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * tests/common/testenv.h - a whole luf instance in one struct, for tests
 * and benchmarks: a recording arch backend (counts every flush, remembers
 * the last one's CPUs and ugen, can be told to fail), the instance, its key
 * table, one struct luf_pcpu per CPU, one free list and folios.
 */
#ifndef LUF_TESTENV_H
#define LUF_TESTENV_H

#include <luf/luf.h>
#include <stdlib.h>
#include <string.h>

struct testenv_arch {
	unsigned int nr_cpus;
	unsigned int this_cpu;
	unsigned long flushes;	    /* successful or not, every ops->flush call */
	unsigned long cpus_flushed; /* sum of the weights of the flushed sets */
	unsigned long last_cpus[LUF_CPUMASK_WORDS(LUF_MAX_CPUS)];
	unsigned long last_ugen_at_flush; /* the source's value while flushing */
	int fail_next;		       /* >0: fail that many flush calls with -EIO */
	struct luf *luf;
};

struct testenv_folio {
	struct luf_folio lf;
	unsigned long id;
};

struct testenv {
	struct testenv_arch arch;
	struct luf *luf;
	struct luf_done_cpu *done;
	struct luf_stats_cpu *stats;
	struct luf_keytab *kt;
	struct luf_pcpu **pc;
	struct luf_freelist *fl;
	struct luf_domain *dom;
	struct testenv_folio *folios;
	unsigned int nr_cpus, nr_folios;
};

static inline int testenv_flush(void *arch, const unsigned long *cpus, unsigned int nr_cpus,
				const struct luf_range *r)
{
	struct testenv_arch *a = arch;

	(void)r;
	a->flushes++;
	a->cpus_flushed += luf_cpumask_weight(cpus, nr_cpus);
	luf_cpumask_copy(a->last_cpus, cpus, nr_cpus);
	a->last_ugen_at_flush = luf_ugen_current(&a->luf->ugen);
	if (a->fail_next > 0) {
		a->fail_next--;
		return -EIO;
	}
	return 0;
}

static inline unsigned int testenv_nr_cpu_ids(void *arch)
{
	return ((struct testenv_arch *)arch)->nr_cpus;
}

static inline unsigned int testenv_this_cpu(void *arch)
{
	return ((struct testenv_arch *)arch)->this_cpu;
}

static const struct luf_arch_ops testenv_ops = {
    .flush = testenv_flush,
    .nr_cpu_ids = testenv_nr_cpu_ids,
    .this_cpu = testenv_this_cpu,
};

static inline void *testenv_zalloc(size_t size)
{
	size_t rounded = (size + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	void *p = aligned_alloc(LUF_CACHELINE, rounded ? rounded : LUF_CACHELINE);

	if (!p)
		abort();
	memset(p, 0, rounded ? rounded : LUF_CACHELINE);
	return p;
}

/*
 * Build an instance of @nr_cpus CPUs, @nr_keys keys, @nr_folios folios,
 * per-CPU fold threshold @threshold, reserve @reserve, ugen start @start.
 * Aborts on failure (test set-up, not the code under test).
 */
static inline void testenv_init(struct testenv *t, unsigned int nr_cpus, unsigned int nr_keys,
				unsigned int nr_folios, unsigned int threshold,
				unsigned long reserve, unsigned long start)
{
	memset(t, 0, sizeof(*t));
	t->nr_cpus = nr_cpus;
	t->nr_folios = nr_folios;
	t->arch.nr_cpus = nr_cpus;
	t->luf = testenv_zalloc(sizeof(struct luf));
	t->arch.luf = t->luf;
	t->done = testenv_zalloc(luf_done_size(nr_cpus));
	t->stats = testenv_zalloc(luf_stats_size(nr_cpus));
	if (luf_init(t->luf, &testenv_ops, &t->arch, t->done, t->stats, start))
		abort();
	t->kt = testenv_zalloc(luf_keytab_size(nr_keys, nr_cpus));
	if (luf_keytab_init(t->kt, t->luf, nr_keys))
		abort();
	t->pc = calloc(nr_cpus, sizeof(*t->pc));
	for (unsigned int c = 0; c < nr_cpus; c++) {
		t->pc[c] = testenv_zalloc(luf_pcpu_size(nr_cpus));
		if (luf_pcpu_init(t->pc[c], t->luf, t->kt, c, threshold))
			abort();
	}
	t->fl = testenv_zalloc(luf_freelist_size(nr_cpus));
	if (luf_freelist_init(t->fl, t->luf, t->kt, reserve))
		abort();
	t->dom = testenv_zalloc(luf_domain_size(nr_cpus));
	if (luf_domain_init(t->dom, t->luf))
		abort();
	t->folios = calloc(nr_folios ? nr_folios : 1, sizeof(*t->folios));
	for (unsigned int i = 0; i < nr_folios; i++)
		t->folios[i].id = i;
}

static inline void testenv_destroy(struct testenv *t)
{
	for (unsigned int c = 0; c < t->nr_cpus; c++)
		free(t->pc[c]);
	free(t->pc);
	free(t->fl);
	free(t->dom);
	free(t->kt);
	free(t->stats);
	free(t->done);
	free(t->luf);
	free(t->folios);
}

/* A cpumask in a static buffer (LUF_MAX_CPUS bits), filled from a list. */
static inline unsigned long *testenv_mask(unsigned long *m, unsigned int nr_cpus,
				       const unsigned int *cpus, unsigned int n)
{
	luf_cpumask_clear(m, nr_cpus);
	for (unsigned int i = 0; i < n; i++)
		luf_cpumask_set_cpu(m, nr_cpus, cpus[i]);
	return m;
}

/*
 * A flush of the CPUs of @m that luf did not send (a context switch, a
 * flush by another path): snapshot, "flush", then report it the checked
 * way (luf_local_flush_end()). Returns the snapshot.
 */
static inline unsigned long testenv_external_flush(struct luf *l, const unsigned long *m,
						unsigned int nr_cpus)
{
	unsigned long snap = luf_local_flush_begin(l);
	unsigned int c;

	luf_for_each_cpu (c, m, nr_cpus) {
		if (luf_local_flush_end(l, c, snap))
			abort();
	}
	return snap;
}

static inline long testenv_stat(const struct testenv *t, enum luf_stat_item item)
{
	return luf_stats_sum(t->luf, item);
}

#endif /* LUF_TESTENV_H */
