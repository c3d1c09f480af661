// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/test_scenarios.c - the named races (scenarios.c) with
 * luf as built: the checker must stay silent and every step must behave as
 * the scenario's two-column comment says.
 */
#include <criterion/criterion.h>

#include "scenarios.h"

static void run(scen_fn *fn, const char *name)
{
	struct scen_result res;

	fn(&res);
	cr_assert(res.rule == LUF_SIM_OK, "scenario %s: checker reports %s: %s", name,
		  luf_sim_rule_name(res.rule), res.msg);
	cr_assert(!res.fail[0], "scenario %s, step %d: %s", name, res.step, res.fail);
}

Test(sim_scenario, a_mprotect_race)
{
	run(scenario_a_mprotect_race, "a");
}

Test(sim_scenario, b_migrate_writer)
{
	run(scenario_b_migrate_writer, "b");
}

Test(sim_scenario, c_mremap)
{
	run(scenario_c_mremap, "c");
}

Test(sim_scenario, d_free_frame_writes)
{
	run(scenario_d_free_frame_writes, "d");
}

Test(sim_scenario, e_write_upgrade)
{
	run(scenario_e_write_upgrade, "e");
}

Test(sim_scenario, f_ugen_wrap)
{
	run(scenario_f_ugen_wrap, "f");
}

Test(sim_scenario, g_keytab_collisions)
{
	run(scenario_g_keytab_collisions, "g");
}

Test(sim_scenario, h_reserve)
{
	run(scenario_h_reserve, "h");
}

Test(sim_scenario, r_reclaim_basic)
{
	run(scenario_r_reclaim_basic, "r");
}
