// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_frame.c - frames, their data, and the path from unmap to
 * luf's free list and back.
 *
 * A frame's data is one stamp: the object (an anonymous page's identity)
 * and the version last written to it. Objects get ids from a counter and
 * their newest version is kept in a table; a read compares what a frame
 * holds with the table and with what its TLB entry was filled for.
 *
 * Unmapped frames wait in their CPU's batch until luf_pcpu_fold() names
 * the key that covers their removals; they are then freed onto that CPU's
 * luf free list under that key (clean or pend). Allocations come from the
 * same list and are checked: S1 (no CPU may still translate to the frame)
 * and L1 (an allocation that may flush does not fail while pend frames
 * exist, never takes the reserve, and one that may not flush never does).
 */
#include "sim_internal.h"

/* ---- objects --------------------------------------------------------- */

uint32_t sim_obj_new(struct luf_sim *sim)
{
	unsigned long n = __luf_add_return(&sim->next_obj, 1);
	uint32_t id = (uint32_t)(1 + (n - 1) % (SIM_OBJ_SPECIAL - 1));

	sim_store(&sim->objtab[id & sim->objmask], sim_stamp(id, 0));
	return id;
}

/* The newest version of @obj; false if the table no longer holds it. */
bool sim_obj_version(struct luf_sim *sim, uint32_t obj, uint32_t *ver)
{
	uint64_t e;

	if (!obj || obj >= SIM_OBJ_SPECIAL)
		return false;
	e = sim_load(&sim->objtab[obj & sim->objmask]);
	if ((uint32_t)(e >> 32) != obj)
		return false;
	*ver = (uint32_t)e;
	return true;
}

/* Record version @ver of @obj (under its domain's lock), unless a newer object took the entry. */
void sim_obj_set(struct luf_sim *sim, uint32_t obj, uint32_t ver)
{
	_Atomic uint64_t *p = &sim->objtab[obj & sim->objmask];
	uint64_t e = sim_load(p);

	while ((uint32_t)(e >> 32) == obj) {
		if (atomic_compare_exchange_weak_explicit(
			p, &e, sim_stamp(obj, ver), memory_order_release, memory_order_acquire))
			break;
	}
}

/* ---- data written by paths other than a TLB entry ----------------------- */

/*
 * Store @stamp into @frame by a path other than a translation (a fault's
 * fill, a migration copy, a file write, poisoning, init-on-free, a free
 * list link). No CPU may translate to the frame then: a stale entry would
 * read the new data (S2).
 */
void sim_frame_store(struct luf_sim *sim, unsigned int cpu, uint32_t frame, uint64_t stamp,
		     const char *why)
{
	char what[128];

	snprintf(what, sizeof(what), "written by %s", why);
	sim_check_no_entries(sim, cpu, frame, false, LUF_SIM_S2, what);
	sim_store(&sim->frames[frame].stamp, stamp);
}

/* ---- allocation -------------------------------------------------------- */

/*
 * L1 for one allocation from a list that held @nc clean and @np pend frames:
 * one that may flush never fails while pend frames exist (unless its flush
 * failed) and never leaves fewer clean frames than min(reserve, @nc) (the
 * reserve is a floor under the clean frames there were, freelist.h); one
 * that may not flush fails only without a clean frame.
 */
static void sim_check_alloc_l1(struct luf_sim *sim, unsigned int cpu, unsigned int lflags, int ret,
			       unsigned long nc, unsigned long np, bool flush_failed)
{
	unsigned long res = sim->cfg.reserve;
	unsigned long left = luf_freelist_nr_clean(sim->cpus[cpu].fl);

	if (!ret) {
		if ((lflags & LUF_ALLOC_MAY_FLUSH) && left < (res < nc ? res : nc))
			sim_violation(sim, LUF_SIM_L1, cpu,
				      "an allocation that may flush took the reserve: %lu clean "
				      "frames left of %lu (reserve %lu, %lu pend)",
				      left, nc, res, np);
		return;
	}
	if (flush_failed)
		return; /* the flush's error, every pend frame still pend: allowed */
	if ((lflags & LUF_ALLOC_MAY_FLUSH) && (np || nc > res))
		sim_violation(
		    sim, LUF_SIM_L1, cpu,
		    "an allocation that may flush failed (%d) with %lu pend and %lu clean "
		    "frames (reserve %lu)",
		    ret, np, nc, res);
	else if (!(lflags & LUF_ALLOC_MAY_FLUSH) && nc)
		sim_violation(sim, LUF_SIM_L1, cpu,
			      "a no-flush allocation failed (%d) with %lu clean frames", ret, nc);
}

/*
 * Take a frame from @cpu's free list for a fault or a migration target.
 * @flags: LUF_SIM_F_ATOMIC (no flush allowed). Return: 0 and *@frame, or
 * luf_alloc()'s error.
 */
int sim_alloc(struct luf_sim *sim, unsigned int cpu, unsigned int flags, uint32_t *frame)
{
	struct sim_cpu *sc = &sim->cpus[cpu];
	unsigned int lflags = (flags & LUF_SIM_F_ATOMIC) ? 0 : LUF_ALLOC_MAY_FLUSH;
	unsigned long nc = luf_freelist_nr_clean(sc->fl), np = luf_freelist_nr_pend(sc->fl);
	unsigned long flushes = sim_tctx.flushes, failed = sim_tctx.flush_failed;
	struct luf_folio *lf = NULL;
	struct sim_frame *f;
	uint32_t id;
	int ret;

	ret = luf_alloc(sc->fl, sc->pc, lflags, &lf);
	if (!lflags && sim_tctx.flushes != flushes)
		sim_violation(sim, LUF_SIM_L1, cpu, "an allocation that may not flush flushed");
	sim_check_alloc_l1(sim, cpu, lflags, ret, nc, np, sim_tctx.flush_failed != failed);
	if (ret)
		return ret;
	f = luf_folio_entry(lf, struct sim_frame, lf);
	id = (uint32_t)(f - sim->frames);
	if (atomic_load(&f->state) != SIM_FRAME_FREE || atomic_load(&f->owner) != cpu)
		sim_violation(sim, LUF_SIM_S1, cpu,
			      "frame %u handed out by CPU %u's free list but not free there", id,
			      cpu);
	sim_check_no_entries(sim, cpu, id, false, LUF_SIM_S1, "handed out by luf_alloc()");
	atomic_store(&f->state, SIM_FRAME_IN_USE);
	*frame = id;
	return 0;
}

/*
 * Free @frame onto @cpu's list under @key (from luf_pcpu_fold(), or 0 for
 * a frame that was never mapped). Checks S3 (no writable or dirty entry
 * may survive a free) and that a clean frame has no entry at all (S1).
 */
void sim_free_frame(struct luf_sim *sim, unsigned int cpu, uint32_t frame, unsigned int key)
{
	struct sim_cpu *sc = &sim->cpus[cpu];
	struct sim_frame *f = &sim->frames[frame];
	int ret;

	atomic_store(&f->owner, cpu);
	atomic_store(&f->state, SIM_FRAME_FREE);
	ret = luf_free(sc->fl, sc->pc, &f->lf, key);
	if (ret) {
		sim_violation(sim, LUF_SIM_S1, cpu, "luf_free(frame %u, key %u) refused it: %d",
			      frame, key, ret);
		return;
	}
	sim_check_no_entries(sim, cpu, frame, true, LUF_SIM_S3,
			     "freed onto a free list (a writable translation was deferred)");
	if (f->lf.state == LUF_FOLIO_CLEAN)
		sim_check_no_entries(sim, cpu, frame, false, LUF_SIM_S1,
				     "put on the clean list (no flush owed)");
	if (sim->cfg.options & LUF_SIM_OPT_LINK_IN_FRAME)
		sim_frame_store(sim, cpu, frame, sim_stamp(SIM_OBJ_LINK, frame),
				"the free list's link word (kept in the frame's bytes)");
}

/* ---- the batch of unmapped frames ----------------------------------------- */

/* Make room for @need entries in @cpu's batch, folding it if needed. */
int sim_batch_room(struct luf_sim *sim, unsigned int cpu, unsigned int need)
{
	if (sim->cpus[cpu].nr_batch + need <= SIM_BATCH_MAX)
		return 0;
	return sim_fold_free(sim, cpu);
}

int sim_batch_add(struct luf_sim *sim, unsigned int cpu, uint32_t frame, unsigned int dom,
		  unsigned int page, unsigned int kind)
{
	struct sim_cpu *sc = &sim->cpus[cpu];
	struct sim_batch_ent *be;

	if (sc->nr_batch >= SIM_BATCH_MAX)
		return -ENOSPC;
	be = &sc->batch[sc->nr_batch++];
	be->frame = frame;
	be->dom = dom;
	be->page = page;
	be->kind = kind;
	atomic_store(&sim->frames[frame].owner, cpu);
	atomic_store(&sim->frames[frame].state, SIM_FRAME_BATCHED);
	return 0;
}

/* The frame's page is gone for good (reclaim: to swap; munmap: unmapped). */
static void sim_batch_release_page(struct luf_sim *sim, const struct sim_batch_ent *be)
{
	struct sim_slot *s = sim_slot(sim, be->dom, be->page);

	sim_lock_dom(sim, be->dom);
	if (be->kind == SIM_BATCH_RECLAIM) {
		s->swapped = 1;
		s->swap_ver = (uint32_t)sim_load(&sim->frames[be->frame].stamp);
	} else if (s->prot == SIM_PROT_UNMAPPED) {
		/* munmap: every writable entry is gone now (the fold flushed it). */
		atomic_store(&s->committed, SIM_PROT_UNMAPPED);
	}
	s->busy = SIM_IDLE;
	s->seq++;
	sim_unlock_dom(sim, be->dom);
}

/*
 * Fold @cpu's batch (luf_pcpu_fold(): a writable one is flushed here) and
 * free its frames under the key it names. On a flush error nothing is
 * freed and the batch stays for the next fold.
 */
int sim_fold_free(struct luf_sim *sim, unsigned int cpu)
{
	struct sim_cpu *sc = &sim->cpus[cpu];
	unsigned short key = 0;
	int ret;

	ret = luf_pcpu_fold(sc->pc, &key);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < sc->nr_batch; i++) {
		const struct sim_batch_ent *be = &sc->batch[i];

		if (be->kind != SIM_BATCH_MIGRATE)
			sim_batch_release_page(sim, be);
		sim_free_frame(sim, cpu, be->frame, key);
	}
	sc->nr_batch = 0;
	return 0;
}

int luf_sim_fold(struct luf_sim *sim, unsigned int cpu)
{
	if (!sim_cpu_ok(sim, cpu))
		return -EINVAL;
	sim_enter(sim, cpu);
	return sim_leave(sim, cpu, sim_fold_free(sim, cpu));
}

/* ---- writes by another path into a free frame ------------------------------ */

int luf_sim_frame_write(struct luf_sim *sim, unsigned int cpu, unsigned int frame,
			unsigned int cause)
{
	static const char *const why[] = {
	    [LUF_ABORT_WRITE_OTHER] = "a file write",
	    [LUF_ABORT_POISON] = "poison-on-free",
	    [LUF_ABORT_INIT_ON_FREE] = "init-on-free",
	};
	struct sim_frame *f;
	uint64_t stamp;
	int ret;

	if (!sim_cpu_ok(sim, cpu) || frame >= sim->cfg.nr_frames)
		return -EINVAL;
	if (cause != LUF_ABORT_WRITE_OTHER && cause != LUF_ABORT_POISON &&
	    cause != LUF_ABORT_INIT_ON_FREE)
		return -EINVAL;
	sim_enter(sim, cpu);
	f = &sim->frames[frame];
	if (atomic_load(&f->state) != SIM_FRAME_FREE || atomic_load(&f->owner) != cpu)
		return sim_leave(sim, cpu, -ENOENT);
	/* Cancel the deferral first: the stale read-only entries must not see the write. */
	ret = luf_abort_key(sim->cpus[cpu].pc, f->lf.key, (enum luf_abort_cause)cause);
	if (ret)
		return sim_leave(sim, cpu, ret);
	if (cause == LUF_ABORT_POISON)
		stamp = sim_stamp(SIM_OBJ_POISON, 0x6b6b6b6bu);
	else if (cause == LUF_ABORT_INIT_ON_FREE)
		stamp = sim_stamp(SIM_OBJ_ZERO, 0);
	else
		stamp = sim_stamp(SIM_OBJ_FILE, (uint32_t)luf_sim_nr_ops(sim));
	sim_frame_store(sim, cpu, frame, stamp, why[cause]);
	return sim_leave(sim, cpu, 0);
}
