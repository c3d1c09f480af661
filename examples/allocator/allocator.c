// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf-allocator: a multi-threaded page-pool allocator under a read-mostly
 * structure whose readers use an asymmetric fence, with luf deciding when
 * the heavy side of that fence (a membarrier) is still owed.
 *
 * The structure is a table of slots, each naming a pool page (index and
 * version in one word). Every thread reads random slots and replaces the
 * pages of its own slots. A reader protects the page it reads with a
 * hazard word, stored with only a compiler barrier; the validation that
 * follows is the store-buffering pattern (luf_user.h), so before a page
 * may be reused the reclaimer needs every reader to have passed a full
 * barrier after the page left the table, and only then scans the hazards:
 *
 *   reader                               reclaimer
 *   e = slot[s]; hazard[me] = page(e)    slot[s] = new          (removal)
 *   compiler barrier                     ... the flush is owed here ...
 *   slot[s] == e ? read page : retry     flush (membarrier); scan hazards;
 *                                        reuse the page if none names it
 *
 * That flush is the user-space analogue of a TLB shootdown: the reader's
 * hazard is a "translation" to the page. Three policies are counted on the
 * same workload:
 *   every  one flush per freed page (as if each unmap sent its own IPI);
 *   batch  one flush per --batch freed pages (Linux's batched unmap flush);
 *   luf    the removal is deferred (luf_unmap per page, luf_pcpu_fold per
 *          --batch pages, luf_free to the pend list); the flush runs when
 *          a reuse needs it
 *          (luf_alloc with LUF_ALLOC_MAY_FLUSH: one flush for all pend
 *          pages) and is skipped when another thread's flush since the
 *          removal already covers it (check_done / diet).
 * Each thread owns one struct luf_pcpu and one struct luf_freelist; its
 * CPU id for luf is its thread index (luf_user_set_thread_id()).
 *
 * Canary: a page holds its slot and version in every word; a reader
 * checks them against the slot word it validated, so any reuse while it
 * reads is caught. --no-scan reuses pages without the hazard scan, which
 * must be caught (the checker's self-test).
 *
 * Usage: luf-allocator [--threads N] [--frees N] [--slots N] [--pool N]
 *        [--page-bytes N] [--reads N] [--batch N] [--policy every|batch|luf]
 *        [--no-scan] [--bench]
 * --bench: the churn benchmark, 2 threads, 10^6 frees per policy, no reads.
 */
#define _GNU_SOURCE
#include <luf/luf_user.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum policy { POLICY_EVERY, POLICY_BATCH, POLICY_LUF, NR_POLICIES };
static const char *const policy_name[NR_POLICIES] = {"every", "batch", "luf"};

#define NO_SCAN_ROUNDS 20 /* runs of the --no-scan self-test before it gives up */
#define IDX_BITS 24	  /* slot word: version << IDX_BITS | (page index + 1) */
#define IDX_MASK ((1UL << IDX_BITS) - 1)

struct page {
	struct luf_folio lf; /* luf's links and key: in the descriptor, never in the page */
	atomic_ulong *mem;   /* the page's words: canary stamps */
	struct page *parked; /* hazarded at allocation: set aside for a moment */
	unsigned long idx;
};

struct hazard {
	LUF_CACHE_ALIGNED atomic_ulong idx; /* page index + 1 being read, or 0 */
};

struct worker {
	LUF_CACHE_ALIGNED unsigned int id;
	pthread_t thread;
	struct luf_pcpu *pc;
	struct luf_freelist *fl;
	struct page **batch; /* batch policy: removed pages not flushed yet */
	unsigned int nr_batch;
	unsigned long long rng;
	unsigned long frees, reads, violations, parked;
	unsigned long
	    reuse_done; /* pend pages released with no flush: another thread's covered them */
	int err;
};

static struct {
	unsigned int threads, slots_per, batch, reads, words;
	unsigned long pool_per, frees;
	bool no_scan, bench;
	int only; /* a policy, or -1 for all three */
} opt = {2, 256, 64, 4, 32, 2048, 400000, false, false, -1};

static struct {
	struct luf_user u;
	struct luf *l;
	struct luf_done_cpu *done;
	struct luf_stats_cpu *stats;
	struct luf_keytab *kt;
	unsigned long readers[LUF_CPUMASK_WORDS(LUF_MAX_CPUS)]; /* every thread reads */
	atomic_ulong *slot;
	unsigned long nr_slots;
	struct hazard *hazard;
	struct page *pages;
	atomic_ulong *mem;
	size_t mem_bytes;
	struct worker *w;
	enum policy policy;
	atomic_uint ready;
	atomic_int go;
} g;

static void die(const char *what, int err)
{
	fprintf(stderr, "luf-allocator: %s: %d (%s)\n", what, err, strerror(err < 0 ? -err : err));
	exit(1);
}

static void *zalloc(size_t size)
{
	size_t n = (size + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	void *p = aligned_alloc(LUF_CACHELINE, n ? n : LUF_CACHELINE);

	if (!p)
		die("out of memory", -ENOMEM);
	memset(p, 0, n ? n : LUF_CACHELINE);
	return p;
}

static unsigned long rnd(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return (unsigned long)w->rng;
}

static unsigned long stamp(unsigned long s, unsigned long version, unsigned int i)
{
	return (s << 40 | version) * 0x9e3779b97f4a7c15UL + i;
}

/* Write the canary of (slot @s, @version) into @p: only pages no reader can reach. */
static void fill(struct page *p, unsigned long s, unsigned long version)
{
	for (unsigned int i = 0; i < opt.words; i++)
		atomic_store_explicit(&p->mem[i], stamp(s, version, i), memory_order_relaxed);
}

/* One read of slot @s under the hazard protocol; counts a canary mismatch. */
static void read_one(struct worker *w, unsigned long s)
{
	atomic_ulong *hz = &g.hazard[w->id].idx;
	unsigned long e, version;
	struct page *p;
	bool bad = false;

	for (;;) {
		e = atomic_load_explicit(&g.slot[s], memory_order_acquire);
		atomic_store_explicit(hz, e & IDX_MASK, memory_order_relaxed);
		/*
		 * Only a compiler barrier: the hazard store may still be in
		 * this CPU's store buffer when the slot is re-read. The
		 * reclaimer's flush supplies the missing store-load fence.
		 */
		atomic_signal_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&g.slot[s], memory_order_acquire) == e)
			break;
	}
	p = &g.pages[(e & IDX_MASK) - 1];
	version = e >> IDX_BITS;
	for (unsigned int i = 0; i < opt.words; i++)
		bad |=
		    atomic_load_explicit(&p->mem[i], memory_order_relaxed) != stamp(s, version, i);
	/* Release: the reads above happen before the reclaimer sees the hazard gone. */
	atomic_store_explicit(hz, 0, memory_order_release);
	w->reads++;
	if (bad)
		w->violations++;
}

static bool hazarded(const struct page *p)
{
	for (unsigned int t = 0; t < opt.threads; t++)
		if (atomic_load_explicit(&g.hazard[t].idx, memory_order_acquire) == p->idx + 1)
			return true;
	return false;
}

/*
 * A page whose removal has been flushed and that no hazard names. luf_alloc
 * flushes first if the pend pages still owe it (one flush for all of
 * them); a page a reader still holds is parked and freed back clean (its
 * flush is done: only its reader is left) once another page is found.
 */
static struct page *get_page(struct worker *w)
{
	struct page *parked = NULL, *p;
	struct luf_folio *f;
	int ret;

	for (;;) {
		unsigned long pend = luf_freelist_nr_pend(w->fl);
		long flushes = luf_stats_read(g.l, w->pc->cpu, LUF_STAT_ALLOC_FLUSH);

		ret = luf_alloc(w->fl, w->pc, LUF_ALLOC_MAY_FLUSH, &f);
		if (!ret && pend && !luf_freelist_nr_pend(w->fl) &&
		    flushes == luf_stats_read(g.l, w->pc->cpu, LUF_STAT_ALLOC_FLUSH))
			w->reuse_done++;
		if (ret == -ENOMEM && parked) {
			sched_yield(); /* every free page is being read: let readers finish */
		} else if (ret) {
			die("luf_alloc", ret);
		} else {
			p = luf_folio_entry(f, struct page, lf);
			if (opt.no_scan || !hazarded(p))
				break;
			p->parked = parked;
			parked = p;
			w->parked++;
			continue;
		}
		for (; parked; parked = parked->parked)
			if ((ret = luf_free(w->fl, w->pc, &parked->lf, 0)))
				die("luf_free (parked)", ret);
	}
	for (; parked; parked = parked->parked)
		if ((ret = luf_free(w->fl, w->pc, &parked->lf, 0)))
			die("luf_free (parked)", ret);
	return p;
}

static void flush_or_die(void)
{
	int ret = luf_user_flush(&g.u, g.readers, g.l->nr_cpus);

	if (ret)
		die("flush", ret);
}

/* The page of removed slot word @old has left the table: free it by the policy. */
static void retire(struct worker *w, struct page *old)
{
	unsigned short key;
	int ret;

	w->frees++;
	switch (g.policy) {
	case POLICY_EVERY:
		flush_or_die();
		ret = luf_free(w->fl, w->pc, &old->lf, 0);
		break;
	case POLICY_BATCH:
		w->batch[w->nr_batch++] = old;
		if (w->nr_batch < opt.batch)
			return;
		flush_or_die();
		for (ret = 0; w->nr_batch && !ret;)
			ret = luf_free(w->fl, w->pc, &w->batch[--w->nr_batch]->lf, 0);
		break;
	default:
		/*
		 * Readers only read pages: a read-only "translation", whose
		 * flush may wait. The batch is folded under one key, like a
		 * reclaim pass, so its frees share one pending set.
		 */
		ret = luf_unmap(w->pc, NULL, g.readers, LUF_PTE_ACCESSIBLE);
		if (ret)
			break;
		w->batch[w->nr_batch++] = old;
		if (w->nr_batch < opt.batch)
			return;
		ret = luf_pcpu_fold(w->pc, &key);
		for (; w->nr_batch && !ret;)
			ret = luf_free(w->fl, w->pc, &w->batch[--w->nr_batch]->lf, key);
		break;
	}
	if (ret)
		die("retire", ret);
}

/* Replace the page of own slot @s: fill a reusable page, publish, retire the old. */
static void replace(struct worker *w, unsigned long s)
{
	unsigned long old = atomic_load_explicit(&g.slot[s], memory_order_relaxed);
	unsigned long version = (old >> IDX_BITS) + 1;
	struct page *p = get_page(w);

	fill(p, s, version);
	atomic_store_explicit(&g.slot[s], version << IDX_BITS | (p->idx + 1), memory_order_release);
	if (old)
		retire(w, &g.pages[(old & IDX_MASK) - 1]);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long n = opt.frees / opt.threads, own = opt.slots_per;

	luf_user_set_thread_id(&g.u, w->id);
	for (unsigned long k = 0; k < own; k++)
		replace(w, k * opt.threads + w->id); /* first pages: no free yet */
	w->frees = 0;
	atomic_fetch_add(&g.ready, 1);
	while (!atomic_load(&g.go))
		__luf_cpu_relax();
	for (unsigned long i = 0; i < n; i++) {
		for (unsigned int r = 0; r < opt.reads; r++)
			read_one(w, rnd(w) % g.nr_slots);
		replace(w, (rnd(w) % own) * opt.threads + w->id);
	}
	return NULL;
}

/* A whole luf instance, pool and table for one policy run. */
static void setup(void)
{
	unsigned int T = opt.threads;
	unsigned long nr_pages = opt.pool_per * T;
	int ret;

	g.l = zalloc(sizeof(*g.l));
	g.done = zalloc(luf_done_size(T));
	g.stats = zalloc(luf_stats_size(T));
	if ((ret = luf_init(g.l, &luf_user_ops, &g.u, g.done, g.stats, 0)))
		die("luf_init", ret);
	g.kt = zalloc(luf_keytab_size(4096, T));
	if ((ret = luf_keytab_init(g.kt, g.l, 4096)))
		die("luf_keytab_init", ret);
	luf_cpumask_clear(g.readers, T);
	for (unsigned int t = 0; t < T; t++)
		luf_cpumask_set_cpu(g.readers, T, t);
	g.nr_slots = (unsigned long)opt.slots_per * T;
	g.slot = zalloc(g.nr_slots * sizeof(*g.slot));
	g.hazard = zalloc(T * sizeof(*g.hazard));
	g.pages = zalloc(nr_pages * sizeof(*g.pages));
	g.mem_bytes = nr_pages * opt.words * sizeof(atomic_ulong);
	g.mem = mmap(NULL, g.mem_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.mem == MAP_FAILED)
		die("mmap", -ENOMEM);
	g.w = zalloc(T * sizeof(*g.w));
	for (unsigned int t = 0; t < T; t++) {
		struct worker *w = &g.w[t];

		w->id = t;
		w->rng = 0x9e3779b97f4a7c15ULL * (t + 1);
		w->pc = zalloc(luf_pcpu_size(T));
		w->fl = zalloc(luf_freelist_size(T));
		w->batch = zalloc(opt.batch * sizeof(*w->batch));
		if ((ret = luf_pcpu_init(w->pc, g.l, g.kt, t, LUF_PCPU_DEFAULT_THRESHOLD)) ||
		    (ret = luf_freelist_init(w->fl, g.l, g.kt, 0)))
			die("per-thread init", ret);
		for (unsigned long i = 0; i < opt.pool_per; i++) {
			struct page *p = &g.pages[t * opt.pool_per + i];

			p->idx = t * opt.pool_per + i;
			p->mem = &g.mem[p->idx * opt.words];
			if ((ret = luf_free(w->fl, w->pc, &p->lf, 0)))
				die("luf_free (pool)", ret);
		}
	}
}

static void teardown(void)
{
	for (unsigned int t = 0; t < opt.threads; t++) {
		free(g.w[t].pc);
		free(g.w[t].fl);
		free(g.w[t].batch);
	}
	munmap(g.mem, g.mem_bytes);
	free(g.w), free(g.pages), free(g.hazard), free(g.slot), free(g.kt);
	free(g.stats), free(g.done), free(g.l);
}

struct result {
	unsigned long frees, reads, violations, calls, parked, reuse_done;
	long alloc_flush, skipped, free_pend;
	double secs;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct result run(enum policy policy)
{
	struct result r = {0};
	unsigned long calls0;
	double t0;

	g.policy = policy;
	setup();
	atomic_store(&g.ready, 0);
	atomic_store(&g.go, 0);
	for (unsigned int t = 0; t < opt.threads; t++)
		if (pthread_create(&g.w[t].thread, NULL, worker_main, &g.w[t]))
			die("pthread_create", -EAGAIN);
	while (atomic_load(&g.ready) < opt.threads)
		sched_yield();
	calls0 = luf_user_calls(&g.u);
	t0 = now();
	atomic_store(&g.go, 1);
	for (unsigned int t = 0; t < opt.threads; t++)
		pthread_join(g.w[t].thread, NULL);
	r.secs = now() - t0;
	r.calls = luf_user_calls(&g.u) - calls0;
	for (unsigned int t = 0; t < opt.threads; t++) {
		r.frees += g.w[t].frees;
		r.reads += g.w[t].reads;
		r.violations += g.w[t].violations;
		r.parked += g.w[t].parked;
		r.reuse_done += g.w[t].reuse_done;
	}
	r.alloc_flush = luf_stats_sum(g.l, LUF_STAT_ALLOC_FLUSH);
	r.skipped = luf_stats_sum(g.l, LUF_STAT_FLUSH_SKIPPED);
	r.free_pend = luf_stats_sum(g.l, LUF_STAT_FREE_PEND);
	teardown();
	return r;
}

static void usage(void)
{
	fprintf(stderr, "usage: luf-allocator [--threads N] [--frees N] [--slots N] [--pool N] "
			"[--page-bytes N] [--reads N] [--batch N] [--policy every|batch|luf] "
			"[--no-scan] [--bench]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long n = v ? strtoul(v, NULL, 0) : 0;

		if (!strcmp(a, "--bench")) {
			opt.bench = true, opt.threads = 2, opt.frees = 1000000, opt.reads = 0;
			continue;
		}
		if (!strcmp(a, "--no-scan")) {
			opt.no_scan = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--threads") && n >= 1 && n <= 64)
			opt.threads = (unsigned int)n;
		else if (!strcmp(a, "--frees"))
			opt.frees = n;
		else if (!strcmp(a, "--slots") && n >= 1)
			opt.slots_per = (unsigned int)n;
		else if (!strcmp(a, "--pool") && n >= 1)
			opt.pool_per = n;
		else if (!strcmp(a, "--page-bytes") && n >= sizeof(long))
			opt.words = (unsigned int)(n / sizeof(long));
		else if (!strcmp(a, "--reads"))
			opt.reads = (unsigned int)n;
		else if (!strcmp(a, "--batch") && n >= 1)
			opt.batch = (unsigned int)n;
		else if (!strcmp(a, "--policy")) {
			for (opt.only = 0; opt.only < NR_POLICIES; opt.only++)
				if (!strcmp(v, policy_name[opt.only]))
					break;
			if (opt.only == NR_POLICIES)
				usage();
		} else
			usage();
	}
	/* Room for every slot, a full batch and one parked page per reader. */
	if (opt.pool_per < (unsigned long)opt.slots_per + opt.batch + opt.threads + 1 ||
	    opt.pool_per * opt.threads > IDX_MASK) {
		fprintf(stderr,
			"luf-allocator: --pool must exceed --slots + --batch + --threads\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct luf_user_config cfg = {0};
	struct result r[NR_POLICIES] = {{0}};
	unsigned long violations = 0;
	int ret;

	parse(argc, argv);
	cfg.nr_ids = opt.threads;
	ret = luf_user_backend_open(&g.u, &cfg);
	if (ret) {
		printf("luf-allocator: SKIP: no barrier backend: %s\n", luf_user_why(&g.u));
		return 77;
	}
	printf("luf-allocator: %u threads, %u slots and %lu pages of %zu bytes each, %u reads per "
	       "write, batch %u%s\n  backend: %s\n",
	       opt.threads, opt.slots_per, opt.pool_per, opt.words * sizeof(long), opt.reads,
	       opt.batch, opt.no_scan ? ", NO HAZARD SCAN (checker self-test)" : "",
	       luf_user_why(&g.u));
	printf("  %-6s %9s %10s %16s %12s %10s %s\n", "policy", "frees", "flushes",
	       "per 10^6 frees", "frees/s", "violations",
	       "luf: pend frees, alloc flushes, skipped (diet, done)");
	/*
	 * A reuse without the scan is caught only if a reader is inside the
	 * page when it is refilled: a race. The self-test repeats the runs
	 * (at most NO_SCAN_ROUNDS) until the canaries see one, so a busy
	 * machine that happens not to interleave the threads cannot hide it.
	 */
	for (int p = 0, round = 1; p < NR_POLICIES; p++) {
		if (opt.only >= 0 && p != opt.only)
			continue;
		if (round > 1 && p == (opt.only >= 0 ? opt.only : 0))
			printf("  nothing caught yet: round %d of at most %d\n", round,
			       NO_SCAN_ROUNDS);
		r[p] = run((enum policy)p);
		violations += r[p].violations;
		printf("  %-6s %9lu %10lu %16.1f %12.0f %10lu", policy_name[p], r[p].frees,
		       r[p].calls, r[p].frees ? (double)r[p].calls * 1e6 / (double)r[p].frees : 0.0,
		       (double)r[p].frees / r[p].secs, r[p].violations);
		if (p == POLICY_LUF)
			printf(" %ld, %ld, %ld + %lu", r[p].free_pend, r[p].alloc_flush,
			       r[p].skipped, r[p].reuse_done);
		printf("\n");
		if (opt.no_scan && !violations &&
		    p == (opt.only >= 0 ? opt.only : NR_POLICIES - 1) && round++ < NO_SCAN_ROUNDS)
			p = -1;
	}
	printf("  reads checked: %lu, pages found hazarded at reuse: %lu\n",
	       r[0].reads + r[1].reads + r[2].reads, r[0].parked + r[1].parked + r[2].parked);
	if (opt.only < 0 && r[POLICY_LUF].frees && r[POLICY_EVERY].frees)
		printf(
		    "  luf: %.3f flushes per 1000 frees, %.1fx the frees/s of every-free, %.1fx of "
		    "per-batch\n",
		    (double)r[POLICY_LUF].calls * 1e3 / (double)r[POLICY_LUF].frees,
		    ((double)r[POLICY_LUF].frees / r[POLICY_LUF].secs) /
			((double)r[POLICY_EVERY].frees / r[POLICY_EVERY].secs),
		    ((double)r[POLICY_LUF].frees / r[POLICY_LUF].secs) /
			((double)r[POLICY_BATCH].frees / r[POLICY_BATCH].secs));
	if (opt.bench && opt.only < 0 && r[POLICY_LUF].frees && r[POLICY_EVERY].frees)
		printf("  bench targets: luf <= 1 flush per 1000 frees: %s; luf >= 10x the frees/s "
		       "of every-free: %s (timings are the machine's, not asserted)\n",
		       r[POLICY_LUF].calls * 1000 <= r[POLICY_LUF].frees ? "met" : "missed",
		       (double)r[POLICY_LUF].frees / r[POLICY_LUF].secs >=
			       10 * (double)r[POLICY_EVERY].frees / r[POLICY_EVERY].secs
			   ? "met"
			   : "missed");
	luf_user_close(&g.u);
	if (opt.no_scan) {
		printf("luf-allocator: %s: reuse without the hazard scan %s\n",
		       violations ? "PASS" : "FAIL",
		       violations ? "was caught by the canaries" : "went unnoticed");
		return violations ? 0 : 1;
	}
	printf("luf-allocator: %s: %lu readers saw a reused page\n", violations ? "FAIL" : "PASS",
	       violations);
	return violations ? 1 : 0;
}
