// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The linked API works: built with LUF_LINKED against libluf.so, this
 * program runs one defer -> fold -> free -> alloc cycle through the
 * library's exported functions (header.linked_imports checks that they are
 * imported from libluf.so, not inlined). Exit status 0 on success.
 */
#ifndef LUF_LINKED
#define LUF_LINKED
#endif
#include <luf/luf.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR_CPUS 8

struct arch {
	unsigned int flushes;
	luf_aulong last[LUF_CPUMASK_WORDS(NR_CPUS)];
};

static int arch_flush(void *arch, const luf_aulong *cpus, unsigned int nr_cpus,
		      const struct luf_range *r)
{
	struct arch *a = arch;

	(void)r;
	a->flushes++;
	luf_cpumask_copy(a->last, cpus, nr_cpus);
	return 0;
}

static unsigned int arch_nr_cpu_ids(void *arch)
{
	(void)arch;
	return NR_CPUS;
}

static unsigned int arch_this_cpu(void *arch)
{
	(void)arch;
	return 0;
}

static const struct luf_arch_ops ops = {
    .flush = arch_flush,
    .nr_cpu_ids = arch_nr_cpu_ids,
    .this_cpu = arch_this_cpu,
};

static int failures;

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "linked_api.c:%d: %s\n", __LINE__, #cond); \
			failures++;                                                \
		}                                                                  \
	} while (0)

static void *zalloc(size_t size)
{
	size_t n = (size + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	void *p = aligned_alloc(LUF_CACHELINE, n);

	if (!p) {
		perror("aligned_alloc");
		exit(2);
	}
	memset(p, 0, n);
	return p;
}

int main(void)
{
	struct arch a = {0};
	struct luf *l = zalloc(sizeof(*l));
	struct luf_done_cpu *done = zalloc(luf_done_size(NR_CPUS));
	struct luf_stats_cpu *stats = zalloc(luf_stats_size(NR_CPUS));
	struct luf_keytab *kt = zalloc(luf_keytab_size(16, NR_CPUS));
	struct luf_pcpu *pc = zalloc(luf_pcpu_size(NR_CPUS));
	struct luf_freelist *fl = zalloc(luf_freelist_size(NR_CPUS));
	struct luf_domain *dom = zalloc(luf_domain_size(NR_CPUS));
	struct luf_folio folio = {0}, *out = NULL;
	luf_aulong cpus[LUF_CPUMASK_WORDS(NR_CPUS)];
	luf_key_t key = 0;

	CHECK(luf_ugen_before(ULONG_MAX, 1) && !luf_ugen_before(1, ULONG_MAX));
	CHECK(luf_init(l, &ops, &a, done, stats, ULONG_MAX - 2) == 0);
	CHECK(luf_keytab_init(kt, l, 16) == 0);
	CHECK(luf_pcpu_init(pc, l, kt, 0, LUF_PCPU_DEFAULT_THRESHOLD) == 0);
	CHECK(luf_freelist_init(fl, l, kt, 0) == 0);
	CHECK(luf_domain_init(dom, l) == 0);

	luf_cpumask_clear(cpus, NR_CPUS);
	CHECK(luf_cpumask_set_cpu(cpus, NR_CPUS, 1) == 0);
	CHECK(luf_cpumask_set_cpu(cpus, NR_CPUS, 5) == 0);
	CHECK(luf_can_defer(LUF_PTE_ACCESSIBLE) &&
	      !luf_can_defer(LUF_PTE_ACCESSIBLE | LUF_PTE_DIRTY));
	CHECK(luf_unmap(pc, dom, cpus, LUF_PTE_ACCESSIBLE) == 0);
	CHECK(luf_pcpu_fold(pc, &key) == 0 && key != 0);
	CHECK(luf_keytab_check_done(kt, key) == 0);
	CHECK(luf_domain_pending(dom));
	CHECK(luf_free(fl, pc, &folio, key) == 0);
	CHECK(luf_freelist_nr_pend(fl) == 1 && luf_freelist_nr_clean(fl) == 0);
	CHECK(luf_alloc(fl, pc, 0, &out) == -EAGAIN && a.flushes == 0);
	CHECK(luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &out) == 0 && out == &folio);
	CHECK(a.flushes == 1 && luf_cpumask_equal(a.last, cpus, NR_CPUS));
	CHECK(luf_keytab_check_done(kt, key) == 1);
	CHECK(luf_upgrade_check(pc, key, dom) == 0);
	CHECK(luf_stats_sum(stats, NR_CPUS, LUF_STAT_ALLOC_FLUSH) == 1);
	CHECK(luf_flush_received(l, 5) == 1 && luf_flush_received(l, 2) == 0);

	free(l), free(done), free(stats), free(kt), free(pc), free(fl), free(dom);
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures != 0;
}
