// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/peers/peers.h - one workload, five reclamation mechanisms.
 *
 * T threads share a table of slots; each slot names a fixed-size block.
 * Every thread reads random slots of all threads (the readers that may
 * still reference a block) and replaces blocks of its own slots: take a
 * block, fill it, publish it, retire the old one. A retired block may be
 * reused only when no reader can still reach it; each mechanism decides
 * when that is:
 *
 *   luf       hazard word + luf (lib/user membarrier backend): the retire is
 *             deferred (luf_unmap, luf_pcpu_fold per batch, luf_free), the
 *             membarrier runs when a reuse needs it (luf_alloc), then the
 *             hazards are scanned;
 *   every     hazard word + one membarrier per retired block, then the scan;
 *   urcu-call liburcu (memb flavour) read-side sections, call_rcu() per
 *             retired block; its callback hands the block back;
 *   urcu-sync liburcu (memb), synchronize_rcu() per batch of retired blocks;
 *   ck-epoch  Concurrency Kit ck_epoch sections, ck_epoch_call() per retired
 *             block, ck_epoch_poll() per batch, ck_epoch_barrier() when an
 *             allocation finds nothing to reuse.
 *
 * Readers check a canary (slot and version in every word of the block), so
 * a block reused under a reader is counted as a violation.
 */
#ifndef PEERS_H
#define PEERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PEER_WORDS 16 /* words per block: 128 bytes */
#define PEER_BATCH 64 /* retired blocks per fold / synchronize / poll */
#define PEER_MAX_THREADS 64
#define PEER_MAX_WAITS 65536 /* latency samples kept per thread */
#define PEER_HOLD_EVERY 512  /* --hold: one read in this many sleeps holding its block */

struct peer_blk {
	atomic_ulong w[PEER_WORDS];
	unsigned long idx;     /* index in the pool */
	struct peer_blk *next; /* free list link (the mechanism's) */
	unsigned int owner;    /* thread whose free list it returns to */
	/* The mechanism's embedded entry (rcu_head, ck_epoch_entry, luf_folio): pointers. */
	_Alignas(void *) unsigned char mech[48];
};

struct peer_thr {
	_Alignas(64) unsigned int id;
	uint64_t rng;
	unsigned long frees, reads, violations;
	unsigned long empty;	       /* reads of a slot naming no block (a harness bug) */
	unsigned long held, peak_held; /* blocks retired and not reusable yet */
	atomic_ulong returned;	       /* of which handed back by another thread */
	unsigned long waits, nwait;
	double *wait_us;
	void *priv;			  /* the mechanism's per-thread state */
	_Alignas(64) atomic_ulong hazard; /* hazard mechanisms: block index + 1, or 0 */
};

struct peer_mech {
	const char *name;
	int (*init)(unsigned int threads, unsigned long pool); /* before the threads */
	int (*thread_init)(struct peer_thr *t);		       /* in the thread */
	void (*thread_fini)(struct peer_thr *t);	       /* in the thread */
	void (*fini)(void);
	void (*read)(struct peer_thr *t, unsigned long slot); /* protected read + check */
	struct peer_blk *(*get)(struct peer_thr *t);	      /* a reusable block (may wait) */
	void (*retire)(struct peer_thr *t, struct peer_blk *b);
	unsigned long (*grace_periods)(void); /* flushes / grace periods so far */
};

/* The shared state (peers.c). */
extern struct peer_blk *peer_pool;
extern atomic_ulong *peer_slot; /* version << 32 | (index + 1) */
extern unsigned long peer_nr_slots;
extern struct peer_thr *peer_thr;
extern unsigned int peer_threads;

/* Check block @b against slot word @e: 1 if its canary matches. */
bool peer_canary_ok(const struct peer_blk *b, unsigned long slot, unsigned long e);
/*
 * Read block of slot word @e (the part every mechanism shares) and count a
 * bad canary. Called inside the mechanism's read-side protection.
 */
void peer_read_block(struct peer_thr *t, unsigned long slot, unsigned long e);
/* Is block @b named by any thread's hazard word? */
bool peer_hazarded(const struct peer_blk *b);
/* Record the latency of an allocation that had to wait (from @t0, seconds). */
void peer_wait_done(struct peer_thr *t, double t0);
double peer_now(void);
/* The initial free blocks of thread @t: [first, first + n). */
void peer_own_blocks(unsigned int t, unsigned long *first, unsigned long *n);
/* Count one retired block as held, and @n blocks as reusable again. */
void peer_held(struct peer_thr *t, long n);

extern const struct peer_mech peer_luf, peer_every, peer_urcu_call, peer_urcu_sync, peer_ck;


#endif /* PEERS_H */
