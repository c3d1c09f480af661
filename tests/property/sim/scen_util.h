// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/scen_util.h - the steps the named scenarios are made
 * of: a machine per scenario, expectations that record the first failure,
 * and looks at PTEs, TLB entries and free lists.
 */
#ifndef LUF_SIM_SCEN_UTIL_H
#define LUF_SIM_SCEN_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "scenarios.h"

struct scen {
	struct luf_sim *sim;
	struct scen_result *res;
	int step;
};

static inline void scen_begin(struct scen *s, struct scen_result *res, struct luf_sim_config *cfg)
{
	memset(res, 0, sizeof(*res));
	s->res = res;
	s->step = 0;
	cfg->options |= scen_options;
	if (luf_sim_create(cfg, &s->sim)) {
		snprintf(res->fail, sizeof(res->fail), "luf_sim_create() failed");
		s->sim = NULL;
	}
}

static inline void scen_end(struct scen *s)
{
	const struct luf_sim_violation *v = luf_sim_first_violation(s->sim);

	if (v) {
		s->res->rule = v->rule;
		snprintf(s->res->msg, sizeof(s->res->msg), "%s", v->msg);
	}
	luf_sim_destroy(s->sim);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void
scen_expect(struct scen *s, bool ok, const char *fmt, ...)
{
	va_list ap;

	s->step++;
	if (ok || s->res->fail[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->res->fail, sizeof(s->res->fail), fmt, ap);
	va_end(ap);
	s->res->step = s->step;
}

/* A small machine: @cpus CPUs, one domain of 16 pages, 32 frames. */
static inline struct luf_sim_config scen_cfg(unsigned int cpus)
{
	struct luf_sim_config cfg;

	luf_sim_config_default(&cfg);
	cfg.nr_cpus = cpus;
	cfg.nr_domains = 1;
	cfg.nr_pages = 16;
	cfg.nr_frames = 32;
	return cfg;
}

/* The frame @cpu's TLB maps d0:@page to, or -1. */
static inline int tlb_frame(struct scen *s, unsigned int cpu, unsigned int page)
{
	unsigned int frame;

	return luf_sim_tlb(s->sim, cpu, 0, page, &frame, NULL) ? -1 : (int)frame;
}

/* The frame d0:@page maps, or -1. */
static inline int pte_frame(struct scen *s, unsigned int page)
{
	unsigned int frame;

	return luf_sim_pte(s->sim, 0, page, &frame, NULL) ? -1 : (int)frame;
}

static inline unsigned long clean_of(struct scen *s, unsigned int cpu)
{
	unsigned long clean = 0;

	luf_sim_nr_free(s->sim, cpu, &clean, NULL);
	return clean;
}

static inline unsigned long pend_of(struct scen *s, unsigned int cpu)
{
	unsigned long pend = 0;

	luf_sim_nr_free(s->sim, cpu, NULL, &pend);
	return pend;
}

#endif /* LUF_SIM_SCEN_UTIL_H */
