// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_st_core.c - self-tests of the flush protocol against real IPIs:
 * ugen wrap, the cpumask glue, fold/diet/mark with the done values real
 * flushes leave, a failing flush, a local flush, and a proof that the
 * reuse checker fails when luf is made to lie.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/irqflags.h>
#include <linux/cpumask.h>

#include "luf_selftest.h"

/* The caller's CPU for statistics; the tests here do not need it stable. */
static unsigned int st_self(void)
{
	return raw_smp_processor_id();
}

void st_ugen_wrap(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	const unsigned long start = ULONG_MAX - 3;
	struct luf_batch *b = NULL, *old = NULL;
	unsigned long prev[ST_MAX_CPUS];
	unsigned int i, j, cpu;
	struct st_inst in;
	unsigned long s, s_old;

	if (st_inst_create(&in, start, 2)) {
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	b = st_batch_new(c->nr);
	old = st_batch_new(c->nr);
	if (!b || !old) {
		st_fail(r, __LINE__, "out of memory");
		goto out;
	}
	ST_CHECK(r, luf_ugen_current(&in.l->ugen) == start, "");
	ST_CHECK(r, luf_ugen_before(ULONG_MAX - 1, 2), "order across the wrap");
	ST_CHECK(r, !luf_ugen_before(2, ULONG_MAX - 1), "order across the wrap");
	ST_CHECK(r, luf_ugen_newer(ULONG_MAX, 1) == 1, "newer across the wrap");
	s_old = luf_ugen_stamp(&in.l->ugen);
	luf_batch_add(old, c->sel, s_old, false);
	for (j = 0; j < c->p->nr_cpus; j++)
		prev[j] = luf_done_read(&in.l->done, c->p->cpus[j]);

	for (i = 0; i < 8; i++) {
		luf_batch_clear(b);
		s = luf_ugen_stamp(&in.l->ugen);
		ST_CHECK(r, s != 0, "stamp %u", i);
		luf_batch_add(b, c->sel, s, false);
		ST_CHECK(r, !luf_batch_check_done(b, &in.l->done), "stamp %lu done before a flush",
			 s);
		ST_CHECK(r, luf_flush_batch(in.l, st_self(), b) >= 0, "flush %u", i);
		ST_CHECK(r, luf_batch_empty(b), "flush %u left the batch pending", i);
		ST_CHECK(r, luf_ugen_current(&in.l->ugen) != 0, "ugen_new handed out 0");
		for (j = 0; j < c->p->nr_cpus; j++) {
			unsigned long d = luf_done_read(&in.l->done, c->p->cpus[j]);

			ST_CHECK(r, d && !luf_ugen_before(d, s), "CPU %u done %lu < stamp %lu",
				 c->p->cpus[j], d, s);
			ST_CHECK(r, !luf_ugen_before(d, prev[j]), "CPU %u done went back",
				 c->p->cpus[j]);
			prev[j] = d;
		}
	}
	/* The counter wrapped: a set stamped before it is done, one after is not. */
	ST_CHECK(r,
		 luf_ugen_before(start, luf_ugen_current(&in.l->ugen)) &&
		     luf_ugen_current(&in.l->ugen) < start,
		 "did not cross the wrap (at %lu)", luf_ugen_current(&in.l->ugen));
	ST_CHECK(r, luf_batch_check_done(old, &in.l->done), "set stamped before the wrap");
	ST_CHECK(r, luf_batch_diet(old, &in.l->done) == c->p->nr_cpus && luf_batch_empty(old),
		 "diet after the wrap");
	luf_batch_clear(b);
	luf_batch_add(b, c->sel, luf_ugen_stamp(&in.l->ugen), false);
	ST_CHECK(r, !luf_batch_check_done(b, &in.l->done), "set stamped after the last flush");
	luf_for_each_cpu (cpu, c->sel, c->nr) {
		ST_CHECK(r, luf_kernel_runs(in.k, cpu) == 8, "CPU %u ran %lu flushes, not 8", cpu,
			 luf_kernel_runs(in.k, cpu));
	}
	scnprintf(r->info, sizeof(r->info), "start %lu, now %lu after 8 flushes of %u CPUs", start,
		  luf_ugen_current(&in.l->ugen), c->p->nr_cpus);
out:
	kfree(b);
	kfree(old);
	st_inst_destroy(&in);
}

void st_cpumask_glue(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	unsigned long *m = st_mask_new(c->nr);
	cpumask_var_t km;
	unsigned int i, cpu;

	if (!m || !zalloc_cpumask_var(&km, GFP_KERNEL)) {
		kfree(m);
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	luf_kernel_mask_from_cpumask(m, c->nr, cpu_online_mask);
	ST_CHECK(r, luf_cpumask_weight(m, c->nr) == num_online_cpus(), "");
	luf_kernel_mask_to_cpumask(km, c->sel, c->nr);
	ST_CHECK(r, cpumask_weight(km) == c->p->nr_cpus, "");
	for (i = 0; i < c->p->nr_cpus; i++)
		ST_CHECK(r, cpumask_test_cpu(c->p->cpus[i], km), "CPU %u lost", c->p->cpus[i]);
	luf_kernel_mask_from_cpumask(m, c->nr, km);
	ST_CHECK(r, luf_cpumask_equal(m, c->sel, c->nr), "round trip");
	ST_CHECK(r, luf_cpumask_set_cpu(m, c->nr, c->nr) == -EINVAL, "CPU id nr_cpu_ids accepted");
	ST_CHECK(r, luf_kernel_ops.nr_cpu_ids(NULL) == nr_cpu_ids, "");
	cpu = get_cpu();
	ST_CHECK(r, luf_kernel_ops.this_cpu(NULL) == cpu, "");
	put_cpu();
	ST_CHECK(r, sizeof(unsigned long) == sizeof(unsigned long), "unsigned long is not one word");
	ST_CHECK(r, sizeof(struct luf_done_cpu) % LUF_CACHELINE == 0, "done shares a line");
	ST_CHECK(r, luf_kernel_ops.flush(NULL, c->sel, c->nr, NULL) == -EINVAL, "NULL context");
	scnprintf(r->info, sizeof(r->info), "nr_cpu_ids=%u online=%u selected=%u cacheline=%u",
		  nr_cpu_ids, num_online_cpus(), c->p->nr_cpus, (unsigned int)LUF_CACHELINE);
	free_cpumask_var(km);
	kfree(m);
}

void st_fold_diet_mark(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	struct luf_batch *a, *b, *u, *t;
	unsigned long runs[ST_MAX_CPUS], recv[ST_MAX_CPUS];
	unsigned int i, first = c->p->cpus[0], n = c->p->nr_cpus;
	unsigned long *ma = st_mask_new(c->nr);
	struct st_inst in;
	unsigned long sa, sb;
	long flushes;

	a = st_batch_new(c->nr);
	b = st_batch_new(c->nr);
	u = st_batch_new(c->nr);
	t = st_batch_new(c->nr);
	if (!a || !b || !u || !t || !ma || st_inst_create(&in, 0, 2)) {
		st_fail(r, __LINE__, "out of memory");
		goto free;
	}
	luf_cpumask_set_cpu(ma, c->nr, first);
	sa = luf_ugen_stamp(&in.l->ugen);
	luf_batch_add(a, ma, sa, false);
	sb = luf_ugen_stamp(&in.l->ugen);
	luf_batch_add(b, c->sel, sb, false);

	/* fold: union of CPUs, newer ugen, writable OR writable; commutative. */
	luf_batch_copy(u, a);
	luf_batch_fold(u, b);
	ST_CHECK(r, luf_cpumask_equal(u->cpus, c->sel, c->nr), "fold lost CPUs");
	ST_CHECK(r, luf_batch_ugen(u) == luf_ugen_newer(sa, sb) && !luf_batch_writable(u), "");
	luf_batch_copy(t, b);
	luf_batch_fold(t, a);
	ST_CHECK(r, luf_batch_equal(t, u), "fold is not commutative");
	luf_batch_add(t, ma, sa, true);
	ST_CHECK(r, luf_batch_writable(t), "writable not folded");

	for (i = 0; i < n; i++) {
		runs[i] = luf_kernel_runs(in.k, c->p->cpus[i]);
		recv[i] = luf_flush_received(in.l, c->p->cpus[i]);
	}
	/* Flush the first CPU alone: a real IPI (or a local run) there only. */
	ST_CHECK(r, luf_flush_batch(in.l, st_self(), a) >= 0, "");
	for (i = 0; i < n; i++) {
		unsigned int cpu = c->p->cpus[i], want = cpu == first;

		ST_CHECK(r, luf_kernel_runs(in.k, cpu) - runs[i] == want,
			 "CPU %u ran %lu handlers, want %u", cpu,
			 luf_kernel_runs(in.k, cpu) - runs[i], want);
		ST_CHECK(r, luf_flush_received(in.l, cpu) - recv[i] == want, "received, CPU %u",
			 cpu);
		ST_CHECK(r, __luf_cpu_done(&in.l->done, cpu, sb) == !!want, "done of CPU %u", cpu);
	}
	/* Diet drops exactly the CPU that flushed, since the flush began after both stamps. */
	ST_CHECK(r, luf_batch_diet(u, &in.l->done) == 1, "diet dropped the wrong CPUs");
	ST_CHECK(r, !luf_cpumask_test_cpu(u->cpus, c->nr, first), "");
	ST_CHECK(r, luf_batch_empty(u) == (n == 1), "");
	ST_CHECK(r, luf_flush_batch(in.l, st_self(), u) >= 0, "");
	for (i = 0; i < n; i++) {
		unsigned int cpu = c->p->cpus[i];

		ST_CHECK(r, luf_kernel_runs(in.k, cpu) - runs[i] == 1, "CPU %u ran %lu handlers",
			 cpu, luf_kernel_runs(in.k, cpu) - runs[i]);
		ST_CHECK(r, __luf_cpu_done(&in.l->done, cpu, sb), "CPU %u not done", cpu);
	}
	ST_CHECK(r, luf_batch_check_done(b, &in.l->done), "");
	/* Nothing left: diet empties @b and the flush is skipped, no IPI. */
	ST_CHECK(r, luf_flush_batch(in.l, st_self(), b) >= 0 && luf_batch_empty(b), "");
	ST_CHECK(r, luf_stats_sum(in.l, LUF_STAT_FLUSH_SKIPPED) == (n == 1 ? 2 : 1),
		 "skipped %ld", luf_stats_sum(in.l, LUF_STAT_FLUSH_SKIPPED));
	flushes = luf_stats_sum(in.l, LUF_STAT_REMOTE_FLUSH) +
		  luf_stats_sum(in.l, LUF_STAT_LOCAL_FLUSH);
	ST_CHECK(r, flushes == (n == 1 ? 1 : 2), "flushes %ld", flushes);
	/* mark_done never lowers a counter (S4). */
	sa = luf_done_read(&in.l->done, first);
	__luf_done_mark_cpu(&in.l->done, first, sa - 5);
	ST_CHECK(r, luf_done_read(&in.l->done, first) == sa, "done went back");
	scnprintf(r->info, sizeof(r->info), "IPIs received %lu, flush calls %ld, diet dropped %ld",
		  luf_kernel_ipis(in.k), atomic_long_read(&in.k->flush_calls),
		  luf_stats_sum(in.l, LUF_STAT_DIET_DROPPED));
	st_inst_destroy(&in);
free:
	kfree(a);
	kfree(b);
	kfree(u);
	kfree(t);
	kfree(ma);
}

void st_flush_failure(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	struct luf_batch *b = st_batch_new(c->nr), *copy = st_batch_new(c->nr);
	unsigned long done[ST_MAX_CPUS];
	unsigned int i, self;
	struct st_inst in;
	int ret;

	if (!b || !copy || st_inst_create(&in, 0, 2)) {
		st_fail(r, __LINE__, "out of memory");
		goto free;
	}
	luf_batch_add(b, c->sel, luf_ugen_stamp(&in.l->ugen), false);
	luf_batch_copy(copy, b);
	for (i = 0; i < c->p->nr_cpus; i++)
		done[i] = luf_done_read(&in.l->done, c->p->cpus[i]);
	/* on_each_cpu_mask() cannot wait with interrupts off: the backend refuses. */
	local_irq_disable();
	self = smp_processor_id();
	ret = luf_flush_batch(in.l, self, b);
	local_irq_enable();
	ST_CHECK(r, ret == -EDEADLK, "flush with interrupts off returned %d", ret);
	ST_CHECK(r, luf_batch_equal(b, copy), "a failed flush changed the set");
	ST_CHECK(r, !luf_batch_check_done(b, &in.l->done), "a failed flush counted as done");
	for (i = 0; i < c->p->nr_cpus; i++) {
		ST_CHECK(r, luf_done_read(&in.l->done, c->p->cpus[i]) == done[i],
			 "done of CPU %u marked after a failed flush", c->p->cpus[i]);
		ST_CHECK(r, luf_kernel_runs(in.k, c->p->cpus[i]) == 0, "a handler ran");
	}
	ST_CHECK(r, luf_stats_sum(in.l, LUF_STAT_FLUSH_FAILED) == 1, "");
	ret = luf_flush_batch(in.l, st_self(), b);
	ST_CHECK(r, ret == 1 && luf_batch_check_done(copy, &in.l->done), "retry: %d", ret);
	st_inst_destroy(&in);
free:
	kfree(b);
	kfree(copy);
}

void st_local_flush(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	struct luf_batch *b = st_batch_new(c->nr), *later = st_batch_new(c->nr);
	unsigned long need;
	struct st_inst in;
	unsigned int cpu;
	unsigned long s;

	if (!b || !later || st_inst_create(&in, 0, 2)) {
		st_fail(r, __LINE__, "out of memory");
		goto free;
	}
	cpu = get_cpu(); /* stay on one CPU: the local flush is of this one */
	need = luf_kernel_gen_stamp(in.k);
	s = luf_ugen_stamp(&in.l->ugen);
	luf_batch_add(b, c->sel, s, false);
	luf_cpumask_set_cpu(b->cpus, c->nr, cpu);
	ST_CHECK(r, luf_kernel_local_flush(in.k) == 0, "");
	luf_batch_add(later, c->sel, luf_ugen_stamp(&in.l->ugen), false);
	ST_CHECK(r, __luf_cpu_done(&in.l->done, cpu, s), "local flush not recorded");
	ST_CHECK(r, luf_kernel_covered(in.k, cpu, need), "");
	ST_CHECK(r, luf_batch_diet(b, &in.l->done) == 1, "diet dropped other CPUs too");
	ST_CHECK(r, !luf_cpumask_test_cpu(b->cpus, c->nr, cpu), "");
	ST_CHECK(r, luf_batch_diet(later, &in.l->done) == 0, "a later set was dieted");
	ST_CHECK(r, luf_local_flush_end(in.l, c->nr, s) == -EINVAL, "bad CPU accepted");
	ST_CHECK(r, luf_local_flush_end(in.l, cpu, 0) == -EINVAL, "zero snapshot accepted");
	put_cpu();
	ST_CHECK(r, luf_kernel_ipis(in.k) == 0, "a local flush sent IPIs");
	st_inst_destroy(&in);
free:
	kfree(b);
	kfree(later);
}

/*
 * The reuse check must be able to fail: make luf lie (mark done without a
 * flush, as LUF_MUTANT_MARK_BEFORE_FLUSH does when the flush then fails) and
 * show that the page luf hands out is caught.
 */
void st_checker_catches(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	struct luf_freelist *fl = kzalloc(luf_freelist_size(c->nr), GFP_KERNEL);
	struct luf_folio *f = NULL;
	struct luf_pcpu *pc = NULL;
	struct st_page pg;
	struct st_inst in;
	void *raw = NULL;
	unsigned short key = 0;
	int ret;

	pg.page = NULL;
	if (!fl || st_inst_create(&in, 0, 4)) {
		kfree(fl);
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	pc = st_pcpu_new(&in, c->p->cpus[0], 64, &raw);
	if (!pc || st_pages_alloc(&pg, 1, 0, 7) || luf_freelist_init(fl, in.l, in.kt, 0)) {
		st_fail(r, __LINE__, "out of memory");
		goto out;
	}
	st_page_unmapped(in.k, &pg, c->sel);
	ST_CHECK(r, luf_unmap(pc, NULL, c->sel, LUF_PTE_ACCESSIBLE) == 0, "");
	ST_CHECK(r, luf_pcpu_fold(pc, &key) == 0 && key, "");
	ST_CHECK(r, luf_free(fl, pc, &pg.lf, key) == 0 && luf_freelist_nr_pend(fl) == 1, "");
	ST_CHECK(r, !st_page_reuse_ok(in.k, &pg, c->nr), "checker passes a page nobody flushed");

	__luf_done_mark(&in.l->done, c->sel, c->nr, __luf_ugen_new(&in.l->ugen)); /* the lie */
	ret = luf_alloc(fl, pc, 0, &f);
	ST_CHECK(r, ret == 0 && f == &pg.lf, "luf did not hand the page out (%d)", ret);
	ST_CHECK(r, !st_page_reuse_ok(in.k, &pg, c->nr), "violation NOT detected");
	ST_CHECK(r, luf_kernel_ipis(in.k) == 0, "");

	ST_CHECK(r, luf_kernel_ops.flush(in.k, c->sel, c->nr, NULL) == 0, "");
	ST_CHECK(r, st_page_reuse_ok(in.k, &pg, c->nr), "checker fails after a real flush");
	scnprintf(r->info, sizeof(r->info),
		  "done marked without a flush: luf handed the page out, the checker caught it");
out:
	st_pages_free(&pg, pg.page ? 1 : 0, 0);
	kvfree(raw);
	kfree(fl);
	st_inst_destroy(&in);
}
