// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/unit.h - what the CMocka unit tests share: a mocked arch-ops
 * vtable whose flush checks cmocka expectations (which CPUs, the ugen the
 * flush will mark, how many calls) and a whole luf instance built on it.
 *
 * Every ops->flush call must have been announced with EXPECT_FLUSH(), in
 * order: an unannounced call fails the test, and so does an announced call
 * that never comes (cmocka checks leftover expectations after each test).
 */
#ifndef LUF_UNIT_H
#define LUF_UNIT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <luf/luf.h>

#include "testenv.h" /* testenv_zalloc(), struct testenv_folio */

#define UNIT_MAX_WORDS LUF_CPUMASK_WORDS(LUF_MAX_CPUS)

/* The mocked backend's context. */
struct mock_arch {
	unsigned int nr_cpus;
	struct luf *luf;     /* set once luf_init() returned */
	unsigned long calls; /* every ops->flush call */
	bool lenient;	     /* true: only count calls, check nothing, return 0 */
	/* Called inside ops->flush after the checks (simulates a racing flusher). */
	void (*during_flush)(void *ctx);
	void *during_ctx;
};

extern const struct luf_arch_ops mock_ops;

int mock_flush(void *arch, const unsigned long *cpus, unsigned int nr_cpus, const struct luf_range *r);

/*
 * Announce the next ops->flush call: @nr_cpus bits, exactly the CPUs of
 * @list, the ugen source at @ugen while flushing (the snapshot the flush
 * will mark done), returning @ret.
 */
void expect_flush_list(unsigned int nr_cpus, const unsigned int *list, unsigned int n,
		       unsigned long ugen, int ret);

#define UNIT_LIST(...) ((const unsigned int[]){__VA_ARGS__})
#define UNIT_LIST_LEN(...) ((unsigned int)(sizeof(UNIT_LIST(__VA_ARGS__)) / sizeof(unsigned int)))
#define EXPECT_FLUSH(e, ugen, ret, ...)                                                     \
	expect_flush_list((e)->nr_cpus, UNIT_LIST(__VA_ARGS__), UNIT_LIST_LEN(__VA_ARGS__), \
			  (ugen), (ret))

/* A folio descriptor: the caller's struct with struct luf_folio embedded. */
struct ufolio {
	unsigned long id;
	struct luf_folio lf;
};

struct uenv {
	struct mock_arch arch;
	struct luf *l;
	struct luf_done_cpu *done;
	struct luf_stats_cpu *stats;
	struct luf_keytab *kt;
	struct luf_pcpu **pc;
	struct luf_freelist *fl, *fl2; /* two lists on one instance */
	struct luf_domain *dom, *dom2;
	struct luf_batch *scratch, *scratch2; /* caller-owned batches of nr_cpus CPUs */
	struct ufolio *folios;
	unsigned int nr_cpus, nr_keys, nr_folios, threshold;
	unsigned long reserve;
	unsigned int next_mask;
	unsigned long masks[4][UNIT_MAX_WORDS];
	/* LUF_DEBUG reports seen through the default capture. */
	unsigned int reports;
};

struct uenv *uenv_new(unsigned int nr_cpus, unsigned int nr_keys, unsigned int nr_folios,
		      unsigned int threshold, unsigned long reserve, unsigned long start);
void uenv_free(struct uenv *e);

/* Default fixture: 4 CPUs, 16 keys, 128 folios, no automatic fold, no reserve, start 0. */
int uenv_setup(void **state);
int uenv_teardown(void **state);
/* Replace the fixture in *@state by one with other parameters. */
struct uenv *uenv_reset(void **state, unsigned int nr_cpus, unsigned int nr_keys,
			unsigned int nr_folios, unsigned int threshold, unsigned long reserve,
			unsigned long start);

/* A mask of the listed CPUs (one of four rotating buffers of @e). */
const unsigned long *uenv_mask(struct uenv *e, const unsigned int *list, unsigned int n);
#define UMASK(e, ...) uenv_mask((e), UNIT_LIST(__VA_ARGS__), UNIT_LIST_LEN(__VA_ARGS__))

/* The test's own oracle for ugen order (not the library's, which mutants change). */
static inline bool u_before(unsigned long a, unsigned long b)
{
	return (long)(a - b) < 0;
}

/* The ugen __luf_ugen_new() hands out after @g (0 is skipped). */
static inline unsigned long u_next(unsigned long g)
{
	return g + 1 ? g + 1 : 1;
}

/* The snapshot the next flush of @e will take. */
unsigned long uenv_next_ugen(const struct uenv *e);

long ustat(const struct uenv *e, enum luf_stat_item item);

/*
 * One batch on CPU @cpu: luf_unmap() of one translation cached by the CPUs
 * of @mask with @pte_flags, then luf_pcpu_fold(). Asserts success and
 * returns the key.
 */
unsigned short uenv_unmap_fold(struct uenv *e, unsigned int cpu, struct luf_domain *dom,
			  const unsigned long *mask, unsigned int pte_flags);
#define RO (LUF_PTE_ACCESSIBLE)

/* Free folios [first, first + n) into @fl with @key from CPU @cpu; asserts success. */
void uenv_free_range(struct uenv *e, struct luf_freelist *fl, unsigned int cpu, unsigned int key,
		     unsigned int first, unsigned int n);

/* The id of an allocated folio (through luf_folio_entry()). */
unsigned long ufolio_id(const struct luf_folio *f);

/*
 * "Changes nothing": a byte copy of every piece of storage of @e (the
 * instance, done counters, statistics, key table, per-CPU states, free
 * lists, domains, scratch batch, folios) and the mock's call count.
 */
struct usnap;
struct usnap *usnap_take(const struct uenv *e);
/* Assert nothing changed (statistics too if @with_stats); frees @s. */
void usnap_check(const struct uenv *e, struct usnap *s, bool with_stats);

/* Group runners (one per test file); each returns its number of failures. */
int unit_run_flush(void);
int unit_run_freelist(void);
int unit_run_upgrade(void);
int unit_run_badinput(void);
int unit_run_debug(void);

#endif /* LUF_UNIT_H */
