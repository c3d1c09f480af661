// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_policy.c - the policies and the safety checker.
 *
 *   immediate  one flush per call that removed an accessible translation,
 *              of the address space's CPUs, before the call returns;
 *   batched    the kernel's batched unmap flush (mm/rmap.c) on a task's run
 *              of consecutive unmap calls (munmap, madvise, brk shrink):
 *              B1 set_tlb_ubc_flush_pending() at each removal (rp_removal()),
 *              B2 try_to_unmap_flush() at the batch end (rp_batch_end()),
 *              B3 flush_tlb_batched_pending() before another task changes
 *              the mm's entries (rp_pending()), B4 a reuse or upgrade that
 *              meets a range still owed flushes it first (rp_reuse());
 *   luf        the library (rp_luf.c): read-only removals deferred, diet,
 *              per-CPU batching, luf_abort_domain() at reuse and upgrade;
 *   oracle     the offline minimum: a flush only where a reuse, upgrade or
 *              batch end meets a translation that is still stale, and then
 *              one flush of every stale CPU. Each removal must be flushed
 *              within [its tick, its first conflict point]; flushing
 *              everything at the earliest such deadline not yet covered is
 *              the classic optimal stabbing of intervals, so no safe policy
 *              can use fewer flush operations (rp_bound.h counts that bound
 *              and the fewest CPU flushes, which the oracle does not reach).
 *
 * Checker (the equivalent of lib/sim's, on this model): at every reuse
 * (S1), upgrade (S2) and batch end (S3), each policy's per-CPU flush ticks
 * must be newer than the removal ticks of the range; luf's done[] counters
 * must never go back (S4, in rp_luf.c).
 */
#include <stdlib.h>
#include <string.h>

#include "rp_model.h"

_Static_assert(sizeof(unsigned long) == 8, "CPU masks assume 64-bit words");

const char *rp_pol_name(enum rp_pol_id p)
{
	static const char *const n[RP_NPOL] = {"immediate", "batched", "luf", "oracle"};

	return (unsigned int)p < RP_NPOL ? n[p] : "?";
}

const char *rp_cause_name(enum rp_cause c)
{
	static const char *const n[RP_NCAUSES] = {"call",    "batch-end", "pending", "reuse",
						  "upgrade", "writable",  "unmap"};

	return (unsigned int)c < RP_NCAUSES ? n[c] : "?";
}

const char *rp_rule_name(enum rp_rule r)
{
	static const char *const n[RP_NRULES] = {"S1", "S2", "S3", "S4"};

	return (unsigned int)r < RP_NRULES ? n[r] : "?";
}

void rp_pol_flush(struct rp_model *m, enum rp_pol_id p, unsigned int caller,
		  const unsigned long *mask, unsigned long long pages)
{
	struct rp_pol *pol = &m->pol[p];
	unsigned int self = 0, others = 0;
	uint64_t t;

	for (unsigned int w = 0; w < m->words; w++)
		others += (unsigned int)__builtin_popcountl(mask[w]);
	if (!others)
		return;
	t = ++m->tick;
	for (unsigned int w = 0; w < m->words; w++)
		for (unsigned long b = mask[w]; b; b &= b - 1)
			pol->done[w * 64 + (unsigned int)__builtin_ctzl(b)] = t;
	if (rp_mask_test(mask, caller)) {
		self = 1;
		others--;
		if (pages && pages <= RP_FLUSH_CEILING)
			pol->c.local_one += pages;
		else
			pol->c.local_all++;
	}
	if (others) {
		pol->c.remote++;
		pol->c.received += others;
	}
	pol->c.flushes++;
	pol->c.cpus += self + others;
	pol->c.by_cause[m->cause]++;
	if (m->explain) {
		fprintf(m->explain,
			"flush %-9s %-9s line %-7lu pid %-7ld %-9s cpu %-4u remote %-4u cpus",
			rp_pol_name(p), rp_cause_name(m->cause), m->line, m->pid,
			m->what ? m->what : "-", caller, others);
		for (unsigned int c = 0; c < m->nr_cpus; c++)
			if (rp_mask_test(mask, c)) {
				unsigned int e = c;

				while (e + 1 < m->nr_cpus && rp_mask_test(mask, e + 1))
					e++;
				fprintf(m->explain, e > c ? " %u-%u" : " %u", c, e);
				c = e;
			}
		fputc('\n', m->explain);
	}
}

/* Oracle: one flush of every CPU that holds anything stale. */
static void oracle_flush_all(struct rp_model *m, unsigned int caller)
{
	struct rp_pol *o = &m->pol[RP_ORACLE];

	memset(m->scratch, 0, m->words * sizeof(unsigned long));
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		if (m->last_removal[c] > o->done[c])
			rp_mask_set(m->scratch, c);
	rp_pol_flush(m, RP_ORACLE, caller, m->scratch, 0);
}

/* Is any CPU of @mask stale for policy @p since @tick? */
static int mask_stale(const struct rp_model *m, enum rp_pol_id p, const unsigned long *mask,
		      uint64_t tick)
{
	const uint64_t *done = m->pol[p].done;

	for (unsigned int w = 0; w < m->words; w++)
		for (unsigned long b = mask[w]; b; b &= b - 1)
			if (done[w * 64 + (unsigned int)__builtin_ctzl(b)] < tick)
				return 1;
	return 0;
}

static int ticks_stale(const struct rp_model *m, enum rp_pol_id p, const uint64_t *tick)
{
	const uint64_t *done = m->pol[p].done;

	for (unsigned int c = 0; c < m->nr_cpus; c++)
		if (tick[c] > done[c])
			return 1;
	return 0;
}

/* Drop stale ranges every policy has flushed (only when there are many). */
static void stale_gc(struct rp_model *m, struct rp_mm *mm)
{
	size_t k = 0;

	for (size_t i = 0; i < mm->stale.n; i++) {
		struct rp_iv *iv = rp_iv_at(&mm->stale, i);
		int keep = 0;

		for (int p = 0; p < RP_NPOL && !keep; p++)
			keep = ticks_stale(m, (enum rp_pol_id)p, rp_iv_val(iv));
		for (unsigned int c = 0; c < m->nr_cpus && !keep; c++)
			keep =
			    !rp_bound_covered(&m->bound, c, ((const uint64_t *)rp_iv_val(iv))[c]);
		if (keep) {
			if (k != i)
				memcpy(rp_iv_at(&mm->stale, k), iv, mm->stale.stride);
			k++;
		}
	}
	mm->stale.n = k;
	mm->stale_gc = k;
}

int rp_removal(struct rp_model *m, struct rp_task *t, unsigned long start, unsigned long end,
	       unsigned long prot, int force_flush)
{
	struct rp_mm *mm = t->mm;
	int accessible = (prot & (RP_PROT_READ | RP_PROT_WRITE | RP_PROT_EXEC)) != 0;
	int writable = accessible && ((prot & RP_PROT_WRITE) || force_flush);
	uint64_t tk, *val;
	size_t i, j;
	unsigned long at;

	if (start >= end)
		return 0;
	m->st.removals++;
	if (!accessible) {
		m->cause = RP_C_UNMAP;
		rp_luf_unmap(m, t, 0, 0);
		return 0; /* inaccessible: nothing cached, nothing owed */
	}
	tk = ++m->tick; /* before luf runs: a flush it does now covers this removal */
	/* batched, B1: set_tlb_ubc_flush_pending() */
	mm->bat_tick = tk;
	mm->bat_open = t;
	mm->bat_gen++;
	memcpy(mm->bat_cpus, mm->cpus, m->words * sizeof(unsigned long));
	m->cause = RP_C_UNMAP;
	rp_luf_unmap(m, t, accessible, writable);
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		if (rp_mask_test(mm->cpus, c))
			m->last_removal[c] = tk;
	/* stale ranges: the newest removal tick per CPU */
	if (rp_ivmap_cut(&mm->stale, start, end, &i, &j))
		return -1;
	at = start;
	val = m->tscratch;
	for (size_t k = i; k <= j && at < end; k++) {
		unsigned long gap_end = k < j ? rp_iv_at(&mm->stale, k)->start : end;

		if (at < gap_end) { /* a hole: a new range, ticks only on mm's CPUs */
			uint64_t *nv;
			struct rp_iv *iv = rp_ivmap_insert(&mm->stale, k, at, gap_end, val);

			if (!iv)
				return -1;
			nv = rp_iv_val(iv);
			for (unsigned int c = 0; c < m->nr_cpus; c++)
				nv[c] = rp_mask_test(mm->cpus, c) ? tk : 0;
			k++;
			j++;
		}
		if (k < j) {
			struct rp_iv *iv = rp_iv_at(&mm->stale, k);
			uint64_t *v = rp_iv_val(iv);

			for (unsigned int c = 0; c < m->nr_cpus; c++)
				if (rp_mask_test(mm->cpus, c))
					v[c] = tk;
			at = iv->end;
		} else {
			at = end;
		}
	}
	if (mm->stale.n > m->st.peak_stale)
		m->st.peak_stale = mm->stale.n;
	if (mm->stale.n > 65536 && mm->stale.n > 2 * mm->stale_gc)
		stale_gc(m, mm);
	/* immediate: flushed at the end of this call's removals */
	t->imm_any = 1;
	t->imm_pages += (end - start) / RP_PAGE;
	/* batched: into the task's open batch */
	t->bat_tick = tk;
	for (unsigned int w = 0; w < m->words; w++)
		t->bat_mask[w] |= mm->cpus[w];
	/* checker: a writable entry must be gone when the batch ends (S3) */
	if (writable) {
		t->wr_tick = tk;
		for (unsigned int w = 0; w < m->words; w++)
			t->wr_mask[w] |= mm->cpus[w];
	}
	return 0;
}

void rp_removals_done(struct rp_model *m, struct rp_task *t)
{
	m->cause = RP_C_CALL;
	if (t->imm_any)
		rp_pol_flush(m, RP_IMMEDIATE, t->cpu, t->mm->cpus, t->imm_pages);
	t->imm_any = 0;
	t->imm_pages = 0;
}

/*
 * batched, B3: flush_tlb_batched_pending(mm), which zap_pte_range() (munmap,
 * madvise, mmap over a mapping, brk shrink), change_pte_range() (mprotect)
 * and move_ptes() (mremap) call before changing the mm's entries: if a
 * batched removal of the mm is pending, flush_tlb_mm(): the mm's CPUs now.
 * The kernel's "pending" is a generation count that only this function
 * marks flushed; the model flushes only if a CPU of the newest removal
 * (the mm's CPUs then) has not flushed since, and counts the kernel's other
 * flushes in st.bat_redundant. @t's own open batch does not trigger it (the
 * batch stands for a reclaim pass, which does not go through these paths).
 */
void rp_pending(struct rp_model *m, struct rp_task *t)
{
	struct rp_mm *mm = t->mm;

	if (mm->bat_gen == mm->bat_gen_flushed || mm->bat_open == t)
		return;
	if (mask_stale(m, RP_BATCHED, mm->bat_cpus, mm->bat_tick)) {
		m->cause = RP_C_PENDING;
		rp_pol_flush(m, RP_BATCHED, t->cpu, mm->cpus, 0);
	} else {
		m->st.bat_redundant++;
	}
	mm->bat_gen_flushed = mm->bat_gen;
}

int rp_reuse(struct rp_model *m, struct rp_task *t, unsigned long start, unsigned long end,
	     int upgrade)
{
	struct rp_mm *mm = t->mm;
	size_t i = rp_ivmap_lower(&mm->stale, start), j, k;
	int conflict[RP_NPOL] = {0};

	for (j = i; j < mm->stale.n && rp_iv_at(&mm->stale, j)->start < end; j++)
		for (int p = 0; p < RP_NPOL; p++)
			if (!conflict[p])
				conflict[p] = ticks_stale(m, (enum rp_pol_id)p,
							  rp_iv_val(rp_iv_at(&mm->stale, j)));
	if (upgrade)
		m->st.upgrade_points++;
	else if (j > i)
		m->st.reuse_points++;
	/*
	 * Before granting write, luf and batched settle the whole address space
	 * (luf_abort_domain(), flush_tlb_batched_pending()); before reusing a
	 * range, only if the range itself still owes a flush (luf: its folios'
	 * sets are not done, what luf_free()/luf_alloc() check by key).
	 */
	m->cause = upgrade ? RP_C_UPGRADE : RP_C_REUSE;
	if (upgrade || conflict[RP_LUF])
		rp_luf_settle(m, t, upgrade);
	/* batched, B4: what rp_pending() left (this call's own removals, an open batch) */
	m->cause = upgrade ? RP_C_UPGRADE : RP_C_REUSE;
	if (conflict[RP_BATCHED])
		rp_pol_flush(m, RP_BATCHED, t->cpu, mm->cpus, 0);
	if (j == i)
		return 0;
	m->cause = upgrade ? RP_C_UPGRADE : RP_C_REUSE;
	if (conflict[RP_ORACLE])
		oracle_flush_all(m, t->cpu);
	for (k = i; k < j; k++) {
		const uint64_t *v = rp_iv_val(rp_iv_at(&mm->stale, k));

		for (unsigned int c = 0; c < m->nr_cpus; c++)
			rp_bound_need(&m->bound, c, v[c], m->tick);
	}
	for (k = i; k < j; k++)
		for (int p = 0; p < RP_NPOL; p++)
			if (ticks_stale(m, (enum rp_pol_id)p, rp_iv_val(rp_iv_at(&mm->stale, k)))) {
				m->pol[p].c.viol[upgrade ? RP_S2 : RP_S1]++;
				if (getenv("RP_DEBUG"))
					fprintf(stderr, "violation %s %s pid %ld %lx-%lx\n",
						rp_pol_name((enum rp_pol_id)p),
						upgrade ? "S2" : "S1", t->pid, start, end);
			}
	/* settled (or reported): the range starts over */
	if (rp_ivmap_cut(&mm->stale, start, end, &i, &j))
		return -1;
	rp_ivmap_erase(&mm->stale, i, j);
	return 0;
}

void rp_batch_end(struct rp_model *m, struct rp_task *t)
{
	m->st.batch_ends++;
	/* batched, B2: try_to_unmap_flush(), unless nothing in it is still owed */
	m->cause = RP_C_BATCH;
	if (t->bat_tick && mask_stale(m, RP_BATCHED, t->bat_mask, t->bat_tick))
		rp_pol_flush(m, RP_BATCHED, t->cpu, t->bat_mask, 0);
	if (t->mm->bat_open == t)
		t->mm->bat_open = NULL;
	m->cause = RP_C_WRITABLE;
	rp_luf_fold(m, t);
	if (t->wr_tick && mask_stale(m, RP_ORACLE, t->wr_mask, t->wr_tick))
		oracle_flush_all(m, t->cpu);
	if (t->wr_tick)
		for (unsigned int c = 0; c < m->nr_cpus; c++)
			if (rp_mask_test(t->wr_mask, c))
				rp_bound_need(&m->bound, c, t->wr_tick, m->tick);
	if (t->wr_tick)
		for (int p = 0; p < RP_NPOL; p++)
			if (mask_stale(m, (enum rp_pol_id)p, t->wr_mask, t->wr_tick)) {
				m->pol[p].c.viol[RP_S3]++;
				if (getenv("RP_DEBUG")) {
					fprintf(
					    stderr,
					    "violation %s S3 pid %ld cpu %u tick %llu mask %lx:",
					    rp_pol_name((enum rp_pol_id)p), t->pid, t->cpu,
					    (unsigned long long)t->wr_tick, t->wr_mask[0]);
					for (unsigned int c = 0; c < m->nr_cpus; c++)
						fprintf(stderr, " %llu",
							(unsigned long long)m->pol[p].done[c]);
					fprintf(stderr, "\n");
				}
			}
	t->bat_tick = 0;
	t->wr_tick = 0;
	memset(t->bat_mask, 0, m->words * sizeof(unsigned long));
	memset(t->wr_mask, 0, m->words * sizeof(unsigned long));
	t->in_unmap_run = 0;
}
