// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* bench/replay/rp_output.c - tables, JSON and the gnuplot chart. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rp_output.h"

extern char **environ;

double rp_reduction(unsigned long long a, unsigned long long b)
{
	return b ? 100.0 * (1.0 - (double)a / (double)b) : 0.0;
}

/* @a against @b as a signed percentage, "n/a" when @b is 0. */
static void pr_change(FILE *f, unsigned long long a, unsigned long long b)
{
	if (!b)
		fprintf(f, "n/a");
	else if (a == b)
		fprintf(f, "0.0%%");
	else
		fprintf(f, "%+.1f%%", -rp_reduction(a, b));
}

unsigned long long rp_violations(const struct rp_result *r, enum luf_cmp_pol p)
{
	unsigned long long v = 0;

	for (int k = 0; k < LUF_CMP_NRULES; k++)
		v += r->c[p].viol[k];
	return v;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* @a / @b with 2 decimals in @buf, "-" when @b is 0. */
static const char *ratio(char *buf, size_t len, unsigned long long a, unsigned long long b)
{
	if (b)
		snprintf(buf, len, "%.2f", (double)a / (double)b);
	else
		snprintf(buf, len, a ? "inf" : "-");
	return buf;
}

void rp_print_table(FILE *f, const struct rp_result *r)
{
	const struct luf_cmp_counts *l = &r->c[LUF_CMP_LUF], *o = &r->c[LUF_CMP_ORACLE];
	char a[32], b[32];

	if (r->kernel)
		fprintf(f,
			"%s: kernel trace: %llu lines, %llu unmaps (%llu dirty), %llu batch ends, "
			"%llu allocations, %llu mm switches, %llu write faults, %llu address "
			"spaces, %u CPUs\n",
			base(r->path), r->st.lines, r->ks.events[RP_K_UNMAP], r->ks.dirty_unmaps,
			r->ks.events[RP_K_BATCH], r->ks.events[RP_K_ALLOC],
			r->ks.events[RP_K_SWITCH], r->ks.events[RP_K_WP], r->ks.mms, r->nr_cpus);
	else
		fprintf(f, "%s: %llu lines, %llu calls, %llu tasks, %llu address spaces, %u CPUs\n",
			base(r->path), r->st.lines, r->st.calls, r->st.tasks, r->st.mms,
			r->nr_cpus);
	fprintf(f, "  %-10s %20s %29s %23s %23s %8s %12s %10s %9s %10s\n", "policy",
		"nr_tlb_remote_flush", "nr_tlb_remote_flush_received", "nr_tlb_local_flush_all",
		"nr_tlb_local_flush_one", "flushes", "cpus_flushed", "/cpu_bound", "/op_bound",
		"violations");
	for (int p = 0; p < LUF_CMP_NPOL; p++) {
		const struct luf_cmp_counts *c = &r->c[p];

		fprintf(f, "  %-10s %20llu %29llu %23llu %23llu %8llu %12llu %10s %9s %10llu\n",
			luf_cmp_pol_name((enum luf_cmp_pol)p), c->remote, c->received, c->local_all,
			c->local_one, c->flushes, c->cpus,
			ratio(a, sizeof(a), c->cpus, r->bound_cpus),
			ratio(b, sizeof(b), c->flushes, r->bound_ops),
			rp_violations(r, (enum luf_cmp_pol)p));
	}
	fprintf(f, "  %-10s %20s %29s %23s %23s %8llu %12llu %10s %9s %10s\n", "bound", "-", "-",
		"-", "-", r->bound_ops, r->bound_cpus, "1.00", "1.00", "-");
	fprintf(f,
		"  luf / bound: %s CPU flushes (%llu / %llu), %s flush operations (%llu / %llu)\n",
		ratio(a, sizeof(a), l->cpus, r->bound_cpus), l->cpus, r->bound_cpus,
		ratio(b, sizeof(b), l->flushes, r->bound_ops), l->flushes, r->bound_ops);
	/* a change, not a saving: luf can need more than batched (README) */
	fprintf(f, "  luf against immediate: ");
	pr_change(f, l->remote, r->c[LUF_CMP_IMMEDIATE].remote);
	fprintf(f, " remote flushes (");
	pr_change(f, l->received, r->c[LUF_CMP_IMMEDIATE].received);
	fprintf(f, " IPIs); against batched: ");
	pr_change(f, l->remote, r->c[LUF_CMP_BATCHED].remote);
	fprintf(f, " (");
	pr_change(f, l->received, r->c[LUF_CMP_BATCHED].received);
	fprintf(f, ")\n");
	if (r->kernel) {
		unsigned long long m = r->ks.events[RP_K_IPI], b = r->c[LUF_CMP_BATCHED].received;

		fprintf(f,
			"  measured in the traced (pristine) kernel: %llu remote shootdowns "
			"(tlb_flush events); batched predicts %llu",
			m, b);
		if (m)
			fprintf(f, " (%+.1f%%)", 100.0 * ((double)b - (double)m) / (double)m);
		fputc('\n', f);
	}
	fprintf(f, "  luf is %lld flushes (%lld remote) from the oracle's %llu (%llu remote)\n",
		(long long)(l->flushes - o->flushes), (long long)l->remote - (long long)o->remote,
		o->flushes, o->remote);
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		for (int k = 0; k < LUF_CMP_NRULES; k++)
			if (r->c[p].viol[k])
				fprintf(f, "  SAFETY VIOLATION: %s broke %s %llu times\n",
					luf_cmp_pol_name((enum luf_cmp_pol)p),
					luf_cmp_rule_name((enum luf_cmp_rule)k), r->c[p].viol[k]);
}

void rp_print_stats(FILE *f, const struct rp_result *r)
{
	double rate = r->seconds > 0 ? (double)r->st.lines / r->seconds : 0;

	fprintf(f,
		"  stats: %llu lines in %.3f s: %.2f M lines/s parsed and replayed (all %d "
		"policies at once)\n",
		r->st.lines, r->seconds, rate / 1e6, LUF_CMP_NPOL);
	fprintf(f,
		"  stats: calls %llu (failed %llu, not modelled %llu), signals %llu, exits %llu,"
		" skipped lines %llu\n",
		r->st.calls, r->st.failed, r->st.ignored, r->st.signals, r->st.exits, r->skipped);
	fprintf(f,
		"  stats: removals %llu, reuse points %llu, upgrade points %llu, batch ends %llu\n",
		r->st.removals, r->st.reuse_points, r->st.upgrade_points, r->st.batch_ends);
	fprintf(f,
		"  stats: luf deferred %llu, no flush owed %llu, skipped by diet %llu, "
		"aborts %llu; peak ranges: %llu mappings, %llu stale\n",
		r->st.luf_deferred, r->st.luf_no_flush, r->st.luf_skipped, r->st.luf_aborts,
		r->st.peak_vmas, r->st.peak_stale);
	fprintf(f,
		"  stats: batched: flush_tlb_batched_pending() calls the kernel would flush on "
		"with nothing owed (left out): %llu\n",
		r->st.bat_redundant);
}

void rp_print_causes(FILE *f, const struct rp_result *r)
{
	fprintf(f, "  flush operations by cause:\n  %-10s", "policy");
	for (int k = 0; k < LUF_CMP_NCAUSES; k++)
		fprintf(f, " %9s", luf_cmp_cause_name((enum luf_cmp_cause)k));
	fprintf(f, " %9s\n", "total");
	for (int p = 0; p < LUF_CMP_NPOL; p++) {
		fprintf(f, "  %-10s", luf_cmp_pol_name((enum luf_cmp_pol)p));
		for (int k = 0; k < LUF_CMP_NCAUSES; k++)
			fprintf(f, " %9llu", r->c[p].by_cause[k]);
		fprintf(f, " %9llu\n", r->c[p].flushes);
	}
}

static void json_counts(FILE *f, const struct luf_cmp_counts *c)
{
	fprintf(f,
		"{\"nr_tlb_remote_flush\": %llu, \"nr_tlb_remote_flush_received\": %llu, "
		"\"nr_tlb_local_flush_all\": %llu, \"nr_tlb_local_flush_one\": %llu, "
		"\"flushes\": %llu, \"cpus_flushed\": %llu, \"violations\": {",
		c->remote, c->received, c->local_all, c->local_one, c->flushes, c->cpus);
	for (int k = 0; k < LUF_CMP_NRULES; k++)
		fprintf(f, "%s\"%s\": %llu", k ? ", " : "", luf_cmp_rule_name((enum luf_cmp_rule)k),
			c->viol[k]);
	fprintf(f, "}, \"by_cause\": {");
	for (int k = 0; k < LUF_CMP_NCAUSES; k++)
		fprintf(f, "%s\"%s\": %llu", k ? ", " : "",
			luf_cmp_cause_name((enum luf_cmp_cause)k), c->by_cause[k]);
	fprintf(f, "}}");
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void rp_print_json(FILE *f, const struct rp_result *r, int n)
{
	if (n > 1)
		fprintf(f, "[\n");
	for (int i = 0; i < n; i++, r++) {
		const struct luf_cmp_counts *c = r->c;

		fprintf(f, "{\"trace\": ");
		json_string(f, r->path);
		fprintf(f,
			", \"lines\": %llu, \"calls\": %llu, \"tasks\": %llu, "
			"\"address_spaces\": %llu, \"cpus\": %u, \"skipped_lines\": %llu, "
			"\"seconds\": %.6f, \"policies\": {",
			r->st.lines, r->st.calls, r->st.tasks, r->st.mms, r->nr_cpus, r->skipped,
			r->seconds);
		for (int p = 0; p < LUF_CMP_NPOL; p++) {
			fprintf(f, "%s\"%s\": ", p ? ", " : "",
				luf_cmp_pol_name((enum luf_cmp_pol)p));
			json_counts(f, &c[p]);
		}
		fprintf(f, "}, \"bounds\": {\"cpus_flushed\": %llu, \"flushes\": %llu}",
			r->bound_cpus, r->bound_ops);
		if (r->kernel)
			fprintf(
			    f,
			    ", \"kernel\": {\"measured_shootdowns\": %llu, \"unmaps\": %llu, "
			    "\"dirty_unmaps\": %llu, \"batch_ends\": %llu, \"allocations\": %llu, "
			    "\"mm_switches\": %llu, \"write_faults\": %llu, "
			    "\"allocations_before_free\": %llu, \"other_events\": %llu}",
			    r->ks.events[RP_K_IPI], r->ks.events[RP_K_UNMAP], r->ks.dirty_unmaps,
			    r->ks.events[RP_K_BATCH], r->ks.events[RP_K_ALLOC],
			    r->ks.events[RP_K_SWITCH], r->ks.events[RP_K_WP], r->ks.busy_allocs,
			    r->ks.events[RP_K_OTHER]);
		fprintf(f,
			", \"luf_reduction_percent\": {\"vs_immediate\": %.2f, \"vs_batched\": "
			"%.2f}, \"luf_above_oracle\": {\"flushes\": %lld, "
			"\"nr_tlb_remote_flush\": %lld}}%s\n",
			rp_reduction(c[LUF_CMP_LUF].remote, c[LUF_CMP_IMMEDIATE].remote),
			rp_reduction(c[LUF_CMP_LUF].remote, c[LUF_CMP_BATCHED].remote),
			(long long)c[LUF_CMP_LUF].flushes - (long long)c[LUF_CMP_ORACLE].flushes,
			(long long)c[LUF_CMP_LUF].remote - (long long)c[LUF_CMP_ORACLE].remote,
			n > 1 && i + 1 < n ? "," : "");
	}
	if (n > 1)
		fprintf(f, "]\n");
}

/* @s as a gnuplot single-quoted string: a quote inside is written twice. */
static void gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/*
 * A new empty file "<TMPDIR or /tmp>/luf-replay-XXXXXX", its name in @path.
 * NULL on failure, with @path empty.
 */
static FILE *tmp_file(char *path, size_t len)
{
	const char *dir = getenv("TMPDIR");
	FILE *f = NULL;
	int fd = -1;

	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, len, "%s/luf-replay-XXXXXX", dir) < len)
		fd = mkstemp(path);
	if (fd >= 0 && !(f = fdopen(fd, "w"))) {
		close(fd);
		unlink(path);
	}
	if (!f)
		path[0] = '\0';
	return f;
}

/*
 * gnuplot runs a script file, not a pipe: a gnuplot that is missing, or
 * exits without reading, cannot kill luf-replay with SIGPIPE (with the
 * table still in the stdio buffer, it used to be lost), and posix_spawnp()
 * tells a missing gnuplot (ENOENT) from one that failed.
 */
int rp_write_png(const char *png, const struct rp_result *r, int n, char *why, size_t len)
{
	char data[4096] = "", script[4096] = "";
	char *argv[] = {"gnuplot", script, NULL};
	FILE *d, *g = NULL;
	pid_t pid;
	int err, status, ret = -1;

	d = tmp_file(data, sizeof(data));
	if (!d || !(g = tmp_file(script, sizeof(script)))) {
		snprintf(why, len, "cannot create a temporary file: %s", strerror(errno));
		goto out;
	}
	/* per trace: the 4 counts, then each as a percentage of immediate's */
	fprintf(d, "trace immediate batched luf oracle pi pb pl po\n");
	for (int i = 0; i < n; i++) {
		const char *b = base(r[i].path);
		int blen = (int)strcspn(b, ".");
		unsigned long long imm = r[i].c[LUF_CMP_IMMEDIATE].remote;

		fprintf(d, "%.*s", blen, b);
		for (int p = 0; p < LUF_CMP_NPOL; p++)
			fprintf(d, " %llu", r[i].c[p].remote);
		for (int p = 0; p < LUF_CMP_NPOL; p++)
			fprintf(d, " %.2f",
				imm ? 100.0 * (double)r[i].c[p].remote / (double)imm : 0.0);
		fprintf(d, "\n");
	}
	/*
	 * Bars on a linear scale as a share of immediate, so that every trace
	 * shows, the ones with few flushes too; each bar carries its count
	 * (a trace where immediate sends none shows four 0 labels).
	 */
	fprintf(g, "set terminal pngcairo size 1100,600 noenhanced\nset output ");
	gp_string(g, png);
	fprintf(g,
		"\nset title 'TLB shootdowns (nr_tlb_remote_flush) per policy, %u CPUs: "
		"bar: share of immediate, label: the count'\n"
		"set style data histogram\nset style histogram cluster gap 1\n"
		"set boxwidth 0.9\nset key top right\nset grid ytics\n"
		"set ylabel 'remote flushes, %% of immediate'\nset yrange [0:125]\n"
		"set xrange [-0.6:%d.6]\nplot ",
		r[0].nr_cpus, n - 1);
	static const char *const style[LUF_CMP_NPOL] = {
	    "fs solid 0.6 border -1 lc rgb '#8c8c8c'", "fs solid 0.8 border -1 lc rgb '#3b6fb6'",
	    "fs solid 0.9 border -1 lc rgb '#d9541e'", "fs pattern 4 border -1 lc rgb '#2e8b57'"};
	for (int p = 0; p < LUF_CMP_NPOL; p++) {
		gp_string(g, data);
		fprintf(g, " using %d%s title columnheader(%d) %s, ", 6 + p, p ? "" : ":xtic(1)",
			2 + p, style[p]);
	}
	for (int p = 0; p < LUF_CMP_NPOL; p++) {
		fprintf(g, "%s", p ? ", " : "");
		gp_string(g, data);
		fprintf(g,
			" skip 1 using ($0%+.1f):%d:(sprintf('%%d', $%d)) with labels offset 0,0.7 "
			"font ',9' notitle",
			-0.3 + 0.2 * p, 6 + p, 2 + p);
	}
	fprintf(g, "\n");
	err = ferror(d) | ferror(g);
	err |= fclose(d) | fclose(g);
	d = g = NULL;
	if (err) {
		snprintf(why, len, "cannot write a temporary file: %s", strerror(errno));
		goto out;
	}
	err = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (err == ENOENT) {
		snprintf(why, len, "gnuplot not found on the PATH (Debian: gnuplot-nox)");
		goto out;
	} else if (err) {
		snprintf(why, len, "cannot run gnuplot: %s", strerror(err));
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, len, "waiting for gnuplot: %s", strerror(errno));
			goto out;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		ret = 0;
	else if (WIFEXITED(status))
		snprintf(why, len, "gnuplot failed (exit status %d)", WEXITSTATUS(status));
	else
		snprintf(why, len, "gnuplot failed (killed by signal %d)", WTERMSIG(status));
out:
	if (d)
		fclose(d);
	if (g)
		fclose(g);
	if (data[0])
		unlink(data);
	if (script[0])
		unlink(script);
	return ret;
}
