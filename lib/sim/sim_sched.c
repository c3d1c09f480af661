// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_sched.c - operation histories and the deterministic
 * scheduler: random histories from a seed, replay, and shrinking.
 *
 * A history is a list of struct luf_sim_op. The generator draws each one
 * from a splitmix64 stream without looking at the machine, so the history
 * of a seed is fixed, a prefix of it is the same run cut short, and any
 * sub-list is still a valid history (operations that make no sense in the
 * state they meet fail with an errno and change nothing). Each operation
 * carries its own seed for the flush failures drawn while it runs, so
 * removing one operation does not change what the others draw.
 *
 * On a violation the failing prefix (up to the operation that tripped the
 * checker) is shrunk: chunks of it, halving in size, are removed while a
 * replay still breaks the same rule; the result is printed first, then the
 * last operations of the original run.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define SIM_RING 24u
#define SIM_SHRINK_BUDGET 4000000ul /* operations replayed while shrinking */

static const char *const sim_op_names[LUF_SIM_OP_NR] = {
    [LUF_SIM_OP_READ] = "read",
    [LUF_SIM_OP_WRITE] = "write",
    [LUF_SIM_OP_FAULT] = "fault",
    [LUF_SIM_OP_RECLAIM] = "reclaim",
    [LUF_SIM_OP_FOLD] = "fold",
    [LUF_SIM_OP_MIGRATE] = "migrate",
    [LUF_SIM_OP_MPROTECT] = "mprotect",
    [LUF_SIM_OP_MUNMAP] = "munmap",
    [LUF_SIM_OP_MMAP] = "mmap",
    [LUF_SIM_OP_MREMAP] = "mremap",
    [LUF_SIM_OP_FRAME_WRITE] = "frame_write",
    [LUF_SIM_OP_CTX_SWITCH] = "ctx_switch",
    [LUF_SIM_OP_EVICT] = "evict",
};

int luf_sim_exec(struct luf_sim *sim, const struct luf_sim_op *op)
{
	int frame;

	if (!sim || !op || !sim_cpu_ok(sim, op->cpu))
		return -EINVAL;
	sim_tctx.rng = op->rng;
	switch (op->kind) {
	case LUF_SIM_OP_READ:
		return luf_sim_read(sim, op->cpu, op->dom, op->page, op->arg, NULL);
	case LUF_SIM_OP_WRITE:
		return luf_sim_write(sim, op->cpu, op->dom, op->page, op->arg);
	case LUF_SIM_OP_FAULT:
		return luf_sim_fault(sim, op->cpu, op->dom, op->page, op->arg);
	case LUF_SIM_OP_RECLAIM:
		return luf_sim_reclaim(sim, op->cpu, op->dom, op->page);
	case LUF_SIM_OP_FOLD:
		return luf_sim_fold(sim, op->cpu);
	case LUF_SIM_OP_MIGRATE:
		return luf_sim_migrate(sim, op->cpu, op->dom, op->page, op->arg);
	case LUF_SIM_OP_MPROTECT:
		return luf_sim_mprotect(sim, op->cpu, op->dom, op->page, op->npages, op->arg);
	case LUF_SIM_OP_MUNMAP:
		return luf_sim_munmap(sim, op->cpu, op->dom, op->page, op->npages);
	case LUF_SIM_OP_MMAP:
		return luf_sim_mmap(sim, op->cpu, op->dom, op->page, op->npages, op->arg);
	case LUF_SIM_OP_MREMAP:
		return luf_sim_mremap(sim, op->cpu, op->dom, op->page, op->page2, op->npages);
	case LUF_SIM_OP_FRAME_WRITE:
		frame = luf_sim_free_frame(sim, op->cpu, op->arg >> 8);
		if (frame < 0)
			return frame;
		return luf_sim_frame_write(sim, op->cpu, (unsigned int)frame, op->arg & 0xff);
	case LUF_SIM_OP_CTX_SWITCH:
		return luf_sim_ctx_switch(sim, op->cpu);
	case LUF_SIM_OP_EVICT:
		return luf_sim_evict(sim, op->cpu, op->dom, op->page);
	default:
		return -EINVAL;
	}
}

void luf_sim_op_format(const struct luf_sim_op *op, char *buf, size_t len)
{
	const char *name;
	int n;

	if (!buf || !len)
		return;
	if (!op) {
		snprintf(buf, len, "(null)");
		return;
	}
	name = op->kind < LUF_SIM_OP_NR ? sim_op_names[op->kind] : NULL;
	if (!name)
		n = snprintf(buf, len, "cpu %u op#%u", op->cpu, op->kind);
	else if (op->kind == LUF_SIM_OP_FOLD || op->kind == LUF_SIM_OP_CTX_SWITCH)
		n = snprintf(buf, len, "cpu %u %s", op->cpu, name);
	else if (op->kind == LUF_SIM_OP_MREMAP)
		n = snprintf(buf, len, "cpu %u %s d%u:p%u -> p%u x%u", op->cpu, name, op->dom,
			     op->page, op->page2, op->npages);
	else if (op->kind == LUF_SIM_OP_MPROTECT || op->kind == LUF_SIM_OP_MMAP)
		n = snprintf(buf, len, "cpu %u %s d%u:p%u x%u prot %u", op->cpu, name, op->dom,
			     op->page, op->npages, op->arg);
	else if (op->kind == LUF_SIM_OP_MUNMAP)
		n = snprintf(buf, len, "cpu %u %s d%u:p%u x%u", op->cpu, name, op->dom, op->page,
			     op->npages);
	else if (op->kind == LUF_SIM_OP_FRAME_WRITE)
		n = snprintf(buf, len, "cpu %u %s free frame #%u cause %u", op->cpu, name,
			     op->arg >> 8, op->arg & 0xff);
	else
		n = snprintf(buf, len, "cpu %u %s d%u:p%u flags %#x", op->cpu, name, op->dom,
			     op->page, op->arg);
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " -> %d", (int)op->ret);
}

void luf_sim_mix_default(struct luf_sim_mix *mix)
{
	static const unsigned int w[LUF_SIM_OP_NR] = {
	    [LUF_SIM_OP_READ] = 30,    [LUF_SIM_OP_WRITE] = 18,	     [LUF_SIM_OP_FAULT] = 4,
	    [LUF_SIM_OP_RECLAIM] = 12, [LUF_SIM_OP_FOLD] = 6,	     [LUF_SIM_OP_MIGRATE] = 4,
	    [LUF_SIM_OP_MPROTECT] = 5, [LUF_SIM_OP_MUNMAP] = 1,	     [LUF_SIM_OP_MMAP] = 4,
	    [LUF_SIM_OP_MREMAP] = 2,   [LUF_SIM_OP_FRAME_WRITE] = 4, [LUF_SIM_OP_CTX_SWITCH] = 4,
	    [LUF_SIM_OP_EVICT] = 3,
	};

	if (mix)
		memcpy(mix->weight, w, sizeof(w));
}

static uint32_t sim_below(uint64_t *rng, uint32_t n)
{
	return n ? (uint32_t)(sim_mix64(rng) % n) : 0;
}

/* A page: half the time one of a few hot pages of domain 0, so operations meet. */
static void sim_gen_page(uint64_t *rng, const struct luf_sim_config *cfg, struct luf_sim_op *op)
{
	uint32_t hot = cfg->nr_pages < 8 ? cfg->nr_pages : 8;

	if (sim_below(rng, 2)) {
		op->dom = 0;
		op->page = sim_below(rng, hot);
	} else {
		op->dom = sim_below(rng, cfg->nr_domains);
		op->page = sim_below(rng, cfg->nr_pages);
	}
	op->npages = 1 + sim_below(rng, 4);
	if (op->npages > cfg->nr_pages - op->page)
		op->npages = cfg->nr_pages - op->page;
	op->page2 = sim_below(rng, cfg->nr_pages - op->npages + 1);
}

static uint32_t sim_gen_arg(uint64_t *rng, uint32_t kind)
{
	static const uint32_t causes[] = {LUF_ABORT_WRITE_OTHER, LUF_ABORT_POISON,
					  LUF_ABORT_INIT_ON_FREE};
	static const uint32_t prots[] = {LUF_SIM_PROT_NONE, LUF_SIM_PROT_READ, LUF_SIM_PROT_READ,
					 LUF_SIM_PROT_RW,   LUF_SIM_PROT_RW,   LUF_SIM_PROT_RW,
					 LUF_SIM_PROT_RW,   LUF_SIM_PROT_RW,   LUF_SIM_PROT_RW,
					 LUF_SIM_PROT_RW};
	uint32_t atomic = sim_below(rng, 8) ? 0 : LUF_SIM_F_ATOMIC;

	switch (kind) {
	case LUF_SIM_OP_READ:
	case LUF_SIM_OP_WRITE:
	case LUF_SIM_OP_MIGRATE:
		return atomic;
	case LUF_SIM_OP_FAULT:
		return atomic | (sim_below(rng, 2) ? LUF_SIM_F_WRITE : 0);
	case LUF_SIM_OP_MPROTECT:
		return prots[sim_below(rng, 10)];
	case LUF_SIM_OP_MMAP:
		return prots[1 + sim_below(rng, 9)];
	case LUF_SIM_OP_FRAME_WRITE:
		return causes[sim_below(rng, 3)] | sim_below(rng, 64) << 8;
	default:
		return 0;
	}
}

void luf_sim_gen_op(uint64_t *rng, const struct luf_sim_config *cfg, const struct luf_sim_mix *mix,
		    struct luf_sim_op *op)
{
	struct luf_sim_mix dflt;
	uint32_t total = 0, r;

	if (!rng || !cfg || !op)
		return;
	if (!mix) {
		luf_sim_mix_default(&dflt);
		mix = &dflt;
	}
	memset(op, 0, sizeof(*op));
	for (uint32_t k = 0; k < LUF_SIM_OP_NR; k++)
		total += mix->weight[k];
	r = sim_below(rng, total ? total : 1);
	while (op->kind < LUF_SIM_OP_NR - 1 && r >= mix->weight[op->kind])
		r -= mix->weight[op->kind++];
	op->cpu = sim_below(rng, cfg->nr_cpus ? cfg->nr_cpus : 1);
	if (cfg->nr_pages && cfg->nr_domains)
		sim_gen_page(rng, cfg, op);
	op->arg = sim_gen_arg(rng, op->kind);
	op->rng = sim_mix64(rng);
}

/* Fill @res from @sim's counters. */
static void sim_result_counters(struct luf_sim *sim, struct luf_sim_result *res)
{
	res->luf_flushes = luf_sim_luf_flushes(sim);
	res->mm_flushes = luf_sim_mm_flushes(sim);
	res->ipis = 0;
	for (unsigned int c = 0; c < sim->cfg.nr_cpus; c++)
		res->ipis += luf_sim_ipis(sim, c);
	res->deferred = luf_sim_stat(sim, LUF_STAT_DEFERRED);
	res->alloc_flushes = luf_sim_stat(sim, LUF_STAT_ALLOC_FLUSH);
	res->aborts = 0;
	for (int c = 0; c < LUF_ABORT_NR_CAUSES; c++)
		res->aborts += luf_sim_stat(sim, (enum luf_stat_item)(LUF_STAT_ABORT + c));
}

static void sim_result_violation(struct luf_sim *sim, struct luf_sim_result *res)
{
	const struct luf_sim_violation *v = luf_sim_first_violation(sim);

	if (!v)
		return;
	res->rule = v->rule;
	res->first = *v;
}

/* Replay @ops[0..n); record each result in @rets if not NULL. */
static int sim_replay(const struct luf_sim_config *cfg, const struct luf_sim_op *ops,
		      unsigned long n, struct luf_sim_result *res, int32_t *rets)
{
	struct luf_sim *sim;
	int ret;

	if (!cfg || !res || (n && !ops))
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	ret = luf_sim_create(cfg, &sim);
	if (ret)
		return ret;
	for (unsigned long i = 0; i < n; i++) {
		int r = luf_sim_exec(sim, &ops[i]);

		if (rets)
			rets[i] = r;
		res->ops_run++;
		res->ops_ok += !r;
		if (luf_sim_violations(sim, LUF_SIM_OK)) {
			res->fail_at = i;
			break;
		}
	}
	sim_result_violation(sim, res);
	sim_result_counters(sim, res);
	luf_sim_destroy(sim);
	return 0;
}

int luf_sim_replay(const struct luf_sim_config *cfg, const struct luf_sim_op *ops, unsigned long n,
		   struct luf_sim_result *res)
{
	return sim_replay(cfg, ops, n, res, NULL);
}

/*
 * Shrink the failing history @ops[0..*len) that breaks @rule: remove
 * chunks while a replay still breaks it, cutting the history after the
 * operation that trips the checker. Bounded by SIM_SHRINK_BUDGET
 * replayed operations. Return: the number of replays.
 */
static unsigned long sim_shrink(const struct luf_sim_config *cfg, struct luf_sim_op *ops,
				unsigned long *len, enum luf_sim_rule rule)
{
	struct luf_sim_op *cand = malloc(*len * sizeof(*ops));
	unsigned long spent = 0, replays = 0, chunk = *len / 2;
	struct luf_sim_result r;

	if (!cand)
		return 0;
	for (; chunk >= 1; chunk /= 2) {
		for (unsigned long start = 0; start < *len && spent < SIM_SHRINK_BUDGET;) {
			unsigned long end = start + chunk < *len ? start + chunk : *len, n = 0;

			for (unsigned long i = 0; i < *len; i++)
				if (i < start || i >= end)
					cand[n++] = ops[i];
			spent += n;
			replays++;
			if (n && !sim_replay(cfg, cand, n, &r, NULL) && r.rule == rule) {
				*len = r.fail_at + 1;
				memcpy(ops, cand, *len * sizeof(*ops));
			} else {
				start += chunk;
			}
		}
	}
	free(cand);
	return replays;
}

static void sim_print_ops(FILE *log, const struct luf_sim_op *ops, unsigned long n,
			  unsigned long first_index)
{
	char buf[160];

	for (unsigned long i = 0; i < n; i++) {
		luf_sim_op_format(&ops[i], buf, sizeof(buf));
		fprintf(log, "    #%-8lu %s\n", first_index + i, buf);
	}
}

/* The report: the violation, the shortest history found, the end of the run. */
static void sim_report(const struct luf_sim_config *cfg, const struct luf_sim_mix *mix,
		       uint64_t seed, unsigned int flags, struct luf_sim_result *res,
		       const struct luf_sim_op *ring, FILE *log)
{
	unsigned long run = res->fail_at + 1, len = run, nring = run < SIM_RING ? run : SIM_RING;
	struct luf_sim_op *ops = NULL;
	struct luf_sim_result r;
	uint64_t g = seed;

	fprintf(log,
		"luf_sim: violation of %s at operation %lu of seed %#llx (replay: "
		"LUF_SEED=%#llx)\n  %s\n",
		luf_sim_rule_name(res->rule), res->fail_at, (unsigned long long)seed,
		(unsigned long long)seed, res->first.msg);
	if (flags & LUF_SIM_RUN_SHRINK)
		ops = malloc(len * sizeof(*ops));
	if (ops) {
		int32_t *rets;
		unsigned long replays;

		for (unsigned long i = 0; i < len; i++)
			luf_sim_gen_op(&g, cfg, mix, &ops[i]);
		replays = sim_shrink(cfg, ops, &len, res->rule);
		res->shrunk_len = len;
		rets = len ? calloc(len, sizeof(*rets)) : NULL;
		if (rets && !sim_replay(cfg, ops, len, &r, rets)) {
			for (unsigned long i = 0; i < len; i++)
				ops[i].ret = rets[i];
			fprintf(log,
				"  shortest failing history found (%lu of %lu operations, %lu "
				"replays):\n",
				len, run, replays);
			sim_print_ops(log, ops, len, 0);
			fprintf(log, "  which ends in: %s: %s\n", luf_sim_rule_name(r.rule),
				r.first.msg);
		}
		free(rets);
		free(ops);
	}
	fprintf(log, "  last %lu operations of the run:\n", nring);
	for (unsigned long i = run - nring; i < run; i++)
		sim_print_ops(log, &ring[i % SIM_RING], 1, i);
}

int luf_sim_run(const struct luf_sim_config *cfg, const struct luf_sim_mix *mix, uint64_t seed,
		unsigned long nr_ops, unsigned int flags, struct luf_sim_result *res, FILE *log)
{
	struct luf_sim_op ring[SIM_RING];
	struct luf_sim_mix dflt;
	struct luf_sim *sim;
	uint64_t g = seed;
	int ret;

	if (!cfg || !res)
		return -EINVAL;
	if (!mix) {
		luf_sim_mix_default(&dflt);
		mix = &dflt;
	}
	memset(res, 0, sizeof(*res));
	memset(ring, 0, sizeof(ring));
	res->seed = seed;
	ret = luf_sim_create(cfg, &sim);
	if (ret)
		return ret;
	for (unsigned long i = 0; i < nr_ops; i++) {
		struct luf_sim_op *op = &ring[i % SIM_RING];

		luf_sim_gen_op(&g, cfg, mix, op);
		op->ret = luf_sim_exec(sim, op);
		res->ops_run++;
		res->ops_ok += !op->ret;
		if (luf_sim_violations(sim, LUF_SIM_OK)) {
			res->fail_at = i;
			break;
		}
	}
	sim_result_violation(sim, res);
	sim_result_counters(sim, res);
	luf_sim_destroy(sim);
	if (res->rule != LUF_SIM_OK && log)
		sim_report(cfg, mix, seed, flags, res, ring, log);
	return 0;
}
