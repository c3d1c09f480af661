// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/cmp/test_cmp.c - the policy simulator (lib/sim/luf_cmp.h).
 *
 *   cmp_scenario   short event sequences whose counts are worked out by
 *                   hand: what each policy flushes, when, and the bounds;
 *   cmp_badinput   every entry point rejects what is out of range and
 *                   changes nothing;
 *   cmp_property   random streams of every event on 8 and 70 CPUs, with
 *                   and without a ugen start just below the wrap: no policy
 *                   breaks S1-S4, each is at or above both bounds, the oracle
 *                   is exactly at the flush-operation bound (the same
 *                   stabbing, computed apart), batched at or below immediate.
 * The mutant builds (tests/MUTANTS.md) run cmp_property: each must fail it
 * with luf breaking a rule (expect_fail.cmake).
 */
#include <errno.h>
#include <string.h>

#include "luf_cmp.h"
#include "prop.h"

static struct luf_cmp *mk(unsigned int cpus, unsigned int frames)
{
	struct luf_cmp_config cfg = {.nr_cpus = cpus, .nr_frames = frames, .nr_keys = 256};
	struct luf_cmp *c = NULL;

	cr_assert_eq(luf_cmp_create(&cfg, &c), 0);
	return c;
}

/* A domain with CPUs [0, n). */
static int mkdom(struct luf_cmp *c, unsigned int n)
{
	int d = luf_cmp_dom_new(c);

	cr_assert_geq(d, 0);
	for (unsigned int cpu = 0; cpu < n; cpu++)
		cr_assert_eq(luf_cmp_dom_add_cpu(c, d, cpu), 0);
	return d;
}

static unsigned long long viol(const struct luf_cmp_result *r)
{
	unsigned long long v = 0;

	for (int p = 0; p < LUF_CMP_NPOL; p++)
		for (int k = 0; k < LUF_CMP_NRULES; k++)
			v += r->c[p].viol[k];
	return v;
}

/*
 * One read-only page of a domain on CPUs 0-2 is unmapped by CPU 0, the
 * call and the batch end, then the range is reused: immediate flushes at
 * the call end (a one-page local flush and IPIs to CPUs 1 and 2), batched
 * at the batch end (whole TLB), luf only at the reuse, the oracle there too.
 */
Test(cmp_scenario, read_only_removal_deferred_to_reuse)
{
	struct luf_cmp *c = mk(4, 0);
	struct luf_cmp_task t;
	struct luf_cmp_rec rec;
	struct luf_cmp_result r;
	int d = mkdom(c, 3);

	cr_assert_eq(luf_cmp_task_init(c, &t, 0), 0);
	cr_assert_eq(luf_cmp_remove(c, &t, d, -1, LUF_PTE_ACCESSIBLE, 1, &rec), 0);
	cr_assert_neq(rec.tick, 0);
	luf_cmp_call_end(c, &t);
	luf_cmp_batch_end(c, &t);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_IMMEDIATE].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_IMMEDIATE].received, 2);
	cr_assert_eq(r.c[LUF_CMP_IMMEDIATE].local_one, 1);
	cr_assert_eq(r.c[LUF_CMP_BATCHED].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_BATCHED].local_all, 1);
	cr_assert_eq(r.c[LUF_CMP_LUF].flushes, 0, "luf deferred the read-only removal");
	cr_assert_eq(r.c[LUF_CMP_ORACLE].flushes, 0);
	cr_assert(luf_cmp_rec_live(c, &rec));
	cr_assert_eq(luf_cmp_reuse(c, &t, d, &rec, 1), 0);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_LUF].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_LUF].received, 2);
	cr_assert_eq(r.c[LUF_CMP_LUF].by_cause[LUF_CMP_C_REUSE], 1);
	cr_assert_eq(r.c[LUF_CMP_ORACLE].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_ORACLE].cpus, 3);
	cr_assert_eq(r.c[LUF_CMP_IMMEDIATE].flushes, 1, "immediate owed nothing at the reuse");
	cr_assert_eq(r.bound_cpus, 3);
	cr_assert_eq(r.bound_ops, 1);
	cr_assert_eq(viol(&r), 0);
	cr_assert_not(luf_cmp_rec_live(c, &rec));
	luf_cmp_task_fini(c, &t);
	luf_cmp_destroy(c);
}

/* A writable removal is flushed by every policy by its batch end (S3). */
Test(cmp_scenario, writable_removal_flushed_at_batch_end)
{
	struct luf_cmp *c = mk(4, 0);
	struct luf_cmp_task t;
	struct luf_cmp_result r;
	int d = mkdom(c, 4);

	cr_assert_eq(luf_cmp_task_init(c, &t, 1), 0);
	cr_assert_eq(luf_cmp_remove(c, &t, d, -1, LUF_PTE_ACCESSIBLE | LUF_PTE_WRITABLE, 40, NULL),
		     0);
	luf_cmp_batch_end(c, &t);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_IMMEDIATE].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_IMMEDIATE].local_all, 1, "40 pages: above the 33-page ceiling");
	cr_assert_eq(r.c[LUF_CMP_LUF].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_LUF].by_cause[LUF_CMP_C_WRITABLE], 1);
	cr_assert_eq(r.c[LUF_CMP_ORACLE].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_BATCHED].flushes, 1);
	cr_assert_eq(r.bound_cpus, 4);
	cr_assert_eq(r.bound_ops, 1);
	cr_assert_eq(viol(&r), 0);
	luf_cmp_task_fini(c, &t);
	luf_cmp_destroy(c);
}

/* Context switches of every CPU of the removal cover it: nobody flushes at the reuse. */
Test(cmp_scenario, context_switches_cover_a_removal)
{
	struct luf_cmp *c = mk(2, 0);
	struct luf_cmp_task t;
	struct luf_cmp_rec rec;
	struct luf_cmp_result r;
	int d = mkdom(c, 2);

	cr_assert_eq(luf_cmp_task_init(c, &t, 0), 0);
	cr_assert_eq(luf_cmp_remove(c, &t, d, -1, LUF_PTE_ACCESSIBLE, 1, &rec), 0);
	luf_cmp_ctx_switch(c, 0);
	luf_cmp_ctx_switch(c, 1);
	cr_assert_eq(luf_cmp_reuse(c, &t, d, &rec, 1), 0);
	luf_cmp_result(c, &r);
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		cr_assert_eq(r.c[p].flushes, 0, "%s flushed",
			     luf_cmp_pol_name((enum luf_cmp_pol)p));
	cr_assert_eq(r.bound_cpus, 0);
	cr_assert_eq(r.bound_ops, 0);
	cr_assert_eq(viol(&r), 0);
	luf_cmp_task_fini(c, &t);
	luf_cmp_destroy(c);
}

/*
 * A CPU that joins after the removal cannot cache it: the bounds count only
 * CPU 0. B3 from another task flushes the domain's CPUs of the moment (0
 * and 1: flush_tlb_mm()), once per pending mark; the task's own open
 * batch does not trigger it.
 */
Test(cmp_scenario, pending_flush_and_late_join)
{
	struct luf_cmp *c = mk(4, 0);
	struct luf_cmp_task t0, t1;
	struct luf_cmp_rec rec;
	struct luf_cmp_result r;
	int d = mkdom(c, 1);

	cr_assert_eq(luf_cmp_task_init(c, &t0, 0), 0);
	cr_assert_eq(luf_cmp_task_init(c, &t1, 1), 0);
	cr_assert_eq(luf_cmp_remove(c, &t0, d, -1, LUF_PTE_ACCESSIBLE, 1, NULL), 0);
	luf_cmp_call_end(c, &t0);
	cr_assert_eq(luf_cmp_dom_add_cpu(c, d, 1), 0);
	luf_cmp_pending(c, &t0, d);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_BATCHED].flushes, 0, "the task's own batch is not pending for it");
	luf_cmp_pending(c, &t1, d);
	luf_cmp_pending(c, &t1, d);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_BATCHED].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_BATCHED].cpus, 2);
	cr_assert_eq(r.c[LUF_CMP_BATCHED].by_cause[LUF_CMP_C_PENDING], 1);
	luf_cmp_dom_rec(c, d, &rec);
	cr_assert_eq(luf_cmp_upgrade(c, &t1, d, &rec, 1, LUF_ABORT_PROT_UPGRADE), 0);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.bound_cpus, 1);
	cr_assert_eq(r.bound_ops, 1);
	cr_assert_eq(r.c[LUF_CMP_LUF].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_LUF].cpus, 1, "luf flushes only CPU 0 (diet: CPU 1 joined later)");
	cr_assert_eq(viol(&r), 0);
	luf_cmp_task_fini(c, &t0);
	luf_cmp_task_fini(c, &t1);
	luf_cmp_destroy(c);
}

/* A frame freed under a key is owed its flush when it is handed out again. */
Test(cmp_scenario, frame_reuse_flushes_once)
{
	struct luf_cmp *c = mk(2, 8);
	struct luf_cmp_task t;
	struct luf_cmp_result r;
	int d = mkdom(c, 2);
	long f = luf_cmp_alloc(c, 0, 0), g;
	unsigned int seen = 0;

	cr_assert_geq(f, 0);
	cr_assert_eq(luf_cmp_nr_free(c, 0, 0), 3);
	cr_assert_eq(luf_cmp_task_init(c, &t, 0), 0);
	cr_assert_eq(luf_cmp_remove(c, &t, d, f, LUF_PTE_ACCESSIBLE, 1, NULL), 0);
	luf_cmp_batch_end(c, &t);
	cr_assert_eq(luf_cmp_nr_free(c, 0, 0), 4);
	while ((g = luf_cmp_alloc(c, 0, 0)) >= 0)
		seen += g == f;
	cr_assert_eq(seen, 1);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_LUF].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_LUF].by_cause[LUF_CMP_C_REUSE], 1);
	cr_assert_eq(r.c[LUF_CMP_ORACLE].flushes, 1);
	cr_assert_eq(r.bound_cpus, 2);
	cr_assert_eq(viol(&r), 0);
	cr_assert_eq(r.luf_errors, 0);
	luf_cmp_task_fini(c, &t);
	luf_cmp_destroy(c);
}

/*
 * Memory follows the live domains: snapshots of a dropped domain are freed
 * at once, or when the last open batch or frame holding one lets go.
 */
Test(cmp_scenario, dropped_domains_free_their_snapshots)
{
	struct luf_cmp *c = mk(64, 0);
	struct luf_cmp_task t;
	struct luf_cmp_result r;
	unsigned long base;
	int keep;

	cr_assert_eq(luf_cmp_task_init(c, &t, 0), 0);
	base = luf_cmp_nr_masks(c);
	for (unsigned int i = 0; i < 100000; i++) {
		int d = mkdom(c, 1 + i % 64);

		cr_assert_eq(luf_cmp_remove(c, &t, d, -1, LUF_PTE_ACCESSIBLE, 1, NULL), 0);
		cr_assert_eq(luf_cmp_dom_add_cpu(c, d, 63), 0); /* a second snapshot */
		luf_cmp_call_end(c, &t);
		luf_cmp_batch_end(c, &t);
		luf_cmp_dom_put(c, d);
	}
	cr_assert_eq(luf_cmp_nr_masks(c), base, "%lu snapshots left", luf_cmp_nr_masks(c) - base);
	/* held by an open batch: freed at its end, not before */
	keep = mkdom(c, 8);
	cr_assert_eq(
	    luf_cmp_remove(c, &t, keep, -1, LUF_PTE_ACCESSIBLE | LUF_PTE_WRITABLE, 1, NULL), 0);
	luf_cmp_call_end(c, &t);
	luf_cmp_dom_put(c, keep);
	cr_assert_eq(luf_cmp_nr_masks(c), base + 1);
	luf_cmp_batch_end(c, &t);
	cr_assert_eq(luf_cmp_nr_masks(c), base);
	luf_cmp_result(c, &r);
	cr_assert_eq(viol(&r), 0);
	luf_cmp_task_fini(c, &t);
	luf_cmp_destroy(c);
}

/* frames_by_id (kernel traces): a given frame is handed out; luf flushes its key if owed. */
Test(cmp_scenario, take_a_given_frame)
{
	struct luf_cmp_config cfg = {.nr_cpus = 2, .nr_frames = 16, .frames_by_id = true};
	struct luf_cmp *c = NULL;
	struct luf_cmp_task t;
	struct luf_cmp_result r;
	int d;

	cr_assert_eq(luf_cmp_create(&cfg, &c), 0);
	d = mkdom(c, 2);
	cr_assert_eq(luf_cmp_alloc(c, 0, 0), -1, "no free lists in this mode");
	cr_assert_eq(luf_cmp_task_init(c, &t, 0), 0);
	cr_assert_eq(luf_cmp_take(c, 0, 5), 0, "never removed: nothing owed");
	cr_assert_eq(luf_cmp_remove(c, &t, d, 5, LUF_PTE_ACCESSIBLE, 1, NULL), 0);
	luf_cmp_call_end(c, &t);
	cr_assert_eq(luf_cmp_take(c, 1, 5), -EBUSY, "not freed before its batch end");
	luf_cmp_batch_end(c, &t);
	cr_assert_eq(luf_cmp_take(c, 1, 5), 0);
	cr_assert_eq(luf_cmp_take(c, 1, 5), 0, "owed nothing the second time");
	cr_assert_eq(luf_cmp_take(c, 1, 16), -EINVAL);
	cr_assert_eq(luf_cmp_take(c, 2, 5), -EINVAL);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_LUF].flushes, 1);
	cr_assert_eq(r.c[LUF_CMP_LUF].by_cause[LUF_CMP_C_REUSE], 1);
	cr_assert_eq(r.c[LUF_CMP_ORACLE].flushes, 1);
	cr_assert_eq(r.bound_ops, 1);
	cr_assert_eq(viol(&r), 0);
	cr_assert_eq(r.luf_errors, 0);
	luf_cmp_task_fini(c, &t);
	luf_cmp_destroy(c);
}

/* lazy_skip: batched's flush does not interrupt a lazy CPU; luf's does. */
Test(cmp_scenario, lazy_cpus_are_not_interrupted_by_lazy_skip_policies)
{
	struct luf_cmp_config cfg = {.nr_cpus = 3, .lazy_skip = 1u << LUF_CMP_BATCHED};
	struct luf_cmp *c = NULL;
	struct luf_cmp_task t;
	struct luf_cmp_rec rec;
	struct luf_cmp_result r;
	int d;

	cr_assert_eq(luf_cmp_create(&cfg, &c), 0);
	d = mkdom(c, 3);
	cr_assert_eq(luf_cmp_task_init(c, &t, 0), 0);
	cr_assert_eq(luf_cmp_remove(c, &t, d, -1, LUF_PTE_ACCESSIBLE, 1, &rec), 0);
	luf_cmp_call_end(c, &t);
	luf_cmp_cpu_lazy(c, 2, true);
	luf_cmp_batch_end(c, &t);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_BATCHED].received, 1, "CPU 1 only: CPU 2 is lazy");
	cr_assert_eq(r.c[LUF_CMP_IMMEDIATE].received, 2, "not in lazy_skip");
	cr_assert_eq(luf_cmp_reuse(c, &t, d, &rec, 1), 0);
	luf_cmp_cpu_lazy(c, 2, false);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_LUF].received, 2, "luf interrupts the lazy CPU");
	cr_assert_eq(r.bound_cpus, 2, "the lazy CPU costs the bound nothing");
	cr_assert_eq(viol(&r), 0);
	luf_cmp_task_fini(c, &t);
	luf_cmp_destroy(c);
}

Test(cmp_badinput, create)
{
	struct luf_cmp_config cfg = {.nr_cpus = 0};
	struct luf_cmp *c = NULL;

	cr_assert_eq(luf_cmp_create(&cfg, &c), -EINVAL);
	cfg.nr_cpus = LUF_MAX_CPUS + 1;
	cr_assert_eq(luf_cmp_create(&cfg, &c), -EINVAL);
	cfg.nr_cpus = 4;
	cfg.nr_fast = 1; /* more fast frames than frames */
	cr_assert_eq(luf_cmp_create(&cfg, &c), -EINVAL);
	cfg.nr_fast = 0;
	cfg.nr_keys = 1;
	cr_assert_eq(luf_cmp_create(&cfg, &c), -EINVAL);
	cr_assert_eq(luf_cmp_create(NULL, &c), -EINVAL);
	cr_assert_null(c);
}

Test(cmp_badinput, events)
{
	struct luf_cmp *c = mk(4, 4);
	struct luf_cmp_task t;
	struct luf_cmp_rec rec = {.tick = 0};
	struct luf_cmp_result r;
	int d = mkdom(c, 2);

	cr_assert_eq(luf_cmp_task_init(c, &t, 4), -EINVAL);
	cr_assert_eq(luf_cmp_task_init(c, &t, 0), 0);
	cr_assert_eq(luf_cmp_dom_add_cpu(c, d, 4), -EINVAL);
	cr_assert_eq(luf_cmp_dom_add_cpu(c, d + 1, 0), -EINVAL);
	cr_assert_eq(luf_cmp_remove(c, &t, d + 1, -1, LUF_PTE_ACCESSIBLE, 1, &rec), -EINVAL);
	cr_assert_eq(luf_cmp_remove(c, &t, d, 4, LUF_PTE_ACCESSIBLE, 1, &rec), -EINVAL);
	cr_assert_eq(luf_cmp_remove(c, NULL, d, -1, LUF_PTE_ACCESSIBLE, 1, &rec), -EINVAL);
	cr_assert_eq(rec.tick, 0, "nothing recorded");
	cr_assert_eq(luf_cmp_reuse(c, &t, -1, NULL, 0), -EINVAL);
	cr_assert_eq(luf_cmp_reuse(c, &t, d, NULL, 1), -EINVAL);
	cr_assert_eq(luf_cmp_upgrade(c, &t, d, NULL, 0, LUF_ABORT_NR_CAUSES), -EINVAL);
	cr_assert_eq(luf_cmp_alloc(c, 4, 0), -1);
	cr_assert_eq(luf_cmp_alloc(c, 0, 1), -1, "one tier only");
	cr_assert_eq(luf_cmp_nr_free(c, 0, 1), 0);
	luf_cmp_dom_put(c, d);
	cr_assert_eq(luf_cmp_remove(c, &t, d, -1, LUF_PTE_ACCESSIBLE, 1, &rec), -EINVAL,
		     "a dropped domain");
	luf_cmp_result(c, &r);
	cr_assert_eq(r.removals, 0);
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		cr_assert_eq(r.c[p].flushes, 0);
	cr_assert_eq(r.luf_errors, 0);
	luf_cmp_task_fini(c, &t);
	luf_cmp_destroy(c);
}

/* An ended task and records of another (or a dropped) domain are refused. */
Test(cmp_badinput, ended_tasks_and_foreign_records)
{
	struct luf_cmp *c = mk(4, 8);
	struct luf_cmp_task t;
	struct luf_cmp_rec rec, before;
	struct luf_cmp_result r;
	int d = mkdom(c, 2), e = mkdom(c, 2), f;

	cr_assert_eq(luf_cmp_task_init(c, &t, 3), 0);
	cr_assert_eq(luf_cmp_remove(c, &t, d, -1, LUF_PTE_ACCESSIBLE, 1, &rec), 0);
	luf_cmp_call_end(c, &t);
	luf_cmp_batch_end(c, &t);
	cr_assert_eq(luf_cmp_reuse(c, &t, e, &rec, 1), -EINVAL, "a record of domain d, not e");
	luf_cmp_result(c, &r);
	cr_assert_eq(r.c[LUF_CMP_LUF].flushes, 0, "nothing done for a refused reuse");
	luf_cmp_dom_put(c, d);
	f = luf_cmp_dom_new(c);
	cr_assert_eq(f, d, "the id is reused");
	cr_assert_eq(luf_cmp_reuse(c, &t, f, &rec, 1), -EINVAL, "a record of the dropped domain");
	luf_cmp_task_fini(c, &t);
	luf_cmp_task_fini(c, &t); /* twice: harmless */
	before = rec;
	for (int i = 0; i < 100; i++) {
		cr_assert_eq(luf_cmp_remove(c, &t, e, -1, LUF_PTE_ACCESSIBLE, 1, &rec), -EINVAL);
		luf_cmp_call_end(c, &t);
		luf_cmp_batch_end(c, &t);
		luf_cmp_pending(c, &t, e);
	}
	cr_assert_eq(rec.tick, before.tick, "nothing recorded for an ended task");
	cr_assert_eq(luf_cmp_upgrade(c, &t, e, NULL, 0, LUF_ABORT_PROT_UPGRADE), -EINVAL);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.removals, 1);
	cr_assert_eq(viol(&r), 0);
	cr_assert_eq(r.luf_errors, 0);
	luf_cmp_destroy(c);
}

/* A frame removed twice before its batch end is freed once, under its newest record. */
Test(cmp_scenario, frame_removed_twice_is_freed_once)
{
	struct luf_cmp *c = mk(2, 4);
	struct luf_cmp_task t;
	struct luf_cmp_result r;
	int d = mkdom(c, 2), e = mkdom(c, 1);
	long f = luf_cmp_alloc(c, 0, 0);

	cr_assert_eq(luf_cmp_task_init(c, &t, 0), 0);
	cr_assert_eq(luf_cmp_remove(c, &t, e, f, LUF_PTE_ACCESSIBLE, 1, NULL), 0);
	cr_assert_eq(luf_cmp_remove(c, &t, d, f, LUF_PTE_ACCESSIBLE, 1, NULL), 0);
	luf_cmp_call_end(c, &t);
	luf_cmp_batch_end(c, &t);
	cr_assert_eq(luf_cmp_nr_free(c, 0, 0), 2);
	luf_cmp_result(c, &r);
	cr_assert_eq(r.luf_errors, 0);
	cr_assert_eq(viol(&r), 0);
	luf_cmp_task_fini(c, &t);
	luf_cmp_destroy(c);
}

/* ---- random streams ------------------------------------------------------ */

#define R_DOMS 3u
#define R_RECS 16u /* records kept per domain for later reuses */
#define R_HELD 16u /* frames each CPU holds mapped at most */

struct rstate {
	struct luf_cmp *c;
	struct prop_rng rng;
	unsigned int cpus;
	int dom[R_DOMS];
	struct luf_cmp_task *t;
	struct luf_cmp_rec rec[R_DOMS][R_RECS];
	unsigned int nrec[R_DOMS];
	long *held;	     /* [cpu * R_HELD + i]: frames mapped by the CPU */
	unsigned int *nheld; /* per CPU */
	unsigned int *fdom;  /* per frame: its domain */
};

static void r_step(struct rstate *s)
{
	unsigned int cpu = (unsigned int)prop_below(&s->rng, s->cpus);
	unsigned int di = (unsigned int)prop_below(&s->rng, R_DOMS);
	struct luf_cmp_task *t = &s->t[cpu];
	unsigned int k = (unsigned int)prop_below(&s->rng, 100);
	int d = s->dom[di];

	if (k < 30) { /* remove a range (no frame): kept for a later reuse */
		unsigned int pte = LUF_PTE_ACCESSIBLE;
		struct luf_cmp_rec rec;

		if (prop_chance(&s->rng, 1, 4))
			pte |= LUF_PTE_WRITABLE;
		if (prop_chance(&s->rng, 1, 10))
			pte = 0;
		PASSERT(!luf_cmp_remove(s->c, t, d, -1, pte, 1 + prop_below(&s->rng, 64), &rec),
			"remove failed");
		luf_cmp_call_end(s->c, t); /* a call flushes (immediate) before it returns */
		if (rec.tick) {
			if (s->nrec[di] == R_RECS)
				s->nrec[di] = 0; /* forget the oldest: never reused */
			s->rec[di][s->nrec[di]++] = rec;
		}
	} else if (k < 50) { /* a mapped frame of this CPU is unmapped (reclaim) */
		unsigned int n = s->nheld[cpu], i;
		long f;

		if (!n)
			return;
		i = (unsigned int)prop_below(&s->rng, n);
		f = s->held[cpu * R_HELD + i];
		s->held[cpu * R_HELD + i] = s->held[cpu * R_HELD + n - 1];
		s->nheld[cpu]--;
		PASSERT(!luf_cmp_remove(s->c, t, s->dom[s->fdom[f]], f,
					LUF_PTE_ACCESSIBLE |
					    (prop_chance(&s->rng, 1, 5) ? LUF_PTE_DIRTY : 0),
					1, NULL),
			"remove of frame %ld failed", f);
		luf_cmp_call_end(s->c, t);
	} else if (k < 65) { /* a frame is handed out and mapped */
		long f;

		if (s->nheld[cpu] == R_HELD)
			return;
		f = luf_cmp_alloc(s->c, cpu, 0);
		if (f < 0)
			return;
		s->fdom[f] = di;
		s->held[cpu * R_HELD + s->nheld[cpu]++] = f;
	} else if (k < 77) { /* a range is reused: some of the domain's records */
		unsigned int n = s->nrec[di], from;

		if (!n)
			return;
		from = (unsigned int)prop_below(&s->rng, n);
		luf_cmp_pending(s->c, t, d);
		PASSERT(!luf_cmp_reuse(s->c, t, d, &s->rec[di][from], n - from), "reuse failed");
		s->nrec[di] = from;
	} else if (k < 82) { /* write permission granted in the domain */
		struct luf_cmp_rec rec;

		luf_cmp_pending(s->c, t, d);
		luf_cmp_dom_rec(s->c, d, &rec);
		PASSERT(!luf_cmp_upgrade(s->c, t, d, &rec, rec.tick ? 1 : 0,
					 prop_chance(&s->rng, 1, 2) ? LUF_ABORT_WRITE_FAULT
								    : LUF_ABORT_PROT_UPGRADE),
			"upgrade failed");
	} else if (k < 90) {
		luf_cmp_batch_end(s->c, t);
	} else if (k < 94) {
		luf_cmp_ctx_switch(s->c, cpu);
	} else if (k < 95) { /* the address space goes; a new one takes its place */
		luf_cmp_dom_put(s->c, d);
		s->dom[di] = luf_cmp_dom_new(s->c);
		PASSERT(s->dom[di] >= 0, "dom_new failed");
		PASSERT(!luf_cmp_dom_add_cpu(s->c, s->dom[di], cpu), "add cpu failed");
		s->nrec[di] = 0; /* its records go with it */
	} else {
		PASSERT(!luf_cmp_dom_add_cpu(s->c, d, cpu), "add cpu failed");
	}
}

static void r_check(const struct luf_cmp_result *r)
{
	for (int p = 0; p < LUF_CMP_NPOL; p++) {
		const struct luf_cmp_counts *ct = &r->c[p];

		for (int k = 0; k < LUF_CMP_NRULES; k++)
			PASSERT(!ct->viol[k], "%s broke %s (%llu times)",
				luf_cmp_pol_name((enum luf_cmp_pol)p),
				luf_cmp_rule_name((enum luf_cmp_rule)k), ct->viol[k]);
		PASSERT(ct->cpus >= r->bound_cpus && ct->flushes >= r->bound_ops,
			"%s below a bound: %llu CPUs (bound %llu), %llu flushes (bound %llu)",
			luf_cmp_pol_name((enum luf_cmp_pol)p), ct->cpus, r->bound_cpus, ct->flushes,
			r->bound_ops);
	}
	PASSERT(r->c[LUF_CMP_ORACLE].flushes == r->bound_ops,
		"oracle %llu flushes, flush-operation bound %llu", r->c[LUF_CMP_ORACLE].flushes,
		r->bound_ops);
	PASSERT(r->luf_errors == 0, "%ld luf calls failed", r->luf_errors);
}

struct rparam {
	unsigned int cpus, frames;
	unsigned long ugen_start;
};

static struct rparam rparams[] = {
    {8, 256, 0},
    {8, 256, (unsigned long)-100},
    {70, 2240, 0},
    {70, 2240, (unsigned long)-300},
};

ParameterizedTestParameters(cmp_property, random)
{
	return cr_make_param_array(struct rparam, rparams, sizeof(rparams) / sizeof(rparams[0]));
}

ParameterizedTest(struct rparam *p, cmp_property, random, .timeout = 120)
{
	unsigned int seeds = prop_nr_seeds(200);
	unsigned long long flushes = 0, deferred = 0;

	for (unsigned int i = 0; i < seeds; i++) {
		struct luf_cmp_config cfg = {.nr_cpus = p->cpus,
					     .nr_frames = p->frames,
					     .nr_keys = 1024,
					     .ugen_start = p->ugen_start};
		struct rstate s = {.cpus = p->cpus};
		struct luf_cmp_result r;

		prop_rng_init(&s.rng, prop_seed(p->cpus * 31 + (p->ugen_start != 0), i));
		cr_assert_eq(luf_cmp_create(&cfg, &s.c), 0);
		s.t = calloc(p->cpus, sizeof(*s.t));
		s.held = calloc((size_t)p->cpus * R_HELD, sizeof(*s.held));
		s.nheld = calloc(p->cpus, sizeof(*s.nheld));
		s.fdom = calloc(p->frames, sizeof(*s.fdom));
		cr_assert(s.t && s.held && s.nheld && s.fdom);
		for (unsigned int d = 0; d < R_DOMS; d++) {
			s.dom[d] = luf_cmp_dom_new(s.c);
			cr_assert_geq(s.dom[d], 0);
			cr_assert_eq(luf_cmp_dom_add_cpu(s.c, s.dom[d], d % p->cpus), 0);
		}
		for (unsigned int cpu = 0; cpu < p->cpus; cpu++)
			cr_assert_eq(luf_cmp_task_init(s.c, &s.t[cpu], cpu), 0);
		for (prop_step = 0; prop_step < 4000; prop_step++)
			r_step(&s);
		for (unsigned int cpu = 0; cpu < p->cpus; cpu++)
			luf_cmp_task_fini(s.c, &s.t[cpu]);
		luf_cmp_result(s.c, &r);
		r_check(&r);
		flushes += r.c[LUF_CMP_LUF].flushes;
		deferred += (unsigned long long)luf_stats_sum(luf_cmp_luf(s.c), LUF_STAT_DEFERRED);
		luf_cmp_destroy(s.c);
		free(s.t);
		free(s.held);
		free(s.nheld);
		free(s.fdom);
	}
	/* the streams exercise what they are for */
	cr_assert_gt(deferred, 0, "no removal was deferred");
	cr_assert_gt(flushes, 0, "luf never flushed");
}
