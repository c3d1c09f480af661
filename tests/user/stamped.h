// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/user/stamped.h - the stamped objects of luf_proc.h's stress tests:
 * a stamp and canary words derived from it, written before the object is
 * published, so that a reader sees an object reused under its section as
 * a torn or changed canary.
 */
#ifndef LUF_TESTS_STAMPED_H
#define LUF_TESTS_STAMPED_H

#include <luf/luf_proc.h>

#include <stdatomic.h>
#include <stdbool.h>

#define STAMPED_WORDS 8

struct stamped {
	atomic_ulong stamp;
	atomic_ulong word[STAMPED_WORDS];
	struct luf_node node;
};

/* Give @o the next stamp of @next and the canary words that go with it. */
static inline void stamped_fill(struct stamped *o, atomic_ulong *next)
{
	unsigned long s = atomic_fetch_add(next, 1);

	atomic_store_explicit(&o->stamp, s, memory_order_relaxed);
	for (int i = 0; i < STAMPED_WORDS; i++)
		atomic_store_explicit(&o->word[i], s * 31 + (unsigned long)i, memory_order_relaxed);
}

/*
 * Read @o inside the caller's section: its stamp, @passes times its words,
 * its stamp again. Return: true if it changed under the reader.
 */
static inline bool stamped_torn(struct stamped *o, unsigned int passes)
{
	unsigned long s = atomic_load_explicit(&o->stamp, memory_order_relaxed);
	bool bad = false;

	for (unsigned int k = 0; k < passes; k++)
		for (int i = 0; i < STAMPED_WORDS; i++)
			bad |= atomic_load_explicit(&o->word[i], memory_order_relaxed) !=
			       s * 31 + (unsigned long)i;
	return bad || atomic_load_explicit(&o->stamp, memory_order_relaxed) != s;
}

#endif /* LUF_TESTS_STAMPED_H */
