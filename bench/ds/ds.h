// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/ds/ds.h - luf-ds: a read-mostly concurrent hash map, the same map
 * code under four reclamation schemes.
 *
 * The map: DS_BUCKETS buckets, each a singly linked chain and a mutex.
 * A lookup takes no lock: it walks its chain inside the scheme's read
 * section, loading each link with an acquire load, and checks every node
 * it passes (the canary). An update locks its bucket and toggles its key:
 * deletes it if present (unlink, unlock, retire the node), inserts it
 * otherwise (the thread's spare node, published with a release store;
 * after the unlock a new spare comes from the scheme's allocator). With
 * the keys prefilled to half, updates are half inserts, half deletes, and
 * every update changes the map.
 *
 * The schemes (one file each; the map code, ds_map.h, is compiled into
 * each with the scheme's read side inlined, so none pays an indirect call
 * in the read path):
 *
 *   luf       <luf/luf_proc.h>: luf_read_lock()/unlock() (two plain stores,
 *             no fence), luf_retire(), and luf_reuse() first for a new node,
 *             malloc() when it returns -EAGAIN;
 *   urcu-memb liburcu's membarrier flavour: urcu_memb_read_lock()/unlock()
 *             (no fence either), call_rcu() per retired node, whose callback
 *             (liburcu's helper thread) frees it; malloc() for a new node;
 *   ck-epoch  Concurrency Kit: ck_epoch_begin()/end() (a store-load fence
 *             on entry), ck_epoch_call() per retired node, ck_epoch_poll()
 *             every DS_BATCH retirements, ck_epoch_barrier() when more than
 *             DS_CK_MAX_PENDING wait; callbacks free; malloc() for new ones;
 *   membarrier-per-retire
 *             luf's reader (a plain per-thread counter store, a compiler
 *             barrier), and at every retirement one
 *             membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), then a wait until
 *             every section seen open has closed; the node is then reusable
 *             at once (a per-thread free list, malloc() when it is empty).
 *
 * A reclaimed node (reused or freed) is poisoned first, so a reader that
 * still holds it sees a bad canary: a violation.
 */
#ifndef DS_H
#define DS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DS_BUCKETS 1024u /* a power of two */
#define DS_MAX_THREADS 64
#define DS_BATCH 64u		 /* ck-epoch: retirements per poll */
#define DS_CK_MAX_PENDING 1024ul /* ck-epoch: a barrier beyond this many pending */
#define DS_HOLD_EVERY 256u	 /* --hold: one found key in this many sleeps holding it */
#define DS_MAGIC 0x5a17c0ffee15bad5ul
#define DS_POISON 0xdeaddeaddeaddeadul

struct ds_node {
	_Atomic(struct ds_node *) next;
	atomic_ulong key;
	atomic_ulong canary; /* DS_MAGIC ^ key while a reader may hold it */
	/* The scheme's entry (struct luf_node, rcu_head, ck_epoch_entry) or a free-list link. */
	_Alignas(void *) unsigned char mech[32];
};

struct ds_bucket {
	pthread_mutex_t lock; /* updaters only */
	_Atomic(struct ds_node *) head;
};

struct ds_thr {
	_Alignas(64) unsigned int id;
	uint64_t rng;
	unsigned long ops, reads, updates, inserts, deletes, mallocs, violations, found;
	unsigned long peak_held; /* the most objects held by all threads, seen at an update */
	double end;		 /* when it left the loop */
	struct ds_node *spare;	 /* the next insert's node */
	void *priv;		 /* the scheme's per-thread state */
	int failed;
};

struct ds_scheme {
	const char *name;
	int (*init)(unsigned int threads); /* before the threads start */
	int (*thread_init)(struct ds_thr *t);
	void (*work)(struct ds_thr *t);	       /* the measured loop (ds_map.h) */
	void (*thread_fini)(struct ds_thr *t); /* in the thread, after the loop */
	void (*fini)(void);		       /* after the threads, before the map is freed */
};

/* Options and the shared state (ds.c). */
extern unsigned int ds_threads, ds_update_pct, ds_hold_us;
extern unsigned long ds_keys, ds_quota; /* ds_quota: ops per thread, 0: until ds_stop */
extern atomic_int ds_stop;
extern struct ds_bucket *ds_map;
extern unsigned int ds_luf_max_threads; /* --luf-max-threads (ds_luf.c) */
/*
 * --pc: producers and consumers. An update of an even-numbered thread
 * only inserts (an absent key of its bucket), of an odd-numbered one only
 * deletes (its bucket's first node): what one thread retires, another
 * allocates (cross-thread frees).
 */
extern int ds_pc;

/* A fresh node from malloc() (zeroed entry); counts it in @t. */
struct ds_node *ds_node_new(struct ds_thr *t);
/* Poison @n and free() it. */
void ds_node_free(struct ds_node *n);
/* Poison @n before it is handed out again. */
void ds_node_poison(struct ds_node *n);
double ds_now(void);

extern const struct ds_scheme ds_luf, ds_urcu, ds_ck, ds_every;

#endif /* DS_H */
