// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/workloads/mdl_work.c - five workloads on the engine of mdl.h.
 *
 * Common to all: N CPUs; each step runs on a random CPU; with
 * ctx_permille per mille a step starts with a full local flush of that CPU
 * (a context switch to another mm), with wf_permille per mille it is a
 * write fault in the CPU's address space (a write upgrade: luf aborts and
 * settles the domain). An address space's CPU mask never shrinks.
 * Sizes scale with N; every constant below is a modelling choice, printed
 * with the results (mdl_model_what()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mdl.h"

#define BATCH 32u /* SWAP_CLUSTER_MAX: pages per reclaim / migration pass */

struct wl {
	struct mdl *m;
	struct mdl_work_opt *o;
	unsigned int n, ndoms;
	uint64_t rng;
	unsigned int *home; /* per CPU: its address space */
};

static uint64_t rnd(struct wl *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned int pick(struct wl *w, unsigned int n)
{
	return (unsigned int)(rnd(w) % n);
}

const char *mdl_model_name(enum mdl_model m)
{
	static const char *const n[MDL_NMODELS] = {"reclaim", "tiering", "compaction", "jit",
						   "alloc"};

	return (unsigned int)m < MDL_NMODELS ? n[m] : "?";
}

const char *mdl_model_what(enum mdl_model m)
{
	static const char *const n[MDL_NMODELS] = {
	    "read-only file pages under memory pressure: N/8 processes, each on its CPUs + "
	    "N/16 others; 256 frames/CPU; each step maps a new page-cache page; below 64 free "
	    "frames a CPU reclaims the oldest mapped pages (global FIFO LRU) in batches of 32 "
	    "up to 192 free",
	    "tiered memory, hot/cold (XSBench on CXL): 1 process on all CPUs, 320 pages/CPU "
	    "(90% read-only), fast tier 160 frames/CPU, slow 320; 90% of accesses in a hot "
	    "window of 96 pages/CPU that drifts; a slow hot page is promoted (1-page "
	    "migration), and below 16 free fast frames the 32 oldest fast pages are demoted",
	    "compaction migrating mixed pages: N/8 processes; 256 frames/CPU, 75% mapped, half "
	    "read-only; 10% of steps are a compaction pass migrating the next 32 mapped frames of "
	    "the scanner, 9% an app unmapping one page and mapping another",
	    "JIT code-cache churn: 1 process per 32 CPUs; per CPU a cache of 8 blocks of 4 "
	    "pages; 80% of steps compile a block (free the oldest block = munmap RX, allocate, "
	    "write RW, W^X flip to RX), 20% patch a live block (RX->RW upgrade, write, flip back)",
	    "allocator churn: 1 process per 16 CPUs; per CPU 64 slots of pages read by every "
	    "thread (90% read-only to readers, 10% writable); each step replaces one slot, "
	    "the old pages are freed in batches of 16"};

	return (unsigned int)m < MDL_NMODELS ? n[m] : "?";
}

/* Processes on CPU groups: CPU c belongs to c % ndoms, plus @extra random CPUs each. */
static void doms_spread(struct wl *w, unsigned int extra)
{
	for (unsigned int c = 0; c < w->n; c++) {
		w->home[c] = c % w->ndoms;
		mdl_dom_add_cpu(w->m, w->home[c], c);
	}
	for (unsigned int d = 0; d < w->ndoms; d++)
		for (unsigned int i = 0; i < extra; i++)
			mdl_dom_add_cpu(w->m, d, pick(w, w->n));
}

/* Processes on contiguous CPU groups of @per CPUs. */
static void doms_groups(struct wl *w, unsigned int per)
{
	for (unsigned int c = 0; c < w->n; c++) {
		w->home[c] = c / per;
		mdl_dom_add_cpu(w->m, w->home[c], c);
	}
}

/* The common head of a step: a context switch, or a write fault (returns 1). */
static int step_common(struct wl *w, unsigned int c)
{
	if (pick(w, 1000) < w->o->ctx_permille)
		mdl_ctx_switch(w->m, c);
	if (pick(w, 1000) < w->o->wf_permille) {
		mdl_upgrade(w->m, c, w->home[c], LUF_ABORT_WRITE_FAULT);
		return 1;
	}
	return 0;
}

/* ---- (a) reclaim --------------------------------------------------- */

static int run_reclaim(struct wl *w)
{
	unsigned int n = w->n, F = 256 * n, head = 0, tail = 0, used = 0;
	unsigned int *lru = calloc(F, sizeof(*lru));

	if (!lru)
		return -ENOMEM;
	doms_spread(w, n / 16 ? n / 16 : 1);
	for (unsigned long s = 0; s < w->o->steps * n; s++) {
		unsigned int c = pick(w, n);
		long f;

		if (step_common(w, c))
			continue;
		if (mdl_nr_free(w->m, c, 0) < 64) {
			while (mdl_nr_free(w->m, c, 0) < 192 && used >= BATCH) {
				for (unsigned int i = 0; i < BATCH; i++) {
					mdl_remove(w->m, c, lru[head]);
					mdl_call_end(w->m, c); /* unbatched: one flush per page */
					head = (head + 1) % F;
					used--;
				}
				mdl_batch_end(w->m, c);
			}
		}
		f = mdl_alloc(w->m, c, 0);
		if (f < 0)
			continue;
		mdl_map(w->m, c, (unsigned int)f, w->home[c], 0);
		lru[tail] = (unsigned int)f;
		tail = (tail + 1) % F;
		used++;
	}
	free(lru);
	return 0;
}

/* ---- (b) tiering --------------------------------------------------- */

static void migrate_one(struct wl *w, unsigned int c, unsigned int *pte, unsigned int page,
			unsigned int *rev, unsigned int nf)
{
	unsigned int old = pte[page];

	mdl_remove(w->m, c, old);
	mdl_call_end(w->m, c);
	mdl_map(w->m, c, nf, mdl_frame_dom(w->m, old), mdl_frame_writable(w->m, old));
	pte[page] = nf;
	rev[nf] = page;
	w->o->migrated++;
}

static int run_tiering(struct wl *w)
{
	unsigned int n = w->n, P = 320 * n, H = 96 * n, Ff = 160 * n, F = Ff + 320 * n;
	unsigned int *pte = calloc(P, sizeof(*pte)), *rev = calloc(F, sizeof(*rev));
	unsigned int *fifo = calloc(Ff, sizeof(*fifo)), fh = 0, ft = 0, fn = 0, base = 0;
	int ret = -ENOMEM;

	if (!pte || !rev || !fifo)
		goto out;
	for (unsigned int c = 0; c < n; c++)
		mdl_dom_add_cpu(w->m, 0, c), w->home[c] = 0;
	for (unsigned int p = 0; p < P; p++) {
		unsigned int c = p % n, tier = mdl_nr_free(w->m, c, 0) > 32 ? 0 : 1;
		long f = mdl_alloc(w->m, c, tier);

		if (f < 0)
			goto out;
		mdl_map(w->m, c, (unsigned int)f, 0, pick(w, 10) == 0);
		pte[p] = (unsigned int)f;
		rev[f] = p;
		if (!tier)
			fifo[ft] = p, ft = (ft + 1) % Ff, fn++;
	}
	for (unsigned long s = 0; s < w->o->steps * n; s++) {
		unsigned int c = pick(w, n), page;
		long nf;

		if (s % (100ul * n) == 0)
			base = (base + H / 8) % P; /* the hot set drifts */
		if (step_common(w, c))
			continue;
		page = pick(w, 10) ? (base + pick(w, H)) % P : pick(w, P);
		if (mdl_frame_tier(w->m, pte[page]) == 0)
			continue;
		if (mdl_nr_free(w->m, c, 0) < 16 && fn >= BATCH) {
			/* demotion: kswapd-style pass over the oldest fast pages */
			for (unsigned int i = 0; i < BATCH && fn; i++) {
				unsigned int victim = fifo[fh];

				if ((nf = mdl_alloc(w->m, c, 1)) < 0)
					break;
				fh = (fh + 1) % Ff, fn--;
				migrate_one(w, c, pte, victim, rev, (unsigned int)nf);
			}
			mdl_batch_end(w->m, c);
		}
		if ((nf = mdl_alloc(w->m, c, 0)) < 0)
			continue;
		migrate_one(w, c, pte, page, rev, (unsigned int)nf); /* promotion: one page */
		mdl_batch_end(w->m, c);
		if (fn < Ff)
			fifo[ft] = page, ft = (ft + 1) % Ff, fn++;
	}
	ret = 0;
out:
	free(pte), free(rev), free(fifo);
	return ret;
}

/* ---- (c) compaction ------------------------------------------------ */

static int run_compaction(struct wl *w)
{
	unsigned int n = w->n, F = 256 * n, target = F / 4 * 3, nin = 0, cursor = 0;
	unsigned int *in = calloc(F, sizeof(*in)), *pos = calloc(F, sizeof(*pos));
	int ret = -ENOMEM;

	if (!in || !pos)
		goto out;
	doms_spread(w, n / 16 ? n / 16 : 1);
	for (unsigned long s = 0; s < w->o->steps * n; s++) {
		unsigned int c = pick(w, n);
		long f;

		if (step_common(w, c))
			continue;
		if (pick(w, 100) < 10) {
			/* compaction: migrate the next BATCH mapped frames, one flush per pass */
			unsigned int moved = 0;

			for (unsigned int i = 0; i < BATCH && nin; i++) {
				unsigned int k = cursor++ % nin, old = in[k];

				if ((f = mdl_alloc(w->m, c, 0)) < 0)
					break;
				mdl_remove(w->m, c, old);
				mdl_call_end(w->m, c);
				mdl_map(w->m, c, (unsigned int)f, mdl_frame_dom(w->m, old),
					mdl_frame_writable(w->m, old));
				in[k] = (unsigned int)f;
				pos[f] = k;
				moved++;
			}
			w->o->migrated += moved;
			mdl_batch_end(w->m, c);
			continue;
		}
		if (nin >= target && pick(w, 100) >= 10)
			continue; /* the apps read and write what they have mapped */
		if (nin >= target) {
			/* an app unmaps a page (munmap: its own call and batch) */
			unsigned int k = pick(w, nin), old = in[k];

			mdl_remove(w->m, c, old);
			mdl_batch_end(w->m, c);
			in[k] = in[--nin];
			pos[in[k]] = k;
		}
		if ((f = mdl_alloc(w->m, c, 0)) < 0)
			continue;
		mdl_map(w->m, c, (unsigned int)f, w->home[c], pick(w, 2));
		in[nin] = (unsigned int)f;
		pos[f] = nin++;
	}
	ret = 0;
out:
	free(in), free(pos);
	return ret;
}

/* ---- (d) JIT code cache -------------------------------------------- */

#define JIT_BLOCKS 8u
#define JIT_PAGES 4u

static int run_jit(struct wl *w)
{
	unsigned int n = w->n, per = n < 32 ? n : 32;
	unsigned int *blk = calloc((size_t)n * JIT_BLOCKS * JIT_PAGES, sizeof(*blk));
	unsigned int *live = calloc(n, sizeof(*live)), *next = calloc(n, sizeof(*next));
	int ret = -ENOMEM;

	if (!blk || !live || !next)
		goto out;
	doms_groups(w, per);
	for (unsigned long s = 0; s < w->o->steps * n; s++) {
		unsigned int c = pick(w, n), d = w->home[c];
		unsigned int *ring = &blk[(size_t)c * JIT_BLOCKS * JIT_PAGES], *b;

		if (step_common(w, c))
			continue;
		if (live[c] && pick(w, 100) < 20) {
			/* patch: RX -> RW (a write upgrade), write, W^X flip back */
			b = &ring[pick(w, live[c]) * JIT_PAGES];
			mdl_upgrade(w->m, c, d, LUF_ABORT_PROT_UPGRADE);
			for (unsigned int i = 0; i < JIT_PAGES; i++)
				mdl_map(w->m, c, b[i], d, 1);
			mdl_wrprotect(w->m, c, b, JIT_PAGES);
			continue;
		}
		b = &ring[next[c] * JIT_PAGES];
		if (live[c] == JIT_BLOCKS) {
			/* the oldest block is dropped: munmap of read-only code */
			for (unsigned int i = 0; i < JIT_PAGES; i++)
				mdl_remove(w->m, c, b[i]);
			mdl_batch_end(w->m, c);
			live[c]--;
		}
		for (unsigned int i = 0; i < JIT_PAGES; i++) {
			long f = mdl_alloc(w->m, c, 0);

			if (f < 0)
				goto out; /* cannot happen: 48 frames per CPU, 32 live */
			b[i] = (unsigned int)f;
			mdl_map(w->m, c, b[i], d, 1); /* a fresh RW mapping: no upgrade */
		}
		mdl_wrprotect(w->m, c, b, JIT_PAGES); /* W^X: RW -> RX */
		live[c]++;
		next[c] = (next[c] + 1) % JIT_BLOCKS;
	}
	ret = 0;
out:
	free(blk), free(live), free(next);
	return ret;
}

/* ---- (e) allocator churn ------------------------------------------- */

#define ALLOC_SLOTS 64u
#define ALLOC_BATCH 16u

static int run_alloc(struct wl *w)
{
	unsigned int n = w->n, per = n < 16 ? n : 16;
	unsigned int *slot = calloc((size_t)n * ALLOC_SLOTS, sizeof(*slot));
	unsigned int *pending = calloc(n, sizeof(*pending));
	int ret = -ENOMEM;

	if (!slot || !pending)
		goto out;
	doms_groups(w, per);
	for (unsigned int c = 0; c < n; c++)
		for (unsigned int k = 0; k < ALLOC_SLOTS; k++) {
			long f = mdl_alloc(w->m, c, 0);

			if (f < 0)
				goto out;
			mdl_map(w->m, c, (unsigned int)f, w->home[c], pick(w, 10) == 0);
			slot[c * ALLOC_SLOTS + k] = (unsigned int)f;
		}
	for (unsigned long s = 0; s < w->o->steps * n; s++) {
		unsigned int c = pick(w, n), k = c * ALLOC_SLOTS + pick(w, ALLOC_SLOTS);
		long f;

		if (step_common(w, c))
			continue;
		if ((f = mdl_alloc(w->m, c, 0)) < 0)
			continue;
		mdl_map(w->m, c, (unsigned int)f, w->home[c], pick(w, 10) == 0);
		mdl_remove(w->m, c, slot[k]);
		mdl_call_end(w->m, c);
		slot[k] = (unsigned int)f;
		if (++pending[c] == ALLOC_BATCH) {
			mdl_batch_end(w->m, c);
			pending[c] = 0;
		}
	}
	for (unsigned int c = 0; c < n; c++)
		if (pending[c])
			mdl_batch_end(w->m, c);
	ret = 0;
out:
	free(slot), free(pending);
	return ret;
}

int mdl_work_run(enum mdl_model which, struct mdl_work_opt *o, struct mdl_result *r)
{
	static const unsigned int frames_per_cpu[MDL_NMODELS] = {256, 480, 256, 48, 256};
	struct mdl_config cfg = {.nr_cpus = o->nr_cpus};
	struct wl w = {.o = o, .n = o->nr_cpus, .rng = o->seed * 0x2545f4914f6cdd1dull + 1};
	int ret;

	if ((unsigned int)which >= MDL_NMODELS || !o->nr_cpus)
		return -EINVAL;
	cfg.nr_frames = frames_per_cpu[which] * o->nr_cpus;
	cfg.nr_fast = which == MDL_TIERING ? 160 * o->nr_cpus : 0;
	switch (which) {
	case MDL_RECLAIM:
	case MDL_COMPACTION:
		w.ndoms = o->nr_cpus / 8 > 2 ? o->nr_cpus / 8 : 2;
		break;
	case MDL_TIERING:
		w.ndoms = 1;
		break;
	case MDL_JIT:
		w.ndoms = (o->nr_cpus + 31) / 32;
		break;
	default:
		w.ndoms = (o->nr_cpus + 15) / 16;
		break;
	}
	cfg.nr_doms = w.ndoms;
	o->migrated = 0;
	w.home = calloc(o->nr_cpus, sizeof(*w.home));
	if (!w.home)
		return -ENOMEM;
	ret = mdl_create(&cfg, &w.m);
	if (!ret) {
		mdl_explain(w.m, o->explain);
		static int (*const run[MDL_NMODELS])(struct wl *) = {
		    run_reclaim, run_tiering, run_compaction, run_jit, run_alloc};

		ret = run[which](&w);
		mdl_result(w.m, r);
		mdl_destroy(w.m);
	}
	free(w.home);
	return ret;
}
