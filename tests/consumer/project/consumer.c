// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * A consumer of an installed luf: one folio unmapped read-only on a
 * 2-CPU machine, freed to the pend list, refused to a caller that cannot
 * flush, then handed to one that can, after exactly one flush.
 *
 * Built by tests/consumer/project against libluf.so and libluf.a; the
 * driver checks which one each program loads.
 */
#include <luf/luf.h>
#include <stdio.h>
#include <string.h>

#define NR_CPUS 2
#define NR_KEYS 16

static unsigned int flushes;

static int count_flush(void *arch, const unsigned long *cpus, unsigned int nr_cpus,
		       const struct luf_range *r)
{
	(void)arch, (void)cpus, (void)nr_cpus, (void)r;
	flushes++;
	return 0;
}

static unsigned int two_cpus(void *arch)
{
	(void)arch;
	return NR_CPUS;
}

static unsigned int cpu0(void *arch)
{
	(void)arch;
	return 0;
}

static const struct luf_arch_ops ops = {
    .flush = count_flush,
    .nr_cpu_ids = two_cpus,
    .this_cpu = cpu0,
};

/* Caller-provided storage, carved from one static block. */
static _Alignas(LUF_CACHELINE) unsigned char pool[1 << 15];
static size_t pool_used;

static void *carve(size_t bytes)
{
	void *p = pool + pool_used;

	pool_used += (bytes + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	return pool_used <= sizeof(pool) ? p : NULL;
}

struct my_page {
	int id;
	struct luf_folio lf;
};

int main(void)
{
	struct luf *l = carve(sizeof(*l));
	struct luf_keytab *kt = carve(luf_keytab_size(NR_KEYS, NR_CPUS));
	struct luf_pcpu *pc = carve(luf_pcpu_size(NR_CPUS));
	struct luf_freelist *fl = carve(luf_freelist_size(NR_CPUS));
	void *done = carve(luf_done_size(NR_CPUS));
	void *stats = carve(luf_stats_size(NR_CPUS));
	struct my_page page = {.id = 42};
	struct luf_folio *got = NULL;
	unsigned long ran_on[1] = {0x3}; /* both CPUs may cache the translation */
	unsigned short key;
	int ret;

	if (!l || !kt || !pc || !fl || !done || !stats)
		return 2;
	memset(&page.lf, 0, sizeof(page.lf));
	/* A set-up failure names its check (luf/error.h). */
	if (luf_init(l, NULL, NULL, done, stats, 0) != -EINVAL ||
	    strcmp(luf_last_error(), "luf_init: @ops is NULL (-EINVAL)") != 0)
		return 9;
	if (luf_init(l, &ops, NULL, done, stats, 0) || luf_keytab_init(kt, l, NR_KEYS) ||
	    luf_pcpu_init(pc, l, kt, 0, LUF_PCPU_DEFAULT_THRESHOLD) ||
	    luf_freelist_init(fl, l, kt, 0))
		return 3;
	if (luf_unmap(pc, NULL, ran_on, LUF_PTE_ACCESSIBLE) || luf_pcpu_fold(pc, &key) ||
	    luf_free(fl, pc, &page.lf, key))
		return 4;
	if (flushes != 0 || luf_freelist_nr_pend(fl) != 1)
		return 5; /* deferred: nothing flushed yet */
	ret = luf_alloc(fl, pc, 0, &got);
	if (ret != -EAGAIN || got)
		return 6; /* a caller that cannot flush never gets a pend folio */
	if (luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &got) || !got)
		return 7;
	printf("luf %s consumer: flushes %u, reused page %d\n", LUF_VERSION_STRING, flushes,
	       luf_folio_entry(got, struct my_page, lf)->id);
	return flushes == 1 ? 0 : 8;
}
