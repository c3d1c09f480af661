// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_kmodel.c - kernel trace events as policy-simulator calls
 * (rp_kmodel.h). The simulator holds the policies and the checker.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rp_kmodel.h"

struct kmm {
	uint64_t mm;
	int dom;
};

/* An unmap waiting for its CPU's next event (a dirty mark of its folio). */
struct kpend {
	int valid, dirty;
	uint64_t folio, mm;
};

struct rp_kmodel {
	unsigned int nr_cpus;
	unsigned long max_pfn;
	struct luf_cmp *cmp;
	struct luf_cmp_task *task; /* per CPU */
	struct kpend *pend;	   /* per CPU */
	uint64_t *cur;		   /* per CPU: the mm loaded last */
	struct kmm *mms;
	size_t nr_mms, cap_mms;
	struct rp_kstats st;
};

int rp_kmodel_new(unsigned int nr_cpus, unsigned long max_pfn, struct rp_kmodel **out)
{
	/*
	 * x86's flush_tlb_multi() leaves lazy-TLB CPUs out of the batched and
	 * the mm flushes; luf's arch_luf_flush() reaches them (freed_tables).
	 */
	struct luf_cmp_config cfg = {.nr_cpus = nr_cpus,
				     .nr_frames = (unsigned int)max_pfn,
				     .nr_keys = 4096,
				     .frames_by_id = true,
				     .lazy_skip = 1u << LUF_CMP_IMMEDIATE | 1u << LUF_CMP_BATCHED};
	struct rp_kmodel *k = calloc(1, sizeof(*k));

	if (!k || !nr_cpus || !max_pfn || max_pfn > (1ul << 24))
		goto fail;
	k->nr_cpus = nr_cpus;
	k->max_pfn = max_pfn;
	k->task = calloc(nr_cpus, sizeof(*k->task));
	k->pend = calloc(nr_cpus, sizeof(*k->pend));
	k->cur = calloc(nr_cpus, sizeof(*k->cur));
	if (!k->task || !k->pend || !k->cur || luf_cmp_create(&cfg, &k->cmp))
		goto fail;
	for (unsigned int c = 0; c < nr_cpus; c++)
		if (luf_cmp_task_init(k->cmp, &k->task[c], c))
			goto fail;
	*out = k;
	return 0;
fail:
	rp_kmodel_free(k);
	return -1;
}

void rp_kmodel_free(struct rp_kmodel *k)
{
	if (!k)
		return;
	for (unsigned int c = 0; k->task && k->cmp && c < k->nr_cpus; c++)
		if (k->task[c].imm.bits)
			luf_cmp_task_fini(k->cmp, &k->task[c]);
	luf_cmp_destroy(k->cmp);
	free(k->task);
	free(k->pend);
	free(k->cur);
	free(k->mms);
	free(k);
}

struct luf_cmp *rp_kmodel_cmp(struct rp_kmodel *k)
{
	return k->cmp;
}

/* The simulator's domain of mm @mm (a new one on first sight), or -1. */
static int dom_of(struct rp_kmodel *k, uint64_t mm)
{
	for (size_t i = 0; i < k->nr_mms; i++)
		if (k->mms[i].mm == mm)
			return k->mms[i].dom;
	if (k->nr_mms == k->cap_mms) {
		size_t cap = k->cap_mms ? 2 * k->cap_mms : 16;
		struct kmm *m = realloc(k->mms, cap * sizeof(*m));

		if (!m)
			return -1;
		k->mms = m;
		k->cap_mms = cap;
	}
	k->mms[k->nr_mms].mm = mm;
	k->mms[k->nr_mms].dom = luf_cmp_dom_new(k->cmp);
	if (k->mms[k->nr_mms].dom < 0)
		return -1;
	k->st.mms++;
	return k->mms[k->nr_mms++].dom;
}

/* Apply @cpu's waiting unmap, if any. Return: 0, -1 (memory), -2 (bad folio). */
static int commit(struct rp_kmodel *k, unsigned int cpu, const char **why)
{
	struct kpend *p = &k->pend[cpu];
	unsigned int pte = LUF_PTE_ACCESSIBLE;
	uint64_t pfn;
	int dom;

	if (!p->valid)
		return 0;
	p->valid = 0;
	pfn = (p->folio - RP_K_VMEMMAP) / 64; /* checked by rp_kmodel_event() */
	(void)why;
	dom = dom_of(k, p->mm);
	if (dom < 0)
		return -1;
	if (p->dirty) {
		pte |= LUF_PTE_DIRTY | LUF_PTE_WRITABLE;
		k->st.dirty_unmaps++;
	}
	if (luf_cmp_remove(k->cmp, &k->task[cpu], dom, (long)pfn, pte, 1, NULL))
		return -1;
	luf_cmp_call_end(k->cmp, &k->task[cpu]); /* immediate: ptep_clear_flush() */
	return 0;
}

int rp_kmodel_event(struct rp_kmodel *k, const struct rp_kev *ev, const char **why)
{
	unsigned int cpu = ev->cpu;
	struct luf_cmp_rec rec;
	int ret, dom;

	if (ev->kind == RP_K_NONE)
		return 0;
	if (ev->kind == RP_K_LOST) {
		*why = "no lost events (the ring buffer overran: re-capture with a larger buffer)";
		return -2;
	}
	if (ev->kind == RP_K_OTHER) {
		k->st.events[RP_K_OTHER]++;
		return 0;
	}
	if (cpu >= k->nr_cpus) {
		*why = "a CPU below --cpus";
		return -2;
	}
	/* an event refused below is not counted (nor its CPU's waiting unmap applied) */
	if (ev->kind == RP_K_UNMAP) {
		if (ev->a < RP_K_VMEMMAP || (ev->a - RP_K_VMEMMAP) % 64) {
			*why = "a folio pointer in the memory map (0xffffea0000000000 + 64 * pfn)";
			return -2;
		}
		if ((ev->a - RP_K_VMEMMAP) / 64 >= k->max_pfn) {
			*why = "a pfn below the model's frames (1 GiB of RAM)";
			return -2;
		}
	}
	if ((ev->kind == RP_K_UNMAP || ev->kind == RP_K_WP) && !ev->b) {
		*why = "an mm pointer (not 0)";
		return -2;
	}
	if (ev->kind == RP_K_ALLOC &&
	    (ev->c >= 20 || ev->a >= k->max_pfn || (1ull << ev->c) > k->max_pfn - ev->a)) {
		*why = "an allocation within the model's frames (1 GiB of RAM, order < 20)";
		return -2;
	}
	k->st.events[ev->kind < RP_K_NR ? ev->kind : RP_K_OTHER]++;
	if (ev->kind == RP_K_DIRTY) {
		if (k->pend[cpu].valid && k->pend[cpu].folio == ev->a)
			k->pend[cpu].dirty = 1;
		return 0;
	}
	ret = commit(k, cpu, why);
	if (ret)
		return ret;
	switch (ev->kind) {
	case RP_K_UNMAP:
		k->pend[cpu] = (struct kpend){1, 0, ev->a, ev->b};
		return 0;
	case RP_K_BATCH:
		luf_cmp_batch_end(k->cmp, &k->task[cpu]);
		return 0;
	case RP_K_ALLOC: /* every page of the block is reused */
		for (uint64_t pfn = ev->a; pfn < ev->a + (1ull << ev->c); pfn++)
			if (luf_cmp_take(k->cmp, cpu, pfn) == -EBUSY)
				k->st.busy_allocs++;
		return 0;
	case RP_K_LAZY:
		luf_cmp_cpu_lazy(k->cmp, cpu, true);
		return 0;
	case RP_K_SWITCH:
		luf_cmp_cpu_lazy(k->cmp, cpu, false);
		if (ev->a == ev->b)
			return 0;
		luf_cmp_ctx_switch(k->cmp, cpu);
		k->cur[cpu] = ev->b;
		dom = dom_of(k, ev->b);
		return dom < 0 || luf_cmp_dom_add_cpu(k->cmp, dom, cpu) ? -1 : 0;
	case RP_K_WP:
		dom = dom_of(k, ev->b);
		if (dom < 0)
			return -1;
		luf_cmp_pending(k->cmp, &k->task[cpu], dom);
		luf_cmp_dom_rec(k->cmp, dom, &rec);
		return luf_cmp_upgrade(k->cmp, &k->task[cpu], dom, &rec, rec.tick ? 1 : 0,
				       LUF_ABORT_WRITE_FAULT)
			   ? -1
			   : 0;
	default: /* RP_K_IPI: measured, counted above */
		return 0;
	}
}

void rp_kmodel_stats(const struct rp_kmodel *k, struct rp_kstats *st)
{
	*st = k->st;
}

void rp_kmodel_finish(struct rp_kmodel *k, struct luf_cmp_result *res, struct rp_kstats *st)
{
	const char *why;

	for (unsigned int c = 0; c < k->nr_cpus; c++) {
		(void)commit(k, c, &why);
		luf_cmp_batch_end(k->cmp, &k->task[c]);
	}
	luf_cmp_result(k->cmp, res);
	*st = k->st;
}
