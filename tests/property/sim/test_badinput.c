// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/test_badinput.c - every entry point of the simulator
 * rejects bad input with a negative errno and changes nothing; the
 * checker and the scheduler survive any history, however malformed.
 */
#include <string.h>
#include <criterion/criterion.h>

#include "simtest.h"

static struct luf_sim *sim;
static struct luf_sim_config cfg;

static void setup(void)
{
	luf_sim_config_default(&cfg);
	cr_assert(!luf_sim_create(&cfg, &sim));
}

static void teardown(void)
{
	luf_sim_destroy(sim);
}

TestSuite(sim_badinput, .init = setup, .fini = teardown);

Test(sim_badinput, config)
{
	struct luf_sim_config c;
	struct luf_sim *s = NULL;

	cr_assert_eq(luf_sim_create(NULL, &s), -EINVAL);
	cr_assert_eq(luf_sim_create(&cfg, NULL), -EINVAL);
#define BAD(field, value)                                                           \
	do {                                                                        \
		c = cfg;                                                            \
		c.field = value;                                                    \
		cr_assert_eq(luf_sim_create(&c, &s), -EINVAL, #field " = " #value); \
		cr_assert_null(s);                                                  \
	} while (0)
	BAD(nr_cpus, 0);
	BAD(nr_cpus, LUF_SIM_MAX_CPUS + 1);
	BAD(nr_domains, 0);
	BAD(nr_domains, LUF_SIM_MAX_DOMAINS + 1);
	BAD(nr_pages, 0);
	BAD(nr_pages, LUF_SIM_MAX_PAGES + 1);
	BAD(nr_frames, 0);
	BAD(nr_frames, LUF_SIM_MAX_FRAMES + 1);
	BAD(nr_keys, 1);
	BAD(nr_keys, 65537);
	BAD(tlb_entries, 0);
	BAD(tlb_entries, LUF_SIM_MAX_TLB + 1);
	BAD(fold_threshold, 0);
	BAD(flush_fail_permille, 1001);
	BAD(options, 0x80);
#undef BAD
	c = cfg;
	c.nr_cpus = LUF_SIM_MAX_CPUS;
	c.nr_domains = LUF_SIM_MAX_DOMAINS;
	c.nr_pages = LUF_SIM_MAX_PAGES; /* 2^28 TLB slots: too many */
	cr_assert_eq(luf_sim_create(&c, &s), -EINVAL);
	luf_sim_destroy(NULL);
}

/* Every operation with each bad argument: -EINVAL, and nothing happened. */
Test(sim_badinput, operations)
{
	const unsigned int C = cfg.nr_cpus, D = cfg.nr_domains, P = cfg.nr_pages;
	unsigned long clean, pend, clean2, pend2;
	uint64_t stamp;

	luf_sim_nr_free(sim, 0, &clean, &pend);
	cr_assert_eq(luf_sim_read(NULL, 0, 0, 0, 0, &stamp), -EINVAL);
	cr_assert_eq(luf_sim_read(sim, C, 0, 0, 0, &stamp), -EINVAL);
	cr_assert_eq(luf_sim_read(sim, UINT_MAX, 0, 0, 0, &stamp), -EINVAL);
	cr_assert_eq(luf_sim_read(sim, 0, D, 0, 0, &stamp), -EINVAL);
	cr_assert_eq(luf_sim_read(sim, 0, 0, P, 0, &stamp), -EINVAL);
	cr_assert_eq(luf_sim_read(sim, 0, 0, 0, 0x80, &stamp), -EINVAL);
	cr_assert_eq(luf_sim_write(NULL, 0, 0, 0, 0), -EINVAL);
	cr_assert_eq(luf_sim_write(sim, C, 0, 0, 0), -EINVAL);
	cr_assert_eq(luf_sim_write(sim, 0, 0, P, 0), -EINVAL);
	cr_assert_eq(luf_sim_write(sim, 0, 0, 0, LUF_SIM_F_WRITE), -EINVAL);
	cr_assert_eq(luf_sim_fault(sim, 0, D, 0, 0), -EINVAL);
	cr_assert_eq(luf_sim_fault(sim, 0, 0, 0, 0x10), -EINVAL);
	cr_assert_eq(luf_sim_reclaim(sim, C, 0, 0), -EINVAL);
	cr_assert_eq(luf_sim_reclaim(sim, 0, 0, P), -EINVAL);
	cr_assert_eq(luf_sim_fold(sim, C), -EINVAL);
	cr_assert_eq(luf_sim_fold(NULL, 0), -EINVAL);
	cr_assert_eq(luf_sim_migrate(sim, 0, D, 0, 0), -EINVAL);
	cr_assert_eq(luf_sim_migrate(sim, 0, 0, 0, LUF_SIM_F_WRITE), -EINVAL);
	cr_assert_eq(luf_sim_mprotect(sim, 0, 0, 0, 1, 3), -EINVAL);
	cr_assert_eq(luf_sim_mprotect(sim, 0, 0, 0, 0, LUF_SIM_PROT_READ), -EINVAL);
	cr_assert_eq(luf_sim_mprotect(sim, 0, 0, P - 1, 2, LUF_SIM_PROT_READ), -EINVAL);
	cr_assert_eq(luf_sim_mprotect(sim, 0, 0, 0, LUF_SIM_MAX_RANGE + 1, 1), -EINVAL);
	cr_assert_eq(luf_sim_mprotect(sim, 0, 0, UINT_MAX, 2, LUF_SIM_PROT_READ), -EINVAL);
	cr_assert_eq(luf_sim_munmap(sim, 0, 0, 1, UINT_MAX), -EINVAL);
	cr_assert_eq(luf_sim_munmap(sim, C, 0, 0, 1), -EINVAL);
	cr_assert_eq(luf_sim_mmap(sim, 0, 0, 0, 1, 7), -EINVAL);
	cr_assert_eq(luf_sim_mremap(sim, 0, 0, 0, 1, 2), -EINVAL); /* overlapping */
	cr_assert_eq(luf_sim_mremap(sim, 0, 0, 0, P, 1), -EINVAL);
	cr_assert_eq(luf_sim_mremap(sim, 0, D, 0, 4, 1), -EINVAL);
	cr_assert_eq(luf_sim_frame_write(sim, 0, cfg.nr_frames, LUF_ABORT_POISON), -EINVAL);
	cr_assert_eq(luf_sim_frame_write(sim, 0, 0, LUF_ABORT_WRITE_FAULT), -EINVAL);
	cr_assert_eq(luf_sim_frame_write(sim, 0, 0, 1000), -EINVAL);
	cr_assert_eq(luf_sim_frame_write(sim, C, 0, LUF_ABORT_POISON), -EINVAL);
	cr_assert_eq(luf_sim_ctx_switch(sim, C), -EINVAL);
	cr_assert_eq(luf_sim_ctx_switch(NULL, 0), -EINVAL);
	cr_assert_eq(luf_sim_evict(sim, 0, 0, P), -EINVAL);
	cr_assert_eq(luf_sim_nr_ops(sim), 0, "a rejected operation was counted");
	luf_sim_nr_free(sim, 0, &clean2, &pend2);
	cr_assert(clean == clean2 && pend == pend2, "a rejected operation changed the free list");
	/* A frame that is not on this CPU's list: nothing to act on, not written. */
	cr_assert_eq(luf_sim_frame_write(sim, 1, 0, LUF_ABORT_POISON), -ENOENT);
	cr_assert_eq(luf_sim_violations(sim, LUF_SIM_OK), 0);
}

Test(sim_badinput, inspection)
{
	unsigned int frame, flags;
	unsigned long c, p;

	cr_assert_eq(luf_sim_pte(NULL, 0, 0, &frame, &flags), -EINVAL);
	cr_assert_eq(luf_sim_pte(sim, cfg.nr_domains, 0, &frame, &flags), -EINVAL);
	cr_assert_eq(luf_sim_pte(sim, 0, cfg.nr_pages, &frame, &flags), -EINVAL);
	cr_assert_eq(luf_sim_pte(sim, 0, 0, &frame, &flags), -ENOENT);
	cr_assert_eq(luf_sim_tlb(sim, cfg.nr_cpus, 0, 0, &frame, &flags), -EINVAL);
	cr_assert_eq(luf_sim_tlb(sim, 0, 0, 0, NULL, NULL), -ENOENT);
	cr_assert_eq(luf_sim_frame_state(sim, cfg.nr_frames), -EINVAL);
	cr_assert_eq(luf_sim_frame_state(NULL, 0), -EINVAL);
	cr_assert_eq(luf_sim_free_frame(sim, cfg.nr_cpus, 0), -EINVAL);
	cr_assert_eq(luf_sim_nr_free(sim, cfg.nr_cpus, &c, &p), -EINVAL);
	cr_assert_eq(luf_sim_ipis(sim, cfg.nr_cpus), 0);
	cr_assert_eq(luf_sim_ipis(NULL, 0), 0);
	cr_assert_eq(luf_sim_violations(sim, -1), 0);
	cr_assert_eq(luf_sim_violations(sim, LUF_SIM_NR_RULES), 0);
	cr_assert_null(luf_sim_first_violation(sim));
	cr_assert_null(luf_sim_first_violation(NULL));
	cr_assert_null(luf_sim_luf(NULL));
	cr_assert_eq(luf_sim_stat(sim, LUF_STAT_NR_ITEMS), 0);
	cr_assert_str_eq(luf_sim_rule_name(-1), "?");
	cr_assert_str_eq(luf_sim_rule_name(LUF_SIM_NR_RULES), "?");
	cr_assert_str_eq(luf_sim_rule_name(LUF_SIM_S3), "S3");
	luf_sim_fail_flushes(NULL, 3);
	luf_sim_config_default(NULL);
	luf_sim_mix_default(NULL);
}

/* Histories of random bytes: every field out of range somewhere. */
Test(sim_badinput, malformed_histories)
{
	enum { N = 20000 };
	static struct luf_sim_op ops[N];
	struct luf_sim_result res;
	uint64_t s = 0x62616421;
	char buf[160];
	unsigned long bad = 0;

	for (unsigned int i = 0; i < N; i++) {
		uint32_t w[8];

		for (unsigned int k = 0; k < 8; k++) {
			uint64_t z = (s += 0x9e3779b97f4a7c15ull);

			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
			z ^= z >> 31;
			w[k] = (uint32_t)z;
			/* Half the time a small value, so some operations are valid. */
			if (z >> 63)
				w[k] %= k == 0 ? LUF_SIM_OP_NR + 2 : 5;
		}
		ops[i] = (struct luf_sim_op){.kind = w[0],
					     .cpu = w[1],
					     .dom = w[2],
					     .page = w[3],
					     .page2 = w[4],
					     .npages = w[5],
					     .arg = w[6],
					     .ret = (int32_t)w[7],
					     .rng = s};
		luf_sim_op_format(&ops[i], buf, sizeof(buf));
		luf_sim_op_format(&ops[i], buf, 1);
		luf_sim_op_format(&ops[i], buf, 0);
		if (luf_sim_exec(sim, &ops[i]) == -EINVAL)
			bad++;
	}
	cr_assert(bad > N / 4 && bad < N, "%lu of %d operations rejected", bad, N);
	cr_assert_eq(luf_sim_violations(sim, LUF_SIM_OK), 0, "%s",
		     luf_sim_first_violation(sim) ? luf_sim_first_violation(sim)->msg : "");
	cr_assert_eq(luf_sim_replay(&cfg, ops, N, &res), 0);
	cr_assert_eq(res.rule, LUF_SIM_OK, "%s", res.first.msg);
	cr_assert_eq(luf_sim_replay(&cfg, NULL, 1, &res), -EINVAL);
	cr_assert_eq(luf_sim_replay(&cfg, NULL, 0, &res), 0);
	cr_assert_eq(luf_sim_replay(NULL, ops, 1, &res), -EINVAL);
	cr_assert_eq(luf_sim_exec(sim, NULL), -EINVAL);
	cr_assert_eq(luf_sim_exec(NULL, &ops[0]), -EINVAL);
	luf_sim_op_format(NULL, buf, sizeof(buf));
	luf_sim_op_format(&ops[0], NULL, 10);
	cr_assert_eq(luf_sim_run(NULL, NULL, 1, 10, 0, &res, NULL), -EINVAL);
	cr_assert_eq(luf_sim_run(&cfg, NULL, 1, 10, 0, NULL, NULL), -EINVAL);
	cr_assert_eq(luf_sim_run(&cfg, NULL, 1, 0, 0, &res, NULL), 0);
	cr_assert_eq(res.ops_run, 0);
	cr_assert_eq(luf_sim_run_threaded(NULL, NULL, 1, 10, &res, NULL), -EINVAL);
}
