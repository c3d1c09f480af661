// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf-replay: replay the memory-map history of real programs (strace
 * output) on N simulated CPUs under four flush policies - immediate,
 * batched, luf, oracle - and report the TLB shootdowns each one needs,
 * with vmstat counter names, checking S1-S4 on every policy.
 *
 * Usage: luf-replay [--cpus N] [--json] [--png FILE] [--lenient] [--stats]
 *                   [--quiet] TRACE...
 * Capture: strace -f -tt -e trace=memory,process -o TRACE program args
 * (plain or gzip'd). Exit: 0; 1 a malformed line (without --lenient) or a
 * corrupt file; 2 usage; 3 a safety violation by a policy.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rp_output.h"
#include "rp_parse.h"
#include "rp_reader.h"

struct opts {
	unsigned int cpus;
	int json, lenient, stats, quiet;
	const char *png;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: luf-replay [--cpus N] [--json] [--png FILE] [--lenient] [--stats] "
		"[--quiet] TRACE...\n"
		"  TRACE: output of `strace -f -tt -e trace=memory,process -o TRACE cmd`"
		" (plain or .gz)\n"
		"  --cpus N   simulated CPUs, 1..%u (default 16)\n"
		"  --json     machine-readable results on stdout instead of the table\n"
		"  --png FILE bar chart of nr_tlb_remote_flush per policy (gnuplot)\n"
		"  --lenient  skip malformed lines (counted) instead of stopping\n"
		"  --stats    speed and model counters\n"
		"  --quiet    no warnings or progress\n",
		RP_MAX_CPUS);
}

static void progress(const struct opts *o, const char *path, unsigned long long lines, double t0,
		     int last)
{
	int tty = isatty(STDERR_FILENO);

	if (o->quiet)
		return;
	fprintf(stderr, "%sluf-replay: %s: %llu lines, %.2f M lines/s%s", tty ? "\r" : "", path,
		lines, (double)lines / (now() - t0) / 1e6, tty && !last ? "" : "\n");
}

/* Replay one trace into @r. Return: 0, 1 (bad input), 4 (out of memory). */
static int replay(const struct opts *o, const char *path, struct rp_result *r)
{
	struct rp_reader *rd = rp_reader_open(path);
	struct rp_parser *p = rp_parser_new();
	struct rp_model m;
	struct rp_event ev;
	const char *line, *err;
	size_t len;
	int ret = 0, n;
	double t0 = now();

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->nr_cpus = o->cpus;
	if (!rd) {
		fprintf(stderr, "luf-replay: %s: %s\n", path, strerror(errno));
		rp_parser_free(p);
		return 1;
	}
	if (!p || rp_model_init(&m, o->cpus)) {
		fprintf(stderr, "luf-replay: out of memory\n");
		rp_reader_close(rd);
		rp_parser_free(p);
		return 4;
	}
	while ((n = rp_reader_next(rd, &line, &len)) == 1) {
		m.st.lines++;
		if ((m.st.lines & 0xfffff) == 0 && m.st.lines >= 1000000)
			progress(o, path, m.st.lines, t0, 0);
		if (rp_parse_line(p, line, len, &ev, &err)) {
			if (!o->lenient) {
				fprintf(stderr, "luf-replay: %s:%lu: %s\n", path,
					rp_reader_lineno(rd), err);
				ret = 1;
				break;
			}
			r->skipped++;
			continue;
		}
		if (ev.kind == RP_EV_NONE && !ev.started)
			continue;
		if (rp_model_event(&m, &ev)) {
			fprintf(stderr, "luf-replay: %s:%lu: out of memory\n", path,
				rp_reader_lineno(rd));
			ret = 4;
			break;
		}
	}
	if (n < 0) {
		fprintf(stderr, "luf-replay: %s: after line %lu: %s%s\n", path,
			rp_reader_lineno(rd), rp_reader_error(rd),
			o->lenient ? " (replayed what was read)" : "");
		if (!o->lenient)
			ret = 1;
	}
	rp_model_finish(&m);
	r->seconds = now() - t0;
	if (m.st.lines >= 1000000)
		progress(o, path, m.st.lines, t0, 1);
	r->in_flight = rp_parser_in_flight(p);
	r->st = m.st;
	for (int i = 0; i < RP_NPOL; i++)
		r->c[i] = m.pol[i].c;
	if (!o->quiet && !ret) {
		if (r->skipped)
			fprintf(stderr, "luf-replay: %s: skipped %llu malformed lines\n", path,
				r->skipped);
		if (m.st.orphans && !m.st.clones)
			fprintf(stderr,
				"luf-replay: %s: warning: no clone/fork records: "
				"%llu tasks read as threads of one address space\n",
				path, m.st.tasks);
		if (r->in_flight)
			fprintf(stderr, "luf-replay: %s: warning: %lu calls cut off unfinished\n",
				path, r->in_flight);
	}
	rp_model_fini(&m);
	rp_parser_free(p);
	rp_reader_close(rd);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = {.cpus = 16};
	struct rp_result *res;
	int i, n = 0, ret = 0;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--cpus") && i + 1 < argc) {
			char *e;
			unsigned long v = strtoul(argv[++i], &e, 10);

			if (*e || !v || v > RP_MAX_CPUS) {
				fprintf(stderr, "luf-replay: --cpus wants 1..%u\n", RP_MAX_CPUS);
				return 2;
			}
			o.cpus = (unsigned int)v;
		} else if (!strcmp(argv[i], "--json")) {
			o.json = 1;
		} else if (!strcmp(argv[i], "--png") && i + 1 < argc) {
			o.png = argv[++i];
		} else if (!strcmp(argv[i], "--lenient")) {
			o.lenient = 1;
		} else if (!strcmp(argv[i], "--stats")) {
			o.stats = 1;
		} else if (!strcmp(argv[i], "--quiet")) {
			o.quiet = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (i == argc) {
		usage(stderr);
		return 2;
	}
	res = calloc((size_t)(argc - i), sizeof(*res));
	if (!res)
		return 4;
	for (; i < argc; i++) {
		int r = replay(&o, argv[i], &res[n]);

		if (r) {
			ret = r;
			break;
		}
		if (!o.json) {
			rp_print_table(stdout, &res[n]);
			if (o.stats)
				rp_print_stats(stdout, &res[n]);
		} else if (o.stats) {
			rp_print_stats(stderr, &res[n]);
		}
		for (int p = 0; p < RP_NPOL; p++)
			if (rp_violations(&res[n], (enum rp_pol_id)p))
				ret = 3;
		n++;
	}
	if (o.json && n)
		rp_print_json(stdout, res, n);
	if (o.png && n) {
		if (rp_write_png(o.png, res, n)) {
			fprintf(stderr, "luf-replay: could not write %s with gnuplot\n", o.png);
			if (!ret)
				ret = 1;
		} else if (!o.json) {
			printf("chart: %s\n", o.png);
		}
	}
	if (ret == 3)
		fprintf(stderr, "luf-replay: SAFETY VIOLATION (see the table)\n");
	free(res);
	return ret;
}
