// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/tsan_order.c - the acquire in luf_done_read() orders a
 * reuse after the flush it relies on; ThreadSanitizer sees it go.
 *
 * Three threads on three CPU ids, and one folio whose frame is plain
 * (non-atomic) memory:
 *
 *   reader (CPU 1)               flusher (CPU 0)            allocator (CPU 2)
 *   read frame through its       luf_key_flush(key):        luf_alloc(0) until
 *   "TLB" (plain loads)          IPI -> wait for the ack    the pend folio's set
 *   IPI: drop the entry,                                    is done, then write
 *   ack (release)           ->   mark done (release CAS) -> the frame (plain)
 *                                                           (done read: acquire)
 *
 * The only path that orders the reader's loads before the allocator's
 * store is luf's: the ack, the done counter's release compare-and-swap and
 * luf_done_read()'s acquire. With LUF_MUTANT_DONE_RELAXED (done read
 * relaxed) nothing orders them, and ThreadSanitizer reports a data race on
 * the frame: the test of that build must fail (tests/property/CMakeLists.txt).
 * The sequential checkers (the simulator, spin, the unit tests) cannot see
 * this mutant: they run every step in one order.
 *
 * Exit status 0 when every round handed the folio out after the flush.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <luf/luf.h>

#include "testenv.h"

#define NR_CPUS 3
#define ROUNDS 20
#define FRAME_WORDS 64

static struct {
	struct luf *l;
	struct luf_keytab *kt;
	struct luf_pcpu *pc_flusher, *pc_alloc;
	struct luf_freelist *fl;
	struct luf_folio folio;
	unsigned long req, ack; /* IPI to the reader: request count, last one handled */
	unsigned long stop;     /* the reader leaves its loop */
	pthread_barrier_t round;
	unsigned short key;
	unsigned long frame[FRAME_WORDS]; /* the folio's bytes: plain memory */
	unsigned long sink;
	unsigned int failures;
} g;

/* ops->flush: an IPI to the reader when CPU 1 is in the set, waiting for its ack. */
static int order_flush(void *arch, const unsigned long *cpus, unsigned int nr_cpus,
		       const struct luf_range *r)
{
	(void)arch, (void)r;
	if (luf_cpumask_test_cpu(cpus, nr_cpus, 1)) {
		unsigned long want = __luf_add_return(&g.req, 1);

		while (__luf_load_acquire(&g.ack) != want) /* pairs with the reader's release */
			sched_yield();
	}
	return 0;
}

static unsigned int order_nr_cpu_ids(void *arch)
{
	(void)arch;
	return NR_CPUS;
}

static unsigned int order_this_cpu(void *arch)
{
	(void)arch;
	return 0;
}

static const struct luf_arch_ops order_ops = {
    .flush = order_flush, .nr_cpu_ids = order_nr_cpu_ids, .this_cpu = order_this_cpu};

static void *reader(void *arg)
{
	unsigned long seen = 0, sum = 0;

	(void)arg;
	for (unsigned int round = 0; round < ROUNDS; round++) {
		bool tlb_valid = true; /* the stale read-only entry of this round */

		pthread_barrier_wait(&g.round);
		while (!__luf_load_acquire(&g.stop)) {
			unsigned long req = __luf_load_acquire(&g.req);

			if (req != seen) { /* the IPI: drop the entry, then ack */
				tlb_valid = false;
				seen = req;
				__luf_store_release(&g.ack, req);
			}
			if (tlb_valid)
				for (unsigned int i = 0; i < FRAME_WORDS; i++)
					sum += g.frame[i]; /* a load through the stale entry */
		}
		pthread_barrier_wait(&g.round);
	}
	g.sink = sum;
	return NULL;
}

static void *flusher(void *arg)
{
	(void)arg;
	for (unsigned int round = 0; round < ROUNDS; round++) {
		pthread_barrier_wait(&g.round);
		usleep(200); /* let the reader load through its entry first */
		if (luf_key_flush(g.pc_flusher, g.key) != 1)
			g.failures++;
		pthread_barrier_wait(&g.round);
	}
	return NULL;
}

static void *allocator(void *arg)
{
	(void)arg;
	for (unsigned int round = 0; round < ROUNDS; round++) {
		struct luf_folio *f = NULL;
		int ret;

		pthread_barrier_wait(&g.round);
		/* Never flushes: it gets the folio only once luf says its set is done. */
		while ((ret = luf_alloc(g.fl, g.pc_alloc, 0, &f)) == -EAGAIN)
			sched_yield();
		if (ret || f != &g.folio)
			g.failures++;
		for (unsigned int i = 0; i < FRAME_WORDS; i++)
			g.frame[i] = round + 1; /* the reuse */
		__luf_store_release(&g.stop, 1);
		pthread_barrier_wait(&g.round);
	}
	return NULL;
}

/* Before each round (all threads parked): a deferred unmap seen by CPU 1, the folio pend. */
static void setup_round(void)
{
	unsigned long m[1] = {1UL << 1};

	__luf_write_once(&g.stop, 0);
	if (luf_unmap(g.pc_flusher, NULL, m, LUF_PTE_ACCESSIBLE) ||
	    luf_pcpu_fold(g.pc_flusher, &g.key) || !g.key ||
	    luf_free(g.fl, g.pc_alloc, &g.folio, g.key) || luf_freelist_nr_pend(g.fl) != 1) {
		fprintf(stderr, "tsan_order: set-up failed\n");
		exit(2);
	}
}

int main(void)
{
	pthread_t t[3];

	g.l = testenv_zalloc(sizeof(*g.l));
	g.kt = testenv_zalloc(luf_keytab_size(16, NR_CPUS));
	g.pc_flusher = testenv_zalloc(luf_pcpu_size(NR_CPUS));
	g.pc_alloc = testenv_zalloc(luf_pcpu_size(NR_CPUS));
	g.fl = testenv_zalloc(luf_freelist_size(NR_CPUS));
	if (luf_init(g.l, &order_ops, NULL, testenv_zalloc(luf_done_size(NR_CPUS)),
		     testenv_zalloc(luf_stats_size(NR_CPUS)), 0) ||
	    luf_keytab_init(g.kt, g.l, 16) || luf_pcpu_init(g.pc_flusher, g.l, g.kt, 0, 512) ||
	    luf_pcpu_init(g.pc_alloc, g.l, g.kt, 2, 512) || luf_freelist_init(g.fl, g.l, g.kt, 0))
		return 2;
	pthread_barrier_init(&g.round, NULL, 4);
	pthread_create(&t[0], NULL, reader, NULL);
	pthread_create(&t[1], NULL, flusher, NULL);
	pthread_create(&t[2], NULL, allocator, NULL);
	for (unsigned int round = 0; round < ROUNDS; round++) {
		setup_round();
		pthread_barrier_wait(&g.round); /* go */
		pthread_barrier_wait(&g.round); /* round over */
	}
	for (unsigned int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("tsan_order: %u rounds, %u failures, %ld remote flushes\n", ROUNDS, g.failures,
	       luf_stats_sum(g.l, LUF_STAT_REMOTE_FLUSH));
	return g.failures ? 1 : 0;
}
