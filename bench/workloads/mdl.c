// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/workloads/mdl.c - the events of mdl.h as calls into the policy
 * simulator (lib/sim/luf_cmp.h): one task per CPU, one simulator domain
 * per address space, the simulator's frames. No policy and no check here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mdl.h"

struct mdl {
	struct luf_cmp *c;
	struct luf_cmp_task *task; /* per CPU */
	int *dom;		   /* simulator domain of each address space */
	unsigned int *fdom;	   /* per frame: the address space it is mapped in */
	unsigned char *fwr;	   /* per frame: mapped writable */
	unsigned int nr_cpus, nr_doms, nr_frames;
	unsigned long long events;
	long errors;
	char where[32];
};

void mdl_explain(struct mdl *m, FILE *f)
{
	luf_cmp_explain(m->c, f);
}

int mdl_create(const struct mdl_config *cfg, struct mdl **out)
{
	struct luf_cmp_config cc = {
	    .nr_cpus = cfg->nr_cpus, .nr_frames = cfg->nr_frames, .nr_fast = cfg->nr_fast};
	struct mdl *m;
	int ret;

	if (!cfg->nr_cpus || !cfg->nr_doms || !cfg->nr_frames)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->nr_cpus = cfg->nr_cpus;
	m->nr_doms = cfg->nr_doms;
	m->nr_frames = cfg->nr_frames;
	ret = luf_cmp_create(&cc, &m->c);
	if (ret) {
		free(m);
		return ret;
	}
	m->task = calloc(m->nr_cpus, sizeof(*m->task));
	m->dom = calloc(m->nr_doms, sizeof(*m->dom));
	m->fdom = calloc(m->nr_frames, sizeof(*m->fdom));
	m->fwr = calloc(m->nr_frames, 1);
	ret = -ENOMEM;
	if (!m->task || !m->dom || !m->fdom || !m->fwr)
		goto fail;
	for (unsigned int c = 0; c < m->nr_cpus; c++) {
		ret = luf_cmp_task_init(m->c, &m->task[c], c);
		if (ret)
			goto fail;
	}
	for (unsigned int d = 0; d < m->nr_doms; d++) {
		m->dom[d] = luf_cmp_dom_new(m->c);
		if (m->dom[d] < 0) {
			ret = m->dom[d];
			goto fail;
		}
	}
	*out = m;
	return 0;
fail:
	mdl_destroy(m);
	return ret;
}

void mdl_destroy(struct mdl *m)
{
	if (!m)
		return;
	for (unsigned int c = 0; m->task && c < m->nr_cpus; c++)
		if (m->task[c].imm.bits)
			luf_cmp_task_fini(m->c, &m->task[c]);
	luf_cmp_destroy(m->c);
	free(m->task);
	free(m->dom);
	free(m->fdom);
	free(m->fwr);
	free(m);
}

void mdl_dom_add_cpu(struct mdl *m, unsigned int dom, unsigned int cpu)
{
	if (luf_cmp_dom_add_cpu(m->c, m->dom[dom], cpu))
		m->errors++;
}

unsigned int mdl_dom_weight(const struct mdl *m, unsigned int dom)
{
	return luf_cmp_dom_weight(m->c, m->dom[dom]);
}

unsigned int mdl_frame_tier(const struct mdl *m, unsigned int frame)
{
	return luf_cmp_frame_tier(m->c, frame);
}

int mdl_frame_writable(const struct mdl *m, unsigned int frame)
{
	return m->fwr[frame];
}

unsigned int mdl_frame_dom(const struct mdl *m, unsigned int frame)
{
	return m->fdom[frame];
}

unsigned long mdl_nr_free(const struct mdl *m, unsigned int cpu, unsigned int tier)
{
	return luf_cmp_nr_free(m->c, cpu, tier);
}

/* Count an event; name it for --explain. */
static void event(struct mdl *m)
{
	m->events++;
	if (luf_cmp_explaining(m->c)) {
		snprintf(m->where, sizeof(m->where), "event %-9llu", m->events);
		luf_cmp_where(m->c, m->where);
	}
}

long mdl_alloc(struct mdl *m, unsigned int cpu, unsigned int tier)
{
	event(m);
	return luf_cmp_alloc(m->c, cpu, tier);
}

void mdl_map(struct mdl *m, unsigned int cpu, unsigned int frame, unsigned int dom, int writable)
{
	(void)cpu;
	m->fdom[frame] = dom;
	m->fwr[frame] = (unsigned char)!!writable;
}

void mdl_remove(struct mdl *m, unsigned int cpu, unsigned int frame)
{
	unsigned int pte = LUF_PTE_ACCESSIBLE | (m->fwr[frame] ? LUF_PTE_WRITABLE : 0);

	event(m);
	if (luf_cmp_remove(m->c, &m->task[cpu], m->dom[m->fdom[frame]], frame, pte, 1, NULL))
		m->errors++;
}

void mdl_call_end(struct mdl *m, unsigned int cpu)
{
	luf_cmp_call_end(m->c, &m->task[cpu]);
}

void mdl_batch_end(struct mdl *m, unsigned int cpu)
{
	event(m);
	luf_cmp_batch_end(m->c, &m->task[cpu]);
}

void mdl_wrprotect(struct mdl *m, unsigned int cpu, const unsigned int *frames, unsigned int n)
{
	struct luf_cmp_task *t = &m->task[cpu];

	event(m);
	/* change_pte_range() calls flush_tlb_batched_pending() first */
	for (unsigned int i = 0; i < n; i++)
		if (m->fwr[frames[i]])
			luf_cmp_pending(m->c, t, m->dom[m->fdom[frames[i]]]);
	for (unsigned int i = 0; i < n; i++) {
		unsigned int f = frames[i];

		if (!m->fwr[f])
			continue;
		if (luf_cmp_remove(m->c, t, m->dom[m->fdom[f]], -1,
				   LUF_PTE_ACCESSIBLE | LUF_PTE_WRITABLE, 1, NULL))
			m->errors++;
		m->fwr[f] = 0;
	}
	/* mprotect flushes before it returns: the call and its batch end here */
	luf_cmp_batch_end(m->c, t);
}

void mdl_upgrade(struct mdl *m, unsigned int cpu, unsigned int dom, enum luf_abort_cause cause)
{
	struct luf_cmp_rec rec;

	event(m);
	luf_cmp_pending(m->c, &m->task[cpu], m->dom[dom]);
	/* the domain's newest removal: its CPUs then may cache any older one */
	luf_cmp_dom_rec(m->c, m->dom[dom], &rec);
	if (luf_cmp_upgrade(m->c, &m->task[cpu], m->dom[dom], &rec, rec.tick ? 1 : 0, cause))
		m->errors++;
}

void mdl_ctx_switch(struct mdl *m, unsigned int cpu)
{
	event(m);
	luf_cmp_ctx_switch(m->c, cpu);
}

void mdl_result(struct mdl *m, struct mdl_result *r)
{
	struct luf *l = luf_cmp_luf(m->c);
	struct luf_cmp_result cr;

	luf_cmp_result(m->c, &cr);
	memset(r, 0, sizeof(*r));
	memcpy(r->c, cr.c, sizeof(r->c));
	r->luf_skipped =
	    luf_stats_sum(l, LUF_STAT_FLUSH_SKIPPED) + luf_stats_sum(l, LUF_STAT_ALLOC_DONE);
	r->luf_dropped = luf_stats_sum(l, LUF_STAT_DIET_DROPPED);
	r->luf_deferred = luf_stats_sum(l, LUF_STAT_DEFERRED);
	r->luf_wr_flush = luf_stats_sum(l, LUF_STAT_WRITABLE_FLUSH);
	r->luf_alloc_flush = luf_stats_sum(l, LUF_STAT_ALLOC_FLUSH);
	for (int a = 0; a < LUF_ABORT_NR_CAUSES; a++)
		r->aborts[a] = luf_stats_sum(l, (enum luf_stat_item)(LUF_STAT_ABORT + a));
	r->luf_errors = cr.luf_errors + m->errors;
	r->events = m->events;
	r->bound_cpus = cr.bound_cpus;
	r->bound_ops = cr.bound_ops;
}
