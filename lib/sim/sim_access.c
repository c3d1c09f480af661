// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_access.c - reads, writes and faults.
 *
 * An access first looks in the CPU's TLB. A hit is used as it is, stale or
 * not: that is what hardware does, and what the checker watches. A miss (or
 * a write hitting a read-only entry) walks the page table under the domain
 * lock and fills the TLB; a page that is not present is faulted in, and a
 * write to a read-only PTE of a writable VMA is a write-upgrade fault.
 *
 * A write fault grants access the page did not have, so luf requires the
 * deferral cancelled first (docs/DESIGN.md 4.8): it calls
 * luf_abort_domain(LUF_ABORT_WRITE_FAULT) before it installs a writable
 * PTE, under the domain lock, as the kernel calls flush_tlb_batched_pending()
 * under the page-table lock. The race it closes, for a page reclaimed with
 * its flush deferred and faulted back in writable:
 *
 *   CPU0 (stale read-only entry -> F)     CPU1
 *                                         reclaim P: PTE cleared, flush of
 *                                         CPU0 deferred, F freed (pend)
 *                                         write P: fault in to frame F2,
 *                                         PTE writable, write version v+1
 *   read P: hits the stale entry, reads
 *   F: version v, after v+1 was written
 *
 * A read fault installs a read-only PTE and needs no abort: a stale entry
 * for an older copy of the same object reads the same data.
 */
#include "sim_internal.h"

enum {
	SIM_ACC_READ,	 /* load through the TLB */
	SIM_ACC_WRITE,	 /* store through the TLB */
	SIM_ACC_FAULT_R, /* make a readable entry, access nothing */
	SIM_ACC_FAULT_W, /* make a writable entry, access nothing */
};

/* sim_walk() results besides 0 (done) and -errno. */
enum { SIM_NEED_FAULT = 1, SIM_NEED_UPGRADE, SIM_RETRY };

static bool sim_mode_writes(int mode)
{
	return mode == SIM_ACC_WRITE || mode == SIM_ACC_FAULT_W;
}

/* A store through the writable entry @e (domain lock and own TLB lock held). */
static void sim_do_write(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
			 uint64_t e)
{
	struct sim_slot *s = sim_slot(sim, dom, page);
	uint32_t frame = sim_e_frame(e), obj = sim_e_obj(e), ver;
	uint64_t pte;

	sim_check_write(sim, cpu, dom, page, e);
	if (!sim_obj_version(sim, obj, &ver))
		ver = (uint32_t)sim_load(&sim->frames[frame].stamp);
	ver++;
	/* The frame before the table: see sim_check_read(). */
	sim_store(&sim->frames[frame].stamp, sim_stamp(obj, ver));
	sim_obj_set(sim, obj, ver);
	if (!(e & SIM_E_D))
		atomic_fetch_or(sim_ent(sim, cpu, sim_slot_id(sim, dom, page)), SIM_E_D);
	pte = sim_load(&s->pte);
	if ((pte & SIM_PTE_PRESENT) && sim_pte_frame(pte) == frame && !(pte & SIM_PTE_D))
		sim_store(&s->pte, pte | SIM_PTE_D);
}

/*
 * Walk and access: under the domain lock and the TLB lock, use or refill
 * @cpu's entry for the page and do the access of @mode.
 * Return: 0 (done), SIM_NEED_FAULT, SIM_NEED_UPGRADE, or -EFAULT (PROT_NONE).
 */
static int sim_walk(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		    int mode, uint64_t *stamp)
{
	struct sim_slot *s = sim_slot(sim, dom, page);
	uint32_t sid = sim_slot_id(sim, dom, page);
	bool w = sim_mode_writes(mode);
	uint64_t e, pte;
	int ret = 0;

	sim_lock_dom(sim, dom);
	sim_lock_tlb(sim, cpu);
	e = sim_load(sim_ent(sim, cpu, sid));
	if (!(e & SIM_E_VALID) || (w && !(e & SIM_E_W))) {
		pte = sim_load(&s->pte);
		if (!(pte & SIM_PTE_PRESENT))
			ret = SIM_NEED_FAULT;
		else if (!(pte & SIM_PTE_ACCESS))
			ret = -EFAULT;
		else if (w && !(pte & SIM_PTE_W))
			ret = SIM_NEED_UPGRADE;
		if (ret)
			goto out;
		sim_tlb_fill(sim, cpu, dom, sid, sim_pte_frame(pte), atomic_load(&s->obj), pte);
		e = sim_load(sim_ent(sim, cpu, sid));
	}
	if (mode == SIM_ACC_READ)
		sim_check_read(sim, cpu, dom, page, e, stamp);
	else if (mode == SIM_ACC_WRITE)
		sim_do_write(sim, cpu, dom, page, e);
out:
	sim_unlock_tlb(sim, cpu);
	sim_unlock_dom(sim, dom);
	return ret;
}

/* The content a fault installs (domain lock held): from swap, or a new zero page. */
static uint64_t sim_fault_content(struct luf_sim *sim, struct sim_slot *s)
{
	uint32_t obj = atomic_load(&s->obj), ver = 0;

	if (s->swapped) {
		s->swapped = 0;
		return sim_stamp(obj, s->swap_ver);
	}
	if (!obj) {
		obj = sim_obj_new(sim);
		atomic_store(&s->obj, obj);
	} else if (!sim_obj_version(sim, obj, &ver)) {
		ver = 0;
	}
	return sim_stamp(obj, ver);
}

/*
 * Fault a missing page in: allocate (may flush; no lock held), then under
 * the domain lock abort the domain's deferrals for a write (after the walk
 * saw the page missing, so every removal of it is already recorded: the
 * unmappers record theirs under this lock), install the PTE and fill @cpu's
 * TLB. Return: 0 (retry the access), SIM_RETRY (raced), or -errno.
 */
static int sim_fault_in(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
			bool write, unsigned int flags)
{
	struct sim_slot *s = sim_slot(sim, dom, page);
	uint32_t frame, seq;
	uint64_t stamp, pte;
	int ret = 0;

	sim_lock_dom(sim, dom);
	if (s->prot == SIM_PROT_UNMAPPED || s->prot == LUF_SIM_PROT_NONE ||
	    (write && s->prot != LUF_SIM_PROT_RW))
		ret = -EFAULT;
	else if (s->busy)
		ret = -EAGAIN;
	else if (sim_load(&s->pte) & SIM_PTE_PRESENT)
		ret = SIM_RETRY;
	seq = s->seq;
	sim_unlock_dom(sim, dom);
	if (ret)
		return ret;
	ret = sim_alloc(sim, cpu, flags, &frame);
	if (ret)
		return ret;
	sim_lock_dom(sim, dom);
	if (s->seq != seq)
		ret = SIM_RETRY;
	else if (write)
		ret = luf_abort_domain(sim->cpus[cpu].pc, sim->doms[dom].ld, LUF_ABORT_WRITE_FAULT);
	if (ret) {
		sim_unlock_dom(sim, dom);
		sim_free_frame(sim, cpu, frame, 0);
		return ret;
	}
	stamp = sim_fault_content(sim, s);
	sim_frame_store(sim, cpu, frame, stamp, "a fault's fill");
	pte = SIM_PTE_PRESENT | SIM_PTE_ACCESS | (uint64_t)frame << SIM_PTE_FRAME_SHIFT |
	      (write ? SIM_PTE_W : 0);
	sim_check_install(sim, cpu, dom, page, frame, (uint32_t)(stamp >> 32), write,
			  write ? "write fault" : "read fault");
	sim_store(&s->pte, pte);
	s->seq++;
	sim_lock_tlb(sim, cpu);
	sim_tlb_fill(sim, cpu, dom, sim_slot_id(sim, dom, page), frame, (uint32_t)(stamp >> 32),
		     pte);
	sim_unlock_tlb(sim, cpu);
	sim_unlock_dom(sim, dom);
	return 0;
}

/*
 * A write to a present read-only PTE of a writable VMA: under the domain
 * lock, abort the domain's deferrals, then make the PTE writable and fill
 * @cpu's TLB.
 */
static int sim_upgrade(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page)
{
	struct sim_slot *s = sim_slot(sim, dom, page);
	uint64_t pte;
	int ret = 0;

	sim_lock_dom(sim, dom);
	pte = sim_load(&s->pte);
	if (!(pte & SIM_PTE_PRESENT) || (pte & SIM_PTE_W))
		ret = SIM_RETRY;
	else if (!(pte & SIM_PTE_ACCESS) || s->prot != LUF_SIM_PROT_RW)
		ret = -EFAULT;
	else
		ret = luf_abort_domain(sim->cpus[cpu].pc, sim->doms[dom].ld, LUF_ABORT_WRITE_FAULT);
	if (!ret) {
		pte |= SIM_PTE_W;
		sim_check_install(sim, cpu, dom, page, sim_pte_frame(pte), atomic_load(&s->obj),
				  true, "write fault on a read-only PTE");
		sim_store(&s->pte, pte);
		s->seq++;
		sim_lock_tlb(sim, cpu);
		sim_tlb_fill(sim, cpu, dom, sim_slot_id(sim, dom, page), sim_pte_frame(pte),
			     atomic_load(&s->obj), pte);
		sim_unlock_tlb(sim, cpu);
	}
	sim_unlock_dom(sim, dom);
	return ret;
}

/* Access with faults; a few retries when another CPU changed the page meanwhile. */
static int sim_access(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		      int mode, unsigned int flags, uint64_t *stamp)
{
	for (int tries = 0; tries < 4; tries++) {
		int ret = sim_walk(sim, cpu, dom, page, mode, stamp);

		if (ret <= 0)
			return ret;
		if (ret == SIM_NEED_FAULT)
			ret = sim_fault_in(sim, cpu, dom, page, sim_mode_writes(mode), flags);
		else
			ret = sim_upgrade(sim, cpu, dom, page);
		if (ret < 0)
			return ret;
	}
	return -EAGAIN;
}

static bool sim_page_ok(const struct luf_sim *sim, unsigned int cpu, unsigned int dom,
			unsigned int page)
{
	return sim_cpu_ok(sim, cpu) && dom < sim->cfg.nr_domains && page < sim->cfg.nr_pages;
}

int luf_sim_read(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		 unsigned int flags, uint64_t *stamp)
{
	uint64_t e;

	if (!sim_page_ok(sim, cpu, dom, page) || (flags & ~LUF_SIM_F_ATOMIC))
		return -EINVAL;
	sim_enter(sim, cpu);
	/* A hit needs only the CPU's own TLB lock (the access is atomic with an IPI). */
	sim_lock_tlb(sim, cpu);
	e = sim_load(sim_ent(sim, cpu, sim_slot_id(sim, dom, page)));
	if (e & SIM_E_VALID)
		sim_check_read(sim, cpu, dom, page, e, stamp);
	sim_unlock_tlb(sim, cpu);
	if (e & SIM_E_VALID)
		return sim_leave(sim, cpu, 0);
	return sim_leave(sim, cpu, sim_access(sim, cpu, dom, page, SIM_ACC_READ, flags, stamp));
}

int luf_sim_write(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		  unsigned int flags)
{
	if (!sim_page_ok(sim, cpu, dom, page) || (flags & ~LUF_SIM_F_ATOMIC))
		return -EINVAL;
	sim_enter(sim, cpu);
	return sim_leave(sim, cpu, sim_access(sim, cpu, dom, page, SIM_ACC_WRITE, flags, NULL));
}

int luf_sim_fault(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		  unsigned int flags)
{
	int mode = (flags & LUF_SIM_F_WRITE) ? SIM_ACC_FAULT_W : SIM_ACC_FAULT_R;

	if (!sim_page_ok(sim, cpu, dom, page) || (flags & ~(LUF_SIM_F_WRITE | LUF_SIM_F_ATOMIC)))
		return -EINVAL;
	sim_enter(sim, cpu);
	return sim_leave(sim, cpu, sim_access(sim, cpu, dom, page, mode, flags, NULL));
}
