// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/cmp.c - the policy simulator of luf_cmp.h.
 *
 * How a check stays cheap at 4,096 CPUs (each policy keeps, in effect, the
 * tick of each CPU's last flush; these forms give the same answers):
 *
 *   masks      a domain's CPU mask is an immutable snapshot once a record
 *              or a flush refers to it (a CPU added later makes a new one);
 *   immediate  a flush of few CPUs writes each CPU's tick; a flush of many
 *   batched    is recorded once per snapshot (mask->flushed[p]), and a
 *              CPU's last flush is the newest of its own tick and of the
 *              snapshots that hold it and were ever flushed so (cpu->in);
 *   oracle     flushes every stale CPU: one "all clear" tick plus the set
 *              of stale CPUs; a record older than the last all clear was
 *              flushed on each of its CPUs (each was stale and flushed, or
 *              flushed since its own removal), a newer one only where the
 *              CPU context-switched since;
 *   luf        flushes the set luf hands the backend: a tick per CPU, with
 *              a per-word minimum and a per-snapshot lower bound cached,
 *              so a check costs O(words) when nothing is stale.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "luf_cmp.h"
#include "sim_zalloc.h"

#define DIRECT_MAX 64u /* a flush of at most this many CPUs writes their ticks */

struct luf_cmp_mask {
	unsigned long *bits;
	unsigned int *widx; /* the words of @bits that are not 0, @nw of them */
	unsigned int nw, weight;
	bool frozen, registered, dead;	/* dead: its domain was dropped */
	unsigned int refs;		/* open calls, batches and frames holding it */
	uint64_t flushed[LUF_CMP_NPOL]; /* immediate, batched: all its CPUs flushed at this tick */
	uint64_t lb;			/* luf: all its CPUs flushed at or after this (a cache) */
	uint64_t bcov;			/* bound: all its CPUs covered at or after this (a cache) */
	struct luf_cmp_mask *next, *prev; /* every live mask, for luf_cmp_destroy() */
	struct luf_cmp_mask *dnext;	  /* the masks of its domain */
};

struct cdom {
	struct luf_cmp_mask *mask;  /* its CPUs now (mm_cpumask) */
	struct luf_cmp_mask *masks; /* every snapshot of it, newest first */
	struct luf_domain *ldom;
	uint64_t tick;			/* newest removal in it */
	struct luf_cmp_mask *rmask;	/* its CPUs at that removal */
	unsigned long gen, gen_flushed; /* batched: removals marked pending, flushed (B1, B3) */
	unsigned long open_batch;	/* batched: the batch that made the newest removal */
	int next_free;			/* free id chain, when not live */
	unsigned long gen_live;		/* incarnation: bumped by every luf_cmp_dom_new() */
	bool live;
};

struct cframe {
	struct luf_folio lf; /* luf's links: in the descriptor, never in the frame */
	struct luf_cmp_rec rec;
	unsigned char tier, wr;
	bool queued;	    /* on a CPU's list of frames to free at its batch end */
	unsigned short key; /* frames_by_id: the key it was freed under (0: none owed) */
};

struct ccpu {
	struct luf_pcpu *ro, *rw; /* LUF's tlb_ubc_ro and tlb_ubc */
	bool ro_open, rw_open;
	struct luf_freelist *fl[2];
	uint32_t *frames; /* removed since the last batch end here */
	unsigned int nr_frames, cap_frames;
	struct luf_cmp_mask **in; /* snapshots holding this CPU that were flushed as a whole */
	unsigned int nr_in, cap_in;
};

struct luf_cmp {
	struct luf_cmp_config cfg;
	unsigned int nr_cpus, words, ntiers;
	uint64_t tick;
	uint64_t *done[LUF_CMP_NPOL]; /* per policy, per CPU: see the head comment */
	uint64_t *gmin;		      /* luf: per word, the least done of its CPUs */
	unsigned int *gholder;	      /* ... and a CPU that holds it */
	struct luf_cmp_counts cnt[LUF_CMP_NPOL];
	unsigned long *ora_stale; /* oracle: CPUs with a removal not flushed since */
	uint64_t ora_clear;	  /* oracle: tick of its last flush */
	/* bounds: per CPU the newest tick it was covered (stab or own) and of its own flush */
	uint64_t *bcov, *bown, bop;
	unsigned long long bound_cpus, bound_ops;
	struct cframe *fr;
	struct cdom **dom;
	int nr_dom, cap_dom, free_dom;
	struct ccpu *cpu;
	unsigned long *scratch;
	unsigned long *lazy; /* CPUs in lazy-TLB mode (luf_cmp_cpu_lazy()) */
	unsigned int nr_lazy;
	unsigned long *seen_done; /* S4: luf's done[] when last read */
	unsigned long seen_all;	  /* S4: luf_done_all() when last read */
	unsigned int cur;	  /* the CPU luf runs on (for the backend) */
	struct luf *l;
	struct luf_keytab *kt;
	struct luf_cmp_mask *masks;
	unsigned long nr_masks; /* allocated: live domains' snapshots and those still held */
	long errors;
	unsigned long batch_ids;
	unsigned long long removals, bat_redundant;
	enum luf_cmp_cause cause; /* of the flushes being issued now */
	int abort;		  /* ... luf abort cause, or -1 */
	FILE *explain;
	const char *where;
};

const char *luf_cmp_pol_name(enum luf_cmp_pol p)
{
	static const char *const n[LUF_CMP_NPOL] = {"immediate", "batched", "luf", "oracle"};

	return (unsigned int)p < LUF_CMP_NPOL ? n[p] : "?";
}

const char *luf_cmp_rule_name(enum luf_cmp_rule r)
{
	static const char *const n[LUF_CMP_NRULES] = {"S1", "S2", "S3", "S4"};

	return (unsigned int)r < LUF_CMP_NRULES ? n[r] : "?";
}

const char *luf_cmp_cause_name(enum luf_cmp_cause c)
{
	static const char *const n[LUF_CMP_NCAUSES] = {"call",	  "batch-end", "pending", "reuse",
						       "upgrade", "writable",  "unmap"};

	return (unsigned int)c < LUF_CMP_NCAUSES ? n[c] : "?";
}

const char *luf_cmp_abort_name(enum luf_abort_cause c)
{
	static const char *const n[LUF_ABORT_NR_CAUSES] = {
	    "write_fault",  "prot_upgrade", "write_other", "poison",
	    "init_on_free", "migrate_copy", "move"};

	return (unsigned int)c < LUF_ABORT_NR_CAUSES ? n[c] : "?";
}

void luf_cmp_explain(struct luf_cmp *c, FILE *f)
{
	c->explain = f;
}

bool luf_cmp_explaining(const struct luf_cmp *c)
{
	return c->explain != NULL;
}

void luf_cmp_where(struct luf_cmp *c, const char *where)
{
	c->where = where;
}

struct luf *luf_cmp_luf(struct luf_cmp *c)
{
	return c->l;
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

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

#define for_each_mask_cpu(x, i, b, cpu)                                        \
	for (unsigned int i = 0; i < (x)->nw; i++)                             \
		for (unsigned long b = (x)->bits[(x)->widx[i]]; b; b &= b - 1) \
			if (((cpu) = (x)->widx[i] * 64 + (unsigned int)__builtin_ctzl(b)), 1)

/* A task luf_cmp_task_init() set up and luf_cmp_task_fini() has not ended. */
static bool task_ok(const struct luf_cmp *c, const struct luf_cmp_task *t)
{
	return t && t->imm.bits && t->bat.bits && t->cpu < c->nr_cpus;
}

static struct cdom *dom_of(const struct luf_cmp *c, int dom)
{
	if (dom < 0 || dom >= c->nr_dom || !c->dom[dom]->live)
		return NULL;
	return c->dom[dom];
}

/* ---- masks ------------------------------------------------------------- */

static int grow(void **arr, unsigned int *cap, unsigned int need, size_t size)
{
	unsigned int n = *cap ? *cap : 4;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/* A new mask: a copy of @src, or empty. */
static struct luf_cmp_mask *mask_new(struct luf_cmp *c, const struct luf_cmp_mask *src)
{
	struct luf_cmp_mask *x =
	    calloc(1, sizeof(*x) + c->words * (sizeof(unsigned long) + sizeof(unsigned int)));

	if (!x)
		return NULL;
	x->bits = (unsigned long *)(x + 1);
	x->widx = (unsigned int *)(x->bits + c->words);
	c->nr_masks++;
	x->next = c->masks;
	if (c->masks)
		c->masks->prev = x;
	c->masks = x;
	if (src) {
		memcpy(x->bits, src->bits, c->words * sizeof(unsigned long));
		memcpy(x->widx, src->widx, src->nw * sizeof(unsigned int));
		x->nw = src->nw;
		x->weight = src->weight;
	}
	return x;
}

/* @x is about to be flushed as a whole: its CPUs must find it (done_of()). */
static int mask_register(struct luf_cmp *c, struct luf_cmp_mask *x)
{
	unsigned int cpu;

	if (x->registered)
		return 0;
	for_each_mask_cpu(x, i, b, cpu)
	{
		struct ccpu *cp = &c->cpu[cpu];

		if (grow((void **)&cp->in, &cp->cap_in, cp->nr_in + 1, sizeof(*cp->in)))
			return -ENOMEM;
		cp->in[cp->nr_in++] = x;
	}
	x->registered = true;
	return 0;
}

/* Free @x: no call, batch or frame holds it and its domain was dropped. */
static void mask_free(struct luf_cmp *c, struct luf_cmp_mask *x)
{
	unsigned int cpu;

	if (x->registered) {
		for_each_mask_cpu(x, i, b, cpu)
		{
			struct ccpu *cp = &c->cpu[cpu];

			for (unsigned int k = 0; k < cp->nr_in; k++)
				if (cp->in[k] == x) {
					cp->in[k] = cp->in[--cp->nr_in];
					break;
				}
		}
	}
	if (x->prev)
		x->prev->next = x->next;
	else
		c->masks = x->next;
	if (x->next)
		x->next->prev = x->prev;
	c->nr_masks--;
	free(x);
}

static void mask_get(struct luf_cmp_mask *x)
{
	x->refs++;
}

static void mask_put(struct luf_cmp *c, struct luf_cmp_mask *x)
{
	if (--x->refs == 0 && x->dead)
		mask_free(c, x);
}

/* ---- the lower bounds ---------------------------------------------------- */

/*
 * The CPUs of @rec may cache a translation removed at its tick, which must
 * be gone now (c->tick). Deadlines arrive in time order, the order of the
 * intervals' right ends, so stabbing at the earliest uncovered deadline is
 * optimal: over all CPUs for the operation bound (an operation since the
 * removal, or the CPU's own flush, covers it), per CPU for the CPU-flush
 * bound (mask->bcov caches the least cover of a snapshot's CPUs).
 */
static void bound_need(struct luf_cmp *c, const struct luf_cmp_rec *rec)
{
	struct luf_cmp_mask *x = (struct luf_cmp_mask *)(uintptr_t)rec->mask;
	uint64_t lb = UINT64_MAX;
	unsigned int cpu;

	if (!rec->tick)
		return;
	if (c->bop < rec->tick) {
		for_each_mask_cpu(x, i, b, cpu)
		{
			if (c->bown[cpu] < rec->tick) {
				c->bop = c->tick;
				c->bound_ops++;
				goto cpus;
			}
		}
	}
cpus:
	if (x->bcov >= rec->tick)
		return;
	for_each_mask_cpu(x, i, b, cpu)
	{
		if (c->bcov[cpu] < rec->tick) {
			c->bcov[cpu] = c->tick;
			/* a lazy CPU can be flushed without an interrupt (lazy_skip) */
			if (!(c->cfg.lazy_skip && mask_test(c->lazy, cpu)))
				c->bound_cpus++;
		}
		lb = min64(lb, c->bcov[cpu]);
	}
	x->bcov = lb;
}

/* ---- policies' flushes ---------------------------------------------------- */

static void explain_cpus(struct luf_cmp *c, const unsigned long *bits,
			 struct luf_cmp_mask *const *x, unsigned int k)
{
	unsigned int first = 0;
	bool run = false;

	for (unsigned int cpu = 0; cpu <= c->nr_cpus; cpu++) {
		int in = 0;

		if (cpu < c->nr_cpus) {
			in = bits ? mask_test(bits, cpu) : 0;
			for (unsigned int i = 0; !bits && i < k && !in; i++)
				in = mask_test(x[i]->bits, cpu);
		}
		if (in && !run) {
			first = cpu;
			run = true;
		} else if (!in && run) {
			if (cpu - 1 > first)
				fprintf(c->explain, " %u-%u", first, cpu - 1);
			else
				fprintf(c->explain, " %u", first);
			run = false;
		}
	}
	fputc('\n', c->explain);
}

/*
 * Count a flush of @n CPUs by @caller (@self: the caller is one of them),
 * @pages pages (0: everything); @bits: the CPUs as a bitmask, or NULL with
 * the masks @x[0..@k).
 */
static void account(struct luf_cmp *c, enum luf_cmp_pol p, unsigned int caller, unsigned int n,
		    bool self, unsigned long long pages, const unsigned long *bits,
		    struct luf_cmp_mask *const *x, unsigned int k)
{
	struct luf_cmp_counts *ct = &c->cnt[p];
	unsigned int others = n - (self ? 1 : 0), lazy = 0;

	/* lazy-TLB CPUs this policy does not interrupt: they flush at their next switch */
	if (c->nr_lazy && (c->cfg.lazy_skip & (1u << p))) {
		const unsigned long *m = bits ? bits : c->scratch;

		for (unsigned int w = 0; w < c->words; w++)
			lazy += popc(m[w] & c->lazy[w]);
		if (self && mask_test(c->lazy, caller))
			lazy--;
		others -= lazy;
		n -= lazy;
	}
	ct->flushes++;
	ct->cpus += n;
	ct->by_cause[c->cause]++;
	if (self) {
		if (pages && pages <= 33) /* Linux's tlb_single_page_flush_ceiling */
			ct->local_one += pages;
		else
			ct->local_all++;
	}
	if (others) {
		ct->remote++;
		ct->received += others;
	}
	if (!c->explain)
		return;
	fprintf(c->explain, "flush %-9s %-9s %-12s %s cpu %-4u remote %-4u cpus",
		luf_cmp_pol_name(p), luf_cmp_cause_name(c->cause),
		c->abort >= 0 ? luf_cmp_abort_name((enum luf_abort_cause)c->abort) : "-",
		c->where ? c->where : "-", caller, others);
	if (lazy)
		fprintf(c->explain, " (lazy, not interrupted: %u)", lazy);
	explain_cpus(c, bits, x, k);
}

/* luf: the least done of word @w's CPUs, after those in @bits moved on. */
static void gmin_update(struct luf_cmp *c, unsigned int w, unsigned long bits)
{
	unsigned int first = w * 64, end = first + 64, h;
	const uint64_t *done = c->done[LUF_CMP_LUF];
	uint64_t min;

	if (!mask_test(&bits, c->gholder[w] % 64))
		return; /* the holder did not move: the others moved past it */
	if (end > c->nr_cpus)
		end = c->nr_cpus;
	h = first;
	min = done[first];
	for (unsigned int cpu = first + 1; cpu < end; cpu++)
		if (done[cpu] < min)
			min = done[cpu], h = cpu;
	c->gmin[w] = min;
	c->gholder[w] = h;
}

/* Flush the CPUs of bitmask @mask, one tick per CPU. */
static void flush_bits(struct luf_cmp *c, enum luf_cmp_pol p, unsigned int caller,
		       const unsigned long *mask, unsigned long long pages)
{
	unsigned int n = 0;
	uint64_t t;

	for (unsigned int w = 0; w < c->words; w++)
		n += popc(mask[w]);
	if (!n)
		return;
	t = ++c->tick;
	for (unsigned int w = 0; w < c->words; w++) {
		if (!mask[w])
			continue;
		for (unsigned long b = mask[w]; b; b &= b - 1)
			c->done[p][w * 64 + (unsigned int)__builtin_ctzl(b)] = t;
		if (p == LUF_CMP_LUF)
			gmin_update(c, w, mask[w]);
	}
	account(c, p, caller, n, mask_test(mask, caller), pages, mask, NULL, 0);
}

/* Flush the CPUs of the masks @x[0..@k): per CPU when few, else once per mask. */
static void flush_masks(struct luf_cmp *c, enum luf_cmp_pol p, unsigned int caller,
			struct luf_cmp_mask *const *x, unsigned int k, unsigned long long pages)
{
	unsigned int n = 0;
	bool self;
	uint64_t t;

	memset(c->scratch, 0, c->words * sizeof(unsigned long));
	for (unsigned int i = 0; i < k; i++)
		for (unsigned int j = 0; j < x[i]->nw; j++)
			c->scratch[x[i]->widx[j]] |= x[i]->bits[x[i]->widx[j]];
	for (unsigned int w = 0; w < c->words; w++)
		n += popc(c->scratch[w]);
	if (!n)
		return;
	if (n <= DIRECT_MAX) {
		flush_bits(c, p, caller, c->scratch, pages);
		return;
	}
	self = mask_test(c->scratch, caller);
	for (unsigned int i = 0; i < k; i++)
		if (mask_register(c, x[i]))
			c->errors++;
	t = ++c->tick;
	for (unsigned int i = 0; i < k; i++) {
		x[i]->flushed[p] = t;
		x[i]->frozen = true;
	}
	account(c, p, caller, n, self, pages, NULL, x, k);
}

static void set_add(struct luf_cmp *c, struct luf_cmp_set *s, struct luf_cmp_mask *x, uint64_t t)
{
	s->any = true;
	if (!s->wide) {
		for (unsigned int i = s->n; i--;)
			if (s->obj[i] == x) {
				s->tick[i] = t;
				return;
			}
		if (s->n < LUF_CMP_SET_MAX) {
			mask_get(x);
			s->obj[s->n] = x;
			s->tick[s->n++] = t;
			return;
		}
		/* Too many domains: a bitmask from here on. */
		s->wide = true;
		memset(s->bits, 0, c->words * sizeof(unsigned long));
		for (unsigned int i = 0; i < s->n; i++)
			for (unsigned int j = 0; j < s->obj[i]->nw; j++)
				s->bits[s->obj[i]->widx[j]] |= s->obj[i]->bits[s->obj[i]->widx[j]];
	}
	for (unsigned int j = 0; j < x->nw; j++)
		s->bits[x->widx[j]] |= x->bits[x->widx[j]];
	s->wide_tick = t;
}

static void set_flush(struct luf_cmp *c, enum luf_cmp_pol p, unsigned int caller,
		      const struct luf_cmp_set *s, unsigned long long pages)
{
	if (s->wide)
		flush_bits(c, p, caller, s->bits, pages);
	else if (s->n)
		flush_masks(c, p, caller, s->obj, s->n, pages);
}

static void set_clear(struct luf_cmp *c, struct luf_cmp_set *s)
{
	for (unsigned int i = 0; i < s->n; i++)
		mask_put(c, s->obj[i]);
	s->n = 0;
	s->wide = false;
	s->any = false;
	s->wide_tick = 0;
}

/* Oracle: one flush of every CPU that still holds anything stale. */
static void oracle_flush(struct luf_cmp *c, unsigned int caller)
{
	unsigned int n = 0;

	for (unsigned int w = 0; w < c->words; w++)
		n += popc(c->ora_stale[w]);
	if (!n)
		return;
	c->ora_clear = ++c->tick;
	account(c, LUF_CMP_ORACLE, caller, n, mask_test(c->ora_stale, caller), 0, c->ora_stale,
		NULL, 0);
	memset(c->ora_stale, 0, c->words * sizeof(unsigned long));
}

/* ---- the checker's question: may a CPU of @x still cache a removal of tick @r? */

/* immediate, batched: a CPU's last flush is its own tick or a flushed mask's that holds it. */
static uint64_t done_of(const struct luf_cmp *c, enum luf_cmp_pol p, unsigned int cpu)
{
	const struct ccpu *cp = &c->cpu[cpu];
	uint64_t d = c->done[p][cpu];

	for (unsigned int i = 0; i < cp->nr_in; i++)
		d = max64(d, cp->in[i]->flushed[p]);
	return d;
}

static bool stale_masks(const struct luf_cmp *c, enum luf_cmp_pol p, const struct luf_cmp_mask *x,
			uint64_t r)
{
	unsigned int cpu;

	if (x->flushed[p] >= r)
		return false;
	for_each_mask_cpu(x, i, b, cpu)
	{
		if (done_of(c, p, cpu) < r)
			return true;
	}
	return false;
}

static bool stale_oracle(const struct luf_cmp *c, const struct luf_cmp_mask *x, uint64_t r)
{
	unsigned int cpu;

	if (r < c->ora_clear)
		return false;
	for_each_mask_cpu(x, i, b, cpu)
	{
		if (c->done[LUF_CMP_ORACLE][cpu] < r)
			return true;
	}
	return false;
}

static bool stale_luf(const struct luf_cmp *c, struct luf_cmp_mask *x, uint64_t r)
{
	const uint64_t *done = c->done[LUF_CMP_LUF];
	uint64_t lb = UINT64_MAX;

	if (x->lb >= r)
		return false;
	for (unsigned int i = 0; i < x->nw; i++) {
		unsigned int w = x->widx[i];

		if (c->gmin[w] >= r) {
			lb = min64(lb, c->gmin[w]);
			continue;
		}
		for (unsigned long b = x->bits[w]; b; b &= b - 1) {
			uint64_t d = done[w * 64 + (unsigned int)__builtin_ctzl(b)];

			if (d < r)
				return true;
			lb = min64(lb, d);
		}
	}
	x->lb = lb;
	return false;
}

static bool stale(const struct luf_cmp *c, enum luf_cmp_pol p, const struct luf_cmp_rec *rec)
{
	if (!rec->tick)
		return false;
	switch (p) {
	case LUF_CMP_ORACLE:
		return stale_oracle(c, rec->mask, rec->tick);
	case LUF_CMP_LUF:
		return stale_luf(c, (struct luf_cmp_mask *)(uintptr_t)rec->mask, rec->tick);
	default:
		return stale_masks(c, p, rec->mask, rec->tick);
	}
}

static bool set_stale(const struct luf_cmp *c, enum luf_cmp_pol p, const struct luf_cmp_set *s)
{
	if (s->wide) {
		for (unsigned int w = 0; w < c->words; w++)
			for (unsigned long b = s->bits[w]; b; b &= b - 1)
				if (done_of(c, p, w * 64 + (unsigned int)__builtin_ctzl(b)) <
				    s->wide_tick)
					return true;
		return false;
	}
	for (unsigned int i = 0; i < s->n; i++) {
		struct luf_cmp_rec rec = {.tick = s->tick[i], .mask = s->obj[i]};

		if (stale(c, p, &rec))
			return true;
	}
	return false;
}

bool luf_cmp_rec_live(struct luf_cmp *c, const struct luf_cmp_rec *rec)
{
	unsigned int cpu;

	if (!rec || !rec->tick)
		return false;
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		if (stale(c, (enum luf_cmp_pol)p, rec))
			return true;
	if (rec->mask->bcov >= rec->tick)
		return false;
	for_each_mask_cpu(rec->mask, i, b, cpu)
	{
		if (c->bcov[cpu] < rec->tick)
			return true;
	}
	return false;
}

/* ---- luf's counting backend ------------------------------------------------ */

/* S4: luf's done[@cpu] never goes back (read whenever it may have moved). */
static void s4_check(struct luf_cmp *c, unsigned int cpu)
{
	unsigned long d = luf_done_read(&c->l->done, cpu);

	if (luf_ugen_before(d, c->seen_done[cpu]))
		c->cnt[LUF_CMP_LUF].viol[LUF_CMP_S4]++;
	c->seen_done[cpu] = d;
}

static int count_flush(void *arch, const unsigned long *cpus, unsigned int nr,
		       const struct luf_range *r)
{
	struct luf_cmp *c = arch;
	unsigned long all = luf_done_all(&c->l->done);

	(void)r;
	(void)nr;
	if (luf_ugen_before(all, c->seen_all))
		c->cnt[LUF_CMP_LUF].viol[LUF_CMP_S4]++;
	c->seen_all = all;
	for (unsigned int w = 0; w < c->words; w++)
		for (unsigned long b = cpus[w]; b; b &= b - 1)
			s4_check(c, w * 64 + (unsigned int)__builtin_ctzl(b));
	flush_bits(c, LUF_CMP_LUF, c->cur, cpus, 0);
	return 0;
}

static unsigned int count_nr_cpu_ids(void *arch)
{
	return ((struct luf_cmp *)arch)->nr_cpus;
}

static unsigned int count_this_cpu(void *arch)
{
	return ((struct luf_cmp *)arch)->cur;
}

static const struct luf_arch_ops count_ops = {
    .flush = count_flush, .nr_cpu_ids = count_nr_cpu_ids, .this_cpu = count_this_cpu};

static void luf_check(struct luf_cmp *c, int ret)
{
	if (ret)
		c->errors++;
}

/* ---- set-up ----------------------------------------------------------------- */

static int setup_cpus(struct luf_cmp *c)
{
	unsigned int n = c->nr_cpus, keys = c->cfg.nr_keys ? c->cfg.nr_keys : 65536u;

	c->l = sim_zalloc(sizeof(*c->l));
	c->kt = sim_zalloc(luf_keytab_size(keys, n));
	if (!c->l || !c->kt)
		return -ENOMEM;
	if (luf_init(c->l, &count_ops, c, sim_zalloc(luf_done_size(n)),
		     sim_zalloc(luf_stats_size(n)), c->cfg.ugen_start) ||
	    luf_keytab_init(c->kt, c->l, keys))
		return -EINVAL;
	c->seen_all = luf_done_all(&c->l->done);
	for (unsigned int cpu = 0; cpu < n; cpu++) {
		struct ccpu *cp = &c->cpu[cpu];

		c->seen_done[cpu] = luf_done_read(&c->l->done, cpu);
		cp->ro = sim_zalloc(luf_pcpu_size(n));
		cp->rw = sim_zalloc(luf_pcpu_size(n));
		if (!cp->ro || !cp->rw)
			return -ENOMEM;
		if (luf_pcpu_init(cp->ro, c->l, c->kt, cpu, LUF_PCPU_DEFAULT_THRESHOLD) ||
		    luf_pcpu_init(cp->rw, c->l, c->kt, cpu, LUF_PCPU_DEFAULT_THRESHOLD))
			return -EINVAL;
		for (unsigned int t = 0; c->cfg.nr_frames && !c->cfg.frames_by_id && t < c->ntiers;
		     t++) {
			cp->fl[t] = sim_zalloc(luf_freelist_size(n));
			if (!cp->fl[t] || luf_freelist_init(cp->fl[t], c->l, c->kt, 0))
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Deal the frames round-robin to the CPUs' lists: the j-th frame of a tier
 * goes to CPU j % n. When a tier divides evenly, CPU c's frames are
 * numbered contiguously (the same positions on its list, but descriptors
 * that share cache lines: at 4,096 CPUs scattered ones are cache misses).
 */
static void setup_frames(struct luf_cmp *c)
{
	unsigned int n = c->nr_cpus, nf = c->cfg.nr_frames, fast = c->cfg.nr_fast;

	for (unsigned int f = 0; f < nf; f++) {
		unsigned int tier = c->ntiers == 2 && f >= fast;
		unsigned int base = tier ? fast : 0;
		unsigned int size = c->ntiers == 2 && !tier ? fast : nf - base;
		unsigned int j = f - base, cpu = j % n, id = f;
		struct cframe *fr;

		if (size % n == 0)
			id = base + cpu * (size / n) + j / n;
		fr = &c->fr[id];
		fr->tier = (unsigned char)tier;
		luf_check(c, luf_free(c->cpu[cpu].fl[tier], c->cpu[cpu].ro, &fr->lf, 0));
	}
}

int luf_cmp_create(const struct luf_cmp_config *cfg, struct luf_cmp **out)
{
	struct luf_cmp *c;
	unsigned int n;
	int ret = -ENOMEM;

	if (!cfg || !out || !cfg->nr_cpus || cfg->nr_cpus > LUF_MAX_CPUS ||
	    cfg->nr_fast > cfg->nr_frames || cfg->nr_keys == 1 || cfg->nr_keys > 65536u)
		return -EINVAL;
	n = cfg->nr_cpus;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->nr_cpus = n;
	c->words = (n + 63) / 64;
	c->ntiers = cfg->nr_fast && cfg->nr_fast < cfg->nr_frames ? 2 : 1;
	c->abort = -1;
	c->free_dom = -1;
	c->cpu = calloc(n, sizeof(*c->cpu));
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		c->done[p] = calloc(n, sizeof(uint64_t));
	c->gmin = calloc(c->words, sizeof(uint64_t));
	c->gholder = calloc(c->words, sizeof(unsigned int));
	c->ora_stale = calloc(c->words, sizeof(unsigned long));
	c->scratch = calloc(c->words, sizeof(unsigned long));
	c->lazy = calloc(c->words, sizeof(unsigned long));
	c->seen_done = calloc(n, sizeof(unsigned long));
	c->bcov = calloc(n, sizeof(uint64_t));
	c->bown = calloc(n, sizeof(uint64_t));
	c->fr = cfg->nr_frames ? sim_zalloc(cfg->nr_frames * sizeof(struct cframe)) : NULL;
	if (!c->cpu || !c->done[LUF_CMP_NPOL - 1] || !c->done[0] || !c->done[1] || !c->done[2] ||
	    !c->gmin || !c->gholder || !c->ora_stale || !c->scratch || !c->lazy || !c->seen_done ||
	    !c->bcov || !c->bown || (cfg->nr_frames && !c->fr))
		goto fail;
	for (unsigned int w = 0; w < c->words; w++)
		c->gholder[w] = w * 64;
	ret = setup_cpus(c);
	if (ret)
		goto fail;
	if (!cfg->frames_by_id)
		setup_frames(c);
	*out = c;
	return 0;
fail:
	luf_cmp_destroy(c);
	return ret;
}

void luf_cmp_destroy(struct luf_cmp *c)
{
	if (!c)
		return;
	while (c->masks) {
		struct luf_cmp_mask *x = c->masks;

		c->masks = x->next;
		free(x);
	}
	for (int d = 0; d < c->nr_dom; d++) {
		free(c->dom[d]->ldom);
		free(c->dom[d]);
	}
	free(c->dom);
	for (unsigned int cpu = 0; c->cpu && cpu < c->nr_cpus; cpu++) {
		struct ccpu *cp = &c->cpu[cpu];

		free(cp->ro);
		free(cp->rw);
		free(cp->fl[0]);
		free(cp->fl[1]);
		free(cp->frames);
		free(cp->in);
	}
	if (c->l) {
		free(c->l->done.cpu);
		free(c->l->stats);
	}
	free(c->l);
	free(c->kt);
	free(c->cpu);
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		free(c->done[p]);
	free(c->gmin);
	free(c->gholder);
	free(c->ora_stale);
	free(c->scratch);
	free(c->lazy);
	free(c->seen_done);
	free(c->bcov);
	free(c->bown);
	free(c->fr);
	free(c);
}

/* ---- domains and tasks --------------------------------------------------- */

int luf_cmp_dom_new(struct luf_cmp *c)
{
	struct cdom *d;
	int id;

	if (c->free_dom >= 0) {
		id = c->free_dom;
		d = c->dom[id];
		c->free_dom = d->next_free;
	} else {
		unsigned int cap = (unsigned int)c->cap_dom;

		if (grow((void **)&c->dom, &cap, (unsigned int)c->nr_dom + 1, sizeof(*c->dom)))
			return -ENOMEM;
		c->cap_dom = (int)cap;
		d = calloc(1, sizeof(*d));
		if (!d)
			return -ENOMEM;
		d->ldom = sim_zalloc(luf_domain_size(c->nr_cpus));
		if (!d->ldom) {
			free(d);
			return -ENOMEM;
		}
		id = c->nr_dom++;
		c->dom[id] = d;
	}
	d->gen_live++;
	d->mask = mask_new(c, NULL);
	d->masks = d->mask;
	if (!d->mask || luf_domain_init(d->ldom, c->l)) {
		d->next_free = c->free_dom;
		c->free_dom = id;
		return -ENOMEM;
	}
	d->tick = 0;
	d->rmask = NULL;
	d->gen = d->gen_flushed = 0;
	d->open_batch = 0;
	d->live = true;
	return id;
}

void luf_cmp_dom_put(struct luf_cmp *c, int dom)
{
	struct cdom *d = dom_of(c, dom);

	if (!d)
		return;
	/* teardown is the same for every policy and not counted */
	memset(d->ldom, 0, luf_domain_size(c->nr_cpus));
	while (d->masks) {
		struct luf_cmp_mask *x = d->masks;

		d->masks = x->dnext;
		x->dead = true;
		if (!x->refs)
			mask_free(c, x);
	}
	d->mask = d->rmask = NULL;
	d->live = false;
	d->next_free = c->free_dom;
	c->free_dom = dom;
}

int luf_cmp_dom_add_cpu(struct luf_cmp *c, int dom, unsigned int cpu)
{
	struct cdom *d = dom_of(c, dom);
	struct luf_cmp_mask *x;
	unsigned int w = cpu / 64;

	if (!d || cpu >= c->nr_cpus)
		return -EINVAL;
	if (mask_test(d->mask->bits, cpu))
		return 0;
	if (d->mask->frozen) {
		x = mask_new(c, d->mask);
		if (!x)
			return -ENOMEM;
		x->dnext = d->masks;
		d->masks = x;
		d->mask = x;
	}
	x = d->mask;
	if (!x->bits[w])
		x->widx[x->nw++] = w;
	x->bits[w] |= 1ul << (cpu % 64);
	x->weight++;
	return 0;
}

unsigned int luf_cmp_dom_weight(const struct luf_cmp *c, int dom)
{
	const struct cdom *d = dom_of(c, dom);

	return d ? d->mask->weight : 0;
}

void luf_cmp_dom_rec(const struct luf_cmp *c, int dom, struct luf_cmp_rec *out)
{
	const struct cdom *d = dom_of(c, dom);

	out->tick = d && d->rmask ? d->tick : 0;
	out->mask = d ? d->rmask : NULL;
	out->dom = dom;
	out->gen = d ? d->gen_live : 0;
}

int luf_cmp_task_init(struct luf_cmp *c, struct luf_cmp_task *t, unsigned int cpu)
{
	if (!t || cpu >= c->nr_cpus)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->cpu = cpu;
	t->batch_id = ++c->batch_ids;
	t->imm.bits = calloc(c->words, sizeof(unsigned long));
	t->bat.bits = calloc(c->words, sizeof(unsigned long));
	if (!t->imm.bits || !t->bat.bits) {
		free(t->imm.bits);
		free(t->bat.bits);
		return -ENOMEM;
	}
	return 0;
}

void luf_cmp_task_fini(struct luf_cmp *c, struct luf_cmp_task *t)
{
	if (t->open)
		luf_cmp_batch_end(c, t);
	free(t->imm.bits);
	free(t->bat.bits);
	free(t->wr);
	memset(t, 0, sizeof(*t));
}

/* ---- events ---------------------------------------------------------------- */

static void set_cause(struct luf_cmp *c, enum luf_cmp_cause cause, int abort)
{
	c->cause = cause;
	c->abort = abort;
}

int luf_cmp_remove(struct luf_cmp *c, struct luf_cmp_task *t, int dom, long frame, unsigned int pte,
		   unsigned long pages, struct luf_cmp_rec *out)
{
	struct cdom *d = dom_of(c, dom);
	bool acc = pte & LUF_PTE_ACCESSIBLE, wr = acc && (pte & (LUF_PTE_WRITABLE | LUF_PTE_DIRTY));
	struct ccpu *cp;
	struct luf_cmp_mask *x;
	struct luf_cmp_rec rec = {.tick = 0};

	if (!d || !task_ok(c, t) || (frame >= 0 && (!c->fr || frame >= (long)c->cfg.nr_frames)))
		return -EINVAL;
	cp = &c->cpu[t->cpu];
	if (frame >= 0 &&
	    grow((void **)&cp->frames, &cp->cap_frames, cp->nr_frames + 1, sizeof(*cp->frames)))
		return -ENOMEM;
	if (wr && grow((void **)&t->wr, &t->cap_wr, t->nr_wr + 1, sizeof(*t->wr)))
		return -ENOMEM;
	c->cur = t->cpu;
	set_cause(c, LUF_CMP_C_UNMAP, -1);
	x = d->mask;
	if (acc) {
		/* a new tick before luf runs: a flush it does now covers this removal */
		uint64_t tk = ++c->tick;

		x->frozen = true;
		rec.tick = tk;
		rec.mask = x;
		rec.dom = dom;
		rec.gen = d->gen_live;
		c->removals++;
		/* batched, B1: set_tlb_ubc_flush_pending() */
		d->tick = tk;
		d->rmask = x;
		d->gen++;
		d->open_batch = t->batch_id;
		set_add(c, &t->imm, x, tk);
		set_add(c, &t->bat, x, tk);
		t->imm_pages += pages;
		t->open = true;
		for (unsigned int i = 0; i < x->nw; i++)
			c->ora_stale[x->widx[i]] |= x->bits[x->widx[i]];
		if (wr) {
			if (t->nr_wr && t->wr[t->nr_wr - 1].mask == x) {
				t->wr[t->nr_wr - 1].tick = tk;
			} else {
				mask_get(x);
				t->wr[t->nr_wr++] = rec;
			}
		}
	}
	if (luf_unmap(wr ? cp->rw : cp->ro, d->ldom, x->bits, pte))
		c->errors++;
	else if (acc)
		*(wr ? &cp->rw_open : &cp->ro_open) = true;
	if (frame >= 0) {
		struct cframe *fr = &c->fr[frame];

		if (fr->rec.mask) /* removed again before its reuse: the newer record counts */
			mask_put(c, (struct luf_cmp_mask *)(uintptr_t)fr->rec.mask);
		if (rec.mask)
			mask_get(x);
		fr->rec = rec;
		fr->wr = fr->queued ? fr->wr || wr : wr;
		if (!fr->queued)
			cp->frames[cp->nr_frames++] = (uint32_t)frame;
		fr->queued = true;
		t->open = true;
	}
	if (out)
		*out = rec;
	return 0;
}

void luf_cmp_call_end(struct luf_cmp *c, struct luf_cmp_task *t)
{
	if (!task_ok(c, t))
		return;
	c->cur = t->cpu;
	set_cause(c, LUF_CMP_C_CALL, -1);
	if (t->imm.any)
		set_flush(c, LUF_CMP_IMMEDIATE, t->cpu, &t->imm, t->imm_pages);
	set_clear(c, &t->imm);
	t->imm_pages = 0;
}

/* At a deadline of @recs: the oracle's flush, the bounds, each policy's check of @rule. */
static void meet(struct luf_cmp *c, unsigned int cpu, const struct luf_cmp_rec *recs, size_t n,
		 enum luf_cmp_rule rule)
{
	bool any = false;

	for (size_t i = 0; i < n && !any; i++)
		any = stale(c, LUF_CMP_ORACLE, &recs[i]);
	if (any)
		oracle_flush(c, cpu);
	for (size_t i = 0; i < n; i++)
		bound_need(c, &recs[i]);
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < LUF_CMP_NPOL; p++)
			if (stale(c, (enum luf_cmp_pol)p, &recs[i]))
				c->cnt[p].viol[rule]++;
}

void luf_cmp_batch_end(struct luf_cmp *c, struct luf_cmp_task *t)
{
	unsigned short key = 0, wkey = 0;
	struct ccpu *cp;

	if (!task_ok(c, t))
		return;
	cp = &c->cpu[t->cpu];
	luf_cmp_call_end(c, t);
	/* batched, B2: try_to_unmap_flush() of the CPUs B1 added */
	set_cause(c, LUF_CMP_C_BATCH, -1);
	if (t->bat.any) {
		if (set_stale(c, LUF_CMP_BATCHED, &t->bat))
			set_flush(c, LUF_CMP_BATCHED, t->cpu, &t->bat, 0);
		else
			c->bat_redundant++;
	}
	set_clear(c, &t->bat);
	/* luf: a writable set is flushed here (S3), a read-only one gets its key */
	set_cause(c, LUF_CMP_C_WRITABLE, -1);
	if (cp->rw_open) {
		luf_check(c, luf_pcpu_fold(cp->rw, &wkey));
		cp->rw_open = false;
		if (wkey)
			c->errors++; /* a writable batch is never deferred */
	}
	set_cause(c, LUF_CMP_C_UNMAP, -1);
	if (cp->ro_open) {
		luf_check(c, luf_pcpu_fold(cp->ro, &key));
		cp->ro_open = false;
	}
	set_cause(c, LUF_CMP_C_WRITABLE, -1);
	meet(c, t->cpu, t->wr, t->nr_wr, LUF_CMP_S3);
	for (unsigned int i = 0; i < cp->nr_frames; i++) {
		struct cframe *fr = &c->fr[cp->frames[i]];

		fr->queued = false;
		if (c->cfg.frames_by_id)
			fr->key = fr->wr ? 0 : key;
		else
			luf_check(c, luf_free(cp->fl[fr->tier], cp->ro, &fr->lf, fr->wr ? 0 : key));
	}
	cp->nr_frames = 0;
	for (unsigned int i = 0; i < t->nr_wr; i++)
		mask_put(c, (struct luf_cmp_mask *)(uintptr_t)t->wr[i].mask);
	t->nr_wr = 0;
	t->open = false;
	t->batch_id = ++c->batch_ids;
}

void luf_cmp_pending(struct luf_cmp *c, struct luf_cmp_task *t, int dom)
{
	struct cdom *d = dom_of(c, dom);
	struct luf_cmp_rec rec;

	if (!d || !task_ok(c, t) || d->gen == d->gen_flushed || d->open_batch == t->batch_id)
		return;
	rec.tick = d->tick;
	rec.mask = d->rmask;
	c->cur = t->cpu;
	set_cause(c, LUF_CMP_C_PENDING, -1);
	if (stale(c, LUF_CMP_BATCHED, &rec))
		flush_masks(c, LUF_CMP_BATCHED, t->cpu, &d->mask, 1, 0);
	else
		c->bat_redundant++;
	d->gen_flushed = d->gen;
}

static int deadline(struct luf_cmp *c, struct luf_cmp_task *t, int dom,
		    const struct luf_cmp_rec *recs, size_t n, bool upgrade,
		    enum luf_abort_cause cause)
{
	struct cdom *d = dom_of(c, dom);
	bool luf_owes = upgrade, bat_owes = false;

	if (!d || !task_ok(c, t) || (n && !recs) || (unsigned int)cause >= LUF_ABORT_NR_CAUSES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) /* a record of another domain (or of a dropped one) */
		if (recs[i].tick &&
		    (!recs[i].mask || recs[i].dom != dom || recs[i].gen != d->gen_live))
			return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!recs[i].tick)
			continue;
		luf_owes = luf_owes || stale(c, LUF_CMP_LUF, &recs[i]);
		bat_owes = bat_owes || stale(c, LUF_CMP_BATCHED, &recs[i]);
	}
	c->cur = t->cpu;
	set_cause(c, upgrade ? LUF_CMP_C_UPGRADE : LUF_CMP_C_REUSE, (int)cause);
	/* luf: settle the domain (diet, then at most one flush of what is pending) */
	if (luf_owes)
		luf_check(c, luf_abort_domain(c->cpu[t->cpu].ro, d->ldom, cause));
	/* batched, B4: what B3 left (the task's own open batch, this call's removals) */
	set_cause(c, upgrade ? LUF_CMP_C_UPGRADE : LUF_CMP_C_REUSE, -1);
#if defined(CMP_MUTANT_NO_B4)
	bat_owes = false; /* tests/MUTANTS.md: batched hands out what it still owes */
#endif
	if (bat_owes)
		flush_masks(c, LUF_CMP_BATCHED, t->cpu, &d->mask, 1, 0);
	meet(c, t->cpu, recs, n, upgrade ? LUF_CMP_S2 : LUF_CMP_S1);
	return 0;
}

int luf_cmp_reuse(struct luf_cmp *c, struct luf_cmp_task *t, int dom,
		  const struct luf_cmp_rec *recs, size_t n)
{
	return deadline(c, t, dom, recs, n, false, LUF_ABORT_WRITE_OTHER);
}

int luf_cmp_upgrade(struct luf_cmp *c, struct luf_cmp_task *t, int dom,
		    const struct luf_cmp_rec *recs, size_t n, enum luf_abort_cause cause)
{
	return deadline(c, t, dom, recs, n, true, cause);
}

void luf_cmp_ctx_switch(struct luf_cmp *c, unsigned int cpu)
{
	uint64_t t;
	unsigned long snap;

	if (cpu >= c->nr_cpus)
		return;
	t = ++c->tick;
	snap = luf_local_flush_begin(c->l);
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		c->done[p][cpu] = t;
	c->bown[cpu] = t;
	c->bcov[cpu] = max64(c->bcov[cpu], t);
	gmin_update(c, cpu / 64, 1ul << (cpu % 64));
	c->ora_stale[cpu / 64] &= ~(1ul << (cpu % 64));
	luf_check(c, luf_local_flush_end(c->l, cpu, snap));
	s4_check(c, cpu);
}

/* ---- frames ------------------------------------------------------------------ */

/* @fr is handed out on @cpu: its last record meets its deadline (S1), then it starts over. */
static void frame_reused(struct luf_cmp *c, unsigned int cpu, struct cframe *fr)
{
	meet(c, cpu, &fr->rec, 1, LUF_CMP_S1);
	if (fr->rec.mask)
		mask_put(c, (struct luf_cmp_mask *)(uintptr_t)fr->rec.mask);
	fr->rec.mask = NULL;
	fr->rec.tick = 0;
	fr->wr = 0;
	fr->key = 0;
}

long luf_cmp_alloc(struct luf_cmp *c, unsigned int cpu, unsigned int tier)
{
	struct ccpu *cp;
	struct luf_folio *f;
	struct cframe *fr;
	int ret;

	if (!c->fr || c->cfg.frames_by_id || cpu >= c->nr_cpus || tier >= c->ntiers)
		return -1;
	cp = &c->cpu[cpu];
	c->cur = cpu;
	set_cause(c, LUF_CMP_C_REUSE, -1);
	ret = luf_alloc(cp->fl[tier], cp->ro, LUF_ALLOC_MAY_FLUSH, &f);
	if (ret) {
		if (ret != -ENOMEM)
			c->errors++;
		return -1;
	}
	fr = luf_folio_entry(f, struct cframe, lf);
	frame_reused(c, cpu, fr);
	return (long)(fr - c->fr);
}

unsigned long luf_cmp_nr_free(const struct luf_cmp *c, unsigned int cpu, unsigned int tier)
{
	const struct luf_freelist *fl;

	if (!c->fr || c->cfg.frames_by_id || cpu >= c->nr_cpus || tier >= c->ntiers)
		return 0;
	fl = c->cpu[cpu].fl[tier];
	return luf_freelist_nr_clean(fl) + luf_freelist_nr_pend(fl);
}

int luf_cmp_take(struct luf_cmp *c, unsigned int cpu, unsigned long frame)
{
	struct cframe *fr;

	if (!c->fr || !c->cfg.frames_by_id || cpu >= c->nr_cpus || frame >= c->cfg.nr_frames)
		return -EINVAL;
	fr = &c->fr[frame];
	if (fr->queued)
		return -EBUSY;
	c->cur = cpu;
	set_cause(c, LUF_CMP_C_REUSE, -1);
	if (fr->key && luf_keytab_check_done(c->kt, fr->key) == 0)
		luf_check(c, luf_key_flush(c->cpu[cpu].ro, fr->key) < 0);
	frame_reused(c, cpu, fr);
	return 0;
}

unsigned int luf_cmp_frame_tier(const struct luf_cmp *c, unsigned int frame)
{
	return c->fr && frame < c->cfg.nr_frames ? c->fr[frame].tier : 0;
}

/* ---- results ------------------------------------------------------------------ */

void luf_cmp_cpu_lazy(struct luf_cmp *c, unsigned int cpu, bool lazy)
{
	unsigned long bit;

	if (cpu >= c->nr_cpus)
		return;
	bit = 1ul << (cpu % 64);
	if (lazy && !(c->lazy[cpu / 64] & bit)) {
		c->lazy[cpu / 64] |= bit;
		c->nr_lazy++;
	} else if (!lazy && (c->lazy[cpu / 64] & bit)) {
		c->lazy[cpu / 64] &= ~bit;
		c->nr_lazy--;
	}
}

unsigned long luf_cmp_nr_masks(const struct luf_cmp *c)
{
	return c->nr_masks;
}

void luf_cmp_result(struct luf_cmp *c, struct luf_cmp_result *r)
{
	memset(r, 0, sizeof(*r));
	for (unsigned int cpu = 0; cpu < c->nr_cpus; cpu++)
		s4_check(c, cpu);
	memcpy(r->c, c->cnt, sizeof(r->c));
	r->bound_cpus = c->bound_cpus;
	r->bound_ops = c->bound_ops;
	r->removals = c->removals;
	r->bat_redundant = c->bat_redundant;
	r->luf_errors = c->errors;
}
