// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/replay/test_order.c - the order and bound properties of luf-replay's
 * policies on random event streams (issue 16, item 2).
 *
 * Each stream (seeded) is a few hundred calls of a few tasks - threads and
 * forked processes - on a small address range, so that removals, reuses,
 * upgrades and CPUs joining late meet often: mmap (read-only, writable,
 * executable, over mappings), munmap, mprotect both ways, madvise
 * DONTNEED, mremap, brk, clone and exit. After the stream, for every
 * policy:
 *   no safety violation (S1-S4);
 *   CPUs flushed >= the CPU-flush bound, flush operations >= the
 *   operation bound (lib/sim/luf_cmp.h), and the oracle exactly at the
 *   operation bound (it is that bound's stabbing, computed apart);
 *   batched and luf at or below immediate in remote flushes and in flush
 *   operations (each of their flushes covers a removal immediate flushed
 *   on its own).
 * Usage: replay_test_order [STREAMS [FIRST_SEED]]; prints the first failing
 * seed with its numbers; exit 1 if any stream failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rp_model.h"

static uint64_t rng;
static unsigned long luf_above; /* streams where luf needed more than batched */
static uint64_t luf_above_first;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng % n);
}

#define BASE 0x7f0000000000ul
#define PAGES 24u
#define MAXT 10

static const unsigned long prots[] = {RP_PROT_READ, RP_PROT_READ | RP_PROT_WRITE,
				      RP_PROT_READ | RP_PROT_EXEC, 0};

static int call(struct rp_model *m, long pid, enum rp_sys sys, unsigned long a0, unsigned long a1,
		unsigned long a2, unsigned long a3, long ret)
{
	struct rp_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = RP_EV_CALL;
	ev.sys = sys;
	ev.pid = pid;
	ev.arg[0] = a0;
	ev.arg[1] = a1;
	ev.arg[2] = a2;
	ev.arg[3] = a3;
	ev.ret = ret;
	m->what = rp_sys_name(sys);
	return rp_model_event(m, &ev);
}

/* One stream; 0 if every property holds, else 1 (with the numbers on stderr). */
static int stream(uint64_t seed, int verbose)
{
	struct rp_model m;
	long pids[MAXT];
	unsigned int nt = 1, n, cpus;
	long next = 101;
	int bad = 0;

	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	cpus = 2 + rnd(7);
	if (rp_model_init(&m, cpus))
		return 1;
	if (verbose) /* one stream: every flush, as luf-replay --explain */
		rp_model_explain(&m, stderr);
	pids[0] = 100;
	n = 20 + rnd(100);
	for (unsigned int i = 0; i < n; i++) {
		long pid = pids[rnd(nt)];

		m.line = i + 1; /* the call's number in the stream */
		m.pid = pid;
		m.what = "exit";
		unsigned long a = BASE + rnd(PAGES) * RP_PAGE, len = (1 + rnd(4)) * RP_PAGE;
		unsigned int r = rnd(100);
		int e;

		if (r < 25)
			e = call(&m, pid, RP_SYS_MMAP, a, len, prots[rnd(4)], RP_MAP_FIXED,
				 (long)a);
		else if (r < 50)
			e = call(&m, pid, RP_SYS_MUNMAP, a, len, 0, 0, 0);
		else if (r < 65)
			e = call(&m, pid, RP_SYS_MPROTECT, a, len, prots[rnd(4)], 0, 0);
		else if (r < 72)
			e = call(&m, pid, RP_SYS_MADVISE, a, len, RP_MADV_DONTNEED, 0, 0);
		else if (r < 77) {
			unsigned long to = BASE + rnd(PAGES) * RP_PAGE;

			e = call(&m, pid, RP_SYS_MREMAP, a, len, (1 + rnd(4)) * RP_PAGE,
				 RP_MREMAP_MAYMOVE | RP_MREMAP_FIXED, (long)(rnd(2) ? a : to));
		} else if (r < 82) {
			e = call(&m, pid, RP_SYS_BRK, 0, 0, 0, 0,
				 (long)(BASE + (PAGES + 8 + rnd(8)) * RP_PAGE));
		} else if (r < 92 && nt < MAXT) {
			unsigned long fl = rnd(4) ? RP_CLONE_VM | RP_CLONE_THREAD : 0;

			e = call(&m, pid, RP_SYS_CLONE, fl, 0, 0, 0, next);
			pids[nt++] = next++;
		} else if (r < 94 && nt > 1) {
			struct rp_event ev;
			unsigned int k = 1 + rnd(nt - 1);

			memset(&ev, 0, sizeof(ev));
			ev.kind = RP_EV_EXIT;
			ev.pid = pids[k];
			e = rp_model_event(&m, &ev);
			pids[k] = pids[--nt];
		} else {
			e = call(&m, pid, RP_SYS_OTHER, 0, 0, 0, 0, 0);
		}
		if (e) {
			rp_model_fini(&m);
			return 1;
		}
	}
	m.pid = -1;
	m.what = "end";
	rp_model_finish(&m);
	for (int p = 0; p < LUF_CMP_NPOL; p++) {
		const struct luf_cmp_counts *c = &m.res.c[p];

		for (int k = 0; k < LUF_CMP_NRULES; k++)
			bad |= c->viol[k] != 0;
		bad |= c->cpus < m.res.bound_cpus || c->flushes < m.res.bound_ops;
	}
	bad |= m.res.c[LUF_CMP_ORACLE].flushes != m.res.bound_ops;
	/*
	 * Flush operations: each of batched's and luf's covers a removal that
	 * immediate flushed on its own. Not remote flushes: a flush can be
	 * remote where immediate's was local (issued later, from another CPU,
	 * or after a CPU joined: flush_tlb_batched_pending() flushes the mm's
	 * CPUs of the moment), e.g. seeds 972 (luf) and 4217 (batched).
	 */
	for (int p = LUF_CMP_BATCHED; p <= LUF_CMP_LUF; p++)
		bad |= m.res.c[p].flushes > m.res.c[LUF_CMP_IMMEDIATE].flushes;
	if ((m.res.c[LUF_CMP_LUF].flushes > m.res.c[LUF_CMP_BATCHED].flushes ||
	     m.res.c[LUF_CMP_LUF].remote > m.res.c[LUF_CMP_BATCHED].remote) &&
	    !luf_above++)
		luf_above_first = seed;
	if (bad || verbose) {
		fprintf(stderr,
			"seed %llu (%u CPUs, %u calls):%s bounds: %llu CPU flushes, %llu ops\n",
			(unsigned long long)seed, cpus, n, bad ? " FAILED" : "", m.res.bound_cpus,
			m.res.bound_ops);
		for (int p = 0; p < LUF_CMP_NPOL; p++) {
			const struct luf_cmp_counts *c = &m.res.c[p];
			unsigned long long v = 0;

			for (int k = 0; k < LUF_CMP_NRULES; k++)
				v += c->viol[k];
			fprintf(
			    stderr,
			    "  %-9s remote %4llu  flushes %4llu  IPIs %5llu  CPUs flushed %5llu  "
			    "violations %llu\n",
			    luf_cmp_pol_name((enum luf_cmp_pol)p), c->remote, c->flushes,
			    c->received, c->cpus, v);
		}
	}
	rp_model_fini(&m);
	return bad;
}

int main(int argc, char **argv)
{
	unsigned long streams = argc > 1 ? strtoul(argv[1], NULL, 0) : 3000;
	uint64_t first = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	unsigned long failed = 0;

	for (uint64_t s = first; s < first + streams; s++)
		if (stream(s, streams == 1) && failed++ < 3)
			fprintf(stderr, "(replay: replay_test_order 1 %llu)\n",
				(unsigned long long)s);
	printf("%lu streams from seed %llu: %lu failed; luf above batched in flushes or remote "
	       "flushes on %lu "
	       "(first: seed %llu)\n",
	       streams, (unsigned long long)first, failed, luf_above,
	       (unsigned long long)luf_above_first);
	return failed ? 1 : 0;
}
