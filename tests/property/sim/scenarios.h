// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/scenarios.h - named races, run step by step on the
 * simulated machine (scenarios.c). With luf as built each must end with no
 * violation and with the behaviour its comment describes; each mutant of
 * tests/MUTANTS.md is expected to break the scenario that names its rule.
 */
#ifndef LUF_SIM_SCENARIOS_H
#define LUF_SIM_SCENARIOS_H

#include "luf_sim.h"

struct scen_result {
	enum luf_sim_rule rule; /* the checker's first violation */
	char msg[256];		/* its message */
	char fail[256];		/* first expectation of the scenario itself that failed */
	int step;		/* the step it failed at */
};

typedef void scen_fn(struct scen_result *res);

struct scenario {
	const char *name; /* "a_mprotect_race", ... */
	scen_fn *run;
};

/* Extra LUF_SIM_OPT_* bits for every scenario's machine (the sim-local mutant). */
extern unsigned int scen_options;

void scenario_a_mprotect_race(struct scen_result *res);
void scenario_b_migrate_writer(struct scen_result *res);
void scenario_c_mremap(struct scen_result *res);
void scenario_d_free_frame_writes(struct scen_result *res);
void scenario_e_write_upgrade(struct scen_result *res);
void scenario_f_ugen_wrap(struct scen_result *res);
void scenario_g_keytab_collisions(struct scen_result *res);
void scenario_h_reserve(struct scen_result *res);
void scenario_r_reclaim_basic(struct scen_result *res);

extern const struct scenario scenarios[];
extern const unsigned int nr_scenarios;

#endif /* LUF_SIM_SCENARIOS_H */
