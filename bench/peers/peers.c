// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf-peers: luf + membarrier against the mechanisms people use instead
 * (flush on every free, liburcu call_rcu and synchronize_rcu, ck_epoch),
 * real threads and real system calls, the same workload (peers.h).
 *
 * Usage: luf-peers [--threads N] [--frees N] [--secs S] [--runs N]
 *                  [--reads N] [--slots N] [--pool N] [--hold US] [--only NAME]
 *                  [--data FILE]
 *   --frees  retired blocks per run, all threads together (default 400000)
 *   --secs   a run also stops after S seconds (default 3)
 *   --runs   repetitions; each runs every mechanism once, in turn (default 5)
 *   --reads  protected reads per replaced block (default 2)
 *   --slots  slots per thread (256); --pool blocks per thread (1024)
 *   --hold   one read in PEER_HOLD_EVERY sleeps US microseconds inside its
 *            read-side section, then checks its block again (default 0:
 *            off). For the smoke test: without it a reuse under a reader is
 *            seen only if it lands within that read's few nanoseconds, so a
 *            mechanism with no grace period at all passes a short run.
 * Output: a markdown table of medians over the runs [min-max]; ratios are
 * taken within a repetition. Exit status: 0; 1 a canary violation or an
 * error; 2 usage.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "peers.h"
#include "syscount.h"

struct peer_blk *peer_pool;
atomic_ulong *peer_slot;
unsigned long peer_nr_slots;
struct peer_thr *peer_thr;
unsigned int peer_threads;

static struct {
	unsigned int threads, runs, reads, slots, hold;
	unsigned long frees, pool;
	double secs;
	const char *only, *data;
} opt = {2, 5, 2, 256, 0, 400000, 1024, 3.0, NULL, NULL};

static atomic_int go, stop;
static atomic_uint ready; /* threads whose slots all name a block */
static atomic_uint done;  /* threads out of the loop (quota reached, or stop) */
static const struct peer_mech *mech;

double peer_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned long stamp(unsigned long slot, unsigned long version, unsigned int i)
{
	return (slot << 40 ^ version) * 0x9e3779b97f4a7c15ul + i;
}

bool peer_canary_ok(const struct peer_blk *b, unsigned long slot, unsigned long e)
{
	bool ok = true;

	for (unsigned int i = 0; i < PEER_WORDS; i++)
		ok &=
		    atomic_load_explicit(&b->w[i], memory_order_relaxed) == stamp(slot, e >> 32, i);
	return ok;
}

void peer_read_block(struct peer_thr *t, unsigned long slot, unsigned long e)
{
	unsigned long i = e & 0xffffffffu;

	t->reads++;
	/* A slot that names no block (0: never filled) is a harness bug: never index the pool. */
	if (!i || i > (unsigned long)peer_threads * opt.pool) {
		t->empty++;
	} else if (!peer_canary_ok(&peer_pool[i - 1], slot, e)) {
		t->violations++;
	} else if (opt.hold && t->reads % PEER_HOLD_EVERY == 0) {
		usleep(opt.hold); /* a reader preempted with its reference: the others run */
		if (!peer_canary_ok(&peer_pool[i - 1], slot, e))
			t->violations++;
	}
}

bool peer_hazarded(const struct peer_blk *b)
{
	for (unsigned int i = 0; i < peer_threads; i++)
		if (atomic_load_explicit(&peer_thr[i].hazard, memory_order_acquire) == b->idx + 1)
			return true;
	return false;
}

void peer_wait_done(struct peer_thr *t, double t0)
{
	t->waits++;
	if (t->nwait < PEER_MAX_WAITS)
		t->wait_us[t->nwait++] = (peer_now() - t0) * 1e6;
}

void peer_own_blocks(unsigned int t, unsigned long *first, unsigned long *n)
{
	*first = (unsigned long)t * opt.pool;
	*n = opt.pool;
}

void peer_held(struct peer_thr *t, long n)
{
	unsigned long cur;

	t->held += (unsigned long)n;
	cur = t->held - atomic_load_explicit(&t->returned, memory_order_relaxed);
	if (n > 0 && cur > t->peak_held)
		t->peak_held = cur;
}

static uint64_t rnd(struct peer_thr *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return t->rng;
}

static void replace(struct peer_thr *t, unsigned long s)
{
	unsigned long old = atomic_load_explicit(&peer_slot[s], memory_order_relaxed);
	unsigned long version = (old >> 32) + 1;
	struct peer_blk *b = mech->get(t);

	for (unsigned int i = 0; i < PEER_WORDS; i++)
		atomic_store_explicit(&b->w[i], stamp(s, version, i), memory_order_relaxed);
	atomic_store_explicit(&peer_slot[s], version << 32 | (b->idx + 1), memory_order_release);
	if (old) {
		mech->retire(t, &peer_pool[(old & 0xffffffffu) - 1]);
		t->frees++;
	}
}

static void *thread_main(void *arg)
{
	struct peer_thr *t = arg;
	unsigned long quota = opt.frees / opt.threads;

	if (mech->thread_init(t)) {
		atomic_store(&stop, 1); /* nobody reads: this thread's slots stay empty */
		atomic_fetch_add(&ready, 1);
		return (void *)1;
	}
	for (unsigned long k = 0; k < opt.slots; k++)
		replace(t, k * opt.threads + t->id); /* first blocks: nothing retired */
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&go))
		sched_yield(); /* leave the CPU to a sibling still filling its slots */
	while (t->frees < quota && !atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (unsigned int r = 0; r < opt.reads; r++)
			mech->read(t, rnd(t) % peer_nr_slots);
		replace(t, (rnd(t) % opt.slots) * opt.threads + t->id);
	}
	atomic_fetch_add(&done, 1);
	mech->thread_fini(t);
	return NULL;
}

struct result {
	double fps, barriers, gps, peak_kib, waits, p50, p99;
	unsigned long violations, empty;
	int failed;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double quantile(double *v, unsigned long n, double q)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(unsigned long)(q * (double)(n - 1) + 0.5)];
}

static struct result run_one(const struct peer_mech *m)
{
	unsigned int T = opt.threads;
	unsigned long nblk = (unsigned long)T * opt.pool, mb0, gp0, frees = 0, nw = 0, waits = 0;
	pthread_t th[PEER_MAX_THREADS];
	struct result r = {0};
	double t0, secs, *all;

	mech = m;
	peer_threads = T;
	peer_nr_slots = (unsigned long)opt.slots * T;
	peer_pool = aligned_alloc(64, nblk * sizeof(*peer_pool));
	peer_slot = calloc(peer_nr_slots, sizeof(*peer_slot));
	peer_thr = aligned_alloc(64, T * sizeof(*peer_thr));
	all = calloc((size_t)T * PEER_MAX_WAITS, sizeof(*all));
	if (!peer_pool || !peer_slot || !peer_thr || !all) {
		r.failed = 1;
		return r;
	}
	memset(peer_pool, 0, nblk * sizeof(*peer_pool));
	memset(peer_thr, 0, T * sizeof(*peer_thr));
	for (unsigned long i = 0; i < nblk; i++)
		peer_pool[i].idx = i, peer_pool[i].owner = (unsigned int)(i / opt.pool);
	for (unsigned int i = 0; i < T; i++) {
		peer_thr[i].id = i;
		peer_thr[i].rng = 0x9e3779b97f4a7c15ull * (i + 1);
		peer_thr[i].wait_us = &all[(size_t)i * PEER_MAX_WAITS];
	}
	if (m->init(T, opt.pool)) {
		r.failed = 1;
		return r;
	}
	atomic_store(&go, 0);
	atomic_store(&stop, 0);
	atomic_store(&ready, 0);
	atomic_store(&done, 0);
	for (unsigned int i = 0; i < T; i++)
		pthread_create(&th[i], NULL, thread_main, &peer_thr[i]);
	/*
	 * Readers pick slots of every thread: start them only when every slot
	 * names a block. A sleep is no such guarantee: on a loaded machine a
	 * thread may not run for tens of milliseconds, and a read of its empty
	 * slot took block index -1 (the bytes before the pool).
	 */
	while (atomic_load(&ready) < T)
		usleep(1000);
	mb0 = syscount_membarriers();
	gp0 = m->grace_periods();
	for (unsigned int i = 0; i < T; i++)
		peer_thr[i].frees = 0, peer_thr[i].waits = 0, peer_thr[i].nwait = 0;
	t0 = peer_now();
	atomic_store(&go, 1);
	/* Each thread stops at its quota: not reading their counters while they run. */
	while (peer_now() - t0 < opt.secs && atomic_load(&done) < T && !atomic_load(&stop))
		usleep(5000);
	atomic_store(&stop, 1);
	for (unsigned int i = 0; i < T; i++) {
		void *ret;

		pthread_join(th[i], &ret);
		r.failed |= ret != NULL;
	}
	secs = peer_now() - t0;
	for (unsigned int i = 0; i < T; i++) {
		struct peer_thr *t = &peer_thr[i];

		frees += t->frees;
		waits += t->waits;
		r.violations += t->violations;
		r.empty += t->empty;
		r.peak_kib += (double)t->peak_held * sizeof(struct peer_blk) / 1024.0;
		memmove(&all[nw], t->wait_us, t->nwait * sizeof(*all));
		nw += t->nwait;
	}
	r.fps = (double)frees / secs;
	r.barriers = 1e6 * (double)(syscount_membarriers() - mb0) / (double)(frees ? frees : 1);
	r.gps = gp0 == ULONG_MAX
		    ? -1
		    : 1e6 * (double)(m->grace_periods() - gp0) / (double)(frees ? frees : 1);
	r.waits = 1e6 * (double)waits / (double)(frees ? frees : 1);
	r.p50 = quantile(all, nw, 0.50);
	r.p99 = quantile(all, nw, 0.99);
	m->fini();
	free(all), free(peer_thr), free(peer_slot), free(peer_pool);
	return r;
}

static void cell(double *v, unsigned int n, const char *fmt)
{
	char a[32], b[32], c[32];
	double s[64];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	snprintf(a, sizeof(a), fmt, n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2);
	snprintf(b, sizeof(b), fmt, s[0]);
	snprintf(c, sizeof(c), fmt, s[n - 1]);
	if (s[0] < 0)
		printf(" n/a |");
	else
		printf(strcmp(b, c) ? " %s [%s–%s] |" : " %s |", a, b, c);
}

static int parse(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];

		if (!strcmp(a, "--threads"))
			opt.threads = (unsigned int)atoi(v);
		else if (!strcmp(a, "--frees"))
			opt.frees = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--secs"))
			opt.secs = atof(v);
		else if (!strcmp(a, "--runs"))
			opt.runs = (unsigned int)atoi(v);
		else if (!strcmp(a, "--reads"))
			opt.reads = (unsigned int)atoi(v);
		else if (!strcmp(a, "--slots"))
			opt.slots = (unsigned int)atoi(v);
		else if (!strcmp(a, "--pool"))
			opt.pool = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--hold"))
			opt.hold = (unsigned int)atoi(v);
		else if (!strcmp(a, "--only"))
			opt.only = v;
		else if (!strcmp(a, "--data"))
			opt.data = v;
		else
			return -1;
	}
	if (!opt.threads || opt.threads > PEER_MAX_THREADS || !opt.runs || opt.runs > 64 ||
	    !opt.slots || opt.pool < opt.slots + 2 * PEER_BATCH || opt.frees < opt.threads)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct peer_mech *const mechs[] = {&peer_luf, &peer_every, &peer_urcu_call,
							&peer_urcu_sync, &peer_ck};
	enum { NM = sizeof(mechs) / sizeof(mechs[0]) };
	static double v[NM][9][64];
	int bad = 0;

	if ((argc - 1) % 2 || parse(argc, argv)) {
		fprintf(stderr, "usage: luf-peers [--threads N] [--frees N] [--secs S] [--runs N] "
				"[--reads N] [--slots N] [--pool N] [--hold US] [--only NAME] "
				"[--data FILE]\n");
		return 2;
	}
	for (unsigned int k = 0; k < opt.runs; k++) {
		struct result r[NM];

		for (int m = 0; m < NM; m++) {
			if (opt.only && strcmp(opt.only, mechs[m]->name)) {
				memset(&r[m], 0, sizeof(r[m]));
				continue;
			}
			r[m] = run_one(mechs[m]);
			if (r[m].failed || r[m].violations || r[m].empty) {
				fprintf(stderr, "luf-peers: %s: %s\n", mechs[m]->name,
					r[m].failed	  ? "failed"
					: r[m].violations ? "CANARY VIOLATION"
							  : "read a slot that names no block");
				bad = 1;
			}
		}
		for (int m = 0; m < NM; m++) {
			double x[9] = {r[m].fps,
				       r[m].barriers,
				       r[m].gps,
				       r[m].peak_kib,
				       r[m].waits,
				       r[m].p50,
				       r[m].p99,
				       r[0].fps / (r[m].fps > 0 ? r[m].fps : 1),
				       (double)r[m].violations};

			for (int j = 0; j < 9; j++)
				v[m][j][k] = x[j];
		}
	}
	printf("<!-- luf-peers --threads %u --frees %lu --secs %g --runs %u --reads %u --slots %u "
	       "--pool %lu -->\n",
	       opt.threads, opt.frees, opt.secs, opt.runs, opt.reads, opt.slots, opt.pool);
	if (opt.hold)
		printf("<!-- --hold %u: a check run, not a benchmark -->\n", opt.hold);
	printf("| mechanism | frees/s | membarriers / 10^6 frees | flushes or grace periods / "
	       "10^6 frees | peak held in deferred lists (KiB) | waiting allocations / 10^6 "
	       "frees | wait p50 (µs) | wait p99 (µs) | luf frees/s ÷ this | violations |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (int m = 0; m < NM; m++) {
		static const char *const fmt[9] = {"%.0f", "%.0f", "%.0f", "%.1f", "%.0f",
						   "%.1f", "%.1f", "%.2f", "%.0f"};

		if (opt.only && strcmp(opt.only, mechs[m]->name))
			continue;
		printf("| %s |", mechs[m]->name);
		for (int j = 0; j < 9; j++)
			cell(v[m][j], opt.runs, fmt[j]);
		printf("\n");
	}
	if (opt.data) {
		FILE *f = fopen(opt.data, "w");

		for (int m = 0; f && m < NM; m++) {
			double s[64];

			memcpy(s, v[m][0], opt.runs * sizeof(double));
			qsort(s, opt.runs, sizeof(double), cmp_double);
			fprintf(f, "%s %.0f %.0f\n", mechs[m]->name, s[opt.runs / 2],
				(qsort(v[m][1], opt.runs, sizeof(double), cmp_double),
				 v[m][1][opt.runs / 2]));
		}
		if (f)
			fclose(f);
	}
	return bad;
}
