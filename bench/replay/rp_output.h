// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* bench/replay/rp_output.h - the result of one trace, as a table, JSON or a chart. */
#ifndef RP_OUTPUT_H
#define RP_OUTPUT_H

#include <stdio.h>

#include "rp_kmodel.h"
#include "rp_model.h"

struct rp_result {
	const char *path;
	unsigned int nr_cpus;
	struct luf_cmp_counts c[LUF_CMP_NPOL];
	unsigned long long bound_cpus, bound_ops; /* the lower bounds (luf_cmp.h) */
	struct rp_stats st;
	int kernel;	     /* a kernel trace (rp_kparse.h): @ks, not @st */
	struct rp_kstats ks; /* its events; ks.events[RP_K_IPI]: shootdowns it measured */
	unsigned long long skipped; /* malformed lines skipped (--lenient) */
	unsigned long in_flight;    /* calls cut off at the end */
	double seconds;		    /* parse + replay */
};

/* Reduction of @a against @b in percent (100 * (1 - a/b)); 0 if b is 0. */
double rp_reduction(unsigned long long a, unsigned long long b);
unsigned long long rp_violations(const struct rp_result *r, enum luf_cmp_pol p);
void rp_print_table(FILE *f, const struct rp_result *r);
void rp_print_stats(FILE *f, const struct rp_result *r);
/* --explain: flush operations per policy by what forced them. */
void rp_print_causes(FILE *f, const struct rp_result *r);
/* JSON: one object per trace, in an array when @n > 1. */
void rp_print_json(FILE *f, const struct rp_result *r, int n);
/*
 * A bar chart of nr_tlb_remote_flush per policy and trace in @png, drawn by
 * gnuplot (found on the PATH) from a script file. Return: 0, or -1 with
 * the reason in @why (@len bytes): gnuplot not found, or failed.
 */
int rp_write_png(const char *png, const struct rp_result *r, int n, char *why, size_t len);

#endif /* RP_OUTPUT_H */
