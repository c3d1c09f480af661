// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/property/sim/simtest.h - what the simulator tests share: the seed
 * schedule, the operation budget, and ThreadSanitizer detection.
 *
 * Environment (as for tests/property):
 *   LUF_SEED=0x...       run just this seed (every random test);
 *   LUF_SEEDS=n          seeds per configuration instead of the default;
 *   LUF_SEED_BASE=0x...  another deterministic schedule;
 *   LUF_SIM_OPS=n        operations per seed (per CPU for threaded runs).
 * A failing random run prints its report (shortest history first) and the
 * LUF_SEED value that replays it.
 */
#ifndef LUF_SIMTEST_H
#define LUF_SIMTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "luf_sim.h"

#if defined(__SANITIZE_THREAD__)
#define SIMTEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIMTEST_TSAN 1
#endif
#endif
#if !defined(SIMTEST_TSAN)
#define SIMTEST_TSAN 0
#endif

#define SIMTEST_BASE 0x6c75665f73696d00ull /* "luf_sim" */

static inline uint64_t simtest_env(const char *name, bool *set)
{
	const char *v = getenv(name);

	*set = v && *v;
	return *set ? strtoull(v, NULL, 0) : 0;
}

/* Seeds per configuration: @dflt, LUF_SEEDS, or 1 if LUF_SEED names one. */
static inline unsigned int simtest_nr_seeds(unsigned int dflt)
{
	bool set;
	uint64_t n;

	simtest_env("LUF_SEED", &set);
	if (set)
		return 1;
	n = simtest_env("LUF_SEEDS", &set);
	return set && n ? (unsigned int)n : dflt;
}

/* Seed @i of configuration @salt (LUF_SEED, if set, replaces it). */
static inline uint64_t simtest_seed(uint64_t salt, unsigned int i)
{
	bool set;
	uint64_t s = simtest_env("LUF_SEED", &set), base;

	if (set)
		return s;
	base = simtest_env("LUF_SEED_BASE", &set);
	s = (set ? base : SIMTEST_BASE) ^ (salt * 0xd1b54a32d192ed03ull) ^ ((uint64_t)i << 40);
	s ^= s >> 31;
	s *= 0x94d049bb133111ebull;
	return s ^ (s >> 29);
}

/* Operations per seed: @dflt, or LUF_SIM_OPS. */
static inline unsigned long simtest_nr_ops(unsigned long dflt)
{
	bool set;
	uint64_t n = simtest_env("LUF_SIM_OPS", &set);

	return set && n ? (unsigned long)n : dflt;
}

#endif /* LUF_SIMTEST_H */
