// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_luf.c - the luf policy: the real library (header-only
 * use) with a counting arch backend.
 *
 *   removal    luf_unmap() on the CPU's struct luf_pcpu, with the
 *              address space's struct luf_domain and mm_cpumask, once per
 *              removed mapping piece (one call stands for all its pages:
 *              the pending set does not depend on the page count);
 *   batch end  luf_pcpu_fold(): a writable batch is flushed (S3), a
 *              read-only one becomes a key's pending set;
 *   reuse      luf_abort_domain(LUF_ABORT_WRITE_OTHER) when the range was
 *              freed before (the allocator hands out a folio that may be
 *              owed a flush), luf_abort_domain(LUF_ABORT_PROT_UPGRADE)
 *              before any write permission is granted: diet, then at most
 *              one flush of what is still pending.
 * The backend's flush counts, for this policy, exactly as rp_pol_flush()
 * does for the others, and checks S4: luf's done[] never goes back.
 */
#include <stdlib.h>
#include <string.h>

#include <luf/luf.h>

#include "rp_model.h"

struct rp_luf {
	struct luf *l;
	struct luf_keytab *kt;
	struct luf_pcpu **pc;
	unsigned int nr_cpus, caller;
	struct rp_model *m;
	unsigned long *mask;
	unsigned long *seen; /* done[] as last read, for S4 */
	int dirty_any;
	unsigned char *open; /* per CPU: removals since the last fold */
};

static void *zalloc_aligned(size_t size)
{
	size_t sz = (size + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	void *p = aligned_alloc(LUF_CACHELINE, sz ? sz : LUF_CACHELINE);

	if (p)
		memset(p, 0, sz ? sz : LUF_CACHELINE);
	return p;
}

static int be_flush(void *arch, const unsigned long *cpus, unsigned int nr, const struct luf_range *r)
{
	struct rp_luf *x = arch;

	(void)r;
	for (unsigned int w = 0; w < x->m->words; w++)
		x->mask[w] = __luf_read_once(&cpus[w]);
	for (unsigned int c = 0; c < nr; c++) {
		unsigned long d = luf_done_read(&x->l->done, c);

		if (luf_ugen_before(d, x->seen[c]))
			x->m->pol[RP_LUF].c.viol[RP_S4]++;
		x->seen[c] = d;
	}
	rp_pol_flush(x->m, RP_LUF, x->caller, x->mask, 0);
	return 0;
}

static unsigned int be_nr_cpu_ids(void *arch)
{
	return ((struct rp_luf *)arch)->nr_cpus;
}

static unsigned int be_this_cpu(void *arch)
{
	return ((struct rp_luf *)arch)->caller;
}

static const struct luf_arch_ops be_ops = {
    .flush = be_flush,
    .nr_cpu_ids = be_nr_cpu_ids,
    .this_cpu = be_this_cpu,
};

int rp_luf_init(struct rp_model *m)
{
	struct rp_luf *x = calloc(1, sizeof(*x));
	unsigned int n = m->nr_cpus;

	if (!x)
		return -1;
	m->luf = x;
	x->m = m;
	x->nr_cpus = n;
	x->l = zalloc_aligned(sizeof(*x->l));
	x->kt = zalloc_aligned(luf_keytab_size(4096, n));
	x->pc = calloc(n, sizeof(*x->pc));
	x->mask = calloc(m->words, sizeof(unsigned long));
	x->seen = calloc(n, sizeof(*x->seen));
	x->open = calloc(n, 1);
	if (!x->l || !x->kt || !x->pc || !x->mask || !x->seen || !x->open)
		return -1;
	if (luf_init(x->l, &be_ops, x, zalloc_aligned(luf_done_size(n)),
		     zalloc_aligned(luf_stats_size(n)), 0) ||
	    luf_keytab_init(x->kt, x->l, 4096))
		return -1;
	for (unsigned int c = 0; c < n; c++) {
		x->pc[c] = zalloc_aligned(luf_pcpu_size(n));
		if (!x->pc[c] ||
		    luf_pcpu_init(x->pc[c], x->l, x->kt, c, LUF_PCPU_DEFAULT_THRESHOLD))
			return -1;
	}
	return 0;
}

void rp_luf_fini(struct rp_model *m)
{
	struct rp_luf *x = m->luf;

	if (!x)
		return;
	if (x->pc)
		for (unsigned int c = 0; c < x->nr_cpus; c++)
			free(x->pc[c]);
	if (x->l) {
		free(x->l->done.cpu);
		free(x->l->stats);
	}
	free(x->l);
	free(x->kt);
	free(x->pc);
	free(x->mask);
	free(x->seen);
	free(x->open);
	free(x);
	m->luf = NULL;
}

int rp_luf_mm_init(struct rp_model *m, struct rp_mm *mm)
{
	mm->dom = zalloc_aligned(luf_domain_size(m->nr_cpus));
	mm->lcpus = zalloc_aligned(luf_cpumask_size(m->nr_cpus));
	if (!mm->dom || !mm->lcpus)
		return -1;
	return luf_domain_init(mm->dom, m->luf->l) ? -1 : 0;
}

void rp_luf_mm_fini(struct rp_model *m, struct rp_mm *mm)
{
	(void)m;
	free(mm->dom);
	free(mm->lcpus);
	mm->dom = mm->lcpus = NULL;
}

void rp_luf_mm_cpus(struct rp_model *m, struct rp_mm *mm)
{
	unsigned long *l = mm->lcpus;

	for (unsigned int c = 0; c < m->nr_cpus; c++)
		if (rp_mask_test(mm->cpus, c))
			luf_cpumask_set_cpu(l, m->nr_cpus, c);
}

void rp_luf_unmap(struct rp_model *m, struct rp_task *t, int accessible, int writable)
{
	struct rp_luf *x = m->luf;
	unsigned int flags = 0;

	if (accessible)
		flags |= LUF_PTE_ACCESSIBLE;
	if (writable)
		flags |= LUF_PTE_WRITABLE | LUF_PTE_DIRTY;
	x->caller = t->cpu;
	if (luf_unmap(x->pc[t->cpu], t->mm->dom, t->mm->lcpus, flags) == 0 && accessible)
		x->open[t->cpu] = 1;
}

void rp_luf_fold(struct rp_model *m, struct rp_task *t)
{
	struct rp_luf *x = m->luf;
	unsigned short key;

	if (!x->open[t->cpu])
		return;
	x->caller = t->cpu;
	if (luf_pcpu_fold(x->pc[t->cpu], &key) == 0)
		x->open[t->cpu] = 0;
}

void rp_luf_settle(struct rp_model *m, struct rp_task *t, int upgrade)
{
	struct rp_luf *x = m->luf;

	x->caller = t->cpu;
	(void)luf_abort_domain(x->pc[t->cpu], t->mm->dom,
			       upgrade ? LUF_ABORT_PROT_UPGRADE : LUF_ABORT_WRITE_OTHER);
}

void rp_luf_collect(struct rp_model *m)
{
	struct rp_luf *x = m->luf;
	long a = 0;

	m->st.luf_deferred =
	    (unsigned long long)luf_stats_sum(x->l, LUF_STAT_DEFERRED);
	m->st.luf_no_flush =
	    (unsigned long long)luf_stats_sum(x->l, LUF_STAT_NO_FLUSH);
	m->st.luf_skipped =
	    (unsigned long long)luf_stats_sum(x->l, LUF_STAT_FLUSH_SKIPPED);
	for (int c = 0; c < LUF_ABORT_NR_CAUSES; c++)
		a += luf_stats_sum(x->l, (enum luf_stat_item)(LUF_STAT_ABORT + c));
	m->st.luf_aborts = (unsigned long long)a;
}
