// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_st_conc.c - self-tests with one kthread bound to each selected CPU:
 * the key table under concurrent folds, reads and flushes; per-CPU
 * batching; domain settling; and every write-upgrade abort cause.
 *
 * The invariant checked after every concurrent step is the one a lost
 * update would break: each CPU a thread folded in at stamp s is either
 * still in the shared set at a ugen >= s, or has done >= s. After a flush
 * or a settle, the backend's own flush generations (luf_kernel_covered())
 * must show a real flush on every CPU of the thread's removals.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/smp.h>

#include "luf_selftest.h"

#define ST_KT_ITERS 2000u
#define ST_PCPU_ROUNDS 64u
#define ST_PCPU_THRESHOLD 8u
#define ST_SETTLE_ITERS 64u

struct st_shared {
	struct st_ctx *c;
	struct st_inst *in;
};

static long st_stat(struct st_inst *in, enum luf_stat_item item)
{
	return luf_stats_sum(in->l, item);
}

/* The selected CPU after @cpu in the parameter list (wrapping). */
static unsigned int st_next_cpu(const struct st_ctx *c, unsigned int idx)
{
	return c->p->cpus[(idx + 1) % c->p->nr_cpus];
}

static void st_kt_thread(struct st_thread *t)
{
	struct st_shared *sh = t->run->arg;
	struct st_ctx *c = sh->c;
	struct st_inst *in = sh->in;
	const struct st_params *p = c->p;
	unsigned int span = p->key_hi - p->key_lo + 1, i, cpu, nr = c->nr;
	struct luf_batch *b = st_batch_new(nr), *copy = st_batch_new(nr);
	unsigned long *m = st_mask_new(nr);
	u32 seed = 0x9e3779b9u ^ ((t->cpu + 1) * 7919u);
	struct luf_pcpu *pc;
	void *raw = NULL;

	pc = st_pcpu_new(in, t->cpu, 1024, &raw);
	if (!b || !copy || !m || !pc) {
		st_fail(&t->rec, __LINE__, "out of memory");
		goto out;
	}
	for (i = 0; i < ST_KT_ITERS; i++) {
		unsigned int key = p->key_lo + st_rand(&seed) % span;
		unsigned int other = p->cpus[st_rand(&seed) % p->nr_cpus];
		unsigned short fresh;
		unsigned long s;
		int done;

		luf_cpumask_clear(m, nr);
		luf_cpumask_set_cpu(m, nr, t->cpu);
		luf_cpumask_set_cpu(m, nr, other);
		luf_batch_clear(b);
		s = luf_ugen_stamp(&in->l->ugen);
		luf_batch_add(b, m, s, false);
		ST_CHECK(&t->rec, __luf_keytab_fold(in->kt, key, b) == 0, "key %u", key);

		/* A consistent copy: never torn, never missing what this thread folded in. */
		__luf_shared_read(__luf_keytab_entry(in->kt, (unsigned short)key), copy);
		ST_CHECK(&t->rec, luf_batch_empty(copy) == luf_cpumask_empty(copy->cpus, nr),
			 "torn set under key %u", key);
		luf_for_each_cpu(cpu, m, nr) {
			ST_CHECK(&t->rec,
				 (luf_cpumask_test_cpu(copy->cpus, nr, cpu) &&
				  !luf_ugen_before(luf_batch_ugen(copy), s)) ||
				     __luf_cpu_done(&in->l->done, cpu, s),
				 "key %u lost CPU %u at stamp %lu", key, cpu, s);
		}
		fresh = __luf_keytab_new_key(in->kt);
		ST_CHECK(&t->rec, __luf_keytab_valid(in->kt, fresh), "new key %u", fresh);
		done = luf_keytab_check_done(in->kt, p->key_lo + st_rand(&seed) % span);
		ST_CHECK(&t->rec, done == 0 || done == 1, "check_done %d", done);

		if ((i & 7) == 7) {
			ST_CHECK(&t->rec, luf_key_flush(pc, key) >= 0, "flush of key %u", key);
			luf_for_each_cpu(cpu, m, nr) {
				ST_CHECK(&t->rec, __luf_cpu_done(&in->l->done, cpu, s),
					 "CPU %u not done after flushing key %u", cpu, key);
			}
			t->sum[0]++;
		}
		if ((i & 63) == 63)
			cond_resched();
	}
	t->sum[1] = i;
out:
	kvfree(raw);
	kfree(b);
	kfree(copy);
	kfree(m);
}

void st_keytab_conc(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	unsigned long sum[ST_NR_SUMS] = {0};
	struct st_shared sh = {c, NULL};
	struct st_inst in;

	if (st_inst_create(&in, 0, c->p->nr_keys)) {
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	sh.in = &in;
	st_run_threads(c, st_kt_thread, &sh, r, sum);
	scnprintf(r->info, sizeof(r->info),
		  "%u kthreads, keys %u..%u: %lu folds, %lu key flushes, %ld flushes sent, %ld "
		  "skipped by diet, %ld CAS retries",
		  c->p->nr_cpus, c->p->key_lo, c->p->key_hi, sum[1], sum[0],
		  st_stat(&in, LUF_STAT_REMOTE_FLUSH) + st_stat(&in, LUF_STAT_LOCAL_FLUSH),
		  st_stat(&in, LUF_STAT_FLUSH_SKIPPED), st_stat(&in, LUF_STAT_CAS_RETRY));
	st_inst_destroy(&in);
}

static void st_pcpu_thread(struct st_thread *t)
{
	struct st_shared *sh = t->run->arg;
	struct st_ctx *c = sh->c;
	struct st_inst *in = sh->in;
	unsigned int nr = c->nr, round, j, cpu;
	unsigned long *m = st_mask_new(nr);
	struct luf_pcpu *pc;
	void *raw = NULL;

	pc = st_pcpu_new(in, t->cpu, ST_PCPU_THRESHOLD, &raw);
	if (!m || !pc) {
		st_fail(&t->rec, __LINE__, "out of memory");
		goto out;
	}
	luf_cpumask_set_cpu(m, nr, t->cpu);
	luf_cpumask_set_cpu(m, nr, st_next_cpu(c, t->idx));
	for (round = 0; round < ST_PCPU_ROUNDS; round++) {
		unsigned long need = luf_kernel_gen_stamp(in->k);
		unsigned long folds = luf_stats_read(in->l, pc->cpu, LUF_STAT_FOLD);
		unsigned long wflush = luf_stats_read(in->l, pc->cpu, LUF_STAT_WRITABLE_FLUSH);
		unsigned short key = 1;

		if ((round & 3) == 3) {
			/* A writable removal is never deferred (S3): flushed at the fold. */
			ST_CHECK(&t->rec, luf_pcpu_defer(pc, NULL, m, true) == 0, "");
			ST_CHECK(&t->rec, luf_pcpu_fold(pc, &key) == 0 && key == 0,
				 "writable batch got key %u", key);
			/* Counted only if sent: another thread's flush may have covered it. */
			ST_CHECK(&t->rec,
				 luf_stats_read(in->l, pc->cpu, LUF_STAT_WRITABLE_FLUSH) - wflush <=
				     1,
				 "");
		} else {
			/* 10 removals: one automatic fold at the threshold (8), one at the end. */
			for (j = 0; j < 10; j++)
				ST_CHECK(&t->rec, luf_pcpu_defer(pc, NULL, m, false) == 0, "");
			ST_CHECK(&t->rec, pc->nr_open == 2, "nr_open %u", pc->nr_open);
			ST_CHECK(&t->rec, luf_pcpu_fold(pc, &key) == 0 && key, "");
			ST_CHECK(
			    &t->rec, luf_stats_read(in->l, pc->cpu, LUF_STAT_FOLD) == folds + 2,
			    "folds %lu", luf_stats_read(in->l, pc->cpu, LUF_STAT_FOLD) - folds);
			ST_CHECK(&t->rec, luf_keytab_check_done(in->kt, key) >= 0, "");
			ST_CHECK(&t->rec, luf_key_flush(pc, key) >= 0, "");
			t->sum[0]++;
		}
		luf_for_each_cpu(cpu, m, nr) {
			ST_CHECK(&t->rec, luf_kernel_covered(in->k, cpu, need),
				 "round %u: CPU %u has not flushed since the removal", round, cpu);
		}
		if ((round & 15) == 15)
			cond_resched();
	}
	t->sum[1] = round;
out:
	kvfree(raw);
	kfree(m);
}

void st_pcpu_batching(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	unsigned long sum[ST_NR_SUMS] = {0};
	struct st_shared sh = {c, NULL};
	struct st_inst in;

	if (st_inst_create(&in, 0, c->p->nr_keys)) {
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	sh.in = &in;
	st_run_threads(c, st_pcpu_thread, &sh, r, sum);
	scnprintf(r->info, sizeof(r->info),
		  "%lu rounds, %lu key flushes, %ld writable batches flushed at fold, %ld "
		  "deferred, %lu IPIs",
		  sum[1], sum[0], st_stat(&in, LUF_STAT_WRITABLE_FLUSH),
		  st_stat(&in, LUF_STAT_DEFERRED), luf_kernel_ipis(in.k));
	st_inst_destroy(&in);
}

/* Concurrent defers into one domain, each followed by a settle that must cover it. */
static void st_settle_thread(struct st_thread *t)
{
	struct st_shared *sh = t->run->arg;
	struct st_ctx *c = sh->c;
	struct st_inst *in = sh->in;
	unsigned int i, cpu;
	struct luf_pcpu *pc;
	void *raw = NULL;
	unsigned short key;

	pc = st_pcpu_new(in, t->cpu, 1024, &raw);
	if (!pc) {
		st_fail(&t->rec, __LINE__, "out of memory");
		return;
	}
	for (i = 0; i < ST_SETTLE_ITERS; i++) {
		unsigned long need = luf_kernel_gen_stamp(in->k);

		ST_CHECK(&t->rec, luf_pcpu_defer(pc, in->dom, c->sel, false) == 0, "");
		ST_CHECK(&t->rec, luf_domain_settle(in->l, t->cpu, in->dom, pc->scratch) >= 0, "");
		luf_for_each_cpu(cpu, c->sel, c->nr) {
			ST_CHECK(&t->rec, luf_kernel_covered(in->k, cpu, need),
				 "settle returned before CPU %u flushed", cpu);
		}
		ST_CHECK(&t->rec, luf_pcpu_fold(pc, &key) == 0, "");
		if ((i & 15) == 15)
			cond_resched();
	}
	kvfree(raw);
}

void st_domain_settle(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	struct st_shared sh = {c, NULL};
	struct luf_pcpu *pc = NULL;
	unsigned long need, runs;
	struct st_inst in;
	void *raw = NULL;
	unsigned int cpu;

	if (st_inst_create(&in, 0, 16)) {
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	pc = st_pcpu_new(&in, c->p->cpus[0], 1024, &raw);
	if (!pc) {
		st_fail(r, __LINE__, "out of memory");
		goto out;
	}
	luf_set_report(in.l, st_report_capture);
	atomic_set(&st_reports, 0);
	need = luf_kernel_gen_stamp(in.k);
	ST_CHECK(r, luf_pcpu_defer(pc, in.dom, c->sel, false) == 0, "");
	ST_CHECK(r, luf_domain_pending(in.dom), "deferral not recorded in the domain");
	ST_CHECK(r, luf_upgrade_check(pc, 0, in.dom) == -EBUSY, "upgrade allowed while pending");
	ST_CHECK(r, atomic_read(&st_reports) == ST_REPORTS_EXPECTED(1),
		 "write-upgrade without abort reported %d times", atomic_read(&st_reports));
	ST_CHECK(r, luf_domain_settle(in.l, c->nr, in.dom, pc->scratch) == -EINVAL, "bad CPU");
	ST_CHECK(r, luf_domain_settle(in.l, pc->cpu, in.dom, pc->scratch) >= 0, "");
	ST_CHECK(r, !luf_domain_pending(in.dom), "still pending after settle");
	ST_CHECK(r, luf_upgrade_check(pc, 0, in.dom) == 0, "");
	luf_for_each_cpu(cpu, c->sel, c->nr)
		ST_CHECK(r, luf_kernel_covered(in.k, cpu, need), "CPU %u not flushed", cpu);
	runs = luf_kernel_runs(in.k, c->p->cpus[0]);
	ST_CHECK(r, luf_domain_settle(in.l, pc->cpu, in.dom, pc->scratch) >= 0, "");
	ST_CHECK(r, luf_kernel_runs(in.k, c->p->cpus[0]) == runs, "a settled domain flushed again");

	sh.in = &in;
	st_run_threads(c, st_settle_thread, &sh, r, NULL);
	scnprintf(r->info, sizeof(r->info),
		  "%u kthreads x %u defer+settle: %ld flushes, %ld skipped by diet, %lu IPIs",
		  c->p->nr_cpus, ST_SETTLE_ITERS,
		  st_stat(&in, LUF_STAT_REMOTE_FLUSH) + st_stat(&in, LUF_STAT_LOCAL_FLUSH),
		  st_stat(&in, LUF_STAT_FLUSH_SKIPPED), luf_kernel_ipis(in.k));
out:
	kvfree(raw);
	st_inst_destroy(&in);
}

static bool st_abort_is_domain(enum luf_abort_cause cause)
{
	return cause == LUF_ABORT_WRITE_FAULT || cause == LUF_ABORT_PROT_UPGRADE ||
	       cause == LUF_ABORT_MOVE;
}

/* Abort through the key (a free folio about to be written) or the domain. */
static int st_do_abort(struct luf_pcpu *pc, struct st_inst *in, unsigned int key,
		       enum luf_abort_cause cause, unsigned int *self)
{
	int ret;

	*self = get_cpu(); /* the sender of the IPIs, to count them exactly */
	if (st_abort_is_domain(cause))
		ret = luf_abort_domain(pc, in->dom, cause);
	else
		ret = luf_abort_key(pc, key, cause);
	put_cpu();
	return ret;
}

void st_abort(struct st_ctx *c, unsigned long arg, struct st_rec *r)
{
	enum luf_abort_cause cause = (enum luf_abort_cause)arg;
	enum luf_stat_item item = (enum luf_stat_item)(LUF_STAT_ABORT + cause);
	bool dom = st_abort_is_domain(cause);
	struct luf_freelist *fl = kzalloc(luf_freelist_size(c->nr), GFP_KERNEL);
	struct luf_folio *f = NULL;
	struct luf_pcpu *pc = NULL;
	unsigned long ipis;
	unsigned int self;
	struct st_page pg;
	struct st_inst in;
	void *raw = NULL;
	unsigned short key = 0;
	long before;

	pg.page = NULL;
	if (!fl || st_inst_create(&in, 0, 16)) {
		kfree(fl);
		st_fail(r, __LINE__, "out of memory");
		return;
	}
	pc = st_pcpu_new(&in, c->p->cpus[0], 1024, &raw);
	if (!pc || luf_freelist_init(fl, in.l, in.kt, 0) ||
	    st_pages_alloc(&pg, 1, c->p->order, 3)) {
		st_fail(r, __LINE__, "out of memory");
		goto out;
	}
	luf_set_report(in.l, st_report_capture);
	atomic_set(&st_reports, 0);
	st_page_unmapped(in.k, &pg, c->sel);
	ST_CHECK(r, luf_unmap(pc, dom ? in.dom : NULL, c->sel, LUF_PTE_ACCESSIBLE) == 0, "");
	ST_CHECK(r, luf_pcpu_fold(pc, &key) == 0 && key, "");
	ST_CHECK(r, luf_free(fl, pc, &pg.lf, key) == 0, "");
	ST_CHECK(r, luf_upgrade_check(pc, dom ? 0 : key, dom ? in.dom : NULL) == -EBUSY,
		 "a write would be granted while a stale entry may exist");
	ST_CHECK(r, atomic_read(&st_reports) == ST_REPORTS_EXPECTED(1),
		 "write-upgrade without abort reported %d times", atomic_read(&st_reports));
	ST_CHECK(r, luf_alloc(fl, pc, 0, &f) == -EAGAIN, "pend folio handed out without a flush");
	ST_CHECK(r, luf_abort_key(pc, key, LUF_ABORT_NR_CAUSES) == -EINVAL, "bad cause accepted");

	before = st_stat(&in, item);
	ipis = luf_kernel_ipis(in.k);
	ST_CHECK(r, st_do_abort(pc, &in, key, cause, &self) == 0, "");
	ST_CHECK(r, st_stat(&in, item) == before + 1, "cause not counted");
	ST_CHECK(r, luf_kernel_ipis(in.k) - ipis == st_remote(c->sel, c->nr, self),
		 "%lu IPIs, want %u", luf_kernel_ipis(in.k) - ipis, st_remote(c->sel, c->nr, self));
	ST_CHECK(r, st_page_reuse_ok(in.k, &pg, c->nr), "abort returned before the flush");
	ST_CHECK(r, luf_upgrade_check(pc, dom ? 0 : key, dom ? in.dom : NULL) == 0, "");
	ST_CHECK(r, luf_keytab_check_done(in.kt, key) == 1, "key still pending");

	/* Nothing is owed any more: a second abort flushes nothing and counts nothing. */
	ipis = luf_kernel_ipis(in.k);
	ST_CHECK(r, st_do_abort(pc, &in, key, cause, &self) == 0, "");
	ST_CHECK(r, st_stat(&in, item) == before + 1 && luf_kernel_ipis(in.k) == ipis, "");

	/* The folio now comes back without a flush, intact; then the write happens. */
	ST_CHECK(r, luf_alloc(fl, pc, 0, &f) == 0 && f == &pg.lf, "");
	ST_CHECK(r, st_page_intact(&pg, c->p->order), "folio bytes changed while free");
	st_page_fill(&pg, c->p->order, 0x6b6b6b6bu + cause);
	scnprintf(r->info, sizeof(r->info), "%s abort: 1 flush, %lu IPIs", dom ? "domain" : "key",
		  luf_kernel_ipis(in.k));
out:
	st_pages_free(&pg, pg.page ? 1 : 0, c->p->order);
	kvfree(raw);
	kfree(fl);
	st_inst_destroy(&in);
}
