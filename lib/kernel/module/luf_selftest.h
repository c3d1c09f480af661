/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf_selftest.h - the harness shared by the files of luf_selftest.ko.
 *
 * Each test fills a struct st_rec (failure count, first message, optional
 * skip reason); the module prints one KTAP line per test. Tests that run
 * on several CPUs start one kthread bound to each selected CPU
 * (st_run_threads()), released together, joined with a deadline.
 *
 * The safety check at reuse (st_page_reuse_ok(), S1) runs at every
 * allocation. It checks luf's view, done[cpu] >= the page's ugen for every
 * CPU that may cache the page, and does not trust it alone: each page also
 * records the backend's flush generation at its unmap, and every such CPU
 * must have run a real flush of that generation or newer
 * (luf_kernel_covered()) before the page is handed out again.
 */
#ifndef LUF_SELFTEST_H
#define LUF_SELFTEST_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/mm_types.h>
#include "luf_kernel.h"

#define ST_MAX_CPUS 64u /* kthreads at most; more CPUs: the first 64 online */
#define ST_MAX_ORDER 4u /* largest page order the tests allocate */
#define ST_MSG_LEN 200u
#define ST_NR_SUMS 6u /* per-thread counters a test may sum */

struct st_params {
	unsigned int cpus[ST_MAX_CPUS]; /* the CPUs the tests run on */
	unsigned int nr_cpus;
	unsigned int order;	     /* page order (0..ST_MAX_ORDER) */
	unsigned int nr_keys;	     /* key table size (2..65536) */
	unsigned int key_lo, key_hi; /* keys the key-table test folds into */
	unsigned int batch;	     /* pages per reclaim batch in the stress */
	unsigned int pool;	     /* pages per CPU in the stress */
	unsigned int rounds;	     /* reclaim rounds per CPU in the stress */
};

struct st_ctx {
	const struct st_params *p;
	unsigned int nr; /* nr_cpu_ids: bits of every luf mask */
	unsigned long *sel; /* the selected CPUs as a luf mask */
};

/* A test's result. */
struct st_rec {
	unsigned int fails;
	const char *skip; /* set: KTAP "# SKIP <reason>" */
	char msg[ST_MSG_LEN];
	char info[ST_MSG_LEN]; /* printed as a diagnostic even when the test passes */
};

__printf(3, 4) void st_fail(struct st_rec *r, int line, const char *fmt, ...);

#define ST_CHECK(r, cond, fmt, ...)                                               \
	do {                                                                      \
		if (!(cond))                                                      \
			st_fail((r), __LINE__, "%s: " fmt, #cond, ##__VA_ARGS__); \
	} while (0)

/* One luf instance with a key table and a domain. */
struct st_inst {
	struct luf_kernel *k;
	struct luf *l;
	struct luf_keytab *kt;
	struct luf_domain *dom;
	void *kt_raw;
};

int st_inst_create(struct st_inst *in, unsigned long start, unsigned int nr_keys);
void st_inst_destroy(struct st_inst *in);
struct luf_batch *st_batch_new(unsigned int nr_cpus);
struct luf_pcpu *st_pcpu_new(struct st_inst *in, unsigned int cpu, unsigned int threshold,
			     void **raw);
unsigned long *st_mask_new(unsigned int nr_cpus);
unsigned int st_remote(const unsigned long *mask, unsigned int nr_cpus, unsigned int self);

/* Kthreads, one bound to each selected CPU. */
struct st_thread;
typedef void (*st_thread_fn)(struct st_thread *t);

struct st_thread {
	struct st_run *run;
	struct task_struct *task;
	unsigned int cpu, idx;
	struct st_rec rec;
	unsigned long sum[ST_NR_SUMS];
	struct completion done;
};

struct st_run {
	st_thread_fn fn;
	void *arg;
	struct completion go;
	unsigned int nr;
	struct st_thread *t;
};

int st_run_threads(const struct st_ctx *c, st_thread_fn fn, void *arg, struct st_rec *r,
		   unsigned long sum[ST_NR_SUMS]);

/* Real pages with a recognisable pattern; luf's state lives in the descriptor. */
struct st_page {
	struct page *page;
	struct luf_folio lf;
	unsigned long need;	/* backend flush generation covering its unmap; 0: none */
	unsigned long ugen;	/* luf's stamp just before its unmap; 0: none */
	const unsigned long *mask; /* the CPUs that may cache it */
	u32 pattern;
};

int st_pages_alloc(struct st_page *pg, unsigned int n, unsigned int order, u32 seed);
void st_pages_free(struct st_page *pg, unsigned int n, unsigned int order);
void st_page_fill(struct st_page *p, unsigned int order, u32 pattern);
bool st_page_intact(const struct st_page *p, unsigned int order);
void st_page_unmapped(struct luf_kernel *k, struct st_page *p, const unsigned long *mask);
bool st_page_reuse_ok(struct luf_kernel *k, const struct st_page *p, unsigned int nr_cpus);

static inline struct st_page *st_page_of(struct luf_folio *f)
{
	return luf_folio_entry(f, struct st_page, lf);
}

/*
 * LUF_DEBUG misuse reports, captured instead of printed: a test that provokes
 * one on purpose installs st_report_capture with luf_set_report() and checks
 * the count. (Without LUF_DEBUG, luf reports nothing and the count stays 0.)
 */
extern atomic_t st_reports;
void st_report_capture(const char *what, const void *obj, const char *file, int line);

#if defined(LUF_DEBUG)
#define ST_REPORTS_EXPECTED(n) (n)
#else
#define ST_REPORTS_EXPECTED(n) 0
#endif

/* A small deterministic generator (xorshift32); never returns 0 for a seed != 0. */
static inline u32 st_rand(u32 *s)
{
	u32 x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

/* The tests. */
void st_ugen_wrap(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_cpumask_glue(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_fold_diet_mark(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_flush_failure(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_local_flush(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_checker_catches(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_keytab_conc(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_pcpu_batching(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_domain_settle(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_abort(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_freelist_pages(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_freelist_reserve(struct st_ctx *c, unsigned long arg, struct st_rec *r);
void st_stress(struct st_ctx *c, unsigned long arg, struct st_rec *r);

#define ST_STRESS_READONLY 0ul
#define ST_STRESS_MIXED 1ul

#endif /* LUF_SELFTEST_H */
