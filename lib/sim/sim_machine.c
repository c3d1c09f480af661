// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_machine.c - building and tearing down the simulated machine,
 * and the read-only views tests use to look inside it.
 *
 * A machine is one luf instance (struct luf with its done counters and
 * statistics, a key table) wired to the sim's arch ops, plus per CPU a
 * struct luf_pcpu, a struct luf_freelist, a software TLB and a batch of
 * unmapped frames; per domain a struct luf_domain, a CPU mask and a page
 * table; and the frames, dealt round-robin onto the CPUs' free lists.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "sim_zalloc.h"

_Thread_local struct sim_tctx sim_tctx;

void luf_sim_config_default(struct luf_sim_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_cpus = 4;
	cfg->nr_domains = 2;
	cfg->nr_pages = 32;
	cfg->nr_frames = 48;
	cfg->nr_keys = 64;
	cfg->tlb_entries = 32;
	cfg->fold_threshold = 8;
	cfg->reserve = 1;
}

static bool sim_cfg_ok(const struct luf_sim_config *c)
{
	if (c->nr_cpus < 1 || c->nr_cpus > LUF_SIM_MAX_CPUS)
		return false;
	if (c->nr_domains < 1 || c->nr_domains > LUF_SIM_MAX_DOMAINS)
		return false;
	if (c->nr_pages < 1 || c->nr_pages > LUF_SIM_MAX_PAGES)
		return false;
	if (c->nr_frames < 1 || c->nr_frames > LUF_SIM_MAX_FRAMES)
		return false;
	if (c->nr_keys < 2 || c->nr_keys > LUF_KEYTAB_MAX_KEYS)
		return false;
	if (c->tlb_entries < 1 || c->tlb_entries > LUF_SIM_MAX_TLB)
		return false;
	if (c->fold_threshold < 1 || c->flush_fail_permille > 1000)
		return false;
	if (c->options & ~LUF_SIM_OPT_LINK_IN_FRAME)
		return false;
	return (unsigned long)c->nr_cpus * c->nr_domains * c->nr_pages <= (1ul << 23);
}

void luf_sim_destroy(struct luf_sim *sim)
{
	if (!sim)
		return;
	for (unsigned int c = 0; sim->cpus && c < sim->cfg.nr_cpus; c++) {
		free(sim->cpus[c].pc);
		free(sim->cpus[c].fl);
		free(sim->cpus[c].mask);
		free(sim->cpus[c].seen);
	}
	for (unsigned int c = 0; sim->tlbs && c < sim->cfg.nr_cpus; c++) {
		pthread_mutex_destroy(&sim->tlbs[c].lock);
		free(sim->tlbs[c].occ);
	}
	for (unsigned int d = 0; sim->doms && d < sim->cfg.nr_domains; d++) {
		pthread_mutex_destroy(&sim->doms[d].lock);
		free(sim->doms[d].ld);
		free(sim->doms[d].mask);
		free(sim->doms[d].slots);
	}
	pthread_mutex_destroy(&sim->vlock);
	free(sim->cpus);
	free(sim->tlbs);
	free(sim->doms);
	free((void *)sim->ent);
	free(sim->frames);
	free((void *)sim->objtab);
	free(sim->kt);
	free(sim->stats);
	free(sim->done);
	free(sim->luf);
	free(sim);
}

static int sim_build_luf(struct luf_sim *sim)
{
	unsigned int n = sim->cfg.nr_cpus;

	sim->ops = sim_arch_ops;
	sim->luf = sim_zalloc(sizeof(struct luf));
	sim->done = sim_zalloc(luf_done_size(n));
	sim->stats = sim_zalloc(luf_stats_size(n));
	sim->kt = sim_zalloc(luf_keytab_size(sim->cfg.nr_keys, n));
	if (!sim->luf || !sim->done || !sim->stats || !sim->kt)
		return -ENOMEM;
	if (luf_init(sim->luf, &sim->ops, sim, sim->done, sim->stats, sim->cfg.ugen_start))
		return -EINVAL;
	return luf_keytab_init(sim->kt, sim->luf, sim->cfg.nr_keys);
}

static int sim_build_cpus(struct luf_sim *sim)
{
	unsigned int n = sim->cfg.nr_cpus;

	sim->cpus = calloc(n, sizeof(*sim->cpus));
	sim->tlbs = calloc(n, sizeof(*sim->tlbs));
	sim->ent = calloc((size_t)n * sim->nr_slots, sizeof(*sim->ent));
	if (!sim->cpus || !sim->tlbs || !sim->ent)
		return -ENOMEM;
	for (unsigned int c = 0; c < n; c++)
		pthread_mutex_init(&sim->tlbs[c].lock, NULL);
	for (unsigned int c = 0; c < n; c++) {
		struct sim_cpu *sc = &sim->cpus[c];

		sim->tlbs[c].occ = calloc(sim->cfg.tlb_entries, sizeof(uint32_t));
		sc->pc = sim_zalloc(luf_pcpu_size(n));
		sc->fl = sim_zalloc(luf_freelist_size(n));
		sc->mask = sim_zalloc(luf_cpumask_size(n));
		sc->seen = calloc(sim->nr_seen, sizeof(unsigned long));
		if (!sim->tlbs[c].occ || !sc->pc || !sc->fl || !sc->mask || !sc->seen)
			return -ENOMEM;
		if (luf_pcpu_init(sc->pc, sim->luf, sim->kt, c, sim->cfg.fold_threshold) ||
		    luf_freelist_init(sc->fl, sim->luf, sim->kt, sim->cfg.reserve))
			return -EINVAL;
		for (unsigned int k = 0; k < sim->nr_seen; k++)
			sc->seen[k] = luf_done_read(&sim->luf->done, (c + k) % n);
	}
	return 0;
}

static int sim_build_domains(struct luf_sim *sim)
{
	unsigned int n = sim->cfg.nr_cpus;

	sim->doms = calloc(sim->cfg.nr_domains, sizeof(*sim->doms));
	if (!sim->doms)
		return -ENOMEM;
	for (unsigned int d = 0; d < sim->cfg.nr_domains; d++)
		pthread_mutex_init(&sim->doms[d].lock, NULL);
	for (unsigned int d = 0; d < sim->cfg.nr_domains; d++) {
		struct sim_dom *sd = &sim->doms[d];

		sd->ld = sim_zalloc(luf_domain_size(n));
		sd->mask = sim_zalloc(luf_cpumask_size(n));
		sd->slots = calloc(sim->cfg.nr_pages, sizeof(*sd->slots));
		if (!sd->ld || !sd->mask || !sd->slots)
			return -ENOMEM;
		if (luf_domain_init(sd->ld, sim->luf))
			return -EINVAL;
		for (unsigned int p = 0; p < sim->cfg.nr_pages; p++) {
			sd->slots[p].prot = LUF_SIM_PROT_RW;
			atomic_store(&sd->slots[p].committed, LUF_SIM_PROT_RW);
		}
	}
	return 0;
}

/* Deal the frames round-robin onto the free lists, clean (key 0). */
static int sim_build_frames(struct luf_sim *sim)
{
	size_t objs = 1ul << 16;

	while (objs < 4ul * sim->nr_slots && objs < (1ul << 22))
		objs <<= 1;
	sim->objtab = calloc(objs, sizeof(*sim->objtab));
	sim->objmask = (uint32_t)(objs - 1);
	sim->frames = calloc(sim->cfg.nr_frames, sizeof(*sim->frames));
	if (!sim->objtab || !sim->frames)
		return -ENOMEM;
	for (unsigned int f = 0; f < sim->cfg.nr_frames; f++) {
		unsigned int c = f % sim->cfg.nr_cpus;

		atomic_store(&sim->frames[f].state, SIM_FRAME_FREE);
		atomic_store(&sim->frames[f].owner, c);
		if (luf_free(sim->cpus[c].fl, sim->cpus[c].pc, &sim->frames[f].lf, 0))
			return -EINVAL;
	}
	return 0;
}

int luf_sim_create(const struct luf_sim_config *cfg, struct luf_sim **out)
{
	struct luf_sim *sim;
	int ret;

	if (!cfg || !out || !sim_cfg_ok(cfg))
		return -EINVAL;
	sim = sim_zalloc(sizeof(*sim));
	if (!sim)
		return -ENOMEM;
	sim->cfg = *cfg;
	sim->nr_slots = cfg->nr_domains * cfg->nr_pages;
	sim->nr_seen = cfg->nr_cpus < SIM_SEEN_MAX ? cfg->nr_cpus : SIM_SEEN_MAX;
	pthread_mutex_init(&sim->vlock, NULL);
	ret = sim_build_luf(sim);
	if (!ret)
		ret = sim_build_cpus(sim);
	if (!ret)
		ret = sim_build_domains(sim);
	if (!ret)
		ret = sim_build_frames(sim);
	if (ret) {
		luf_sim_destroy(sim);
		return ret;
	}
	*out = sim;
	return 0;
}

/* Start an operation on @cpu: luf's this_cpu() and the flush callback read it. */
void sim_enter(struct luf_sim *sim, unsigned int cpu)
{
	sim_tctx.sim = sim;
	sim_tctx.cpu = cpu;
}

/* End an operation: sample done counters (S4), count it. Return: @ret. */
int sim_leave(struct luf_sim *sim, unsigned int cpu, int ret)
{
	sim_check_done(sim, cpu);
	__luf_add_relaxed(&sim->nr_ops, 1);
	return ret;
}

/* ---- inspection ---------------------------------------------------- */

static unsigned int sim_flags_of(uint64_t access, uint64_t w, uint64_t d)
{
	return (access ? LUF_SIM_ACCESSIBLE : 0) | (w ? LUF_SIM_WRITABLE : 0) |
	       (d ? LUF_SIM_DIRTY : 0);
}

int luf_sim_pte(struct luf_sim *sim, unsigned int dom, unsigned int page, unsigned int *frame,
		unsigned int *flags)
{
	uint64_t pte;

	if (!sim || dom >= sim->cfg.nr_domains || page >= sim->cfg.nr_pages)
		return -EINVAL;
	pte = sim_load(&sim_slot(sim, dom, page)->pte);
	if (!(pte & SIM_PTE_PRESENT))
		return -ENOENT;
	if (frame)
		*frame = sim_pte_frame(pte);
	if (flags)
		*flags = sim_flags_of(pte & SIM_PTE_ACCESS, pte & SIM_PTE_W, pte & SIM_PTE_D);
	return 0;
}

int luf_sim_tlb(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		unsigned int *frame, unsigned int *flags)
{
	uint64_t e;

	if (!sim_cpu_ok(sim, cpu) || dom >= sim->cfg.nr_domains || page >= sim->cfg.nr_pages)
		return -EINVAL;
	e = sim_load(sim_ent(sim, cpu, sim_slot_id(sim, dom, page)));
	if (!(e & SIM_E_VALID))
		return -ENOENT;
	if (frame)
		*frame = sim_e_frame(e);
	if (flags)
		*flags = sim_flags_of(1, e & SIM_E_W, e & SIM_E_D);
	return 0;
}

int luf_sim_frame_state(struct luf_sim *sim, unsigned int frame)
{
	if (!sim || frame >= sim->cfg.nr_frames)
		return -EINVAL;
	switch (atomic_load(&sim->frames[frame].state)) {
	case SIM_FRAME_IN_USE:
		return LUF_SIM_FRAME_IN_USE;
	case SIM_FRAME_BATCHED:
		return LUF_SIM_FRAME_BATCHED;
	default:
		return sim->frames[frame].lf.state == LUF_FOLIO_PEND ? LUF_SIM_FRAME_PEND
								     : LUF_SIM_FRAME_CLEAN;
	}
}

int luf_sim_free_frame(struct luf_sim *sim, unsigned int cpu, unsigned int nth)
{
	struct luf_freelist *fl;
	struct luf_folio *f;
	unsigned long total, k;

	if (!sim_cpu_ok(sim, cpu))
		return -EINVAL;
	fl = sim->cpus[cpu].fl;
	total = luf_freelist_nr_pend(fl) + luf_freelist_nr_clean(fl);
	if (!total)
		return -ENOENT;
	k = nth % total;
	for (f = fl->pend; f && k; f = f->next)
		k--;
	if (!f)
		for (f = fl->clean; f && k; f = f->next)
			k--;
	if (!f)
		return -ENOENT;
	return (int)(luf_folio_entry(f, struct sim_frame, lf) - sim->frames);
}

int luf_sim_nr_free(struct luf_sim *sim, unsigned int cpu, unsigned long *clean,
		    unsigned long *pend)
{
	if (!sim_cpu_ok(sim, cpu))
		return -EINVAL;
	if (clean)
		*clean = luf_freelist_nr_clean(sim->cpus[cpu].fl);
	if (pend)
		*pend = luf_freelist_nr_pend(sim->cpus[cpu].fl);
	return 0;
}

unsigned long luf_sim_ipis(const struct luf_sim *sim, unsigned int cpu)
{
	return sim_cpu_ok(sim, cpu) ? __luf_read_once(&sim->tlbs[cpu].ipis) : 0;
}

unsigned long luf_sim_luf_flushes(const struct luf_sim *sim)
{
	return sim ? __luf_read_once(&sim->luf_flushes) : 0;
}

unsigned long luf_sim_mm_flushes(const struct luf_sim *sim)
{
	return sim ? __luf_read_once(&sim->mm_flushes) : 0;
}

struct luf *luf_sim_luf(struct luf_sim *sim)
{
	return sim ? sim->luf : NULL;
}

long luf_sim_stat(const struct luf_sim *sim, enum luf_stat_item item)
{
	if (!sim || (unsigned int)item >= LUF_STAT_NR_ITEMS)
		return 0;
	return luf_stats_sum(sim->luf, item);
}

void luf_sim_fail_flushes(struct luf_sim *sim, unsigned int n)
{
	if (sim)
		__luf_write_once(&sim->fail_next, n);
}

unsigned long luf_sim_violations(const struct luf_sim *sim, int rule)
{
	unsigned long sum = 0;

	if (!sim || rule < 0 || rule >= LUF_SIM_NR_RULES)
		return 0;
	if (rule != LUF_SIM_OK)
		return __luf_read_once(&sim->nv[rule]);
	for (int r = 1; r < LUF_SIM_NR_RULES; r++)
		sum += __luf_read_once(&sim->nv[r]);
	return sum;
}

const struct luf_sim_violation *luf_sim_first_violation(const struct luf_sim *sim)
{
	if (!sim || !atomic_load_explicit((atomic_int *)&sim->have_first, memory_order_acquire))
		return NULL;
	return &sim->first;
}

unsigned long luf_sim_nr_ops(const struct luf_sim *sim)
{
	return sim ? __luf_read_once(&sim->nr_ops) : 0;
}
