// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/headers/cxx_link.cpp - luf from C++ (ctest header.cxx_link.*): the
 * README's cycle (unmap read-only, free, reuse with one flush) built as
 * C++11 against libluf.a, and libluf_user.a's names resolved too. It links
 * only if every function the headers declare has C linkage.
 */
#include <luf/luf.h>
#if defined(LUF_HAVE_USER)
#include <luf/luf_user.h>
#endif
#include <cstdio>
#include <cstring>

namespace {

unsigned int flushes;

int flush(void *, const unsigned long *cpus, unsigned int n, const struct luf_range *)
{
	flushes += luf_cpumask_weight(cpus, n) ? 1u : 0u;
	return 0;
}

unsigned int nr_cpu_ids(void *)
{
	return 4;
}

unsigned int this_cpu(void *)
{
	return 0;
}

alignas(LUF_CACHELINE) char arena[1 << 16]; /* luf allocates nothing itself */
size_t used;

void *alloc(size_t size)
{
	void *p = arena + used;

	used += (size + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	return p;
}

} // namespace

int main()
{
	struct luf_arch_ops ops = {};

	ops.flush = flush;
	ops.nr_cpu_ids = nr_cpu_ids;
	ops.this_cpu = this_cpu;

	struct luf *l = static_cast<struct luf *>(alloc(sizeof(*l)));
	struct luf_keytab *kt = static_cast<struct luf_keytab *>(alloc(luf_keytab_size(256, 4)));
	struct luf_pcpu *pc = static_cast<struct luf_pcpu *>(alloc(luf_pcpu_size(4)));
	struct luf_freelist *fl = static_cast<struct luf_freelist *>(alloc(luf_freelist_size(4)));
	struct luf_folio page = {}, *got = nullptr;
	unsigned long mm_cpus[1] = { 0x6 }; /* CPUs 1 and 2 ran the mm */
	unsigned short key = 0;

	if (luf_init(nullptr, &ops, nullptr, nullptr, nullptr, 0) != -EINVAL ||
	    !std::strstr(luf_last_error(), "luf_init: @l is NULL"))
		return 1;
	luf_clear_error();
	if (luf_init(l, &ops, nullptr, static_cast<struct luf_done_cpu *>(alloc(luf_done_size(4))),
		     static_cast<struct luf_stats_cpu *>(alloc(luf_stats_size(4))), 0) ||
	    luf_keytab_init(kt, l, 256) || luf_pcpu_init(pc, l, kt, 0, 64) ||
	    luf_freelist_init(fl, l, kt, 0))
		return 1;
	if (luf_unmap(pc, nullptr, mm_cpus, LUF_PTE_ACCESSIBLE) || luf_pcpu_fold(pc, &key) ||
	    luf_free(fl, pc, &page, key) || luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &got))
		return 1;
	if (got != &page || flushes != 1 || luf_stats_sum(l, LUF_STAT_FREE_PEND) < 0)
		return 1;
	if (luf_freelist_fini(fl) || luf_pcpu_fini(pc) || luf_keytab_fini(kt) || luf_fini(l))
		return 1;
#if defined(LUF_HAVE_USER)
	/* The backends' names resolve, and one answers. */
	int (*open_fn)(struct luf_user *, const struct luf_user_config *) = luf_user_backend_open;

	if (!open_fn || !luf_user_kind_name(LUF_USER_MEMBARRIER))
		return 1;
#endif
	std::printf("luf from C++: ok (flushes %u)\n", flushes);
	return 0;
}
