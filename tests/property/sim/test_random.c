// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/test_random.c - random operation mixes on the
 * simulated machine, deterministic scheduler: with luf as built the
 * checker must find nothing.
 *
 * Each configuration runs several seeds of 5 * 10^5 operations (reads,
 * writes, faults, reclaim and folds, migration, mprotect, munmap, mmap,
 * mremap, writes by other paths, context switches, TLB evictions), on
 * machines from 1 to 1024 CPUs, with failing flushes, a key table of 4
 * keys, ugens that wrap, tiny TLBs and memory pressure. A failure prints
 * the shortest failing history found and the LUF_SEED that replays it.
 */
#include <string.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "simtest.h"

struct rcfg {
	char name[64]; /* no pointers: Criterion may run the test in a new process */
	unsigned int cpus, doms, pages, frames, keys, tlb, threshold, reserve, fail, seeds;
	unsigned long start;
};

static struct rcfg configs[] = {
    {"4 CPUs", 4, 2, 32, 48, 64, 32, 8, 1, 0, 8, 0},
    {"8 CPUs, 2% failing flushes, 4 keys", 8, 2, 32, 64, 4, 16, 4, 2, 20, 4, 0},
    {"2 CPUs at the ugen wrap, 4-entry TLB, fold threshold 1", 2, 1, 24, 20, 16, 4, 1, 1, 0, 4,
     ULONG_MAX - 50},
    {"1 CPU, 1% failing flushes", 1, 2, 16, 24, 64, 8, 8, 1, 10, 3, 0},
    {"130 CPUs (3 cpumask words)", 130, 2, 32, 520, 256, 16, 8, 1, 0, 2, 0},
    {"1024 CPUs past the wrap", 1024, 1, 64, 2048, 1024, 8, 8, 1, 0, 2, ULONG_MAX - 1000},
    {"16 domains, 0.5% failing flushes", 8, 16, 16, 160, 64, 32, 8, 1, 5, 3, 0},
    {"memory pressure: 16 frames for 128 pages", 4, 2, 64, 16, 64, 32, 16, 2, 0, 3, 0},
};

ParameterizedTestParameters(sim_property, random)
{
	return cr_make_param_array(struct rcfg, configs, sizeof(configs) / sizeof(configs[0]));
}

ParameterizedTest(struct rcfg *p, sim_property, random, .timeout = 120)
{
	struct luf_sim_config cfg;
	struct luf_sim_result res;
	unsigned int seeds = simtest_nr_seeds(p->seeds);
	unsigned long ops = simtest_nr_ops(500000), ok = 0, deferred = 0, flushes = 0;

	luf_sim_config_default(&cfg);
	cfg.nr_cpus = p->cpus;
	cfg.nr_domains = p->doms;
	cfg.nr_pages = p->pages;
	cfg.nr_frames = p->frames;
	cfg.nr_keys = p->keys;
	cfg.tlb_entries = p->tlb;
	cfg.fold_threshold = p->threshold;
	cfg.reserve = p->reserve;
	cfg.flush_fail_permille = p->fail;
	cfg.ugen_start = p->start;
	for (unsigned int i = 0; i < seeds; i++) {
		uint64_t seed = simtest_seed(p->cpus * 131u + p->doms * 7u + p->fail, i);

		cr_assert(!luf_sim_run(&cfg, NULL, seed, ops, LUF_SIM_RUN_SHRINK, &res, stderr));
		cr_assert(res.rule == LUF_SIM_OK,
			  "%s: violation of %s (replay: LUF_SEED=%#llx, see the report above): %s",
			  p->name, luf_sim_rule_name(res.rule), (unsigned long long)seed,
			  res.first.msg);
		cr_assert(res.ops_run == ops);
		ok += res.ops_ok;
		deferred += (unsigned long)res.deferred;
		flushes += res.luf_flushes;
	}
	/* The mix must have exercised luf, or the silence proves nothing. */
	cr_assert(ok > seeds * ops / 5, "%s: only %lu operations succeeded", p->name, ok);
	if (p->cpus > 1) {
		cr_assert(deferred > 0, "%s: no removal was deferred", p->name);
		cr_assert(flushes > 0, "%s: luf never flushed", p->name);
	}
	fprintf(stderr, "%s: %u seeds x %lu operations, %lu succeeded, %lu deferred, %lu flushes\n",
		p->name, seeds, ops, ok, deferred, flushes);
}
