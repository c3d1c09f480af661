// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/scenarios_more.c - the named scenarios about luf's
 * own bookkeeping (ugen wrap, key collisions, the reserve) and the basic
 * reclaim cycle, plus the table of all scenarios.
 */
#include "scen_util.h"

unsigned int scen_options;

/* Any CPU's free list still holding pend frames? */
static bool any_pend(struct scen *s, unsigned int cpus)
{
	for (unsigned int c = 0; c < cpus; c++)
		if (pend_of(s, c))
			return true;
	return false;
}

/*
 * (f) The ugen wraps around (ULONG_MAX to 1) in the middle of pending sets:
 * the instance starts at ULONG_MAX - 50, and 120 rounds of reads on three
 * CPUs, a deferred reclaim and fold on the fourth, context switches and
 * write faults push it past the wrap while frames wait on pend lists.
 *
 *   CPU c, c+1, c+2                        CPU c+3
 *   read P (entries, read-only)
 *                                          reclaim P, fold: P's frame pend,
 *                                          stamped just below the wrap
 *   ... ugens wrap: flushes now mark done with small values ...
 *                                          fault a page in: allocation must
 *                                          still see the pend frame as owed
 *                                          (done >= stamp, compared wrap-safe)
 */
void scenario_f_ugen_wrap(struct scen_result *res)
{
	struct luf_sim_config cfg = scen_cfg(4);
	bool wrapped_with_pend = false;
	unsigned long start;
	struct scen s;

	cfg.nr_frames = 24;
	cfg.ugen_start = ULONG_MAX - 50;
	start = cfg.ugen_start;
	scen_begin(&s, res, &cfg);
	if (!s.sim)
		return;
	for (unsigned int r = 0; r < 120; r++) {
		unsigned int p = r % 16, c = r % 4, other = (c + 3) % 4;
		unsigned long now;

		for (unsigned int k = 0; k < 3; k++)
			luf_sim_read(s.sim, (c + k) % 4, 0, p, 0, NULL);
		luf_sim_reclaim(s.sim, other, 0, p);
		luf_sim_fold(s.sim, other);
		if (r % 5 == 4)
			luf_sim_ctx_switch(s.sim, c);
		if (r % 7 == 6)
			luf_sim_write(s.sim, c, 0, (p + 5) % 16, 0);
		now = luf_ugen_current(&luf_sim_luf(s.sim)->ugen);
		if (now < start && any_pend(&s, 4))
			wrapped_with_pend = true;
	}
	scen_expect(&s, luf_ugen_current(&luf_sim_luf(s.sim)->ugen) < start,
		    "the ugen did not wrap");
	scen_expect(&s, wrapped_with_pend, "no frame was pend across the wrap");
	scen_end(&s);
}

/*
 * (g) Key table collisions: 4 keys (3 usable) shared by the batches of 8
 * CPUs, so many folios reach one key entry, whose set only grows by folds
 * (conservative: a flush may cover more than one batch needed).
 *
 *   CPU r, CPU r+3                         CPU r (reclaimer of round r)
 *   read 4 pages (entries)
 *                                          reclaim them, fold: key k; a later
 *                                          round's fold lands on the same key
 *                                          and folds its CPUs in
 *   fault pages in: allocations flush
 *   the union, never hand out a frame
 *   a CPU of either batch still caches
 */
void scenario_g_keytab_collisions(struct scen_result *res)
{
	struct luf_sim_config cfg = scen_cfg(8);
	struct scen s;

	cfg.nr_keys = 4;
	cfg.nr_pages = 32;
	cfg.nr_frames = 40;
	cfg.fold_threshold = 2;
	scen_begin(&s, res, &cfg);
	if (!s.sim)
		return;
	for (unsigned int r = 0; r < 40; r++) {
		unsigned int reclaimer = r % 8;

		for (unsigned int k = 0; k < 4; k++) {
			unsigned int p = (r * 4 + k) % 32;

			luf_sim_read(s.sim, (r + k) % 8, 0, p, 0, NULL);
			luf_sim_read(s.sim, (r + k + 3) % 8, 0, p, 0, NULL);
		}
		for (unsigned int k = 0; k < 4; k++)
			luf_sim_reclaim(s.sim, reclaimer, 0, (r * 4 + k) % 32);
		luf_sim_fold(s.sim, reclaimer);
		if (r % 4 == 3)
			luf_sim_ctx_switch(s.sim, (r + 1) % 8);
	}
	scen_expect(&s, luf_sim_stat(s.sim, LUF_STAT_FOLD) > 9L,
		    "too few folds (%ld) for the 3 keys to collide",
		    luf_sim_stat(s.sim, LUF_STAT_FOLD));
	scen_expect(&s, luf_sim_stat(s.sim, LUF_STAT_FREE_PEND) > 0, "no frame was freed pend");
	scen_expect(&s, luf_sim_stat(s.sim, LUF_STAT_ALLOC_FLUSH) > 0,
		    "no allocation had to flush");
	scen_end(&s);
}

/*
 * (h) Reserve exhaustion: only pend frames are left on CPU1's free list.
 * Reserve 2; CPU1 owns frames 1, 3, 5, 7.
 *
 *   CPU0                                   CPU1
 *                                          fault p0..p3 in (no-flush
 *                                          allocations may take the reserve)
 *   read p0..p3 (entries)
 *                                          reclaim p0..p3, fold: 4 pend frames
 *                                          fault p4, no flush: -EAGAIN
 *                                          fault p4, flush fails: -EIO, all
 *                                          frames still pend, nothing marked
 *                                          fault p4, no flush: -EAGAIN again
 *   (flushed: IPI)                         fault p4, may flush: one flush for
 *                                          all four, then 3 clean frames
 *                                          fault p5: 2 clean left = reserve
 *                                          fault p6, may flush: -ENOMEM
 *                                          fault p6, no flush: the reserve
 */
void scenario_h_reserve(struct scen_result *res)
{
	struct luf_sim_config cfg = scen_cfg(2);
	unsigned long ipis;
	struct scen s;

	cfg.nr_frames = 8;
	cfg.reserve = 2;
	scen_begin(&s, res, &cfg);
	if (!s.sim)
		return;
	for (unsigned int p = 0; p < 4; p++) {
		scen_expect(&s, !luf_sim_read(s.sim, 1, 0, p, LUF_SIM_F_ATOMIC, NULL),
			    "CPU1's fault of p%u failed", p);
		scen_expect(&s, !luf_sim_read(s.sim, 0, 0, p, 0, NULL), "CPU0's read failed");
	}
	for (unsigned int p = 0; p < 4; p++)
		scen_expect(&s, !luf_sim_reclaim(s.sim, 1, 0, p), "reclaim of p%u failed", p);
	scen_expect(&s, !luf_sim_fold(s.sim, 1), "fold failed");
	scen_expect(&s, clean_of(&s, 1) == 0 && pend_of(&s, 1) == 4,
		    "CPU1 should hold 4 pend frames, not %lu clean and %lu pend", clean_of(&s, 1),
		    pend_of(&s, 1));
	scen_expect(&s, luf_sim_read(s.sim, 1, 0, 4, LUF_SIM_F_ATOMIC, NULL) == -EAGAIN,
		    "a no-flush allocation did not fail with only pend frames");
	luf_sim_fail_flushes(s.sim, 1);
	scen_expect(&s, luf_sim_read(s.sim, 1, 0, 4, 0, NULL) == -EIO,
		    "the allocation's failed flush was not reported");
	scen_expect(&s, pend_of(&s, 1) == 4 && tlb_frame(&s, 0, 0) >= 0,
		    "a failed flush changed the pend list or the TLBs");
	scen_expect(&s, luf_sim_read(s.sim, 1, 0, 4, LUF_SIM_F_ATOMIC, NULL) == -EAGAIN,
		    "after a failed flush, a no-flush allocation took a pend frame");
	ipis = luf_sim_ipis(s.sim, 0);
	scen_expect(&s, !luf_sim_read(s.sim, 1, 0, 4, 0, NULL), "the flushing allocation failed");
	scen_expect(&s, luf_sim_ipis(s.sim, 0) == ipis + 1 && tlb_frame(&s, 0, 0) < 0,
		    "CPU0 was not flushed exactly once");
	scen_expect(&s, clean_of(&s, 1) == 3 && pend_of(&s, 1) == 0,
		    "the pend frames did not all become clean");
	scen_expect(&s, !luf_sim_read(s.sim, 1, 0, 5, 0, NULL), "fault of p5 failed");
	scen_expect(&s, luf_sim_read(s.sim, 1, 0, 6, 0, NULL) == -ENOMEM,
		    "a caller that may flush was given the reserve");
	scen_expect(&s, !luf_sim_read(s.sim, 1, 0, 6, LUF_SIM_F_ATOMIC, NULL),
		    "a no-flush caller was refused the reserve");
	scen_end(&s);
}

/*
 * (r) The basic reclaim cycle: a writable removal is flushed before its
 * frame is freed, a read-only one is deferred. P = d0:p0, Q = d0:p1.
 *
 *   CPU0 (reclaim)                         CPU1, CPU2
 *                                          CPU1: write P (writable, dirty)
 *                                          CPU2: read Q, R (read-only)
 *   reclaim P and Q, fold: the batch is
 *   writable: flush CPU1 (IPI) and CPU2,
 *   both frames clean
 *                                          CPU2: read R (read-only)
 *   reclaim R (only CPU2 read it), fold:
 *   deferred, no IPI, R's frame pend
 *                                          CPU2: read R through the stale
 *                                          entry: old data, still intact
 *   write R: write fault, abort: CPU2
 *   flushed now
 */
void scenario_r_reclaim_basic(struct scen_result *res)
{
	struct luf_sim_config cfg = scen_cfg(3);
	unsigned long ipi1, ipi2;
	struct scen s;
	int fp, fr;

	scen_begin(&s, res, &cfg);
	if (!s.sim)
		return;
	scen_expect(&s, !luf_sim_write(s.sim, 1, 0, 0, 0), "CPU1's write of P failed");
	scen_expect(&s, !luf_sim_read(s.sim, 2, 0, 1, 0, NULL), "CPU2's read of Q failed");
	scen_expect(&s, !luf_sim_read(s.sim, 2, 0, 2, 0, NULL), "CPU2's read of R failed");
	fp = pte_frame(&s, 0);
	fr = pte_frame(&s, 2);
	ipi1 = luf_sim_ipis(s.sim, 1);
	scen_expect(&s, !luf_sim_reclaim(s.sim, 0, 0, 0) && !luf_sim_reclaim(s.sim, 0, 0, 1),
		    "reclaim of P or Q failed");
	scen_expect(&s, !luf_sim_fold(s.sim, 0), "fold failed");
	scen_expect(&s, luf_sim_ipis(s.sim, 1) == ipi1 + 1,
		    "the writable removal was not flushed before the free");
	scen_expect(&s, luf_sim_frame_state(s.sim, fp) == LUF_SIM_FRAME_CLEAN,
		    "P's frame is not clean after the writable batch's flush");
	scen_expect(&s, !luf_sim_read(s.sim, 2, 0, 2, 0, NULL), "CPU2's refill of R failed");
	ipi2 = luf_sim_ipis(s.sim, 2);
	scen_expect(&s, !luf_sim_reclaim(s.sim, 0, 0, 2) && !luf_sim_fold(s.sim, 0),
		    "reclaim of R failed");
	scen_expect(&s, luf_sim_ipis(s.sim, 2) == ipi2, "the read-only removal was not deferred");
	scen_expect(&s, luf_sim_frame_state(s.sim, fr) == LUF_SIM_FRAME_PEND,
		    "R's frame is not pend");
	scen_expect(&s, tlb_frame(&s, 2, 2) == fr, "CPU2 lost its stale entry for R");
	scen_expect(&s, !luf_sim_read(s.sim, 2, 0, 2, 0, NULL), "CPU2's stale read of R failed");
	scen_expect(&s, !luf_sim_write(s.sim, 0, 0, 2, 0), "CPU0's write of R failed");
	scen_expect(&s, tlb_frame(&s, 2, 2) < 0, "CPU2 still caches R's old frame");
	scen_expect(&s, !luf_sim_read(s.sim, 2, 0, 2, 0, NULL), "CPU2's read of the new R failed");
	scen_end(&s);
}

const struct scenario scenarios[] = {
    {"a_mprotect_race", scenario_a_mprotect_race},
    {"b_migrate_writer", scenario_b_migrate_writer},
    {"c_mremap", scenario_c_mremap},
    {"d_free_frame_writes", scenario_d_free_frame_writes},
    {"e_write_upgrade", scenario_e_write_upgrade},
    {"f_ugen_wrap", scenario_f_ugen_wrap},
    {"g_keytab_collisions", scenario_g_keytab_collisions},
    {"h_reserve", scenario_h_reserve},
    {"r_reclaim_basic", scenario_r_reclaim_basic},
};

const unsigned int nr_scenarios = sizeof(scenarios) / sizeof(scenarios[0]);
