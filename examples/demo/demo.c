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
 * Exit status: 0; 1 a luf call failed or out of memory; 2 usage (an unknown
 * option, a missing value, a value out of range: each named).
 */
#include <luf/luf.h>
#include <limits.h>
#include <stddef.h>
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

/* The options: every value is range-checked (strtoul would wrap "-1"). */
struct opts {
	unsigned long long cpus, mms, rounds, batch, seed;
};

static const struct opt {
	const char *name, *what;
	unsigned long long min, max, def;
	size_t off;
} opt_table[] = {
    {"--cpus", "CPUs", 2, LUF_MAX_CPUS, 16, offsetof(struct opts, cpus)},
    {"--mms", "address spaces, each on a random subset of the CPUs", 1, 1024, 8,
     offsetof(struct opts, mms)},
    {"--rounds", "reclaim rounds", 1, 100000000, 20000, offsetof(struct opts, rounds)},
    {"--batch", "read-only pages unmapped per round", 1, 1024, 32, offsetof(struct opts, batch)},
    {"--seed", "random seed", 0, ULLONG_MAX, 42, offsetof(struct opts, seed)},
};

#define NR_OPTS (sizeof(opt_table) / sizeof(opt_table[0]))

static void usage(void)
{
	printf("usage: luf-demo [--cpus N] [--mms N] [--rounds N] [--batch N] [--seed N]\n"
	       "Counts the shootdowns of a reclaim workload under immediate, batched and luf\n"
	       "flushing, on the real luf code. N: decimal or 0x-hex; --opt=N works too.\n");
	for (size_t i = 0; i < NR_OPTS; i++) {
		char opt[16];

		snprintf(opt, sizeof(opt), "%s N", opt_table[i].name);
		printf("  %-12s %s, %llu..%llu (default %llu)\n", opt, opt_table[i].what,
		       opt_table[i].min, opt_table[i].max, opt_table[i].def);
	}
	printf("  --help       this text\n"
	       "Exit status: 0 success; 1 a luf call failed, or out of memory; 2 usage (an\n"
	       "unknown option, a missing value or one out of range).\n");
}

static int bad_usage(const char *fmt, const char *a)
{
	fprintf(stderr, "luf-demo: ");
	fprintf(stderr, fmt, a);
	fprintf(stderr, " (see luf-demo --help)\n");
	return 2;
}

/* @s as a whole: decimal or 0x-hex digits only, no sign, no blanks, no wrap. */
static int parse_num(const char *s, unsigned long long *out)
{
	unsigned int base = 10;
	unsigned long long v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -1;
	for (; *s; s++) {
		unsigned int d = *s >= '0' && *s <= '9'	  ? (unsigned int)(*s - '0')
				 : *s >= 'a' && *s <= 'f' ? (unsigned int)(*s - 'a' + 10)
				 : *s >= 'A' && *s <= 'F' ? (unsigned int)(*s - 'A' + 10)
							  : 16;

		if (d >= base || v > (ULLONG_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* Fill @o from the command line. Return: 0, -1 (--help printed), or 2 (usage error). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	for (size_t k = 0; k < NR_OPTS; k++)
		*(unsigned long long *)((char *)o + opt_table[k].off) = opt_table[k].def;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		const struct opt *op = NULL;
		unsigned long long v;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage();
			return -1;
		}
		if (a[0] != '-')
			return bad_usage("unexpected argument '%s'", a);
		for (size_t k = 0; k < NR_OPTS && !op; k++) {
			size_t n = strlen(opt_table[k].name);

			if (!strncmp(a, opt_table[k].name, n) && (!a[n] || a[n] == '=')) {
				op = &opt_table[k];
				val = a[n] ? a + n + 1 : i + 1 < argc ? argv[++i] : NULL;
			}
		}
		if (!op)
			return bad_usage("unknown option '%s'", a);
		if (!val)
			return bad_usage("%s needs a value", op->name);
		if (parse_num(val, &v) || v < op->min || v > op->max) {
			fprintf(stderr, "luf-demo: %s wants a number in %llu..%llu, not '%s'\n",
				op->name, op->min, op->max, val);
			return 2;
		}
		*(unsigned long long *)((char *)o + op->off) = v;
	}
	return 0;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "luf-demo: out of memory\n");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	struct opts o;
	int bad = parse_args(argc, argv, &o);
	/* in range: at most 4096 CPUs, 1024 mms, 10^8 rounds, 1024 pages a batch */
	unsigned int nr_cpus = (unsigned int)o.cpus;
	unsigned int nr_mms = (unsigned int)o.mms;
	unsigned long rounds = (unsigned long)o.rounds;
	unsigned int batch = (unsigned int)o.batch;
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

	if (bad)
		return bad < 0 ? 0 : bad;
	if (nr_cpus < 2 || !nr_mms || !batch) /* refused by parse_args(); says so to analysers */
		return 2;
	rng_state = o.seed | 1;
	l = zalloc(sizeof(*l));
	ret = luf_init(l, &count_ops, &arch, zalloc(luf_done_size(nr_cpus)),
		       zalloc(luf_stats_size(nr_cpus)), 0);
	kt = zalloc(luf_keytab_size(4096, nr_cpus));
	ret = ret ? ret : luf_keytab_init(kt, l, 4096);
	pc = xcalloc(nr_cpus, sizeof(struct luf_pcpu *));
	for (unsigned int c = 0; !ret && c < nr_cpus; c++) {
		pc[c] = zalloc(luf_pcpu_size(nr_cpus));
		ret = luf_pcpu_init(pc[c], l, kt, c, LUF_PCPU_DEFAULT_THRESHOLD);
	}
	fl = zalloc(luf_freelist_size(nr_cpus));
	ret = ret ? ret : luf_freelist_init(fl, l, kt, 0);
	dom = xcalloc(nr_mms, sizeof(struct luf_domain *));
	mm_cpus = xcalloc(nr_mms, sizeof(unsigned long *));
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
	pages = xcalloc(nr_pages, sizeof(*pages));
	victims = xcalloc(batch, sizeof(struct page *));
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
	printf("(kernel reclaim of read-only page cache, where luf defers nearly every flush;\n"
	       " a program's own munmaps of writable memory save far less: see luf-replay)\n");

	for (unsigned int m = 0; m < nr_mms; m++) {
		free(dom[m]);
		free(mm_cpus[m]);
	}
	for (unsigned int c = 0; c < nr_cpus; c++)
		free(pc[c]);
	free(l->done.cpu);
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
