// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/workloads/mdl.h - the workload models' events, driven into the
 * policy simulator (lib/sim/luf_cmp.h): it holds the policies, the bounds
 * and the checker; this layer only says, per CPU (one task each), what
 * the workloads do to frames:
 *
 *   mdl_alloc()     a frame is handed out again (reuse: S1);
 *   mdl_map()       it is mapped into an address space (a domain);
 *   mdl_remove()    one translation of a frame is removed; the frame is
 *                   freed at the CPU's next mdl_batch_end();
 *   mdl_call_end()  the end of one call (one page of reclaim or migration,
 *                   one munmap): immediate flushes here;
 *   mdl_batch_end() the end of a batch (a reclaim or migration pass):
 *                   batched flushes here, writable removals must be gone
 *                   (S3), the batch's frames are freed;
 *   mdl_wrprotect() write permission removed from mapped frames (the W^X
 *                   flip, mprotect): removals that end with the call;
 *   mdl_upgrade()   write permission granted in a domain (S2) after
 *                   flush_tlb_batched_pending();
 *   mdl_ctx_switch() a full local flush on one CPU (the same for all).
 */
#ifndef MDL_H
#define MDL_H

#include <stdint.h>
#include <stdio.h>
#include <luf/luf.h>

#include "luf_cmp.h"

struct mdl_config {
	unsigned int nr_cpus;	/* 1..LUF_MAX_CPUS */
	unsigned int nr_doms;	/* address spaces */
	unsigned int nr_frames; /* frames, dealt round-robin to the CPUs' lists */
	unsigned int nr_fast;	/* frames 0..nr_fast-1 are tier 0, the rest tier 1 */
};

struct mdl;

int mdl_create(const struct mdl_config *cfg, struct mdl **out);
/* --explain: one line per flush of every policy on @f (NULL: none). */
void mdl_explain(struct mdl *m, FILE *f);
void mdl_destroy(struct mdl *m);
/* Add @cpu to @dom's CPU mask (it ran a thread of it; never shrinks). */
void mdl_dom_add_cpu(struct mdl *m, unsigned int dom, unsigned int cpu);
unsigned int mdl_dom_weight(const struct mdl *m, unsigned int dom);

/* A frame from @cpu's list of tier @tier, or -1 if that list is empty. */
long mdl_alloc(struct mdl *m, unsigned int cpu, unsigned int tier);
/* Free frames on @cpu's list of @tier (clean + pend). */
unsigned long mdl_nr_free(const struct mdl *m, unsigned int cpu, unsigned int tier);
void mdl_map(struct mdl *m, unsigned int cpu, unsigned int frame, unsigned int dom, int writable);
void mdl_remove(struct mdl *m, unsigned int cpu, unsigned int frame);
void mdl_call_end(struct mdl *m, unsigned int cpu);
void mdl_batch_end(struct mdl *m, unsigned int cpu);
void mdl_wrprotect(struct mdl *m, unsigned int cpu, const unsigned int *frames, unsigned int n);
void mdl_upgrade(struct mdl *m, unsigned int cpu, unsigned int dom, enum luf_abort_cause cause);
void mdl_ctx_switch(struct mdl *m, unsigned int cpu);
unsigned int mdl_frame_tier(const struct mdl *m, unsigned int frame);
int mdl_frame_writable(const struct mdl *m, unsigned int frame);
unsigned int mdl_frame_dom(const struct mdl *m, unsigned int frame);

struct mdl_result {
	struct luf_cmp_counts c[LUF_CMP_NPOL];
	long luf_skipped;  /* LUF_STAT_FLUSH_SKIPPED + LUF_STAT_ALLOC_DONE */
	long luf_dropped;  /* LUF_STAT_DIET_DROPPED: CPUs dieted out of sets */
	long luf_deferred; /* LUF_STAT_DEFERRED */
	long luf_wr_flush; /* LUF_STAT_WRITABLE_FLUSH */
	long luf_alloc_flush;
	long aborts[LUF_ABORT_NR_CAUSES];
	long luf_errors; /* luf calls that returned an error (must be 0) */
	unsigned long long events;
	unsigned long long bound_cpus, bound_ops; /* the lower bounds */
};
void mdl_result(struct mdl *m, struct mdl_result *r);

/* The workloads (mdl_work.c). */
struct mdl_work_opt {
	unsigned int nr_cpus;
	unsigned long steps; /* per CPU */
	uint64_t seed;
	unsigned int ctx_permille; /* full local flushes per 1000 steps of a CPU */
	unsigned int wf_permille;  /* write faults (upgrades) per 1000 steps */
	unsigned long migrated;	   /* out: pages migrated (tiering, compaction) */
	FILE *explain;		   /* in: --explain (mdl_explain()), or NULL */
};
enum mdl_model { MDL_RECLAIM, MDL_TIERING, MDL_COMPACTION, MDL_JIT, MDL_ALLOC, MDL_NMODELS };
const char *mdl_model_name(enum mdl_model w);
const char *mdl_model_what(enum mdl_model w);
int mdl_work_run(enum mdl_model w, struct mdl_work_opt *o, struct mdl_result *r);

#endif /* MDL_H */
