// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/scenarios.c - the named races of the simulator's
 * issue, each a fixed sequence of operations on CPUs of the simulated
 * machine. Pages are written d<domain>:p<page>; F, G are frames.
 *
 * Each scenario records the checker's first violation and the first of
 * its own expectations that did not hold (an entry that should have been
 * flushed, an operation that should have failed). tests: with luf as
 * built, neither may happen; mutants: the checker must speak.
 */
#include "scen_util.h"

/*
 * (a) Reclaim vs mprotect (Linux 3ea277194daa): the race luf_domain_settle()
 * exists for. P = d0:p1.
 *
 *   CPU0 (reclaim)                         CPU1 (user, then mprotect)
 *                                          write P: writable, dirty entry
 *   reclaim P: clear the writable PTE,
 *   luf_unmap(): its flush is batched
 *                                          mprotect(P, PROT_READ): settles the
 *                                          domain (flushes CPU1); P's PTE is
 *                                          not present: nothing to change,
 *                                          no flush of its own
 *                                          write P: must fault, not go through
 *                                          the stale writable entry
 *   fold: flush what is left, free
 */
void scenario_a_mprotect_race(struct scen_result *res)
{
	struct luf_sim_config cfg = scen_cfg(2);
	struct scen s;

	scen_begin(&s, res, &cfg);
	if (!s.sim)
		return;
	scen_expect(&s, !luf_sim_write(s.sim, 1, 0, 1, 0), "CPU1's first write of P failed");
	scen_expect(&s, !luf_sim_reclaim(s.sim, 0, 0, 1), "reclaim of P failed");
	scen_expect(&s, tlb_frame(&s, 1, 1) >= 0, "CPU1 lost its entry before mprotect");
	scen_expect(&s, !luf_sim_mprotect(s.sim, 1, 0, 1, 1, LUF_SIM_PROT_READ), "mprotect failed");
	scen_expect(&s, tlb_frame(&s, 1, 1) < 0,
		    "CPU1 still caches P after mprotect: the domain was not settled");
	scen_expect(&s, luf_sim_write(s.sim, 1, 0, 1, 0) == -EFAULT,
		    "CPU1 wrote P after it became read-only");
	scen_expect(&s, !luf_sim_fold(s.sim, 0), "fold failed");
	scen_expect(&s, !luf_sim_read(s.sim, 1, 0, 1, 0, NULL), "P did not come back from swap");
	scen_end(&s);
}

/*
 * (b) Migration of a page whose old translation is still in use: a page
 * under a pending flush is copied while a CPU can still write the old copy.
 * P = d0:p2, R = d0:p3.
 *
 *   CPU0 (migration)                       CPU1, CPU2 (users)
 *                                          CPU1: write P (entry -> F, writable)
 *   migrate P: unmap (flush pending),
 *   luf_abort_domain(MOVE) flushes CPU1,
 *   copy F -> F2, remap P -> F2, free F
 *                                          CPU1: write P: must land in F2 (a
 *                                          write to F would be lost)
 *                                          CPU2: read R (entry -> G, read-only)
 *   migrate R to G2; write R: a write
 *   fault upgrades the PTE
 *                                          CPU2: read R: must see CPU0's write
 */
void scenario_b_migrate_writer(struct scen_result *res)
{
	struct luf_sim_config cfg = scen_cfg(3);
	struct scen s;
	int f, f2;

	scen_begin(&s, res, &cfg);
	if (!s.sim)
		return;
	scen_expect(&s, !luf_sim_write(s.sim, 1, 0, 2, 0), "CPU1's write of P failed");
	f = pte_frame(&s, 2);
	scen_expect(&s, !luf_sim_migrate(s.sim, 0, 0, 2, 0), "migration of P failed");
	f2 = pte_frame(&s, 2);
	scen_expect(&s, f2 >= 0 && f2 != f, "P was not moved to a new frame");
	scen_expect(&s, tlb_frame(&s, 1, 2) < 0, "CPU1 still maps P to frame %d", f);
	scen_expect(&s, !luf_sim_write(s.sim, 1, 0, 2, 0), "CPU1's second write of P failed");
	scen_expect(&s, tlb_frame(&s, 1, 2) == f2, "CPU1 wrote P somewhere else than frame %d", f2);
	scen_expect(&s, !luf_sim_read(s.sim, 2, 0, 3, 0, NULL), "CPU2's read of R failed");
	scen_expect(&s, !luf_sim_migrate(s.sim, 0, 0, 3, 0), "migration of R failed");
	scen_expect(&s, tlb_frame(&s, 2, 3) < 0, "CPU2 still maps R to its old frame");
	scen_expect(&s, !luf_sim_write(s.sim, 0, 0, 3, 0), "CPU0's write of R failed");
	scen_expect(&s, !luf_sim_read(s.sim, 2, 0, 3, 0, NULL), "CPU2's second read of R failed");
	scen_end(&s);
}

/*
 * (c) mremap moves a translation while a stale entry for a slot survives.
 * P = d0:p2 moves to Q = d0:p6 (part 1); R = d0:p9 moves to S = d0:p12,
 * then R is mapped again (part 2).
 *
 *   CPU0                                   CPU1
 *   read Q (entry -> F, read-only)
 *                                          reclaim Q, fold: F pend, CPU0's
 *                                          flush deferred; munmap Q
 *                                          write P (frame G)
 *                                          mremap P -> Q: settles the domain
 *   read Q: must read P's data from G,
 *   not Q's old data from F
 *   read R (entry -> H, read-only)
 *                                          reclaim R, fold; mremap R -> S
 *                                          mmap R again, write R (new page)
 *   read R: the new page, not H
 */
void scenario_c_mremap(struct scen_result *res)
{
	struct luf_sim_config cfg = scen_cfg(2);
	struct scen s;

	scen_begin(&s, res, &cfg);
	if (!s.sim)
		return;
	scen_expect(&s, !luf_sim_read(s.sim, 0, 0, 6, 0, NULL), "CPU0's read of Q failed");
	scen_expect(&s, !luf_sim_reclaim(s.sim, 1, 0, 6) && !luf_sim_fold(s.sim, 1),
		    "reclaim of Q failed");
	scen_expect(&s, tlb_frame(&s, 0, 6) >= 0, "CPU0's entry for Q was flushed: no deferral");
	scen_expect(&s, !luf_sim_munmap(s.sim, 1, 0, 6, 1), "munmap of Q failed");
	scen_expect(&s, !luf_sim_write(s.sim, 1, 0, 2, 0), "CPU1's write of P failed");
	scen_expect(&s, !luf_sim_mremap(s.sim, 1, 0, 2, 6, 1), "mremap P -> Q failed");
	scen_expect(&s, tlb_frame(&s, 0, 6) < 0, "CPU0 still caches Q's old page after mremap");
	scen_expect(&s, !luf_sim_read(s.sim, 0, 0, 6, 0, NULL), "CPU0's read of Q failed");
	scen_expect(&s, !luf_sim_read(s.sim, 0, 0, 9, 0, NULL), "CPU0's read of R failed");
	scen_expect(&s, !luf_sim_reclaim(s.sim, 1, 0, 9) && !luf_sim_fold(s.sim, 1),
		    "reclaim of R failed");
	scen_expect(&s, !luf_sim_munmap(s.sim, 1, 0, 12, 1), "munmap of S failed");
	scen_expect(&s, !luf_sim_mremap(s.sim, 1, 0, 9, 12, 1), "mremap R -> S failed");
	scen_expect(&s, !luf_sim_mmap(s.sim, 1, 0, 9, 1, LUF_SIM_PROT_RW), "mmap of R failed");
	scen_expect(&s, !luf_sim_write(s.sim, 1, 0, 9, 0), "CPU1's write of the new R failed");
	scen_expect(&s, !luf_sim_read(s.sim, 0, 0, 9, 0, NULL), "CPU0's read of R failed");
	scen_expect(&s, !luf_sim_read(s.sim, 0, 0, 12, 0, NULL), "CPU0's read of S failed");
	scen_end(&s);
}

/*
 * (d) A deferred-free frame written by another path: a file write,
 * poison-on-free, init-on-free. P = d0:p4, d0:p5, d0:p6 in turn.
 *
 *   CPU0                                   CPU1
 *   read P (entry -> F, read-only)
 *                                          reclaim P, fold: F on CPU1's pend
 *                                          list, CPU0's flush deferred
 *                                          write F by another path:
 *                                          luf_abort_key() first (flush CPU0)
 *   read P: must fault it back in from
 *   swap, never see the new bytes of F
 */
void scenario_d_free_frame_writes(struct scen_result *res)
{
	static const unsigned int causes[] = {LUF_ABORT_WRITE_OTHER, LUF_ABORT_POISON,
					      LUF_ABORT_INIT_ON_FREE};
	struct luf_sim_config cfg = scen_cfg(2);
	struct scen s;

	scen_begin(&s, res, &cfg);
	if (!s.sim)
		return;
	for (unsigned int i = 0; i < 3; i++) {
		unsigned int p = 4 + i;
		int f;

		scen_expect(&s, !luf_sim_read(s.sim, 0, 0, p, 0, NULL), "CPU0's read failed");
		f = tlb_frame(&s, 0, p);
		scen_expect(&s, !luf_sim_reclaim(s.sim, 1, 0, p) && !luf_sim_fold(s.sim, 1),
			    "reclaim failed");
		scen_expect(&s, f >= 0 && luf_sim_frame_state(s.sim, f) == LUF_SIM_FRAME_PEND,
			    "frame %d is not pend after the deferred reclaim", f);
		scen_expect(&s, tlb_frame(&s, 0, p) == f, "CPU0's stale entry is gone already");
		scen_expect(&s, f >= 0 && !luf_sim_frame_write(s.sim, 1, f, causes[i]),
			    "write of frame %d (cause %u) failed", f, causes[i]);
		scen_expect(&s, tlb_frame(&s, 0, p) < 0,
			    "CPU0 still translates to frame %d after it was written", f);
		scen_expect(&s, !luf_sim_read(s.sim, 0, 0, p, 0, NULL),
			    "CPU0's second read failed");
	}
	scen_end(&s);
}

/*
 * (e) A read-only deferred page faulted back in writable: the write-upgrade
 * abort. P = d0:p5 (part 1), Q = d0:p7 (part 2).
 *
 *   CPU0                                   CPU1
 *   read P (entry -> F, read-only)
 *                                          reclaim P, fold: F pend
 *                                          write P: fault in writable to F2,
 *                                          luf_abort_domain(WRITE_FAULT) first
 *   read P: the new version, from F2
 *   read Q (entry -> G); CPU2 too
 *                                          reclaim Q, fold; read Q: read
 *                                          fault to G2, no abort needed
 *   (still caches G: same data)
 *                                          write Q: read-only PTE -> upgrade,
 *                                          abort first
 *   read Q: the new version
 */
void scenario_e_write_upgrade(struct scen_result *res)
{
	struct luf_sim_config cfg = scen_cfg(3);
	struct scen s;
	long aborts;
	int g;

	scen_begin(&s, res, &cfg);
	if (!s.sim)
		return;
	scen_expect(&s, !luf_sim_read(s.sim, 0, 0, 5, 0, NULL), "CPU0's read of P failed");
	scen_expect(&s, !luf_sim_reclaim(s.sim, 1, 0, 5) && !luf_sim_fold(s.sim, 1),
		    "reclaim of P failed");
	aborts = luf_sim_stat(s.sim, LUF_STAT_ABORT + LUF_ABORT_WRITE_FAULT);
	scen_expect(&s, !luf_sim_write(s.sim, 1, 0, 5, 0), "CPU1's write of P failed");
	scen_expect(&s, luf_sim_stat(s.sim, LUF_STAT_ABORT + LUF_ABORT_WRITE_FAULT) > aborts,
		    "the write fault did not abort the deferral");
	scen_expect(&s, tlb_frame(&s, 0, 5) < 0, "CPU0 still caches P's old frame");
	scen_expect(&s, !luf_sim_read(s.sim, 0, 0, 5, 0, NULL), "CPU0's second read of P failed");
	scen_expect(
	    &s, !luf_sim_read(s.sim, 0, 0, 7, 0, NULL) && !luf_sim_read(s.sim, 2, 0, 7, 0, NULL),
	    "reads of Q failed");
	g = tlb_frame(&s, 0, 7);
	scen_expect(&s, !luf_sim_reclaim(s.sim, 1, 0, 7) && !luf_sim_fold(s.sim, 1),
		    "reclaim of Q failed");
	scen_expect(&s, !luf_sim_read(s.sim, 1, 0, 7, 0, NULL), "CPU1's read fault of Q failed");
	scen_expect(&s, g >= 0 && tlb_frame(&s, 0, 7) == g && pte_frame(&s, 7) != g,
		    "CPU0 should still cache Q's old frame %d after a read fault", g);
	scen_expect(&s, !luf_sim_write(s.sim, 1, 0, 7, 0), "CPU1's write of Q failed");
	scen_expect(&s, tlb_frame(&s, 0, 7) < 0 && tlb_frame(&s, 2, 7) < 0,
		    "a CPU still caches Q's old frame after the upgrade");
	scen_expect(
	    &s, !luf_sim_read(s.sim, 0, 0, 7, 0, NULL) && !luf_sim_read(s.sim, 2, 0, 7, 0, NULL),
	    "second reads of Q failed");
	scen_end(&s);
}
