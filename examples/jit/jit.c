// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf-jit: a small x86-64 JIT that reuses code memory through luf.
 *
 * Code lives in W^X blocks (one page each, never writable and executable
 * at once): emit into a writable block, then mprotect it read+exec and
 * publish it in a function slot. Caller threads run the functions; the
 * JIT thread keeps replacing them:
 *
 *   replace  emit the new version into a block from luf's free list and
 *            publish it; the old block leaves its slot and is freed into
 *            the deferred free list (luf_unmap, luf_pcpu_fold, luf_free):
 *            a caller may still be running it, or about to.
 *   patch    rewrite a live block in place: unpublish it, and before
 *            making it writable again run the write-upgrade abort
 *            (luf_abort_key with LUF_ABORT_PROT_UPGRADE), which flushes
 *            now what would otherwise have waited until reuse.
 *
 * The flush is membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE):
 * every caller thread passes a full barrier and a core-serialising
 * instruction. Callers publish a hazard word (compiler barrier only)
 * before they jump, as in examples/allocator; after the flush the JIT's
 * hazard scan is exact, so a block is rewritten only when no caller can be
 * in it and none can hold instructions it fetched from it before. luf
 * runs that flush once for all pend blocks when a reuse needs it, and not
 * at all when one since the block's removal already covered it.
 *
 * Cross-modifying code on x86-64 (Intel SDM vol. 3, 8.1.3): a thread that
 * runs code another thread wrote must serialise after the write. Here the
 * new code becomes reachable only through the published slot, after the
 * block went read+exec again: that protection change removes write access,
 * so Linux shoots the translation down with an IPI on every CPU running
 * the process, and returning from that interrupt (IRET) serialises.
 * Other architectures also need the instruction-cache maintenance that
 * __builtin___clear_cache() does (a no-op here).
 *
 * Each call's result names its function slot and version; a caller checks
 * it against the slot word it validated. A reused or half-written block
 * gives a wrong result, or a SIGSEGV / SIGILL / SIGTRAP (int3 filler),
 * which is reported and fails the run.
 *
 * Usage: luf-jit [--callers N] [--ops N] [--slots N] [--blocks N] [--patch-every N]
 *        [--spin N] [--no-abort]
 * Exit status: 0 pass; 1 fail (a wrong result, a crash, a luf error); 2 usage;
 * 77 skipped (no membarrier SYNC_CORE).
 * --no-abort: patch live code without the write-upgrade abort and the
 * hazard wait (the checkers' self-test: luf's S2 check refuses the patch,
 * a caller crashes or sees a wrong result, and every run fails).
 *
 * What makes the self-test fail every run. Two checks see the broken
 * protocol, and they are reported apart:
 *
 * - The callers (the end-to-end check): a broken patch shows only if a
 *   caller is in the block's stale window - it validated the slot before
 *   the JIT unpublished it and has not returned - when the JIT makes the
 *   block writable and rewrites it, microseconds after unpublishing. With
 *   functions of two instructions a caller left its block within
 *   nanoseconds, so only a caller the scheduler preempted right there saw
 *   the rewrite: --no-abort passed 2 runs of 5. Each function now first
 *   runs a loop of --spin iterations (default 100000: tens of
 *   microseconds, far longer than unpublish-to-mprotect), like JIT code
 *   doing work, so callers spend nearly all their time inside blocks, and
 *   at a patch each caller is inside the patched block with a chance of
 *   about 1/--slots: running (mprotect's shootdown takes the execute right
 *   away under it: SIGSEGV) or preempted (it resumes in the rewritten
 *   code: a wrong result or a trap). That chance comes once per patch
 *   while a caller runs beside the JIT, but only once per scheduling turn
 *   when the JIT runs alone, as on a machine crowded by other work: there
 *   a run may see no stale execution at all (measured on 2 CPUs shared
 *   with kernel builds: at load averages of 3-7 every one of 180 runs saw
 *   one, at 8-9, 77 of 80).
 * - luf's own S2 check, luf_upgrade_check(), at the first patch: write
 *   access is about to be granted while the block's removal still owes a
 *   flush, which the abort would have done. It reads luf's state, not the
 *   scheduler's, so it fails every run whatever the machine does.
 *
 * The correct protocol is not weakened by long functions: the abort's flush
 * and the hazard wait keep every rewrite out of the window whatever its
 * length (the JIT waits until the caller returns).
 */
#define _GNU_SOURCE
#include <luf/luf_user.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "luf-jit emits x86-64 code"
#endif

#define IDX_BITS 24 /* slot word: version << IDX_BITS | (block index + 1) */
#define IDX_MASK ((1UL << IDX_BITS) - 1)

typedef unsigned int jit_fn(unsigned int x);

struct block {
	struct luf_folio lf; /* luf's state, outside the code page */
	unsigned char *code; /* one page */
	unsigned long idx;
	unsigned short key; /* key of its last removal (write-upgrade abort) */
	struct block *parked;
};

struct caller {
	LUF_CACHE_ALIGNED atomic_ulong hazard; /* block index + 1 being run, or 0 */
	unsigned int id;
	pthread_t thread;
	unsigned long long rng;
	unsigned long calls, interpreted, wrong;
};

static struct {
	unsigned int callers, slots, patch_every, spin;
	unsigned long blocks, ops;
	bool no_abort; /* the checker's self-test: rewrite live code without the abort */
} opt = {2, 8, 8, 100000, 64, 20000, false};

static struct {
	struct luf_user u;
	struct luf *l;
	struct luf_keytab *kt;
	struct luf_domain *dom; /* the code arena */
	struct luf_pcpu *pc;	/* the JIT thread's */
	struct luf_freelist *fl;
	unsigned long callers[LUF_CPUMASK_WORDS(LUF_MAX_CPUS)];
	struct block *blocks;
	unsigned char *arena;
	size_t page;
	atomic_ulong *slot;
	struct caller *c;
	atomic_int stop;
	unsigned long emits, patches, replaces, parked, mprotects;
	unsigned long unsafe_patch; /* --no-abort: first patch that luf_upgrade_check refused */
} g;

static void die(const char *what, int err)
{
	fprintf(stderr, "luf-jit: %s: %d (%s)\n", what, err, strerror(err < 0 ? -err : err));
	exit(1);
}

static void crash(int sig)
{
	static const char msg[] = "luf-jit: FAIL: a caller crashed in JIT code (code memory "
				  "rewritten under it)\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
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

/* The constant a function of slot @f, version @v adds: both are in it. */
static unsigned int jit_const(unsigned long f, unsigned long v)
{
	return (unsigned int)(f << 24 | (v & 0xffffff));
}

static void protect(struct block *b, int prot)
{
	g.mprotects++;
	if (mprotect(b->code, g.page, prot))
		die("mprotect", -errno);
}

/*
 * Emit "return x + k" into writable block @b, after a loop of opt.spin
 * iterations (the function's work, which keeps callers inside their
 * blocks: see "What makes the self-test fail every run" at the top):
 *
 *	 0: b9 imm32	mov ecx, spin
 *	 5: ff c9	1: dec ecx
 *	 7: 75 fc	jnz 1b
 *	 9: 8d 87 imm32	lea eax, [rdi + k]
 *	15: c3		ret
 *
 * the rest of the page is int3, so a jump into a half-written or stale
 * block traps instead of running on.
 */
static void emit(struct block *b, unsigned int k)
{
	unsigned char *p = b->code;

	memset(p, 0xcc, g.page);
	p[0] = 0xb9; /* mov ecx, imm32 */
	memcpy(p + 1, &opt.spin, 4);
	p[5] = 0xff, p[6] = 0xc9;  /* dec ecx */
	p[7] = 0x75, p[8] = 0xfc;  /* jnz -4 */
	p[9] = 0x8d, p[10] = 0x87; /* lea eax, [rdi + imm32] */
	memcpy(p + 11, &k, 4);
	p[15] = 0xc3; /* ret */
	__builtin___clear_cache((char *)p, (char *)p + 16);
	g.emits++;
}

/*
 * Make @b writable. Its last removal may still owe a flush: a caller may
 * be running, or hold fetched instructions of, the code about to be
 * overwritten (S2). The write-upgrade abort flushes first; then wait for
 * any caller whose hazard still names the block. @live: a patch of a block
 * just unpublished (--no-abort skips the abort and the wait there only),
 * not a reuse from the free list.
 */
static void write_upgrade(struct block *b, bool live)
{
	int ret;

	if (opt.no_abort && live) {
		/* luf's own S2 check sees the missing abort (once: it is enough) */
		if (!g.unsafe_patch && luf_upgrade_check(g.pc, b->key, NULL) == -EBUSY)
			g.unsafe_patch = g.patches + 1;
		protect(b, PROT_READ | PROT_WRITE);
		return;
	}
	ret = luf_abort_key(g.pc, b->key, LUF_ABORT_PROT_UPGRADE);
	if (ret)
		die("luf_abort_key", ret);
	if ((ret = luf_upgrade_check(g.pc, b->key, NULL)))
		die("write upgrade with a flush still owed", ret);
	for (unsigned int t = 0; t < opt.callers; t++)
		while (atomic_load_explicit(&g.c[t].hazard, memory_order_acquire) == b->idx + 1)
			sched_yield();
	protect(b, PROT_READ | PROT_WRITE);
}

static void publish(unsigned long f, unsigned long version, struct block *b)
{
	emit(b, jit_const(f, version));
	protect(b, PROT_READ | PROT_EXEC);
	atomic_store_explicit(&g.slot[f], version << IDX_BITS | (b->idx + 1), memory_order_release);
}

/* Record that @b left its slot: its flush is deferred under a fresh key. */
static void removed(struct block *b)
{
	int ret = luf_unmap(g.pc, g.dom, g.callers, LUF_PTE_ACCESSIBLE);

	if (!ret)
		ret = luf_pcpu_fold(g.pc, &b->key);
	if (ret)
		die("luf_unmap", ret);
}

static bool hazarded(const struct block *b)
{
	for (unsigned int t = 0; t < opt.callers; t++)
		if (atomic_load_explicit(&g.c[t].hazard, memory_order_acquire) == b->idx + 1)
			return true;
	return false;
}

/* A block to reuse: flushed by luf_alloc if still owed, then not hazarded. */
static struct block *get_block(void)
{
	struct block *parked = NULL, *b;
	struct luf_folio *f;
	int ret;

	for (;;) {
		ret = luf_alloc(g.fl, g.pc, LUF_ALLOC_MAY_FLUSH, &f);
		if (ret == -ENOMEM && parked) {
			for (; parked; parked = parked->parked)
				luf_free(g.fl, g.pc, &parked->lf, 0);
			sched_yield();
			continue;
		}
		if (ret)
			die("luf_alloc", ret);
		b = luf_folio_entry(f, struct block, lf);
		if (!hazarded(b))
			break;
		b->parked = parked;
		parked = b;
		g.parked++;
	}
	for (; parked; parked = parked->parked)
		luf_free(g.fl, g.pc, &parked->lf, 0);
	return b;
}

static void replace(unsigned long f)
{
	unsigned long old = atomic_load_explicit(&g.slot[f], memory_order_relaxed);
	struct block *b = get_block(), *ob;
	int ret;

	write_upgrade(b, false);
	publish(f, (old >> IDX_BITS) + 1, b);
	g.replaces++;
	if (!old)
		return;
	ob = &g.blocks[(old & IDX_MASK) - 1];
	removed(ob);
	if ((ret = luf_free(g.fl, g.pc, &ob->lf, ob->key)))
		die("luf_free", ret);
}

static void patch(unsigned long f)
{
	unsigned long old = atomic_load_explicit(&g.slot[f], memory_order_relaxed);
	struct block *b = &g.blocks[(old & IDX_MASK) - 1];

	atomic_store_explicit(&g.slot[f], 0, memory_order_release); /* callers interpret */
	removed(b);
	write_upgrade(b, true); /* the abort: flushes now, not at reuse */
	publish(f, (old >> IDX_BITS) + 1, b);
	g.patches++;
}

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	unsigned long e, f, x, k;
	unsigned int r;
	jit_fn *fn;
	void *code;

	luf_user_set_thread_id(&g.u, c->id);
	while (!atomic_load_explicit(&g.stop, memory_order_relaxed)) {
		c->rng ^= c->rng << 13, c->rng ^= c->rng >> 7, c->rng ^= c->rng << 17;
		f = (unsigned long)(c->rng % opt.slots);
		x = (unsigned long)(c->rng >> 32);
		e = atomic_load_explicit(&g.slot[f], memory_order_acquire);
		if (!e) {
			c->interpreted++; /* being patched: what an interpreter would do */
			continue;
		}
		atomic_store_explicit(&c->hazard, e & IDX_MASK, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst); /* the JIT's flush is the fence */
		if (atomic_load_explicit(&g.slot[f], memory_order_acquire) != e) {
			atomic_store_explicit(&c->hazard, 0, memory_order_release);
			continue;
		}
		code = g.blocks[(e & IDX_MASK) - 1].code;
		memcpy(&fn, &code, sizeof(fn)); /* POSIX: object and function pointers convert */
		r = fn((unsigned int)x);
		atomic_store_explicit(&c->hazard, 0, memory_order_release);
		k = (unsigned int)(r - (unsigned int)x);
		c->calls++;
		if (k != jit_const(f, e >> IDX_BITS))
			c->wrong++;
	}
	return NULL;
}

static void setup(void)
{
	unsigned int n = opt.callers + 1; /* ids: callers 0..n-2, the JIT n-1 */
	struct luf_user_config cfg = {.flags = LUF_USER_SYNC_CORE, .nr_ids = n};
	static struct luf_done_cpu *done;
	static struct luf_stats_cpu *stats;
	int ret;

	ret = luf_user_membarrier_open(&g.u, &cfg);
	if (ret) {
		printf("luf-jit: SKIP: needs membarrier SYNC_CORE: %s\n", luf_user_why(&g.u));
		exit(77);
	}
	g.l = zalloc(sizeof(*g.l));
	done = zalloc(luf_done_size(n));
	stats = zalloc(luf_stats_size(n));
	g.kt = zalloc(luf_keytab_size(1024, n));
	g.dom = zalloc(luf_domain_size(n));
	g.pc = zalloc(luf_pcpu_size(n));
	g.fl = zalloc(luf_freelist_size(n));
	if ((ret = luf_init(g.l, &luf_user_ops, &g.u, done, stats, 0)) ||
	    (ret = luf_keytab_init(g.kt, g.l, 1024)) || (ret = luf_domain_init(g.dom, g.l)) ||
	    (ret = luf_pcpu_init(g.pc, g.l, g.kt, n - 1, LUF_PCPU_DEFAULT_THRESHOLD)) ||
	    (ret = luf_freelist_init(g.fl, g.l, g.kt, 0)))
		die("luf set-up", ret);
	luf_user_set_thread_id(&g.u, n - 1);
	luf_cpumask_clear(g.callers, n);
	for (unsigned int t = 0; t + 1 < n; t++)
		luf_cpumask_set_cpu(g.callers, n, t);
	g.page = (size_t)sysconf(_SC_PAGESIZE);
	g.arena = mmap(NULL, opt.blocks * g.page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.arena == MAP_FAILED)
		die("mmap", -errno);
	g.blocks = zalloc(opt.blocks * sizeof(*g.blocks));
	for (unsigned long i = 0; i < opt.blocks; i++) {
		g.blocks[i].idx = i;
		g.blocks[i].code = g.arena + i * g.page;
		if ((ret = luf_free(g.fl, g.pc, &g.blocks[i].lf, 0)))
			die("luf_free", ret);
	}
	g.slot = zalloc(opt.slots * sizeof(*g.slot));
	g.c = zalloc(opt.callers * sizeof(*g.c));
	for (unsigned long f = 0; f < opt.slots; f++)
		replace(f);
}

static long stat_total(enum luf_stat_item item)
{
	return luf_stats_sum(g.l, item);
}

/* The numeric options, range-checked; each sets one field of opt. */
static const struct jit_opt {
	const char *name;
	unsigned long min, max;
	unsigned int *ui; /* the field, if unsigned int */
	unsigned long *ul;
} jit_opts[] = {
    {"--callers", 1, 64, &opt.callers, NULL},
    {"--ops", 1, 1000000000, NULL, &opt.ops},
    {"--slots", 1, 127, &opt.slots, NULL},
    {"--blocks", 2, IDX_MASK, NULL, &opt.blocks},
    {"--patch-every", 0, 1000000000, &opt.patch_every, NULL},
    {"--spin", 1, 100000000, &opt.spin, NULL},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: luf-jit [--callers N] [--ops N] [--slots N] [--blocks N] "
		   "[--patch-every N] [--spin N] [--no-abort]\n");
	for (size_t k = 0; k < sizeof(jit_opts) / sizeof(jit_opts[0]); k++)
		fprintf(f, "  %-14s %lu..%lu\n", jit_opts[k].name, jit_opts[k].min,
			jit_opts[k].max);
	fprintf(f, "  --no-abort     patch without the write-upgrade abort: every run must fail\n"
		   "Exit status: 0 pass; 1 fail; 2 usage; 77 skipped (no membarrier SYNC_CORE)\n");
}

static void bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "luf-jit: %s '%s' (see luf-jit --help)\n", what, arg);
	exit(2);
}

/* Decimal digits only, no sign, no wrap: 0 and *@out, or -1. */
static int parse_num(const char *s, unsigned long *out)
{
	unsigned long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (ULONG_MAX - (unsigned long)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*out = v;
	return 0;
}

static void parse(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const struct jit_opt *o = NULL;
		unsigned long n;

		if (!strcmp(argv[i], "--no-abort")) {
			opt.no_abort = true;
			continue;
		}
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			exit(0);
		}
		for (size_t k = 0; k < sizeof(jit_opts) / sizeof(jit_opts[0]); k++)
			if (!strcmp(argv[i], jit_opts[k].name))
				o = &jit_opts[k];
		if (!o)
			bad_usage("unknown option", argv[i]);
		if (i + 1 >= argc)
			bad_usage("a value is missing after", argv[i]);
		if (parse_num(argv[++i], &n) || n < o->min || n > o->max) {
			fprintf(stderr, "luf-jit: %s wants a number in %lu..%lu, not '%s'\n",
				o->name, o->min, o->max, argv[i]);
			exit(2);
		}
		if (o->ui)
			*o->ui = (unsigned int)n; /* max <= UINT_MAX */
		else
			*o->ul = n;
	}
	if (opt.blocks < opt.slots + 1 + opt.callers) {
		fprintf(stderr, "luf-jit: --blocks must exceed --slots + --callers\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	unsigned long calls = 0, interpreted = 0, wrong = 0, calls0, flushes;
	struct sigaction sa = {.sa_handler = crash};
	int ret;

	parse(argc, argv);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	setup();
	calls0 = luf_user_calls(&g.u);
	for (unsigned int t = 0; t < opt.callers; t++) {
		g.c[t].id = t;
		g.c[t].rng = 0x2545f4914f6cdd1dULL * (t + 1);
		if (pthread_create(&g.c[t].thread, NULL, caller_main, &g.c[t]))
			die("pthread_create", -EAGAIN);
	}
	for (unsigned long i = 0; i < opt.ops; i++) {
		unsigned long f = i % opt.slots;

		if (opt.patch_every && i % opt.patch_every == opt.patch_every - 1)
			patch(f);
		else
			replace(f);
	}
	atomic_store(&g.stop, 1);
	for (unsigned int t = 0; t < opt.callers; t++) {
		pthread_join(g.c[t].thread, NULL);
		calls += g.c[t].calls;
		interpreted += g.c[t].interpreted;
		wrong += g.c[t].wrong;
	}
	flushes = luf_user_calls(&g.u) - calls0;
	/* Poison the whole arena: a write to every block, so settle the domain first. */
	if ((ret = luf_abort_domain(g.pc, g.dom, LUF_ABORT_PROT_UPGRADE)))
		die("luf_abort_domain", ret);
	if (mprotect(g.arena, opt.blocks * g.page, PROT_READ | PROT_WRITE))
		die("mprotect", -errno);
	memset(g.arena, 0xcc, opt.blocks * g.page);
	printf("luf-jit: %u callers, %u function slots, %lu code blocks of %zu bytes\n"
	       "  backend: %s\n",
	       opt.callers, opt.slots, opt.blocks, g.page, luf_user_why(&g.u));
	printf("  JIT: %lu replaces, %lu in-place patches, %lu emits, %lu mprotect calls, %lu "
	       "blocks found in use at reuse\n",
	       g.replaces, g.patches, g.emits, g.mprotects, g.parked);
	printf("  flushes (membarrier SYNC_CORE): %lu during the run = %.1f per 1000 code "
	       "frees; luf: %ld at reuse, %ld write-upgrade aborts, %ld skipped by diet\n",
	       flushes, (double)flushes * 1e3 / (double)(g.replaces - opt.slots + g.patches),
	       stat_total(LUF_STAT_ALLOC_FLUSH),
	       stat_total(LUF_STAT_ABORT + LUF_ABORT_PROT_UPGRADE),
	       stat_total(LUF_STAT_FLUSH_SKIPPED));
	printf("  callers: %lu calls checked, %lu wrong, %lu interpreted while patching\n", calls,
	       wrong, interpreted);
	luf_user_close(&g.u);
	if (g.unsafe_patch)
		printf("luf-jit: FAIL: write upgrade with a flush still owed (S2), first at patch "
		       "%lu (luf_upgrade_check)\n",
		       g.unsafe_patch);
	if (wrong || !calls) {
		printf("luf-jit: FAIL: %s\n", wrong ? "wrong results" : "no call ran");
		return 1;
	}
	if (g.unsafe_patch)
		return 1;
	printf("luf-jit: PASS: every call returned its function's result\n");
	return 0;
}
