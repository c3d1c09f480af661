// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf-ds: a read-mostly concurrent hash map (ds.h) under luf's high-level
 * API, liburcu (memb, call_rcu), ck_epoch and membarrier-per-retire: total
 * ops/s (and per CPU-second of the whole process, which the other jobs
 * of a shared machine do not skew), reads/s, the peak of what the
 * deferred lists hold, and membarrier(2) calls per 1000 updates.
 *
 * Usage: luf-ds [--scheme NAME|all] [--threads LIST] [--update-pct LIST]
 *               [--seconds S | --ops N] [--keys N] [--runs N] [--hold US]
 *               [--luf-max-threads N] [--pc] [--data FILE] [--smoke]
 *   --scheme      luf, urcu-memb, ck-epoch, membarrier-per-retire or all
 *                 (default)
 *   --threads     worker threads, a comma-separated list (default 1,2)
 *   --update-pct  percent of operations that update, a list (default 1,10,50)
 *   --seconds     each run's length (default 0.6); --ops N: each run does N
 *                 operations over all threads instead
 *   --keys        the key range, prefilled to half (default 4096; 1024
 *                 buckets)
 *   --runs        repetitions; each runs every configuration and scheme
 *                 once, in turn, starting with another scheme each time
 *                 (default 5); the table gives medians
 *   --hold        one found key in DS_HOLD_EVERY sleeps US microseconds
 *                 inside its read section, then checks the node again
 *                 (a check, not a benchmark: default 0)
 *   --luf-max-threads  struct luf_proc_config.max_threads (default 0:
 *                 luf's default, LUF_PROC_DEFAULT_THREADS)
 *   --pc          producers and consumers: an update of an even-numbered
 *                 thread only inserts, of an odd-numbered one only deletes
 *                 (ds.h); the updates column says "p/c", and mallocs
 *                 are counted per 1000 inserts
 *   --data        also write one line per row, for charts
 *   --smoke       a check for ctest: every scheme, 1 and 2 threads (2 and
 *                 4 with --pc), 50% updates, 256 keys, 50 ms each,
 *                 --hold 100, 1 run; fails unless every scheme ran and no
 *                 canary was bad
 * Output: a markdown table. Exit status: 0; 1 a canary violation, a scheme
 * that did not run or an error; 2 usage.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ds.h"
#include "syscount.h"

#define MAX_LIST 8
#define MAX_RUNS 15

unsigned int ds_threads, ds_update_pct, ds_hold_us;
int ds_pc;
unsigned long ds_keys = 4096, ds_quota;
atomic_int ds_stop;
struct ds_bucket *ds_map;

static const struct ds_scheme *const schemes[] = {&ds_luf, &ds_urcu, &ds_ck, &ds_every};
enum { NS = sizeof(schemes) / sizeof(schemes[0]) };

static struct {
	const char *scheme, *data;
	unsigned int threads[MAX_LIST], nthreads;
	unsigned int pct[MAX_LIST], npct;
	unsigned int runs;
	double seconds;
	unsigned long ops;
	int smoke;
} opt = {NULL, NULL, {1, 2}, 2, {1, 10, 50}, 3, 5, 0.6, 0, 0};

static atomic_int go, release_threads;
static atomic_uint ready, done;
static const struct ds_scheme *cur;

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double ds_now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

struct ds_node *ds_node_new(struct ds_thr *t)
{
	struct ds_node *n = malloc(sizeof(*n));

	if (!n) {
		fprintf(stderr, "luf-ds: out of memory\n");
		exit(1);
	}
	memset(n->mech, 0, sizeof(n->mech));
	atomic_init(&n->next, NULL);
	atomic_init(&n->key, 0);
	atomic_init(&n->canary, DS_POISON);
	if (t)
		t->mallocs++;
	return n;
}

void ds_node_poison(struct ds_node *n)
{
	atomic_store_explicit(&n->canary, DS_POISON, memory_order_relaxed);
	atomic_store_explicit(&n->key, ~0ul, memory_order_relaxed);
}

void ds_node_free(struct ds_node *n)
{
	ds_node_poison(n);
	free(n);
}

static void *thread_main(void *arg)
{
	struct ds_thr *t = arg;

	t->failed = cur->thread_init(t) != 0;
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&go))
		sched_yield();
	if (!t->failed)
		cur->work(t);
	t->end = ds_now();
	atomic_fetch_add(&done, 1);
	/* Tear-down (luf's unregister flush, liburcu's barrier) is not measured. */
	while (!atomic_load(&release_threads))
		usleep(200);
	if (!t->failed)
		cur->thread_fini(t);
	return NULL;
}

struct result {
	double ops, cpu_ops, reads, peak, peak_kib, mb, futex, mallocs, violations;
	int failed;
};

static struct result run_one(const struct ds_scheme *s, unsigned int T, unsigned int pct)
{
	static struct ds_thr thr[DS_MAX_THREADS];
	pthread_t th[DS_MAX_THREADS];
	unsigned long mb0, fx0, mb, fx, ops = 0, reads = 0, updates = 0, inserts = 0, mallocs = 0;
	unsigned long peak = 0;
	struct result r = {0};
	double t0, cpu0, cpu, end = 0;

	cur = s;
	ds_threads = T;
	ds_update_pct = pct;
	ds_quota = opt.ops ? (opt.ops + T - 1) / T : 0;
	ds_map = calloc(DS_BUCKETS, sizeof(*ds_map));
	if (!ds_map) {
		r.failed = 1;
		return r;
	}
	for (unsigned int b = 0; b < DS_BUCKETS; b++)
		pthread_mutex_init(&ds_map[b].lock, NULL);
	for (unsigned long k = 0; k < ds_keys; k += 2) { /* half the keys */
		struct ds_node *n = ds_node_new(NULL);
		struct ds_bucket *bk = &ds_map[k & (DS_BUCKETS - 1)];

		atomic_store(&n->key, k);
		atomic_store(&n->canary, DS_MAGIC ^ k);
		atomic_store(&n->next, atomic_load(&bk->head));
		atomic_store(&bk->head, n);
	}
	memset(thr, 0, sizeof(thr));
	for (unsigned int i = 0; i < T; i++) {
		thr[i].id = i;
		thr[i].rng = 0x9e3779b97f4a7c15ull * (i + 1) ^ (uint64_t)(ds_now() * 1e9);
	}
	if (s->init(T)) {
		r.failed = 1;
		return r;
	}
	atomic_store(&go, 0);
	atomic_store(&ds_stop, 0);
	atomic_store(&release_threads, 0);
	atomic_store(&ready, 0);
	atomic_store(&done, 0);
	for (unsigned int i = 0; i < T; i++)
		pthread_create(&th[i], NULL, thread_main, &thr[i]);
	while (atomic_load(&ready) < T)
		usleep(500);
	mb0 = syscount_membarriers();
	fx0 = syscount_futexes();
	cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	t0 = ds_now();
	atomic_store(&go, 1);
	if (!opt.ops) {
		struct timespec ts = {(time_t)opt.seconds,
				      (long)((opt.seconds - (double)(time_t)opt.seconds) * 1e9)};

		while (nanosleep(&ts, &ts))
			;
		atomic_store(&ds_stop, 1);
	}
	while (atomic_load(&done) < T)
		usleep(200);
	cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	mb = syscount_membarriers() - mb0;
	fx = syscount_futexes() - fx0;
	atomic_store(&release_threads, 1);
	for (unsigned int i = 0; i < T; i++)
		pthread_join(th[i], NULL);
	s->fini();
	for (unsigned int i = 0; i < T; i++) {
		struct ds_thr *t = &thr[i];

		r.failed |= t->failed;
		ops += t->ops;
		reads += t->reads;
		updates += t->updates;
		inserts += t->inserts;
		mallocs += t->mallocs;
		r.violations += (double)t->violations;
		if (t->peak_held > peak)
			peak = t->peak_held;
		if (t->end > end)
			end = t->end;
	}
	r.failed |= ops == 0;
	r.ops = (double)ops / (end - t0);
	r.cpu_ops = (double)ops / (cpu > 0 ? cpu : 1e-9);
	r.reads = (double)reads / (end - t0);
	r.peak = (double)peak;
	r.peak_kib = (double)peak * sizeof(struct ds_node) / 1024.0;
	r.mb = 1000.0 * (double)mb / (double)(updates ? updates : 1);
	r.futex = 1000.0 * (double)fx / (double)(updates ? updates : 1);
	if (ds_pc) /* per insert: a consumer's updates allocate nothing */
		updates = inserts;
	r.mallocs = 1000.0 * (double)mallocs / (double)(updates ? updates : 1);
	for (unsigned int b = 0; b < DS_BUCKETS; b++) {
		struct ds_node *n = atomic_load(&ds_map[b].head);

		while (n) {
			struct ds_node *next = atomic_load(&n->next);

			ds_node_free(n);
			n = next;
		}
		pthread_mutex_destroy(&ds_map[b].lock);
	}
	free(ds_map);
	ds_map = NULL;
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, unsigned int n, double *lo, double *hi)
{
	double s[MAX_RUNS];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	*lo = s[0];
	*hi = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* A table cell: the median, and [min–max] if @range and they differ. */
static void cell(const double *v, unsigned int n, const char *fmt, int range)
{
	char a[32], b[32], c[32];
	double lo, hi, m = median(v, n, &lo, &hi);

	snprintf(a, sizeof(a), fmt, m);
	snprintf(b, sizeof(b), fmt, lo);
	snprintf(c, sizeof(c), fmt, hi);
	printf(range && strcmp(b, c) ? " %s [%s–%s] |" : " %s |", a, b, c);
}

static int list(const char *v, unsigned int *out, unsigned int *n, unsigned int max)
{
	char *end;

	*n = 0;
	do {
		unsigned long x = strtoul(v, &end, 10);

		if (end == v || *n == MAX_LIST || x > max)
			return -1;
		out[(*n)++] = (unsigned int)x;
		v = end + 1;
	} while (*end == ',');
	return *end ? -1 : 0;
}

static int parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--smoke")) {
			opt.smoke = 1;
			continue;
		}
		if (!strcmp(a, "--pc")) {
			ds_pc = 1;
			continue;
		}
		if (!v)
			return -1;
		i++;
		if (!strcmp(a, "--scheme"))
			opt.scheme = strcmp(v, "all") ? v : NULL;
		else if (!strcmp(a, "--threads")) {
			if (list(v, opt.threads, &opt.nthreads, DS_MAX_THREADS))
				return -1;
		} else if (!strcmp(a, "--update-pct")) {
			if (list(v, opt.pct, &opt.npct, 100))
				return -1;
		} else if (!strcmp(a, "--seconds"))
			opt.seconds = atof(v);
		else if (!strcmp(a, "--ops"))
			opt.ops = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--keys"))
			ds_keys = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--runs"))
			opt.runs = (unsigned int)atoi(v);
		else if (!strcmp(a, "--hold"))
			ds_hold_us = (unsigned int)atoi(v);
		else if (!strcmp(a, "--luf-max-threads"))
			ds_luf_max_threads = (unsigned int)atoi(v);
		else if (!strcmp(a, "--data"))
			opt.data = v;
		else
			return -1;
	}
	if (opt.smoke) {
		opt.threads[0] = ds_pc ? 2 : 1, opt.threads[1] = ds_pc ? 4 : 2, opt.nthreads = 2;
		opt.pct[0] = 50, opt.npct = 1;
		opt.seconds = 0.05, opt.ops = 0, opt.runs = 1;
		ds_keys = 256, ds_hold_us = 100;
	}
	for (unsigned int i = 0; i < opt.nthreads; i++)
		if (!opt.threads[i])
			return -1;
	if (!opt.runs || opt.runs > MAX_RUNS || ds_keys < 2 || (!opt.ops && opt.seconds <= 0))
		return -1;
	if (opt.scheme) {
		for (int s = 0; s < NS; s++)
			if (!strcmp(opt.scheme, schemes[s]->name))
				return 0;
		return -1;
	}
	return 0;
}

enum { M_OPS, M_CPU, M_READS, M_PEAK, M_KIB, M_MB, M_FUTEX, M_MALLOC, M_RATIO, M_VIOL, NMET };

int main(int argc, char **argv)
{
	static double v[NS][MAX_LIST][MAX_LIST][NMET][MAX_RUNS];
	static int ran[NS][MAX_LIST][MAX_LIST];
	FILE *data = NULL;
	int bad = 0;

	if (parse(argc, argv)) {
		fprintf(stderr,
			"usage: luf-ds [--scheme luf|urcu-memb|ck-epoch|membarrier-per-retire|all] "
			"[--threads 1,2] [--update-pct 1,10,50] [--seconds S | --ops N] [--keys N] "
			"[--runs N] [--hold US] [--luf-max-threads N] [--pc] [--data FILE] "
			"[--smoke]\n");
		return 2;
	}
	for (unsigned int k = 0; k < opt.runs; k++)
		for (unsigned int ti = 0; ti < opt.nthreads; ti++)
			for (unsigned int pi = 0; pi < opt.npct; pi++) {
				struct result r[NS] = {0};

				/* Each repetition starts with another scheme: no fixed order. */
				for (int i = 0; i < NS; i++) {
					int s = (int)((i + k) % NS);

					if (opt.scheme && strcmp(opt.scheme, schemes[s]->name))
						continue;
					r[s] = run_one(schemes[s], opt.threads[ti], opt.pct[pi]);
					if (r[s].failed || r[s].violations) {
						fprintf(
						    stderr, "luf-ds: %s, %u threads, %u%%: %s\n",
						    schemes[s]->name, opt.threads[ti], opt.pct[pi],
						    r[s].failed ? "failed" : "CANARY VIOLATION");
						bad = 1;
					}
					ran[s][ti][pi] += !r[s].failed;
				}
				for (int s = 0; s < NS; s++) {
					double x[NMET] = {r[s].ops,
							  r[s].cpu_ops,
							  r[s].reads,
							  r[s].peak,
							  r[s].peak_kib,
							  r[s].mb,
							  r[s].futex,
							  r[s].mallocs,
							  r[0].ops / (r[s].ops > 0 ? r[s].ops : 1),
							  r[s].violations};

					for (int j = 0; j < NMET; j++)
						v[s][ti][pi][j][k] = x[j];
				}
			}
	if (opt.data && !(data = fopen(opt.data, "w")))
		perror(opt.data), bad = 1;
	printf("<!-- luf-ds --seconds %g --ops %lu --keys %lu --runs %u --hold %u "
	       "--luf-max-threads %u%s%s -->\n",
	       opt.seconds, opt.ops, ds_keys, opt.runs, ds_hold_us, ds_luf_max_threads,
	       ds_pc ? " --pc" : "", opt.smoke ? " --smoke (a check, not a benchmark)" : "");
	printf("| threads | updates | scheme | ops/s | ops per CPU-second | reads/s | peak held in "
	       "deferred lists: "
	       "objects | (KiB) | membarriers / 1000 updates | futex / 1000 updates | malloc / "
	       "1000 %s | luf ops/s ÷ this | violations |\n",
	       ds_pc ? "inserts" : "updates");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (unsigned int ti = 0; ti < opt.nthreads; ti++)
		for (unsigned int pi = 0; pi < opt.npct; pi++)
			for (int s = 0; s < NS; s++) {
				double(*m)[MAX_RUNS] = v[s][ti][pi];
				double lo, hi;

				if (opt.scheme && strcmp(opt.scheme, schemes[s]->name))
					continue;
				if (opt.smoke && !ran[s][ti][pi]) {
					fprintf(stderr, "luf-ds: %s did not run\n",
						schemes[s]->name);
					bad = 1;
				}
				printf("| %u | %u%%%s | %s |", opt.threads[ti], opt.pct[pi],
				       ds_pc ? " p/c" : "", schemes[s]->name);
				cell(m[M_OPS], opt.runs, "%.0f", 1);
				cell(m[M_CPU], opt.runs, "%.0f", 1);
				cell(m[M_READS], opt.runs, "%.0f", 0);
				cell(m[M_PEAK], opt.runs, "%.0f", 1);
				cell(m[M_KIB], opt.runs, "%.1f", 0);
				cell(m[M_MB], opt.runs, "%.1f", 1);
				cell(m[M_FUTEX], opt.runs, "%.1f", 0);
				cell(m[M_MALLOC], opt.runs, "%.0f", 0);
				if (opt.scheme)
					printf(" n/a |");
				else
					cell(m[M_RATIO], opt.runs, "%.2f", 1);
				cell(m[M_VIOL], opt.runs, "%.0f", 0);
				printf("\n");
				if (data)
					fprintf(data, "%u %u %s %.0f %.0f %.0f %.2f %.3f %.0f\n",
						opt.threads[ti], opt.pct[pi], schemes[s]->name,
						median(m[M_OPS], opt.runs, &lo, &hi),
						median(m[M_READS], opt.runs, &lo, &hi),
						median(m[M_PEAK], opt.runs, &lo, &hi),
						median(m[M_MB], opt.runs, &lo, &hi),
						median(m[M_RATIO], opt.runs, &lo, &hi),
						median(m[M_CPU], opt.runs, &lo, &hi));
			}
	if (data)
		fclose(data);
	return bad;
}
