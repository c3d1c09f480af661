// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_model.h - the replay model: tasks placed on simulated
 * CPUs, address spaces with their mappings and stale ranges, driving the
 * policy simulator (lib/sim/luf_cmp.h), which holds the four flush
 * policies, the lower bounds and the checker.
 *
 * Every event becomes at most four kinds of step (rp_model.c):
 *   removal   translations of [start, end) removed or downgraded, with the
 *             protection they had: luf_cmp_remove() returns the range's
 *             stale record (the tick and the address space's CPUs then);
 *   reuse     [start, end) handed out again (mmap, brk, mremap target):
 *             luf_cmp_reuse() of the range's records (S1);
 *   upgrade   write permission granted on [start, end): luf_cmp_upgrade() (S2);
 *   batch end the task's run of consecutive unmaps ends: luf_cmp_batch_end()
 *             (writable entries must be gone: S3).
 * An address space's CPU mask only grows, so a range's newest record
 * covers every older one: each stale range keeps one record.
 */
#ifndef RP_MODEL_H
#define RP_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "luf_cmp.h"
#include "rp_ivmap.h"
#include "rp_parse.h"

#define RP_PAGE 4096ul
#define RP_MAX_CPUS 4096u

struct rp_mm {
	unsigned long id;
	int refs;	       /* tasks using it */
	int dom;	       /* its domain in the policy simulator */
	struct rp_ivmap vmas;  /* value: unsigned long prot */
	struct rp_ivmap stale; /* value: struct luf_cmp_rec */
	unsigned long brk;     /* current break, 0 = not seen yet */
	size_t stale_gc;       /* stale ranges after the last clean-up */
};

struct rp_task {
	struct rp_task *next; /* hash chain */
	long pid;
	struct rp_mm *mm;
	struct luf_cmp_task ct; /* its CPU, open call and batch */
	int in_unmap_run;	/* last event was an unmap-type call */
	int clone_pending;	/* a clone-family call in flight */
	unsigned long clone_flags;
	long clone_child; /* child adopted while the call was in flight */
};

struct rp_stats {
	unsigned long long lines, events, calls, failed, ignored, signals, exits, skipped;
	unsigned long long removals, reuse_points, upgrade_points, batch_ends;
	unsigned long long by_sys[RP_SYS_NR];
	unsigned long long tasks, mms, clones;
	unsigned long long proc_events; /* clone-family, execve, exit calls */
	unsigned long long orphans;	/* pids without a clone record read as threads */
	unsigned long long unparented;	/* ... read as processes (no process events yet) */
	unsigned long long luf_deferred, luf_no_flush, luf_skipped, luf_aborts;
	unsigned long long peak_stale, peak_vmas;
	unsigned long long bat_redundant; /* kernel flush_tlb_batched_pending() flushes left out */
};

struct rp_model {
	unsigned int nr_cpus;
	struct luf_cmp *cmp;	   /* the policies, bounds and checker */
	struct luf_cmp_result res; /* filled by rp_model_finish() */
	struct rp_task **hash;
	size_t hash_size;
	unsigned long next_cpu, next_mm;
	struct rp_task *root;	  /* the first task: unknown pids join its address space */
	struct luf_cmp_rec *recs; /* scratch: a range's records */
	size_t cap_recs;
	struct rp_stats st;
	unsigned int live_mms;
	unsigned long line; /* the trace line of the event being applied (explain) */
	long pid;	    /* ... its pid */
	const char *what;   /* ... its call */
	char where[64];	    /* ... as the explain lines show it */
};

int rp_model_init(struct rp_model *m, unsigned int nr_cpus);
void rp_model_fini(struct rp_model *m);
/* --explain: one line per flush of every policy on @f (luf_cmp_explain()). */
void rp_model_explain(struct rp_model *m, FILE *f);
/* Apply one parsed event. Return: 0, or -1 out of memory. */
int rp_model_event(struct rp_model *m, const struct rp_event *ev);
/* End of trace: close every open batch (the tasks still alive); fill m->res. */
void rp_model_finish(struct rp_model *m);

#endif /* RP_MODEL_H */
