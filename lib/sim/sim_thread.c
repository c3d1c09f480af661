// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_thread.c - the threaded scheduler: one pthread per simulated
 * CPU, each running random operations on its own CPU.
 *
 * What is shared, and how (the point of running under ThreadSanitizer):
 * luf's key table, domains, done counters and ugen source are shared and
 * used through luf's own atomics and locks; each thread owns its CPU's
 * struct luf_pcpu, free list and batch, as luf requires; the sim's page
 * tables are guarded by a lock per domain and the software TLBs by a lock
 * per CPU, with atomic entries for the checker's lock-free scans (see
 * sim_internal.h). A flush by one thread clears other CPUs' TLBs under
 * their locks: the IPI. Frames move between threads' free lists only
 * through a page table (mapped by one CPU, unmapped and freed by another),
 * so each hand-over is ordered by the domain lock.
 *
 * The seed fixes each thread's stream of operations, not the interleaving:
 * a failure here is reported with each thread's last operations, and the
 * deterministic scheduler is the place to replay and shrink.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define SIM_TRING 12u

struct sim_thread {
	pthread_t tid;
	struct luf_sim *sim;
	const struct luf_sim_config *cfg;
	const struct luf_sim_mix *mix;
	atomic_int *stop, *ready;
	unsigned int cpu, nr_threads;
	uint64_t rng;
	unsigned long nr_ops, ran, ok;
	struct luf_sim_op ring[SIM_TRING];
};

static void *sim_thread_main(void *arg)
{
	struct sim_thread *t = arg;

	/* Start together, so the streams overlap instead of running one after another. */
	atomic_fetch_add(t->ready, 1);
	while (atomic_load(t->ready) < (int)t->nr_threads && !atomic_load(t->stop))
		sched_yield();
	for (unsigned long i = 0; i < t->nr_ops; i++) {
		struct luf_sim_op *op = &t->ring[i % SIM_TRING];

		if (atomic_load_explicit(t->stop, memory_order_relaxed))
			break;
		luf_sim_gen_op(&t->rng, t->cfg, t->mix, op);
		op->cpu = t->cpu;
		op->ret = luf_sim_exec(t->sim, op);
		t->ran++;
		t->ok += !op->ret;
		if (luf_sim_violations(t->sim, LUF_SIM_OK))
			atomic_store_explicit(t->stop, 1, memory_order_relaxed);
	}
	return NULL;
}

static void sim_thread_report(const struct sim_thread *th, unsigned int n,
			      const struct luf_sim_result *res, FILE *log)
{
	char buf[160];

	fprintf(log, "luf_sim (threaded, seed %#llx): violation of %s by CPU %u\n  %s\n",
		(unsigned long long)res->seed, luf_sim_rule_name(res->rule), res->first.cpu,
		res->first.msg);
	for (unsigned int c = 0; c < n; c++) {
		const struct sim_thread *t = &th[c];
		unsigned long k = t->ran < SIM_TRING ? t->ran : SIM_TRING;

		fprintf(log, "  CPU %u, last %lu of %lu operations:\n", c, k, t->ran);
		for (unsigned long i = t->ran - k; i < t->ran; i++) {
			luf_sim_op_format(&t->ring[i % SIM_TRING], buf, sizeof(buf));
			fprintf(log, "    #%-8lu %s\n", i, buf);
		}
	}
}

/* Start one thread per CPU; on failure stop and join those started. Return: 0 or -EAGAIN. */
static int sim_threads_start(struct sim_thread *th, unsigned int n, atomic_int *stop)
{
	pthread_attr_t attr;
	unsigned int c;
	int ret = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, (size_t)256 * 1024);
	for (c = 0; c < n; c++) {
		if (pthread_create(&th[c].tid, &attr, sim_thread_main, &th[c])) {
			ret = -EAGAIN;
			break;
		}
	}
	pthread_attr_destroy(&attr);
	if (ret) {
		atomic_store(stop, 1);
		while (c--)
			pthread_join(th[c].tid, NULL);
	}
	return ret;
}

int luf_sim_run_threaded(const struct luf_sim_config *cfg, const struct luf_sim_mix *mix,
			 uint64_t seed, unsigned long ops_per_cpu, struct luf_sim_result *res,
			 FILE *log)
{
	const struct luf_sim_violation *v;
	struct sim_thread *th;
	struct luf_sim_mix dflt;
	struct luf_sim *sim;
	atomic_int stop = 0, ready = 0;
	unsigned int n;
	int ret;

	if (!cfg || !res)
		return -EINVAL;
	if (!mix) {
		luf_sim_mix_default(&dflt);
		mix = &dflt;
	}
	memset(res, 0, sizeof(*res));
	res->seed = seed;
	ret = luf_sim_create(cfg, &sim);
	if (ret)
		return ret;
	n = cfg->nr_cpus;
	th = calloc(n, sizeof(*th));
	if (!th) {
		luf_sim_destroy(sim);
		return -ENOMEM;
	}
	for (unsigned int c = 0; c < n; c++) {
		uint64_t s = seed ^ (0x9e3779b97f4a7c15ull * (c + 1));

		th[c] = (struct sim_thread){.sim = sim,
					    .cfg = cfg,
					    .mix = mix,
					    .stop = &stop,
					    .ready = &ready,
					    .cpu = c,
					    .nr_threads = n,
					    .nr_ops = ops_per_cpu};
		th[c].rng = sim_mix64(&s);
	}
	ret = sim_threads_start(th, n, &stop);
	for (unsigned int c = 0; !ret && c < n; c++)
		pthread_join(th[c].tid, NULL);
	for (unsigned int c = 0; c < n; c++) {
		res->ops_run += th[c].ran;
		res->ops_ok += th[c].ok;
	}
	v = luf_sim_first_violation(sim);
	if (v) {
		res->rule = v->rule;
		res->first = *v;
		res->fail_at = v->op;
	}
	res->luf_flushes = luf_sim_luf_flushes(sim);
	res->mm_flushes = luf_sim_mm_flushes(sim);
	for (unsigned int c = 0; c < n; c++)
		res->ipis += luf_sim_ipis(sim, c);
	res->deferred = luf_sim_stat(sim, LUF_STAT_DEFERRED);
	res->alloc_flushes = luf_sim_stat(sim, LUF_STAT_ALLOC_FLUSH);
	for (int c = 0; c < LUF_ABORT_NR_CAUSES; c++)
		res->aborts += luf_sim_stat(sim, (enum luf_stat_item)(LUF_STAT_ABORT + c));
	if (v && log)
		sim_thread_report(th, n, res, log);
	free(th);
	luf_sim_destroy(sim);
	return ret;
}
