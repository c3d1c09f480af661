// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf-replay: replay the memory-map history of real programs (strace
 * output) on N simulated CPUs under four flush policies - immediate,
 * batched, luf, oracle - and report the TLB shootdowns each one needs,
 * with vmstat counter names, checking S1-S4 on every policy.
 *
 * Usage: luf-replay [--cpus N] [--json] [--png FILE] [--lenient] [--stats]
 *                   [--quiet] TRACE...   ("-": standard input)
 * Capture: strace -f -tt -e trace=memory,process -o TRACE program args
 * (plain or gzip'd). Exit status: see usage() below.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rp_kmodel.h"
#include "rp_kparse.h"
#include "rp_output.h"
#include "rp_parse.h"
#include "rp_reader.h"

struct opts {
	unsigned int cpus;
	int json, lenient, stats, quiet, explain;
	const char *png;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Exit status (documented in usage() and bench/replay/README.md). */
enum {
	RP_EXIT_OK = 0,
	RP_EXIT_INPUT = 1, /* bad input: the message names the file (and line) */
	RP_EXIT_USAGE = 2,
	RP_EXIT_UNSAFE = 3, /* a policy broke S1-S4 */
	RP_EXIT_NOMEM = 4,
	RP_EXIT_CHART = 5, /* --png failed; the results were printed first */
};

#define USAGE_LINE                                                                              \
	"usage: luf-replay [--cpus N] [--json] [--png FILE] [--lenient] [--stats] [--explain] " \
	"[--quiet] TRACE...\n"

static void usage(void)
{
	printf(USAGE_LINE
	       "Replays the memory-map history of programs under the immediate, batched, luf\n"
	       "and oracle flush policies and prints the TLB shootdowns each one needs, and\n"
	       "the lower bounds no safe policy can go below.\n"
	       "  TRACE      output of `strace -f -tt -e trace=memory,process -o TRACE cmd`,\n"
	       "             or a kernel trace of tests/kernel/capture (tracefs's trace_pipe\n"
	       "             text: bench/replay/rp_kparse.h), plain or gzip'd; '-' reads\n"
	       "             standard input\n"
	       "  --cpus N   simulated CPUs, 1..%u (default 16)\n"
	       "  --json     machine-readable results on stdout instead of the table\n"
	       "  --png FILE bar chart of nr_tlb_remote_flush per policy (gnuplot on the PATH)\n"
	       "  --lenient  skip malformed lines (counted) instead of stopping\n"
	       "  --stats    speed and model counters\n"
	       "  --explain  one line per flush of every policy (what forced it, its CPUs)\n"
	       "             and the flush operations per policy by cause (stderr with --json)\n"
	       "  --quiet    no warnings or progress\n"
	       "  --help     this text; options may follow the traces, '--' ends them\n"
	       "Exit status:\n"
	       "  0  success\n"
	       "  1  bad input: a malformed line or a number over 64 bits (FILE:LINE says\n"
	       "     what was expected), a trace with no events, a missing, unreadable,\n"
	       "     corrupt or truncated file, a directory (the traces before it are\n"
	       "     reported); or the results could not be written\n"
	       "  2  usage: an unknown option, a missing or bad value, no TRACE\n"
	       "  3  a safety violation by a policy (SAFETY VIOLATION in the table)\n"
	       "  4  out of memory\n"
	       "  5  the chart could not be drawn (no gnuplot on the PATH, or it failed);\n"
	       "     the results were printed first (a worse status above wins)\n",
	       RP_MAX_CPUS);
}

static int bad_usage(const char *fmt, const char *what)
{
	fprintf(stderr, "luf-replay: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, " (see luf-replay --help)\n");
	return RP_EXIT_USAGE;
}

/* @a is option @name, alone or as "@name=VALUE". */
static int is_opt(const char *a, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(a, name, n) && (!a[n] || a[n] == '=');
}

/*
 * The value of option @name given as "@name VALUE" or "@name=VALUE" at
 * argv[*@i] (*@i moves past it); NULL if @a is not @name, or has no value.
 */
static const char *opt_value(const char *a, const char *name, int argc, char **argv, int *i)
{
	size_t n = strlen(name);

	if (!is_opt(a, name))
		return NULL;
	if (a[n] == '=')
		return a[n + 1] ? a + n + 1 : NULL;
	return *i + 1 < argc ? argv[++*i] : NULL;
}

/* --cpus: decimal digits only, 1..RP_MAX_CPUS (no sign, no wrap-around). */
static int parse_cpus(const char *s, unsigned int *out)
{
	unsigned long v = 0;
	const char *d = s;

	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > RP_MAX_CPUS)
			return -1;
	}
	if (s == d || *s || !v)
		return -1;
	*out = (unsigned int)v;
	return 0;
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

/* How pids without a clone record were placed (rp_model.c, task_get()). */
static void warn_tasks(const char *path, const struct rp_stats *st)
{
	static const char recapture[] =
	    "re-capture with `strace -f -tt -e trace=memory,process -o TRACE cmd`";

	if (st->unparented && !st->proc_events)
		fprintf(stderr,
			"luf-replay: %s: warning: no process events (clone, fork, vfork, execve, "
			"exit_group) in the trace: its %llu pids were read as %llu separate "
			"processes, one address space each, as threads cannot be told from "
			"processes; %s\n",
			path, st->tasks, st->tasks, recapture);
	else if (st->unparented)
		fprintf(stderr,
			"luf-replay: %s: warning: %llu pids appeared before the first process "
			"event and were read as separate processes; %s\n",
			path, st->unparented, recapture);
	if (st->orphans)
		fprintf(stderr,
			"luf-replay: %s: warning: pids without a clone record: %llu, read as "
			"threads of the first process (running before strace attached, as with "
			"strace -p)\n",
			path, st->orphans);
}

/*
 * A line that cannot be replayed (@what says why): an error that stops the
 * replay (return 1, *@ret set), or with --lenient a skipped line (return 0).
 */
static int bad_line(const struct opts *o, const char *path, struct rp_reader *rd, const char *what,
		    struct rp_result *r, int *ret)
{
	if (o->lenient) {
		r->skipped++;
		return 0;
	}
	fprintf(stderr, "luf-replay: %s:%lu: %s\n", path, rp_reader_lineno(rd), what);
	*ret = RP_EXIT_INPUT;
	return 1;
}

#define KWIN_LINES 4000u /* --explain on a kernel trace: windows of this many lines */
#define KWIN_TOP 8u

/* One window of a kernel trace: shootdowns measured and predicted, and its events. */
struct kwin {
	unsigned long first, last; /* trace lines */
	long long kernel, batched; /* shootdowns received, predicted IPIs */
	unsigned long long ev[RP_K_NR];
};

/* Close the window that ends at line @line: keep it if among the KWIN_TOP largest gaps. */
static void kwin_close(struct rp_kmodel *k, struct kwin *top, struct kwin *cur,
		       struct rp_kstats *last, unsigned long long *last_bat, unsigned long line)
{
	struct luf_cmp_result res;
	struct rp_kstats st;
	unsigned int i, j = 0;
	long long gap;

	rp_kmodel_stats(k, &st);
	luf_cmp_result(rp_kmodel_cmp(k), &res);
	cur->last = line;
	cur->kernel = (long long)(st.events[RP_K_IPI] - last->events[RP_K_IPI]);
	cur->batched = (long long)(res.c[LUF_CMP_BATCHED].received - *last_bat);
	for (i = 0; i < RP_K_NR; i++)
		cur->ev[i] = st.events[i] - last->events[i];
	*last = st;
	*last_bat = res.c[LUF_CMP_BATCHED].received;
	gap = llabs(cur->kernel - cur->batched);
	for (i = 1; i < KWIN_TOP; i++) /* the smallest gap kept is replaced */
		if (llabs(top[i].kernel - top[i].batched) < llabs(top[j].kernel - top[j].batched))
			j = i;
	if (!top[j].last || gap > llabs(top[j].kernel - top[j].batched))
		top[j] = *cur;
	memset(cur, 0, sizeof(*cur));
	cur->first = line + 1;
}

static int kwin_cmp(const void *a, const void *b)
{
	const struct kwin *x = a, *y = b;
	long long gx = llabs(x->kernel - x->batched), gy = llabs(y->kernel - y->batched);

	return (gx < gy) - (gx > gy); /* the largest gap first */
}

static void kwin_print(FILE *f, const char *path, struct kwin *top)
{
	qsort(top, KWIN_TOP, sizeof(*top), kwin_cmp);
	fprintf(f,
		"%s: where the traced kernel and batched differ most (windows of %u lines: "
		"shootdowns received by the kernel, IPIs batched predicts, and the window's "
		"events; a window with shootdowns and no unmaps holds flushes outside reclaim, "
		"which the model does not have):\n",
		path, KWIN_LINES);
	for (unsigned int i = 0; i < KWIN_TOP; i++) {
		const struct kwin *w = &top[i];

		if (!w->last)
			continue;
		fprintf(f,
			"  lines %lu-%lu: kernel %lld, batched %lld; unmap %llu, batch %llu, alloc "
			"%llu, switch %llu, wp %llu, lazy %llu, other %llu\n",
			w->first, w->last, w->kernel, w->batched, w->ev[RP_K_UNMAP],
			w->ev[RP_K_BATCH], w->ev[RP_K_ALLOC], w->ev[RP_K_SWITCH], w->ev[RP_K_WP],
			w->ev[RP_K_LAZY], w->ev[RP_K_OTHER]);
	}
}

/*
 * A kernel trace (rp_kparse.h) from @rd, whose first line @line0 was read
 * already. Return: as replay().
 */
static int replay_kernel(const struct opts *o, struct rp_reader *rd, const char *path,
			 struct rp_result *r, const char *line, size_t len, double t0)
{
	struct rp_kmodel *k;
	struct rp_kev ev;
	const char *why;
	char where[32], msg[160];
	int ret = 0, n = 1;
	struct kwin top[KWIN_TOP], cur = {.first = 1};
	struct rp_kstats last;
	unsigned long long last_bat = 0;

	r->kernel = 1;
	memset(top, 0, sizeof(top));
	memset(&last, 0, sizeof(last));
	if (rp_kmodel_new(o->cpus, RP_K_MAX_PFN, &k)) {
		fprintf(stderr, "luf-replay: out of memory\n");
		return RP_EXIT_NOMEM;
	}
	if (o->explain) {
		FILE *f = o->json ? stderr : stdout;

		luf_cmp_explain(rp_kmodel_cmp(k), f);
		fprintf(
		    f,
		    "%s: every flush: policy, cause, luf abort cause (or -), trace line, the "
		    "CPU issuing it, remote CPUs reached, CPUs flushed; and every shootdown the "
		    "traced kernel received ('kernel shootdown', the CPU that received it)\n",
		    path);
	}
	for (; n == 1; n = rp_reader_next(rd, &line, &len)) {
		int e;

		r->st.lines++;
		if (rp_kparse(line, len, &ev, &why)) {
			snprintf(msg, sizeof(msg), "expected %s", why);
			if (bad_line(o, path, rd, msg, r, &ret))
				break;
			continue;
		}
		if (o->explain) {
			FILE *f = o->json ? stderr : stdout;

			snprintf(where, sizeof(where), "line %-7lu", rp_reader_lineno(rd));
			luf_cmp_where(rp_kmodel_cmp(k), where);
			if (ev.kind == RP_K_IPI)
				fprintf(f, "kernel shootdown %-12s %s cpu %u\n", "-", where,
					ev.cpu);
		}
		if (o->explain && rp_reader_lineno(rd) % KWIN_LINES == 0)
			kwin_close(k, top, &cur, &last, &last_bat, rp_reader_lineno(rd));
		e = rp_kmodel_event(k, &ev, &why);
		if (e == -1) {
			fprintf(stderr, "luf-replay: %s:%lu: out of memory\n", path,
				rp_reader_lineno(rd));
			ret = RP_EXIT_NOMEM;
			break;
		}
		if (e) {
			snprintf(msg, sizeof(msg), "expected %s", why);
			if (bad_line(o, path, rd, msg, r, &ret))
				break;
		}
	}
	if (n < 0) {
		fprintf(stderr, "luf-replay: %s: after line %lu: %s%s\n", path,
			rp_reader_lineno(rd), rp_reader_error(rd),
			o->lenient ? " (replayed what was read)" : "");
		if (!o->lenient)
			ret = RP_EXIT_INPUT;
	}
	if (o->explain) {
		kwin_close(k, top, &cur, &last, &last_bat, rp_reader_lineno(rd));
		kwin_print(o->json ? stderr : stdout, path, top);
	}
	{
		struct luf_cmp_result res;

		rp_kmodel_finish(k, &res, &r->ks);
		for (int i = 0; i < LUF_CMP_NPOL; i++)
			r->c[i] = res.c[i];
		r->bound_cpus = res.bound_cpus;
		r->bound_ops = res.bound_ops;
		if (res.luf_errors && !ret) {
			fprintf(stderr, "luf-replay: %s: %ld luf calls failed\n", path,
				res.luf_errors);
			ret = RP_EXIT_INPUT;
		}
	}
	r->seconds = now() - t0;
	if (!ret && !r->ks.events[RP_K_UNMAP] && !r->ks.events[RP_K_ALLOC]) {
		fprintf(stderr,
			"luf-replay: %s: no unmap or allocation events in the kernel trace\n",
			path);
		ret = RP_EXIT_INPUT;
	}
	if (!o->quiet && !ret && r->skipped)
		fprintf(stderr,
			"luf-replay: %s: skipped %llu lines it could not replay (malformed, lost "
			"events, CPUs beyond --cpus: their shootdowns are not counted either)\n",
			path, r->skipped);
	r->st.mms = r->ks.mms;
	rp_kmodel_free(k);
	return ret;
}

/*
 * Replay the trace in @file ("-": standard input), called @path in messages
 * and results, into @r: strace output, or a kernel trace (rp_kparse.h),
 * told apart by the first line. Return: 0, 1 (bad input), 4 (out of memory).
 */
static int replay(const struct opts *o, const char *file, const char *path, struct rp_result *r)
{
	struct rp_reader *rd = rp_reader_open(file);
	struct rp_parser *p = rp_parser_new();
	struct rp_model m;
	struct rp_event ev;
	const char *line, *err;
	size_t len;
	int ret = 0, n;
	unsigned long long blank = 0;
	double t0 = now();

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->nr_cpus = o->cpus;
	if (!rd) {
		fprintf(stderr, "luf-replay: %s: %s\n", path,
			errno == EISDIR ? "is a directory, not a trace" : strerror(errno));
		rp_parser_free(p);
		return RP_EXIT_INPUT;
	}
	/* the first line that is not blank tells the format */
	while ((n = rp_reader_next(rd, &line, &len)) == 1 && !len)
		blank++;
	if (n == 1 && rp_kparse_sniff(line, len)) {
		rp_parser_free(p);
		r->st.lines = blank;
		ret = replay_kernel(o, rd, path, r, line, len, t0);
		rp_reader_close(rd);
		return ret;
	}
	if (!p || rp_model_init(&m, o->cpus)) {
		if (p)
			rp_model_fini(&m);
		fprintf(stderr, "luf-replay: out of memory\n");
		rp_reader_close(rd);
		rp_parser_free(p);
		return RP_EXIT_NOMEM;
	}
	if (o->explain) {
		FILE *f = o->json ? stderr : stdout;

		rp_model_explain(&m, f);
		fprintf(f,
			"%s: every flush: policy, cause, luf abort cause (or -), trace line, pid "
			"and call of the event that forced it, the CPU issuing it, remote CPUs "
			"reached, CPUs flushed\n",
			path);
	}
	m.st.lines = blank;
	for (; n == 1; n = rp_reader_next(rd, &line, &len)) {
		m.st.lines++;
		if ((m.st.lines & 0xfffff) == 0 && m.st.lines >= 1000000)
			progress(o, path, m.st.lines, t0, 0);
		if (rp_parse_line(p, line, len, &ev, &err)) {
			if (bad_line(o, path, rd, err, r, &ret))
				break;
			continue;
		}
		if (ev.kind == RP_EV_NONE && !ev.started)
			continue;
		m.line = rp_reader_lineno(rd);
		m.pid = ev.pid;
		m.what = ev.kind == RP_EV_CALL	   ? rp_sys_name(ev.sys)
			 : ev.kind == RP_EV_NONE   ? "clone"
			 : ev.kind == RP_EV_SIGNAL ? "signal"
						   : "exit";
		if (rp_model_event(&m, &ev)) {
			fprintf(stderr, "luf-replay: %s:%lu: out of memory\n", path,
				rp_reader_lineno(rd));
			ret = RP_EXIT_NOMEM;
			break;
		}
	}
	if (n < 0) {
		fprintf(stderr, "luf-replay: %s: after line %lu: %s%s\n", path,
			rp_reader_lineno(rd), rp_reader_error(rd),
			o->lenient ? " (replayed what was read)" : "");
		if (!o->lenient)
			ret = RP_EXIT_INPUT;
	}
	m.line = rp_reader_lineno(rd);
	m.pid = -1;
	m.what = "end";
	rp_model_finish(&m);
	r->seconds = now() - t0;
	if (m.st.lines >= 1000000)
		progress(o, path, m.st.lines, t0, 1);
	r->in_flight = rp_parser_in_flight(p);
	r->st = m.st;
	for (int i = 0; i < LUF_CMP_NPOL; i++)
		r->c[i] = m.res.c[i];
	r->bound_cpus = m.res.bound_cpus;
	r->bound_ops = m.res.bound_ops;
	if (!ret && !m.st.events) {
		/* nothing to replay: an all-zero table would look like a result */
		fprintf(stderr,
			"luf-replay: %s: no events (%llu lines, %llu malformed lines skipped): "
			"expected the output of `strace -f -tt -e trace=memory,process`\n",
			path, m.st.lines, r->skipped);
		ret = RP_EXIT_INPUT;
	}
	if (!o->quiet && !ret) {
		if (r->skipped)
			fprintf(stderr, "luf-replay: %s: skipped %llu malformed lines\n", path,
				r->skipped);
		warn_tasks(path, &m.st);
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
	char **traces = argv + 1; /* the traces, gathered in argv itself */
	int i, n = 0, nt = 0, ret = 0, dashdash = 0;

	/* Options anywhere before "--"; "-" alone is a trace (standard input). */
	for (i = 1; i < argc; i++) {
		char *a = argv[i];
		const char *val;

		if (dashdash || a[0] != '-' || !a[1]) {
			traces[nt++] = a; /* nt < i: never overwrites what is still to read */
		} else if (!strcmp(a, "--")) {
			dashdash = 1;
		} else if ((val = opt_value(a, "--cpus", argc, argv, &i))) {
			if (parse_cpus(val, &o.cpus)) {
				fprintf(stderr, "luf-replay: --cpus wants 1..%u, not '%s'\n",
					RP_MAX_CPUS, val);
				return RP_EXIT_USAGE;
			}
		} else if ((val = opt_value(a, "--png", argc, argv, &i))) {
			o.png = val;
		} else if (!strcmp(a, "--json")) {
			o.json = 1;
		} else if (!strcmp(a, "--lenient")) {
			o.lenient = 1;
		} else if (!strcmp(a, "--explain")) {
			o.explain = 1;
		} else if (!strcmp(a, "--stats")) {
			o.stats = 1;
		} else if (!strcmp(a, "--quiet")) {
			o.quiet = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage();
			return RP_EXIT_OK;
		} else if (is_opt(a, "--cpus") || is_opt(a, "--png")) {
			return bad_usage("%s needs a value", a);
		} else {
			return bad_usage("unknown option '%s'", a);
		}
	}
	if (!nt) {
		fputs(USAGE_LINE, stderr);
		return bad_usage("%s", "no TRACE given");
	}
	res = calloc((size_t)nt, sizeof(*res));
	if (!res)
		return RP_EXIT_NOMEM;
	for (i = 0; i < nt; i++) {
		const char *path = strcmp(traces[i], "-") ? traces[i] : "<stdin>";
		int r = replay(&o, traces[i], path, &res[n]);

		if (r) {
			ret = r;
			break;
		}
		if (!o.json) {
			rp_print_table(stdout, &res[n]);
			if (o.explain)
				rp_print_causes(stdout, &res[n]);
			if (o.stats)
				rp_print_stats(stdout, &res[n]);
		} else {
			if (o.explain)
				rp_print_causes(stderr, &res[n]);
			if (o.stats)
				rp_print_stats(stderr, &res[n]);
		}
		for (int p = 0; p < LUF_CMP_NPOL; p++)
			if (rp_violations(&res[n], (enum luf_cmp_pol)p))
				ret = RP_EXIT_UNSAFE;
		n++;
	}
	if (o.json && n)
		rp_print_json(stdout, res, n);
	if (o.png && n) {
		char why[160];

		fflush(stdout); /* the results first, whatever becomes of the chart */
		if (rp_write_png(o.png, res, n, why, sizeof(why))) {
			fprintf(stderr, "luf-replay: %s: %s\n", o.png, why);
			if (!ret)
				ret = RP_EXIT_CHART;
		} else if (!o.json) {
			printf("chart: %s\n", o.png);
		}
	}
	if (ret == RP_EXIT_UNSAFE)
		fprintf(stderr, "luf-replay: SAFETY VIOLATION (see the table)\n");
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "luf-replay: could not write the results: %s\n", strerror(errno));
		if (!ret || ret == RP_EXIT_CHART)
			ret = RP_EXIT_INPUT;
	}
	free(res);
	return ret;
}
