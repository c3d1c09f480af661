// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_model.h - the replay model: tasks placed on simulated
 * CPUs, address spaces with their mappings and stale ranges, and the four
 * flush policies run side by side on the same events.
 *
 * Every event becomes at most four kinds of step (rp_policy.c):
 *   removal   translations of [start, end) removed or downgraded, with the
 *             protection they had: a stale entry may remain on every CPU
 *             of the address space until a flush;
 *   reuse     [start, end) handed out again (mmap, brk, mremap target):
 *             no CPU may still hold a stale entry for it (S1);
 *   upgrade   write permission granted on [start, end) (S2);
 *   batch end the task's run of consecutive unmaps ends: the pages are
 *             freed, so no writable entry may still be cached (S3).
 * The checker keeps, per stale range, the newest removal tick per CPU,
 * and per policy, the tick of each CPU's last flush: a CPU is stale for a
 * range iff its flush tick is older than the range's removal tick.
 */
#ifndef RP_MODEL_H
#define RP_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "rp_bound.h"
#include "rp_ivmap.h"
#include "rp_parse.h"

#define RP_PAGE 4096ul
#define RP_MAX_CPUS 1024u
#define RP_FLUSH_CEILING 33ul /* pages: Linux's tlb_single_page_flush_ceiling */

enum rp_pol_id { RP_IMMEDIATE, RP_BATCHED, RP_LUF, RP_ORACLE, RP_NPOL };
enum rp_rule { RP_S1, RP_S2, RP_S3, RP_S4, RP_NRULES };
/* What forced a flush (--explain; rp_cause_name()). */
enum rp_cause {
	RP_C_CALL,    /* immediate: the end of a call that removed translations */
	RP_C_BATCH,   /* batched: the end of a batch (try_to_unmap_flush()) */
	RP_C_PENDING, /* batched: a later change of the address space (flush_tlb_batched_pending()) */
	RP_C_REUSE,   /* a reused range still stale (luf: abort write_other) */
	RP_C_UPGRADE,  /* write permission granted (luf: abort prot_upgrade) */
	RP_C_WRITABLE, /* a writable removal at the end of its batch (S3) */
	RP_C_UNMAP,    /* luf: inside luf_unmap() (a full per-CPU set) */
	RP_NCAUSES
};

struct rp_counts {
	unsigned long long remote;    /* nr_tlb_remote_flush */
	unsigned long long received;  /* nr_tlb_remote_flush_received */
	unsigned long long local_all; /* nr_tlb_local_flush_all */
	unsigned long long local_one; /* nr_tlb_local_flush_one (pages) */
	unsigned long long flushes;   /* flush operations (remote or local) */
	unsigned long long cpus; /* CPUs flushed: received + the caller's own in an operation */
	unsigned long long viol[RP_NRULES];
	unsigned long long by_cause[RP_NCAUSES]; /* flush operations by what forced them */
};

struct rp_pol {
	struct rp_counts c;
	uint64_t *done; /* per CPU: tick of its last flush */
};

struct rp_mm {
	unsigned long id;
	int refs;		  /* tasks using it */
	struct rp_ivmap vmas;	  /* value: unsigned long prot */
	struct rp_ivmap stale;	  /* value: uint64_t tick[nr_cpus] */
	unsigned long *cpus;	  /* CPUs that ran its tasks (never shrinks) */
	void *lcpus;		  /* the same mask as unsigned long[] */
	void *dom;		  /* struct luf_domain */
	unsigned long brk;	  /* current break, 0 = not seen yet */
	uint64_t bat_tick;	  /* newest removal (batched: pending if not flushed since) */
	unsigned long *bat_cpus;  /* batched: mm's CPUs at that removal (a CPU that joined
				  * after it cannot cache what it removed) */
	struct rp_task *bat_open; /* batched: the task whose open batch holds that removal */
	unsigned long bat_gen, bat_gen_flushed; /* mm->tlb_flush_batched: pending, flushed */
	size_t stale_gc;			/* stale ranges after the last clean-up */
};

struct rp_task {
	struct rp_task *next; /* hash chain */
	long pid;
	unsigned int cpu;
	struct rp_mm *mm;
	int in_unmap_run;	      /* last event was an unmap-type call */
	unsigned long long imm_pages; /* immediate: pages removed in this call */
	int imm_any;		      /* immediate: an accessible removal in this call */
	uint64_t bat_tick;	      /* batched: newest removal in the open batch, 0 = none */
	unsigned long *bat_mask;      /* batched: CPUs of the open batch */
	uint64_t wr_tick;	      /* checker: newest writable removal of the batch */
	unsigned long *wr_mask;
	int clone_pending; /* a clone-family call in flight */
	unsigned long clone_flags;
	long clone_child; /* child adopted while the call was in flight */
};

struct rp_luf; /* rp_luf.c */

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
	unsigned int nr_cpus, words; /* words: unsigned longs per CPU mask */
	uint64_t tick;		     /* removal and flush clock */
	struct rp_pol pol[RP_NPOL];
	uint64_t *last_removal; /* per CPU: tick of its newest removal (oracle) */
	struct rp_task **hash;
	size_t hash_size;
	unsigned long next_cpu, next_mm;
	struct rp_task *root; /* the first task: unknown pids join its address space */
	unsigned long *scratch;
	uint64_t *tscratch; /* nr_cpus ticks */
	struct rp_luf *luf;
	struct rp_stats st;
	unsigned int live_mms;
	struct rp_bound bound; /* the lower bounds (rp_bound.h) */
	enum rp_cause cause;   /* of the flushes being issued now */
	FILE *explain;	       /* --explain: one line per flush, or NULL */
	unsigned long line;    /* the trace line of the event being applied (explain) */
	long pid;	       /* ... its pid */
	const char *what;      /* ... its call */
};

int rp_model_init(struct rp_model *m, unsigned int nr_cpus);
void rp_model_fini(struct rp_model *m);
/* Apply one parsed event. Return: 0, or -1 out of memory. */
int rp_model_event(struct rp_model *m, const struct rp_event *ev);
/* End of trace: close every open batch (the tasks still alive). */
void rp_model_finish(struct rp_model *m);

/* rp_policy.c: the steps (see above). @t runs on t->cpu in t->mm. */
int rp_removal(struct rp_model *m, struct rp_task *t, unsigned long start, unsigned long end,
	       unsigned long prot, int force_flush);
void rp_removals_done(struct rp_model *m, struct rp_task *t);
int rp_reuse(struct rp_model *m, struct rp_task *t, unsigned long start, unsigned long end,
	     int upgrade);
void rp_batch_end(struct rp_model *m, struct rp_task *t);
/* @t is about to change page-table entries of its mm (flush_tlb_batched_pending()). */
void rp_pending(struct rp_model *m, struct rp_task *t);
/* Count a flush of @mask (@pages: 0 = everything) by @caller for policy @p. */
void rp_pol_flush(struct rp_model *m, enum rp_pol_id p, unsigned int caller,
		  const unsigned long *mask, unsigned long long pages);

/* rp_luf.c: the luf policy, on the real library. */
int rp_luf_init(struct rp_model *m);
void rp_luf_fini(struct rp_model *m);
int rp_luf_mm_init(struct rp_model *m, struct rp_mm *mm);
void rp_luf_mm_fini(struct rp_model *m, struct rp_mm *mm);
void rp_luf_mm_cpus(struct rp_model *m, struct rp_mm *mm); /* mm->cpus changed */
void rp_luf_unmap(struct rp_model *m, struct rp_task *t, int accessible, int writable);
void rp_luf_fold(struct rp_model *m, struct rp_task *t);
void rp_luf_settle(struct rp_model *m, struct rp_task *t, int upgrade);
void rp_luf_collect(struct rp_model *m);

static inline int rp_mask_test(const unsigned long *mask, unsigned int cpu)
{
	return (int)((mask[cpu / 64] >> (cpu % 64)) & 1);
}

static inline void rp_mask_set(unsigned long *mask, unsigned int cpu)
{
	mask[cpu / 64] |= 1ul << (cpu % 64);
}

const char *rp_pol_name(enum rp_pol_id p);
const char *rp_rule_name(enum rp_rule r);
const char *rp_cause_name(enum rp_cause c);

#endif /* RP_MODEL_H */
