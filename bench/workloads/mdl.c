// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/workloads/mdl.c - the engine of mdl.h: four policies on one event
 * stream, luf on a counting backend, and the checker.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mdl.h"

#define NR_KEYS 65536u /* LUF's 16-bit keys */

struct frame {
	struct luf_folio lf; /* luf's links: in the descriptor, never in the frame */
	uint64_t tick;	     /* newest removal of a translation to it, 0 = none */
	unsigned int dom;    /* domain it is mapped in */
	unsigned char writable, tier, removed_wr;
};

struct dom {
	unsigned long *mask; /* CPUs that ran it */
	struct luf_domain *ldom;
	uint64_t tick; /* newest removal in it */
};

struct cpu {
	struct luf_pcpu *ro, *rw; /* LUF's tlb_ubc_ro and tlb_ubc */
	struct luf_freelist *fl[2];
	unsigned long *imm, *bat; /* open call / batch masks */
	int imm_any, bat_any;
	unsigned int *batch, nr_batch; /* frames removed in the open batch */
};

struct mdl {
	struct mdl_config cfg;
	unsigned int nr_cpus, words, ntiers;
	uint64_t tick;
	uint64_t *done[MDL_NPOL]; /* per policy, per CPU: tick of its last flush */
	struct mdl_counts c[MDL_NPOL];
	uint64_t *last_removal; /* per CPU (oracle) */
	struct frame *fr;
	unsigned long *fmask; /* per frame: CPUs that may cache it */
	struct dom *dom;
	struct cpu *cpu;
	unsigned long *scratch;
	unsigned long *seen_done; /* S4: luf's done[] at the previous flush */
	unsigned int cur;      /* the CPU luf runs on (for the backend) */
	struct luf *l;
	struct luf_done_cpu *ldone;
	struct luf_stats_cpu *lstats;
	struct luf_keytab *kt;
	long errors;
	unsigned long long events;
	void **allocs;
	unsigned int nr_allocs;
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

/* Count a flush of @mask by @caller for policy @p; raise the flushed CPUs' ticks. */
static void pol_flush(struct mdl *m, enum mdl_pol p, unsigned int caller, const unsigned long *mask)
{
	unsigned int others = 0;
	uint64_t t;

	for (unsigned int w = 0; w < m->words; w++)
		others += (unsigned int)__builtin_popcountl(mask[w]);
	if (!others)
		return;
	t = ++m->tick;
	for (unsigned int w = 0; w < m->words; w++)
		for (unsigned long b = mask[w]; b; b &= b - 1)
			m->done[p][w * 64 + (unsigned int)__builtin_ctzl(b)] = t;
	if (mask_test(mask, caller))
		others--;
	if (others) {
		m->c[p].remote++;
		m->c[p].received += others;
	} else {
		m->c[p].local++;
	}
}

static int stale(const struct mdl *m, enum mdl_pol p, const unsigned long *mask, uint64_t tick)
{
	const uint64_t *done = m->done[p];

	if (!tick)
		return 0;
	for (unsigned int w = 0; w < m->words; w++)
		for (unsigned long b = mask[w]; b; b &= b - 1)
			if (done[w * 64 + (unsigned int)__builtin_ctzl(b)] < tick)
				return 1;
	return 0;
}

/* Oracle: one flush of every CPU that still holds anything stale. */
static void oracle_flush(struct mdl *m, unsigned int caller)
{
	memset(m->scratch, 0, m->words * sizeof(unsigned long));
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		if (m->last_removal[c] > m->done[MDL_ORA][c])
			m->scratch[c / 64] |= 1ul << (c % 64);
	pol_flush(m, MDL_ORA, caller, m->scratch);
}

/* ---- luf's counting backend -------------------------------------- */

static int count_flush(void *arch, const unsigned long *cpus, unsigned int nr,
		       const struct luf_range *r)
{
	struct mdl *m = arch;

	(void)r;
	(void)nr;
	/* S4: done[] never goes back, read at every flush. */
	for (unsigned int c = 0; c < m->nr_cpus; c++) {
		unsigned long d = luf_done_read(m->ldone, c);

		if (luf_ugen_before(d, m->seen_done[c]))
			m->c[MDL_LUF].viol[MDL_S4]++;
		m->seen_done[c] = d;
	}
	_Static_assert(sizeof(unsigned long) == sizeof(unsigned long), "mask words");
	memcpy(m->scratch, (const void *)cpus, m->words * sizeof(unsigned long));
	pol_flush(m, MDL_LUF, m->cur, m->scratch);
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
	for (unsigned int d = 0; d < m->cfg.nr_doms; d++) {
		m->dom[d].mask = zalloc(m, m->words * sizeof(unsigned long));
		m->dom[d].ldom = zalloc(m, luf_domain_size(n));
		if (!m->dom[d].mask || !m->dom[d].ldom || luf_domain_init(m->dom[d].ldom, m->l))
			return -ENOMEM;
	}
	for (unsigned int c = 0; c < n; c++) {
		struct cpu *cp = &m->cpu[c];

		cp->ro = zalloc(m, luf_pcpu_size(n));
		cp->rw = zalloc(m, luf_pcpu_size(n));
		cp->imm = zalloc(m, m->words * sizeof(unsigned long));
		cp->bat = zalloc(m, m->words * sizeof(unsigned long));
		cp->batch = zalloc(m, m->cfg.batch_max * sizeof(unsigned int));
		if (!cp->ro || !cp->rw || !cp->imm || !cp->bat || !cp->batch)
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
	if (!m->allocs) {
		free(m);
		return -ENOMEM;
	}
	m->cfg = *cfg;
	m->nr_cpus = n;
	m->words = (n + 63) / 64;
	m->ntiers = cfg->nr_fast && cfg->nr_fast < cfg->nr_frames ? 2 : 1;
	for (int p = 0; p < MDL_NPOL; p++)
		m->done[p] = zalloc(m, n * sizeof(uint64_t));
	m->last_removal = zalloc(m, n * sizeof(uint64_t));
	m->seen_done = zalloc(m, n * sizeof(unsigned long));
	m->scratch = zalloc(m, m->words * sizeof(unsigned long));
	m->fr = zalloc(m, cfg->nr_frames * sizeof(struct frame));
	m->fmask = zalloc(m, (size_t)cfg->nr_frames * m->words * sizeof(unsigned long));
	m->dom = zalloc(m, cfg->nr_doms * sizeof(struct dom));
	m->cpu = zalloc(m, n * sizeof(struct cpu));
	if (!m->done[MDL_NPOL - 1] || !m->fr || !m->fmask || !m->dom || !m->cpu || !m->scratch) {
		mdl_destroy(m);
		return -ENOMEM;
	}
	ret = setup_luf(m);
	if (ret) {
		mdl_destroy(m);
		return ret;
	}
	for (unsigned int f = 0; f < cfg->nr_frames; f++) {
		struct frame *fr = &m->fr[f];
		unsigned int c = f % n;

		fr->tier = m->ntiers == 2 && f >= cfg->nr_fast;
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
	for (unsigned int i = 0; i < m->nr_allocs; i++)
		free(m->allocs[i]);
	free(m->allocs);
	free(m);
}

void mdl_dom_add_cpu(struct mdl *m, unsigned int dom, unsigned int cpu)
{
	luf_cpumask_set_cpu(m->dom[dom].mask, m->nr_cpus, cpu);
}

unsigned int mdl_dom_weight(const struct mdl *m, unsigned int dom)
{
	return luf_cpumask_weight(m->dom[dom].mask, m->nr_cpus);
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
	ret = luf_alloc(cp->fl[tier < m->ntiers ? tier : 0], cp->ro, LUF_ALLOC_MAY_FLUSH, &f);
	if (ret == -ENOMEM)
		return -1;
	if (ret) {
		m->errors++;
		return -1;
	}
	fr = luf_folio_entry(f, struct frame, lf);
	i = (unsigned int)(fr - m->fr);
	if (stale(m, MDL_ORA, &m->fmask[(size_t)i * m->words], fr->tick))
		oracle_flush(m, cpu);
	for (int p = 0; p < MDL_NPOL; p++)
		if (stale(m, (enum mdl_pol)p, &m->fmask[(size_t)i * m->words], fr->tick))
			m->c[p].viol[MDL_S1]++;
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
static void note_removal(struct mdl *m, unsigned int frame)
{
	struct frame *fr = &m->fr[frame];
	struct dom *d = &m->dom[fr->dom];
	unsigned long *fm = &m->fmask[(size_t)frame * m->words];
	uint64_t t = ++m->tick;

	fr->tick = t;
	d->tick = t;
	memcpy(fm, (const void *)d->mask, m->words * sizeof(unsigned long));
	for (unsigned int w = 0; w < m->words; w++)
		for (unsigned long b = fm[w]; b; b &= b - 1)
			m->last_removal[w * 64 + (unsigned int)__builtin_ctzl(b)] = t;
}

void mdl_remove(struct mdl *m, unsigned int cpu, unsigned int frame)
{
	struct cpu *cp = &m->cpu[cpu];
	struct frame *fr = &m->fr[frame];
	struct dom *d = &m->dom[fr->dom];
	unsigned int flags = LUF_PTE_ACCESSIBLE | (fr->writable ? LUF_PTE_WRITABLE : 0);

	m->events++;
	m->cur = cpu;
	note_removal(m, frame);
	fr->removed_wr = fr->writable;
	for (unsigned int w = 0; w < m->words; w++) {
		cp->imm[w] |= __luf_read_once(&d->mask[w]);
		cp->bat[w] |= __luf_read_once(&d->mask[w]);
	}
	cp->imm_any = cp->bat_any = 1;
	luf_check(m, luf_unmap(fr->writable ? cp->rw : cp->ro, d->ldom, d->mask, flags));
	if (cp->nr_batch < m->cfg.batch_max)
		cp->batch[cp->nr_batch++] = frame;
	else
		m->errors++; /* a workload bug: batch larger than configured */
}

void mdl_call_end(struct mdl *m, unsigned int cpu)
{
	struct cpu *cp = &m->cpu[cpu];

	if (cp->imm_any)
		pol_flush(m, MDL_IMM, cpu, cp->imm);
	memset(cp->imm, 0, m->words * sizeof(unsigned long));
	cp->imm_any = 0;
}

void mdl_batch_end(struct mdl *m, unsigned int cpu)
{
	struct cpu *cp = &m->cpu[cpu];
	unsigned short key = 0, wkey = 0;
	int any_wr = 0;

	m->events++;
	m->cur = cpu;
	mdl_call_end(m, cpu);
	if (cp->bat_any)
		pol_flush(m, MDL_BAT, cpu, cp->bat);
	memset(cp->bat, 0, m->words * sizeof(unsigned long));
	cp->bat_any = 0;
	luf_check(m, luf_pcpu_fold(cp->rw, &wkey)); /* writable: flushed here (S3) */
	luf_check(m, luf_pcpu_fold(cp->ro, &key));
	if (wkey)
		m->errors++; /* a writable batch is never deferred */
	for (unsigned int i = 0; i < cp->nr_batch; i++) {
		struct frame *fr = &m->fr[cp->batch[i]];

		if (fr->removed_wr &&
		    stale(m, MDL_ORA, &m->fmask[(size_t)cp->batch[i] * m->words], fr->tick))
			any_wr = 1;
	}
	if (any_wr)
		oracle_flush(m, cpu);
	for (unsigned int i = 0; i < cp->nr_batch; i++) {
		unsigned int f = cp->batch[i];
		struct frame *fr = &m->fr[f];

		if (fr->removed_wr)
			for (int p = 0; p < MDL_NPOL; p++)
				if (stale(m, (enum mdl_pol)p, &m->fmask[(size_t)f * m->words],
					  fr->tick))
					m->c[p].viol[MDL_S3]++;
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
	for (unsigned int i = 0; i < n; i++) {
		struct frame *fr = &m->fr[frames[i]];
		struct dom *d = &m->dom[fr->dom];

		if (!fr->writable)
			continue;
		note_removal(m, frames[i]);
		for (unsigned int w = 0; w < m->words; w++)
			cp->imm[w] |= __luf_read_once(&d->mask[w]);
		cp->imm_any = 1;
		luf_check(
		    m, luf_unmap(cp->rw, d->ldom, d->mask, LUF_PTE_ACCESSIBLE | LUF_PTE_WRITABLE));
		any = 1;
	}
	if (!any)
		return;
	/* mprotect flushes before it returns: immediate and batched alike. */
	pol_flush(m, MDL_BAT, cpu, cp->imm);
	mdl_call_end(m, cpu);
	luf_check(m, luf_pcpu_fold(cp->rw, &key));
	for (unsigned int i = 0; i < n; i++) {
		struct frame *fr = &m->fr[frames[i]];
		unsigned long *fm = &m->fmask[(size_t)frames[i] * m->words];

		if (fr->writable && stale(m, MDL_ORA, fm, fr->tick))
			oracle_flush(m, cpu);
	}
	for (unsigned int i = 0; i < n; i++) {
		struct frame *fr = &m->fr[frames[i]];
		unsigned long *fm = &m->fmask[(size_t)frames[i] * m->words];

		if (!fr->writable)
			continue;
		for (int p = 0; p < MDL_NPOL; p++)
			if (stale(m, (enum mdl_pol)p, fm, fr->tick))
				m->c[p].viol[MDL_S3]++;
		fr->writable = 0;
		fr->tick = 0;
	}
}

void mdl_upgrade(struct mdl *m, unsigned int cpu, unsigned int dom, enum luf_abort_cause cause)
{
	struct dom *d = &m->dom[dom];
	const unsigned long *mask = (const unsigned long *)(const void *)d->mask;

	m->events++;
	m->cur = cpu;
	/* batched: flush_tlb_batched_pending() */
	if (stale(m, MDL_BAT, mask, d->tick))
		pol_flush(m, MDL_BAT, cpu, mask);
	luf_check(m, luf_abort_domain(m->cpu[cpu].ro, d->ldom, cause));
	if (stale(m, MDL_ORA, mask, d->tick))
		oracle_flush(m, cpu);
	for (int p = 0; p < MDL_NPOL; p++)
		if (stale(m, (enum mdl_pol)p, mask, d->tick))
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
	luf_check(m, luf_local_flush_end(m->l, cpu, snap));
}

void mdl_result(const struct mdl *m, struct mdl_result *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->c, m->c, sizeof(r->c));
	r->luf_skipped = luf_stats_sum(m->l, LUF_STAT_FLUSH_SKIPPED) +
			 luf_stats_sum(m->l, LUF_STAT_ALLOC_DONE);
	r->luf_dropped = luf_stats_sum(m->l, LUF_STAT_DIET_DROPPED);
	r->luf_deferred = luf_stats_sum(m->l, LUF_STAT_DEFERRED);
	r->luf_wr_flush = luf_stats_sum(m->l, LUF_STAT_WRITABLE_FLUSH);
	r->luf_alloc_flush = luf_stats_sum(m->l, LUF_STAT_ALLOC_FLUSH);
	for (int a = 0; a < LUF_ABORT_NR_CAUSES; a++)
		r->aborts[a] =
		    luf_stats_sum(m->l, (enum luf_stat_item)(LUF_STAT_ABORT + a));
	r->luf_errors = m->errors;
	r->events = m->events;
}
