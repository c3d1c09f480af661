// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/prop.h - what the property tests share: a small PRNG,
 * the seed schedule, and an assertion that names the seed.
 *
 * Seeds. Each parameterised test runs prop_nr_seeds(default) seeds,
 * seed i being prop_seed(salt, i): a splitmix64 hash of LUF_SEED_BASE
 * (default below; set it to explore new cases), the test's salt and i.
 * Environment:
 *   LUF_SEED=0x...       replay one seed (every parameter of every test runs
 *                        just that seed);
 *   LUF_SEEDS=n          seeds per parameter instead of the default;
 *   LUF_SEED_BASE=0x...  a different deterministic schedule;
 *   LUF_PROP_VERBOSE=1   print what each seed exercised.
 * Every failure message starts with "LUF_SEED=0x...", the value to replay.
 */
#ifndef LUF_PROP_H
#define LUF_PROP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "testenv.h"

#define PROP_DEFAULT_BASE 0x6c75665f70726f70ull /* "luf_prop" */

/* splitmix64 (Steele, Lea, Flood 2014): one add, three xor-shift-multiplies. */
static inline uint64_t prop_mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct prop_rng {
	uint64_t s;
};

static inline void prop_rng_init(struct prop_rng *r, uint64_t seed)
{
	r->s = seed;
}

static inline uint64_t prop_next(struct prop_rng *r)
{
	return prop_mix(&r->s);
}

/* Uniform enough in [0, n) for tests (n >= 1; bias below 2^-32 for small n). */
static inline uint64_t prop_below(struct prop_rng *r, uint64_t n)
{
	return prop_next(r) % n;
}

/* True with probability num/den. */
static inline bool prop_chance(struct prop_rng *r, unsigned int num, unsigned int den)
{
	return prop_below(r, den) < num;
}

static inline uint64_t prop_env_u64(const char *name, bool *set)
{
	const char *v = getenv(name);

	*set = v && *v;
	return *set ? strtoull(v, NULL, 0) : 0;
}

/* The seed the current test case runs, and its step: named in every failure. */
static uint64_t prop_cur_seed;
static unsigned long prop_step;

static inline unsigned int prop_nr_seeds(unsigned int dflt)
{
	bool set;
	uint64_t n;

	prop_env_u64("LUF_SEED", &set);
	if (set)
		return 1;
	n = prop_env_u64("LUF_SEEDS", &set);
	return set && n ? (unsigned int)n : dflt;
}

/* Seed @i of the schedule for @salt (LUF_SEED, if set, replaces it). */
static inline uint64_t prop_seed(uint64_t salt, unsigned int i)
{
	bool set;
	uint64_t s = prop_env_u64("LUF_SEED", &set), base;

	if (!set) {
		base = prop_env_u64("LUF_SEED_BASE", &set);
		s = (set ? base : PROP_DEFAULT_BASE) ^ (salt * 0xd1b54a32d192ed03ull) ^ i;
		prop_mix(&s);
		s = prop_mix(&s);
	}
	prop_cur_seed = s;
	prop_step = 0;
	return s;
}

static inline bool prop_verbose(void)
{
	bool set;

	return prop_env_u64("LUF_PROP_VERBOSE", &set) != 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline void
prop_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "property failed at %s:%d: %s\n  replay: LUF_SEED=0x%016llx (step %lu)\n",
		file, line, cond, (unsigned long long)prop_cur_seed, prop_step);
	cr_assert_fail("LUF_SEED=0x%016llx step %lu: %s (%s)", (unsigned long long)prop_cur_seed,
		       prop_step, msg, cond);
}

/* cr_assert() that names the seed; the message is a printf format + args. */
#define PASSERT(cond, ...)                                                 \
	do {                                                               \
		if (!(cond))                                               \
			prop_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

/* A cpumask big enough for any instance. */
typedef unsigned long prop_mask_t[LUF_CPUMASK_WORDS(LUF_MAX_CPUS)];

/*
 * A random set of CPUs, in one of several shapes so that empty, single,
 * sparse, dense and full sets (and the tail word) all turn up often.
 */
static inline void prop_random_mask(struct prop_rng *r, unsigned long *m, unsigned int nr)
{
	unsigned int shape = (unsigned int)prop_below(r, 16);

	luf_cpumask_clear(m, nr);
	if (shape == 0)
		return; /* empty */
	if (shape <= 3) {
		luf_cpumask_set_cpu(m, nr, (unsigned int)prop_below(r, nr));
	} else if (shape <= 9) {
		for (unsigned int k = 1 + (unsigned int)prop_below(r, 4); k; k--)
			luf_cpumask_set_cpu(m, nr, (unsigned int)prop_below(r, nr));
	} else if (shape <= 14) {
		for (unsigned int c = 0; c < nr; c++)
			if (prop_next(r) & 1)
				luf_cpumask_set_cpu(m, nr, c);
	} else {
		for (unsigned int c = 0; c < nr; c++)
			luf_cpumask_set_cpu(m, nr, c);
	}
}

/* A ugen start value: 0, random, just below the wrap, or just after it. */
static inline unsigned long prop_random_base(struct prop_rng *r)
{
	switch (prop_below(r, 4)) {
	case 0:
		return 1 + prop_below(r, 64);
	case 1:
		return (unsigned long)prop_next(r);
	case 2:
		return ULONG_MAX - prop_below(r, 64);
	default:
		return (unsigned long)0 - (1UL << (prop_below(r, 40)));
	}
}

#endif /* LUF_PROP_H */
