// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf-demo: how many shootdowns lazy unmap flushing saves in a reclaim
 * workload, driving the real luf code with a counting backend.
 *
 * The machine: --cpus CPUs, --mms address spaces, each running on a random
 * subset of the CPUs (its mm_cpumask). Each round, reclaim on CPU 0 unmaps
 * a batch of read-only file pages (the LUF use case) and frees them; other
 * CPUs allocate pages to map new file data, sometimes context-switch (a
 * full local flush) and sometimes upgrade protection on an mm (a settle).
 * Half the pages start free. Three policies are counted on the same event stream:
 *   immediate  one shootdown per unmapped page (no batching);
 *   batched    one shootdown per reclaim batch (Linux's batched unmap flush);
 *   luf        the library: flush at reuse, dieted, one flush for all pend.
 * A shootdown is one flush call; IPIs are the CPUs it reaches.
 *
 * Usage: luf-demo [--cpus N] [--mms N] [--rounds N] [--batch N] [--seed N]
 */
#include <luf/luf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct page {
	struct luf_folio lf;
	unsigned int mm; /* mapped in this mm, or UINT_MAX if free */
};

struct counting_arch {
	unsigned int nr_cpus;
	unsigned long flushes, ipis;
};

static int count_flush(void *arch, const unsigned long *cpus, unsigned int nr,
		       const struct luf_range *r)
{
	struct counting_arch *a = arch;

	(void)r;
	a->flushes++;
	a->ipis += luf_cpumask_weight(cpus, nr);
	return 0;
}

static unsigned int count_nr_cpu_ids(void *arch)
{
	return ((struct counting_arch *)arch)->nr_cpus;
}

static unsigned int count_this_cpu(void *arch)
{
	(void)arch;
	return 0;
}

static const struct luf_arch_ops count_ops = {
    .flush = count_flush, .nr_cpu_ids = count_nr_cpu_ids, .this_cpu = count_this_cpu};

static unsigned long long rng_state;

static void die(const char *what, int err)
{
	fprintf(stderr, "luf-demo: %s failed: %d\n", what, err);
	exit(1);
}

static unsigned long long rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void *zalloc(size_t size)
{
	size_t n = (size + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	void *p = aligned_alloc(LUF_CACHELINE, n);

	if (!p) {
		fprintf(stderr, "luf-demo: out of memory\n");
		exit(1);
	}
	return memset(p, 0, n);
}

static unsigned long arg(int argc, char **argv, const char *name, unsigned long def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return strtoul(argv[i + 1], NULL, 0);
	return def;
}

int main(int argc, char **argv)
{
	unsigned int nr_cpus = (unsigned int)arg(argc, argv, "--cpus", 16);
	unsigned int nr_mms = (unsigned int)arg(argc, argv, "--mms", 8);
	unsigned long rounds = arg(argc, argv, "--rounds", 20000);
	unsigned int batch = (unsigned int)arg(argc, argv, "--batch", 32);
	unsigned int nr_pages = 8 * batch * nr_mms;
	struct counting_arch arch = {.nr_cpus = nr_cpus};
	unsigned long imm_flushes = 0, imm_ipis = 0, bat_flushes = 0, bat_ipis = 0;
	struct luf *l;
	struct luf_keytab *kt;
	struct luf_pcpu **pc;
	struct luf_freelist *fl;
	struct luf_domain **dom;
	unsigned long **mm_cpus, *uni;
	struct page *pages, **victims;
	int ret;

	rng_state = arg(argc, argv, "--seed", 42) | 1;
	if (nr_cpus < 2 || nr_cpus > LUF_MAX_CPUS || !nr_mms || !batch || !rounds) {
		fprintf(stderr,
			"luf-demo: need 2 <= --cpus <= %u and nonzero --mms, --batch, --rounds\n",
			LUF_MAX_CPUS);
		return 2;
	}
	l = zalloc(sizeof(*l));
	ret = luf_init(l, &count_ops, &arch, zalloc(luf_done_size(nr_cpus)),
		       zalloc(luf_stats_size(nr_cpus)), 0);
	kt = zalloc(luf_keytab_size(4096, nr_cpus));
	ret = ret ? ret : luf_keytab_init(kt, l, 4096);
	pc = calloc(nr_cpus, sizeof(struct luf_pcpu *));
	for (unsigned int c = 0; !ret && c < nr_cpus; c++) {
		pc[c] = zalloc(luf_pcpu_size(nr_cpus));
		ret = luf_pcpu_init(pc[c], l, kt, c, LUF_PCPU_DEFAULT_THRESHOLD);
	}
	fl = zalloc(luf_freelist_size(nr_cpus));
	ret = ret ? ret : luf_freelist_init(fl, l, kt, 0);
	dom = calloc(nr_mms, sizeof(struct luf_domain *));
	mm_cpus = calloc(nr_mms, sizeof(unsigned long *));
	uni = zalloc(luf_cpumask_size(nr_cpus));
	for (unsigned int m = 0; !ret && m < nr_mms; m++) {
		unsigned int span = 2 + (unsigned int)(rnd() % (nr_cpus - 1));

		dom[m] = zalloc(luf_domain_size(nr_cpus));
		ret = luf_domain_init(dom[m], l);
		mm_cpus[m] = zalloc(luf_cpumask_size(nr_cpus));
		for (unsigned int i = 0; i < span; i++)
			luf_cpumask_set_cpu(mm_cpus[m], nr_cpus, (unsigned int)(rnd() % nr_cpus));
	}
	if (ret)
		die("set-up", ret);
	/* Half the pages start free (clean), half mapped read-only in some mm. */
	pages = calloc(nr_pages, sizeof(*pages));
	victims = calloc(batch, sizeof(struct page *));
	for (unsigned int i = 0; i < nr_pages; i++) {
		pages[i].mm = i % 2 ? (unsigned int)(rnd() % nr_mms) : UINT_MAX;
		if (pages[i].mm == UINT_MAX && luf_free(fl, pc[0], &pages[i].lf, 0))
			die("set-up free", -1);
	}

	for (unsigned long r = 0; r < rounds; r++) {
		unsigned short key;
		unsigned int freed = 0;

		/* Reclaim on CPU 0: unmap a batch of mapped read-only pages, ... */
		luf_cpumask_clear(uni, nr_cpus);
		for (unsigned int n = 0; n < 4 * batch && freed < batch; n++) {
			struct page *p = &pages[rnd() % nr_pages];

			if (p->mm == UINT_MAX)
				continue;
			ret = luf_unmap(pc[0], dom[p->mm], mm_cpus[p->mm], LUF_PTE_ACCESSIBLE);
			if (ret)
				die("unmap", ret);
			imm_flushes++;
			imm_ipis += luf_cpumask_weight(mm_cpus[p->mm], nr_cpus);
			luf_cpumask_or(uni, mm_cpus[p->mm], nr_cpus);
			p->mm = UINT_MAX;
			victims[freed++] = p;
		}
		/* ... then close the batch and free its pages under one key. */
		ret = luf_pcpu_fold(pc[0], &key);
		for (unsigned int n = 0; !ret && n < freed; n++)
			ret = luf_free(fl, pc[0], &victims[n]->lf, key);
		if (ret)
			die("reclaim", ret);
		if (freed) {
			bat_flushes++;
			bat_ipis += luf_cpumask_weight(uni, nr_cpus);
		}
		/* Other CPUs reuse pages for new read-only file mappings. */
		for (unsigned int n = 0; n < freed; n++) {
			unsigned int cpu = 1 + (unsigned int)(rnd() % (nr_cpus - 1));
			struct luf_folio *f;

			ret = luf_alloc(fl, pc[cpu], LUF_ALLOC_MAY_FLUSH, &f);
			if (ret)
				die("allocation", ret);
			luf_folio_entry(f, struct page, lf)->mm = (unsigned int)(rnd() % nr_mms);
		}
		/* Context switches: full local flushes that diet can use. */
		if (rnd() % 4 == 0) {
			unsigned int cpu = (unsigned int)(rnd() % nr_cpus);
			unsigned long snap = luf_local_flush_begin(l);

			luf_local_flush_end(l, cpu, snap);
		}
		/* An occasional mprotect() upgrade settles its mm first. */
		if (rnd() % 64 == 0) {
			unsigned int m = (unsigned int)(rnd() % nr_mms);

			ret = luf_abort_domain(pc[1], dom[m], LUF_ABORT_PROT_UPGRADE);
			if (ret)
				die("settle", ret);
		}
	}

	printf("luf-demo: %u CPUs, %u mms, %lu reclaim rounds of up to %u read-only pages\n\n",
	       nr_cpus, nr_mms, rounds, batch);
	printf("%-10s %14s %14s %12s\n", "policy", "shootdowns", "IPIs", "vs immediate");
	printf("%-10s %14lu %14lu %11.1f%%\n", "immediate", imm_flushes, imm_ipis, 100.0);
	printf("%-10s %14lu %14lu %11.1f%%\n", "batched", bat_flushes, bat_ipis,
	       100.0 * (double)bat_ipis / (double)imm_ipis);
	printf("%-10s %14lu %14lu %11.1f%%\n", "luf", arch.flushes, arch.ipis,
	       100.0 * (double)arch.ipis / (double)imm_ipis);
	printf("\nluf: %ld flushes skipped by diet, %ld CPUs dropped by diet, %ld aborts "
	       "(mprotect upgrade)\n",
	       luf_stats_sum(l, LUF_STAT_FLUSH_SKIPPED),
	       luf_stats_sum(l, LUF_STAT_DIET_DROPPED),
	       luf_stats_sum(l, LUF_STAT_ABORT + LUF_ABORT_PROT_UPGRADE));
	printf("luf sends %.1f%% fewer IPIs than batched and %.1f%% fewer than immediate\n",
	       100.0 * (1.0 - (double)arch.ipis / (double)bat_ipis),
	       100.0 * (1.0 - (double)arch.ipis / (double)imm_ipis));

	for (unsigned int m = 0; m < nr_mms; m++) {
		free(dom[m]);
		free(mm_cpus[m]);
	}
	for (unsigned int c = 0; c < nr_cpus; c++)
		free(pc[c]);
	free(l->done);
	free(l->stats);
	free(l);
	free(kt);
	free(fl);
	free(uni);
	free(dom);
	free(mm_cpus);
	free(pc);
	free(pages);
	free(victims);
	return 0;
}
