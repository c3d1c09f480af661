// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/luf_sim.h - a simulated multi-CPU machine that drives the real
 * luf code, and a checker of luf's safety contract (docs/DESIGN.md section 5).
 *
 * The machine has 1..1024 CPUs, each with a software TLB; address spaces
 * (domains) with a page table, a struct luf_domain and the mask of CPUs
 * that ran them; and a pool of frames whose descriptors embed struct
 * luf_folio and which live on luf's deferred free lists (one struct
 * luf_freelist and one struct luf_pcpu per CPU). luf reaches the machine
 * only through struct luf_arch_ops: flush clears the TLBs of the CPUs in
 * the mask and counts an IPI for each remote one.
 *
 * Every frame holds a stamp, its data: the object (an anonymous page's
 * identity) and the version written last. A read through a TLB entry
 * checks the stamp it finds against what the entry was filled for, so a
 * stale entry that reaches a reused or diverged frame is seen at once.
 *
 * The checker reports, with the CPU, the frame and the page:
 *   S1  a frame handed out (or put on a clean list) while a CPU may still
 *       translate to it; a read through a stale entry that reached a
 *       reused frame;
 *   S2  a write made possible while a stale translation exists: a write
 *       through a writable entry after the protection was lowered, write
 *       permission granted (fault, mprotect, migration remap) while another
 *       CPU maps the page to an older frame, a frame written by another
 *       path while a CPU translates to it, a read of stale data;
 *   S3  a writable or dirty entry for a frame freed onto a free list;
 *   S4  done[cpu] going backwards, or not reaching a flush's ugen;
 *   L1  a MAY_FLUSH allocation failing while pend frames exist, or leaving
 *       fewer clean frames than min(reserve, clean frames before): the
 *       reserve handed to a caller that may flush; a no-flush allocation
 *       that flushed.
 *
 * Every operation returns 0 or a negative errno: -EINVAL for a bad CPU,
 * domain, page, frame or argument (nothing changes); -EFAULT for an access
 * the protection forbids (a segfault); -EAGAIN or -EBUSY when a page is
 * being reclaimed or migrated by another operation; -ENOMEM when the
 * CPU's free list cannot supply a frame; -ENOENT when there is nothing to
 * act on; or the error of a flush that failed (see flush_fail_permille).
 * Concurrency: each CPU's operations must come from one thread at a time
 * (its luf_pcpu and free list have one owner); different CPUs may run in
 * parallel threads (luf_sim_run_threaded()).
 */
#ifndef LUF_SIM_H
#define LUF_SIM_H

#include <stdint.h>
#include <stdio.h>
#include <luf/luf.h>

#define LUF_SIM_MAX_CPUS 1024u
#define LUF_SIM_MAX_DOMAINS 64u
#define LUF_SIM_MAX_PAGES 4096u
#define LUF_SIM_MAX_FRAMES (1u << 20)
#define LUF_SIM_MAX_TLB 4096u
#define LUF_SIM_MAX_RANGE 16u /* pages per mprotect/munmap/mmap/mremap */

/* VMA protections, in increasing order. */
enum luf_sim_prot {
	LUF_SIM_PROT_NONE = 0,
	LUF_SIM_PROT_READ = 1,
	LUF_SIM_PROT_RW = 2,
};

/* struct luf_sim_config.options */
#define LUF_SIM_OPT_LINK_IN_FRAME \
	0x1u /* sim-local mutant: free writes a link word into the frame */

/* Flags of faults, reads, writes and migrations. */
#define LUF_SIM_F_WRITE 0x1u  /* luf_sim_fault(): fault in for writing */
#define LUF_SIM_F_ATOMIC 0x2u /* allocate without LUF_ALLOC_MAY_FLUSH */

struct luf_sim_config {
	unsigned int nr_cpus;		  /* 1..LUF_SIM_MAX_CPUS */
	unsigned int nr_domains;	  /* 1..LUF_SIM_MAX_DOMAINS */
	unsigned int nr_pages;		  /* virtual pages per domain, 1..LUF_SIM_MAX_PAGES */
	unsigned int nr_frames;		  /* 1..LUF_SIM_MAX_FRAMES, dealt round-robin to CPUs */
	unsigned int nr_keys;		  /* key table size, 2..65536 */
	unsigned int tlb_entries;	  /* TLB capacity per CPU, 1..LUF_SIM_MAX_TLB */
	unsigned int fold_threshold;	  /* luf_pcpu_init() threshold, >= 1 */
	unsigned int reserve;		  /* clean frames each free list keeps back */
	unsigned int flush_fail_permille; /* luf-driven flushes that fail with -EIO, 0..1000 */
	unsigned int options;		  /* LUF_SIM_OPT_* */
	unsigned long ugen_start;		  /* ugen the instance starts at */
};

/* Fill @cfg with a small machine: 4 CPUs, 2 domains of 32 pages, 48 frames. */
void luf_sim_config_default(struct luf_sim_config *cfg);

enum luf_sim_rule {
	LUF_SIM_OK = 0,
	LUF_SIM_S1,
	LUF_SIM_S2,
	LUF_SIM_S3,
	LUF_SIM_S4,
	LUF_SIM_L1,
	LUF_SIM_NR_RULES
};

/* "S1", ..., "L1", "ok"; "?" for a value out of range. */
const char *luf_sim_rule_name(int rule);

struct luf_sim_violation {
	enum luf_sim_rule rule;
	unsigned int cpu; /* the CPU whose operation found it */
	unsigned long op; /* operations completed before it (luf_sim_nr_ops()) */
	char msg[256];
};

struct luf_sim;

/*
 * luf_sim_create() - build a machine: every page of every domain mapped
 * read-write and not yet faulted in, every frame clean on a free list.
 * Return: 0 and *@out set; -EINVAL for a NULL argument or a value out of
 * range (nr_cpus * nr_domains * nr_pages is limited to 2^23 TLB slots);
 * -ENOMEM.
 */
int luf_sim_create(const struct luf_sim_config *cfg, struct luf_sim **out);
void luf_sim_destroy(struct luf_sim *sim);

/* ---- operations: each runs on CPU @cpu, as that CPU ---------------- */

/*
 * Read / write page @page of domain @dom through @cpu's TLB. A miss walks
 * the page table and fills the TLB; a missing page is faulted in (a new
 * zero page or the content from swap), a write to a read-only PTE of a
 * writable VMA upgrades it (luf_abort_domain(LUF_ABORT_WRITE_FAULT)
 * first). @flags: LUF_SIM_F_ATOMIC. @stamp (may be NULL): the data read.
 */
int luf_sim_read(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		 unsigned int flags, uint64_t *stamp);
int luf_sim_write(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		  unsigned int flags);
/* Fault @page in (LUF_SIM_F_WRITE: writable) and fill @cpu's TLB, without accessing it. */
int luf_sim_fault(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		  unsigned int flags);

/*
 * Reclaim: clear @page's PTE (read-only or writable) and luf_unmap() it into
 * @cpu's batch. The frame is freed, and the page's content saved to swap,
 * when the batch is folded (luf_sim_fold(), or any operation of @cpu that
 * folds). -ENOENT if the page is not present.
 */
int luf_sim_reclaim(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page);
/* luf_pcpu_fold() @cpu's batch and luf_free() its frames under the key. */
int luf_sim_fold(struct luf_sim *sim, unsigned int cpu);
/*
 * Migrate @page to a new frame: unmap, luf_abort_domain(LUF_ABORT_MOVE),
 * copy, remap, free the old frame. @flags: LUF_SIM_F_ATOMIC.
 */
int luf_sim_migrate(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		    unsigned int flags);
/*
 * Change the protection of @npages pages from @page to @prot: a downgrade
 * settles the domain first (luf_domain_settle()), an upgrade to RW aborts
 * it (luf_abort_domain(LUF_ABORT_PROT_UPGRADE)); present PTEs that lose
 * permissions are flushed from every CPU that ran the domain. -ENOMEM if a
 * page of the range is not mapped.
 */
int luf_sim_mprotect(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		     unsigned int npages, unsigned int prot);
/* Unmap @npages pages (deferring read-only PTEs' flushes) and free their frames. */
int luf_sim_munmap(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		   unsigned int npages);
/*
 * Map the unmapped pages of the range with @prot (settles the domain first:
 * luf_abort_domain(LUF_ABORT_PROT_UPGRADE)); mapped ones are left alone.
 * -EEXIST if every page is mapped, -EBUSY if one is busy.
 */
int luf_sim_mmap(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		 unsigned int npages, unsigned int prot);
/*
 * Move the translations of @npages pages from @from to the unmapped pages
 * at @to (settles the domain first: luf_abort_domain(LUF_ABORT_MOVE)).
 */
int luf_sim_mremap(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int from,
		   unsigned int to, unsigned int npages);
/*
 * Write frame @frame, which must sit on @cpu's free list, by another path:
 * @cause LUF_ABORT_WRITE_OTHER (a file write), LUF_ABORT_POISON or
 * LUF_ABORT_INIT_ON_FREE. luf_abort_key() first. -ENOENT if the frame is
 * not on @cpu's free list.
 */
int luf_sim_frame_write(struct luf_sim *sim, unsigned int cpu, unsigned int frame,
			unsigned int cause);
/*
 * Context switch: a local flush of @cpu's whole TLB. Takes a new ugen
 * before clearing and marks @cpu done with it afterwards
 * (luf_local_flush_begin() / luf_local_flush_end(): __luf_ugen_new() and
 * __luf_done_mark_cpu()).
 */
int luf_sim_ctx_switch(struct luf_sim *sim, unsigned int cpu);
/* Drop @cpu's TLB entry for @page, as a TLB replacement would. -ENOENT if none. */
int luf_sim_evict(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page);

/* ---- inspection --------------------------------------------------- */

/* PTE / TLB entry flags reported by luf_sim_pte() and luf_sim_tlb(). */
#define LUF_SIM_ACCESSIBLE 0x1u
#define LUF_SIM_WRITABLE 0x2u
#define LUF_SIM_DIRTY 0x4u

/* The frame @page maps and its flags. -ENOENT if not present, -EINVAL. */
int luf_sim_pte(struct luf_sim *sim, unsigned int dom, unsigned int page, unsigned int *frame,
		unsigned int *flags);
/* The frame @cpu's TLB translates @page to. -ENOENT if no entry, -EINVAL. */
int luf_sim_tlb(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		unsigned int *frame, unsigned int *flags);

enum luf_sim_frame_state {
	LUF_SIM_FRAME_IN_USE = 0, /* mapped, or being mapped or copied */
	LUF_SIM_FRAME_BATCHED,	  /* unmapped, waiting in a CPU's batch for the fold */
	LUF_SIM_FRAME_CLEAN,	  /* on a free list, no flush owed */
	LUF_SIM_FRAME_PEND,	  /* on a free list, a flush owed */
};
/* The state of @frame (CLEAN/PEND read luf's folio state: owner's view). -EINVAL. */
int luf_sim_frame_state(struct luf_sim *sim, unsigned int frame);
/* The frame @nth (modulo the count) on @cpu's free list, pend folios first. -ENOENT. */
int luf_sim_free_frame(struct luf_sim *sim, unsigned int cpu, unsigned int nth);
/* Clean and pend folios on @cpu's free list. -EINVAL. */
int luf_sim_nr_free(struct luf_sim *sim, unsigned int cpu, unsigned long *clean,
		    unsigned long *pend);

unsigned long luf_sim_ipis(const struct luf_sim *sim, unsigned int cpu); /* IPIs received */
unsigned long luf_sim_luf_flushes(const struct luf_sim *sim); /* ops->flush calls that succeeded */
unsigned long luf_sim_mm_flushes(const struct luf_sim *sim);  /* the sim's own shootdowns */
struct luf *luf_sim_luf(struct luf_sim *sim);		      /* the instance (stats, done) */
long luf_sim_stat(const struct luf_sim *sim, enum luf_stat_item item); /* summed over CPUs */
/* Make the next @n luf-driven flushes fail with -EIO. */
void luf_sim_fail_flushes(struct luf_sim *sim, unsigned int n);

/* ---- checker ------------------------------------------------------ */

/* Violations of @rule found so far (LUF_SIM_OK: of every rule). */
unsigned long luf_sim_violations(const struct luf_sim *sim, int rule);
/* The first violation, or NULL if none. */
const struct luf_sim_violation *luf_sim_first_violation(const struct luf_sim *sim);
/* Operations completed (each public operation counts one, whatever it returned). */
unsigned long luf_sim_nr_ops(const struct luf_sim *sim);

/* ---- histories and schedulers -------------------------------------- */

enum luf_sim_op_kind {
	LUF_SIM_OP_READ,
	LUF_SIM_OP_WRITE,
	LUF_SIM_OP_FAULT,
	LUF_SIM_OP_RECLAIM,
	LUF_SIM_OP_FOLD,
	LUF_SIM_OP_MIGRATE,
	LUF_SIM_OP_MPROTECT,
	LUF_SIM_OP_MUNMAP,
	LUF_SIM_OP_MMAP,
	LUF_SIM_OP_MREMAP,
	LUF_SIM_OP_FRAME_WRITE,
	LUF_SIM_OP_CTX_SWITCH,
	LUF_SIM_OP_EVICT,
	LUF_SIM_OP_NR
};

/*
 * One operation of a history. @arg: flags (read, write, fault, migrate),
 * a protection (mprotect, mmap), or cause | nth << 8 (frame_write: the
 * nth frame of the CPU's free list). @rng seeds the flush failures drawn
 * while it runs, so a history replays exactly. Any field may hold any
 * value: luf_sim_exec() rejects what is out of range.
 */
struct luf_sim_op {
	uint32_t kind, cpu, dom, page, page2, npages, arg;
	int32_t ret; /* filled in by luf_sim_exec() callers that record it */
	uint64_t rng;
};

/* Run one operation. Return: the operation's result; -EINVAL for a bad kind or field. */
int luf_sim_exec(struct luf_sim *sim, const struct luf_sim_op *op);
/* "cpu 3 reclaim d1:p17 -> 0" into @buf (always terminated; any op). */
void luf_sim_op_format(const struct luf_sim_op *op, char *buf, size_t len);

/* Relative weights of the operation kinds in random histories. */
struct luf_sim_mix {
	unsigned int weight[LUF_SIM_OP_NR];
};
void luf_sim_mix_default(struct luf_sim_mix *mix);

/*
 * The next random operation for a machine of @cfg, drawn from the generator
 * state @rng (splitmix64, advanced), with the kinds weighted by @mix (NULL:
 * the default). It depends on nothing else, so a seed fixes a history.
 */
void luf_sim_gen_op(uint64_t *rng, const struct luf_sim_config *cfg, const struct luf_sim_mix *mix,
		    struct luf_sim_op *op);

struct luf_sim_result {
	enum luf_sim_rule rule;		/* first violation, LUF_SIM_OK if none */
	struct luf_sim_violation first; /* valid if rule != LUF_SIM_OK */
	uint64_t seed;
	unsigned long ops_run;	  /* operations executed (all threads) */
	unsigned long ops_ok;	  /* of which returned 0 */
	unsigned long fail_at;	  /* index of the operation that tripped the checker */
	unsigned long shrunk_len; /* shortest failing history found (deterministic) */
	unsigned long luf_flushes, mm_flushes, ipis;
	long deferred, aborts, alloc_flushes;
};

/* luf_sim_run() flags */
#define LUF_SIM_RUN_SHRINK 0x1u /* on a violation, shrink the history and print it */

/*
 * luf_sim_run() - the deterministic scheduler: one thread, @nr_ops random
 * operations from @seed (splitmix64), stopping at the first violation.
 * With LUF_SIM_RUN_SHRINK, the failing prefix is shrunk (chunks of it
 * removed while the same rule still fails) and the report, shortest
 * history first, then the last operations of the original run, is written
 * to @log (may be NULL). @mix may be NULL (the default mix).
 * Return: 0 (see @res->rule), or -EINVAL / -ENOMEM if the run could not start.
 */
int luf_sim_run(const struct luf_sim_config *cfg, const struct luf_sim_mix *mix, uint64_t seed,
		unsigned long nr_ops, unsigned int flags, struct luf_sim_result *res, FILE *log);

/*
 * luf_sim_run_threaded() - the threaded scheduler: one pthread per CPU,
 * each running @ops_per_cpu random operations on its CPU from a stream
 * seeded by @seed and its CPU id; real concurrency on the key table, the
 * domains and the TLBs. Stops all threads at the first violation and
 * writes each thread's last operations to @log. Not replayable: the seed
 * only fixes each thread's choices, not the interleaving.
 * Return: as luf_sim_run(); -EAGAIN if the threads could not be started.
 */
int luf_sim_run_threaded(const struct luf_sim_config *cfg, const struct luf_sim_mix *mix,
			 uint64_t seed, unsigned long ops_per_cpu, struct luf_sim_result *res,
			 FILE *log);

/*
 * luf_sim_replay() - run the history @ops[0..@n) on a new machine until
 * the first violation. Any history is accepted: bad operations fail with
 * -EINVAL and are skipped over. @ret_out (may be NULL) receives each result.
 * Return: 0 (see @res), -EINVAL for NULL with @n > 0 or a bad @cfg, -ENOMEM.
 */
int luf_sim_replay(const struct luf_sim_config *cfg, const struct luf_sim_op *ops, unsigned long n,
		   struct luf_sim_result *res);

#endif /* LUF_SIM_H */
