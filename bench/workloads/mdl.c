// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/workloads/mdl.c - the engine of mdl.h: four policies on one event
 * stream, luf on a counting backend, and the checker.
 *
 * Cost. At 4,096 CPUs a flush of a process's CPUs reaches hundreds of
 * CPUs, and immediate sends one per unmapped page: writing a tick per CPU
 * per flush would cost the model billions of stores per run. The checker
 * keeps exactly the same answers (the tick of each CPU's last flush, per
 * policy) in a form whose updates cost O(processes in the flush) or
 * O(cpumask words), not O(CPUs):
 *
 *   masks      a process's CPU mask is an immutable snapshot once a frame
 *              or a flush refers to it (mdl_dom_add_cpu() afterwards makes
 *              a new one); a frame keeps a pointer to the snapshot it was
 *              removed under, not a copy of the mask;
 *   immediate  flush the union of the snapshots of the call's (batch's)
 *   batched    removals: the flush is recorded once per snapshot
 *              (mask->flushed[p]); a CPU's last flush is the newest of its
 *              own tick (context switches, wide flushes) and of the
 *              snapshots that hold it (cpu->in);
 *   oracle     flushes every stale CPU: it is recorded as one "all clear"
 *              tick, plus the set of stale CPUs (a bitmask, for the count);
 *              a removal older than the last all clear is flushed on every
 *              CPU that received it (each was either stale and flushed, or
 *              had flushed since its own last removal), a newer one only
 *              where the CPU context-switched since;
 *   luf        flushes whatever set luf hands the backend: a tick per CPU
 *              (as luf's own done marking), with a per-word minimum and a
 *              per-snapshot lower bound, so a check costs O(words).
 *
 * S4 (luf's done[] never goes back) is checked on the CPUs of each flush
 * and at each context switch (the only writers of a CPU's counter), on
 * the summary luf_done_all() at each flush, and on every CPU at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mdl.h"
#include "rp_bound.h"

#define NR_KEYS 65536u /* LUF's 16-bit keys */
#define OSET_MAX 64u   /* snapshots in a call's or batch's set before it goes wide */

/* A process's CPU mask; immutable once frozen (a frame or a flush refers to it). */
struct mmask {
	unsigned long *bits;
	unsigned int *widx; /* the words of @bits that are not 0, @nw of them */
	unsigned int nw, weight;
	int frozen;
	uint64_t flushed[MDL_NPOL]; /* immediate, batched: all its CPUs flushed at this tick */
	uint64_t lb;		    /* luf: all its CPUs flushed at or after this (a cache) */
	uint64_t bcov;		    /* bounds: all its CPUs covered at or after this (a cache) */
	struct mmask *next;	    /* every mask, for mdl_destroy() */
};

struct frame {
	struct luf_folio lf;	  /* luf's links: in the descriptor, never in the frame */
	uint64_t tick;		  /* newest removal of a translation to it, 0 = none */
	const struct mmask *mask; /* the CPUs that may cache it (at @tick) */
	unsigned int dom;	  /* domain it is mapped in */
	unsigned char writable, tier, removed_wr;
};

struct dom {
	struct mmask *mask; /* CPUs that ran it (the current snapshot) */
	struct luf_domain *ldom;
	uint64_t tick;	     /* newest removal in it */
	struct mmask *rmask; /* its CPUs at that removal (batched: the pending check) */
};

/* The CPUs of an open call or batch: a few snapshots, or a bitmask when wide. */
struct oset {
	struct mmask *obj[OSET_MAX];
	unsigned int n;
	int wide, any;
	unsigned long *bits;
};

struct cpu {
	struct luf_pcpu *ro, *rw; /* LUF's tlb_ubc_ro and tlb_ubc */
	struct luf_freelist *fl[2];
	struct oset imm, bat;	       /* open call / batch */
	unsigned int *batch, nr_batch; /* frames removed in the open batch */
	struct mmask **in;	       /* the masks that hold this CPU */
	unsigned int nr_in, cap_in;
};

struct mdl {
	struct mdl_config cfg;
	unsigned int nr_cpus, words, ntiers;
	uint64_t tick;
	uint64_t *done[MDL_NPOL]; /* per policy, per CPU: see the head comment */
	uint64_t *gmin;		  /* luf: per word, the least done[MDL_LUF] of its CPUs */
	unsigned int *gholder;	  /* ... and a CPU that holds it */
	struct mdl_counts c[MDL_NPOL];
	unsigned long *ora_stale; /* oracle: CPUs with a removal not flushed since */
	uint64_t ora_clear;	  /* oracle: tick of its last flush (of every stale CPU) */
	struct frame *fr;
	struct dom *dom;
	struct cpu *cpu;
	unsigned long *scratch;
	unsigned long *seen_done; /* S4: luf's done[] when last read */
	unsigned long seen_all;	  /* S4: luf_done_all() when last read */
	unsigned int cur;	  /* the CPU luf runs on (for the backend) */
	struct luf *l;
	struct luf_done_cpu *ldone;
	struct luf_stats_cpu *lstats;
	struct luf_keytab *kt;
	struct mmask *masks;
	long errors;
	unsigned long long events;
	void **allocs;
	unsigned int nr_allocs;
	struct rp_bound bound;	    /* the lower bounds (bench/replay/rp_bound.h) */
	enum mdl_cause cause;	    /* of the flushes being issued now */
	enum luf_abort_cause abort; /* ... if MDL_C_UPGRADE */
	FILE *explain;
};

static void *zalloc(struct mdl *m, size_t size)
{
	size_t n = (size + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	void *p = aligned_alloc(LUF_CACHELINE, n ? n : LUF_CACHELINE);

	if (!p)
		return NULL;
	memset(p, 0, n ? n : LUF_CACHELINE);
	m->allocs[m->nr_allocs++] = p;
	return p;
}

const char *mdl_pol_name(enum mdl_pol p)
{
	static const char *const n[MDL_NPOL] = {"immediate", "batched", "luf", "oracle"};

	return (unsigned int)p < MDL_NPOL ? n[p] : "?";
}

const char *mdl_cause_name(enum mdl_cause c)
{
	static const char *const n[MDL_NCAUSES] = {"call",  "batch-end", "pending",  "wrprotect",
						   "reuse", "upgrade",	 "writable", "unmap"};

	return (unsigned int)c < MDL_NCAUSES ? n[c] : "?";
}

void mdl_explain(struct mdl *m, FILE *f)
{
	m->explain = f;
}

const char *mdl_abort_name(enum luf_abort_cause c)
{
	static const char *const n[LUF_ABORT_NR_CAUSES] = {
	    "write_fault",  "prot_upgrade", "write_other", "poison",
	    "init_on_free", "migrate_copy", "move"};

	return (unsigned int)c < LUF_ABORT_NR_CAUSES ? n[c] : "?";
}

static int mask_test(const unsigned long *mask, unsigned int cpu)
{
	return (int)((mask[cpu / 64] >> (cpu % 64)) & 1);
}

/* Bits set in @x (no libgcc call without -mpopcnt). */
static unsigned int popc(unsigned long x)
{
	x = x - ((x >> 1) & 0x5555555555555555ul);
	x = (x & 0x3333333333333333ul) + ((x >> 2) & 0x3333333333333333ul);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0ful;
	return (unsigned int)((x * 0x0101010101010101ul) >> 56);
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- masks ----------------------------------------------------------- */

static int cpu_in_add(struct mdl *m, unsigned int c, struct mmask *x)
{
	struct cpu *cp = &m->cpu[c];

	if (cp->nr_in == cp->cap_in) {
		unsigned int cap = cp->cap_in ? 2 * cp->cap_in : 4;
		struct mmask **in = realloc(cp->in, cap * sizeof(*in));

		if (!in)
			return -ENOMEM;
		cp->in = in;
		cp->cap_in = cap;
	}
	cp->in[cp->nr_in++] = x;
	return 0;
}

/* A new mask: a copy of @src, or empty. */
static struct mmask *mask_new(struct mdl *m, const struct mmask *src)
{
	struct mmask *x = calloc(1, sizeof(*x) + m->words * (sizeof(unsigned long) + sizeof(int)));

	if (!x)
		return NULL;
	x->bits = (unsigned long *)(x + 1);
	x->widx = (unsigned int *)(x->bits + m->words);
	x->next = m->masks;
	m->masks = x;
	if (!src)
		return x;
	memcpy(x->bits, src->bits, m->words * sizeof(unsigned long));
	memcpy(x->widx, src->widx, src->nw * sizeof(unsigned int));
	x->nw = src->nw;
	x->weight = src->weight;
	for (unsigned int i = 0; i < x->nw; i++)
		for (unsigned long b = x->bits[x->widx[i]]; b; b &= b - 1)
			if (cpu_in_add(m, x->widx[i] * 64 + (unsigned int)__builtin_ctzl(b), x))
				return NULL;
	return x;
}

static int mask_add_cpu(struct mdl *m, struct mmask *x, unsigned int c)
{
	unsigned int w = c / 64;

	if (!x->bits[w])
		x->widx[x->nw++] = w;
	x->bits[w] |= 1ul << (c % 64);
	x->weight++;
	return cpu_in_add(m, c, x);
}

/* ---- policies' flushes ----------------------------------------------- */

/*
 * Count a flush of @n CPUs (@self: the caller is one of them); @bits: the
 * CPUs as a bitmask, or NULL with the masks @x[0..@k-1] (for --explain).
 */
static void account(struct mdl *m, enum mdl_pol p, unsigned int n, int self,
		    const unsigned long *bits, struct mmask *const *x, unsigned int k)
{
	m->c[p].cpus += n;
	m->c[p].by_cause[m->cause]++;
	if (self)
		n--;
	if (n) {
		m->c[p].remote++;
		m->c[p].received += n;
	} else {
		m->c[p].local++;
	}
	if (!m->explain)
		return;
	fprintf(m->explain, "flush %-9s %-9s %-12s event %-9llu cpu %-4u remote %-5u cpus",
		mdl_pol_name(p), mdl_cause_name(m->cause),
		m->cause == MDL_C_UPGRADE ? mdl_abort_name(m->abort) : "-", m->events, m->cur, n);
	for (unsigned int c = 0; c < m->nr_cpus; c++) {
		int in = bits ? mask_test(bits, c) : 0;

		for (unsigned int i = 0; !bits && i < k && !in; i++)
			in = mask_test(x[i]->bits, c);
		if (in)
			fprintf(m->explain, " %u", c);
	}
	fputc('\n', m->explain);
}

/* Bounds: the CPUs of @x may cache a translation removed at @r; it must be gone now. */
static void bound_need(struct mdl *m, const struct mmask *cx, uint64_t r)
{
	struct mmask *x = (struct mmask *)(uintptr_t)cx;
	uint64_t lb = UINT64_MAX;

	if (!r || x->bcov >= r)
		return;
	for (unsigned int i = 0; i < x->nw; i++)
		for (unsigned long b = x->bits[x->widx[i]]; b; b &= b - 1) {
			unsigned int c = x->widx[i] * 64 + (unsigned int)__builtin_ctzl(b);

			rp_bound_need(&m->bound, c, r, m->tick);
			lb = lb < m->bound.cov[c] ? lb : m->bound.cov[c];
		}
	x->bcov = lb; /* every CPU covered up to here: for the operation bound too */
}

/* luf: the least done[MDL_LUF] of word @w's CPUs, after those in @bits moved on. */
static void gmin_update(struct mdl *m, unsigned int w, unsigned long bits)
{
	unsigned int first = w * 64, end = first + 64, h;
	const uint64_t *done = m->done[MDL_LUF];
	uint64_t min;

	if (!mask_test(&bits, m->gholder[w] % 64))
		return; /* the holder did not move: the others moved past it */
	if (end > m->nr_cpus)
		end = m->nr_cpus;
	h = first;
	min = done[first];
	for (unsigned int c = first + 1; c < end; c++)
		if (done[c] < min)
			min = done[c], h = c;
	m->gmin[w] = min;
	m->gholder[w] = h;
}

/* Flush the CPUs of bitmask @mask, one tick per CPU. */
static void flush_bits(struct mdl *m, enum mdl_pol p, unsigned int caller,
		       const unsigned long *mask)
{
	unsigned int n = 0;
	uint64_t t;

	for (unsigned int w = 0; w < m->words; w++)
		n += popc(mask[w]);
	if (!n)
		return;
	t = ++m->tick;
	for (unsigned int w = 0; w < m->words; w++) {
		if (!mask[w])
			continue;
		for (unsigned long b = mask[w]; b; b &= b - 1)
			m->done[p][w * 64 + (unsigned int)__builtin_ctzl(b)] = t;
		if (p == MDL_LUF)
			gmin_update(m, w, mask[w]);
	}
	account(m, p, n, mask_test(mask, caller), mask, NULL, 0);
}

/* Flush the CPUs of the masks @x[0..@k-1]: recorded once per mask. */
static void flush_masks(struct mdl *m, enum mdl_pol p, unsigned int caller, struct mmask *const *x,
			unsigned int k)
{
	unsigned int n = 0;
	int self;
	uint64_t t;

	if (k == 1) {
		n = x[0]->weight;
		self = mask_test(x[0]->bits, caller);
	} else {
		memset(m->scratch, 0, m->words * sizeof(unsigned long));
		for (unsigned int i = 0; i < k; i++)
			for (unsigned int j = 0; j < x[i]->nw; j++)
				m->scratch[x[i]->widx[j]] |= x[i]->bits[x[i]->widx[j]];
		for (unsigned int w = 0; w < m->words; w++)
			n += popc(m->scratch[w]);
		self = mask_test(m->scratch, caller);
	}
	if (!n)
		return;
	t = ++m->tick;
	for (unsigned int i = 0; i < k; i++) {
		x[i]->flushed[p] = t;
		x[i]->frozen = 1;
	}
	account(m, p, n, self, NULL, x, k);
}

static void oset_add(struct mdl *m, struct oset *s, struct mmask *x)
{
	s->any = 1;
	if (!s->wide) {
		for (unsigned int i = s->n; i--;)
			if (s->obj[i] == x)
				return;
		if (s->n < OSET_MAX) {
			s->obj[s->n++] = x;
			return;
		}
		/* Too many processes: a bitmask from here on. */
		s->wide = 1;
		memset(s->bits, 0, m->words * sizeof(unsigned long));
		for (unsigned int i = 0; i < s->n; i++)
			for (unsigned int j = 0; j < s->obj[i]->nw; j++)
				s->bits[s->obj[i]->widx[j]] |= s->obj[i]->bits[s->obj[i]->widx[j]];
	}
	for (unsigned int j = 0; j < x->nw; j++)
		s->bits[x->widx[j]] |= x->bits[x->widx[j]];
}

static void oset_flush(struct mdl *m, enum mdl_pol p, unsigned int caller, const struct oset *s)
{
	if (s->wide)
		flush_bits(m, p, caller, s->bits);
	else if (s->n)
		flush_masks(m, p, caller, s->obj, s->n);
}

static void oset_clear(struct oset *s)
{
	s->n = 0;
	s->wide = 0;
	s->any = 0;
}

/* Oracle: one flush of every CPU that still holds anything stale. */
static void oracle_flush(struct mdl *m, unsigned int caller)
{
	unsigned int n = 0;

	for (unsigned int w = 0; w < m->words; w++)
		n += popc(m->ora_stale[w]);
	if (!n)
		return;
	m->ora_clear = ++m->tick;
	account(m, MDL_ORA, n, mask_test(m->ora_stale, caller), m->ora_stale, NULL, 0);
	memset(m->ora_stale, 0, m->words * sizeof(unsigned long));
}

/* ---- the checker's question: may a CPU of @x still cache a removal of tick @r? */

/* immediate, batched: a CPU's last flush is its own tick or a mask's that holds it. */
static uint64_t done_of(const struct mdl *m, enum mdl_pol p, unsigned int c)
{
	const struct cpu *cp = &m->cpu[c];
	uint64_t d = m->done[p][c];

	for (unsigned int i = 0; i < cp->nr_in; i++)
		d = max64(d, cp->in[i]->flushed[p]);
	return d;
}

static int stale_masks(const struct mdl *m, enum mdl_pol p, const struct mmask *x, uint64_t r)
{
	if (x->flushed[p] >= r)
		return 0;
	for (unsigned int i = 0; i < x->nw; i++)
		for (unsigned long b = x->bits[x->widx[i]]; b; b &= b - 1)
			if (done_of(m, p, x->widx[i] * 64 + (unsigned int)__builtin_ctzl(b)) < r)
				return 1;
	return 0;
}

static int stale_oracle(const struct mdl *m, const struct mmask *x, uint64_t r)
{
	if (r < m->ora_clear)
		return 0;
	for (unsigned int i = 0; i < x->nw; i++)
		for (unsigned long b = x->bits[x->widx[i]]; b; b &= b - 1)
			if (m->done[MDL_ORA][x->widx[i] * 64 + (unsigned int)__builtin_ctzl(b)] < r)
				return 1;
	return 0;
}

static int stale_luf(const struct mdl *m, struct mmask *x, uint64_t r)
{
	const uint64_t *done = m->done[MDL_LUF];
	uint64_t lb = UINT64_MAX;

	if (x->lb >= r)
		return 0;
	for (unsigned int i = 0; i < x->nw; i++) {
		unsigned int w = x->widx[i];

		if (m->gmin[w] >= r) {
			lb = lb < m->gmin[w] ? lb : m->gmin[w];
			continue;
		}
		for (unsigned long b = x->bits[w]; b; b &= b - 1) {
			uint64_t d = done[w * 64 + (unsigned int)__builtin_ctzl(b)];

			if (d < r)
				return 1;
			lb = lb < d ? lb : d;
		}
	}
	x->lb = lb;
	return 0;
}

static int stale(const struct mdl *m, enum mdl_pol p, const struct mmask *x, uint64_t r)
{
	if (!r)
		return 0;
	switch (p) {
	case MDL_ORA:
		return stale_oracle(m, x, r);
	case MDL_LUF:
		return stale_luf(m, (struct mmask *)(uintptr_t)x, r);
	default:
		return stale_masks(m, p, x, r);
	}
}

/* ---- luf's counting backend -------------------------------------- */

/* S4: luf's done[@c] never goes back (read whenever it may have moved). */
static void s4_check(struct mdl *m, unsigned int c)
{
	unsigned long d = luf_done_read(&m->l->done, c);

	if (luf_ugen_before(d, m->seen_done[c]))
		m->c[MDL_LUF].viol[MDL_S4]++;
	m->seen_done[c] = d;
}

static int count_flush(void *arch, const unsigned long *cpus, unsigned int nr,
		       const struct luf_range *r)
{
	struct mdl *m = arch;
	unsigned long all = luf_done_all(&m->l->done);

	(void)r;
	(void)nr;
	if (luf_ugen_before(all, m->seen_all))
		m->c[MDL_LUF].viol[MDL_S4]++;
	m->seen_all = all;
	for (unsigned int w = 0; w < m->words; w++)
		for (unsigned long b = cpus[w]; b; b &= b - 1)
			s4_check(m, w * 64 + (unsigned int)__builtin_ctzl(b));
	flush_bits(m, MDL_LUF, m->cur, cpus);
	return 0;
}

static unsigned int count_nr_cpu_ids(void *arch)
{
	return ((struct mdl *)arch)->nr_cpus;
}

static unsigned int count_this_cpu(void *arch)
{
	return ((struct mdl *)arch)->cur;
}

static const struct luf_arch_ops count_ops = {
    .flush = count_flush, .nr_cpu_ids = count_nr_cpu_ids, .this_cpu = count_this_cpu};

static void luf_check(struct mdl *m, int ret)
{
	if (ret)
		m->errors++;
}

/* ---- set-up -------------------------------------------------------- */

static int setup_luf(struct mdl *m)
{
	unsigned int n = m->nr_cpus;

	m->l = zalloc(m, sizeof(*m->l));
	m->ldone = zalloc(m, luf_done_size(n));
	m->lstats = zalloc(m, luf_stats_size(n));
	m->kt = zalloc(m, luf_keytab_size(NR_KEYS, n));
	if (!m->l || !m->ldone || !m->lstats || !m->kt)
		return -ENOMEM;
	if (luf_init(m->l, &count_ops, m, m->ldone, m->lstats, 0) ||
	    luf_keytab_init(m->kt, m->l, NR_KEYS))
		return -EINVAL;
	m->seen_all = luf_done_all(&m->l->done);
	for (unsigned int c = 0; c < n; c++)
		m->seen_done[c] = luf_done_read(&m->l->done, c);
	for (unsigned int d = 0; d < m->cfg.nr_doms; d++) {
		m->dom[d].mask = mask_new(m, NULL);
		m->dom[d].ldom = zalloc(m, luf_domain_size(n));
		if (!m->dom[d].mask || !m->dom[d].ldom || luf_domain_init(m->dom[d].ldom, m->l))
			return -ENOMEM;
	}
	for (unsigned int c = 0; c < n; c++) {
		struct cpu *cp = &m->cpu[c];

		cp->ro = zalloc(m, luf_pcpu_size(n));
		cp->rw = zalloc(m, luf_pcpu_size(n));
		cp->imm.bits = zalloc(m, m->words * sizeof(unsigned long));
		cp->bat.bits = zalloc(m, m->words * sizeof(unsigned long));
		cp->batch = zalloc(m, m->cfg.batch_max * sizeof(unsigned int));
		if (!cp->ro || !cp->rw || !cp->imm.bits || !cp->bat.bits || !cp->batch)
			return -ENOMEM;
		if (luf_pcpu_init(cp->ro, m->l, m->kt, c, LUF_PCPU_DEFAULT_THRESHOLD) ||
		    luf_pcpu_init(cp->rw, m->l, m->kt, c, LUF_PCPU_DEFAULT_THRESHOLD))
			return -EINVAL;
		for (unsigned int t = 0; t < m->ntiers; t++) {
			cp->fl[t] = zalloc(m, luf_freelist_size(n));
			if (!cp->fl[t] || luf_freelist_init(cp->fl[t], m->l, m->kt, 0))
				return -ENOMEM;
		}
	}
	return 0;
}

int mdl_create(const struct mdl_config *cfg, struct mdl **out)
{
	struct mdl *m;
	unsigned int n = cfg->nr_cpus;
	int ret;

	if (!n || n > LUF_MAX_CPUS || !cfg->nr_doms || !cfg->nr_frames || !cfg->batch_max ||
	    cfg->nr_fast > cfg->nr_frames)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->allocs = calloc(32 + 8 * (size_t)n + 4 * (size_t)cfg->nr_doms, sizeof(void *));
	m->cpu = calloc(n, sizeof(struct cpu));
	if (!m->allocs || !m->cpu) {
		free(m->allocs);
		free(m->cpu);
		free(m);
		return -ENOMEM;
	}
	m->cfg = *cfg;
	m->nr_cpus = n;
	m->words = (n + 63) / 64;
	m->ntiers = cfg->nr_fast && cfg->nr_fast < cfg->nr_frames ? 2 : 1;
	for (int p = 0; p < MDL_NPOL; p++)
		m->done[p] = zalloc(m, n * sizeof(uint64_t));
	m->gmin = zalloc(m, m->words * sizeof(uint64_t));
	m->gholder = zalloc(m, m->words * sizeof(unsigned int));
	m->ora_stale = zalloc(m, m->words * sizeof(unsigned long));
	m->seen_done = zalloc(m, n * sizeof(unsigned long));
	m->scratch = zalloc(m, m->words * sizeof(unsigned long));
	m->fr = zalloc(m, cfg->nr_frames * sizeof(struct frame));
	m->dom = zalloc(m, cfg->nr_doms * sizeof(struct dom));
	if (!m->done[MDL_NPOL - 1] || !m->gmin || !m->gholder || !m->ora_stale || !m->seen_done ||
	    !m->fr || !m->dom || !m->scratch || rp_bound_init(&m->bound, n)) {
		mdl_destroy(m);
		return -ENOMEM;
	}
	for (unsigned int w = 0; w < m->words; w++)
		m->gholder[w] = w * 64;
	ret = setup_luf(m);
	if (ret) {
		mdl_destroy(m);
		return ret;
	}
	/*
	 * Deal the frames round-robin to the CPUs' lists: the j-th frame of a
	 * tier goes to CPU j % n. When each tier divides evenly, CPU c's
	 * frames are numbered contiguously (its list holds the same positions
	 * as with frame j, but its descriptors share cache lines: at 4,096 CPUs
	 * walking a pend list of scattered descriptors is cache misses).
	 */
	for (unsigned int f = 0; f < cfg->nr_frames; f++) {
		unsigned int tier = m->ntiers == 2 && f >= cfg->nr_fast;
		unsigned int base = tier ? cfg->nr_fast : 0;
		unsigned int size = m->ntiers == 2 && !tier ? cfg->nr_fast : cfg->nr_frames - base;
		unsigned int j = f - base, c = j % n, id = f;
		struct frame *fr;

		if (size % n == 0)
			id = base + c * (size / n) + j / n;
		fr = &m->fr[id];
		fr->tier = (unsigned char)tier;
		fr->dom = ~0u;
		luf_check(m, luf_free(m->cpu[c].fl[fr->tier], m->cpu[c].ro, &fr->lf, 0));
	}
	*out = m;
	return 0;
}

void mdl_destroy(struct mdl *m)
{
	if (!m)
		return;
	while (m->masks) {
		struct mmask *x = m->masks;

		m->masks = x->next;
		free(x);
	}
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		free(m->cpu[c].in);
	rp_bound_fini(&m->bound);
	for (unsigned int i = 0; i < m->nr_allocs; i++)
		free(m->allocs[i]);
	free(m->allocs);
	free(m->cpu);
	free(m);
}

void mdl_dom_add_cpu(struct mdl *m, unsigned int dom, unsigned int cpu)
{
	struct dom *d = &m->dom[dom];

	if (cpu >= m->nr_cpus || mask_test(d->mask->bits, cpu))
		return;
	if (d->mask->frozen) {
		struct mmask *x = mask_new(m, d->mask);

		if (!x) {
			m->errors++;
			return;
		}
		d->mask = x;
	}
	if (mask_add_cpu(m, d->mask, cpu))
		m->errors++;
}

unsigned int mdl_dom_weight(const struct mdl *m, unsigned int dom)
{
	return m->dom[dom].mask->weight;
}

unsigned int mdl_frame_tier(const struct mdl *m, unsigned int frame)
{
	return m->fr[frame].tier;
}

int mdl_frame_writable(const struct mdl *m, unsigned int frame)
{
	return m->fr[frame].writable;
}

unsigned int mdl_frame_dom(const struct mdl *m, unsigned int frame)
{
	return m->fr[frame].dom;
}

unsigned long mdl_nr_free(const struct mdl *m, unsigned int cpu, unsigned int tier)
{
	const struct luf_freelist *fl = m->cpu[cpu].fl[tier < m->ntiers ? tier : 0];

	return luf_freelist_nr_clean(fl) + luf_freelist_nr_pend(fl);
}

/* ---- events -------------------------------------------------------- */

long mdl_alloc(struct mdl *m, unsigned int cpu, unsigned int tier)
{
	struct cpu *cp = &m->cpu[cpu];
	struct luf_folio *f;
	struct frame *fr;
	unsigned int i;
	int ret;

	m->events++;
	m->cur = cpu;
	m->cause = MDL_C_REUSE;
	ret = luf_alloc(cp->fl[tier < m->ntiers ? tier : 0], cp->ro, LUF_ALLOC_MAY_FLUSH, &f);
	if (ret == -ENOMEM)
		return -1;
	if (ret) {
		m->errors++;
		return -1;
	}
	fr = luf_folio_entry(f, struct frame, lf);
	i = (unsigned int)(fr - m->fr);
	if (fr->tick) {
		if (stale(m, MDL_ORA, fr->mask, fr->tick))
			oracle_flush(m, cpu);
		bound_need(m, fr->mask, fr->tick);
		for (int p = 0; p < MDL_NPOL; p++)
			if (stale(m, (enum mdl_pol)p, fr->mask, fr->tick))
				m->c[p].viol[MDL_S1]++;
	}
	fr->tick = 0;
	fr->removed_wr = 0;
	return (long)i;
}

void mdl_map(struct mdl *m, unsigned int cpu, unsigned int frame, unsigned int dom, int writable)
{
	(void)cpu;
	m->fr[frame].dom = dom;
	m->fr[frame].writable = (unsigned char)!!writable;
}

/* Record that the CPUs of @fr's domain may hold a stale translation to it. */
static struct mmask *note_removal(struct mdl *m, unsigned int frame)
{
	struct frame *fr = &m->fr[frame];
	struct dom *d = &m->dom[fr->dom];
	struct mmask *x = d->mask;
	uint64_t t = ++m->tick;

	x->frozen = 1;
	fr->mask = x;
	fr->tick = t;
	d->tick = t;
	d->rmask = x;
	for (unsigned int i = 0; i < x->nw; i++)
		m->ora_stale[x->widx[i]] |= x->bits[x->widx[i]];
	return x;
}

void mdl_remove(struct mdl *m, unsigned int cpu, unsigned int frame)
{
	struct cpu *cp = &m->cpu[cpu];
	struct frame *fr = &m->fr[frame];
	struct dom *d = &m->dom[fr->dom];
	unsigned int flags = LUF_PTE_ACCESSIBLE | (fr->writable ? LUF_PTE_WRITABLE : 0);
	struct mmask *x;

	m->events++;
	m->cur = cpu;
	x = note_removal(m, frame);
	fr->removed_wr = fr->writable;
	oset_add(m, &cp->imm, x);
	oset_add(m, &cp->bat, x);
	m->cause = MDL_C_UNMAP;
	luf_check(m, luf_unmap(fr->writable ? cp->rw : cp->ro, d->ldom, x->bits, flags));
	if (cp->nr_batch < m->cfg.batch_max)
		cp->batch[cp->nr_batch++] = frame;
	else
		m->errors++; /* a workload bug: batch larger than configured */
}

void mdl_call_end(struct mdl *m, unsigned int cpu)
{
	struct cpu *cp = &m->cpu[cpu];

	if (m->cause != MDL_C_WRPROTECT)
		m->cause = MDL_C_CALL;
	if (cp->imm.any)
		oset_flush(m, MDL_IMM, cpu, &cp->imm);
	oset_clear(&cp->imm);
}

void mdl_batch_end(struct mdl *m, unsigned int cpu)
{
	struct cpu *cp = &m->cpu[cpu];
	unsigned short key = 0, wkey = 0;
	int any_wr = 0;

	m->events++;
	m->cur = cpu;
	m->cause = MDL_C_CALL;
	mdl_call_end(m, cpu);
	/* batched, B2: try_to_unmap_flush() of the CPUs added at each removal (B1) */
	m->cause = MDL_C_BATCH;
	if (cp->bat.any)
		oset_flush(m, MDL_BAT, cpu, &cp->bat);
	oset_clear(&cp->bat);
	m->cause = MDL_C_WRITABLE;
	luf_check(m, luf_pcpu_fold(cp->rw, &wkey)); /* writable: flushed here (S3) */
	m->cause = MDL_C_UNMAP;
	luf_check(m, luf_pcpu_fold(cp->ro, &key));
	m->cause = MDL_C_WRITABLE;
	if (wkey)
		m->errors++; /* a writable batch is never deferred */
	for (unsigned int i = 0; i < cp->nr_batch && !any_wr; i++) {
		struct frame *fr = &m->fr[cp->batch[i]];

		if (fr->removed_wr && stale(m, MDL_ORA, fr->mask, fr->tick))
			any_wr = 1;
	}
	if (any_wr)
		oracle_flush(m, cpu);
	for (unsigned int i = 0; i < cp->nr_batch; i++) {
		unsigned int f = cp->batch[i];
		struct frame *fr = &m->fr[f];

		if (fr->removed_wr) {
			bound_need(m, fr->mask, fr->tick);
			for (int p = 0; p < MDL_NPOL; p++)
				if (stale(m, (enum mdl_pol)p, fr->mask, fr->tick))
					m->c[p].viol[MDL_S3]++;
		}
		fr->dom = ~0u;
		fr->writable = 0;
		luf_check(m, luf_free(cp->fl[fr->tier], cp->ro, &fr->lf, fr->removed_wr ? 0 : key));
	}
	cp->nr_batch = 0;
}

void mdl_wrprotect(struct mdl *m, unsigned int cpu, const unsigned int *frames, unsigned int n)
{
	struct cpu *cp = &m->cpu[cpu];
	unsigned short key;
	int any = 0;

	m->events++;
	m->cur = cpu;
	/* batched, B3: change_pte_range() calls flush_tlb_batched_pending() first */
	m->cause = MDL_C_PENDING;
	for (unsigned int i = 0; i < n; i++) {
		struct dom *d = &m->dom[m->fr[frames[i]].dom];

		if (m->fr[frames[i]].writable && d->rmask && stale(m, MDL_BAT, d->rmask, d->tick))
			flush_masks(m, MDL_BAT, cpu, &d->mask, 1);
	}
	m->cause = MDL_C_WRPROTECT;
	for (unsigned int i = 0; i < n; i++) {
		struct frame *fr = &m->fr[frames[i]];
		struct dom *d = &m->dom[fr->dom];
		struct mmask *x;

		if (!fr->writable)
			continue;
		x = note_removal(m, frames[i]);
		oset_add(m, &cp->imm, x);
		luf_check(
		    m, luf_unmap(cp->rw, d->ldom, x->bits, LUF_PTE_ACCESSIBLE | LUF_PTE_WRITABLE));
		any = 1;
	}
	if (!any) {
		m->cause = MDL_C_CALL;
		return;
	}
	/* mprotect flushes before it returns: immediate and batched alike. */
	oset_flush(m, MDL_BAT, cpu, &cp->imm);
	mdl_call_end(m, cpu);
	luf_check(m, luf_pcpu_fold(cp->rw, &key));
	for (unsigned int i = 0; i < n; i++) {
		struct frame *fr = &m->fr[frames[i]];

		if (fr->writable && stale(m, MDL_ORA, fr->mask, fr->tick))
			oracle_flush(m, cpu);
	}
	for (unsigned int i = 0; i < n; i++) {
		struct frame *fr = &m->fr[frames[i]];

		if (!fr->writable)
			continue;
		bound_need(m, fr->mask, fr->tick);
		for (int p = 0; p < MDL_NPOL; p++)
			if (stale(m, (enum mdl_pol)p, fr->mask, fr->tick))
				m->c[p].viol[MDL_S3]++;
		fr->writable = 0;
		fr->tick = 0;
	}
	m->cause = MDL_C_CALL;
}

void mdl_upgrade(struct mdl *m, unsigned int cpu, unsigned int dom, enum luf_abort_cause cause)
{
	struct dom *d = &m->dom[dom];
	struct mmask *x = d->mask;

	m->events++;
	m->cur = cpu;
	/*
	 * batched, B3: flush_tlb_batched_pending(): if a CPU of the newest
	 * removal (the domain's CPUs then) has not flushed since, flush_tlb_mm()
	 * of the domain's CPUs now.
	 */
	m->cause = MDL_C_PENDING;
	if (d->rmask && stale(m, MDL_BAT, d->rmask, d->tick))
		flush_masks(m, MDL_BAT, cpu, &x, 1);
	m->cause = MDL_C_UPGRADE;
	m->abort = cause;
	luf_check(m, luf_abort_domain(m->cpu[cpu].ro, d->ldom, cause));
	if (stale(m, MDL_ORA, x, d->tick))
		oracle_flush(m, cpu);
	if (d->rmask) /* a CPU that joined after the removal caches nothing of it */
		bound_need(m, d->rmask, d->tick);
	for (int p = 0; p < MDL_NPOL; p++)
		if (stale(m, (enum mdl_pol)p, x, d->tick))
			m->c[p].viol[MDL_S2]++;
}

void mdl_ctx_switch(struct mdl *m, unsigned int cpu)
{
	uint64_t t = ++m->tick;
	unsigned long snap;

	m->events++;
	snap = luf_local_flush_begin(m->l);
	for (int p = 0; p < MDL_NPOL; p++)
		m->done[p][cpu] = t;
	rp_bound_own(&m->bound, cpu, t);
	gmin_update(m, cpu / 64, 1ul << (cpu % 64));
	m->ora_stale[cpu / 64] &= ~(1ul << (cpu % 64));
	luf_check(m, luf_local_flush_end(m->l, cpu, snap));
	s4_check(m, cpu);
}

void mdl_result(const struct mdl *m, struct mdl_result *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->c, m->c, sizeof(r->c));
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		if (luf_ugen_before(luf_done_read(&m->l->done, c), m->seen_done[c]))
			r->c[MDL_LUF].viol[MDL_S4]++;
	r->luf_skipped =
	    luf_stats_sum(m->l, LUF_STAT_FLUSH_SKIPPED) + luf_stats_sum(m->l, LUF_STAT_ALLOC_DONE);
	r->luf_dropped = luf_stats_sum(m->l, LUF_STAT_DIET_DROPPED);
	r->luf_deferred = luf_stats_sum(m->l, LUF_STAT_DEFERRED);
	r->luf_wr_flush = luf_stats_sum(m->l, LUF_STAT_WRITABLE_FLUSH);
	r->luf_alloc_flush = luf_stats_sum(m->l, LUF_STAT_ALLOC_FLUSH);
	for (int a = 0; a < LUF_ABORT_NR_CAUSES; a++)
		r->aborts[a] = luf_stats_sum(m->l, (enum luf_stat_item)(LUF_STAT_ABORT + a));
	r->luf_errors = m->errors;
	r->events = m->events;
	r->bound_cpus = m->bound.cpu_flushes;
	r->bound_ops = m->bound.ops;
}
