// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_kunit.c - KUnit cases of luf's core against real IPIs and real pages:
 * the flush protocol with the done values real flushes leave, the ugen wrap,
 * the cpumask glue, a failing and a local flush, the key table, per-CPU
 * batching and domains under kthreads bound to CPUs, every write-upgrade
 * abort cause, the deferred free list of real pages, and a reclaim-shaped
 * stress phase.
 *
 * The instances flush through luf_kernel.c (IPIs that flush the TLB and
 * count a flush generation of their own), so every reuse is checked twice
 * (lk_reuse_ok()): luf's done counters must say the page's CPUs flushed,
 * and the backend must have run a flush that started after the unmap on
 * each of them. lk_checker_catches_early_reuse shows that the check can
 * fail.
 *
 * One file for two kernels: the patched kernel's KUnit (lib/luf/, the
 * module luf_core_test), and the out-of-tree module luf_selftest.ko for a
 * stock kernel, which builds it against the luf repository's
 * lib/kernel/module/shim/kunit/test.h. The module parameters shape the
 * cases (luf_core_test.rounds=100 on the command line of a kernel with
 * the suite built in); a bad one makes the suite's init fail with
 * -EINVAL and one pr_warn() line.
 */
#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "luf_kernel.h"

#define LK_MAX_CPUS 64u	  /* kthreads at most; more CPUs: the first 64 online */
#define LK_MAX_ORDER 4u	  /* largest page order the cases allocate */
#define LK_NR_SUMS 6u	  /* per-thread counters a case may sum */
#define LK_FL_PAGES 32u	  /* pages of the free-list case */
#define LK_KT_ITERS 2000u /* folds per kthread of the key-table case */
#define LK_PCPU_ROUNDS 64u
#define LK_PCPU_THRESHOLD 8u
#define LK_SETTLE_ITERS 64u
#define LK_STRESS_RESERVE 2u

static int cpus[LK_MAX_CPUS];
static unsigned int nr_cpus_arg;
module_param_array(cpus, int, &nr_cpus_arg, 0444);
MODULE_PARM_DESC(cpus,
		 "CPU ids to run on, online and distinct (default: every online CPU, at most 64)");
static unsigned int order;
module_param(order, uint, 0444);
MODULE_PARM_DESC(order, "page order of the test folios, 0..4 (default 0)");
static unsigned int nr_keys = 256;
module_param(nr_keys, uint, 0444);
MODULE_PARM_DESC(nr_keys, "key table size, 2..65536 (default 256)");
static unsigned int key_lo = 1;
module_param(key_lo, uint, 0444);
MODULE_PARM_DESC(key_lo, "first key of the concurrent key-table case, >= 1 (default 1)");
static unsigned int key_hi = 16;
module_param(key_hi, uint, 0444);
MODULE_PARM_DESC(key_hi,
		 "last key of the concurrent key-table case, key_lo..nr_keys-1 (default 16)");
static unsigned int batch = 16;
module_param(batch, uint, 0444);
MODULE_PARM_DESC(batch, "pages per reclaim batch in the stress cases, 1..256 (default 16)");
static unsigned int pool = 128;
module_param(pool, uint, 0444);
MODULE_PARM_DESC(pool, "pages per CPU in the stress cases, 2*batch..4096 (default 128)");
/* Built in, the suite runs at every boot: a shorter stress phase unless asked. */
#ifdef MODULE
#define LK_ROUNDS 1000u
#else
#define LK_ROUNDS 100u
#endif
static unsigned int rounds = LK_ROUNDS;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "stress rounds per CPU, 1..100000 (default 1000; built in 100)");

/* The CPUs the cases run on, from the parameters (suite init). */
static unsigned int lk_cpu[LK_MAX_CPUS], lk_nr_sel;

/* One case's state: its instance, its pages, the selected CPUs as a luf mask. */
struct lk_ctx {
	unsigned int nr;      /* nr_cpu_ids: bits of every luf mask */
	unsigned long *sel;   /* the selected CPUs */
	struct luf_kernel *k; /* the case's instance (lk_inst()) */
	struct luf *l;
	struct luf_keytab *kt;
	struct luf_domain *dom;
	void *raw[LK_MAX_CPUS + 4]; /* luf_kernel_zalloc()'s blocks, freed at exit */
	unsigned int nr_raw;
	struct lk_page *pg[LK_MAX_CPUS + 1]; /* lk_pages()' arrays, freed at exit */
	unsigned int nr_pg[LK_MAX_CPUS + 1], nr_pgs;
};

/* A page of the cases: luf's state in a descriptor of its own, never in the page. */
struct lk_page {
	struct page *page;
	struct luf_folio lf;
	unsigned long need;	   /* backend flush generation covering its unmap; 0: none */
	unsigned long ugen;	   /* luf's stamp just before its unmap; 0: none */
	const unsigned long *mask; /* the CPUs that may cache it */
	u32 pattern;
	unsigned int order;
};

static struct lk_page *lk_page_of(struct luf_folio *f)
{
	return luf_folio_entry(f, struct lk_page, lf);
}

/* xorshift32; never 0 for a seed other than 0. */
static u32 lk_rand(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* LUF_DEBUG misuse reports, counted instead of printed. */
static atomic_t lk_reports;

static void lk_report(const char *what, const void *obj, const char *file, int line)
{
	atomic_inc(&lk_reports);
}

#if defined(LUF_DEBUG)
#define LK_REPORTS(n) (n)
#define LK_DEBUG_STR " LUF_DEBUG"
#else
#define LK_REPORTS(n) 0
#define LK_DEBUG_STR ""
#endif

static __printf(1, 2) int lk_bad_param(const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_warn("luf_core: invalid parameter %pV\n", &vaf);
	va_end(args);
	return -EINVAL;
}

static int lk_suite_init(struct kunit_suite *suite)
{
	unsigned int i, j, cpu;

	lk_nr_sel = 0;
	for (i = 0; i < nr_cpus_arg; i++) {
		if (cpus[i] < 0 || cpus[i] >= (int)nr_cpu_ids)
			return lk_bad_param("cpus: CPU %d does not exist (nr_cpu_ids %u)", cpus[i],
					    nr_cpu_ids);
		if (!cpu_online(cpus[i]))
			return lk_bad_param("cpus: CPU %d is offline", cpus[i]);
		for (j = 0; j < i; j++)
			if (cpus[j] == cpus[i])
				return lk_bad_param("cpus: CPU %d listed twice", cpus[i]);
		lk_cpu[lk_nr_sel++] = cpus[i];
	}
	if (!nr_cpus_arg) {
		for_each_online_cpu(cpu) {
			if (lk_nr_sel == LK_MAX_CPUS)
				break;
			lk_cpu[lk_nr_sel++] = cpu;
		}
	}
	if (order > LK_MAX_ORDER)
		return lk_bad_param("order=%u: must be 0..%u", order, LK_MAX_ORDER);
	if (nr_keys < 2 || nr_keys > LUF_KEYTAB_MAX_KEYS)
		return lk_bad_param("nr_keys=%u: must be 2..%u", nr_keys, LUF_KEYTAB_MAX_KEYS);
	if (!key_lo || key_lo > key_hi || key_hi >= nr_keys)
		return lk_bad_param("key_lo=%u key_hi=%u: need 1 <= key_lo <= key_hi < nr_keys=%u",
				    key_lo, key_hi, nr_keys);
	if (!batch || batch > 256)
		return lk_bad_param("batch=%u: must be 1..256", batch);
	if (pool < 2 * batch || pool > 4096)
		return lk_bad_param("pool=%u: must be 2*batch (%u)..4096", pool, 2 * batch);
	if (!rounds || rounds > 100000)
		return lk_bad_param("rounds=%u: must be 1..100000", rounds);
	pr_info("# luf_core: luf %s%s, %u CPUs, real_flush=%d\n", LUF_VERSION_STRING, LK_DEBUG_STR,
		lk_nr_sel, LUF_KERNEL_REAL_FLUSH);
	pr_info("# luf_core: order=%u nr_keys=%u keys=%u..%u batch=%u pool=%u rounds=%u\n", order,
		nr_keys, key_lo, key_hi, batch, pool, rounds);
	return 0;
}

static void lk_pages_free(struct lk_page *pg, unsigned int n);

static int lk_init(struct kunit *test)
{
	struct lk_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->nr = nr_cpu_ids;
	c->sel = kunit_kcalloc(test, LUF_CPUMASK_WORDS(c->nr), sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->sel);
	for (i = 0; i < lk_nr_sel; i++)
		luf_cpumask_set_cpu(c->sel, c->nr, lk_cpu[i]);
	atomic_set(&lk_reports, 0);
	test->priv = c;
	return 0;
}

static void lk_exit(struct kunit *test)
{
	struct lk_ctx *c = test->priv;
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < c->nr_pgs; i++)
		lk_pages_free(c->pg[i], c->nr_pg[i]);
	for (i = 0; i < c->nr_raw; i++)
		kvfree(c->raw[i]);
	luf_kernel_destroy(c->k);
}

/* Cache-line aligned storage for luf objects, freed at the case's exit. */
static void *lk_zalloc(struct kunit *test, size_t size)
{
	struct lk_ctx *c = test->priv;
	void *p;

	KUNIT_ASSERT_LT(test, c->nr_raw, ARRAY_SIZE(c->raw));
	p = luf_kernel_zalloc(size, &c->raw[c->nr_raw]);
	KUNIT_ASSERT_NOT_NULL(test, p);
	c->nr_raw++;
	return p;
}

/* The case's instance, starting at ugen @start, with a key table of @keys and a domain. */
static struct lk_ctx *lk_inst(struct kunit *test, unsigned long start, unsigned int keys)
{
	struct lk_ctx *c = test->priv;

	c->k = luf_kernel_create(start);
	KUNIT_ASSERT_NOT_NULL(test, c->k);
	c->l = &c->k->luf;
	c->kt = lk_zalloc(test, luf_keytab_size(keys, c->nr));
	c->dom = kunit_kzalloc(test, luf_domain_size(c->nr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->dom);
	KUNIT_ASSERT_EQ(test, luf_keytab_init(c->kt, c->l, keys), 0);
	KUNIT_ASSERT_EQ(test, luf_domain_init(c->dom, c->l), 0);
	return c;
}

static struct luf_pcpu *lk_pcpu(struct kunit *test, unsigned int cpu, unsigned int threshold)
{
	struct lk_ctx *c = test->priv;
	struct luf_pcpu *pc = lk_zalloc(test, luf_pcpu_size(c->nr));

	KUNIT_ASSERT_EQ(test, luf_pcpu_init(pc, c->l, c->kt, cpu, threshold), 0);
	return pc;
}

static struct luf_freelist *lk_freelist(struct kunit *test, unsigned long reserve)
{
	struct lk_ctx *c = test->priv;
	struct luf_freelist *fl = kunit_kzalloc(test, luf_freelist_size(c->nr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fl);
	KUNIT_ASSERT_EQ(test, luf_freelist_init(fl, c->l, c->kt, reserve), 0);
	return fl;
}

static struct luf_batch *lk_batch(struct kunit *test)
{
	struct lk_ctx *c = test->priv;
	struct luf_batch *b = kunit_kzalloc(test, luf_batch_size(c->nr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_EQ(test, luf_batch_init(b, c->nr), 0);
	return b;
}

static unsigned long *lk_mask(struct kunit *test)
{
	struct lk_ctx *c = test->priv;
	unsigned long *m = kunit_kcalloc(test, LUF_CPUMASK_WORDS(c->nr), sizeof(long), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, m);
	return m;
}

/* CPUs of @mask other than @self: the IPIs a flush of @mask sends from @self. */
static unsigned int lk_remote(const unsigned long *mask, unsigned int nr, unsigned int self)
{
	return luf_cpumask_weight(mask, nr) - luf_cpumask_test_cpu(mask, nr, self);
}

static long lk_stat(struct lk_ctx *c, enum luf_stat_item item)
{
	return luf_stats_sum(c->l, item);
}

/* Pages: the pattern covers every word, so any write by luf or a stale user shows. */
static void lk_page_fill(struct lk_page *p, u32 pattern)
{
	u32 *w = page_address(p->page);
	size_t i, n = (PAGE_SIZE << p->order) / sizeof(u32);

	for (i = 0; i < n; i++)
		w[i] = pattern ^ (u32)i;
	p->pattern = pattern;
}

static bool lk_page_intact(const struct lk_page *p)
{
	const u32 *w = page_address(p->page);
	size_t i, n = (PAGE_SIZE << p->order) / sizeof(u32);

	for (i = 0; i < n; i++)
		if (w[i] != (p->pattern ^ (u32)i))
			return false;
	return true;
}

static void lk_pages_free(struct lk_page *pg, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (pg[i].page)
			__free_pages(pg[i].page, pg[i].order);
		pg[i].page = NULL;
	}
}

/*
 * @n pages of order @ord on node @nid (NUMA_NO_NODE: any), filled, freed at
 * the case's exit; the case fails if memory runs out.
 */
static struct lk_page *lk_pages(struct kunit *test, unsigned int n, unsigned int ord, int nid,
				u32 seed)
{
	struct lk_page *pg = kunit_kcalloc(test, n, sizeof(*pg), GFP_KERNEL);
	struct lk_ctx *c = test->priv;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, pg);
	KUNIT_ASSERT_LT(test, c->nr_pgs, ARRAY_SIZE(c->pg));
	c->pg[c->nr_pgs] = pg;
	c->nr_pg[c->nr_pgs++] = n;
	for (i = 0; i < n; i++) {
		pg[i].order = ord;
		pg[i].page = alloc_pages_node(nid, GFP_KERNEL, ord);
		KUNIT_ASSERT_NOT_NULL(test, pg[i].page);
		lk_page_fill(&pg[i], seed * 2654435761u + i);
	}
	return pg;
}

/*
 * Record the unmap of @p from the CPUs of @mask. Call after the (simulated)
 * PTE clear and before luf_unmap(): both stamps are then no newer than the
 * one luf takes, so a flush luf may count for the page also counts here.
 */
static void lk_page_unmapped(struct lk_ctx *c, struct lk_page *p, const unsigned long *mask)
{
	p->mask = mask;
	p->need = luf_kernel_gen_stamp(c->k);
	p->ugen = luf_ugen_stamp(&c->l->ugen);
}

/*
 * The check at reuse (S1): every CPU that may cache @p has done >= its
 * ugen in luf's counters, and has run a real flush that started after its
 * unmap in the backend's own count.
 */
static bool lk_reuse_ok(struct lk_ctx *c, const struct lk_page *p)
{
	unsigned int cpu;

	if (!p->need)
		return true;
	luf_for_each_cpu(cpu, p->mask, c->nr) {
		if (p->ugen && !__luf_cpu_done(&c->l->done, cpu, p->ugen))
			return false;
		if (!luf_kernel_covered(c->k, cpu, p->need))
			return false;
	}
	return true;
}

/*
 * Kthreads, one bound to each selected CPU, released together, joined with
 * a deadline. What a thread works with is set up before it starts, in the
 * case's own thread (KUnit's assertions end the case's thread, not others).
 */
struct lk_thread {
	void (*fn)(struct lk_thread *t);
	void *arg;
	struct completion *go;
	struct completion done;
	struct task_struct *task;
	unsigned int cpu, idx, fails;
	char msg[160];
	unsigned long sum[LK_NR_SUMS];
	struct luf_pcpu *pc; /* this CPU's, of lk_thread_res's threshold */
	struct luf_batch *b, *copy;
	unsigned long *m;
	struct luf_freelist *fl; /* with lk_thread_res.freelist */
	struct lk_page *pg;	 /* with lk_thread_res.pages: @pool pages */
	unsigned int *inuse;	 /* and room for the indices of a @batch */
};

struct lk_thread_res {
	unsigned int threshold;
	bool freelist, pages;
	unsigned long reserve;
};

/* A failed check in a kthread: counted, the first one kept (KUnit's checks are for the case). */
static __printf(3, 4) void lk_fail(struct lk_thread *t, int line, const char *fmt, ...)
{
	va_list args;
	int n;

	if (t->fails++)
		return;
	n = scnprintf(t->msg, sizeof(t->msg), "line %d: ", line);
	va_start(args, fmt);
	vscnprintf(t->msg + n, sizeof(t->msg) - n, fmt, args);
	va_end(args);
}

#define LK_CHECK(t, cond, fmt, ...)                                             \
	do {                                                                    \
		if (!(cond))                                                    \
			lk_fail(t, __LINE__, "%s: " fmt, #cond, ##__VA_ARGS__); \
	} while (0)

static int lk_thread_main(void *data)
{
	struct lk_thread *t = data;

	wait_for_completion(t->go);
	if (t->fn)
		t->fn(t);
	complete(&t->done);
	return 0;
}

/*
 * Run @fn on every selected CPU; a failed thread fails the case. Sums their
 * counters. Every thread's resources are set up before the first starts: an
 * assertion here then ends the case with no thread left waiting.
 */
static void lk_run_threads(struct kunit *test, void (*fn)(struct lk_thread *t), void *arg,
			   const struct lk_thread_res *res, unsigned long sum[LK_NR_SUMS])
{
	struct lk_thread *th = kunit_kcalloc(test, lk_nr_sel, sizeof(*th), GFP_KERNEL);
	unsigned long deadline = jiffies + 600 * HZ;
	unsigned int i, j, started = 0;
	struct completion go;
	int err = 0;

	KUNIT_ASSERT_NOT_NULL(test, th);
	init_completion(&go);
	for (i = 0; i < lk_nr_sel; i++) {
		struct lk_thread *t = &th[i];

		*t =
		    (struct lk_thread){.fn = fn, .arg = arg, .go = &go, .cpu = lk_cpu[i], .idx = i};
		init_completion(&t->done);
		t->pc = lk_pcpu(test, t->cpu, res->threshold);
		t->b = lk_batch(test);
		t->copy = lk_batch(test);
		t->m = lk_mask(test);
		if (res->freelist)
			t->fl = lk_freelist(test, res->reserve);
		if (res->pages) {
			/* On the thread's node, as a reclaiming CPU's pages would be. */
			t->pg = lk_pages(test, pool, order, cpu_to_node(t->cpu), 1000 + t->cpu);
			t->inuse = kunit_kcalloc(test, batch, sizeof(*t->inuse), GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, t->inuse);
		}
	}
	for (i = 0; i < lk_nr_sel; i++) {
		struct lk_thread *t = &th[i];
		struct task_struct *task;

		task = kthread_create_on_cpu(lk_thread_main, t, t->cpu, "luf_kunit/%u");
		if (IS_ERR(task)) {
			err = PTR_ERR(task);
			for (j = 0; j < started; j++)
				th[j].fn = NULL; /* release the threads already made without work */
			break;
		}
		get_task_struct(task);
		t->task = task;
		wake_up_process(task);
		started++;
	}
	complete_all(&go);
	for (i = 0; i < started; i++) {
		struct lk_thread *t = &th[i];

		while (!wait_for_completion_timeout(&t->done, HZ)) {
			if (time_after(jiffies, deadline)) {
				KUNIT_FAIL(test, "CPU %u: thread still running after 600 s",
					   t->cpu);
				deadline = jiffies + 3600 * HZ;
			}
		}
		kthread_stop(t->task);
		put_task_struct(t->task);
		KUNIT_EXPECT_EQ_MSG(test, t->fails, 0, "CPU %u, first: %s", t->cpu, t->msg);
		for (j = 0; j < LK_NR_SUMS && sum; j++)
			sum[j] += t->sum[j];
	}
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "kthread_create_on_cpu");
}

/* The caller's CPU for statistics; the cases here do not need it stable. */
static unsigned int lk_self(void)
{
	return raw_smp_processor_id();
}

static void lk_ugen_wrap(struct kunit *test)
{
	const unsigned long start = ULONG_MAX - 3;
	struct lk_ctx *c = lk_inst(test, start, 2);
	struct luf_batch *b = lk_batch(test), *old = lk_batch(test);
	unsigned long prev[LK_MAX_CPUS], s, d;
	unsigned int i, j, cpu;

	KUNIT_EXPECT_EQ(test, luf_ugen_current(&c->l->ugen), start);
	KUNIT_EXPECT_TRUE(test, luf_ugen_before(ULONG_MAX - 1, 2));
	KUNIT_EXPECT_FALSE(test, luf_ugen_before(2, ULONG_MAX - 1));
	KUNIT_EXPECT_EQ(test, luf_ugen_newer(ULONG_MAX, 1), 1);
	luf_batch_add(old, c->sel, luf_ugen_stamp(&c->l->ugen), false);
	for (j = 0; j < lk_nr_sel; j++)
		prev[j] = luf_done_read(&c->l->done, lk_cpu[j]);
	for (i = 0; i < 8; i++) {
		luf_batch_clear(b);
		s = luf_ugen_stamp(&c->l->ugen);
		KUNIT_EXPECT_NE(test, s, 0);
		luf_batch_add(b, c->sel, s, false);
		KUNIT_EXPECT_FALSE_MSG(test, luf_batch_check_done(b, &c->l->done), "stamp %lu", s);
		KUNIT_EXPECT_GE(test, luf_flush_batch(c->l, lk_self(), b), 0);
		KUNIT_EXPECT_TRUE(test, luf_batch_empty(b));
		KUNIT_EXPECT_NE(test, luf_ugen_current(&c->l->ugen), 0);
		for (j = 0; j < lk_nr_sel; j++) {
			d = luf_done_read(&c->l->done, lk_cpu[j]);
			KUNIT_EXPECT_TRUE_MSG(test, d && !luf_ugen_before(d, s),
					      "CPU %u done %lu < stamp %lu", lk_cpu[j], d, s);
			KUNIT_EXPECT_FALSE_MSG(test, luf_ugen_before(d, prev[j]),
					       "CPU %u done went back", lk_cpu[j]);
			prev[j] = d;
		}
	}
	/* The counter wrapped: a set stamped before it is done, one after is not. */
	KUNIT_EXPECT_TRUE(test, luf_ugen_before(start, luf_ugen_current(&c->l->ugen)));
	KUNIT_EXPECT_LT(test, luf_ugen_current(&c->l->ugen), start);
	KUNIT_EXPECT_TRUE(test, luf_batch_check_done(old, &c->l->done));
	KUNIT_EXPECT_EQ(test, luf_batch_diet(old, &c->l->done), lk_nr_sel);
	KUNIT_EXPECT_TRUE(test, luf_batch_empty(old));
	luf_batch_clear(b);
	luf_batch_add(b, c->sel, luf_ugen_stamp(&c->l->ugen), false);
	KUNIT_EXPECT_FALSE(test, luf_batch_check_done(b, &c->l->done));
	luf_for_each_cpu(cpu, c->sel, c->nr)
		KUNIT_EXPECT_EQ_MSG(test, luf_kernel_runs(c->k, cpu), 8, "CPU %u", cpu);
}

static void lk_cpumask_glue(struct kunit *test)
{
	struct lk_ctx *c = test->priv;
	unsigned long *m = lk_mask(test);
	cpumask_var_t km;
	unsigned int i, cpu;

	KUNIT_ASSERT_TRUE(test, zalloc_cpumask_var(&km, GFP_KERNEL));
	luf_kernel_mask_from_cpumask(m, c->nr, cpu_online_mask);
	KUNIT_EXPECT_EQ(test, luf_cpumask_weight(m, c->nr), num_online_cpus());
	luf_kernel_mask_to_cpumask(km, c->sel, c->nr);
	KUNIT_EXPECT_EQ(test, cpumask_weight(km), lk_nr_sel);
	for (i = 0; i < lk_nr_sel; i++)
		KUNIT_EXPECT_TRUE_MSG(test, cpumask_test_cpu(lk_cpu[i], km), "CPU %u", lk_cpu[i]);
	luf_kernel_mask_from_cpumask(m, c->nr, km);
	KUNIT_EXPECT_TRUE(test, luf_cpumask_equal(m, c->sel, c->nr));
	KUNIT_EXPECT_EQ(test, luf_cpumask_set_cpu(m, c->nr, c->nr), -EINVAL);
	KUNIT_EXPECT_EQ(test, luf_kernel_ops.nr_cpu_ids(NULL), nr_cpu_ids);
	cpu = get_cpu();
	KUNIT_EXPECT_EQ(test, luf_kernel_ops.this_cpu(NULL), cpu);
	put_cpu();
	KUNIT_EXPECT_EQ(test, sizeof(struct luf_done_cpu) % LUF_CACHELINE, 0);
	KUNIT_EXPECT_EQ(test, luf_kernel_ops.flush(NULL, c->sel, c->nr, NULL), -EINVAL);
	free_cpumask_var(km);
}

static void lk_fold_diet_mark_real_done(struct kunit *test)
{
	struct lk_ctx *c = lk_inst(test, 0, 2);
	struct luf_batch *a = lk_batch(test), *b = lk_batch(test);
	struct luf_batch *u = lk_batch(test), *t = lk_batch(test);
	unsigned long runs[LK_MAX_CPUS], recv[LK_MAX_CPUS], *ma = lk_mask(test), sa, sb;
	unsigned int i, first = lk_cpu[0], n = lk_nr_sel;

	luf_cpumask_set_cpu(ma, c->nr, first);
	sa = luf_ugen_stamp(&c->l->ugen);
	luf_batch_add(a, ma, sa, false);
	sb = luf_ugen_stamp(&c->l->ugen);
	luf_batch_add(b, c->sel, sb, false);

	/* fold: union of CPUs, newer ugen, writable OR writable; commutative. */
	luf_batch_copy(u, a);
	luf_batch_fold(u, b);
	KUNIT_EXPECT_TRUE(test, luf_cpumask_equal(u->cpus, c->sel, c->nr));
	KUNIT_EXPECT_EQ(test, luf_batch_ugen(u), luf_ugen_newer(sa, sb));
	KUNIT_EXPECT_FALSE(test, luf_batch_writable(u));
	luf_batch_copy(t, b);
	luf_batch_fold(t, a);
	KUNIT_EXPECT_TRUE(test, luf_batch_equal(t, u));
	luf_batch_add(t, ma, sa, true);
	KUNIT_EXPECT_TRUE(test, luf_batch_writable(t));

	for (i = 0; i < n; i++) {
		runs[i] = luf_kernel_runs(c->k, lk_cpu[i]);
		recv[i] = luf_flush_received(c->l, lk_cpu[i]);
	}
	/* Flush the first CPU alone: a real IPI (or a local run) there only. */
	KUNIT_EXPECT_GE(test, luf_flush_batch(c->l, lk_self(), a), 0);
	for (i = 0; i < n; i++) {
		unsigned int cpu = lk_cpu[i], want = cpu == first;

		KUNIT_EXPECT_EQ_MSG(test, luf_kernel_runs(c->k, cpu) - runs[i], want, "CPU %u",
				    cpu);
		KUNIT_EXPECT_EQ_MSG(test, luf_flush_received(c->l, cpu) - recv[i], want, "CPU %u",
				    cpu);
		KUNIT_EXPECT_EQ_MSG(test, __luf_cpu_done(&c->l->done, cpu, sb), !!want, "CPU %u",
				    cpu);
	}
	/* Diet drops exactly the CPU that flushed, since the flush began after both stamps. */
	KUNIT_EXPECT_EQ(test, luf_batch_diet(u, &c->l->done), 1);
	KUNIT_EXPECT_FALSE(test, luf_cpumask_test_cpu(u->cpus, c->nr, first));
	KUNIT_EXPECT_EQ(test, luf_batch_empty(u), n == 1);
	KUNIT_EXPECT_GE(test, luf_flush_batch(c->l, lk_self(), u), 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ_MSG(test, luf_kernel_runs(c->k, lk_cpu[i]) - runs[i], 1, "CPU %u",
				    lk_cpu[i]);
		KUNIT_EXPECT_TRUE_MSG(test, __luf_cpu_done(&c->l->done, lk_cpu[i], sb), "CPU %u",
				      lk_cpu[i]);
	}
	KUNIT_EXPECT_TRUE(test, luf_batch_check_done(b, &c->l->done));
	/* Nothing left: diet empties @b and the flush is skipped, no IPI. */
	KUNIT_EXPECT_GE(test, luf_flush_batch(c->l, lk_self(), b), 0);
	KUNIT_EXPECT_TRUE(test, luf_batch_empty(b));
	KUNIT_EXPECT_EQ(test, lk_stat(c, LUF_STAT_FLUSH_SKIPPED), n == 1 ? 2 : 1);
	KUNIT_EXPECT_EQ(test, lk_stat(c, LUF_STAT_REMOTE_FLUSH) + lk_stat(c, LUF_STAT_LOCAL_FLUSH),
			n == 1 ? 1 : 2);
	/* Marking never lowers a counter (S4). */
	sa = luf_done_read(&c->l->done, first);
	__luf_done_mark_cpu(&c->l->done, first, sa - 5);
	KUNIT_EXPECT_EQ(test, luf_done_read(&c->l->done, first), sa);
}

/* A flush that cannot be sent (interrupts off) fails, marks nothing and changes nothing (S1). */
static void lk_flush_failure_keeps_pending(struct kunit *test)
{
	struct lk_ctx *c = lk_inst(test, 0, 2);
	struct luf_batch *b = lk_batch(test), *copy = lk_batch(test);
	unsigned long done[LK_MAX_CPUS];
	unsigned int i, self;
	int ret;

	luf_batch_add(b, c->sel, luf_ugen_stamp(&c->l->ugen), false);
	luf_batch_copy(copy, b);
	for (i = 0; i < lk_nr_sel; i++)
		done[i] = luf_done_read(&c->l->done, lk_cpu[i]);
	local_irq_disable();
	self = smp_processor_id();
	ret = luf_flush_batch(c->l, self, b);
	local_irq_enable();
	KUNIT_EXPECT_EQ(test, ret, -EDEADLK);
	KUNIT_EXPECT_TRUE(test, luf_batch_equal(b, copy));
	KUNIT_EXPECT_FALSE(test, luf_batch_check_done(b, &c->l->done));
	for (i = 0; i < lk_nr_sel; i++) {
		KUNIT_EXPECT_EQ_MSG(test, luf_done_read(&c->l->done, lk_cpu[i]), done[i],
				    "CPU %u marked after a failed flush", lk_cpu[i]);
		KUNIT_EXPECT_EQ(test, luf_kernel_runs(c->k, lk_cpu[i]), 0);
	}
	KUNIT_EXPECT_EQ(test, lk_stat(c, LUF_STAT_FLUSH_FAILED), 1);
	KUNIT_EXPECT_EQ(test, luf_flush_batch(c->l, lk_self(), b), 1);
	KUNIT_EXPECT_TRUE(test, luf_batch_check_done(copy, &c->l->done));
}

static void lk_local_flush_diet(struct kunit *test)
{
	struct lk_ctx *c = lk_inst(test, 0, 2);
	struct luf_batch *b = lk_batch(test), *later = lk_batch(test);
	unsigned long need, s;
	unsigned int cpu;

	cpu = get_cpu(); /* stay on one CPU: the local flush is of this one */
	need = luf_kernel_gen_stamp(c->k);
	s = luf_ugen_stamp(&c->l->ugen);
	luf_batch_add(b, c->sel, s, false);
	luf_cpumask_set_cpu(b->cpus, c->nr, cpu);
	KUNIT_EXPECT_EQ(test, luf_kernel_local_flush(c->k), 0);
	luf_batch_add(later, c->sel, luf_ugen_stamp(&c->l->ugen), false);
	KUNIT_EXPECT_TRUE(test, __luf_cpu_done(&c->l->done, cpu, s));
	KUNIT_EXPECT_TRUE(test, luf_kernel_covered(c->k, cpu, need));
	KUNIT_EXPECT_EQ(test, luf_batch_diet(b, &c->l->done), 1);
	KUNIT_EXPECT_FALSE(test, luf_cpumask_test_cpu(b->cpus, c->nr, cpu));
	KUNIT_EXPECT_EQ(test, luf_batch_diet(later, &c->l->done), 0);
	KUNIT_EXPECT_EQ(test, luf_local_flush_end(c->l, c->nr, s), -EINVAL);
	KUNIT_EXPECT_EQ(test, luf_local_flush_end(c->l, cpu, 0), -EINVAL);
	put_cpu();
	KUNIT_EXPECT_EQ(test, luf_kernel_ipis(c->k), 0);
}

/*
 * The check at reuse must be able to fail: make luf lie (mark done without
 * a flush, as LUF_MUTANT_MARK_BEFORE_FLUSH does when the flush then fails)
 * and show that the page luf hands out is caught.
 */
static void lk_checker_catches_early_reuse(struct kunit *test)
{
	struct lk_ctx *c = lk_inst(test, 0, 4);
	struct luf_freelist *fl = lk_freelist(test, 0);
	struct luf_pcpu *pc = lk_pcpu(test, lk_cpu[0], 64);
	struct lk_page *pg = lk_pages(test, 1, 0, NUMA_NO_NODE, 7);
	struct luf_folio *f = NULL;
	unsigned short key = 0;

	lk_page_unmapped(c, pg, c->sel);
	KUNIT_EXPECT_EQ(test, luf_unmap(pc, NULL, c->sel, LUF_PTE_ACCESSIBLE), 0);
	KUNIT_EXPECT_EQ(test, luf_pcpu_fold(pc, &key), 0);
	KUNIT_EXPECT_NE(test, key, 0);
	KUNIT_EXPECT_EQ(test, luf_free(fl, pc, &pg->lf, key), 0);
	KUNIT_EXPECT_EQ(test, luf_freelist_nr_pend(fl), 1);
	KUNIT_EXPECT_FALSE_MSG(test, lk_reuse_ok(c, pg), "the check passes a page nobody flushed");

	__luf_done_mark(&c->l->done, c->sel, c->nr, __luf_ugen_new(&c->l->ugen)); /* the lie */
	KUNIT_EXPECT_EQ(test, luf_alloc(fl, pc, 0, &f), 0);
	KUNIT_EXPECT_PTR_EQ(test, f, &pg->lf);
	KUNIT_EXPECT_FALSE_MSG(test, lk_reuse_ok(c, pg), "violation NOT detected");
	KUNIT_EXPECT_EQ(test, luf_kernel_ipis(c->k), 0);
	KUNIT_EXPECT_EQ(test, luf_kernel_ops.flush(c->k, c->sel, c->nr, NULL), 0);
	KUNIT_EXPECT_TRUE_MSG(test, lk_reuse_ok(c, pg), "the check fails after a real flush");
}

/*
 * The key table under concurrent folds, reads and flushes: each CPU a thread
 * folded in at stamp s is either still in the shared set at a ugen >= s, or
 * has done >= s (the invariant a lost update would break).
 */
static void lk_keytab_thread(struct lk_thread *t)
{
	struct lk_ctx *c = t->arg;
	unsigned int span = key_hi - key_lo + 1, i, cpu, nr = c->nr;
	struct luf_batch *b = t->b, *copy = t->copy;
	u32 seed = 0x9e3779b9u ^ ((t->cpu + 1) * 7919u);
	unsigned long *m = t->m;

	for (i = 0; i < LK_KT_ITERS; i++) {
		unsigned int key = key_lo + lk_rand(&seed) % span;
		unsigned int other = lk_cpu[lk_rand(&seed) % lk_nr_sel];
		unsigned short fresh;
		unsigned long s;
		int done;

		luf_cpumask_clear(m, nr);
		luf_cpumask_set_cpu(m, nr, t->cpu);
		luf_cpumask_set_cpu(m, nr, other);
		luf_batch_clear(b);
		s = luf_ugen_stamp(&c->l->ugen);
		luf_batch_add(b, m, s, false);
		LK_CHECK(t, __luf_keytab_fold(c->kt, key, b) == 0, "key %u", key);
		/* A consistent copy: never torn, never missing what this thread folded in. */
		__luf_shared_read(__luf_keytab_entry(c->kt, (unsigned short)key), copy);
		LK_CHECK(t, luf_batch_empty(copy) == luf_cpumask_empty(copy->cpus, nr), "key %u",
			 key);
		luf_for_each_cpu(cpu, m, nr) {
			LK_CHECK(t,
				 (luf_cpumask_test_cpu(copy->cpus, nr, cpu) &&
				  !luf_ugen_before(luf_batch_ugen(copy), s)) ||
				     __luf_cpu_done(&c->l->done, cpu, s),
				 "key %u lost CPU %u at stamp %lu", key, cpu, s);
		}
		fresh = __luf_keytab_new_key(c->kt);
		LK_CHECK(t, __luf_keytab_valid(c->kt, fresh), "new key %u", fresh);
		done = luf_keytab_check_done(c->kt, key_lo + lk_rand(&seed) % span);
		LK_CHECK(t, done == 0 || done == 1, "check_done %d", done);
		if ((i & 7) == 7) {
			LK_CHECK(t, luf_key_flush(t->pc, key) >= 0, "key %u", key);
			luf_for_each_cpu(cpu, m, nr)
				LK_CHECK(t, __luf_cpu_done(&c->l->done, cpu, s),
					 "CPU %u not done after flushing key %u", cpu, key);
			t->sum[0]++;
		}
		if ((i & 63) == 63)
			cond_resched();
	}
	t->sum[1] = i;
}

static void lk_keytab_concurrent_kthreads(struct kunit *test)
{
	static const struct lk_thread_res res = {.threshold = 1024};
	struct lk_ctx *c = lk_inst(test, 0, nr_keys);
	unsigned long sum[LK_NR_SUMS] = {0};

	lk_run_threads(test, lk_keytab_thread, c, &res, sum);
	kunit_info(test, "%u kthreads, keys %u..%u: %lu folds, %lu key flushes", lk_nr_sel, key_lo,
		   key_hi, sum[1], sum[0]);
	kunit_info(test, "%ld flushes sent, %ld skipped by diet, %ld CAS retries",
		   lk_stat(c, LUF_STAT_REMOTE_FLUSH) + lk_stat(c, LUF_STAT_LOCAL_FLUSH),
		   lk_stat(c, LUF_STAT_FLUSH_SKIPPED), lk_stat(c, LUF_STAT_CAS_RETRY));
}

/* Per-CPU batching: automatic folds at the threshold; writable removals flushed at the fold. */
static void lk_pcpu_thread(struct lk_thread *t)
{
	struct lk_ctx *c = t->arg;
	unsigned int nr = c->nr, round, j, cpu;
	struct luf_pcpu *pc = t->pc;
	unsigned long *m = t->m;

	luf_cpumask_set_cpu(m, nr, t->cpu);
	luf_cpumask_set_cpu(m, nr, lk_cpu[(t->idx + 1) % lk_nr_sel]);
	for (round = 0; round < LK_PCPU_ROUNDS; round++) {
		unsigned long need = luf_kernel_gen_stamp(c->k);
		unsigned long folds = luf_stats_read(c->l, pc->cpu, LUF_STAT_FOLD);
		unsigned long wflush = luf_stats_read(c->l, pc->cpu, LUF_STAT_WRITABLE_FLUSH);
		unsigned short key = 1;

		if ((round & 3) == 3) {
			/* A writable removal is never deferred (S3): flushed at the fold. */
			LK_CHECK(t, luf_pcpu_defer(pc, NULL, m, true) == 0, "");
			LK_CHECK(t, luf_pcpu_fold(pc, &key) == 0 && key == 0, "key %u", key);
			/* Counted only if sent: another thread's flush may have covered it. */
			wflush = luf_stats_read(c->l, pc->cpu, LUF_STAT_WRITABLE_FLUSH) - wflush;
			LK_CHECK(t, wflush <= 1, "%lu writable flushes", wflush);
		} else {
			/* 10 removals: one automatic fold at the threshold (8), one at the end. */
			for (j = 0; j < 10; j++)
				LK_CHECK(t, luf_pcpu_defer(pc, NULL, m, false) == 0, "");
			LK_CHECK(t, pc->nr_open == 2, "nr_open %u", pc->nr_open);
			LK_CHECK(t, luf_pcpu_fold(pc, &key) == 0 && key, "");
			LK_CHECK(t, luf_stats_read(c->l, pc->cpu, LUF_STAT_FOLD) == folds + 2,
				 "folds %lu", luf_stats_read(c->l, pc->cpu, LUF_STAT_FOLD) - folds);
			LK_CHECK(t, luf_keytab_check_done(c->kt, key) >= 0, "");
			LK_CHECK(t, luf_key_flush(pc, key) >= 0, "");
			t->sum[0]++;
		}
		luf_for_each_cpu(cpu, m, nr)
			LK_CHECK(t, luf_kernel_covered(c->k, cpu, need),
				 "round %u: CPU %u has not flushed since the removal", round, cpu);
		if ((round & 15) == 15)
			cond_resched();
	}
	t->sum[1] = round;
}

static void lk_pcpu_batching_bound_kthreads(struct kunit *test)
{
	static const struct lk_thread_res res = {.threshold = LK_PCPU_THRESHOLD};
	struct lk_ctx *c = lk_inst(test, 0, nr_keys);
	unsigned long sum[LK_NR_SUMS] = {0};

	lk_run_threads(test, lk_pcpu_thread, c, &res, sum);
	kunit_info(test, "%lu rounds, %lu key flushes, %lu IPIs", sum[1], sum[0],
		   luf_kernel_ipis(c->k));
	kunit_info(test, "%ld writable batches flushed at fold, %ld deferred",
		   lk_stat(c, LUF_STAT_WRITABLE_FLUSH), lk_stat(c, LUF_STAT_DEFERRED));
}

/* Concurrent defers into one domain, each followed by a settle that must cover it. */
static void lk_settle_thread(struct lk_thread *t)
{
	struct lk_ctx *c = t->arg;
	struct luf_pcpu *pc = t->pc;
	unsigned int i, cpu;
	unsigned short key;

	for (i = 0; i < LK_SETTLE_ITERS; i++) {
		unsigned long need = luf_kernel_gen_stamp(c->k);

		LK_CHECK(t, luf_pcpu_defer(pc, c->dom, c->sel, false) == 0, "");
		LK_CHECK(t, luf_domain_settle(c->l, t->cpu, c->dom, pc->scratch) >= 0, "");
		luf_for_each_cpu(cpu, c->sel, c->nr)
			LK_CHECK(t, luf_kernel_covered(c->k, cpu, need),
				 "settle returned before CPU %u flushed", cpu);
		LK_CHECK(t, luf_pcpu_fold(pc, &key) == 0, "");
		if ((i & 15) == 15)
			cond_resched();
	}
}

/* Settling a domain flushes what was deferred in it (S2: the 2017 mprotect race). */
static void lk_domain_settle(struct kunit *test)
{
	static const struct lk_thread_res res = {.threshold = 1024};
	struct lk_ctx *c = lk_inst(test, 0, 16);
	struct luf_pcpu *pc = lk_pcpu(test, lk_cpu[0], 1024);
	unsigned long need, runs;
	unsigned int cpu;

	luf_set_report(c->l, lk_report);
	need = luf_kernel_gen_stamp(c->k);
	KUNIT_EXPECT_EQ(test, luf_pcpu_defer(pc, c->dom, c->sel, false), 0);
	KUNIT_EXPECT_TRUE(test, luf_domain_pending(c->dom));
	KUNIT_EXPECT_EQ(test, luf_upgrade_check(pc, 0, c->dom), -EBUSY);
	KUNIT_EXPECT_EQ(test, atomic_read(&lk_reports), LK_REPORTS(1));
	KUNIT_EXPECT_EQ(test, luf_domain_settle(c->l, c->nr, c->dom, pc->scratch), -EINVAL);
	KUNIT_EXPECT_GE(test, luf_domain_settle(c->l, pc->cpu, c->dom, pc->scratch), 0);
	KUNIT_EXPECT_FALSE(test, luf_domain_pending(c->dom));
	KUNIT_EXPECT_EQ(test, luf_upgrade_check(pc, 0, c->dom), 0);
	luf_for_each_cpu(cpu, c->sel, c->nr)
		KUNIT_EXPECT_TRUE_MSG(test, luf_kernel_covered(c->k, cpu, need), "CPU %u", cpu);
	runs = luf_kernel_runs(c->k, lk_cpu[0]);
	KUNIT_EXPECT_GE(test, luf_domain_settle(c->l, pc->cpu, c->dom, pc->scratch), 0);
	KUNIT_EXPECT_EQ_MSG(test, luf_kernel_runs(c->k, lk_cpu[0]), runs,
			    "a settled domain flushed again");
	lk_run_threads(test, lk_settle_thread, c, &res, NULL);
}

static bool lk_abort_is_domain(enum luf_abort_cause cause)
{
	return cause == LUF_ABORT_WRITE_FAULT || cause == LUF_ABORT_PROT_UPGRADE ||
	       cause == LUF_ABORT_MOVE;
}

/* Abort through the key (a free folio about to be written) or the domain, pinned. */
static int lk_do_abort(struct lk_ctx *c, struct luf_pcpu *pc, unsigned short key,
		       enum luf_abort_cause cause, unsigned int *self)
{
	int ret;

	*self = get_cpu(); /* the sender of the IPIs, to count them exactly */
	if (lk_abort_is_domain(cause))
		ret = luf_abort_domain(pc, c->dom, cause);
	else
		ret = luf_abort_key(pc, key, cause);
	put_cpu();
	return ret;
}

/* A write-upgrade abort flushes before the write may happen (S2), once. */
static void lk_abort(struct kunit *test, enum luf_abort_cause cause)
{
	enum luf_stat_item item = (enum luf_stat_item)(LUF_STAT_ABORT + cause);
	struct lk_ctx *c = lk_inst(test, 0, 16);
	struct luf_freelist *fl = lk_freelist(test, 0);
	struct luf_pcpu *pc = lk_pcpu(test, lk_cpu[0], 1024);
	struct lk_page *pg = lk_pages(test, 1, order, NUMA_NO_NODE, 3);
	bool dom = lk_abort_is_domain(cause);
	struct luf_domain *d = dom ? c->dom : NULL;
	struct luf_folio *f = NULL;
	unsigned short key = 0;
	unsigned long ipis;
	unsigned int self;
	long before;

	luf_set_report(c->l, lk_report);
	lk_page_unmapped(c, pg, c->sel);
	KUNIT_EXPECT_EQ(test, luf_unmap(pc, d, c->sel, LUF_PTE_ACCESSIBLE), 0);
	KUNIT_EXPECT_EQ(test, luf_pcpu_fold(pc, &key), 0);
	KUNIT_EXPECT_NE(test, key, 0);
	KUNIT_EXPECT_EQ(test, luf_free(fl, pc, &pg->lf, key), 0);
	KUNIT_EXPECT_EQ_MSG(test, luf_upgrade_check(pc, dom ? 0 : key, d), -EBUSY,
			    "a write would be granted while a stale entry may exist");
	KUNIT_EXPECT_EQ(test, atomic_read(&lk_reports), LK_REPORTS(1));
	KUNIT_EXPECT_EQ(test, luf_alloc(fl, pc, 0, &f), -EAGAIN);
	KUNIT_EXPECT_EQ(test, luf_abort_key(pc, key, LUF_ABORT_NR_CAUSES), -EINVAL);

	before = lk_stat(c, item);
	ipis = luf_kernel_ipis(c->k);
	KUNIT_EXPECT_EQ(test, lk_do_abort(c, pc, key, cause, &self), 0);
	KUNIT_EXPECT_EQ(test, lk_stat(c, item), before + 1);
	KUNIT_EXPECT_EQ(test, luf_kernel_ipis(c->k) - ipis, lk_remote(c->sel, c->nr, self));
	KUNIT_EXPECT_TRUE_MSG(test, lk_reuse_ok(c, pg), "abort returned before the flush");
	KUNIT_EXPECT_EQ(test, luf_upgrade_check(pc, dom ? 0 : key, d), 0);
	KUNIT_EXPECT_EQ(test, luf_keytab_check_done(c->kt, key), 1);

	/* Nothing is owed any more: a second abort flushes nothing and counts nothing. */
	ipis = luf_kernel_ipis(c->k);
	KUNIT_EXPECT_EQ(test, lk_do_abort(c, pc, key, cause, &self), 0);
	KUNIT_EXPECT_EQ(test, lk_stat(c, item), before + 1);
	KUNIT_EXPECT_EQ(test, luf_kernel_ipis(c->k), ipis);

	/* The folio now comes back without a flush, intact; then the write happens. */
	KUNIT_EXPECT_EQ(test, luf_alloc(fl, pc, 0, &f), 0);
	KUNIT_EXPECT_PTR_EQ(test, f, &pg->lf);
	KUNIT_EXPECT_TRUE_MSG(test, lk_page_intact(pg), "folio bytes changed while free");
	lk_page_fill(pg, 0x6b6b6b6bu + cause);
}

#define LK_ABORT_CASE(name, cause)                      \
	static void lk_abort_##name(struct kunit *test) \
	{                                               \
		lk_abort(test, cause);                  \
	}
LK_ABORT_CASE(write_fault, LUF_ABORT_WRITE_FAULT)
LK_ABORT_CASE(prot_upgrade, LUF_ABORT_PROT_UPGRADE)
LK_ABORT_CASE(write_other, LUF_ABORT_WRITE_OTHER)
LK_ABORT_CASE(poison, LUF_ABORT_POISON)
LK_ABORT_CASE(init_on_free, LUF_ABORT_INIT_ON_FREE)
LK_ABORT_CASE(migrate_copy, LUF_ABORT_MIGRATE_COPY)
LK_ABORT_CASE(move, LUF_ABORT_MOVE)

/* luf_alloc() with the sender pinned, so its IPIs can be counted exactly. */
static int lk_alloc_pinned(struct luf_freelist *fl, struct luf_pcpu *pc, unsigned int flags,
			   struct luf_folio **f, unsigned int *self)
{
	int ret;

	*self = get_cpu();
	ret = luf_alloc(fl, pc, flags, f);
	put_cpu();
	return ret;
}

/* Real pages on the deferred free list: one flush for a whole pend list, intact pages (S1). */
static void lk_freelist_real_pages(struct kunit *test)
{
	struct lk_ctx *c = lk_inst(test, 0, nr_keys);
	struct luf_freelist *fl = lk_freelist(test, 0);
	struct luf_pcpu *pc = lk_pcpu(test, lk_cpu[0], LUF_PCPU_DEFAULT_THRESHOLD);
	struct lk_page *pg = lk_pages(test, LK_FL_PAGES, order, NUMA_NO_NODE, 11), *p;
	unsigned int i, self, bad = 0;
	struct luf_folio *f;
	unsigned long ipis;
	unsigned short key;
	int ret;

	luf_set_report(c->l, lk_report);
	/* Unmap all (read-only), one batch, one key; free all: all pend. */
	for (i = 0; i < LK_FL_PAGES; i++) {
		lk_page_unmapped(c, &pg[i], c->sel);
		KUNIT_EXPECT_EQ(test, luf_unmap(pc, NULL, c->sel, LUF_PTE_ACCESSIBLE), 0);
	}
	KUNIT_EXPECT_EQ(test, luf_pcpu_fold(pc, &key), 0);
	KUNIT_EXPECT_NE(test, key, 0);
	for (i = 0; i < LK_FL_PAGES; i++)
		KUNIT_EXPECT_EQ_MSG(test, luf_free(fl, pc, &pg[i].lf, key), 0, "page %u", i);
	KUNIT_EXPECT_EQ(test, luf_freelist_nr_pend(fl), LK_FL_PAGES);
	KUNIT_EXPECT_EQ(test, luf_freelist_nr_clean(fl), 0);

	/* Misuse changes nothing. */
	KUNIT_EXPECT_EQ(test, luf_free(fl, pc, &pg[0].lf, key), -EBUSY);
	KUNIT_EXPECT_EQ(test, luf_free(fl, pc, &pg[1].lf, nr_keys), -EINVAL);
	KUNIT_EXPECT_EQ(test, luf_alloc(fl, pc, 0x80, &f), -EINVAL);
	KUNIT_EXPECT_EQ(test, luf_freelist_nr_pend(fl), LK_FL_PAGES);
	KUNIT_EXPECT_EQ(test, atomic_read(&lk_reports), LK_REPORTS(1));
	KUNIT_EXPECT_EQ(test, luf_alloc(fl, pc, 0, &f), -EAGAIN);

	/* One flush for the whole list, then every page comes back intact. */
	ipis = luf_kernel_ipis(c->k);
	ret = lk_alloc_pinned(fl, pc, LUF_ALLOC_MAY_FLUSH, &f, &self);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, luf_kernel_ipis(c->k) - ipis, lk_remote(c->sel, c->nr, self));
	KUNIT_EXPECT_EQ(test, lk_stat(c, LUF_STAT_ALLOC_FLUSH), 1);
	for (i = 0; !ret && i < LK_FL_PAGES; i++) {
		p = lk_page_of(f);
		bad += !lk_reuse_ok(c, p) || !lk_page_intact(p);
		lk_page_fill(p, 0xa5a50000u + i);
		p->need = 0;
		if (i + 1 < LK_FL_PAGES)
			ret = luf_alloc(fl, pc, 0, &f);
	}
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ_MSG(test, bad, 0, "pages reused unflushed or changed");
	KUNIT_EXPECT_EQ(test, lk_stat(c, LUF_STAT_ALLOC_FLUSH), 1);
	KUNIT_EXPECT_EQ(test, luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f), -ENOMEM);

	/* Flushed before the free: the pages go straight to the clean list. */
	for (i = 0; i < LK_FL_PAGES; i++) {
		lk_page_unmapped(c, &pg[i], c->sel);
		KUNIT_EXPECT_EQ(test, luf_unmap(pc, NULL, c->sel, LUF_PTE_ACCESSIBLE), 0);
	}
	KUNIT_EXPECT_EQ(test, luf_pcpu_fold(pc, &key), 0);
	KUNIT_EXPECT_NE(test, key, 0);
	KUNIT_EXPECT_GE(test, luf_key_flush(pc, key), 0);
	for (i = 0; i < LK_FL_PAGES; i++)
		KUNIT_EXPECT_EQ(test, luf_free(fl, pc, &pg[i].lf, key), 0);
	KUNIT_EXPECT_EQ(test, luf_freelist_nr_clean(fl), LK_FL_PAGES);
	KUNIT_EXPECT_EQ(test, luf_freelist_nr_pend(fl), 0);
	ipis = luf_kernel_ipis(c->k);
	for (i = 0, bad = 0; i < LK_FL_PAGES && !luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f); i++)
		bad += !lk_reuse_ok(c, lk_page_of(f)) || !lk_page_intact(lk_page_of(f));
	KUNIT_EXPECT_EQ(test, i, LK_FL_PAGES);
	KUNIT_EXPECT_EQ_MSG(test, bad, 0, "clean pages reused unflushed or changed");
	KUNIT_EXPECT_EQ(test, luf_kernel_ipis(c->k), ipis);
}

/* The reserve (L1): callers that may flush never get it; others may. */
static void lk_freelist_reserve_no_flush(struct kunit *test)
{
	struct lk_ctx *c = lk_inst(test, 0, 16);
	struct luf_freelist *fl = lk_freelist(test, 2);
	struct luf_pcpu *pc = lk_pcpu(test, lk_cpu[0], LUF_PCPU_DEFAULT_THRESHOLD);
	struct lk_page *pg = lk_pages(test, 4, 0, NUMA_NO_NODE, 5);
	struct luf_folio *f = NULL;
	unsigned short key;
	unsigned int i;

	KUNIT_EXPECT_EQ(test, luf_free(fl, pc, &pg[0].lf, 0), 0);
	KUNIT_EXPECT_EQ(test, luf_free(fl, pc, &pg[1].lf, 0), 0);
	KUNIT_EXPECT_EQ_MSG(test, luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f), -ENOMEM,
			    "the reserve went to a caller that may flush");
	KUNIT_EXPECT_EQ_MSG(test, luf_alloc(fl, pc, 0, &f), 0,
			    "the reserve refused to a caller that cannot flush");
	KUNIT_EXPECT_EQ(test, luf_free(fl, pc, f, 0), 0);
	for (i = 2; i < 4; i++) {
		lk_page_unmapped(c, &pg[i], c->sel);
		KUNIT_EXPECT_EQ(test, luf_unmap(pc, NULL, c->sel, LUF_PTE_ACCESSIBLE), 0);
	}
	KUNIT_EXPECT_EQ(test, luf_pcpu_fold(pc, &key), 0);
	KUNIT_EXPECT_NE(test, key, 0);
	KUNIT_EXPECT_EQ(test, luf_free(fl, pc, &pg[2].lf, key), 0);
	KUNIT_EXPECT_EQ(test, luf_free(fl, pc, &pg[3].lf, key), 0);
	KUNIT_EXPECT_EQ(test, luf_alloc(fl, pc, 0, &f), 0);
	KUNIT_EXPECT_EQ(test, luf_alloc(fl, pc, 0, &f), 0);
	KUNIT_EXPECT_EQ_MSG(test, luf_alloc(fl, pc, 0, &f), -EAGAIN, "a pend page without a flush");
	KUNIT_EXPECT_EQ(test, luf_kernel_ipis(c->k), 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&c->k->flush_calls), 0);
	/* L1: while pend pages exist, a caller that may flush gets one. */
	KUNIT_ASSERT_EQ(test, luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f), 0);
	KUNIT_EXPECT_TRUE_MSG(test, lk_reuse_ok(c, lk_page_of(f)), "unsafe reuse");
	KUNIT_EXPECT_EQ(test, atomic_long_read(&c->k->flush_calls), 1);
	KUNIT_EXPECT_EQ(test, luf_freelist_nr_clean(fl), 1);
	KUNIT_EXPECT_EQ(test, luf_freelist_nr_pend(fl), 0);
}

enum { LK_S_FREES, LK_S_EVERY_FREE, LK_S_PER_BATCH, LK_S_VIOLATIONS, LK_S_CORRUPT, LK_S_ROUNDS };

struct lk_stress {
	struct lk_ctx *c;
	bool mixed; /* every fourth batch writable */
};

/*
 * One CPU's reclaim loop. Each round unmaps the batch of pages in use
 * (read-only: their flush may wait; in the mixed run every fourth batch is
 * writable and flushed at the fold), folds the batch into one key, frees
 * the pages, then allocates as many back, checking each one.
 */
static void lk_stress_thread(struct lk_thread *t)
{
	struct lk_stress *st = t->arg;
	struct lk_ctx *c = st->c;
	unsigned int round, i, n_inuse = 0, remote = lk_remote(c->sel, c->nr, t->cpu);
	struct luf_freelist *fl = t->fl;
	struct luf_pcpu *pc = t->pc;
	unsigned int *inuse = t->inuse;
	struct lk_page *pg = t->pg;

	for (i = 0; i < pool; i++) {
		if (i < batch)
			inuse[n_inuse++] = i;
		else
			luf_free(fl, pc, &pg[i].lf, 0);
	}
	for (round = 0; round < rounds; round++) {
		bool writable = st->mixed && (round & 3) == 3;
		unsigned int flags = LUF_PTE_ACCESSIBLE | (writable ? LUF_PTE_WRITABLE : 0);
		unsigned short key;

		for (i = 0; i < n_inuse; i++) {
			lk_page_unmapped(c, &pg[inuse[i]], c->sel);
			LK_CHECK(t, luf_unmap(pc, c->dom, c->sel, flags) == 0, "");
		}
		LK_CHECK(t, luf_pcpu_fold(pc, &key) == 0, "");
		t->sum[LK_S_PER_BATCH] += remote;
		for (i = 0; i < n_inuse; i++) {
			LK_CHECK(t, luf_free(fl, pc, &pg[inuse[i]].lf, key) == 0, "");
			t->sum[LK_S_EVERY_FREE] += remote;
			t->sum[LK_S_FREES]++;
		}
		for (n_inuse = 0; n_inuse < batch; n_inuse++) {
			struct luf_folio *f;
			struct lk_page *sp;
			int ret = luf_alloc(fl, pc, LUF_ALLOC_MAY_FLUSH, &f);

			if (ret) {
				LK_CHECK(t, false, "round %u: alloc %d", round, ret);
				return;
			}
			sp = lk_page_of(f);
			if (!lk_reuse_ok(c, sp)) {
				t->sum[LK_S_VIOLATIONS]++;
				LK_CHECK(t, false,
					 "round %u: page reused while a CPU has not flushed (S1)",
					 round);
			}
			if (!lk_page_intact(sp)) {
				t->sum[LK_S_CORRUPT]++;
				LK_CHECK(t, false, "round %u: free page changed", round);
			}
			lk_page_fill(sp, (t->cpu << 24) ^ (round << 8) ^ n_inuse);
			sp->need = 0;
			inuse[n_inuse] = (unsigned int)(sp - pg);
		}
		t->sum[LK_S_ROUNDS]++;
		cond_resched();
	}
}

/* The stress phase: luf's IPIs against flushing at every free and once per reclaim batch. */
static void lk_stress(struct kunit *test, bool mixed)
{
	static const struct lk_thread_res res = {.threshold = LUF_PCPU_DEFAULT_THRESHOLD,
						 .freelist = true,
						 .pages = true,
						 .reserve = LK_STRESS_RESERVE};
	struct lk_stress st = {lk_inst(test, 0, nr_keys), mixed};
	unsigned long sum[LK_NR_SUMS] = {0}, ipis, every, per_batch;

	lk_run_threads(test, lk_stress_thread, &st, &res, sum);
	ipis = luf_kernel_ipis(st.c->k);
	every = sum[LK_S_EVERY_FREE];
	per_batch = sum[LK_S_PER_BATCH];
	kunit_info(test, "%u CPUs, %lu rounds, %lu frees: IPIs luf=%lu", lk_nr_sel,
		   sum[LK_S_ROUNDS], sum[LK_S_FREES], ipis);
	kunit_info(test, "IPIs flush-every-free=%lu per-batch=%lu", every, per_batch);
	kunit_info(test,
		   "violations=%lu corrupt=%lu flush_calls=%ld diet_skips=%ld alloc_flushes=%ld",
		   sum[LK_S_VIOLATIONS], sum[LK_S_CORRUPT], atomic_long_read(&st.c->k->flush_calls),
		   lk_stat(st.c, LUF_STAT_FLUSH_SKIPPED), lk_stat(st.c, LUF_STAT_ALLOC_FLUSH));
	KUNIT_EXPECT_EQ(test, sum[LK_S_VIOLATIONS], 0);
	KUNIT_EXPECT_EQ(test, sum[LK_S_CORRUPT], 0);
	KUNIT_EXPECT_EQ(test, sum[LK_S_ROUNDS], (unsigned long)rounds * lk_nr_sel);
	if (lk_nr_sel < 2)
		kunit_info(test, "one CPU: no IPIs to count");
	else if (!mixed)
		KUNIT_EXPECT_LE_MSG(test, ipis * 10, every, "luf sent more than 10%% of %lu",
				    every);
}

static void lk_stress_readonly_reclaim(struct kunit *test)
{
	lk_stress(test, false);
}

static void lk_stress_mixed_writable(struct kunit *test)
{
	lk_stress(test, true);
}

/* clang-format off */
static struct kunit_case lk_cases[] = {
	KUNIT_CASE(lk_ugen_wrap),
	KUNIT_CASE(lk_cpumask_glue),
	KUNIT_CASE(lk_fold_diet_mark_real_done),
	KUNIT_CASE(lk_flush_failure_keeps_pending),
	KUNIT_CASE(lk_local_flush_diet),
	KUNIT_CASE(lk_checker_catches_early_reuse),
	KUNIT_CASE(lk_keytab_concurrent_kthreads),
	KUNIT_CASE(lk_pcpu_batching_bound_kthreads),
	KUNIT_CASE(lk_domain_settle),
	KUNIT_CASE(lk_abort_write_fault),
	KUNIT_CASE(lk_abort_prot_upgrade),
	KUNIT_CASE(lk_abort_write_other),
	KUNIT_CASE(lk_abort_poison),
	KUNIT_CASE(lk_abort_init_on_free),
	KUNIT_CASE(lk_abort_migrate_copy),
	KUNIT_CASE(lk_abort_move),
	KUNIT_CASE(lk_freelist_real_pages),
	KUNIT_CASE(lk_freelist_reserve_no_flush),
	KUNIT_CASE(lk_stress_readonly_reclaim),
	KUNIT_CASE(lk_stress_mixed_writable),
	{}
};

static struct kunit_suite lk_suite = {
	.name = "luf_core",
	.suite_init = lk_suite_init,
	.init = lk_init,
	.exit = lk_exit,
	.test_cases = lk_cases,
};

/* clang-format on */
kunit_test_suite(lk_suite);

MODULE_DESCRIPTION("KUnit cases of luf's core on real IPIs and pages");
MODULE_LICENSE("Dual MIT/GPL");
