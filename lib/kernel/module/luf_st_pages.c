// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_st_pages.c - the deferred free list with real pages from
 * alloc_pages(), and the stress phase: kthreads on every selected CPU
 * unmap, defer, free and reuse pages in the read-only reclaim pattern
 * while the backend counts the IPIs luf sends against the IPIs that
 * flushing on every free, and flushing once per reclaim batch (mainline
 * Linux's batched unmap flush), would have sent for the same frees.
 *
 * Every allocation is checked (st_page_reuse_ok()) before the page is
 * touched, and its bytes are compared with what was written before it was
 * freed: luf keeps its state in the descriptor, never in the page.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/mm.h>

#include "luf_selftest.h"

#define ST_FL_PAGES 32u
#define ST_STRESS_RESERVE 2u

static long st_stat(struct st_inst *in, enum luf_stat_item item)
{
	return luf_stats_sum(in->l, item);
}

/* luf_alloc() with the sender pinned, so its IPIs can be counted exactly. */
static int st_alloc_pinned(struct luf_freelist *fl, struct luf_pcpu *pc, unsigned int flags,
			   struct luf_folio **f, unsigned int *self)
{
	int ret;

	*self = get_cpu();
	ret = luf_alloc(fl, pc, flags, f);
	put_cpu();
	return ret;
}

void st_freelist_pages(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	struct luf_freelist *fl = kzalloc(luf_freelist_size(c->nr), GFP_KERNEL);
	struct st_page *pg = kcalloc(ST_FL_PAGES, sizeof(*pg), GFP_KERNEL);
	unsigned int i, self, ord = c->p->order, bad = 0;
	struct luf_pcpu *pc = NULL;
	struct luf_folio *f;
	struct st_inst in;
	unsigned long ipis;
	void *raw = NULL;
	unsigned short key;
	int ret;

	if (!fl || !pg || st_inst_create(&in, 0, c->p->nr_keys)) {
		kfree(fl);
		kfree(pg);
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	pc = st_pcpu_new(&in, c->p->cpus[0], LUF_PCPU_DEFAULT_THRESHOLD, &raw);
	if (!pc || luf_freelist_init(fl, in.l, in.kt, 0) ||
	    st_pages_alloc(pg, ST_FL_PAGES, ord, 11)) {
		st_fail(r, __LINE__, "out of memory");
		goto out;
	}
	luf_set_report(in.l, st_report_capture);
	atomic_set(&st_reports, 0);
	/* Unmap all (read-only), one batch, one key; free all: all pend. */
	for (i = 0; i < ST_FL_PAGES; i++) {
		st_page_unmapped(in.k, &pg[i], c->sel);
		ST_CHECK(r, luf_unmap(pc, NULL, c->sel, LUF_PTE_ACCESSIBLE) == 0, "");
	}
	ST_CHECK(r, luf_pcpu_fold(pc, &key) == 0 && key, "");
	for (i = 0; i < ST_FL_PAGES; i++)
		ST_CHECK(r, luf_free(fl, pc, &pg[i].lf, key) == 0, "page %u", i);
	ST_CHECK(r, luf_freelist_nr_pend(fl) == ST_FL_PAGES && !luf_freelist_nr_clean(fl), "");

	/* Misuse changes nothing. */
	ST_CHECK(r, luf_free(fl, pc, &pg[0].lf, key) == -EBUSY, "double free accepted");
	ST_CHECK(r, luf_free(fl, pc, &pg[1].lf, c->p->nr_keys) == -EINVAL, "bad key accepted");
	ST_CHECK(r, luf_alloc(fl, pc, 0x80, &f) == -EINVAL, "unknown flag accepted");
	ST_CHECK(r, luf_freelist_nr_pend(fl) == ST_FL_PAGES, "");
	ST_CHECK(r, atomic_read(&st_reports) == ST_REPORTS_EXPECTED(1),
		 "double free reported %d times", atomic_read(&st_reports));
	ST_CHECK(r, luf_alloc(fl, pc, 0, &f) == -EAGAIN, "pend page handed out without a flush");

	/* One flush for the whole list, then every page comes back intact. */
	ipis = luf_kernel_ipis(in.k);
	ret = st_alloc_pinned(fl, pc, LUF_ALLOC_MAY_FLUSH, &f, &self);
	ST_CHECK(r, ret == 0, "alloc: %d", ret);
	ST_CHECK(r, luf_kernel_ipis(in.k) - ipis == st_remote(c->sel, c->nr, self), "IPIs");
	ST_CHECK(r, st_stat(&in, LUF_STAT_ALLOC_FLUSH) == 1, "");
	for (i = 0; !ret && i < ST_FL_PAGES; i++) {
		struct st_page *p = st_page_of(f);

		bad += !st_page_reuse_ok(in.k, p, c->nr) || !st_page_intact(p, ord);
		st_page_fill(p, ord, 0xa5a50000u + i);
		p->need = 0;
		if (i + 1 < ST_FL_PAGES)
			ret = luf_alloc(fl, pc, 0, &f);
	}
	ST_CHECK(r, !ret && !bad, "%u pages unsafe or changed, alloc %d", bad, ret);
	ST_CHECK(r, st_stat(&in, LUF_STAT_ALLOC_FLUSH) == 1, "more than one flush");
	ST_CHECK(r, luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f) == -ENOMEM, "empty list");

	/* Flushed before the free: the pages go straight to the clean list. */
	for (i = 0; i < ST_FL_PAGES; i++) {
		st_page_unmapped(in.k, &pg[i], c->sel);
		ST_CHECK(r, luf_unmap(pc, NULL, c->sel, LUF_PTE_ACCESSIBLE) == 0, "");
	}
	ST_CHECK(r, luf_pcpu_fold(pc, &key) == 0 && key, "");
	ST_CHECK(r, luf_key_flush(pc, key) >= 0, "");
	for (i = 0; i < ST_FL_PAGES; i++)
		ST_CHECK(r, luf_free(fl, pc, &pg[i].lf, key) == 0, "");
	ST_CHECK(r, luf_freelist_nr_clean(fl) == ST_FL_PAGES && !luf_freelist_nr_pend(fl), "");
	ipis = luf_kernel_ipis(in.k);
	for (i = 0, bad = 0; i < ST_FL_PAGES; i++) {
		ret = luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f);
		if (ret) {
			bad++;
			break;
		}
		bad += !st_page_reuse_ok(in.k, st_page_of(f), c->nr) ||
		       !st_page_intact(st_page_of(f), ord);
	}
	ST_CHECK(r, !bad && luf_kernel_ipis(in.k) == ipis, "clean pages: %u bad", bad);
	scnprintf(r->info, sizeof(r->info),
		  "%u pages of order %u: 1 flush for %u pend pages, %ld clean frees, %lu IPIs",
		  ST_FL_PAGES, ord, ST_FL_PAGES, st_stat(&in, LUF_STAT_FREE_CLEAN),
		  luf_kernel_ipis(in.k));
out:
	st_pages_free(pg, pc && pg[0].page ? ST_FL_PAGES : 0, ord);
	kvfree(raw);
	kfree(fl);
	kfree(pg);
	st_inst_destroy(&in);
}

/* The reserve (L1): callers that may flush never get it; others may. */
void st_freelist_reserve(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	struct luf_freelist *fl = kzalloc(luf_freelist_size(c->nr), GFP_KERNEL);
	struct luf_folio *f = NULL;
	struct luf_pcpu *pc = NULL;
	struct st_page pg[4];
	struct st_inst in;
	void *raw = NULL;
	unsigned int i;
	unsigned short key;

	pg[0].page = NULL;
	if (!fl || st_inst_create(&in, 0, 16)) {
		kfree(fl);
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	pc = st_pcpu_new(&in, c->p->cpus[0], LUF_PCPU_DEFAULT_THRESHOLD, &raw);
	if (!pc || luf_freelist_init(fl, in.l, in.kt, 2) || st_pages_alloc(pg, 4, 0, 5)) {
		st_fail(r, __LINE__, "out of memory");
		goto out;
	}
	ST_CHECK(r, luf_free(fl, pc, &pg[0].lf, 0) == 0 && luf_free(fl, pc, &pg[1].lf, 0) == 0, "");
	ST_CHECK(r, luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f) == -ENOMEM,
		 "the reserve went to a caller that may flush");
	ST_CHECK(r, luf_alloc(fl, pc, 0, &f) == 0,
		 "the reserve refused to a caller that cannot flush");
	ST_CHECK(r, luf_free(fl, pc, f, 0) == 0, "");

	for (i = 2; i < 4; i++) {
		st_page_unmapped(in.k, &pg[i], c->sel);
		ST_CHECK(r, luf_unmap(pc, NULL, c->sel, LUF_PTE_ACCESSIBLE) == 0, "");
	}
	ST_CHECK(r, luf_pcpu_fold(pc, &key) == 0 && key, "");
	ST_CHECK(r, luf_free(fl, pc, &pg[2].lf, key) == 0 && luf_free(fl, pc, &pg[3].lf, key) == 0,
		 "");
	ST_CHECK(r, luf_alloc(fl, pc, 0, &f) == 0 && luf_alloc(fl, pc, 0, &f) == 0, "");
	ST_CHECK(r, luf_alloc(fl, pc, 0, &f) == -EAGAIN, "a pend page without a flush");
	ST_CHECK(r, luf_kernel_ipis(in.k) == 0 && !atomic_long_read(&in.k->flush_calls), "");
	/* L1: while pend pages exist, a caller that may flush gets one. */
	ST_CHECK(r, luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f) == 0, "");
	ST_CHECK(r, f && st_page_reuse_ok(in.k, st_page_of(f), c->nr), "unsafe reuse");
	ST_CHECK(r, atomic_long_read(&in.k->flush_calls) == 1, "");
	ST_CHECK(r, luf_freelist_nr_clean(fl) == 1 && !luf_freelist_nr_pend(fl), "");
out:
	st_pages_free(pg, pc && pg[0].page ? 4 : 0, 0);
	kvfree(raw);
	kfree(fl);
	st_inst_destroy(&in);
}

struct st_stress {
	struct st_ctx *c;
	struct st_inst *in;
	unsigned long kind;
};

enum { ST_S_FREES, ST_S_EVERY_FREE, ST_S_PER_BATCH, ST_S_VIOLATIONS, ST_S_CORRUPT, ST_S_ROUNDS };

/*
 * One CPU's reclaim loop. Each round unmaps the batch of pages in use
 * (read-only: their flush may wait; in the mixed run every fourth batch is
 * writable and flushed at the fold), folds the batch into one key, frees
 * the pages, then allocates as many back, checking each one.
 */
static void st_stress_thread(struct st_thread *t)
{
	struct st_stress *st = t->run->arg;
	struct st_ctx *c = st->c;
	struct st_inst *in = st->in;
	const struct st_params *p = c->p;
	unsigned int nb = p->batch, np = p->pool, ord = p->order, round, i, n_inuse = 0;
	unsigned int remote = st_remote(c->sel, c->nr, t->cpu);
	struct st_page *pg = kcalloc(np, sizeof(*pg), GFP_KERNEL);
	unsigned int *inuse = kcalloc(nb, sizeof(*inuse), GFP_KERNEL);
	struct luf_freelist *fl = kzalloc(luf_freelist_size(c->nr), GFP_KERNEL);
	void *raw = NULL;
	struct luf_pcpu *pc = st_pcpu_new(in, t->cpu, LUF_PCPU_DEFAULT_THRESHOLD, &raw);

	if (!pg || !inuse || !fl || !pc)
		goto nomem;
	if (luf_freelist_init(fl, in->l, in->kt, ST_STRESS_RESERVE) ||
	    st_pages_alloc(pg, np, ord, 1000 + t->cpu))
		goto nomem;
	for (i = 0; i < np; i++) {
		if (i < nb)
			inuse[n_inuse++] = i;
		else
			luf_free(fl, pc, &pg[i].lf, 0);
	}
	for (round = 0; round < p->rounds; round++) {
		bool writable = st->kind == ST_STRESS_MIXED && (round & 3) == 3;
		unsigned int flags = LUF_PTE_ACCESSIBLE | (writable ? LUF_PTE_WRITABLE : 0);
		unsigned short key;

		for (i = 0; i < n_inuse; i++) {
			st_page_unmapped(in->k, &pg[inuse[i]], c->sel);
			ST_CHECK(&t->rec, luf_unmap(pc, in->dom, c->sel, flags) == 0, "");
		}
		ST_CHECK(&t->rec, luf_pcpu_fold(pc, &key) == 0, "");
		t->sum[ST_S_PER_BATCH] += remote;
		for (i = 0; i < n_inuse; i++) {
			ST_CHECK(&t->rec, luf_free(fl, pc, &pg[inuse[i]].lf, key) == 0, "");
			t->sum[ST_S_EVERY_FREE] += remote;
			t->sum[ST_S_FREES]++;
		}
		for (n_inuse = 0; n_inuse < nb; n_inuse++) {
			struct luf_folio *f;
			struct st_page *sp;
			int ret = luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f);

			if (ret) {
				st_fail(&t->rec, __LINE__, "round %u: alloc %d", round, ret);
				goto out;
			}
			sp = st_page_of(f);
			if (!st_page_reuse_ok(in->k, sp, c->nr)) {
				t->sum[ST_S_VIOLATIONS]++;
				st_fail(&t->rec, __LINE__,
					"round %u: page reused while a CPU has not flushed (S1)",
					round);
			}
			if (!st_page_intact(sp, ord)) {
				t->sum[ST_S_CORRUPT]++;
				st_fail(&t->rec, __LINE__, "round %u: free page changed", round);
			}
			st_page_fill(sp, ord, (t->cpu << 24) ^ (round << 8) ^ n_inuse);
			sp->need = 0;
			inuse[n_inuse] = (unsigned int)(sp - pg);
		}
		t->sum[ST_S_ROUNDS]++;
		cond_resched();
	}
	goto out;
nomem:
	st_fail(&t->rec, __LINE__, "out of memory");
out:
	if (pg)
		st_pages_free(pg, np, ord);
	kfree(pg);
	kfree(inuse);
	kfree(fl);
	kvfree(raw);
}

void st_stress(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	unsigned long sum[ST_NR_SUMS] = {0}, luf_ipis, every, per_batch, red, red_b;
	struct st_stress st = {c, NULL, arg};
	struct st_inst in;

	if (st_inst_create(&in, 0, c->p->nr_keys)) {
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	st.in = &in;
	st_run_threads(c, st_stress_thread, &st, r, sum);
	luf_ipis = luf_kernel_ipis(in.k);
	every = sum[ST_S_EVERY_FREE];
	per_batch = sum[ST_S_PER_BATCH];
	/* Reductions in tenths of a percent: integers only, no floating point. */
	red = every ? (every - min(luf_ipis, every)) * 1000 / every : 0;
	red_b = per_batch ? (per_batch - min(luf_ipis, per_batch)) * 1000 / per_batch : 0;
	scnprintf(r->info, sizeof(r->info),
		  "%u CPUs, %lu rounds, %lu frees: IPIs luf=%lu flush-every-free=%lu "
		  "per-batch=%lu; luf sends %lu.%lu%% fewer than every-free, %lu.%lu%% fewer than "
		  "per-batch; violations=%lu corrupt=%lu",
		  c->p->nr_cpus, sum[ST_S_ROUNDS], sum[ST_S_FREES], luf_ipis, every, per_batch,
		  red / 10, red % 10, red_b / 10, red_b % 10, sum[ST_S_VIOLATIONS],
		  sum[ST_S_CORRUPT]);
	ST_CHECK(r, !sum[ST_S_VIOLATIONS] && !sum[ST_S_CORRUPT], "unsafe reuse");
	ST_CHECK(r, sum[ST_S_ROUNDS] == (unsigned long)c->p->rounds * c->p->nr_cpus, "rounds");
	if (c->p->nr_cpus < 2)
		r->skip = "one CPU: no IPIs to count";
	else if (arg == ST_STRESS_READONLY)
		ST_CHECK(r, luf_ipis * 10 <= every, "luf sent %lu IPIs, more than 10%% of %lu",
			 luf_ipis, every);
	pr_info("# %s IPIs: luf=%lu flush_every_free=%lu per_batch=%lu (flush calls %ld, diet "
		"skips %ld, alloc flushes %ld)\n",
		arg == ST_STRESS_READONLY ? "stress_readonly_reclaim" : "stress_mixed_writable",
		luf_ipis, every, per_batch, atomic_long_read(&in.k->flush_calls),
		st_stat(&in, LUF_STAT_FLUSH_SKIPPED), st_stat(&in, LUF_STAT_ALLOC_FLUSH));
	st_inst_destroy(&in);
}
