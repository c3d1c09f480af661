// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_vma.c - changes to an address space's layout and protection:
 * mprotect, mmap and mremap.
 *
 * Each settles the domain (luf_domain_settle() for a downgrade,
 * luf_abort_domain() for anything that grants access or moves a
 * translation) under the domain lock, after it looked at the pages and
 * before it changes them: a removal recorded earlier is flushed now, one
 * recorded later sees the change already made (sim_unmap.c). Present PTEs
 * that lose rights, or move, are then flushed from every CPU of the domain
 * (the kernel's flush_tlb_range()), and only after that flush is the new
 * protection "committed": the checker treats a write through a writable
 * entry as a violation only once the change that removed the right has
 * returned. The race a downgrade's settle closes (docs/DESIGN.md 4.5):
 *
 *   CPU0 (reclaim)                        CPU1 (mprotect P read-only)
 *   clear writable PTE of P, batch
 *   (defer) its flush
 *                                         P not present: nothing to change,
 *                                         no flush of its own
 *                                         return: P is read-only
 *   -- CPU1's user writes P through the stale writable entry: lost write --
 *
 * and an mremap's: a stale read-only entry for the slot a translation
 * moves into (or out of, when the slot is mapped again) would otherwise
 * read another page's data.
 */
#include "sim_internal.h"

/* Lower or raise @pte's rights to @prot (a raise to RW makes dirty PTEs writable). */
static uint64_t sim_prot_pte(uint64_t pte, unsigned int prot)
{
	if (prot == LUF_SIM_PROT_NONE)
		return pte & ~(SIM_PTE_ACCESS | SIM_PTE_W);
	pte |= SIM_PTE_ACCESS;
	if (prot == LUF_SIM_PROT_READ)
		return pte & ~SIM_PTE_W;
	return (pte & SIM_PTE_D) ? pte | SIM_PTE_W : pte;
}

/* After the shootdown: the new protection holds on every CPU, unless changed again since. */
static void sim_commit(struct luf_sim *sim, unsigned int dom, unsigned int page,
		       unsigned int npages, const uint32_t *gens, uint32_t prot, bool unbusy)
{
	sim_lock_dom(sim, dom);
	for (unsigned int i = 0; i < npages; i++) {
		struct sim_slot *s = sim_slot(sim, dom, page + i);

		if (s->prot_gen == gens[i])
			atomic_store(&s->committed, prot);
		if (unbusy) {
			s->busy = SIM_IDLE;
			s->seq++;
		}
	}
	sim_unlock_dom(sim, dom);
}

/*
 * A downgrade that lowers nothing itself must still flush while another
 * protection change of the domain has lowered PTEs and not yet flushed them
 * (flush_pending): the PTE it finds read-only may be cached writable still,
 * and its commit would declare the page read-only too early. The kernel
 * serialises mprotect on mmap_lock; the sim drops the domain lock before its
 * shootdown, so it flushes instead, as tlb_finish_mmu() does when
 * mm_tlb_flush_nested():
 *
 *   CPU0 (mprotect P read-only)           CPU1 (mprotect P read-only)
 *   lock; PTE writable -> read-only;
 *   flush_pending++; unlock
 *   (shootdown not yet reached CPU2)
 *                                         lock; PTE already read-only:
 *                                         nothing lowered, no flush; unlock
 *                                         commit: P is PROT_READ; return
 *   -- CPU2 writes P through its stale writable entry: S2 --
 *   flush CPU2 (too late)
 */
int luf_sim_mprotect(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		     unsigned int npages, unsigned int prot)
{
	struct luf_pcpu *pc;
	uint32_t gens[LUF_SIM_MAX_RANGE];
	bool lowered = false, nested;
	int ret;

	if (!sim_cpu_ok(sim, cpu) || !sim_range_ok(sim, dom, page, npages) ||
	    prot > LUF_SIM_PROT_RW)
		return -EINVAL;
	sim_enter(sim, cpu);
	pc = sim->cpus[cpu].pc;
	sim_lock_dom(sim, dom);
	for (unsigned int i = 0; i < npages; i++) {
		if (sim_slot(sim, dom, page + i)->prot == SIM_PROT_UNMAPPED) {
			sim_unlock_dom(sim, dom);
			return sim_leave(sim, cpu, -ENOMEM);
		}
	}
	if (prot == LUF_SIM_PROT_RW)
		ret = luf_abort_domain(pc, sim->doms[dom].ld, LUF_ABORT_PROT_UPGRADE);
	else
		ret = luf_domain_settle(sim->luf, cpu, sim->doms[dom].ld, pc->scratch);
	if (ret < 0) {
		sim_unlock_dom(sim, dom);
		return sim_leave(sim, cpu, ret);
	}
	/* Raised under this lock by a change before us; dropped only after its flush. */
	nested = prot != LUF_SIM_PROT_RW && atomic_load(&sim->doms[dom].flush_pending);
	for (unsigned int i = 0; i < npages; i++) {
		struct sim_slot *s = sim_slot(sim, dom, page + i);
		uint64_t pte = sim_load(&s->pte), npte = sim_prot_pte(pte, prot);

		s->prot = (uint8_t)prot;
		gens[i] = ++s->prot_gen;
		s->seq++;
		if (prot >= atomic_load(&s->committed))
			atomic_store(&s->committed, prot); /* a raise holds at once */
		if (!(pte & SIM_PTE_PRESENT))
			continue;
		if ((npte & SIM_PTE_W) && !(pte & SIM_PTE_W))
			sim_check_install(sim, UINT_MAX, dom, page + i, sim_pte_frame(pte),
					  atomic_load(&s->obj), true, "mprotect upgrade");
		if ((pte & ~npte & (SIM_PTE_ACCESS | SIM_PTE_W)) && !lowered) {
			lowered = true;
			atomic_fetch_add(&sim->doms[dom].flush_pending, 1);
		}
		sim_store(&s->pte, npte);
	}
	sim_unlock_dom(sim, dom);
	if (lowered || nested)
		sim_flush_mm(sim, cpu, dom);
	if (lowered)
		atomic_fetch_sub(&sim->doms[dom].flush_pending, 1);
	sim_commit(sim, dom, page, npages, gens, prot, false);
	return sim_leave(sim, cpu, 0);
}

int luf_sim_mmap(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		 unsigned int npages, unsigned int prot)
{
	unsigned int mapped = 0;
	int ret = 0;

	if (!sim_cpu_ok(sim, cpu) || !sim_range_ok(sim, dom, page, npages) ||
	    prot > LUF_SIM_PROT_RW)
		return -EINVAL;
	sim_enter(sim, cpu);
	sim_lock_dom(sim, dom);
	for (unsigned int i = 0; i < npages; i++) {
		struct sim_slot *s = sim_slot(sim, dom, page + i);

		if (s->busy)
			ret = -EBUSY;
		mapped += s->prot != SIM_PROT_UNMAPPED;
	}
	if (!ret && mapped == npages)
		ret = -EEXIST;
	/* Access is granted where stale entries of earlier mappings may linger. */
	if (!ret)
		ret =
		    luf_abort_domain(sim->cpus[cpu].pc, sim->doms[dom].ld, LUF_ABORT_PROT_UPGRADE);
	for (unsigned int i = 0; i < npages && !ret; i++) {
		struct sim_slot *s = sim_slot(sim, dom, page + i);

		if (s->prot != SIM_PROT_UNMAPPED)
			continue; /* already mapped: left as it is */
		s->prot = (uint8_t)prot;
		atomic_store(&s->committed, prot);
		s->prot_gen++;
		s->seq++;
		s->swapped = 0;
		atomic_store(&s->obj, 0);
	}
	sim_unlock_dom(sim, dom);
	return sim_leave(sim, cpu, ret);
}

/* Check an mremap's two ranges (domain lock held). */
static int sim_mremap_check(struct luf_sim *sim, unsigned int dom, unsigned int from,
			    unsigned int to, unsigned int npages)
{
	for (unsigned int i = 0; i < npages; i++) {
		const struct sim_slot *p = sim_slot(sim, dom, from + i);
		const struct sim_slot *q = sim_slot(sim, dom, to + i);

		if (p->busy || q->busy)
			return -EBUSY;
		if (p->prot == SIM_PROT_UNMAPPED)
			return -EFAULT;
		if (q->prot != SIM_PROT_UNMAPPED)
			return -EEXIST;
	}
	return 0;
}

/* Move slot @p's mapping, content and PTE to @q (domain lock held). Return: PTE was present. */
static bool sim_move_slot(struct luf_sim *sim, unsigned int dom, unsigned int to,
			  struct sim_slot *p, struct sim_slot *q)
{
	uint64_t pte = sim_load(&p->pte);
	uint32_t obj = atomic_load(&p->obj);

	q->prot = p->prot;
	atomic_store(&q->committed, p->prot);
	q->prot_gen++;
	q->seq++;
	q->swapped = p->swapped;
	q->swap_ver = p->swap_ver;
	atomic_store(&q->obj, obj);
	if (pte & SIM_PTE_PRESENT)
		sim_check_install(sim, UINT_MAX, dom, to, sim_pte_frame(pte), obj,
				  (pte & SIM_PTE_W) != 0, "mremap destination");
	sim_store(&q->pte, pte);
	sim_store(&p->pte, 0);
	p->prot = SIM_PROT_UNMAPPED;
	p->prot_gen++;
	p->seq++;
	p->swapped = 0;
	p->busy = SIM_BUSY_MOVE;
	atomic_store(&p->obj, 0);
	return (pte & SIM_PTE_PRESENT) != 0;
}

int luf_sim_mremap(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int from,
		   unsigned int to, unsigned int npages)
{
	uint32_t gens[LUF_SIM_MAX_RANGE];
	bool moved = false;
	int ret;

	if (!sim_cpu_ok(sim, cpu) || !sim_range_ok(sim, dom, from, npages) ||
	    !sim_range_ok(sim, dom, to, npages) || (from < to + npages && to < from + npages))
		return -EINVAL;
	sim_enter(sim, cpu);
	sim_lock_dom(sim, dom);
	ret = sim_mremap_check(sim, dom, from, to, npages);
	if (!ret)
		ret = luf_abort_domain(sim->cpus[cpu].pc, sim->doms[dom].ld, LUF_ABORT_MOVE);
	if (ret) {
		sim_unlock_dom(sim, dom);
		return sim_leave(sim, cpu, ret);
	}
	for (unsigned int i = 0; i < npages; i++) {
		struct sim_slot *p = sim_slot(sim, dom, from + i);

		moved |= sim_move_slot(sim, dom, to + i, p, sim_slot(sim, dom, to + i));
		gens[i] = p->prot_gen;
	}
	sim_unlock_dom(sim, dom);
	if (moved)
		sim_flush_mm(sim, cpu, dom); /* the old translations, still cached */
	sim_commit(sim, dom, from, npages, gens, SIM_PROT_UNMAPPED, true);
	return sim_leave(sim, cpu, 0);
}
