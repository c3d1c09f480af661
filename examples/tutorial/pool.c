// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * pool.c - the tutorial's allocator (docs/tutorial.md): a fixed pool of
 * objects behind a read-mostly shared table, recycled through
 * <luf/luf_proc.h>.
 *
 * One updater thread replaces the table's entries over and over; reader
 * threads look entries up with no lock, no fence and no atomic
 * read-modify-write. An entry the updater replaces is retired, and the
 * pool hands it out again only once luf_reuse() says no reader can still
 * be reading it. Every reader checks that the entry it reads is not being
 * rewritten under it, so a reuse that came too early would show.
 *
 * Usage: luf-tutorial-pool [updates] [readers]   (default 20000 2)
 * Exit 0 when every check held, 1 on an error, 77 (skipped) when the
 * process has no barrier backend (no membarrier, or a seccomp filter).
 */
#include <luf/luf_proc.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [entry] */
#define SLOTS 16     /* the shared table */
#define POOL_OBJS 64 /* the pool: every entry the program will ever have */
#define WORDS 8	     /* an entry's payload */

struct entry {
	unsigned long slot;	      /* where it is published */
	unsigned long stamp;	      /* which update wrote it */
	unsigned long payload[WORDS]; /* every word == stamp */
	struct luf_node node;	      /* luf's, from the first retirement on */
};

static struct luf_proc *proc;
static _Atomic(struct entry *) table[SLOTS];
/* [entry] */

/* The pool: POOL_OBJS entries, handed out once each, then only recycled. */
static struct entry pool[POOL_OBJS];
static unsigned int pool_next;
static unsigned long fresh, reused, waits, released;
static atomic_uint ready;
static atomic_bool stop;
static atomic_ulong bad_reads, reads;

/* [alloc] */
/* An entry for the updater: a recycled one if luf has one that no reader
 * can still be reading, else a never-used one, else wait for luf. */
static struct entry *entry_alloc(struct luf_thread *t)
{
	for (;;) {
		struct luf_node *n;
		int err = luf_reuse(t, &n); /* may flush: one membarrier() */

		if (err == 0) {
			reused++;
			return luf_node_entry(n, struct entry, node);
		}
		if (err != -EAGAIN) { /* the flush failed: nothing was lost */
			fprintf(stderr, "pool: luf_reuse: %s\n", strerror(-err));
			return NULL;
		}
		if (pool_next < POOL_OBJS) {
			fresh++;
			return &pool[pool_next++]; /* zeroed: its node is ready */
		}
		/* Pool empty: every entry is published or retired, and some
		 * reader section is still open. Sections are short. */
		waits++;
		sched_yield();
	}
}
/* [alloc] */

/* [update] */
/* Replace the entry of @slot: fill a new one, publish it, retire the old. */
static int update(struct luf_thread *t, unsigned long slot, unsigned long stamp)
{
	struct entry *e = entry_alloc(t), *old;

	if (!e)
		return -1;
	/* Fill everything but e->node, which luf keeps between retirements. */
	e->slot = slot;
	e->stamp = stamp;
	for (int i = 0; i < WORDS; i++)
		e->payload[i] = stamp;
	/* Publish with a release store: a reader that loads e sees it filled.
	 * U1: the old entry is unreachable for new readers from here on. */
	old = atomic_exchange_explicit(&table[slot], e, memory_order_acq_rel);
	/* U2: retire it once; it comes back only through luf_reuse(). */
	if (old && luf_retire(t, &old->node)) {
		fprintf(stderr, "pool: luf_retire failed\n");
		return -1;
	}
	return 0;
}
/* [update] */

/* [read] */
/* Look @slot up: the reader's whole protocol. */
static int lookup(struct luf_thread *t, unsigned long slot, unsigned long *stamp)
{
	struct entry *e;
	int ok = 1;

	luf_read_lock(t); /* R1: before loading the pointer */
	/* R2: an atomic load (acquire: the entry's contents come with it). */
	e = atomic_load_explicit(&table[slot], memory_order_acquire);
	if (e) {
		/* Plain loads of the entry itself: nobody writes it while any
		 * section that could have loaded it is open. */
		*stamp = e->stamp;
		for (int i = 0; i < WORDS; i++)
			ok &= e->payload[i] == *stamp;
		ok &= e->slot == slot;
	}
	luf_read_unlock(t); /* R1: after the last access through e */
	/* R3: e is not used past this point. */
	return e ? ok : -1;
}
/* [read] */

/* [thread] */
static void *reader(void *arg)
{
	struct luf_thread *t;
	unsigned long slot = (unsigned long)(uintptr_t)arg, n = 0, stamp;
	int err = luf_thread_register(proc, &t); /* once per thread */

	if (err) {
		fprintf(stderr, "pool: luf_thread_register: %s\n", strerror(-err));
		atomic_fetch_add(&bad_reads, 1);
		atomic_fetch_add(&ready, 1);
		return NULL;
	}
	atomic_fetch_add(&ready, 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (lookup(t, slot++ % SLOTS, &stamp) == 0)
			atomic_fetch_add(&bad_reads, 1); /* read a reused entry */
		n++;
	}
	atomic_fetch_add(&reads, n);
	/* Outside any section: hands what the thread holds to the others. */
	err = luf_thread_unregister(t);
	if (err)
		fprintf(stderr, "pool: luf_thread_unregister: %s\n", strerror(-err));
	return NULL;
}
/* [thread] */

/* [release] */
/* luf_proc_destroy() hands back every entry luf still holds. */
static void release(struct luf_node *n, void *arg)
{
	struct entry *e = luf_node_entry(n, struct entry, node);

	(void)arg;
	if (e >= pool && e < pool + POOL_OBJS)
		released++;
}
/* [release] */

int main(int argc, char **argv)
{
	unsigned long updates = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000;
	unsigned int nr_readers = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 2;
	pthread_t tid[8];
	struct luf_thread *self;
	int err, ret = 0;

	if (nr_readers < 1 || nr_readers > 8) {
		fprintf(stderr, "usage: %s [updates] [readers: 1..8]\n", argv[0]);
		return 2;
	}
	/* [create] */
	struct luf_proc_config cfg = {
	    .max_threads = 1 + nr_readers, /* the updater and the readers */
	    .batch = 8,			   /* fold every 8 retirements */
	};

	err = luf_proc_create(&proc, &cfg);
	if (err == -ENOSYS || err == -EPERM || err == -EOPNOTSUPP) {
		/* No sound barrier backend in this process: luf never runs
		 * without one (luf_last_error() says why, see <luf/error.h>). */
		printf("pool: SKIP: no barrier backend (%s)\n", strerror(-err));
		return 77;
	}
	if (err) {
		fprintf(stderr, "pool: luf_proc_create: %s\n", strerror(-err));
		return 1;
	}
	printf("pool: backend %s\n", luf_user_why(luf_proc_backend(proc)));
	err = luf_thread_register(proc, &self); /* the updater is a thread too */
	/* [create] */
	if (err) {
		fprintf(stderr, "pool: luf_thread_register: %s\n", strerror(-err));
		luf_proc_destroy(proc, NULL, NULL);
		return 1;
	}

	for (unsigned long s = 0; s < SLOTS; s++)
		if (update(self, s, s))
			return 1;
	for (unsigned int i = 0; i < nr_readers; i++)
		if (pthread_create(&tid[i], NULL, reader, (void *)(uintptr_t)(i * 5))) {
			fprintf(stderr, "pool: pthread_create failed\n");
			return 1;
		}
	while (atomic_load(&ready) < nr_readers)
		sched_yield();
	for (unsigned long u = SLOTS; u < SLOTS + updates && !ret; u++)
		ret = update(self, u % SLOTS, u) ? 1 : 0;
	atomic_store(&stop, 1);
	for (unsigned int i = 0; i < nr_readers; i++)
		pthread_join(tid[i], NULL);

	printf("pool: %lu barrier system calls for %lu reuses\n",
	       luf_user_calls(luf_proc_backend(proc)), reused);

	/* [teardown] */
	/* Unpublish and retire what is left (U1, U2), then unregister the
	 * last thread: destroy needs none registered, and hands every entry
	 * luf still holds to release() without a flush. */
	for (unsigned long s = 0; s < SLOTS; s++) {
		struct entry *e = atomic_exchange(&table[s], NULL);

		if (e && luf_retire(self, &e->node))
			ret = 1;
	}
	printf("pool: the updater holds %lu entries for later reuse\n", luf_thread_held(self));
	if (luf_thread_unregister(self) || luf_proc_destroy(proc, release, NULL))
		ret = 1;
	/* [teardown] */

	printf("pool: %lu updates, %lu fresh entries, %lu reused, %lu waits for readers\n", updates,
	       fresh, reused, waits);
	printf("pool: %lu reads, %lu of a reused entry\n", atomic_load(&reads),
	       atomic_load(&bad_reads));
	printf("pool: %lu of %lu entries came back at destroy\n", released, fresh);
	if (atomic_load(&bad_reads) || released != fresh || fresh > POOL_OBJS || ret)
		ret = 1;
	printf("pool: %s\n", ret ? "FAILED" : "ok");
	return ret;
}
