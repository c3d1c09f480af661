// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/test_mutant.c - proof that the checker can fail.
 *
 * Built once per mutant (tests/property/sim/CMakeLists.txt): the machine
 * and this file with one LUF_MUTANT_* switch of tests/MUTANTS.md, or with
 * SIM_MUTANT_LINK_IN_FRAME, the sim's own mutant (a free list that keeps
 * its link word in the frame's bytes, docs/DESIGN.md 4.7). Both tests pass only
 * if the checker reports a violation of a rule the mutant breaks:
 *   scenario  the named scenario that matches the broken rule;
 *   random    random histories, at most SIM_MUTANT_SEEDS seeds of
 *             SIM_MUTANT_OPS operations (the failing one is shrunk and
 *             printed, shortest history first).
 * Each writes one line to SIM_RESULTS_DIR/<mutant>.<test>, which the
 * sim.mutants.summary test counts ("mutants caught: X/Y").
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <criterion/criterion.h>

#include "scenarios.h"
#include "simtest.h"

#define SIM_MUTANT_SEEDS 8u
#define SIM_MUTANT_OPS 50000ul
#define RULE(r) (1u << (r))

#if defined(LUF_MUTANT_MARK_BEFORE_FLUSH)
/* Done marked although the flush failed: frames reused unflushed. */
#define M_RULES (RULE(LUF_SIM_S1) | RULE(LUF_SIM_S3))
#define M_SCENARIO scenario_h_reserve
#define M_SCENARIO_NAME "(h) reserve exhaustion, with a failing flush"
#define M_FAIL_PERMILLE 100
#elif defined(LUF_MUTANT_DIET_EARLY)
#define M_RULES (RULE(LUF_SIM_S1) | RULE(LUF_SIM_S2) | RULE(LUF_SIM_S3))
#define M_SCENARIO scenario_g_keytab_collisions
#define M_SCENARIO_NAME "(g) keytab collisions"
#elif defined(LUF_MUTANT_NO_SETTLE)
#define M_RULES RULE(LUF_SIM_S2)
#define M_SCENARIO scenario_a_mprotect_race
#define M_SCENARIO_NAME "(a) reclaim vs mprotect"
#elif defined(LUF_MUTANT_DEFER_WRITABLE)
#define M_RULES RULE(LUF_SIM_S3)
#define M_SCENARIO scenario_r_reclaim_basic
#define M_SCENARIO_NAME "(r) basic reclaim, writable case"
#elif defined(LUF_MUTANT_NO_ABORT)
#define M_RULES RULE(LUF_SIM_S2)
#define M_SCENARIO scenario_d_free_frame_writes
#define M_SCENARIO_NAME "(d) deferred-free frame written by another path"
#elif defined(LUF_MUTANT_UGEN_LT)
#define M_RULES (RULE(LUF_SIM_S4) | RULE(LUF_SIM_S1))
#define M_SCENARIO scenario_f_ugen_wrap
#define M_SCENARIO_NAME "(f) ugen wrap-around"
#define M_UGEN_START (ULONG_MAX - 50)
#elif defined(SIM_MUTANT_LINK_IN_FRAME)
#define M_RULES (RULE(LUF_SIM_S2) | RULE(LUF_SIM_S1))
#define M_SCENARIO scenario_r_reclaim_basic
#define M_SCENARIO_NAME "(r) basic reclaim, read-only case"
#define M_OPTIONS LUF_SIM_OPT_LINK_IN_FRAME
#else
#error "build with one LUF_MUTANT_* switch or SIM_MUTANT_LINK_IN_FRAME"
#endif

#if !defined(M_FAIL_PERMILLE)
#define M_FAIL_PERMILLE 0
#endif
#if !defined(M_UGEN_START)
#define M_UGEN_START 0
#endif
#if !defined(M_OPTIONS)
#define M_OPTIONS 0
#endif

static bool expected(enum luf_sim_rule rule)
{
	return rule != LUF_SIM_OK && (M_RULES & RULE(rule));
}

/* One line for the summary: "caught ..." or "missed ...". */
static void record(const char *test, bool caught, const char *how)
{
	char path[512];
	FILE *f;

	mkdir(SIM_RESULTS_DIR, 0777);
	snprintf(path, sizeof(path), "%s/%s.%s", SIM_RESULTS_DIR, SIM_MUTANT_NAME, test);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s by %s: %s\n", caught ? "caught" : "missed", test, how);
		fclose(f);
	}
	fprintf(stderr, "mutant %s %s by %s: %s\n", SIM_MUTANT_NAME, caught ? "caught" : "MISSED",
		test, how);
}

Test(sim_mutant, scenario)
{
	struct scen_result res;
	char how[512];

	scen_options = M_OPTIONS;
	M_SCENARIO(&res);
	snprintf(how, sizeof(how), "scenario %s reports %s: %s", M_SCENARIO_NAME,
		 luf_sim_rule_name(res.rule), res.msg);
	record("scenario", expected(res.rule), how);
	cr_assert(expected(res.rule), "mutant %s not caught: %s", SIM_MUTANT_NAME, how);
}

Test(sim_mutant, random)
{
	struct luf_sim_config cfg;
	struct luf_sim_result res;
	unsigned int seeds = simtest_nr_seeds(SIM_MUTANT_SEEDS), i;
	unsigned long ops = simtest_nr_ops(SIM_MUTANT_OPS), total = 0;
	char how[512];

	luf_sim_config_default(&cfg);
	cfg.flush_fail_permille = M_FAIL_PERMILLE;
	cfg.ugen_start = M_UGEN_START;
	cfg.options = M_OPTIONS;
	memset(&res, 0, sizeof(res));
	for (i = 0; i < seeds; i++) {
		uint64_t seed = simtest_seed(0x6d7574, i);

		cr_assert(!luf_sim_run(&cfg, NULL, seed, ops, LUF_SIM_RUN_SHRINK, &res, stderr));
		total += res.ops_run;
		if (expected(res.rule))
			break;
	}
	if (expected(res.rule))
		snprintf(
		    how, sizeof(how),
		    "random run reports %s after %lu operations (seed %#llx, shrunk to %lu): %s",
		    luf_sim_rule_name(res.rule), total, (unsigned long long)res.seed,
		    res.shrunk_len, res.first.msg);
	else
		snprintf(how, sizeof(how), "%u seeds, %lu operations: %s %s", i, total,
			 luf_sim_rule_name(res.rule), res.first.msg);
	record("random", expected(res.rule), how);
	cr_assert(expected(res.rule), "mutant %s not caught: %s", SIM_MUTANT_NAME, how);
}
