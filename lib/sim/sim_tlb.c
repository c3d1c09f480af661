// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_tlb.c - the software TLBs and the arch ops luf flushes them
 * through.
 *
 * Each CPU caches at most cfg.tlb_entries translations; a fill beyond that
 * evicts one round-robin (a capacity miss only ever drops a translation,
 * which is always safe). A flush of a CPU, whether luf's (ops->flush, an
 * IPI to a remote CPU) or the sim's own (a context switch, the shootdown
 * after mprotect or mremap), clears that CPU's whole TLB under its lock.
 *
 * Why the TLB lock covers a fill and every access through an entry: on a
 * real CPU an IPI is taken between instructions, so a page walk and the
 * fill it ends in, or a load through a translation, are never split by
 * the invalidation. Without the lock a flush could clear a TLB between
 * another CPU's walk and its fill:
 *
 *   CPU0 (fill)                           CPU1 (unmap, then flush CPU0)
 *   walk: PTE -> frame F
 *                                         clear PTE; luf_unmap; flush CPU0
 *                                         mark CPU0 done; free F; reuse F
 *   install entry -> F  (stale, and no flush will ever remove it)
 *
 * With the fill under the domain lock (so the walk and the PTE clear are
 * ordered) and the TLB lock (so the flush waits for the fill), the entry
 * either is never installed or is there for the flush to clear.
 */
#include "sim_internal.h"

static void sim_drop_refs(struct luf_sim *sim, uint64_t e)
{
	struct sim_frame *f = &sim->frames[sim_e_frame(e)];

	atomic_fetch_sub_explicit(&f->refs, 1, memory_order_release);
	if (e & (SIM_E_W | SIM_E_D))
		atomic_fetch_sub_explicit(&f->wrefs, 1, memory_order_release);
}

/* Clear @cpu's whole TLB. @remote: count an IPI, else a local flush. No lock held. */
void sim_tlb_flush_cpu(struct luf_sim *sim, unsigned int cpu, bool remote)
{
	struct sim_tlb *t = &sim->tlbs[cpu];

	sim_lock_tlb(sim, cpu);
	for (unsigned int i = 0; i < t->count; i++) {
		uint64_t e =
		    atomic_exchange_explicit(sim_ent(sim, cpu, t->occ[i]), 0, memory_order_acq_rel);

		if (e & SIM_E_VALID)
			sim_drop_refs(sim, e);
	}
	t->count = 0;
	sim_unlock_tlb(sim, cpu);
	__luf_add_relaxed(remote ? &t->ipis : &t->local_flushes, 1);
}

/* Drop occupancy slot @idx of @cpu's TLB (TLB lock held). */
static void sim_tlb_drop_at(struct luf_sim *sim, unsigned int cpu, unsigned int idx)
{
	struct sim_tlb *t = &sim->tlbs[cpu];
	uint64_t e =
	    atomic_exchange_explicit(sim_ent(sim, cpu, t->occ[idx]), 0, memory_order_acq_rel);

	if (e & SIM_E_VALID)
		sim_drop_refs(sim, e);
	t->occ[idx] = t->occ[--t->count];
}

/*
 * Install @cpu's entry for slot @sid of domain @dom: @frame, with the
 * permissions and dirty bit of @pte, filled for object @obj. Marks @cpu in
 * the domain's mask first (mm_cpumask). Caller holds the domain lock and
 * @cpu's TLB lock.
 */
void sim_tlb_fill(struct luf_sim *sim, unsigned int cpu, unsigned int dom, uint32_t sid,
		  uint32_t frame, uint32_t obj, uint64_t pte)
{
	struct sim_tlb *t = &sim->tlbs[cpu];
	_Atomic uint64_t *slot = sim_ent(sim, cpu, sid);
	uint64_t old = sim_load(slot), e;
	struct sim_frame *f = &sim->frames[frame];

	e = SIM_E_VALID | (uint64_t)frame << SIM_E_FRAME_SHIFT | (uint64_t)obj << SIM_E_OBJ_SHIFT;
	if (pte & SIM_PTE_W)
		e |= SIM_E_W;
	if (pte & SIM_PTE_D)
		e |= SIM_E_D;
	__luf_set_bit(cpu, sim->doms[dom].mask);
	if (old & SIM_E_VALID) {
		sim_drop_refs(sim, old);
	} else {
		if (t->count == sim->cfg.tlb_entries)
			sim_tlb_drop_at(sim, cpu, t->hand++ % t->count);
		t->occ[t->count++] = sid;
	}
	atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
	if (e & (SIM_E_W | SIM_E_D))
		atomic_fetch_add_explicit(&f->wrefs, 1, memory_order_relaxed);
	sim_store(slot, e);
}

/* A copy of the CPUs that may cache translations of @dom (relaxed word reads). */
void sim_copy_mask(struct luf_sim *sim, unsigned int dom, unsigned long *out)
{
	luf_cpumask_copy(out, sim->doms[dom].mask, sim->cfg.nr_cpus);
}

/*
 * The sim's own shootdown after it lowered or moved present PTEs of @dom
 * (flush_tlb_range() in the kernel): flush every CPU of the domain's mask,
 * then mark them done with a ugen taken before (a full flush covers every
 * earlier removal). Never fails. Called by @cpu with no lock held.
 */
void sim_flush_mm(struct luf_sim *sim, unsigned int cpu, unsigned int dom)
{
	unsigned long *m = sim->cpus[cpu].mask;
	unsigned int n = sim->cfg.nr_cpus, c;
	unsigned long g;

	sim_copy_mask(sim, dom, m);
	g = luf_local_flush_begin(sim->luf);
	luf_for_each_cpu(c, m, n) {
		sim_tlb_flush_cpu(sim, c, c != cpu);
	}
	luf_for_each_cpu(c, m, n) {
		luf_local_flush_end(sim->luf, c, g);
	}
	__luf_add_relaxed(&sim->mm_flushes, 1);
}

/* ---- arch ops ------------------------------------------------------ */

/* Should this luf-driven flush fail (injected)? Draws from the operation's stream. */
static bool sim_flush_fails(struct luf_sim *sim)
{
	unsigned long n = __luf_read_once(&sim->fail_next);

	while (n) {
		if (__atomic_compare_exchange_n(&sim->fail_next, &n, n - 1, true, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return true;
	}
	return sim->cfg.flush_fail_permille &&
	       sim_mix64(&sim_tctx.rng) % 1000 < sim->cfg.flush_fail_permille;
}

static int sim_arch_flush(void *arch, const unsigned long *cpus, unsigned int nr_cpus,
			  const struct luf_range *r)
{
	struct luf_sim *sim = arch;
	unsigned int c;

	(void)r; /* a full flush covers any range */
	if (!sim || !cpus || nr_cpus != sim->cfg.nr_cpus)
		return -EINVAL;
	sim_tctx.flushes++;
	if (sim_flush_fails(sim)) {
		sim_tctx.flush_failed++;
		return -EIO;
	}
	luf_for_each_cpu(c, cpus, nr_cpus) {
		sim_tlb_flush_cpu(sim, c, c != sim_tctx.cpu);
	}
	__luf_add_relaxed(&sim->luf_flushes, 1);
	return 0;
}

static unsigned int sim_arch_nr_cpu_ids(void *arch)
{
	return ((struct luf_sim *)arch)->cfg.nr_cpus;
}

static unsigned int sim_arch_this_cpu(void *arch)
{
	(void)arch;
	return sim_tctx.cpu;
}

static int sim_arch_flush_all(void *arch)
{
	struct luf_sim *sim = arch;

	for (unsigned int c = 0; c < sim->cfg.nr_cpus; c++)
		sim_tlb_flush_cpu(sim, c, c != sim_tctx.cpu);
	return 0;
}

static int sim_arch_mm_cpus(void *arch, const struct luf_domain *dom, unsigned long *out,
			    unsigned int nr_cpus)
{
	struct luf_sim *sim = arch;

	if (nr_cpus != sim->cfg.nr_cpus)
		return -EINVAL;
	for (unsigned int d = 0; d < sim->cfg.nr_domains; d++) {
		if (sim->doms[d].ld == dom) {
			sim_copy_mask(sim, d, out);
			return 0;
		}
	}
	return -EINVAL;
}

const struct luf_arch_ops sim_arch_ops = {
    .flush = sim_arch_flush,
    .nr_cpu_ids = sim_arch_nr_cpu_ids,
    .this_cpu = sim_arch_this_cpu,
    .flush_all = sim_arch_flush_all,
    .mm_cpus = sim_arch_mm_cpus,
};

/* ---- operations on one CPU's TLB ------------------------------------ */

int luf_sim_ctx_switch(struct luf_sim *sim, unsigned int cpu)
{
	unsigned long g, d;

	if (!sim_cpu_ok(sim, cpu))
		return -EINVAL;
	sim_enter(sim, cpu);
	/* The snapshot comes first: a removal after it carries a newer stamp. */
	g = luf_local_flush_begin(sim->luf);
	sim_tlb_flush_cpu(sim, cpu, false);
	luf_local_flush_end(sim->luf, cpu, g);
	d = luf_done_read(&sim->luf->done, cpu);
	if (sim_ugen_older(d, g))
		sim_violation(sim, LUF_SIM_S4, cpu,
			      "done[%u] is %#lx after a flush marked at ugen %#lx (not monotonic "
			      "across the wrap)",
			      cpu, d, g);
	/* Switched away from every domain: it caches none of them now. */
	for (unsigned int dm = 0; dm < sim->cfg.nr_domains; dm++)
		__luf_clear_bit(cpu, sim->doms[dm].mask);
	return sim_leave(sim, cpu, 0);
}

int luf_sim_evict(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page)
{
	struct sim_tlb *t;
	uint32_t sid;
	int ret = -ENOENT;

	if (!sim_cpu_ok(sim, cpu) || dom >= sim->cfg.nr_domains || page >= sim->cfg.nr_pages)
		return -EINVAL;
	sim_enter(sim, cpu);
	t = &sim->tlbs[cpu];
	sid = sim_slot_id(sim, dom, page);
	sim_lock_tlb(sim, cpu);
	for (unsigned int i = 0; i < t->count; i++) {
		if (t->occ[i] == sid) {
			sim_tlb_drop_at(sim, cpu, i);
			ret = 0;
			break;
		}
	}
	sim_unlock_tlb(sim, cpu);
	return sim_leave(sim, cpu, ret);
}
