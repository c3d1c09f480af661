// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_proc.h with producers and consumers (issue 30, finding 3): objects
 * retired on one thread are reused on another. Allocating threads take an
 * object (luf_reuse(), else malloc()), stamp it and publish it in an empty
 * slot of a shared table; retiring threads unpublish a full slot and
 * retire its object, never reusing; reader threads read random slots
 * inside sections and check the stamps (a reuse under a reader shows as a
 * torn or changed canary). A monitor samples what luf holds: every
 * thread's luf_thread_held() plus luf_proc_pooled().
 *
 * It fails (exit 1) on a torn read, on reuse of at most --min-reuse
 * percent of the allocations, or on more held at any sample than the
 * bound luf_proc.h states: per retiring thread its open batch and its 4
 * kept batches, per allocating thread 3 batches (the one it reuses, the
 * one waiting for readers, the next one taken early), plus the pool,
 * which holds what the retiring threads handed over and the allocating
 * threads have not taken yet: at most the table's objects, which are all
 * there are besides the ones luf holds, plus one batch per retiring
 * thread in flight. Before the pool (LUF_MUTANT_PROC_NO_POOL) nothing a
 * retiring thread retires comes back: reuse 0%.
 *
 * Usage: luf_proc_pc [--retirers N] [--allocators N] [--readers N]
 *                    [--seconds S] [--batch N] [--slots N] [--min-reuse PCT]
 */
#define _GNU_SOURCE
#include "stamped.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
#define MAX_SLOTS 4096

static struct luf_proc *proc;
static struct stamped *_Atomic slot[MAX_SLOTS];
static unsigned int slots = 256;
static atomic_ulong next_stamp = 1;
static atomic_bool stop;

struct worker {
	pthread_t th;
	unsigned long long rng;
	atomic_ulong held;   /* its luf_thread_held(), after each operation */
	atomic_ulong allocs; /* an allocating thread's allocations so far */
	unsigned long ops, reused, malloced, violations;
	unsigned long long longest_ns; /* a reader's longest section, preemption included */
	int kind;		       /* 0 allocate, 1 retire, 2 read */
	int err;
};

static unsigned long rnd(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return (unsigned long)w->rng;
}

static void allocate_one(struct worker *w, struct luf_thread *t)
{
	struct luf_node *n;
	struct stamped *o;
	int ret = luf_reuse(t, &n);

	if (!ret) {
		o = luf_node_entry(n, struct stamped, node);
		w->reused++;
	} else if (ret == -EAGAIN) {
		o = calloc(1, sizeof(*o));
		if (!o) {
			w->err = -ENOMEM;
			return;
		}
		w->malloced++;
	} else {
		w->err = ret;
		return;
	}
	atomic_store_explicit(&w->allocs, w->reused + w->malloced, memory_order_relaxed);
	stamped_fill(o, &next_stamp);
	/* Publish in an empty slot; wait for a retiring thread when the table is full. */
	for (unsigned long i = rnd(w);; i++) {
		struct stamped *none = NULL;

		if (atomic_compare_exchange_strong(&slot[i % slots], &none, o))
			break;
		if (atomic_load_explicit(&stop, memory_order_relaxed)) {
			free(o);
			return;
		}
		if (i % slots == slots - 1)
			sched_yield();
	}
	w->ops++;
}

static void retire_one(struct worker *w, struct luf_thread *t)
{
	struct stamped *o = atomic_exchange(&slot[rnd(w) % slots], NULL);
	int ret;

	if (!o) {
		sched_yield();
		return;
	}
	ret = luf_retire(t, &o->node);
	if (ret)
		w->err = ret;
	w->ops++;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void read_one(struct worker *w, struct luf_thread *t)
{
	unsigned long long t0 = now_ns(), ns;
	struct stamped *o;

	luf_read_lock(t);
	o = atomic_load_explicit(&slot[rnd(w) % slots], memory_order_acquire);
	if (o)
		w->violations += stamped_torn(o, 4);
	luf_read_unlock(t);
	ns = now_ns() - t0;
	w->longest_ns = ns > w->longest_ns ? ns : w->longest_ns;
	w->ops++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct luf_thread *t;

	w->err = luf_thread_register(proc, &t);
	if (w->err)
		return NULL;
	while (!w->err && !atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (w->kind == 0)
			allocate_one(w, t);
		else if (w->kind == 1)
			retire_one(w, t);
		else
			read_one(w, t);
		atomic_store_explicit(&w->held, luf_thread_held(t), memory_order_relaxed);
	}
	if (!w->err)
		w->err = luf_thread_unregister(t);
	return NULL;
}

static void release(struct luf_node *n, void *arg)
{
	(void)arg;
	free(luf_node_entry(n, struct stamped, node));
}

static double now_s(void)
{
	return (double)now_ns() / 1e9;
}

int main(int argc, char **argv)
{
	struct luf_proc_config cfg = {.max_threads = MAX_THREADS, .batch = 64};
	unsigned int allocators = 2, retirers = 2, readers = 1, nw;
	unsigned long max_held = 0, samples = 0, bound, structural, stalled;
	unsigned long long longest_ns = 0;
	unsigned long reused = 0, malloced = 0, retired = 0, reads = 0, violations = 0;
	double seconds = 5, min_reuse = 90, t0, pct, peak_rate = 0;
	unsigned long last_allocs = 0;
	static struct worker w[MAX_THREADS];
	int ret;

	for (int i = 1; i + 1 < argc; i += 2) {
		unsigned long v = strtoul(argv[i + 1], NULL, 0);

		if (!strcmp(argv[i], "--allocators"))
			allocators = (unsigned int)v;
		else if (!strcmp(argv[i], "--retirers"))
			retirers = (unsigned int)v;
		else if (!strcmp(argv[i], "--readers"))
			readers = (unsigned int)v;
		else if (!strcmp(argv[i], "--seconds"))
			seconds = strtod(argv[i + 1], NULL);
		else if (!strcmp(argv[i], "--batch"))
			cfg.batch = (unsigned int)v;
		else if (!strcmp(argv[i], "--slots"))
			slots = (unsigned int)v;
		else if (!strcmp(argv[i], "--min-reuse"))
			min_reuse = strtod(argv[i + 1], NULL);
		else
			break;
	}
	nw = allocators + retirers + readers;
	if (!allocators || !retirers || nw > MAX_THREADS || !slots || slots > MAX_SLOTS ||
	    !cfg.batch || cfg.batch > LUF_PROC_MAX_BATCH || seconds <= 0) {
		fprintf(stderr,
			"luf_proc_pc: need 1+ allocators and retirers, at most %d threads, "
			"1..%d slots, a batch of 1..%u, --seconds above 0\n",
			MAX_THREADS, MAX_SLOTS, LUF_PROC_MAX_BATCH);
		return 2;
	}
	ret = luf_proc_create(&proc, &cfg);
	if (ret) {
		fprintf(stderr, "luf_proc_pc: luf_proc_create: %d\n", ret);
		return ret == -ENOSYS || ret == -EPERM ? 77 : 1;
	}
	for (unsigned int i = 0; i < nw; i++) {
		w[i].kind = i < allocators ? 0 : i < allocators + retirers ? 1 : 2;
		w[i].rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]))
			return 1;
	}
	t0 = now_s();
	for (double last = t0, now = t0; now - t0 < seconds;) {
		unsigned long allocs = 0, held;

		usleep(1000);
		held = luf_proc_pooled(proc);
		for (unsigned int i = 0; i < nw; i++) {
			held += atomic_load_explicit(&w[i].held, memory_order_relaxed);
			allocs += atomic_load_explicit(&w[i].allocs, memory_order_relaxed);
		}
		max_held = held > max_held ? held : max_held;
		samples++;
		now = now_s();
		if (now - last >= 0.01) { /* the allocation rate over 10 ms windows */
			double rate = (double)(allocs - last_allocs) / (now - last);

			peak_rate = rate > peak_rate ? rate : peak_rate;
			last = now;
			last_allocs = allocs;
		}
	}
	atomic_store(&stop, true);
	for (unsigned int i = 0; i < nw; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].err) {
			fprintf(stderr, "luf_proc_pc: thread %u: error %d\n", i, w[i].err);
			return 1;
		}
		reused += w[i].reused, malloced += w[i].malloced;
		violations += w[i].violations;
		longest_ns = w[i].longest_ns > longest_ns ? w[i].longest_ns : longest_ns;
		if (w[i].kind == 1)
			retired += w[i].ops;
		else if (w[i].kind == 2)
			reads += w[i].ops;
	}
	pct = reused + malloced ? 100.0 * (double)reused / (double)(reused + malloced) : 0;
	/*
	 * The bound: per thread 6 batches (a retiring thread's open batch,
	 * the 4 it keeps and the one that took it past them; an allocating
	 * thread's 4 ready ones, the one waiting for readers and the one
	 * taken after it), the table, and what the program allocates while a
	 * reader stays inside one section (preempted there: nothing retired
	 * after the section began can be reused until it ends) at the peak
	 * allocation rate, three times over: what the program takes during
	 * a stall comes back two grace periods after it ends, and the next
	 * stall may come first.
	 */
	structural = ((unsigned long)retirers + allocators) * 6 * cfg.batch + slots;
	stalled = (unsigned long)(3.0 * peak_rate * (double)longest_ns / 1e9);
	bound = structural + stalled;
	printf("luf_proc_pc: %u allocating, %u retiring, %u reading threads, %.0f s, batch %u, "
	       "%u slots: %lu allocations (%lu reused, %lu new: %.2f%% reused), %lu retired, "
	       "%lu reads, %lu violations, longest section %.3f ms; held at most %lu objects "
	       "(%lu samples; bound %lu: %lu + %lu for the longest section), %lu system calls\n",
	       allocators, retirers, readers, seconds, cfg.batch, slots, reused + malloced, reused,
	       malloced, pct, retired, reads, violations, (double)longest_ns / 1e6, max_held,
	       samples, bound, structural, stalled, luf_user_calls(luf_proc_backend(proc)));
	for (unsigned int i = 0; i < slots; i++)
		free(atomic_load(&slot[i]));
	if (luf_proc_destroy(proc, release, NULL))
		return 1;
	if (violations) {
		printf("luf_proc_pc: FAIL: %lu objects reused while a section read them\n",
		       violations);
		return 1;
	}
	if (pct <= min_reuse) {
		printf("luf_proc_pc: FAIL: reuse %.2f%%, not above %.0f%%\n", pct, min_reuse);
		return 1;
	}
	if (max_held > bound) {
		printf("luf_proc_pc: FAIL: held %lu objects, above the bound %lu\n", max_held,
		       bound);
		return 1;
	}
	printf("luf_proc_pc: ok\n");
	return 0;
}
