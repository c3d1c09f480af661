// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_proc.h under load: threads read random slots of a shared table
 * inside read sections and replace objects (retire the old one, take the
 * new one from luf_reuse() or malloc()). Each object carries a stamp and
 * canary words written before it is published; a reader reads the stamp,
 * the words and the stamp again, so an object reused while a section can
 * still read it shows as a torn or changed canary. Expected: 0 such
 * violations, and reuse actually happening (not every object from
 * malloc()).
 *
 * The LUF_MUTANT_PROC_NO_READERS build (lib/user/proc.c compiled in with
 * the reader check switched off) must report violations: ctest WILL_FAIL.
 * Under ThreadSanitizer (label tsan) a reuse not ordered after the
 * sections that read the object is a reported race as well.
 *
 * Usage: luf_proc_stress [--threads N] [--ops N] [--hold N] [--slots N] [--batch N]
 */
#define _GNU_SOURCE
#include "stamped.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLOTS 32

static struct luf_proc *proc;
static struct stamped *_Atomic slot[MAX_SLOTS];
static unsigned int slots = MAX_SLOTS;
static atomic_ulong next_stamp = 1;
static unsigned int threads = 2, hold = 64;
static unsigned long ops = 200000;

struct worker {
	pthread_t th;
	unsigned long long rng;
	unsigned long violations, reads, updates, reused, malloced, held;
	int err;
};

static unsigned long rnd(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return (unsigned long)w->rng;
}

static void read_one(struct worker *w, struct luf_thread *t)
{
	bool bad;

	luf_read_lock(t);
	/* --hold: a longer section, more overlap */
	bad = stamped_torn(atomic_load_explicit(&slot[rnd(w) % slots], memory_order_acquire), hold);
	luf_read_unlock(t);
	w->reads++;
	w->violations += bad;
}

static void update_one(struct worker *w, struct luf_thread *t)
{
	struct luf_node *n;
	struct stamped *o, *old;
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
	stamped_fill(o, &next_stamp);
	old = atomic_exchange(&slot[rnd(w) % slots], o);
	ret = luf_retire(t, &old->node);
	if (ret)
		w->err = ret;
	w->updates++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct luf_thread *t;

	w->err = luf_thread_register(proc, &t);
	if (w->err)
		return NULL;
	for (unsigned long i = 0; i < ops && !w->err; i++) {
		if (rnd(w) % 8)
			read_one(w, t);
		else
			update_one(w, t);
	}
	w->held = luf_thread_held(t);
	if (!w->err)
		w->err = luf_thread_unregister(t);
	return NULL;
}

static void release(struct luf_node *n, void *arg)
{
	(void)arg;
	free(luf_node_entry(n, struct stamped, node));
}

int main(int argc, char **argv)
{
	struct luf_proc_config cfg = {.max_threads = 8, .batch = 16};
	struct worker w[8];
	unsigned long v = 0, r = 0, u = 0, re = 0, m = 0;
	int ret;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--threads"))
			threads = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--ops"))
			ops = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--batch"))
			cfg.batch = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--slots"))
			slots = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--hold"))
			hold = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else
			break;
	}
	if (slots < 1 || slots > MAX_SLOTS) {
		fprintf(stderr, "luf_proc_stress: --slots must be 1..%d\n", MAX_SLOTS);
		return 2;
	}
	if (threads < 1 || threads > 8) {
		fprintf(stderr, "luf_proc_stress: --threads must be 1..8\n");
		return 2;
	}
	ret = luf_proc_create(&proc, &cfg);
	if (ret) {
		fprintf(stderr, "luf_proc_stress: luf_proc_create: %d\n", ret);
		return ret == -ENOSYS || ret == -EPERM ? 77 : 1;
	}
	for (unsigned int i = 0; i < slots; i++) {
		struct stamped *o = calloc(1, sizeof(*o));

		if (!o)
			return 1;
		stamped_fill(o, &next_stamp);
		atomic_store(&slot[i], o);
	}
	memset(w, 0, sizeof(w));
	for (unsigned int i = 0; i < threads; i++) {
		w[i].rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i]))
			return 1;
	}
	for (unsigned int i = 0; i < threads; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].err) {
			fprintf(stderr, "luf_proc_stress: thread %u: error %d\n", i, w[i].err);
			return 1;
		}
		v += w[i].violations, r += w[i].reads, u += w[i].updates;
		re += w[i].reused, m += w[i].malloced;
		printf("luf_proc_stress: thread %u held %lu objects at the end\n", i, w[i].held);
	}
	printf("luf_proc_stress: %u threads, %lu reads, %lu updates (%lu reused, %lu new), "
	       "%lu system calls, %lu violations\n",
	       threads, r, u, re, m, luf_user_calls(luf_proc_backend(proc)), v);
	for (unsigned int i = 0; i < slots; i++)
		free(atomic_load(&slot[i]));
	if (luf_proc_destroy(proc, release, NULL))
		return 1;
	if (v) {
		printf("luf_proc_stress: FAIL: %lu objects reused while a section read them\n", v);
		return 1;
	}
	if (u > 1000 && re < u / 2) {
		printf("luf_proc_stress: FAIL: only %lu of %lu updates reused an object\n", re, u);
		return 1;
	}
	printf("luf_proc_stress: ok\n");
	return 0;
}
