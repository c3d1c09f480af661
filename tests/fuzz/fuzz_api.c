// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/fuzz/fuzz_api.c - libFuzzer target for luf's public API.
 *
 * The input builds two instances ("worlds": 1..130 CPUs, so masks span up
 * to three words; 2..16 keys, so keys collide; a ugen start that may sit
 * just below the wrap), then runs up to MAXOPS public calls, each with
 * arguments taken from the bytes: good ones and hostile ones (bad masks,
 * keys, flags and causes; NULL, zeroed, garbage, byte-copied, finished and
 * foreign objects; failing flushes). tests/fuzz/gen_api_corpus.py writes
 * the seeds and documents the byte format.
 *
 * The oracle is the harness's own and reuses none of luf's logic. A
 * logical clock orders every removal {cpus, time, writable} and every
 * flush of the mock backend; a CPU counts as flushed at time t only if a
 * mock flush of it returned 0 at t, or a luf_local_flush_end() was
 * accepted for a snapshot the harness took at t. A removal is owed while
 * one of its CPUs has not flushed since. The harness knows what each key
 * stands for (every removal a fold returned it for; keys collide), what
 * each domain and each freed folio stands for. After every call it checks:
 *   S1  a folio goes to a clean list, or is handed out, only when nothing
 *       it was freed under is owed;
 *   S2  key_flush/abort/settle returning 0 (and upgrade_check, check_done
 *       or domain_pending saying "done") leave nothing owed there;
 *   S3  no writable or dirty removal is owed once luf_pcpu_fold() returned 0;
 *   S4  done counters never go back, never pass the ugen source, and move
 *       only on CPUs that really flushed (so a failed flush marks nothing);
 *   L1  allocation results follow freelist.h (a caller that may flush
 *       never fails while pend folios exist, unless its flush failed; the
 *       reserve is kept from it);
 * and the return-code contract: bad input gets its errno and changes
 * nothing (no flush; not a byte of luf's objects but scratch copies, nor
 * of any folio); good input succeeds, or fails only with the error of a
 * flush that failed. Done counters, flush statistics and the pend/clean
 * gauges must also agree with what the backend saw. A violation prints "luf-fuzz-api: VIOLATION" and what
 * happened, then aborts.
 *
 * LUF_FUZZ_API_TRACE=1 prints every call; LUF_FUZZ_API_NO_PRIMITIVES=1
 * skips the direct checks of the raw primitives (ugen, cpumask, batch,
 * classify), so that only the S1-S4/L1 oracle can catch a mutant.
 * (The fuzzer's first finding: luf_init() read a misaligned instance
 * before it checked the alignment, a UBSan report; fixed.)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <luf/luf.h>

#define NW 2	     /* instances */
#define MAXCPU 130u  /* CPU counts 1..MAXCPU: masks of up to three words */
#define MAXKEYS 16u  /* key counts 2..MAXKEYS */
#define NPC 4	     /* CPU states per instance */
#define NFL 2	     /* free lists per instance */
#define NDOM 2	     /* domains per instance */
#define NFOLIO 24    /* folios, shared by every list of both instances */
#define MAXOPS 512   /* calls per input */
#define MAXREM 512   /* removals per input: at most one per call */
#define NSNAP 8	     /* local-flush snapshots remembered */
#define NRET 8	     /* keys returned by folds remembered */
#define NSC (NW + 1) /* allocation scopes: one per instance, one per call */
#define SC_OP NW     /* ... the per-call one */

/* Bits in a word, and words in a mask of MAXCPU CPUs. */
#define BPL (sizeof(unsigned long) * 8)
#define MW ((MAXCPU + BPL - 1) / BPL)

/* ---- input ---- */

struct rd {
	const uint8_t *p;
	size_t n;
};

static unsigned int get8(struct rd *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static unsigned long get64(struct rd *in)
{
	unsigned long v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | get8(in);
	return v;
}

/* ---- the oracle's state ---- */

/* One removed translation, as the harness saw it. */
struct removal {
	unsigned long cpus[MW]; /* CPUs that may cache it (bits < nr_cpus) */
	unsigned long t;	/* logical time of the removal */
	unsigned long fold_t;	/* time of the fold that named its key */
	int w;			/* instance */
	int pc;			/* CPU state slot while open; -1 once folded */
	int dom;		/* domain slot, or -1 */
	unsigned int dom_gen;	/* ... and that domain's incarnation */
	unsigned int key;	/* key a fold returned for it (0: none) */
	bool writable;		/* writable or dirty: never deferred past a fold */
	bool done;		/* flushed on all its CPUs (cached; never undone) */
};

/* A folio: luf's part, and where the harness believes it is. */
struct folio {
	struct luf_folio lf;
	int w, fl;	      /* the list it is on; w = -1: in use */
	unsigned int key;     /* key it was freed under */
	unsigned long free_t; /* when */
};

struct world {
	int id;
	/* luf's objects, in caller storage (scope id) */
	struct luf *l;
	struct luf_done_cpu *done;
	struct luf_stats_cpu *stats;
	struct luf_keytab *kt;
	struct luf_pcpu *pc[NPC];
	struct luf_freelist *fl[NFL];
	struct luf_domain *dom[NDOM];
	struct luf_batch *scratch, *scratch_bad; /* nr and nr + 1 CPUs */
	unsigned int nr, nkeys;
	unsigned long start;
	/* what the harness knows */
	unsigned long last_flush[MAXCPU]; /* time of each CPU's newest real flush */
	unsigned long done_seen[MAXCPU];  /* done as last read */
	unsigned long recv[MAXCPU];	  /* successful flushes that included the CPU */
	unsigned long flush_ok, flush_fail;
	struct {
		bool live;
		unsigned int cpu, thr;
		unsigned int nrem;   /* removals recorded since the last fold */
		unsigned int nro;    /* ... of them read-only and cached somewhere */
		unsigned int defers; /* calls that reached the defer path since then */
		bool trig;	     /* something may have folded its batch early */
	} pcs[NPC];
	struct {
		bool live;
		unsigned long reserve;
		unsigned int count;
	} fls[NFL];
	struct {
		bool live;
		unsigned int gen;
	} doms[NDOM];
	bool named[MAXKEYS];
	unsigned int ret_keys[NRET], nret;
	struct {
		unsigned long snap;
		unsigned long t;
	} snaps[NSNAP];
	unsigned int nsnaps;
	unsigned long last_snap;
	bool have_snap;
};

/* What one call did, as the mock backend saw it. */
struct opstate {
	unsigned int idx;
	const char *name;
	bool may_flush;
	int fail_mode; /* 0: flushes succeed; 1: the first one fails; 2: all fail */
	int err;       /* what a failing flush returns */
	unsigned int calls, fails;
	int last_err;		      /* the failure as luf reports it */
	unsigned long okmask[NW][MW]; /* CPUs that really flushed during the call */
	unsigned long lastmask[MW];   /* CPUs of the last flush call */
};

/* A piece of caller storage that luf owns: a call with bad arguments writes none of it. */
struct region {
	const void *p;
	size_t n;
	const char *what;
};
#define NREG (4 + 2 * NPC + NFL + NDOM)
#define SNAPMAX (256 * 1024)

static struct world W[NW], spare_w;
static struct removal rem[MAXREM];
static unsigned int nrem, alive[MAXREM], nalive;
static struct folio folios[NFOLIO];
static struct luf_folio garbage_folio;
static unsigned long clk; /* the logical clock */
static struct opstate op;
static unsigned long mbuf0[MW], mbuf1[MW]; /* separate globals: ASan sees an overread */
static bool trace_on, no_prim;
static void *allocs[NSC][256];
static unsigned int nallocs[NSC];
static struct region regions[NW][NREG];
static unsigned int nregions[NW];
static unsigned char snapbuf[SNAPMAX]; /* the regions and folios before a call */

/*
 * The oracle's own bookkeeping is left out of coverage: the fuzzer should
 * be steered by luf's branches and by what the calls do, not by loops over
 * the harness's tables.
 */
#define ORACLE __attribute__((no_sanitize("coverage")))

/* ---- reporting ---- */

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!trace_on)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "  op %u: ", op.idx);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void violation(const char *rule, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
static void violation(const char *rule, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "luf-fuzz-api: VIOLATION %s: op %u (%s): ", rule, op.idx,
		op.name ? op.name : "set-up");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  (flush calls in this op: %u, failed: %u; instances: ", op.calls,
		op.fails);
	for (int i = 0; i < NW; i++)
		fprintf(stderr, "%s%u CPUs, %u keys, start %#lx", i ? "; " : "", W[i].nr,
			W[i].nkeys, W[i].start);
	fprintf(stderr, ")\n");
	abort();
}

static void expect(int ret, int want, const char *what)
{
	if (ret != want)
		violation("contract", "%s returned %d, expected %d", what, ret, want);
}

/* Good arguments: 0, or the error of a flush that failed during the call. */
static void expect_ok(int ret, const char *what)
{
	if (ret && !(op.fails && ret == op.last_err))
		violation("contract", "%s returned %d with good arguments (flushes failed: %u)",
			  what, ret, op.fails);
}

/*
 * The flush calls with good arguments: 1 after a flush that the backend
 * did (a call that returned 0), 0 when nothing was flushed, or the error
 * of a flush that failed.
 */
static void expect_flushed(int ret, const char *what)
{
	if (ret < 0) {
		expect_ok(ret, what);
		return;
	}
	if (ret > 1 || (ret == 1 && op.calls <= op.fails))
		violation("contract", "%s returned %d after %u backend calls (%u failed)", what,
			  ret, op.calls, op.fails);
}

/* ---- storage ---- */

/* @size zeroed bytes, cache-line aligned, exactly sized (ASan sees overruns). */
static void *xalloc(int scope, size_t size)
{
	void *p;

	if (nallocs[scope] == sizeof(allocs[0]) / sizeof(allocs[0][0]) ||
	    posix_memalign(&p, LUF_CACHELINE, size ? size : 1))
		abort();
	memset(p, 0, size);
	allocs[scope][nallocs[scope]++] = p;
	return p;
}

static void xfree_all(int scope)
{
	while (nallocs[scope])
		free(allocs[scope][--nallocs[scope]]);
}

/*
 * Never-initialised storage for an object of @size bytes: zeroed, garbage,
 * or a byte copy of the live object @live of @lsize bytes (at another
 * address: luf must not take it for the original), by @how.
 */
static void *hostile(unsigned int how, size_t size, const void *live, size_t lsize)
{
	unsigned char *p = xalloc(SC_OP, size);

	if (how % 3 == 1)
		memset(p, 0xa5, size);
	else if (how % 3 == 2 && live)
		memcpy(p, live, lsize < size ? lsize : size);
	return p;
}

/* ---- plain masks (the oracle's own) ---- */

static unsigned int nwords(unsigned int nr)
{
	return (unsigned int)((nr + BPL - 1) / BPL);
}

static void bset(unsigned long *m, unsigned int c)
{
	m[c / BPL] |= 1UL << (c % BPL);
}

static bool btest(const unsigned long *m, unsigned int c)
{
	return m[c / BPL] >> (c % BPL) & 1;
}

/* True iff @m, read as a mask of @nr CPUs (its first nwords(nr) words), has no bit >= @nr. */
static ORACLE bool mvalid(const unsigned long *m, unsigned int nr)
{
	for (unsigned int c = nr; c < nwords(nr) * BPL; c++)
		if (btest(m, c))
			return false;
	return true;
}

static unsigned long ald(const unsigned long *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void ast(unsigned long *p, unsigned long v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* ---- the mock backend ---- */

static int mock_flush(void *arch, const unsigned long *cpus, unsigned int nr,
		      const struct luf_range *r)
{
	struct world *w = arch;
	unsigned long m[MW] = {0}, t;
	bool empty = true;

	(void)r;
	if (w->id >= NW)
		violation("contract", "a flush through an instance that has nothing to flush");
	if (nr != w->nr)
		violation("contract", "flush of %u CPUs on an instance of %u", nr, w->nr);
	for (unsigned int i = 0; i < nwords(nr); i++) {
		m[i] = ald(&cpus[i]);
		empty &= !m[i];
	}
	if (!mvalid(m, nr))
		violation("contract", "flush of a mask with bits at or above %u", nr);
	if (empty)
		violation("contract", "flush of an empty set (diet should have skipped it)");
	if (!op.may_flush)
		violation("contract", "%s flushed, which it must never do", op.name);
	memcpy(op.lastmask, m, sizeof(m));
	op.calls++;
	if (op.fail_mode == 2 || (op.fail_mode == 1 && op.calls == 1)) {
		op.fails++;
		op.last_err = op.err < 0 ? op.err : -EIO;
		w->flush_fail++;
		trace("  flush of instance %d fails (%d)", w->id, op.err);
		return op.err;
	}
	t = ++clk;
	for (unsigned int c = 0; c < nr; c++)
		if (btest(m, c)) {
			w->last_flush[c] = t;
			w->recv[c]++;
			bset(op.okmask[w->id], c);
		}
	w->flush_ok++;
	trace("  flush of instance %d: %lx %lx %lx at time %lu", w->id, m[0], m[1], m[2], t);
	return 0;
}

static unsigned int mock_nr_cpu_ids(void *arch)
{
	return ((struct world *)arch)->nr;
}

static unsigned int mock_this_cpu(void *arch)
{
	(void)arch;
	return 0;
}

static const struct luf_arch_ops mock_ops = {
    .flush = mock_flush,
    .nr_cpu_ids = mock_nr_cpu_ids,
    .this_cpu = mock_this_cpu,
};

static const struct luf_arch_ops noflush_ops = {
    .nr_cpu_ids = mock_nr_cpu_ids,
    .this_cpu = mock_this_cpu,
};

/* ---- removals ---- */

/* The first CPU on which @r is still owed, or MAXCPU. */
static ORACLE unsigned int owed_cpu(struct removal *r)
{
	const struct world *w = &W[r->w];

	if (r->done)
		return MAXCPU;
	for (unsigned int i = 0; i < MW; i++)
		for (unsigned long b = r->cpus[i]; b; b &= b - 1) {
			unsigned int c = (unsigned int)(i * BPL) + (unsigned int)__builtin_ctzl(b);

			if (w->last_flush[c] <= r->t)
				return c;
		}
	r->done = true;
	return MAXCPU;
}

enum { Q_OPEN, Q_KEY, Q_DOM };

/*
 * The first removal of instance @w still owed that is open on CPU state
 * @idx (Q_OPEN, writable ones only if @wr), folded under key @idx before
 * time @before (Q_KEY), or recorded in domain @idx (Q_DOM); NULL if none.
 */
static ORACLE struct removal *find_owed(int w, int what, unsigned int idx, unsigned long before,
					bool wr)
{
	if (what == Q_KEY && !idx)
		return NULL;
	for (unsigned int i = 0; i < nalive; i++) {
		struct removal *r = &rem[alive[i]];

		if (r->w != w)
			continue;
		if (what == Q_OPEN && (r->pc != (int)idx || (wr && !r->writable)))
			continue;
		if (what == Q_KEY && (r->pc >= 0 || r->key != idx || r->fold_t > before))
			continue;
		if (what == Q_DOM && (r->dom != (int)idx || r->dom_gen != W[w].doms[idx].gen))
			continue;
		if (owed_cpu(r) < MAXCPU)
			return r;
	}
	return NULL;
}

static void owed_violation(const char *rule, struct removal *r, const char *what)
{
	unsigned int c = owed_cpu(r);

	violation(rule,
		  "%s, but removal #%ld (time %lu, %s, instance %d) is still owed on CPU %u "
		  "(its last real flush: time %lu)",
		  what, (long)(r - rem), r->t, r->writable ? "writable" : "read-only", r->w, c,
		  W[r->w].last_flush[c]);
}

static void check_none_owed(int w, int what, unsigned int idx, const char *rule, const char *msg)
{
	struct removal *r = find_owed(w, what, idx, ~0UL, false);

	if (r)
		owed_violation(rule, r, msg);
}

/* Drop removals flushed everywhere from the live list. */
static ORACLE void prune(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nalive; i++)
		if (owed_cpu(&rem[alive[i]]) < MAXCPU)
			alive[n++] = alive[i];
	nalive = n;
}

/* Record a removal made at time @t on CPU state @slot of @w. */
static void record(int w, int slot, int dom, const unsigned long *m, bool writable, unsigned long t)
{
	struct world *wd = &W[w];
	struct removal *r;
	bool any = false;

	if (nrem == MAXREM)
		abort();
	r = &rem[nrem];
	memset(r, 0, sizeof(*r));
	for (unsigned int i = 0; i < nwords(wd->nr); i++) {
		r->cpus[i] = m[i];
		any |= m[i] != 0;
	}
	r->t = t;
	r->w = w;
	r->pc = slot;
	r->dom = dom;
	r->dom_gen = dom >= 0 ? wd->doms[dom].gen : 0;
	r->writable = writable;
	alive[nalive++] = nrem++;
	wd->pcs[slot].nrem++;
	if (!writable && any)
		wd->pcs[slot].nro++;
	trace("  removal #%u at time %lu: %lx %lx %lx%s", nrem - 1, t, r->cpus[0], r->cpus[1],
	      r->cpus[2], writable ? " writable" : "");
}

/* True iff a CPU state of @w may hold a key no fold has returned yet. */
static bool maybe_pending(int w)
{
	for (int s = 0; s < NPC; s++)
		if (W[w].pcs[s].live && W[w].pcs[s].trig && W[w].pcs[s].nro)
			return true;
	return false;
}

/* ---- per-call bookkeeping and checks ---- */

/* Copy every region of both instances and the folios into snapbuf. */
static ORACLE void snap_take(void)
{
	size_t off = 0;

	for (int i = 0; i < NW; i++)
		for (unsigned int r = 0; r < nregions[i]; r++) {
			if (off + regions[i][r].n > SNAPMAX)
				abort();
			memcpy(snapbuf + off, regions[i][r].p, regions[i][r].n);
			off += regions[i][r].n;
		}
	memcpy(snapbuf + off, folios, sizeof(folios));
	memcpy(snapbuf + off + sizeof(folios), &garbage_folio, sizeof(garbage_folio));
}

static void op_begin(const char *name, unsigned int ctl, bool may_flush)
{
	static const int errs[4] = {-EIO, -EAGAIN, -ENOMEM, 1};

	op.name = name;
	op.may_flush = may_flush;
	op.fail_mode = (ctl & 3) == 3 ? 2 : (ctl & 3) == 2 ? 1 : 0;
	op.err = errs[(ctl >> 2) & 3];
	op.calls = op.fails = 0;
	op.last_err = 0;
	memset(op.okmask, 0, sizeof(op.okmask));
	memset(op.lastmask, 0, sizeof(op.lastmask));
}

/* Not a byte of luf's objects or of a folio may have changed since snap_take(); no flush. */
static ORACLE void expect_unchanged(const char *what)
{
	size_t off = 0;

	if (op.calls)
		violation("contract", "%s with bad arguments flushed", what);
	for (int i = 0; i < NW; i++)
		for (unsigned int r = 0; r < nregions[i]; r++) {
			if (memcmp(snapbuf + off, regions[i][r].p, regions[i][r].n))
				violation("contract", "%s wrote the %s of instance %d", what,
					  regions[i][r].what, i);
			off += regions[i][r].n;
		}
	if (memcmp(snapbuf + off, folios, sizeof(folios)) ||
	    memcmp(snapbuf + off + sizeof(folios), &garbage_folio, sizeof(garbage_folio)))
		violation("contract", "%s wrote a folio", what);
}

/* A call with bad arguments: @ret must be @want, and nothing may have changed. */
static void expect_bad(int ret, int want, const char *what)
{
	expect(ret, want, what);
	expect_unchanged(what);
}

/* After every call: done counters (S4), statistics, free-list counts (S1). */
static ORACLE void check_world(struct world *w)
{
	unsigned long cur = luf_ugen_current(&w->l->ugen);
	long pend = 0, clean = 0, v;

	for (unsigned int c = 0; c < w->nr; c++) {
		unsigned long d = luf_done_read(&w->l->done, c), old = w->done_seen[c];

		if (d != old) {
			if ((long)(d - old) < 0)
				violation("S4",
					  "done[%u] of instance %d went back from %#lx to %#lx", c,
					  w->id, old, d);
			if (!btest(op.okmask[w->id], c))
				violation(
				    "S4",
				    "done[%u] of instance %d moved from %#lx to %#lx, but CPU %u "
				    "did not flush",
				    c, w->id, old, d, c);
			w->done_seen[c] = d;
		}
		if ((long)(cur - d) < 0)
			violation("S4",
				  "done[%u] of instance %d is %#lx, ahead of the source (%#lx)", c,
				  w->id, d, cur);
		if (luf_flush_received(w->l, c) != w->recv[c])
			violation("stats",
				  "CPU %u of instance %d received %lu flushes, counted %lu", c,
				  w->id, w->recv[c], luf_flush_received(w->l, c));
	}
	v = luf_stats_sum(w->l, LUF_STAT_REMOTE_FLUSH) + luf_stats_sum(w->l, LUF_STAT_LOCAL_FLUSH);
	if (v != (long)w->flush_ok)
		violation("stats", "instance %d: %lu flushes returned 0, counted %ld", w->id,
			  w->flush_ok, v);
	v = luf_stats_sum(w->l, LUF_STAT_FLUSH_FAILED);
	if (v != (long)w->flush_fail)
		violation("stats", "instance %d: %lu flushes failed, counted %ld", w->id,
			  w->flush_fail, v);
	for (int f = 0; f < NFL; f++) {
		unsigned long nc, np, owed = 0;

		if (!w->fls[f].live)
			continue;
		nc = luf_freelist_nr_clean(w->fl[f]);
		np = luf_freelist_nr_pend(w->fl[f]);
		if (nc + np != w->fls[f].count)
			violation("contract",
				  "list %d of instance %d holds %lu + %lu folios, not %u", f, w->id,
				  nc, np, w->fls[f].count);
		for (int i = 0; i < NFOLIO; i++)
			if (folios[i].w == w->id && folios[i].fl == f && folios[i].key &&
			    find_owed(w->id, Q_KEY, folios[i].key, folios[i].free_t, false))
				owed++;
		if (owed > np)
			violation("S1",
				  "list %d of instance %d: %lu folios owe a flush, %lu are pend", f,
				  w->id, owed, np);
		pend += (long)np;
		clean += (long)nc;
	}
	if (luf_stats_nr_pend(w->l) != pend || luf_stats_nr_clean(w->l) != clean)
		violation("stats",
			  "instance %d: gauges say %ld pend, %ld clean; the lists hold %ld, %ld",
			  w->id, luf_stats_nr_pend(w->l), luf_stats_nr_clean(w->l), pend, clean);
}

static void op_end(void)
{
	for (int i = 0; i < NW; i++)
		check_world(&W[i]);
	prune();
}

/* ---- argument pickers ---- */

enum okind { O_NULL, O_LIVE, O_DEAD, O_BAD };

struct obj {
	void *p;
	enum okind k;
	int w, slot;
};

static const char *const kname[] = {"NULL", "live", "finished", "never initialised"};

static struct obj obj_bad(unsigned int how, size_t size, const void *live)
{
	struct obj o = {hostile(how, size, live, size), O_BAD, -1, -1};

	return o;
}

static struct obj pick_pc(struct rd *in, int w)
{
	unsigned int b = get8(in);
	int ow = b >= 0xc0 && b % 5 == 1 ? 1 - w : w, s = (int)((b >> 3) % NPC);
	struct obj o = {NULL, O_NULL, -1, -1};

	if (b < 0xc0)
		s = (int)(b % NPC);
	else if (b % 5 == 0)
		return o;
	else if (b % 5 != 1)
		return obj_bad(b >> 4, luf_pcpu_size(W[w].nr), W[w].pc[s]);
	o.p = W[ow].pc[s];
	o.k = W[ow].pcs[s].live ? O_LIVE : O_DEAD;
	o.w = ow;
	o.slot = s;
	return o;
}

static struct obj pick_fl(struct rd *in, int w)
{
	unsigned int b = get8(in);
	int ow = b >= 0xc0 && b % 5 == 1 ? 1 - w : w, s = (int)((b >> 3) % NFL);
	struct obj o = {NULL, O_NULL, -1, -1};

	if (b < 0xc0)
		s = (int)(b % NFL);
	else if (b % 5 == 0)
		return o;
	else if (b % 5 != 1)
		return obj_bad(b >> 4, luf_freelist_size(W[w].nr), W[w].fl[s]);
	o.p = W[ow].fl[s];
	o.k = W[ow].fls[s].live ? O_LIVE : O_DEAD;
	o.w = ow;
	o.slot = s;
	return o;
}

/* A domain: NULL is a good choice here (no domain) for most calls. */
static struct obj pick_dom(struct rd *in, int w)
{
	unsigned int b = get8(in);
	int ow = b >= 0xc0 && b % 5 == 1 ? 1 - w : w, s = (int)((b >> 3) % NDOM);
	struct obj o = {NULL, O_NULL, -1, -1};

	if (b < 0x60)
		return o;
	if (b < 0xc0)
		s = (int)(b % NDOM);
	else if (b % 5 == 0)
		return o;
	else if (b % 5 != 1)
		return obj_bad(b >> 4, luf_domain_size(W[w].nr), W[w].dom[s]);
	o.p = W[ow].dom[s];
	o.k = W[ow].doms[s].live ? O_LIVE : O_DEAD;
	o.w = ow;
	o.slot = s;
	return o;
}

/* An instance: own, the other one (@foreign), NULL or never initialised. */
static struct obj pick_l(struct rd *in, int w, bool foreign)
{
	unsigned int b = get8(in);
	struct obj o = {W[w].l, O_LIVE, w, 0};

	if (b < 0xc0)
		return o;
	if (b % 4 == 0 && foreign) {
		o.p = W[1 - w].l;
		o.w = 1 - w;
		return o;
	}
	if (b % 4 == 1) {
		o.p = NULL;
		o.k = O_NULL;
		return o;
	}
	return obj_bad(b >> 2, sizeof(struct luf), W[w].l);
}

static struct obj pick_kt(struct rd *in, int w)
{
	unsigned int b = get8(in);
	struct obj o = {W[w].kt, O_LIVE, w, 0};

	if (b < 0xc0)
		return o;
	if (b % 4 == 0) {
		o.p = W[1 - w].kt;
		o.w = 1 - w;
		return o;
	}
	if (b % 4 == 1) {
		o.p = NULL;
		o.k = O_NULL;
		return o;
	}
	return obj_bad(b >> 2, luf_keytab_size(W[w].nkeys, W[w].nr), W[w].kt);
}

/* A key: one a fold returned, 0, any in range (named or not), or out of range. */
static unsigned int pick_key(struct rd *in, int w)
{
	unsigned int b = get8(in), n = W[w].nkeys;

	switch (b >> 6) {
	case 0:
	case 1: /* 0: the newest */
		return W[w].nret ? W[w].ret_keys[W[w].nret - 1 - b % W[w].nret] : 0;
	case 2:
		return (b & 0x20) ? 0 : 1 + b % (n - 1);
	default:
		switch (b & 3) {
		case 0:
			return n + ((b >> 2) & 7);
		case 1:
			return 65536 + ((b >> 2) & 15); /* would alias a small key if truncated */
		case 2:
			return UINT_MAX - (b >> 2);
		default:
			return n;
		}
	}
}

/* A CPU id, mostly good. */
static unsigned int pick_cpu(struct rd *in, unsigned int nr)
{
	unsigned int b = get8(in);

	if (b < 0xe0)
		return b % nr;
	return b == 0xff ? UINT_MAX : nr + (b & 0x1f);
}

/*
 * A CPU mask for @nr CPUs into @buf (which has MW words; the words past
 * nwords(nr) are filled with ones: luf must not read them), its plain copy
 * into @m. NULL for the NULL choice.
 */
static unsigned long *pick_mask(struct rd *in, unsigned int nr, unsigned long *buf,
				unsigned long *m)
{
	unsigned int b = get8(in), n = nwords(nr), tail = nr % BPL;
	unsigned long *p = buf + (MW - n); /* the mask ends where the global does */

	memset(m, 0, MW * sizeof(*m));
	switch (b & 7) {
	case 0: /* empty: cached nowhere */
		break;
	case 1:
		bset(m, get8(in) % nr);
		break;
	case 2:
		bset(m, get8(in) % nr);
		bset(m, get8(in) % nr);
		break;
	case 3:
		for (unsigned int c = 0; c < nr; c++)
			bset(m, c);
		break;
	case 4:
		for (unsigned int i = 0; i < n; i++)
			m[i] = (unsigned long)get8(in) * 0x0101010101010101UL;
		if (tail)
			m[n - 1] &= (1UL << tail) - 1;
		break;
	case 5: /* a CPU, and a bit at or above nr (when the last word has room) */
		bset(m, get8(in) % nr);
		if (tail)
			bset(m, nr + get8(in) % (unsigned int)(BPL - tail));
		break;
	case 6:
		return NULL;
	default:
		bset(m, 0);
		bset(m, nr - 1);
		break;
	}
	for (unsigned int i = 0; i < MW - n; i++)
		ast(&buf[i], ~0UL);
	for (unsigned int i = 0; i < n; i++)
		ast(&p[i], m[i]);
	return p;
}

/* LUF_PTE_* bits, sometimes with an undefined one. */
static unsigned int pick_pte(struct rd *in)
{
	unsigned int b = get8(in), f = b & 0xf;

	if (b & 0x10)
		f |= b & 0x20 ? 0x80000000u : 1u << (4 + (b >> 6));
	return f;
}

static unsigned int pick_cause(struct rd *in)
{
	unsigned int b = get8(in) % 10;

	return b < 8 ? b : b == 8 ? 100 : UINT_MAX;
}

/* ---- the calls ---- */

static bool dom_fits(const struct obj *d, int w)
{
	return d->k == O_NULL || (d->k == O_LIVE && d->w == w);
}

/* luf_unmap() (@unmap: with LUF_PTE_* bits) or luf_pcpu_defer() (with a writable flag). */
static void do_unmap(struct rd *in, unsigned int ctl, int w, bool unmap)
{
	struct obj pc = pick_pc(in, w), dom = pick_dom(in, w);
	unsigned long m[MW];
	unsigned long *mask = pick_mask(in, W[pc.k == O_LIVE ? pc.w : w].nr, mbuf0, m);
	unsigned int pte = unmap ? pick_pte(in) : (get8(in) & 1 ? LUF_PTE_WRITABLE : 0);
	bool good, owes, writable;
	unsigned long t;
	int ret, pw = pc.w;

	op_begin(unmap ? "luf_unmap" : "luf_pcpu_defer", ctl, true);
	good =
	    pc.k == O_LIVE && mask && mvalid(m, W[pw].nr) && dom_fits(&dom, pw) && !(pte & ~0xfu);
	/* The oracle's own classification: anything writable, dirty or unsure is flushed. */
	writable = pte & (LUF_PTE_WRITABLE | LUF_PTE_DIRTY | LUF_PTE_FLUSH_PENDING);
	owes = writable || (pte & LUF_PTE_ACCESSIBLE) || !unmap;
	trace("%s(pc %s %d/%d, dom %s %d/%d, mask %s %lx %lx %lx, pte %#x)", op.name, kname[pc.k],
	      pc.w, pc.slot, kname[dom.k], dom.w, dom.slot, mask ? "" : "NULL", m[0], m[1], m[2],
	      pte);
	if (!good) {
		snap_take();
		ret = unmap ? luf_unmap(pc.p, dom.p, mask, pte)
			    : luf_pcpu_defer(pc.p, dom.p, mask, writable);
		expect_bad(ret, -EINVAL, op.name);
		return;
	}
	t = ++clk; /* the PTE was cleared before the call */
	ret =
	    unmap ? luf_unmap(pc.p, dom.p, mask, pte) : luf_pcpu_defer(pc.p, dom.p, mask, writable);
	if (!owes) {
		expect(ret, 0, op.name);
		if (op.calls)
			violation("contract", "an inaccessible removal was flushed");
		return;
	}
	expect_ok(ret, op.name);
	record(pw, pc.slot, dom.k == O_LIVE ? dom.slot : -1, m, writable, t);
	if (++W[pw].pcs[pc.slot].defers >= W[pw].pcs[pc.slot].thr)
		W[pw].pcs[pc.slot].trig = true;
}

/* After luf_pcpu_fold() of CPU state @slot of @w returned 0 with @key. */
static void folded(int w, int slot, unsigned int key)
{
	struct world *wd = &W[w];
	struct removal *r = find_owed(w, Q_OPEN, (unsigned int)slot, 0, true);
	unsigned long t = ++clk;

	if (r)
		owed_violation("S3", r, "luf_pcpu_fold() returned 0");
	if (!key && (r = find_owed(w, Q_OPEN, (unsigned int)slot, 0, false)))
		owed_violation("S1", r, "luf_pcpu_fold() named no key (nothing owed)");
	if (key >= wd->nkeys)
		violation("contract", "luf_pcpu_fold() named key %u of %u", key, wd->nkeys);
	for (unsigned int i = 0; i < nalive; i++) {
		struct removal *q = &rem[alive[i]];

		if (q->w == w && q->pc == slot) {
			q->pc = -1;
			q->key = key;
			q->fold_t = t;
		}
	}
	if (key) {
		wd->named[key] = true;
		if (wd->nret == NRET)
			memmove(wd->ret_keys, wd->ret_keys + 1,
				sizeof(wd->ret_keys[0]) * --wd->nret);
		wd->ret_keys[wd->nret++] = key;
	}
	wd->pcs[slot].nrem = wd->pcs[slot].nro = wd->pcs[slot].defers = 0;
	wd->pcs[slot].trig = false;
}

static int fold_call(struct obj *pc, bool nullkey)
{
	unsigned short key = 0xbeef;
	int ret;

	trace("luf_pcpu_fold(pc %s %d/%d%s)", kname[pc->k], pc->w, pc->slot,
	      nullkey ? ", NULL" : "");
	if (pc->k != O_LIVE || nullkey) {
		snap_take();
		expect_bad(luf_pcpu_fold(pc->p, nullkey ? NULL : &key), -EINVAL, "luf_pcpu_fold");
		return -EINVAL;
	}
	ret = luf_pcpu_fold(pc->p, &key);
	expect_ok(ret, "luf_pcpu_fold");
	if (ret) {
		if (key != 0xbeef)
			violation("contract", "luf_pcpu_fold() failed (%d) but set the key", ret);
		return ret;
	}
	trace("  -> key %u", key);
	folded(pc->w, pc->slot, key);
	return 0;
}

static void do_fold(struct rd *in, unsigned int ctl, int w)
{
	struct obj pc = pick_pc(in, w);

	op_begin("luf_pcpu_fold", ctl, true);
	fold_call(&pc, (ctl >> 5) == 7);
}

/* The harness's folio whose luf part is @p, or NULL. */
static struct folio *folio_of(const struct luf_folio *p)
{
	uintptr_t a = (uintptr_t)p, base = (uintptr_t)folios;

	if (a < base || a >= base + sizeof(folios) ||
	    (a - base) % sizeof(folios[0]) != offsetof(struct folio, lf))
		return NULL;
	return &folios[(a - base) / sizeof(folios[0])];
}

static struct folio *pick_folio(struct rd *in, struct luf_folio **p)
{
	unsigned int b = get8(in) % (NFOLIO + 2);

	*p = b < NFOLIO ? &folios[b].lf : b == NFOLIO ? NULL : &garbage_folio;
	return b < NFOLIO ? &folios[b] : NULL;
}

static void do_free(struct rd *in, unsigned int ctl, int w)
{
	struct obj fl = pick_fl(in, w), pc = pick_pc(in, w);
	struct luf_folio *lf;
	struct folio *f = pick_folio(in, &lf);
	unsigned int key = pick_key(in, fl.k == O_LIVE ? fl.w : w);
	long fi = f ? f - folios : lf ? -2 : -1; /* -2: the garbage folio, -1: NULL */
	int ret, want, fw = fl.w;
	unsigned long nc = 0;

	op_begin("luf_free", ctl, false);
	trace("luf_free(fl %s %d/%d, pc %s %d/%d, folio %ld, key %u)", kname[fl.k], fl.w, fl.slot,
	      kname[pc.k], pc.w, pc.slot, fi, key);
	if (fl.k != O_LIVE || pc.k != O_LIVE || pc.w != fl.w || !lf || (key && key >= W[fw].nkeys))
		want = -EINVAL;
	else if (!f || f->w >= 0)
		want = -EBUSY; /* the garbage folio, or one on a list */
	else if (key && !W[fw].named[key])
		want = -EINVAL;
	else
		want = 0;
	if (fl.k == O_LIVE)
		nc = luf_freelist_nr_clean(fl.p);
	snap_take();
	if (want) {
		ret = luf_free(fl.p, pc.p, lf, key);
		/* A key no fold returned yet may be the pending key of a batch folded early. */
		if (!(ret == 0 && want == -EINVAL && fl.k == O_LIVE && pc.k == O_LIVE &&
		      pc.w == fl.w && f && f->w < 0 && key < W[fw].nkeys && maybe_pending(fw))) {
			expect_bad(ret, want, "luf_free");
			return;
		}
	} else {
		ret = luf_free(fl.p, pc.p, lf, key);
		expect(ret, 0, "luf_free");
	}
	f->w = fw;
	f->fl = fl.slot;
	f->key = key;
	f->free_t = ++clk;
	W[fw].fls[fl.slot].count++;
	trace("  -> %s", luf_freelist_nr_clean(fl.p) > nc ? "clean" : "pend");
	if (luf_freelist_nr_clean(fl.p) > nc) {
		struct removal *r = find_owed(fw, Q_KEY, key, f->free_t, false);

		if (r)
			owed_violation("S1", r, "luf_free() put the folio on the clean list");
	}
}

/* luf_alloc() from list @fl with CPU state @pc: the L1 rules and S1. */
static int alloc_call(struct obj *fl, struct obj *pc, unsigned int flags, bool nullout)
{
	struct luf_folio *got = NULL;
	unsigned long nc, np, reserve;
	struct folio *f;
	int ret, fw = fl->w;

	trace("luf_alloc(fl %s %d/%d, pc %s %d/%d, flags %#x%s)", kname[fl->k], fl->w, fl->slot,
	      kname[pc->k], pc->w, pc->slot, flags, nullout ? ", NULL" : "");
	if (fl->k != O_LIVE || pc->k != O_LIVE || pc->w != fl->w || nullout ||
	    (flags & ~LUF_ALLOC_MAY_FLUSH)) {
		op.may_flush = false;
		snap_take();
		expect_bad(luf_alloc(fl->p, pc->p, flags, nullout ? NULL : &got), -EINVAL,
			   "luf_alloc");
		return -EINVAL;
	}
	op.may_flush = flags & LUF_ALLOC_MAY_FLUSH;
	nc = luf_freelist_nr_clean(fl->p);
	np = luf_freelist_nr_pend(fl->p);
	reserve = W[fw].fls[fl->slot].reserve;
	ret = luf_alloc(fl->p, pc->p, flags, &got);
	trace("  -> %d (had %lu clean, %lu pend, reserve %lu)", ret, nc, np, reserve);
	if (flags & LUF_ALLOC_MAY_FLUSH) {
		if (nc > reserve)
			expect(ret, 0, "luf_alloc(MAY_FLUSH) with clean folios above the reserve");
		else if (np)
			expect_ok(ret, "luf_alloc(MAY_FLUSH) with pend folios (L1)");
		else
			expect(ret, -ENOMEM, "luf_alloc(MAY_FLUSH) with only the reserve");
	} else {
		if (nc)
			expect(ret, 0, "luf_alloc(0) with clean folios");
		else if (!np)
			expect(ret, -ENOMEM, "luf_alloc(0) from an empty list");
		else if (ret != -EAGAIN)
			expect(ret, 0, "luf_alloc(0) with only pend folios");
	}
	if (ret) {
		if (luf_freelist_nr_clean(fl->p) != nc || luf_freelist_nr_pend(fl->p) != np)
			violation("L1", "luf_alloc() failed (%d) but moved folios", ret);
		return ret;
	}
	f = folio_of(got);
	if (!f)
		violation("S1", "luf_alloc() handed out %p, not a folio of the harness",
			  (void *)got);
	if (f->w != fw || f->fl != fl->slot)
		violation("S1", "luf_alloc() handed out folio %ld, which is not on that list",
			  (long)(f - folios));
	if (f->key) {
		struct removal *r = find_owed(fw, Q_KEY, f->key, f->free_t, false);

		if (r)
			owed_violation("S1", r, "luf_alloc() handed the folio out");
	}
	if ((flags & LUF_ALLOC_MAY_FLUSH) &&
	    luf_freelist_nr_clean(fl->p) < (nc < reserve ? nc : reserve))
		violation("L1", "luf_alloc(MAY_FLUSH) took from the reserve: %lu clean left of %lu",
			  luf_freelist_nr_clean(fl->p), nc);
	trace("  -> folio %ld", (long)(f - folios));
	f->w = -1;
	W[fw].fls[fl->slot].count--;
	return 0;
}

static void do_alloc(struct rd *in, unsigned int ctl, int w)
{
	struct obj fl = pick_fl(in, w), pc = pick_pc(in, w);
	unsigned int b = get8(in), flags;

	switch (b & 7) {
	case 0:
	case 1:
		flags = 0;
		break;
	case 2:
		flags = LUF_ALLOC_MAY_FLUSH | 1u << (1 + (b >> 3) % 31);
		break;
	case 3:
		flags = 1u << (1 + (b >> 3) % 31);
		break;
	default:
		flags = LUF_ALLOC_MAY_FLUSH;
		break;
	}
	op_begin("luf_alloc", ctl, true);
	alloc_call(&fl, &pc, flags, (ctl >> 5) == 7 && (b & 7) == 7);
}

/* luf_key_flush (@abort false) or luf_abort_key. */
static void do_key(struct rd *in, unsigned int ctl, int w, bool abort_)
{
	struct obj pc = pick_pc(in, w);
	unsigned int key = pick_key(in, pc.k == O_LIVE ? pc.w : w);
	unsigned int cause = abort_ ? pick_cause(in) : 0;
	const char *name = abort_ ? "luf_abort_key" : "luf_key_flush";
	int ret;

	op_begin(name, ctl, true);
	trace("%s(pc %s %d/%d, key %u, cause %u)", name, kname[pc.k], pc.w, pc.slot, key, cause);
	if (pc.k != O_LIVE || (key && key >= W[pc.w].nkeys) || cause >= LUF_ABORT_NR_CAUSES) {
		snap_take();
		ret = abort_ ? luf_abort_key(pc.p, key, (enum luf_abort_cause)cause)
			     : luf_key_flush(pc.p, key);
		expect_bad(ret, -EINVAL, name);
		return;
	}
	if (key)
		W[pc.w].pcs[pc.slot].trig = true; /* its open batch may fold into its next key */
	ret = abort_ ? luf_abort_key(pc.p, key, (enum luf_abort_cause)cause)
		     : luf_key_flush(pc.p, key);
	if (abort_)
		expect_ok(ret, name);
	else
		expect_flushed(ret, name);
	if (ret >= 0)
		check_none_owed(pc.w, Q_KEY, key, "S2",
				abort_ ? "luf_abort_key() returned 0"
				       : "luf_key_flush() returned 0");
}

static void do_abort_domain(struct rd *in, unsigned int ctl, int w)
{
	struct obj pc = pick_pc(in, w), dom = pick_dom(in, w);
	unsigned int cause = pick_cause(in);
	int ret;

	op_begin("luf_abort_domain", ctl, true);
	trace("luf_abort_domain(pc %s %d/%d, dom %s %d/%d, cause %u)", kname[pc.k], pc.w, pc.slot,
	      kname[dom.k], dom.w, dom.slot, cause);
	if (pc.k != O_LIVE || dom.k != O_LIVE || dom.w != pc.w || cause >= LUF_ABORT_NR_CAUSES) {
		snap_take();
		expect_bad(luf_abort_domain(pc.p, dom.p, (enum luf_abort_cause)cause), -EINVAL,
			   op.name);
		return;
	}
	ret = luf_abort_domain(pc.p, dom.p, (enum luf_abort_cause)cause);
	expect_ok(ret, op.name);
	if (!ret)
		check_none_owed(pc.w, Q_DOM, (unsigned int)dom.slot, "S2",
				"luf_abort_domain() returned 0");
}

static int settle_call(struct obj *l, unsigned int cpu, struct obj *dom, struct luf_batch *scratch,
		       unsigned int snr)
{
	int ret;

	trace("luf_domain_settle(l %s %d, cpu %u, dom %s %d/%d, scratch of %u)", kname[l->k], l->w,
	      cpu, kname[dom->k], dom->w, dom->slot, snr);
	if (l->k != O_LIVE || cpu >= W[l->w].nr || dom->k != O_LIVE || dom->w != l->w || !scratch ||
	    snr != W[l->w].nr) {
		snap_take();
		expect_bad(luf_domain_settle(l->p, cpu, dom->p, scratch), -EINVAL,
			   "luf_domain_settle");
		return -EINVAL;
	}
	ret = luf_domain_settle(l->p, cpu, dom->p, scratch);
	expect_flushed(ret, "luf_domain_settle");
	if (ret >= 0)
		check_none_owed(l->w, Q_DOM, (unsigned int)dom->slot, "S2",
				"luf_domain_settle() succeeded");
	return ret < 0 ? ret : 0;
}

static void do_settle(struct rd *in, unsigned int ctl, int w)
{
	struct obj l = pick_l(in, w, true), dom = pick_dom(in, w);
	unsigned int cpu = pick_cpu(in, W[w].nr), b = get8(in) % 8;
	struct luf_batch *scratch = W[w].scratch;
	unsigned int snr = W[w].nr;

	if (b == 6) {
		scratch = W[w].scratch_bad;
		snr = W[w].nr + 1;
	} else if (b == 7) {
		scratch = NULL;
	}
	op_begin("luf_domain_settle", ctl, true);
	settle_call(&l, cpu, &dom, scratch, snr);
}

static void do_upgrade_check(struct rd *in, unsigned int ctl, int w)
{
	struct obj pc = pick_pc(in, w), dom = pick_dom(in, w);
	unsigned int key = pick_key(in, pc.k == O_LIVE ? pc.w : w);
	int ret;

	op_begin("luf_upgrade_check", ctl, false);
	trace("luf_upgrade_check(pc %s %d/%d, key %u, dom %s %d/%d)", kname[pc.k], pc.w, pc.slot,
	      key, kname[dom.k], dom.w, dom.slot);
	snap_take();
	if (pc.k != O_LIVE || !dom_fits(&dom, pc.w) || key >= W[pc.w].nkeys) {
		expect_bad(luf_upgrade_check(pc.p, key, dom.p), -EINVAL, op.name);
		return;
	}
	ret = luf_upgrade_check(pc.p, key, dom.p);
	if (ret != -EBUSY)
		expect(ret, 0, op.name);
	expect_unchanged(op.name); /* it reads only */
	if (!ret) {
		check_none_owed(pc.w, Q_KEY, key, "S2",
				"luf_upgrade_check() said no flush is owed");
		if (dom.k == O_LIVE)
			check_none_owed(pc.w, Q_DOM, (unsigned int)dom.slot, "S2",
					"luf_upgrade_check() said no flush is owed");
	}
}

static void do_local_begin(struct rd *in, unsigned int ctl, int w)
{
	struct obj l = pick_l(in, w, true);
	struct world *wd = &W[l.w >= 0 ? l.w : w];
	unsigned long snap;
	unsigned long t;

	op_begin("luf_local_flush_begin", ctl, false);
	trace("luf_local_flush_begin(l %s %d)", kname[l.k], l.w);
	if (l.k != O_LIVE) {
		snap_take();
		expect_bad(luf_local_flush_begin(l.p) ? -1 : 0, 0, op.name);
		return;
	}
	t = ++clk;
	snap = luf_local_flush_begin(l.p);
	trace("  -> %#lx at time %lu", snap, t);
	if (!snap)
		violation("S4", "luf_local_flush_begin() handed out ugen 0");
	if (wd->have_snap && (long)(snap - wd->last_snap) <= 0)
		violation("S4", "luf_local_flush_begin() handed out %#lx after %#lx", snap,
			  wd->last_snap);
	wd->last_snap = snap;
	wd->have_snap = true;
	if (wd->nsnaps < NSNAP)
		wd->nsnaps++;
	else
		memmove(wd->snaps, wd->snaps + 1, sizeof(wd->snaps[0]) * (NSNAP - 1));
	wd->snaps[wd->nsnaps - 1].snap = snap;
	wd->snaps[wd->nsnaps - 1].t = t;
}

static void do_local_end(struct rd *in, unsigned int ctl, int w)
{
	struct obj l = pick_l(in, w, false);
	struct world *wd = &W[w];
	unsigned int cpu = pick_cpu(in, wd->nr), b = get8(in), i;
	unsigned long cur = luf_ugen_current(&wd->l->ugen), snap = 0;
	unsigned long t = 0;
	bool good = false;
	int ret;

	switch (b & 7) {
	case 0: /* none taken yet: 0 */
	case 1:
	case 2:
	case 3:
		if (wd->nsnaps) {
			i = wd->nsnaps - 1 - (b >> 3) % wd->nsnaps; /* 0: the newest */
			snap = wd->snaps[i].snap;
			t = wd->snaps[i].t;
			good = true;
		}
		break;
	case 4:
		break;
	case 5: /* just ahead of the source: done would run ahead */
		snap = cur + 1 + (b >> 3);
		break;
	case 6:
		snap = cur + (1UL << 40) + b;
		break;
	default:
		snap = cur + (unsigned long)LONG_MAX - (b >> 3);
		break;
	}
	op_begin("luf_local_flush_end", ctl, false);
	trace("luf_local_flush_end(l %s, cpu %u, snap %#lx; source at %#lx)", kname[l.k], cpu, snap,
	      cur);
	if (good && (long)(cur - snap) < 0)
		abort(); /* the harness's own bookkeeping is wrong */
	snap_take();
	if (l.k != O_LIVE || cpu >= wd->nr || !good) {
		ret = luf_local_flush_end(l.p, cpu, snap);
		if (!ret && l.k == O_LIVE && cpu < wd->nr && snap)
			violation(
			    "S4",
			    "luf_local_flush_end() took snapshot %#lx, ahead of the source (%#lx)",
			    snap, cur);
		expect_bad(ret, -EINVAL, op.name);
		return;
	}
	ret = luf_local_flush_end(l.p, cpu, snap);
	expect(ret, 0, op.name);
	bset(op.okmask[w], cpu);
	if (wd->last_flush[cpu] < t)
		wd->last_flush[cpu] = t;
}

static void do_flush_batch(struct rd *in, unsigned int ctl, int w)
{
	struct obj l = pick_l(in, w, true);
	struct world *wd = &W[w];
	unsigned int cpu = pick_cpu(in, wd->nr), b = get8(in), nrb = wd->nr, i;
	unsigned long cur = luf_ugen_current(&wd->l->ugen), u;
	unsigned long m[MW], before[MW] = {0};
	struct luf_batch *ub = NULL;
	unsigned long *mask;
	int ret;

	if ((b & 3) == 1)
		nrb = wd->nr + 1;
	else if ((b & 3) == 2)
		nrb = wd->nr - 1;
	mask = pick_mask(in, nrb ? nrb : 1, mbuf0, m);
	switch ((b >> 2) & 7) {
	case 0:
		u = 0;
		break;
	case 1:
		u = wd->nsnaps ? wd->snaps[wd->nsnaps - 1 - (b >> 5) % wd->nsnaps].snap : 1;
		break;
	case 2:
		u = cur;
		break;
	case 3:
		u = cur + 1;
		break;
	case 4:
		u = wd->start + (b >> 5);
		break;
	case 5:
		u = ULONG_MAX - (b >> 5);
		break;
	case 6:
		u = 1 + (b >> 5);
		break;
	default:
		u = get64(in);
		break;
	}
	op_begin("luf_flush_batch", ctl, true);
	if ((b & 3) != 3) {
		ub = xalloc(SC_OP, luf_batch_size(nrb));
		expect(luf_batch_init(ub, nrb), nrb ? 0 : -EINVAL, "luf_batch_init");
		if (!nrb) {
			ub = NULL;
		} else {
			bool ok = mask && mvalid(m, nrb) && u;

			expect(luf_batch_add(ub, mask, u, b & 0x80), ok ? 0 : -EINVAL,
			       "luf_batch_add");
			for (i = 0; ok && i < nwords(nrb); i++)
				before[i] = m[i];
		}
	}
	trace("luf_flush_batch(l %s %d, cpu %u, batch of %u: %lx %lx %lx at %#lx)", kname[l.k], l.w,
	      cpu, ub ? nrb : 0, before[0], before[1], before[2], u);
	if (l.k != O_LIVE || cpu >= W[l.w].nr || !ub || nrb != W[l.w].nr) {
		op.may_flush = false;
		snap_take();
		expect_bad(luf_flush_batch(l.p, cpu, ub), -EINVAL, op.name);
		return;
	}
	ret = luf_flush_batch(l.p, cpu, ub);
	expect_flushed(ret, op.name);
	if (ret != (op.calls && !op.fails) && ret >= 0)
		violation("contract", "luf_flush_batch() returned %d after %u backend calls", ret,
			  op.calls);
	if (op.calls > 1)
		violation("contract", "luf_flush_batch() called the backend %u times", op.calls);
	for (i = 0; op.calls && i < MW; i++)
		if (op.lastmask[i] & ~before[i])
			violation("contract", "luf_flush_batch() flushed CPUs outside the batch");
	for (i = 0; i < nwords(nrb); i++)
		if (ald(&ub->cpus[i]) & ~before[i])
			violation("contract", "luf_flush_batch() added CPUs to the batch");
	if (ret >= 0 && !luf_batch_empty(ub))
		violation("contract", "luf_flush_batch() returned %d but the batch is not empty",
			  ret);
}

/* Readers: luf_keytab_check_done, luf_domain_pending. */
static void do_readers(struct rd *in, unsigned int ctl, int w)
{
	unsigned int v = ctl >> 5;

	op_begin("readers", ctl, false);
	if (v < 4) {
		struct obj kt = pick_kt(in, w);
		unsigned int key = pick_key(in, kt.k == O_LIVE ? kt.w : w);
		int ret;

		trace("luf_keytab_check_done(kt %s %d, key %u)", kname[kt.k], kt.w, key);
		snap_take();
		ret = luf_keytab_check_done(kt.p, key);
		if (kt.k != O_LIVE || key >= W[kt.w].nkeys) {
			expect_bad(ret, -EINVAL, "luf_keytab_check_done");
			return;
		}
		if ((ret != 0 && ret != 1) || (!key && ret != 1))
			violation("contract", "luf_keytab_check_done(%u) returned %d", key, ret);
		expect_unchanged("luf_keytab_check_done");
		if (ret == 1)
			check_none_owed(kt.w, Q_KEY, key, "S2",
					"luf_keytab_check_done() said done");
	} else if (v < 7) {
		struct obj dom = pick_dom(in, w);
		bool pend;

		trace("luf_domain_pending(dom %s %d/%d)", kname[dom.k], dom.w, dom.slot);
		snap_take();
		pend = luf_domain_pending(dom.p);
		if (pend && dom.k != O_LIVE)
			violation("contract", "luf_domain_pending() of a %s domain is true",
				  kname[dom.k]);
		expect_unchanged("luf_domain_pending");
		if (!pend && dom.k == O_LIVE)
			check_none_owed(dom.w, Q_DOM, (unsigned int)dom.slot, "S2",
					"luf_domain_pending() said nothing is pending");
	}
}

/* ---- init and fini ---- */

static unsigned int pick_thr(unsigned int b)
{
	return b < 0x80 ? LUF_PCPU_DEFAULT_THRESHOLD : b < 0x90 ? 0 : 1 + b % 8;
}

static unsigned long pick_reserve(unsigned int b)
{
	return (b & 7) == 7 ? ULONG_MAX : b & 3;
}

/* After init returned 0 on never-initialised storage: it is live; end it. */
static void end_spare(int (*fini)(void *), void *p, const char *what)
{
	expect(fini(p), 0, what);
	expect(fini(p), -EINVAL, what);
}

static int fini_pc(void *p)
{
	return luf_pcpu_fini(p);
}

static int fini_fl(void *p)
{
	return luf_freelist_fini(p);
}

static int fini_dom(void *p)
{
	return luf_domain_fini(p);
}

static int fini_kt(void *p)
{
	return luf_keytab_fini(p);
}

static int fini_l(void *p)
{
	return luf_fini(p);
}

static int (*const fini_fn[])(void *) = {fini_pc, fini_fl, fini_dom};
static const char *const init_name[] = {"luf_pcpu_init", "luf_freelist_init", "luf_domain_init"};
static const char *const fini_name[] = {"luf_pcpu_fini", "luf_freelist_fini", "luf_domain_fini"};

/* Init of a CPU state, a free list or a domain: live (-EBUSY), finished or spare storage. */
static void do_init(struct rd *in, unsigned int ctl, int w, unsigned int what)
{
	struct world *wd = &W[w];
	struct obj l = pick_l(in, w, false), kt = pick_kt(in, w), t;
	unsigned int b = get8(in), cpu = pick_cpu(in, wd->nr), thr = pick_thr(get8(in));
	unsigned long reserve = pick_reserve(b >> 2);
	bool bad;
	int ret, want;

	if (what == 0)
		t = pick_pc(in, w);
	else if (what == 1)
		t = pick_fl(in, w);
	else
		t = pick_dom(in, w);
	if (t.k != O_BAD && t.w != w && t.w >= 0)
		t.w = -2; /* another instance's slot: only its own instance may init it */
	op_begin(init_name[what], ctl, false);
	trace("%s(target %s %d/%d, l %s, kt %s %d, cpu %u, thr %u, reserve %lu)", op.name,
	      kname[t.k], t.w, t.slot, kname[l.k], kname[kt.k], kt.w, cpu, thr, reserve);
	bad = !t.p || l.k != O_LIVE;
	if (what == 0)
		bad |= kt.k != O_LIVE || kt.w != w || cpu >= wd->nr || !thr;
	if (what == 1)
		bad |= kt.k != O_LIVE || kt.w != w;
	want = bad ? -EINVAL : t.k == O_LIVE ? -EBUSY : 0;
	if (!want && t.w == -2)
		return; /* would bind another instance's slot to this one */
	snap_take();
	if (what == 0)
		ret = luf_pcpu_init(t.p, l.p, kt.p, cpu, thr);
	else if (what == 1)
		ret = luf_freelist_init(t.p, l.p, kt.p, reserve);
	else
		ret = luf_domain_init(t.p, l.p);
	expect(ret, want, op.name);
	if (want || t.k == O_BAD)
		expect_unchanged(op.name); /* refused, or built on storage of its own */
	if (want)
		return;
	if (t.k == O_BAD) {
		end_spare(fini_fn[what], t.p, fini_name[what]);
		return;
	}
	if (what == 0) {
		memset(&wd->pcs[t.slot], 0, sizeof(wd->pcs[0]));
		wd->pcs[t.slot].live = true;
		wd->pcs[t.slot].cpu = cpu;
		wd->pcs[t.slot].thr = thr;
	} else if (what == 1) {
		wd->fls[t.slot].live = true;
		wd->fls[t.slot].reserve = reserve;
		wd->fls[t.slot].count = 0;
	} else {
		wd->doms[t.slot].live = true;
	}
}

/* Fini of a CPU state, a free list or a domain: -EBUSY while something is pending. */
static void do_fini(struct rd *in, unsigned int ctl, int w, unsigned int what)
{
	struct obj t = what == 0 ? pick_pc(in, w) : what == 1 ? pick_fl(in, w) : pick_dom(in, w);
	struct removal *r;
	int ret;

	op_begin(fini_name[what], ctl, false);
	trace("%s(%s %d/%d)", op.name, kname[t.k], t.w, t.slot);
	snap_take();
	ret = fini_fn[what](t.p);
	if (t.k != O_LIVE) {
		expect_bad(ret, -EINVAL, op.name);
		return;
	}
	if (ret == -EBUSY)
		expect_unchanged(op.name); /* refused: nothing ended */
	if (what == 0) {
		struct world *wd = &W[t.w];

		if (!wd->pcs[t.slot].nrem)
			expect(ret, 0, op.name);
		else if (ret != -EBUSY)
			expect(ret, 0, op.name);
		if (!ret && (r = find_owed(t.w, Q_OPEN, (unsigned int)t.slot, 0, false)))
			owed_violation("S1", r, "luf_pcpu_fini() returned 0 (the removal is lost)");
		if (!ret)
			wd->pcs[t.slot].live = false;
	} else if (what == 1) {
		expect(ret, W[t.w].fls[t.slot].count ? -EBUSY : 0, op.name);
		if (!ret)
			W[t.w].fls[t.slot].live = false;
	} else {
		r = find_owed(t.w, Q_DOM, (unsigned int)t.slot, 0, false);
		if (r && ret != -EBUSY)
			owed_violation("S2", r, "luf_domain_fini() did not refuse");
		if (ret != -EBUSY)
			expect(ret, 0, op.name);
		if (!ret) {
			W[t.w].doms[t.slot].live = false;
			W[t.w].doms[t.slot].gen++;
		}
	}
}

/* luf_init and luf_keytab_init on the live ones (-EBUSY); both fini on bad storage (-EINVAL). */
static void do_live_init(struct rd *in, unsigned int ctl, int w)
{
	struct world *wd = &W[w];
	unsigned int b = get8(in), v = ctl >> 5;
	int ret, want;

	op_begin("init/fini of an instance or key table", ctl, false);
	snap_take();
	if (v < 3) {
		static const struct luf_arch_ops *const ops_of[] = {NULL, &noflush_ops, &mock_ops,
								    &mock_ops};
		const struct luf_arch_ops *ops = ops_of[b % 4];
		struct luf_done_cpu *done = b & 0x10 ? NULL : wd->done;
		struct luf_stats_cpu *stats = b & 0x20 ? NULL : wd->stats;

		trace("luf_init(live instance %d, ops %u, done %p, stats %p)", w, b % 4,
		      (void *)done, (void *)stats);
		ret = luf_init(wd->l, ops, wd, done, stats, get64(in));
		want = ops == &mock_ops && done && stats ? -EBUSY : -EINVAL;
		expect_bad(ret, want, "luf_init");
	} else if (v < 6) {
		struct obj l = pick_l(in, w, true);
		unsigned int n = b % 4 == 0 ? b >> 2 : 2 + b % MAXKEYS;

		if (b % 8 == 1)
			n = 65537;
		trace("luf_keytab_init(live table %d, l %s %d, %u keys)", w, kname[l.k], l.w, n);
		ret = luf_keytab_init(wd->kt, l.p, n);
		want = l.k == O_LIVE && n >= 2 && n <= 65536 ? -EBUSY : -EINVAL;
		expect_bad(ret, want, "luf_keytab_init");
	} else {
		struct obj kt = pick_kt(in, w), l = pick_l(in, w, false);

		trace("luf_keytab_fini(%s), luf_fini(%s)", kname[kt.k], kname[l.k]);
		if (kt.k != O_LIVE)
			expect_bad(luf_keytab_fini(kt.p), -EINVAL, "luf_keytab_fini");
		if (l.k != O_LIVE)
			expect_bad(luf_fini(l.p), -EINVAL, "luf_fini");
	}
}

/* An instance or key table built on never-initialised storage, then ended. */
static void do_spare(struct rd *in, unsigned int ctl, int w)
{
	struct world *wd = &W[w];
	unsigned int b = get8(in), c = get8(in), v = ctl >> 5;
	bool mis = (c & 7) == 7;
	int ret, want;

	op_begin("init on never-initialised storage", ctl, false);
	snap_take();
	if (v < 4) {
		/* spare_w backs the instance: it must never flush (nothing is pending). */
		unsigned int nr = c >> 3 == 0 ? 0 : c >> 3 == 1 ? LUF_MAX_CPUS + 1 : 1 + c % MAXCPU;
		unsigned int n = nr && nr <= MAXCPU ? nr : 1;
		const struct luf_arch_ops *ops = b % 8 == 0 ? &noflush_ops : &mock_ops;
		char *lp =
		    hostile(b >> 3, sizeof(struct luf) + LUF_CACHELINE, wd->l, sizeof(struct luf));
		struct luf *l = (void *)(lp + (mis && (b & 3) == 3 ? 8 : 0));
		struct luf_done_cpu *done = xalloc(SC_OP, luf_done_size(n) + LUF_CACHELINE);
		struct luf_stats_cpu *stats = xalloc(SC_OP, luf_stats_size(n) + LUF_CACHELINE);

		if (mis && (b & 3) == 1)
			done = (void *)((char *)done + 8);
		if (mis && (b & 3) == 2)
			stats = (void *)((char *)stats + 8);
		spare_w.id = NW;
		spare_w.nr = nr;
		trace("luf_init(spare storage, %u CPUs, ops %s%s)", nr,
		      ops == &mock_ops ? "good" : "without flush", mis ? ", misaligned" : "");
		ret = luf_init(l, ops, &spare_w, done, stats, get64(in));
		want =
		    ops == &mock_ops && nr && nr <= LUF_MAX_CPUS && !(mis && (b & 3)) ? 0 : -EINVAL;
		expect(ret, want, "luf_init");
		expect_unchanged("luf_init on spare storage"); /* the instances are untouched */
		if (!ret) {
			if (!luf_local_flush_begin(l))
				violation("S4", "a new instance handed out ugen 0");
			end_spare(fini_l, l, "luf_fini");
		}
	} else {
		struct obj l = pick_l(in, w, true);
		unsigned int n = b % 4 == 0 ? b >> 6 : 2 + b % MAXKEYS;
		unsigned int nr = l.k == O_LIVE ? W[l.w].nr : wd->nr;
		char *p = hostile(c, luf_keytab_size(n, nr) + LUF_CACHELINE, wd->kt,
				  luf_keytab_size(wd->nkeys, wd->nr));
		struct luf_keytab *kt = (void *)(p + (mis ? 8 : 0));

		trace("luf_keytab_init(spare storage, l %s %d, %u keys%s)", kname[l.k], l.w, n,
		      mis ? ", misaligned" : "");
		ret = luf_keytab_init(kt, l.p, n);
		want = !mis && l.k == O_LIVE && n >= 2 ? 0 : -EINVAL;
		expect(ret, want, "luf_keytab_init");
		expect_unchanged("luf_keytab_init on spare storage");
		if (!ret) {
			expect(luf_keytab_check_done(kt, n - 1), 1, "luf_keytab_check_done");
			expect(luf_keytab_check_done(kt, n), -EINVAL, "luf_keytab_check_done");
			end_spare(fini_kt, kt, "luf_keytab_fini");
		}
	}
}

/* ---- instances: build and tear down ---- */

static void add_region(struct world *w, const void *p, size_t n, const char *what)
{
	struct region *r = &regions[w->id][nregions[w->id]++];

	r->p = p;
	r->n = n;
	r->what = what;
}

static void world_build(struct world *w, struct rd *in)
{
	unsigned int b, cpu[NPC], thr[NPC];
	unsigned long reserve[NFL];
	int sc = w->id;

	w->nr = 1 + get8(in) % MAXCPU;
	w->nkeys = 2 + get8(in) % (MAXKEYS - 1);
	b = get8(in);
	switch (b >> 6) {
	case 0:
		w->start = b & 63;
		break;
	case 1:
		w->start = ULONG_MAX - (b & 63); /* just below the wrap */
		break;
	case 2:
		w->start = (unsigned long)LONG_MAX - 32 + (b & 63); /* across the sign bit */
		break;
	default:
		w->start = get64(in);
		break;
	}
	b = get8(in);
	reserve[0] = pick_reserve(b);
	reserve[1] = pick_reserve(b >> 3);
	for (int i = 0; i < NPC; i++) {
		cpu[i] = get8(in) % w->nr;
		thr[i] = pick_thr(get8(in));
		if (!thr[i])
			thr[i] = 1;
	}
	w->l = xalloc(sc, sizeof(struct luf));
	w->done = xalloc(sc, luf_done_size(w->nr));
	w->stats = xalloc(sc, luf_stats_size(w->nr));
	w->kt = xalloc(sc, luf_keytab_size(w->nkeys, w->nr));
	for (int i = 0; i < NPC; i++)
		w->pc[i] = xalloc(sc, luf_pcpu_size(w->nr));
	for (int i = 0; i < NFL; i++)
		w->fl[i] = xalloc(sc, luf_freelist_size(w->nr));
	for (int i = 0; i < NDOM; i++)
		w->dom[i] = xalloc(sc, luf_domain_size(w->nr));
	w->scratch = xalloc(sc, luf_batch_size(w->nr));
	w->scratch_bad = xalloc(sc, luf_batch_size(w->nr + 1));
	memset(w->last_flush, 0, sizeof(w->last_flush));
	memset(w->recv, 0, sizeof(w->recv));
	memset(w->pcs, 0, sizeof(w->pcs));
	memset(w->fls, 0, sizeof(w->fls));
	memset(w->named, 0, sizeof(w->named));
	w->flush_ok = w->flush_fail = 0;
	w->nret = w->nsnaps = 0;
	w->have_snap = false;
	expect(luf_init(w->l, &mock_ops, w, w->done, w->stats, w->start), 0, "luf_init");
	expect(luf_keytab_init(w->kt, w->l, w->nkeys), 0, "luf_keytab_init");
	for (int i = 0; i < NPC; i++) {
		expect(luf_pcpu_init(w->pc[i], w->l, w->kt, cpu[i], thr[i]), 0, "luf_pcpu_init");
		w->pcs[i].live = true;
		w->pcs[i].cpu = cpu[i];
		w->pcs[i].thr = thr[i];
	}
	for (int i = 0; i < NFL; i++) {
		expect(luf_freelist_init(w->fl[i], w->l, w->kt, reserve[i]), 0,
		       "luf_freelist_init");
		w->fls[i].live = true;
		w->fls[i].reserve = reserve[i];
	}
	for (int i = 0; i < NDOM; i++) {
		expect(luf_domain_init(w->dom[i], w->l), 0, "luf_domain_init");
		w->doms[i].live = true;
		w->doms[i].gen++;
	}
	expect(luf_batch_init(w->scratch, w->nr), 0, "luf_batch_init");
	expect(luf_batch_init(w->scratch_bad, w->nr + 1), 0, "luf_batch_init");
	/* What a call with bad arguments must not write (after init: it places the scratch). */
	nregions[sc] = 0;
	add_region(w, w->l, sizeof(struct luf), "instance");
	add_region(w, w->done, luf_done_size(w->nr), "done counters");
	add_region(w, w->stats, luf_stats_size(w->nr), "statistics");
	add_region(w, w->kt, luf_keytab_size(w->nkeys, w->nr), "key table");
	for (int i = 0; i < NPC; i++) {
		/* Its scratch batch is a private copy area, written by lookups that then refuse. */
		char *p = (char *)w->pc[i], *scr = (char *)w->pc[i]->scratch;
		size_t n = luf_batch_size(w->nr);

		add_region(w, p, (size_t)(scr - p), "CPU state");
		add_region(w, scr + n, luf_pcpu_size(w->nr) - (size_t)(scr - p) - n, "CPU state");
	}
	for (int i = 0; i < NFL; i++)
		add_region(w, w->fl[i], luf_freelist_size(w->nr), "free list");
	for (int i = 0; i < NDOM; i++)
		add_region(w, w->dom[i], luf_domain_size(w->nr), "domain");
	for (unsigned int c = 0; c < w->nr; c++) {
		w->done_seen[c] = luf_done_read(&w->l->done, c);
		if (w->done_seen[c] != w->start)
			violation("S4", "done[%u] starts at %#lx, not at the source's %#lx", c,
				  w->done_seen[c], w->start);
	}
	trace("instance %d: %u CPUs, %u keys, start %#lx", w->id, w->nr, w->nkeys, w->start);
}

/* End everything of @w in order, each step with its checks, then build it anew from @in. */
static void do_teardown(struct rd *in, unsigned int ctl, int w)
{
	struct world *wd = &W[w];
	struct obj pc = {wd->pc[0], O_LIVE, w, 0};
	unsigned int n;

	op_begin("teardown", ctl & ~3u, true);
	trace("teardown of instance %d", w);
	if (!wd->pcs[0].live) {
		expect(luf_pcpu_init(wd->pc[0], wd->l, wd->kt, 0, 1), 0, "luf_pcpu_init");
		memset(&wd->pcs[0], 0, sizeof(wd->pcs[0]));
		wd->pcs[0].live = true;
		wd->pcs[0].thr = 1;
	}
	for (int f = 0; f < NFL; f++) {
		struct obj fl = {wd->fl[f], O_LIVE, w, f};

		if (!wd->fls[f].live)
			continue;
		for (n = 0; n <= NFOLIO && !alloc_call(&fl, &pc, LUF_ALLOC_MAY_FLUSH, false); n++)
			;
		for (; n <= NFOLIO && !alloc_call(&fl, &pc, 0, false); n++)
			;
		op.may_flush = true;
		expect(luf_freelist_fini(wd->fl[f]), 0, "luf_freelist_fini");
		wd->fls[f].live = false;
	}
	for (int i = 0; i < NPC; i++) {
		struct obj p = {wd->pc[i], O_LIVE, w, i};

		if (!wd->pcs[i].live)
			continue;
		expect(fold_call(&p, false), 0, "luf_pcpu_fold");
		expect(luf_pcpu_fini(wd->pc[i]), 0, "luf_pcpu_fini");
		expect(luf_pcpu_fini(wd->pc[i]), -EINVAL, "luf_pcpu_fini");
		wd->pcs[i].live = false;
	}
	for (int d = 0; d < NDOM; d++) {
		struct obj l = {wd->l, O_LIVE, w, 0}, dom = {wd->dom[d], O_LIVE, w, d};

		if (!wd->doms[d].live)
			continue;
		expect(settle_call(&l, 0, &dom, wd->scratch, wd->nr), 0, "luf_domain_settle");
		expect(luf_domain_fini(wd->dom[d]), 0, "luf_domain_fini");
		wd->doms[d].live = false;
	}
	check_world(wd);
	expect(luf_keytab_fini(wd->kt), 0, "luf_keytab_fini");
	expect(luf_keytab_fini(wd->kt), -EINVAL, "luf_keytab_fini");
	expect(luf_fini(wd->l), 0, "luf_fini");
	expect(luf_fini(wd->l), -EINVAL, "luf_fini");
	/* What stays owed (folded under keys no folio uses) is forgotten with the table. */
	for (unsigned int i = 0; i < nalive; i++)
		if (rem[alive[i]].w == w)
			rem[alive[i]].done = true;
	xfree_all(w);
	world_build(wd, in);
}

/* ---- the raw primitives, against the oracle's own definitions ---- */

static bool before(unsigned long a, unsigned long b)
{
	return (long)(a - b) < 0;
}

static unsigned long pick_ugen(struct rd *in)
{
	unsigned int b = get8(in);

	switch (b & 3) {
	case 0:
		return b >> 2;
	case 1:
		return ULONG_MAX - (b >> 2);
	case 2:
		return (unsigned long)LONG_MAX - 32 + (b >> 2);
	default:
		return get64(in);
	}
}

static void prim_ugen(struct rd *in, int w)
{
	unsigned long a = pick_ugen(in), b = a + (unsigned long)(long)(signed char)get8(in), n;
	unsigned long cur = luf_ugen_current(&W[w].l->ugen), g;

	trace("ugen primitives: %#lx vs %#lx", a, b);
	if (luf_ugen_before(a, b) != before(a, b) || luf_ugen_before(b, a) != before(b, a))
		violation("S4", "luf_ugen_before(%#lx, %#lx) is wrong", a, b);
	n = !a ? b : !b ? a : before(a, b) ? b : a;
	if (luf_ugen_newer(a, b) != n)
		violation("S4", "luf_ugen_newer(%#lx, %#lx) is %#lx, not %#lx", a, b,
			  luf_ugen_newer(a, b), n);
	g = luf_ugen_stamp(&W[w].l->ugen);
	if (g != (cur + 1 ? cur + 1 : 1))
		violation("S4", "luf_ugen_stamp() is %#lx with the source at %#lx", g, cur);
}

static void prim_cpumask(struct rd *in, int w)
{
	unsigned int nr = W[w].nr, n = nwords(nr), cpu = pick_cpu(in, nr), sub = get8(in) % 12;
	unsigned long ma[MW], mb[MW], cnt = 0;
	unsigned long *a = pick_mask(in, nr, mbuf0, ma), *b = pick_mask(in, nr, mbuf1, mb);
	unsigned int want, got;
	int ret = cpu < nr ? 0 : -EINVAL; /* what set/clear return; the rest return nothing */

	if (!a || !mvalid(ma, nr) || !b || !mvalid(mb, nr))
		return;
	trace("cpumask primitive %u on %lx %lx %lx, %lx %lx %lx, cpu %u", sub, ma[0], ma[1], ma[2],
	      mb[0], mb[1], mb[2], cpu);
	if (!luf_cpumask_valid(a, nr))
		violation("contract", "luf_cpumask_valid() refused a valid mask");
	switch (sub) {
	case 0:
		ret = luf_cpumask_set_cpu(a, nr, cpu);
		if (cpu < nr)
			bset(ma, cpu);
		break;
	case 1:
		ret = luf_cpumask_clear_cpu(a, nr, cpu);
		if (cpu < nr)
			ma[cpu / BPL] &= ~(1UL << (cpu % BPL));
		break;
	case 2:
		ret = luf_cpumask_set_cpu_atomic(a, nr, cpu);
		if (cpu < nr)
			bset(ma, cpu);
		break;
	case 3:
		ret = luf_cpumask_clear_cpu_atomic(a, nr, cpu);
		if (cpu < nr)
			ma[cpu / BPL] &= ~(1UL << (cpu % BPL));
		break;
	case 4:
		if (luf_cpumask_test_cpu(a, nr, cpu) != (cpu < nr && btest(ma, cpu)))
			violation("contract", "luf_cpumask_test_cpu(%u) is wrong", cpu);
		break;
	case 5:
		luf_cpumask_or(a, b, nr);
		for (unsigned int i = 0; i < n; i++)
			ma[i] |= mb[i];
		break;
	case 6:
		luf_cpumask_and(a, b, nr);
		for (unsigned int i = 0; i < n; i++)
			ma[i] &= mb[i];
		break;
	case 7:
		luf_cpumask_andnot(a, b, nr);
		for (unsigned int i = 0; i < n; i++)
			ma[i] &= ~mb[i];
		break;
	case 8:
		luf_cpumask_copy(a, b, nr);
		memcpy(ma, mb, sizeof(ma));
		break;
	case 9:
		luf_cpumask_clear(a, nr);
		memset(ma, 0, sizeof(ma));
		break;
	default:
		for (want = cpu < nr ? cpu : nr; want < nr && !btest(ma, want); want++)
			;
		got = luf_cpumask_next(a, nr, cpu);
		if (got != want)
			violation("contract", "luf_cpumask_next(%u) is %u, not %u", cpu, got, want);
		break;
	}
	if (ret != (cpu < nr ? 0 : -EINVAL))
		violation("contract", "cpumask primitive %u returned %d for CPU %u of %u", sub, ret,
			  cpu, nr);
	for (unsigned int i = 0; i < n; i++) {
		if (ald(&a[i]) != ma[i])
			violation("contract", "cpumask primitive %u: word %u is %#lx, not %#lx",
				  sub, i, ald(&a[i]), ma[i]);
		cnt += (unsigned long)__builtin_popcountl(ma[i]);
	}
	if (luf_cpumask_weight(a, nr) != cnt || luf_cpumask_empty(a, nr) != !cnt)
		violation("contract", "luf_cpumask_weight/empty are wrong");
	want = 1;
	for (unsigned int i = 0; i < n; i++)
		want &= !(ma[i] & ~mb[i]);
	if (luf_cpumask_subset(a, b, nr) != (bool)want ||
	    luf_cpumask_equal(a, b, nr) != !memcmp(ma, mb, n * sizeof(ma[0])))
		violation("contract", "luf_cpumask_subset/equal are wrong");
}

/* A batch against instance @w's done counters: add, check_done, diet, fold, copy. */
static void prim_batch(struct rd *in, int w)
{
	struct world *wd = &W[w];
	unsigned int nr = wd->nr, dropped = 0, left = 0;
	struct luf_batch *b = xalloc(SC_OP, luf_batch_size(nr)), *b2;
	unsigned long m[MW], keep[MW] = {0};
	unsigned long *mask = pick_mask(in, nr, mbuf0, m);
	unsigned int c0 = pick_cpu(in, nr) % nr;
	unsigned long u =
	    luf_done_read(&wd->l->done, c0) + (unsigned long)(long)((int)(get8(in) % 5) - 2);
	bool wr = get8(in) & 1, done = true;

	if (!u)
		u = 1;
	expect(luf_batch_init(b, nr), 0, "luf_batch_init");
	expect(luf_batch_init(b, 0), -EINVAL, "luf_batch_init");
	expect(luf_batch_init(b, LUF_MAX_CPUS + 1), -EINVAL, "luf_batch_init");
	expect(luf_batch_add(b, mask, 0, wr), -EINVAL, "luf_batch_add(ugen 0)");
	if (!mask || !mvalid(m, nr)) {
		expect(luf_batch_add(b, mask, u, wr), -EINVAL, "luf_batch_add(bad mask)");
		return;
	}
	expect(luf_batch_add(b, mask, u, wr), 0, "luf_batch_add");
	for (unsigned int c = 0; c < nr; c++) {
		if (!btest(m, c))
			continue;
		if (before(luf_done_read(&wd->l->done, c), u)) {
			done = false;
			bset(keep, c);
			left++;
		} else {
			dropped++;
		}
	}
	trace("batch primitives: %lx %lx %lx at %#lx: %u done, %u left", m[0], m[1], m[2], u,
	      dropped, left);
	if (luf_batch_check_done(b, &wd->l->done) != done)
		violation("S1", "luf_batch_check_done() of a set at %#lx is %d; done[%u] = %#lx", u,
			  !done, c0, luf_done_read(&wd->l->done, c0));
	b2 = xalloc(SC_OP, luf_batch_size(nr));
	expect(luf_batch_init(b2, nr), 0, "luf_batch_init");
	expect(luf_batch_copy(b2, b), 0, "luf_batch_copy");
	if (!luf_batch_equal(b2, b))
		violation("contract", "luf_batch_copy() made a different batch");
	if (luf_batch_diet(b, &wd->l->done) != dropped)
		violation("S1", "luf_batch_diet() of a set at %#lx dropped the wrong CPUs", u);
	for (unsigned int i = 0; i < nwords(nr); i++)
		if (ald(&b->cpus[i]) != keep[i])
			violation("S1", "luf_batch_diet() of a set at %#lx kept the wrong CPUs", u);
	if (luf_batch_empty(b) != !left || (!left && luf_batch_writable(b)))
		violation("contract", "luf_batch_diet() left a wrong ugen or writable flag");
	expect(luf_batch_fold(b, b2), 0, "luf_batch_fold");
	if (!dropped && !left ? !luf_batch_empty(b)
			      : luf_batch_ugen(b) != u || luf_batch_writable(b) != wr)
		violation("contract", "luf_batch_fold() lost the ugen or writable flag");
}

static void prim_classify(void)
{
	for (unsigned int f = 0; f <= LUF_PTE_ALL; f++) {
		enum luf_unmap_kind k =
		    f & (LUF_PTE_WRITABLE | LUF_PTE_DIRTY | LUF_PTE_FLUSH_PENDING) ? LUF_UNMAP_FLUSH
		    : f & LUF_PTE_ACCESSIBLE					   ? LUF_UNMAP_DEFER
					     : LUF_UNMAP_NO_FLUSH;

		if (luf_unmap_classify(f) != k || luf_can_defer(f) != (k == LUF_UNMAP_DEFER))
			violation("S3", "luf_unmap_classify(%#x) is %d, not %d", f,
				  luf_unmap_classify(f), k);
	}
}

static void do_prim(struct rd *in, unsigned int ctl, int w)
{
	unsigned int v = ctl >> 5;

	op_begin("primitives", ctl, false);
	if (no_prim) {
		get8(in);
		return;
	}
	if (v < 2)
		prim_ugen(in, w);
	else if (v < 5)
		prim_cpumask(in, w);
	else if (v < 7)
		prim_batch(in, w);
	else
		prim_classify();
}

/* ---- the driver ---- */

enum {
	OP_UNMAP,
	OP_DEFER,
	OP_FOLD,
	OP_FREE,
	OP_ALLOC,
	OP_KEY_FLUSH,
	OP_ABORT_KEY,
	OP_ABORT_DOMAIN,
	OP_SETTLE,
	OP_UPGRADE_CHECK,
	OP_LOCAL_BEGIN,
	OP_LOCAL_END,
	OP_FLUSH_BATCH,
	OP_READERS,
	OP_INIT,
	OP_FINI,
	OP_LIVE_INIT,
	OP_SPARE,
	OP_TEARDOWN,
	OP_PRIM,
	OP_NR
};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = getenv("LUF_FUZZ_API_TRACE"), *p = getenv("LUF_FUZZ_API_NO_PRIMITIVES");

	(void)argc, (void)argv;
	trace_on = t && *t && *t != '0';
	no_prim = p && *p && *p != '0';
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd in = {data, size};

	memset(&op, 0, sizeof(op));
	memset(folios, 0, sizeof(folios));
	for (int i = 0; i < NFOLIO; i++)
		folios[i].w = -1;
	memset(&garbage_folio, 0x5a, sizeof(garbage_folio));
	garbage_folio.state = 0x77;
	nrem = nalive = 0;
	clk = 0;
	for (int i = 0; i < NW; i++) {
		memset(&W[i], 0, sizeof(W[i]));
		W[i].id = i;
		world_build(&W[i], &in);
	}
	for (op.idx = 1; in.n && op.idx <= MAXOPS; op.idx++) {
		unsigned int code = get8(&in) % OP_NR, ctl = get8(&in), v = ctl >> 5;
		int w = (ctl >> 4) & 1;

		switch (code) {
		case OP_UNMAP:
			do_unmap(&in, ctl, w, true);
			break;
		case OP_DEFER:
			do_unmap(&in, ctl, w, false);
			break;
		case OP_FOLD:
			do_fold(&in, ctl, w);
			break;
		case OP_FREE:
			do_free(&in, ctl, w);
			break;
		case OP_ALLOC:
			do_alloc(&in, ctl, w);
			break;
		case OP_KEY_FLUSH:
			do_key(&in, ctl, w, false);
			break;
		case OP_ABORT_KEY:
			do_key(&in, ctl, w, true);
			break;
		case OP_ABORT_DOMAIN:
			do_abort_domain(&in, ctl, w);
			break;
		case OP_SETTLE:
			do_settle(&in, ctl, w);
			break;
		case OP_UPGRADE_CHECK:
			do_upgrade_check(&in, ctl, w);
			break;
		case OP_LOCAL_BEGIN:
			do_local_begin(&in, ctl, w);
			break;
		case OP_LOCAL_END:
			do_local_end(&in, ctl, w);
			break;
		case OP_FLUSH_BATCH:
			do_flush_batch(&in, ctl, w);
			break;
		case OP_READERS:
			do_readers(&in, ctl, w);
			break;
		case OP_INIT:
			do_init(&in, ctl, w, v % 3);
			break;
		case OP_FINI:
			do_fini(&in, ctl, w, v % 3);
			break;
		case OP_LIVE_INIT:
			do_live_init(&in, ctl, w);
			break;
		case OP_SPARE:
			do_spare(&in, ctl, w);
			break;
		case OP_TEARDOWN:
			do_teardown(&in, ctl, w);
			break;
		default:
			do_prim(&in, ctl, w);
			break;
		}
		op_end();
		xfree_all(SC_OP);
	}
	for (int i = 0; i < NSC; i++)
		xfree_all(i);
	return 0;
}
