// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf-workloads: the workload models of mdl_work.c on 16, 64, 256 and 4096
 * simulated CPUs, immediate / batched / luf / oracle counted in one run on
 * the same events, each configuration repeated with --runs seeds.
 *
 * Usage: luf-workloads [--model NAME|all] [--cpus N[,N...]] [--runs N]
 *                   [--steps N] [--max-steps N] [--seed N] [--ctx N] [--wf N]
 *                   [--data FILE] [--explain]
 *   --steps   steps per CPU (default 2000)
 *   --max-steps  at most this many steps per run: a configuration whose
 *             CPUs x --steps is larger runs max-steps / CPUs steps per CPU
 *             instead (default 2048000: 500 per CPU at 4096 CPUs; 0 = no
 *             cap). Every table has a steps/CPU column and a footnote
 *             when a row was capped.
 *   --ctx     full local flushes per 1000 steps of a CPU (default 5)
 *   --wf      write faults per 1000 steps (default 1)
 *   --data    also write one line per (model, CPUs) of medians for gnuplot
 *   --explain one line per flush of every policy on stderr (what forced it,
 *             its CPUs), and per model the flush operations by cause
 * Output: a markdown table per model: medians over the runs [min-max].
 * --data lines: model/CPUs, remote flushes (immediate batched luf oracle),
 * IPIs (same order), luf vs batched %, luf vs oracle %, steps/CPU, luf
 * aborts, luf / CPU-flush bound, luf / flush-operation bound (all medians).
 * Every run is checked: no violation, every policy at or above both lower
 * bounds (lib/sim/luf_cmp.h), the oracle exactly at the flush-operation
 * bound (that bound's stabbing, computed apart), batched and luf at or
 * below immediate in flush operations; a failure counts in the violations
 * column.
 * Ratios are computed within each run, then their median is taken.
 * Exit status: 0; 1 a safety violation or a luf error; 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdl.h"

#define MAX_RUNS 64
#define MAX_CPUS_ARGS 8

struct stat3 {
	double med, min, max;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct stat3 stat_of(const double *v, unsigned int n)
{
	double s[MAX_RUNS];
	struct stat3 r;

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	r.min = s[0];
	r.max = s[n - 1];
	r.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	return r;
}

static void cell(const double *v, unsigned int n, const char *fmt)
{
	struct stat3 s = stat_of(v, n);
	char a[32], b[32], c[32];

	snprintf(a, sizeof(a), fmt, s.med);
	snprintf(b, sizeof(b), fmt, s.min);
	snprintf(c, sizeof(c), fmt, s.max);
	if (!strcmp(b, c))
		printf(" %s |", a);
	else
		printf(" %s [%s–%s] |", a, b, c);
}

static double pct(double a, double b)
{
	return b > 0 ? 100.0 * (a - b) / b : 0;
}

struct opts {
	int model; /* -1: all */
	unsigned int cpus[MAX_CPUS_ARGS], ncpus, runs;
	unsigned long steps, max_steps;
	uint64_t seed;
	unsigned int ctx, wf;
	const char *data;
	int explain;
};

static int usage(void)
{
	fprintf(stderr, "usage: luf-workloads [--model reclaim|tiering|compaction|jit|alloc|all] "
			"[--cpus N[,N...]] [--runs N] [--steps N] [--max-steps N] [--seed N] "
			"[--ctx N] [--wf N] [--data FILE] [--explain]\n");
	return 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (!strcmp(a, "--explain")) {
			o->explain = 1;
			continue;
		}
		if (!v)
			return -1;
		i++;
		if (!strcmp(a, "--model")) {
			o->model = -1;
			for (int m = 0; m < MDL_NMODELS; m++)
				if (!strcmp(v, mdl_model_name((enum mdl_model)m)))
					o->model = m;
			if (o->model < 0 && strcmp(v, "all"))
				return -1;
		} else if (!strcmp(a, "--cpus")) {
			o->ncpus = 0;
			for (const char *p = v; *p && o->ncpus < MAX_CPUS_ARGS; p = end) {
				unsigned long n = strtoul(p, &end, 10);

				if (end == p || !n || n > LUF_MAX_CPUS)
					return -1;
				o->cpus[o->ncpus++] = (unsigned int)n;
				if (*end == ',')
					end++;
				else if (*end)
					return -1;
			}
		} else if (!strcmp(a, "--runs")) {
			o->runs = (unsigned int)strtoul(v, &end, 10);
			if (*end || !o->runs || o->runs > MAX_RUNS)
				return -1;
		} else if (!strcmp(a, "--steps")) {
			o->steps = strtoul(v, &end, 10);
			if (*end || !o->steps)
				return -1;
		} else if (!strcmp(a, "--max-steps")) {
			o->max_steps = strtoul(v, &end, 10);
			if (*end)
				return -1;
		} else if (!strcmp(a, "--seed")) {
			o->seed = strtoull(v, &end, 10);
		} else if (!strcmp(a, "--ctx")) {
			o->ctx = (unsigned int)strtoul(v, &end, 10);
		} else if (!strcmp(a, "--wf")) {
			o->wf = (unsigned int)strtoul(v, &end, 10);
		} else if (!strcmp(a, "--data")) {
			o->data = v;
		} else {
			return -1;
		}
	}
	return 0;
}

/* Steps per CPU on @cpus CPUs: --steps, or fewer if --max-steps caps the run. */
static unsigned long steps_for(const struct opts *o, unsigned int cpus)
{
	unsigned long s = o->steps;

	if (o->max_steps && s > o->max_steps / cpus)
		s = o->max_steps / cpus ? o->max_steps / cpus : 1;
	return s;
}

/* Per run values of one configuration. */
struct runs {
	double remote[LUF_CMP_NPOL][MAX_RUNS], ipis[LUF_CMP_NPOL][MAX_RUNS];
	double skipped[MAX_RUNS], dropped[MAX_RUNS], aborts[MAX_RUNS];
	double vs_bat[MAX_RUNS], vs_imm[MAX_RUNS], vs_ora[MAX_RUNS];
	double ipi_per_k[LUF_CMP_NPOL][MAX_RUNS];
	double bcpus[MAX_RUNS], bops[MAX_RUNS], luf_bcpus[MAX_RUNS], luf_bops[MAX_RUNS];
	long abort_cause[LUF_ABORT_NR_CAUSES];
	unsigned long long by_cause[LUF_CMP_NPOL][LUF_CMP_NCAUSES];
	unsigned long long viol, errors, order;
};

static double ratio(unsigned long long a, unsigned long long b)
{
	return b ? (double)a / (double)b : (a ? 1e9 : 1.0);
}

/* Bounds and order (see the head comment): the number of properties broken. */
static unsigned long long check_order(const struct mdl_result *r, unsigned int cpus, uint64_t seed,
				      enum mdl_model w)
{
	unsigned long long bad = 0;

	for (int p = 0; p < LUF_CMP_NPOL; p++) {
		const struct luf_cmp_counts *c = &r->c[p];
		unsigned long long ops = c->flushes;

		if (c->cpus < r->bound_cpus || ops < r->bound_ops ||
		    (p == LUF_CMP_ORACLE && ops != r->bound_ops) ||
		    (p != LUF_CMP_IMMEDIATE && p != LUF_CMP_ORACLE &&
		     ops > r->c[LUF_CMP_IMMEDIATE].flushes)) {
			bad++;
			fprintf(
			    stderr,
			    "luf-workloads: %s, %u CPUs, seed %llu: %s: %llu CPUs flushed (bound "
			    "%llu), %llu flushes (bound %llu, immediate %llu)\n",
			    mdl_model_name(w), cpus, (unsigned long long)seed,
			    luf_cmp_pol_name((enum luf_cmp_pol)p), c->cpus, r->bound_cpus, ops,
			    r->bound_ops, r->c[LUF_CMP_IMMEDIATE].flushes);
		}
	}
	return bad;
}

static int run_config(const struct opts *o, enum mdl_model m, unsigned int cpus, struct runs *R)
{
	memset(R, 0, sizeof(*R));
	for (unsigned int k = 0; k < o->runs; k++) {
		struct mdl_work_opt wo = {.nr_cpus = cpus,
					  .steps = steps_for(o, cpus),
					  .seed = o->seed + k,
					  .ctx_permille = o->ctx,
					  .wf_permille = o->wf,
					  .explain = o->explain ? stderr : NULL};
		struct mdl_result r;
		int ret = mdl_work_run(m, &wo, &r);
		double a = 0;

		if (ret) {
			fprintf(stderr, "luf-workloads: %s on %u CPUs: error %d\n",
				mdl_model_name(m), cpus, ret);
			return ret;
		}
		for (int p = 0; p < LUF_CMP_NPOL; p++) {
			R->remote[p][k] = (double)r.c[p].remote;
			R->ipis[p][k] = (double)r.c[p].received;
			R->ipi_per_k[p][k] =
			    wo.migrated ? 1000.0 * (double)r.c[p].received / (double)wo.migrated
					: 0;
			for (int v = 0; v < LUF_CMP_NRULES; v++)
				R->viol += r.c[p].viol[v];
		}
		for (int c = 0; c < LUF_ABORT_NR_CAUSES; c++) {
			a += (double)r.aborts[c];
			R->abort_cause[c] += r.aborts[c];
		}
		R->aborts[k] = a;
		R->skipped[k] = (double)r.luf_skipped;
		R->dropped[k] = (double)r.luf_dropped;
		R->vs_bat[k] =
		    pct((double)r.c[LUF_CMP_LUF].remote, (double)r.c[LUF_CMP_BATCHED].remote);
		R->vs_imm[k] =
		    pct((double)r.c[LUF_CMP_LUF].remote, (double)r.c[LUF_CMP_IMMEDIATE].remote);
		R->vs_ora[k] =
		    pct((double)r.c[LUF_CMP_LUF].remote, (double)r.c[LUF_CMP_ORACLE].remote);
		R->errors += (unsigned long long)r.luf_errors;
		R->order += check_order(&r, cpus, wo.seed, m);
		R->bcpus[k] = (double)r.bound_cpus;
		R->bops[k] = (double)r.bound_ops;
		R->luf_bcpus[k] = ratio(r.c[LUF_CMP_LUF].cpus, r.bound_cpus);
		R->luf_bops[k] = ratio(r.c[LUF_CMP_LUF].flushes, r.bound_ops);
		for (int p = 0; p < LUF_CMP_NPOL; p++)
			for (int c = 0; c < LUF_CMP_NCAUSES; c++)
				R->by_cause[p][c] += r.c[p].by_cause[c];
	}
	return 0;
}

static void print_row(const struct opts *o, unsigned int cpus, const struct runs *R, int migr)
{
	unsigned int n = o->runs;

	printf("| %u | %lu |", cpus, steps_for(o, cpus));
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		cell(R->remote[p], n, "%.0f");
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		cell(R->ipis[p], n, "%.0f");
	if (migr)
		for (int p = 0; p < LUF_CMP_NPOL; p++)
			cell(R->ipi_per_k[p], n, "%.0f");
	cell(R->skipped, n, "%.0f");
	cell(R->dropped, n, "%.0f");
	cell(R->aborts, n, "%.0f");
	cell(R->vs_imm, n, "%+.1f%%");
	cell(R->vs_bat, n, "%+.1f%%");
	cell(R->vs_ora, n, "%+.1f%%");
	cell(R->bcpus, n, "%.0f");
	cell(R->bops, n, "%.0f");
	cell(R->luf_bcpus, n, "%.2f");
	cell(R->luf_bops, n, "%.2f");
	printf(" %llu |\n", R->viol + R->errors + R->order);
}

/* --explain: the flush operations of every policy by cause, all runs summed. */
static void print_causes(const struct opts *o,
			 unsigned long long (*causes)[LUF_CMP_NPOL][LUF_CMP_NCAUSES])
{
	printf("\nFlush operations by cause (all runs; --explain):\n\n| CPUs | policy |");
	for (int c = 0; c < LUF_CMP_NCAUSES; c++)
		printf(" %s |", luf_cmp_cause_name((enum luf_cmp_cause)c));
	printf(" total |\n|---|---|");
	for (int c = 0; c <= LUF_CMP_NCAUSES; c++)
		printf("---|");
	printf("\n");
	for (unsigned int i = 0; i < o->ncpus; i++)
		for (int p = 0; p < LUF_CMP_NPOL; p++) {
			unsigned long long t = 0;

			printf("| %u | %s |", o->cpus[i], luf_cmp_pol_name((enum luf_cmp_pol)p));
			for (int c = 0; c < LUF_CMP_NCAUSES; c++) {
				printf(" %llu |", causes[i][p][c]);
				t += causes[i][p][c];
			}
			printf(" %llu |\n", t);
		}
}

/* Say so when a configuration ran fewer steps per CPU than --steps. */
static void footnote(const struct opts *o)
{
	int any = 0;

	for (unsigned int i = 0; i < o->ncpus; i++) {
		if (steps_for(o, o->cpus[i]) == o->steps)
			continue;
		printf("%s%u CPUs: %lu steps per CPU, not %lu",
		       any ? "; " : "\nFewer steps: ", o->cpus[i], steps_for(o, o->cpus[i]),
		       o->steps);
		any = 1;
	}
	if (any)
		printf(" (--max-steps %lu caps the steps of one run to bound its time:\n"
		       "each CPU goes through fewer reclaim, compile or migration cycles, the\n"
		       "start with every free list full weighs more, and the counts are smaller\n"
		       "in proportion; compare ratios, not counts, with the other rows).\n",
		       o->max_steps);
}

int main(int argc, char **argv)
{
	struct opts o = {.model = -1,
			 .cpus = {16, 64, 256, 4096},
			 .ncpus = 4,
			 .runs = 5,
			 .steps = 2000,
			 .max_steps = 2048000,
			 .seed = 1,
			 .ctx = 5,
			 .wf = 1};
	static struct runs R;
	static unsigned long long causes[MAX_CPUS_ARGS][LUF_CMP_NPOL][LUF_CMP_NCAUSES];
	FILE *data = NULL;
	int bad = 0;

	if (parse(argc, argv, &o))
		return usage();
	if (o.data && !(data = fopen(o.data, "w"))) {
		perror(o.data);
		return 2;
	}
	printf("<!-- luf-workloads --runs %u --steps %lu --max-steps %lu --seed %llu --ctx %u --wf "
	       "%u -->\n",
	       o.runs, o.steps, o.max_steps, (unsigned long long)o.seed, o.ctx, o.wf);
	for (int m = 0; m < MDL_NMODELS; m++) {
		int migr = m == MDL_TIERING || m == MDL_COMPACTION;

		if (o.model >= 0 && o.model != m)
			continue;
		printf("\n#### %s\n\n%s.\n\n", mdl_model_name((enum mdl_model)m),
		       mdl_model_what((enum mdl_model)m));
		printf(
		    "| CPUs | steps/CPU | remote flushes: immediate | batched | luf | oracle "
		    "| IPIs received: immediate | batched | luf | oracle |%s"
		    " luf skipped by diet | CPUs dieted | luf aborts "
		    "| luf vs immediate | luf vs batched | luf vs oracle | CPU-flush bound "
		    "| flush-operation bound | luf / CPU-flush bound | luf / flush-operation bound "
		    "| violations |\n",
		    migr ? " IPIs/1000 migrated: immediate | batched | luf | oracle |" : "");
		printf("|---|---|---|---|---|---|---|---|---|---|%s---|---|---|---|---|---|---|---|"
		       "---|---|"
		       "---|\n",
		       migr ? "---|---|---|---|" : "");
		for (unsigned int i = 0; i < o.ncpus; i++) {
			if (run_config(&o, (enum mdl_model)m, o.cpus[i], &R))
				return 1;
			print_row(&o, o.cpus[i], &R, migr);
			fflush(stdout);
			bad |= R.viol || R.errors || R.order;
			memcpy(causes[i], R.by_cause, sizeof(causes[i]));
			if (data) {
				fprintf(data, "%s/%u", mdl_model_name((enum mdl_model)m),
					o.cpus[i]);
				for (int p = 0; p < LUF_CMP_NPOL; p++)
					fprintf(data, " %.0f", stat_of(R.remote[p], o.runs).med);
				for (int p = 0; p < LUF_CMP_NPOL; p++)
					fprintf(data, " %.0f", stat_of(R.ipis[p], o.runs).med);
				fprintf(data, " %.2f %.2f %lu %.0f %.3f %.3f\n",
					stat_of(R.vs_bat, o.runs).med,
					stat_of(R.vs_ora, o.runs).med, steps_for(&o, o.cpus[i]),
					stat_of(R.aborts, o.runs).med,
					stat_of(R.luf_bcpus, o.runs).med,
					stat_of(R.luf_bops, o.runs).med);
			}
			if (i + 1 == o.ncpus) {
				printf("\nluf aborts by cause (all runs):");
				for (int c = 0; c < LUF_ABORT_NR_CAUSES; c++)
					printf(" %s %ld%s",
					       luf_cmp_abort_name((enum luf_abort_cause)c),
					       R.abort_cause[c],
					       c + 1 < LUF_ABORT_NR_CAUSES ? "," : "");
				printf(" (%u CPUs)\n", o.cpus[i]);
				footnote(&o);
				if (o.explain)
					print_causes(&o, causes);
			}
		}
	}
	if (data)
		fclose(data);
	if (bad)
		fprintf(stderr,
			"luf-workloads: SAFETY VIOLATION or luf error (see the last column)\n");
	return bad ? 1 : 0;
}
