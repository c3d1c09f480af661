// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/workloads/mdl.h - the workload-model engine: one event stream, four
 * TLB-flush policies counted side by side, and a safety checker.
 *
 * A workload (mdl_work.c) runs on N simulated CPUs and speaks only in the
 * engine's events; every policy sees exactly the same events:
 *
 *   mdl_alloc()     a frame is handed out again (reuse point: S1);
 *   mdl_map()       it is mapped into an address space (a domain);
 *   mdl_remove()    one translation of a frame is removed; the frame is
 *                   freed at the CPU's next mdl_batch_end();
 *   mdl_call_end()  the end of one call (one page of reclaim or migration,
 *                   one munmap): "immediate" flushes here;
 *   mdl_batch_end() the end of a batch (a reclaim or migration pass):
 *                   "batched" flushes here, writable removals must be gone
 *                   (S3), the batch's frames are freed;
 *   mdl_wrprotect() write permission removed from mapped frames (the W^X
 *                   flip): every policy flushes before the call returns;
 *   mdl_upgrade()   write permission granted in a domain (S2);
 *   mdl_ctx_switch() a full local flush on one CPU (the same for all).
 *
 * Policies:
 *   immediate  a flush of the domain's CPUs at every call end;
 *   batched    the kernel's batched unmap flush: each removal adds the
 *              domain's CPUs to the CPU's batch (set_tlb_ubc_flush_pending()),
 *              one flush of them at every batch end (try_to_unmap_flush()),
 *              none dieted; before a write upgrade or write-protect,
 *              flush_tlb_batched_pending(): if a CPU of the domain's newest
 *              removal has not flushed since, a flush of the domain's CPUs;
 *   luf        the real library with a counting backend: per CPU two
 *              struct luf_pcpu (read-only and writable removals, LUF's
 *              tlb_ubc_ro and tlb_ubc), one struct luf_freelist per CPU and
 *              tier (these also choose the frames every policy reuses),
 *              luf_abort_domain() / luf_abort_key() before upgrades;
 *   oracle     the offline minimum for the same events: a flush only where
 *              a reuse, an upgrade, a write-protect or a batch end with a
 *              writable removal meets a CPU that is still stale, and then
 *              of every stale CPU (optimal interval stabbing): it reaches
 *              the flush-operation bound, not the CPU-flush bound.
 * Bounds (bench/replay/rp_bound.h, the same source): per (CPU, stale
 * translation), [removal, reuse / upgrade / batch end / write-protect],
 * covered by a context switch in between; greedy stabbing per CPU gives the
 * fewest CPUs flushed, over all CPUs the fewest flush operations.
 *
 * Checker (as bench/replay's, on this model; lib/sim's machine stops at
 * 4096 pages per domain and 2^23 TLB slots): each frame keeps the tick of
 * its newest removal and the CPUs that may cache it; each policy keeps the
 * tick of each CPU's last flush. Reuse of a stale frame is S1, an upgrade
 * of a stale domain S2, a stale writable removal at batch end or after a
 * write-protect S3; luf's done[] going back is S4 (read at every flush).
 */
#ifndef MDL_H
#define MDL_H

#include <stdint.h>
#include <stdio.h>
#include <luf/luf.h>

enum mdl_pol { MDL_IMM, MDL_BAT, MDL_LUF, MDL_ORA, MDL_NPOL };
enum mdl_rule { MDL_S1, MDL_S2, MDL_S3, MDL_S4, MDL_NRULES };
/* What forced a flush (--explain; mdl_cause_name()). */
enum mdl_cause {
	MDL_C_CALL,    /* immediate: the end of a call (mdl_call_end()) */
	MDL_C_BATCH,   /* batched: the end of a batch (try_to_unmap_flush()) */
	MDL_C_PENDING, /* batched: flush_tlb_batched_pending() before an upgrade or write-protect */
	MDL_C_WRPROTECT, /* the write-protect call's own flush (mprotect) */
	MDL_C_REUSE,	 /* a frame handed out again while still owed (luf: allocation) */
	MDL_C_UPGRADE,	 /* write permission granted (luf: luf_abort_domain(cause)) */
	MDL_C_WRITABLE,	 /* a writable removal at its batch end (S3) */
	MDL_C_UNMAP,	 /* luf: inside luf_unmap() or a fold of a full set */
	MDL_NCAUSES
};

struct mdl_counts {
	unsigned long long remote;   /* nr_tlb_remote_flush */
	unsigned long long received; /* nr_tlb_remote_flush_received (IPIs) */
	unsigned long long local;    /* nr_tlb_local_flush_all (own CPU only) */
	unsigned long long cpus;     /* CPUs flushed: received + the caller's own in an operation */
	unsigned long long viol[MDL_NRULES];
	unsigned long long by_cause[MDL_NCAUSES]; /* flush operations (remote + local) */
};

struct mdl_config {
	unsigned int nr_cpus;	/* 1..LUF_MAX_CPUS */
	unsigned int nr_doms;	/* address spaces */
	unsigned int nr_frames; /* frames, dealt round-robin to the CPUs' lists */
	unsigned int nr_fast;	/* frames 0..nr_fast-1 are tier 0, the rest tier 1 */
	unsigned int batch_max; /* most removals in one batch */
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
	struct mdl_counts c[MDL_NPOL];
	long luf_skipped;  /* LUF_STAT_FLUSH_SKIPPED + LUF_STAT_ALLOC_DONE */
	long luf_dropped;  /* LUF_STAT_DIET_DROPPED: CPUs dieted out of sets */
	long luf_deferred; /* LUF_STAT_DEFERRED */
	long luf_wr_flush; /* LUF_STAT_WRITABLE_FLUSH */
	long luf_alloc_flush;
	long aborts[LUF_ABORT_NR_CAUSES];
	long luf_errors; /* luf calls that returned an error (must be 0) */
	unsigned long long events;
	unsigned long long bound_cpus, bound_ops; /* the lower bounds (bench/replay/rp_bound.h) */
};
void mdl_result(const struct mdl *m, struct mdl_result *r);

const char *mdl_pol_name(enum mdl_pol p);
const char *mdl_abort_name(enum luf_abort_cause c);
const char *mdl_cause_name(enum mdl_cause c);

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
