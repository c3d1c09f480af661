// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/summary_race.c - the done summary never runs ahead of
 * the counters, with flushers racing (luf/done.h), and it catches up.
 *
 * 130 CPU ids (three cpumask words, the last one partial). Two flusher
 * threads mark done the way the library does: luf_flush_batch() of random
 * sets through a backend whose flush always succeeds, and
 * luf_local_flush_begin() / luf_local_flush_end() of single CPUs. A
 * checker thread meanwhile, over and over:
 *
 *   - reads the summary (luf_done_all() and every group), then every CPU's
 *     counter: no counter may be older than a summary read before it
 *     (counters only move forward, so a summary above a later counter
 *     was above it when read);
 *   - judges a random set with luf_batch_check_done() and, when it says
 *     done, with the scan of every counter, which must agree.
 *
 * Once the threads have stopped, every group must equal the minimum of its
 * CPUs' counters and luf_done_all() the minimum of the groups: racing
 * flushers may leave the summary behind only while they run.
 *
 * Plain C (no Criterion, which cannot start under ThreadSanitizer); labels
 * property and tsan. Exit status 0 on success; each failure is printed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <luf/luf.h>

#include "testenv.h"

#define NR 130u
#define WORDS LUF_CPUMASK_WORDS(NR)
#define ROUNDS 20000

static struct luf *l;
static unsigned long stop, failures, checks_done;

static int ok_flush(void *arch, const unsigned long *cpus, unsigned int nr_cpus,
		    const struct luf_range *r)
{
	(void)arch, (void)cpus, (void)nr_cpus, (void)r;
	return 0;
}

static unsigned int nr_ids(void *arch)
{
	(void)arch;
	return NR;
}

static unsigned int cpu0(void *arch)
{
	(void)arch;
	return 0;
}

static const struct luf_arch_ops ops = {.flush = ok_flush, .nr_cpu_ids = nr_ids, .this_cpu = cpu0};

static unsigned long rnd(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fail(const char *what, unsigned long a, unsigned long b)
{
	__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "summary_race: %s (%lu, %lu)\n", what, a, b);
}

static void *flusher(void *arg)
{
	unsigned long s = *(unsigned long *)arg, m[WORDS];
	struct luf_batch *b = testenv_zalloc(luf_batch_size(NR));

	luf_batch_init(b, NR);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		if (rnd(&s) & 1) {
			unsigned int cpu = (unsigned int)(rnd(&s) % NR);

			luf_local_flush_end(l, cpu, luf_local_flush_begin(l));
			continue;
		}
		/* Half of the sets are every CPU: the machine's summary moves too. */
		for (unsigned int i = 0; i < WORDS; i++) {
			unsigned long x = rnd(&s);

			m[i] = x & 1 ? ~0UL : x & rnd(&s);
		}
		m[WORDS - 1] &= (1UL << (NR % LUF_BITS_PER_LONG)) - 1;
		luf_batch_add(b, m, luf_ugen_stamp(&l->ugen), false);
		luf_flush_batch(l, 0, b);
		luf_batch_clear(b);
	}
	free(b);
	return NULL;
}

static void check_round(unsigned long *s, struct luf_batch *b)
{
	unsigned long all = luf_done_all(&l->done), group[WORDS], m[WORDS], v, ugen;

	for (unsigned int g = 0; g < WORDS; g++)
		group[g] = __luf_done_group(&l->done, g);
	for (unsigned int c = 0; c < NR; c++) {
		v = luf_done_read(&l->done, c);
		if (luf_ugen_before(v, all))
			fail("the machine's summary ahead of a CPU's counter", all, v);
		if (luf_ugen_before(v, group[c / LUF_BITS_PER_LONG]))
			fail("a group's summary ahead of its CPU's counter",
			     group[c / LUF_BITS_PER_LONG], v);
	}
	/* One to four CPUs, or every CPU. */
	memset(m, 0, sizeof(m));
	if (rnd(s) % 4) {
		for (unsigned int k = rnd(s) % 4; k < 4; k++) {
			unsigned int c = (unsigned int)(rnd(s) % NR);

			m[c / LUF_BITS_PER_LONG] |= 1UL << (c % LUF_BITS_PER_LONG);
		}
	} else {
		memset(m, 0xff, sizeof(m));
		m[WORDS - 1] &= (1UL << (NR % LUF_BITS_PER_LONG)) - 1;
	}
	/* A stamp up to 64 generations old: sometimes done, sometimes not. */
	ugen = luf_ugen_current(&l->ugen) - rnd(s) % 64;
	luf_batch_clear(b);
	luf_batch_add(b, m, ugen ? ugen : 1, false);
	if (luf_batch_check_done(b, &l->done)) {
		checks_done++;
		if (!__luf_batch_check_done_scan(b, &l->done))
			fail("check_done said done, the counters say not", ugen, all);
	}
}

static void check_quiescent(void)
{
	unsigned long all = 0;

	for (unsigned int g = 0; g < WORDS; g++) {
		unsigned long min = luf_done_read(&l->done, g * LUF_BITS_PER_LONG), v;

		for (unsigned int c = g * LUF_BITS_PER_LONG;
		     c < NR && c < (g + 1) * LUF_BITS_PER_LONG; c++) {
			v = luf_done_read(&l->done, c);
			if (luf_ugen_before(v, min))
				min = v;
		}
		if (__luf_done_group(&l->done, g) != min) {
			fail("a group's summary is not its minimum once the flushers stopped",
			     __luf_done_group(&l->done, g), min);
			fprintf(stderr,
				"  group %u: hold %#lx lag %lu; counters at the group's value:", g,
				__luf_read_once(&l->done.hold[g]),
				__luf_read_once(&l->done.lag[g]));
			for (unsigned int c = g * LUF_BITS_PER_LONG;
			     c < NR && c < (g + 1) * LUF_BITS_PER_LONG; c++)
				if (luf_done_read(&l->done, c) == __luf_done_group(&l->done, g))
					fprintf(stderr, " %u", c);
			fprintf(stderr, "\n");
		}
		if (!g || luf_ugen_before(min, all))
			all = min;
	}
	if (luf_done_all(&l->done) != all)
		fail("the machine's summary is not the groups' minimum once the flushers stopped",
		     luf_done_all(&l->done), all);
}

int main(void)
{
	struct luf_done_cpu *done = testenv_zalloc(luf_done_size(NR));
	struct luf_stats_cpu *stats = testenv_zalloc(luf_stats_size(NR));
	struct luf_batch *b = testenv_zalloc(luf_batch_size(NR));
	static unsigned long seeds[2] = {0x1234567UL, 0x7654321UL};
	unsigned long s = 0x9e3779b97f4a7c15UL, rounds;
	pthread_t t[2];

	l = testenv_zalloc(sizeof(*l));
	/* Just below the wrap: the summary's comparisons must survive it too. */
	if (luf_init(l, &ops, NULL, done, stats, ~0UL - 5000) || luf_batch_init(b, NR))
		return 2;
	for (unsigned int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, flusher, &seeds[i]))
			return 2;
	/* At least ROUNDS checks, and until the flushers took 100,000 generations. */
	for (rounds = 0; rounds < ROUNDS || luf_ugen_before(luf_ugen_current(&l->ugen), 95000);
	     rounds++)
		check_round(&s, b);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	check_quiescent();
	printf("summary_race: %lu rounds, %lu judged done, ugen %lu, %lu failures\n", rounds,
	       checks_done, luf_ugen_current(&l->ugen), failures);
	if (!checks_done || checks_done == rounds || luf_ugen_current(&l->ugen) > ~0UL / 2) {
		fprintf(stderr, "summary_race: the run proves little (every set or none "
				"judged done, or the ugen did not cross the wrap)\n");
		return 1;
	}
	free(b), free(done), free(stats), free(l);
	return failures ? 1 : 0;
}
