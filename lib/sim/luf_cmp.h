// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/luf_cmp.h - the policy simulator: one stream of unmap events,
 * four TLB-flush policies counted side by side on it, the two lower bounds
 * and one checker of the safety rules, on up to LUF_MAX_CPUS CPUs.
 *
 * luf_sim.h's machine runs the real luf on real (simulated) TLBs and data,
 * which caps it at small sizes; this simulator keeps only what decides a
 * flush: which CPUs may still cache a translation removed at which tick.
 * Its drivers are the workload models (bench/workloads) and the trace
 * replay (bench/replay); they say what happens, in the kernel's terms, and
 * this file decides what each policy flushes and whether that was safe.
 *
 * Time is a tick counter, bumped by every removal and every flush. A
 * removal returns a stale record, struct luf_cmp_rec: its tick and the
 * snapshot of its domain's CPU mask (the CPUs that may cache it; a CPU
 * that joins the domain later cannot). The record is owed a flush on each
 * of those CPUs until the point where it must be gone (its deadline):
 *   reuse     the memory is handed out again (S1): luf_cmp_alloc() of a
 *             frame, luf_cmp_reuse() of an address range;
 *   upgrade   write permission granted in the domain (S2): luf_cmp_upgrade();
 *   batch end a writable or dirty removal's frame is freed (S3):
 *             luf_cmp_batch_end().
 *
 * Policies (each rule named after the kernel function it stands for):
 *   immediate  tlb_finish_mmu(): at the end of each call that removed
 *              accessible translations (luf_cmp_call_end()), one flush of
 *              the CPUs of its removals;
 *   batched    the batched unmap flush of mm/rmap.c: B1
 *              set_tlb_ubc_flush_pending() at each removal adds the
 *              domain's CPUs to the task's batch and marks the domain
 *              pending; B2 try_to_unmap_flush() at the batch end flushes
 *              them (left out, and counted in bat_redundant, when another
 *              path already flushed every CPU of it); B3
 *              flush_tlb_batched_pending() (luf_cmp_pending()) before
 *              another task changes the domain's entries: if a CPU of the
 *              domain's newest removal has not flushed since, one flush
 *              of the domain's CPUs; B4 a reuse or upgrade that meets a
 *              record still owed flushes the domain's CPUs first;
 *   luf        the real library with a counting backend: per CPU a
 *              struct luf_pcpu for read-only removals (deferred: LUF's
 *              tlb_ubc_ro) and one for writable ones (flushed at the
 *              batch end: tlb_ubc), struct luf_freelist per CPU and tier
 *              when the simulator owns frames, luf_abort_domain() before
 *              an upgrade and before reusing a range still owed;
 *   oracle     a flush only where a deadline meets a CPU still stale,
 *              then of every stale CPU: it reaches the flush-operation
 *              bound, not the CPU-flush bound.
 * Bounds: each (CPU, record) is an interval [removal, deadline]; a context
 * switch of that CPU inside it covers it. Stabbing each CPU's intervals
 * greedily at their deadlines gives the fewest CPU flushes (IPIs received,
 * plus the caller's own CPU when flushed within an operation) any safe
 * policy needs; stabbing all CPUs' together, the fewest flush operations.
 *
 * Checker: at every deadline, each policy must have flushed every CPU of
 * the record since its tick (else S1, S2 or S3 for that policy); luf's
 * done[] must never go back (S4), read at each of its flushes, at each
 * context switch and at luf_cmp_result().
 *
 * Cost: a flush of a domain's CPUs is recorded on the mask snapshot when
 * that reaches many CPUs, so a flush and a check cost O(domains in the
 * flush) or O(cpumask words), not O(CPUs); memory grows with domains,
 * mask snapshots (at most one per CPU added to a live domain), tasks and
 * frames.
 *
 * Errors: functions that return int return 0 or a negative errno: -EINVAL
 * for an argument out of range (nothing changes), -ENOMEM. luf calls that
 * fail are counted in luf_errors (a correct driver sees 0).
 * Concurrency: none; one thread drives a simulator.
 */
#ifndef LUF_CMP_H
#define LUF_CMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <luf/luf.h>

enum luf_cmp_pol { LUF_CMP_IMMEDIATE, LUF_CMP_BATCHED, LUF_CMP_LUF, LUF_CMP_ORACLE, LUF_CMP_NPOL };
enum luf_cmp_rule { LUF_CMP_S1, LUF_CMP_S2, LUF_CMP_S3, LUF_CMP_S4, LUF_CMP_NRULES };

/* What forced a flush (explain lines, luf_cmp_cause_name()). */
enum luf_cmp_cause {
	LUF_CMP_C_CALL,	    /* immediate: the end of a call (tlb_finish_mmu()) */
	LUF_CMP_C_BATCH,    /* batched: the end of a batch (try_to_unmap_flush()) */
	LUF_CMP_C_PENDING,  /* batched: flush_tlb_batched_pending() */
	LUF_CMP_C_REUSE,    /* memory handed out again while still owed */
	LUF_CMP_C_UPGRADE,  /* write permission granted (luf: luf_abort_domain()) */
	LUF_CMP_C_WRITABLE, /* a writable removal at its batch end (S3) */
	LUF_CMP_C_UNMAP,    /* luf: inside luf_unmap() (a full set) */
	LUF_CMP_NCAUSES
};

/* A policy's counts; the first four are the kernel's vmstat names. */
struct luf_cmp_counts {
	unsigned long long remote;    /* nr_tlb_remote_flush: operations reaching another CPU */
	unsigned long long received;  /* nr_tlb_remote_flush_received: IPIs */
	unsigned long long local_all; /* nr_tlb_local_flush_all: caller's CPU, whole TLB */
	unsigned long long local_one; /* nr_tlb_local_flush_one: caller's CPU, pages (<= 33) */
	unsigned long long flushes;   /* flush operations (local, remote or both) */
	unsigned long long cpus;      /* CPUs flushed: received + the caller's own */
	unsigned long long viol[LUF_CMP_NRULES];
	unsigned long long by_cause[LUF_CMP_NCAUSES]; /* flush operations */
};

struct luf_cmp_mask; /* a domain's CPU mask as it was at some tick (immutable) */

/*
 * A stale record: the CPUs of @mask may cache a translation removed at
 * @tick (0: none) from domain @dom in its incarnation @gen (so that a
 * record of another domain, or of a dropped one whose id came back, is
 * refused without touching @mask).
 */
struct luf_cmp_rec {
	uint64_t tick;
	const struct luf_cmp_mask *mask;
	int dom;
	unsigned long gen;
};

#define LUF_CMP_SET_MAX 64u /* snapshots in an open call or batch before it turns to a bitmask */

/* The CPUs of an open call or batch: a few snapshots (newest tick each), or a bitmask. */
struct luf_cmp_set {
	struct luf_cmp_mask *obj[LUF_CMP_SET_MAX];
	uint64_t tick[LUF_CMP_SET_MAX];
	unsigned int n;
	bool wide, any;
	uint64_t wide_tick; /* newest removal, when wide */
	unsigned long *bits;
};

/*
 * A task: the context of one call and one batch (the kernel's current and
 * its tlb_ubc). Embedded by the driver; luf_cmp_task_init() fills it.
 */
struct luf_cmp_task {
	unsigned int cpu;	      /* the CPU it runs on */
	struct luf_cmp_set imm, bat;  /* open call (immediate), open batch (batched) */
	unsigned long long imm_pages; /* pages removed in the open call */
	struct luf_cmp_rec *wr;	      /* writable removals of the open batch (S3) */
	unsigned int nr_wr, cap_wr;
	bool open;		/* a removal since the last batch end */
	unsigned long batch_id; /* names the open batch (B3 skips the task's own) */
};

struct luf_cmp_config {
	unsigned int nr_cpus;	  /* 1..LUF_MAX_CPUS */
	unsigned int nr_frames;	  /* frames the simulator owns (0: none), dealt round-robin */
	unsigned int nr_fast;	  /* frames 0..nr_fast-1 are tier 0, the rest tier 1 */
	unsigned int nr_keys;	  /* luf key table: 2..65536 (0: 65536) */
	unsigned long ugen_start; /* the ugen luf starts at (tests: just below the wrap) */
	bool frames_by_id;	  /* frames are named by the driver (a kernel trace's pfns):
				   * not on luf's free lists; luf_cmp_take() hands one out */
	unsigned int lazy_skip;	  /* 1 << policy: its flushes do not interrupt lazy-TLB
				   * CPUs (x86's flush_tlb_multi() without freed_tables) */
};

struct luf_cmp;

/* luf_cmp_create() - a simulator with no domain. Return: 0, -EINVAL, -ENOMEM. */
int luf_cmp_create(const struct luf_cmp_config *cfg, struct luf_cmp **out);
void luf_cmp_destroy(struct luf_cmp *c);
/* The luf instance of the luf policy (luf_stats_sum(), done). */
struct luf *luf_cmp_luf(struct luf_cmp *c);

/*
 * Explain: with @f set, one line per flush of every policy:
 *   flush POLICY CAUSE ABORT WHERE cpu N remote N cpus LIST
 * ABORT is the luf abort cause of an upgrade or reuse ("-" otherwise),
 * WHERE the driver's text for the event (luf_cmp_where(); "-" if none),
 * LIST the CPUs flushed, as ranges.
 */
void luf_cmp_explain(struct luf_cmp *c, FILE *f);
bool luf_cmp_explaining(const struct luf_cmp *c);
/* @where must live until the next call that may flush; NULL: "-". */
void luf_cmp_where(struct luf_cmp *c, const char *where);

/* ---- domains (address spaces) --------------------------------------- */

/* A new domain with no CPU. Return: its id (>= 0), or -ENOMEM. */
int luf_cmp_dom_new(struct luf_cmp *c);
/*
 * Drop domain @dom (its id may be reused). Its records must not be used
 * afterwards: its mask snapshots are freed as soon as no open call or
 * batch and no frame holds them, so memory follows the live domains.
 */
void luf_cmp_dom_put(struct luf_cmp *c, int dom);
/* @cpu ran a task of @dom (masks never shrink). Return: 0, -EINVAL, -ENOMEM. */
int luf_cmp_dom_add_cpu(struct luf_cmp *c, int dom, unsigned int cpu);
unsigned int luf_cmp_dom_weight(const struct luf_cmp *c, int dom);
/* @dom's newest removal (tick 0 if none). */
void luf_cmp_dom_rec(const struct luf_cmp *c, int dom, struct luf_cmp_rec *out);

/* ---- tasks ----------------------------------------------------------- */

int luf_cmp_task_init(struct luf_cmp *c, struct luf_cmp_task *t, unsigned int cpu);
/*
 * Ends an open batch (luf_cmp_batch_end()) and frees @t's memory; @t is then
 * refused (-EINVAL, or ignored by the void calls) until initialised again.
 */
void luf_cmp_task_fini(struct luf_cmp *c, struct luf_cmp_task *t);

/* ---- events ----------------------------------------------------------- */

/*
 * luf_cmp_remove() - @t removes translations of @dom covering @pages pages,
 * with @pte (LUF_PTE_ACCESSIBLE, LUF_PTE_WRITABLE, LUF_PTE_DIRTY): luf_unmap()
 * on @t's CPU; an accessible removal also starts a record (*@out, may be
 * NULL), joins @t's open call and batch, marks the domain pending (B1).
 * @frame >= 0: a frame of the simulator, freed at the next batch end on
 * @t's CPU (a driver that frees frames runs one task per CPU); removed
 * again before that, it keeps the newest record and is freed once.
 * Return: 0; -EINVAL for a bad or dropped domain, a task not set up (or
 * ended) or a frame out of range (nothing changes); -ENOMEM.
 */
int luf_cmp_remove(struct luf_cmp *c, struct luf_cmp_task *t, int dom, long frame, unsigned int pte,
		   unsigned long pages, struct luf_cmp_rec *out);
/* The end of @t's call: immediate flushes its removals. */
void luf_cmp_call_end(struct luf_cmp *c, struct luf_cmp_task *t);
/*
 * The end of @t's batch: luf_cmp_call_end(), batched's B2, luf folds its
 * writable then read-only set, writable records must be gone (S3), the
 * CPU's removed frames go to its free lists under the fold's key.
 */
void luf_cmp_batch_end(struct luf_cmp *c, struct luf_cmp_task *t);
/* B3: @t is about to change page-table entries of @dom. */
void luf_cmp_pending(struct luf_cmp *c, struct luf_cmp_task *t, int dom);
/*
 * Deadlines of the records @recs[0..@n) of @dom, met by @t:
 * luf_cmp_reuse() (S1: memory handed out again; luf_abort_domain(
 * LUF_ABORT_WRITE_OTHER) only if luf still owes one of them) and
 * luf_cmp_upgrade() (S2: write granted; luf_abort_domain(@cause) always).
 * Return: 0; -EINVAL (nothing changes) for a bad or dropped domain, a task
 * not set up, a bad cause, or a record that is not one of @dom's (records
 * of a dropped domain are invalid: luf_cmp_dom_put()).
 */
int luf_cmp_reuse(struct luf_cmp *c, struct luf_cmp_task *t, int dom,
		  const struct luf_cmp_rec *recs, size_t n);
int luf_cmp_upgrade(struct luf_cmp *c, struct luf_cmp_task *t, int dom,
		    const struct luf_cmp_rec *recs, size_t n, enum luf_abort_cause cause);
/*
 * @cpu enters (@lazy) or leaves lazy-TLB mode: a kernel thread or idle runs
 * on the last mm. A policy of luf_cmp_config.lazy_skip flushes it without an
 * IPI (it flushes at its next switch, before user space runs): not counted
 * in received, cpus or the explain's remote.
 */
void luf_cmp_cpu_lazy(struct luf_cmp *c, unsigned int cpu, bool lazy);
/* A full local flush of @cpu (context switch), the same for every policy. */
void luf_cmp_ctx_switch(struct luf_cmp *c, unsigned int cpu);
/* Does any policy, or the CPU-flush bound, still owe @rec a flush? */
bool luf_cmp_rec_live(struct luf_cmp *c, const struct luf_cmp_rec *rec);

/* ---- frames (luf_cmp_config.nr_frames > 0) ---------------------------- */

/*
 * luf_cmp_alloc() - a frame from @cpu's free list of @tier with
 * luf_alloc(LUF_ALLOC_MAY_FLUSH): its last record meets its deadline (S1).
 * Return: the frame, or -1 if that list is empty, @cpu or @tier is out of
 * range (tiers: 2 when 0 < nr_fast < nr_frames, else 1), or luf failed.
 */
long luf_cmp_alloc(struct luf_cmp *c, unsigned int cpu, unsigned int tier);
unsigned long luf_cmp_nr_free(const struct luf_cmp *c, unsigned int cpu, unsigned int tier);
/*
 * luf_cmp_take() - frames_by_id: @frame is handed out again on @cpu (the
 * kernel allocated that page): its last record meets its deadline (S1).
 * luf, as the LUF page allocator does with a pend folio, checks the key
 * the frame was freed under and flushes it (luf_key_flush()) if still owed.
 * Return: 0; -EINVAL for a bad @cpu or @frame or a simulator without
 * frames_by_id; -EBUSY if @frame waits for its batch end (not freed yet:
 * nothing changes).
 */
int luf_cmp_take(struct luf_cmp *c, unsigned int cpu, unsigned long frame);
/* 0 or 1; 0 also for a frame out of range. */
unsigned int luf_cmp_frame_tier(const struct luf_cmp *c, unsigned int frame);

/* ---- results --------------------------------------------------------- */

struct luf_cmp_result {
	struct luf_cmp_counts c[LUF_CMP_NPOL];
	unsigned long long bound_cpus, bound_ops; /* the two lower bounds */
	unsigned long long removals;		  /* accessible removals */
	unsigned long long bat_redundant; /* batched flushes the kernel would do on covered CPUs */
	long luf_errors;		  /* luf calls that failed (must be 0) */
};
void luf_cmp_result(struct luf_cmp *c, struct luf_cmp_result *r);
/* CPU-mask snapshots allocated now (what memory follows: see luf_cmp_dom_put()). */
unsigned long luf_cmp_nr_masks(const struct luf_cmp *c);

const char *luf_cmp_pol_name(enum luf_cmp_pol p);
const char *luf_cmp_rule_name(enum luf_cmp_rule r);
const char *luf_cmp_cause_name(enum luf_cmp_cause c);
const char *luf_cmp_abort_name(enum luf_abort_cause c);

#endif /* LUF_CMP_H */
