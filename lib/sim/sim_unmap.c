// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_unmap.c - the paths that remove translations: reclaim,
 * migration and munmap.
 *
 * Each clears PTEs and records the removals with luf_unmap() while it holds
 * the domain lock, the sim's page-table lock: the kernel sets
 * tlb_flush_batched under the PTL for the same reason. A protection change
 * settles the domain under that lock too, after it looked at the PTEs, so
 * it either sees a PTE still present (and flushes it itself) or finds the
 * removal already in the domain's set:
 *
 *   CPU0 (reclaim)                        CPU1 (mprotect P read-only)
 *   lock; clear P's PTE; luf_unmap():
 *   the domain's set now holds the
 *   removal; unlock
 *                                         lock; luf_domain_settle(): flushes
 *                                         the CPUs of that removal; P not
 *                                         present: nothing to change; unlock
 *
 * Were the removal recorded after the unlock, CPU1 could settle in between
 * and return with a writable entry alive (the 2017 race, domain.h).
 *
 * The unmapped frames wait in the CPU's batch (sim_frame.c) until the fold
 * names their key; a writable batch is flushed there, before any free (S3).
 */
#include "sim_internal.h"

/*
 * What the removed translation may still allow on some CPU: its PTE's rights,
 * or more while a protection change of the domain has lowered PTEs but not
 * yet flushed them (the kernel's pte_accessible() with mm_tlb_flush_pending()):
 *
 *   CPU0 (mprotect P read-only)           CPU1 (reclaim P)
 *   lock; PTE writable -> read-only;
 *   unlock                                lock; PTE read-only and clean:
 *                                         deferrable? CPU2 still caches it
 *                                         writable; unlock; free the frame
 *   flush CPU2 (too late: the frame
 *   is on a free list, CPU2 may write)
 */
static unsigned int sim_luf_flags(struct luf_sim *sim, unsigned int dom, uint64_t pte)
{
	if (atomic_load(&sim->doms[dom].flush_pending))
		return LUF_PTE_ACCESSIBLE | LUF_PTE_WRITABLE;
	return ((pte & SIM_PTE_ACCESS) ? LUF_PTE_ACCESSIBLE : 0) |
	       ((pte & SIM_PTE_W) ? LUF_PTE_WRITABLE : 0) | ((pte & SIM_PTE_D) ? LUF_PTE_DIRTY : 0);
}

/*
 * Record the removal of @pte from @dom (domain lock held, PTE already
 * cleared). The CPUs that may cache it are the domain's mask, read after
 * the clear. A flush error from a threshold fold leaves the removal
 * recorded and pending (luf_pcpu_defer()), so it is not an error here.
 */
static void sim_record_unmap(struct luf_sim *sim, unsigned int cpu, unsigned int dom, uint64_t pte)
{
	unsigned long *m = sim->cpus[cpu].mask;

	sim_copy_mask(sim, dom, m);
	(void)luf_unmap(sim->cpus[cpu].pc, sim->doms[dom].ld, m, sim_luf_flags(sim, dom, pte));
}

int luf_sim_reclaim(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page)
{
	struct sim_slot *s;
	uint64_t pte;
	int ret;

	if (!sim_cpu_ok(sim, cpu) || dom >= sim->cfg.nr_domains || page >= sim->cfg.nr_pages)
		return -EINVAL;
	sim_enter(sim, cpu);
	ret = sim_batch_room(sim, cpu, 1);
	if (ret)
		return sim_leave(sim, cpu, ret);
	s = sim_slot(sim, dom, page);
	sim_lock_dom(sim, dom);
	pte = sim_load(&s->pte);
	if (!(pte & SIM_PTE_PRESENT) || s->busy) {
		sim_unlock_dom(sim, dom);
		return sim_leave(sim, cpu, (pte & SIM_PTE_PRESENT) ? -EBUSY : -ENOENT);
	}
	sim_store(&s->pte, 0);
	s->busy = SIM_BUSY_RECLAIM;
	s->seq++;
	sim_record_unmap(sim, cpu, dom, pte);
	sim_unlock_dom(sim, dom);
	sim_batch_add(sim, cpu, sim_pte_frame(pte), dom, page, SIM_BATCH_RECLAIM);
	return sim_leave(sim, cpu, 0);
}

/* The PTE migration installs: the old one's rights, as the VMA allows them now. */
static uint64_t sim_migrated_pte(const struct sim_slot *s, uint64_t old, uint32_t frame)
{
	uint64_t pte = SIM_PTE_PRESENT | (old & SIM_PTE_D) | (uint64_t)frame << SIM_PTE_FRAME_SHIFT;

	if (s->prot != LUF_SIM_PROT_NONE && s->prot != SIM_PROT_UNMAPPED)
		pte |= SIM_PTE_ACCESS;
	if ((old & SIM_PTE_W) && s->prot == LUF_SIM_PROT_RW)
		pte |= SIM_PTE_W;
	return pte;
}

/*
 * Undo a migration whose abort failed to flush: put the old PTE back (the
 * same frame, so no stale entry can disagree with it) and free the target.
 */
static int sim_migrate_undo(struct luf_sim *sim, unsigned int cpu, unsigned int dom,
			    unsigned int page, uint64_t old, uint32_t target, int err)
{
	struct sim_slot *s = sim_slot(sim, dom, page);

	sim_lock_dom(sim, dom);
	sim_store(&s->pte, sim_migrated_pte(s, old, sim_pte_frame(old)));
	s->busy = SIM_IDLE;
	s->seq++;
	sim_unlock_dom(sim, dom);
	sim_free_frame(sim, cpu, target, 0);
	return err;
}

/*
 * Migration: unmap the page (recorded like any removal), cancel the
 * domain's deferrals (luf_abort_domain(LUF_ABORT_MOVE): no CPU may keep
 * writing, or reading, the old copy once the new one is mapped), copy,
 * remap, and free the old frame through the batch.
 */
int luf_sim_migrate(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		    unsigned int flags)
{
	struct sim_slot *s;
	uint32_t target, old_frame;
	uint64_t old, pte;
	int ret;

	if (!sim_cpu_ok(sim, cpu) || dom >= sim->cfg.nr_domains || page >= sim->cfg.nr_pages ||
	    (flags & ~LUF_SIM_F_ATOMIC))
		return -EINVAL;
	sim_enter(sim, cpu);
	s = sim_slot(sim, dom, page);
	if (!(sim_load(&s->pte) & SIM_PTE_PRESENT))
		return sim_leave(sim, cpu, -ENOENT);
	ret = sim_batch_room(sim, cpu, 1);
	if (!ret)
		ret = sim_alloc(sim, cpu, flags, &target);
	if (ret)
		return sim_leave(sim, cpu, ret);
	sim_lock_dom(sim, dom);
	old = sim_load(&s->pte);
	if (!(old & SIM_PTE_PRESENT) || s->busy) {
		sim_unlock_dom(sim, dom);
		sim_free_frame(sim, cpu, target, 0);
		return sim_leave(sim, cpu, -EAGAIN);
	}
	sim_store(&s->pte, 0);
	s->busy = SIM_BUSY_MIGRATE;
	s->seq++;
	sim_record_unmap(sim, cpu, dom, old);
	sim_unlock_dom(sim, dom);

	ret = luf_abort_domain(sim->cpus[cpu].pc, sim->doms[dom].ld, LUF_ABORT_MOVE);
	if (ret)
		return sim_leave(sim, cpu, sim_migrate_undo(sim, cpu, dom, page, old, target, ret));
	old_frame = sim_pte_frame(old);
	sim_frame_store(sim, cpu, target, sim_load(&sim->frames[old_frame].stamp),
			"the migration copy");

	sim_lock_dom(sim, dom);
	pte = sim_migrated_pte(s, old, target);
	sim_check_install(sim, UINT_MAX, dom, page, target, atomic_load(&s->obj),
			  (pte & SIM_PTE_W) != 0, "migration remap");
	sim_store(&s->pte, pte);
	s->busy = SIM_IDLE;
	s->seq++;
	sim_unlock_dom(sim, dom);
	sim_batch_add(sim, cpu, old_frame, dom, page, SIM_BATCH_MIGRATE);
	(void)sim_fold_free(sim, cpu); /* on a flush error the old frame waits in the batch */
	return sim_leave(sim, cpu, 0);
}

/*
 * munmap: every page of the range loses its VMA and its content; present
 * PTEs are cleared and recorded (read-only ones deferred), their frames
 * freed through the batch. A page stays busy until its frame's fold, so
 * nothing is mapped there while a writable entry may survive.
 */
int luf_sim_munmap(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		   unsigned int npages)
{
	uint32_t frames[LUF_SIM_MAX_RANGE], pages[LUF_SIM_MAX_RANGE];
	unsigned int n = 0;
	int ret;

	if (!sim_cpu_ok(sim, cpu) || !sim_range_ok(sim, dom, page, npages))
		return -EINVAL;
	sim_enter(sim, cpu);
	ret = sim_batch_room(sim, cpu, npages);
	if (ret)
		return sim_leave(sim, cpu, ret);
	sim_lock_dom(sim, dom);
	for (unsigned int i = 0; i < npages; i++) {
		if (sim_slot(sim, dom, page + i)->busy) {
			sim_unlock_dom(sim, dom);
			return sim_leave(sim, cpu, -EBUSY);
		}
	}
	for (unsigned int i = 0; i < npages; i++) {
		struct sim_slot *s = sim_slot(sim, dom, page + i);
		uint64_t pte = sim_load(&s->pte);

		if (s->prot == SIM_PROT_UNMAPPED)
			continue;
		s->prot = SIM_PROT_UNMAPPED;
		s->prot_gen++;
		s->seq++;
		s->swapped = 0;
		atomic_store(&s->obj, 0);
		if (!(pte & SIM_PTE_PRESENT)) {
			/* Nothing cached can write here: the protection is gone now. */
			atomic_store(&s->committed, SIM_PROT_UNMAPPED);
			continue;
		}
		sim_store(&s->pte, 0);
		s->busy = SIM_BUSY_MUNMAP;
		sim_record_unmap(sim, cpu, dom, pte);
		frames[n] = sim_pte_frame(pte);
		pages[n++] = page + i;
	}
	sim_unlock_dom(sim, dom);
	for (unsigned int i = 0; i < n; i++)
		sim_batch_add(sim, cpu, frames[i], dom, pages[i], SIM_BATCH_MUNMAP);
	(void)sim_fold_free(sim, cpu); /* a flush error: pages stay busy until a fold works */
	return sim_leave(sim, cpu, 0);
}
