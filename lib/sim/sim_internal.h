// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_internal.h - the simulated machine's state, shared by the
 * files of lib/sim (not installed).
 *
 * Locks, and what each guards:
 *   dom->lock   a domain's page table and VMA state (struct sim_slot), its
 *               CPU mask's readers at unmap time, and the data writes to its
 *               pages (so an object's versions are written in order);
 *   tlb->lock   one CPU's TLB: held by that CPU around a fill and around
 *               each read or write through it (an access is atomic with
 *               respect to an IPI, as an instruction is), and by a flusher
 *               while it clears that TLB (the IPI).
 * Order: a domain lock before a TLB lock; never two of either kind at once;
 * no sim lock is held across a call into luf (luf's flushes take TLB locks).
 *
 * TLB entries are atomic words, one per (CPU, domain page), so a CPU that
 * holds a domain's lock can scan every other CPU's entry for one of that
 * domain's pages without their TLB locks: entries of the domain are only
 * added by a fill, which takes the domain lock, so during the scan they can
 * only disappear. Frame stamps and the object table are atomics too: reads
 * through the TLB check them without the domain lock.
 */
#ifndef LUF_SIM_INTERNAL_H
#define LUF_SIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include "luf_sim.h"

/* TLB entry word: valid, writable, dirty, frame, object the fill was for. */
#define SIM_E_VALID 0x1ull
#define SIM_E_W 0x2ull
#define SIM_E_D 0x4ull
#define SIM_E_FRAME_SHIFT 8
#define SIM_E_FRAME_MASK 0xffffffull
#define SIM_E_OBJ_SHIFT 32

/* PTE word: present, accessible (not PROT_NONE), writable, dirty, frame. */
#define SIM_PTE_PRESENT 0x1ull
#define SIM_PTE_ACCESS 0x2ull
#define SIM_PTE_W 0x4ull
#define SIM_PTE_D 0x8ull
#define SIM_PTE_FRAME_SHIFT 8

/* Stamp objects that are not pages' contents (written by other paths). */
#define SIM_OBJ_ZERO 0u
#define SIM_OBJ_SPECIAL 0xfffffff0u /* this and above: */
#define SIM_OBJ_FILE 0xfffffff0u
#define SIM_OBJ_POISON 0xfffffff1u
#define SIM_OBJ_LINK 0xfffffff2u

#define SIM_PROT_UNMAPPED 3u /* struct sim_slot.prot: no VMA */

enum sim_busy { SIM_IDLE = 0, SIM_BUSY_RECLAIM, SIM_BUSY_MIGRATE, SIM_BUSY_MUNMAP, SIM_BUSY_MOVE };

/* One virtual page of a domain. Plain fields: under the domain lock. */
struct sim_slot {
	_Atomic uint64_t pte;
	_Atomic uint32_t obj;	    /* object at this address; 0: none yet (zero page) */
	_Atomic uint32_t committed; /* protection every CPU honours (set after the flush) */
	uint32_t seq;		    /* bumped by every change of the PTE, VMA or content */
	uint32_t prot_gen;	    /* bumped by every VMA change: stale commits are dropped */
	uint32_t swap_ver;	    /* version in swap, if swapped */
	uint8_t prot;		    /* current VMA protection, or SIM_PROT_UNMAPPED */
	uint8_t busy;		    /* enum sim_busy: an operation holds the content */
	uint8_t swapped;	    /* content (obj, swap_ver) lives in swap */
};

struct sim_dom {
	pthread_mutex_t lock;
	struct luf_domain *ld; /* luf's pending set of this address space */
	unsigned long *mask;      /* CPUs that may cache its translations (mm_cpumask) */
	struct sim_slot *slots;
	atomic_uint flush_pending; /* protection changes between PTE update and shootdown */
};

enum sim_frame_state { SIM_FRAME_IN_USE = 0, SIM_FRAME_BATCHED, SIM_FRAME_FREE };

struct sim_frame {
	struct luf_folio lf;	/* luf's metadata: never in the frame's data */
	_Atomic uint64_t stamp; /* the data: object << 32 | version */
	_Atomic uint32_t refs;	/* TLB entries translating to it, on all CPUs */
	_Atomic uint32_t wrefs; /* of which writable or dirty */
	_Atomic uint32_t state; /* enum sim_frame_state */
	_Atomic uint32_t owner; /* CPU whose batch or free list holds it */
};

struct sim_tlb {
	pthread_mutex_t lock;
	unsigned int count, hand; /* valid entries; next eviction victim */
	uint32_t *occ;		  /* slot ids of the valid entries */
	unsigned long ipis;	  /* flush IPIs received */
	unsigned long local_flushes; /* context switches and own-CPU flushes */
};

enum sim_batch_kind { SIM_BATCH_RECLAIM, SIM_BATCH_MUNMAP, SIM_BATCH_MIGRATE };

struct sim_batch_ent {
	uint32_t frame, dom, page, kind;
};

#define SIM_BATCH_MAX 64u
#define SIM_SEEN_MAX 32u

/* What one CPU owns: only its thread touches it. */
struct sim_cpu {
	struct luf_pcpu *pc;
	struct luf_freelist *fl;
	unsigned long *mask; /* scratch cpumask */
	unsigned long *seen; /* S4: done of CPUs cpu, cpu+1, ... as last sampled */
	unsigned int nr_batch;
	struct sim_batch_ent batch[SIM_BATCH_MAX];
};

struct luf_sim {
	struct luf_sim_config cfg;
	unsigned int nr_slots, nr_seen;
	struct luf_arch_ops ops;
	struct luf *luf;
	struct luf_done_cpu *done;
	struct luf_stats_cpu *stats;
	struct luf_keytab *kt;
	struct sim_cpu *cpus;
	struct sim_tlb *tlbs;
	_Atomic uint64_t *ent; /* [cpu * nr_slots + slot] */
	struct sim_dom *doms;
	struct sim_frame *frames;
	_Atomic uint64_t *objtab; /* [obj & objmask] = obj << 32 | version */
	uint32_t objmask;
	unsigned long next_obj;
	unsigned long fail_next;
	unsigned long luf_flushes, mm_flushes, nr_ops;
	/* checker */
	pthread_mutex_t vlock;
	unsigned long nv[LUF_SIM_NR_RULES];
	atomic_int have_first;
	struct luf_sim_violation first;
};

/* The running operation, per thread: luf's this_cpu and the flush callback read it. */
struct sim_tctx {
	struct luf_sim *sim;
	unsigned int cpu;
	uint64_t rng;			     /* flush-failure draws */
	unsigned long flushes, flush_failed; /* luf-driven flushes by this thread */
};

extern _Thread_local struct sim_tctx sim_tctx;

static inline uint64_t sim_mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint32_t sim_slot_id(const struct luf_sim *sim, unsigned int dom, unsigned int page)
{
	return dom * sim->cfg.nr_pages + page;
}

static inline struct sim_slot *sim_slot(struct luf_sim *sim, unsigned int dom, unsigned int page)
{
	return &sim->doms[dom].slots[page];
}

static inline _Atomic uint64_t *sim_ent(struct luf_sim *sim, unsigned int cpu, uint32_t sid)
{
	return &sim->ent[(size_t)cpu * sim->nr_slots + sid];
}

static inline uint64_t sim_load(_Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_acquire);
}

static inline void sim_store(_Atomic uint64_t *p, uint64_t v)
{
	atomic_store_explicit(p, v, memory_order_release);
}

static inline uint32_t sim_e_frame(uint64_t e)
{
	return (uint32_t)((e >> SIM_E_FRAME_SHIFT) & SIM_E_FRAME_MASK);
}

static inline uint32_t sim_e_obj(uint64_t e)
{
	return (uint32_t)(e >> SIM_E_OBJ_SHIFT);
}

static inline uint32_t sim_pte_frame(uint64_t pte)
{
	return (uint32_t)((pte >> SIM_PTE_FRAME_SHIFT) & SIM_E_FRAME_MASK);
}

static inline uint64_t sim_stamp(uint32_t obj, uint32_t ver)
{
	return (uint64_t)obj << 32 | ver;
}

static inline bool sim_cpu_ok(const struct luf_sim *sim, unsigned int cpu)
{
	return sim && cpu < sim->cfg.nr_cpus;
}

/* A valid range of @npages pages from @page in domain @dom. */
static inline bool sim_range_ok(const struct luf_sim *sim, unsigned int dom, unsigned int page,
				unsigned int npages)
{
	return dom < sim->cfg.nr_domains && npages >= 1 && npages <= LUF_SIM_MAX_RANGE &&
	       page < sim->cfg.nr_pages && npages <= sim->cfg.nr_pages - page;
}

static inline void sim_lock_dom(struct luf_sim *sim, unsigned int dom)
{
	pthread_mutex_lock(&sim->doms[dom].lock);
}

static inline void sim_unlock_dom(struct luf_sim *sim, unsigned int dom)
{
	pthread_mutex_unlock(&sim->doms[dom].lock);
}

static inline void sim_lock_tlb(struct luf_sim *sim, unsigned int cpu)
{
	pthread_mutex_lock(&sim->tlbs[cpu].lock);
}

static inline void sim_unlock_tlb(struct luf_sim *sim, unsigned int cpu)
{
	pthread_mutex_unlock(&sim->tlbs[cpu].lock);
}

/* sim_machine.c */
void sim_enter(struct luf_sim *sim, unsigned int cpu);
int sim_leave(struct luf_sim *sim, unsigned int cpu, int ret);

/* sim_tlb.c */
extern const struct luf_arch_ops sim_arch_ops;
void sim_tlb_fill(struct luf_sim *sim, unsigned int cpu, unsigned int dom, uint32_t sid,
		  uint32_t frame, uint32_t obj, uint64_t pte);
void sim_tlb_flush_cpu(struct luf_sim *sim, unsigned int cpu, bool remote);
void sim_flush_mm(struct luf_sim *sim, unsigned int cpu, unsigned int dom);
void sim_copy_mask(struct luf_sim *sim, unsigned int dom, unsigned long *out);

/* sim_frame.c */
uint32_t sim_obj_new(struct luf_sim *sim);
bool sim_obj_version(struct luf_sim *sim, uint32_t obj, uint32_t *ver);
void sim_obj_set(struct luf_sim *sim, uint32_t obj, uint32_t ver);
int sim_alloc(struct luf_sim *sim, unsigned int cpu, unsigned int flags, uint32_t *frame);
void sim_free_frame(struct luf_sim *sim, unsigned int cpu, uint32_t frame, unsigned int key);
void sim_frame_store(struct luf_sim *sim, unsigned int cpu, uint32_t frame, uint64_t stamp,
		     const char *why);
int sim_batch_add(struct luf_sim *sim, unsigned int cpu, uint32_t frame, unsigned int dom,
		  unsigned int page, unsigned int kind);
int sim_fold_free(struct luf_sim *sim, unsigned int cpu);
int sim_batch_room(struct luf_sim *sim, unsigned int cpu, unsigned int need);

/* sim_check.c */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void sim_violation(struct luf_sim *sim, enum luf_sim_rule rule, unsigned int cpu, const char *fmt,
		   ...);
void sim_check_read(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		    uint64_t e, uint64_t *stamp);
void sim_check_install(struct luf_sim *sim, unsigned int skip_cpu, unsigned int dom,
		       unsigned int page, uint32_t frame, uint32_t obj, bool writable,
		       const char *why);
void sim_check_write(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		     uint64_t e);
void sim_check_no_entries(struct luf_sim *sim, unsigned int cpu, uint32_t frame, bool writable_only,
			  enum luf_sim_rule rule, const char *what);
void sim_check_done(struct luf_sim *sim, unsigned int cpu);
bool sim_ugen_older(unsigned long a, unsigned long b);

#endif /* LUF_SIM_INTERNAL_H */
