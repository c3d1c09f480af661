// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/test_threaded.c - the threaded scheduler: one pthread
 * per simulated CPU, sharing luf's key table and domains and the sim's
 * page tables and TLBs. With luf as built the checker must find nothing,
 * and under ThreadSanitizer (ctest -L tsan, a build with
 * -fsanitize=thread) no data race may be reported either. TSan slows each
 * operation about tenfold, so fewer run there.
 *
 * A plain program, not Criterion: Criterion cannot start under TSan
 * ("Could not initialize inheritable arena", Snaipe/Criterion#274).
 * Exit status: 0 if every check held. The last check runs the sim's own
 * mutant (a free-list link written into the frame) under threads: the
 * checker must catch it there too.
 */
#include <string.h>

#include "simtest.h"

#define OPS_PER_CPU (SIMTEST_TSAN ? 50000ul : 200000ul)

struct tcfg {
	const char *name;
	unsigned int cpus, pages, frames, keys, tlb, threshold, fail, seeds;
	unsigned long start;
};

static const struct tcfg configs[] = {
    {"4 threads", 4, 32, 48, 64, 32, 8, 0, 3, 0},
    {"8 threads, 2% failing flushes, 4 keys, ugen wrap", 8, 32, 64, 4, 16, 4, 20, 2,
     ULONG_MAX - 50},
    {"3 threads on 8 pages, threshold 1", 3, 8, 8, 16, 4, 1, 0, 3, 0},
    {"16 threads", 16, 32, 96, 64, 16, 8, 5, 1, 0},
};

static unsigned int failures;

#define CHECK(cond, ...)                                                                \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                   \
			fputc('\n', stderr);                                            \
			failures++;                                                     \
		}                                                                       \
	} while (0)

static void setup(struct luf_sim_config *cfg, const struct tcfg *p)
{
	luf_sim_config_default(cfg);
	cfg->nr_cpus = p->cpus;
	cfg->nr_pages = p->pages;
	cfg->nr_frames = p->frames;
	cfg->nr_keys = p->keys;
	cfg->tlb_entries = p->tlb;
	cfg->fold_threshold = p->threshold;
	cfg->flush_fail_permille = p->fail;
	cfg->ugen_start = p->start;
}

static void run_config(const struct tcfg *p)
{
	struct luf_sim_config cfg;
	struct luf_sim_result res;
	unsigned int seeds = simtest_nr_seeds(p->seeds);
	unsigned long ops = simtest_nr_ops(OPS_PER_CPU), ipis = 0;

	setup(&cfg, p);
	for (unsigned int i = 0; i < seeds; i++) {
		uint64_t seed = simtest_seed(0x746872 + p->cpus, i);

		CHECK(!luf_sim_run_threaded(&cfg, NULL, seed, ops, &res, stderr), "%s", p->name);
		CHECK(res.rule == LUF_SIM_OK, "%s, seed %#llx: violation of %s: %s", p->name,
		      (unsigned long long)seed, luf_sim_rule_name(res.rule), res.first.msg);
		CHECK(res.ops_run == ops * p->cpus, "%s: %lu operations ran", p->name, res.ops_run);
		ipis += res.ipis;
	}
	CHECK(ipis > 0, "%s: no CPU ever flushed another", p->name);
	printf("%s: %u seeds x %u threads x %lu operations, %lu IPIs\n", p->name, seeds, p->cpus,
	       ops, ipis);
}

static void run_link_in_frame(void)
{
	struct luf_sim_config cfg;
	struct luf_sim_result res;

	setup(&cfg, &configs[0]);
	cfg.options = LUF_SIM_OPT_LINK_IN_FRAME;
	CHECK(!luf_sim_run_threaded(&cfg, NULL, simtest_seed(0x6c696e6b, 0),
				    simtest_nr_ops(OPS_PER_CPU), &res, NULL),
	      "link-in-frame run");
	CHECK(res.rule == LUF_SIM_S2 || res.rule == LUF_SIM_S1,
	      "a free list writing into the frame went unnoticed under threads (%s)",
	      luf_sim_rule_name(res.rule));
	printf("link-in-frame mutant under threads: %s after %lu operations\n",
	       luf_sim_rule_name(res.rule), res.ops_run);
}

int main(void)
{
	printf("threaded scheduler%s\n", SIMTEST_TSAN ? " (ThreadSanitizer build)" : "");
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		run_config(&configs[i]);
	run_link_in_frame();
	printf("%s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
