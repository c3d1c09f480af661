// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_st_main.c - luf in a real kernel: the module, its parameters, the
 * KTAP report and the harness (instances, kthreads, pages, the checker).
 *
 * Loading the module runs every test once and prints KTAP version 1 on the
 * console; the module then stays loaded until rmmod. Bad parameters make
 * the load fail with -EINVAL and one pr_warn() line, before anything is
 * allocated. The tests themselves are in luf_st_core.c, luf_st_conc.c and
 * luf_st_pages.c.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/gfp.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/cpumask.h>

#include "luf_selftest.h"

static int cpus[ST_MAX_CPUS];
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
MODULE_PARM_DESC(key_lo, "first key of the concurrent key-table test, >= 1 (default 1)");

static unsigned int key_hi = 16;
module_param(key_hi, uint, 0444);
MODULE_PARM_DESC(key_hi,
		 "last key of the concurrent key-table test, key_lo..nr_keys-1 (default 16)");

static unsigned int batch = 16;
module_param(batch, uint, 0444);
MODULE_PARM_DESC(batch, "pages per reclaim batch in the stress phase, 1..256 (default 16)");

static unsigned int pool = 128;
module_param(pool, uint, 0444);
MODULE_PARM_DESC(pool, "pages per CPU in the stress phase, 2*batch..4096 (default 128)");

static unsigned int rounds = 1000;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "reclaim rounds per CPU in the stress phase, 1..100000 (default 1000)");

static struct st_params st_params;

/* Reject a parameter: one pr_warn line, -EINVAL, nothing allocated. */
static __printf(1, 2) int st_bad_param(const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_warn("luf_selftest: invalid parameter %pV\n", &vaf);
	va_end(args);
	return -EINVAL;
}

static int st_validate(struct st_params *p)
{
	unsigned int i, j, cpu;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < nr_cpus_arg; i++) {
		if (cpus[i] < 0 || cpus[i] >= (int)nr_cpu_ids)
			return st_bad_param("cpus: CPU %d does not exist (nr_cpu_ids %u)", cpus[i],
					    nr_cpu_ids);
		if (!cpu_online(cpus[i]))
			return st_bad_param("cpus: CPU %d is offline", cpus[i]);
		for (j = 0; j < i; j++)
			if (cpus[j] == cpus[i])
				return st_bad_param("cpus: CPU %d listed twice", cpus[i]);
		p->cpus[p->nr_cpus++] = (unsigned int)cpus[i];
	}
	if (!nr_cpus_arg) {
		for_each_online_cpu(cpu)
		{
			if (p->nr_cpus == ST_MAX_CPUS)
				break;
			p->cpus[p->nr_cpus++] = cpu;
		}
	}
	if (order > ST_MAX_ORDER)
		return st_bad_param("order=%u: must be 0..%u", order, ST_MAX_ORDER);
	if (nr_keys < 2 || nr_keys > LUF_KEYTAB_MAX_KEYS)
		return st_bad_param("nr_keys=%u: must be 2..%u", nr_keys, LUF_KEYTAB_MAX_KEYS);
	if (!key_lo || key_lo > key_hi || key_hi >= nr_keys)
		return st_bad_param("key_lo=%u key_hi=%u: need 1 <= key_lo <= key_hi < nr_keys=%u",
				    key_lo, key_hi, nr_keys);
	if (!batch || batch > 256)
		return st_bad_param("batch=%u: must be 1..256", batch);
	if (pool < 2 * batch || pool > 4096)
		return st_bad_param("pool=%u: must be 2*batch (%u)..4096", pool, 2 * batch);
	if (!rounds || rounds > 100000)
		return st_bad_param("rounds=%u: must be 1..100000", rounds);
	p->order = order;
	p->nr_keys = nr_keys;
	p->key_lo = key_lo;
	p->key_hi = key_hi;
	p->batch = batch;
	p->pool = pool;
	p->rounds = rounds;
	return 0;
}

void st_fail(struct st_rec *r, int line, const char *fmt, ...)
{
	va_list args;
	int n;

	if (r->fails++)
		return;
	n = scnprintf(r->msg, sizeof(r->msg), "line %d: ", line);
	va_start(args, fmt);
	vscnprintf(r->msg + n, sizeof(r->msg) - n, fmt, args);
	va_end(args);
}

atomic_t st_reports = ATOMIC_INIT(0);

void st_report_capture(const char *what, const void *obj, const char *file, int line)
{
	atomic_inc(&st_reports);
}

unsigned long *st_mask_new(unsigned int nr_cpus)
{
	return kcalloc(LUF_CPUMASK_WORDS(nr_cpus), sizeof(unsigned long), GFP_KERNEL);
}

unsigned int st_remote(const unsigned long *mask, unsigned int nr_cpus, unsigned int self)
{
	return luf_cpumask_weight(mask, nr_cpus) - luf_cpumask_test_cpu(mask, nr_cpus, self);
}

struct luf_batch *st_batch_new(unsigned int nr_cpus)
{
	struct luf_batch *b = kzalloc(luf_batch_size(nr_cpus), GFP_KERNEL);

	if (b && luf_batch_init(b, nr_cpus)) {
		kfree(b);
		b = NULL;
	}
	return b;
}

int st_inst_create(struct st_inst *in, unsigned long start, unsigned int keys)
{
	unsigned int nr;

	memset(in, 0, sizeof(*in));
	in->k = luf_kernel_create(start);
	if (!in->k)
		return -ENOMEM;
	in->l = &in->k->luf;
	nr = in->l->nr_cpus;
	in->kt = luf_kernel_zalloc(luf_keytab_size(keys, nr), &in->kt_raw);
	in->dom = kzalloc(luf_domain_size(nr), GFP_KERNEL);
	if (!in->kt || !in->dom || luf_keytab_init(in->kt, in->l, keys) ||
	    luf_domain_init(in->dom, in->l)) {
		st_inst_destroy(in);
		return -ENOMEM;
	}
	return 0;
}

void st_inst_destroy(struct st_inst *in)
{
	kfree(in->dom);
	kvfree(in->kt_raw);
	luf_kernel_destroy(in->k);
	memset(in, 0, sizeof(*in));
}

struct luf_pcpu *st_pcpu_new(struct st_inst *in, unsigned int cpu, unsigned int threshold,
			     void **raw)
{
	struct luf_pcpu *pc = luf_kernel_zalloc(luf_pcpu_size(in->l->nr_cpus), raw);

	if (pc && luf_pcpu_init(pc, in->l, in->kt, cpu, threshold)) {
		kvfree(*raw);
		*raw = NULL;
		pc = NULL;
	}
	return pc;
}

/* Kthreads: created bound, released together by run->go, joined by their done. */
static int st_thread_main(void *data)
{
	struct st_thread *t = data;

	wait_for_completion(&t->run->go);
	if (t->run->fn)
		t->run->fn(t);
	complete(&t->done);
	return 0;
}

int st_run_threads(const struct st_ctx *c, st_thread_fn fn, void *arg, struct st_rec *r,
		   unsigned long sum[ST_NR_SUMS])
{
	unsigned long deadline = jiffies + 600 * HZ;
	unsigned int i, j, started = 0;
	struct st_run run;
	int ret = 0;

	run.fn = fn;
	run.arg = arg;
	run.nr = c->p->nr_cpus;
	init_completion(&run.go);
	run.t = kcalloc(run.nr, sizeof(*run.t), GFP_KERNEL);
	if (!run.t)
		return -ENOMEM;
	for (i = 0; i < run.nr; i++) {
		struct st_thread *t = &run.t[i];
		struct task_struct *task;

		t->run = &run;
		t->cpu = c->p->cpus[i];
		t->idx = i;
		init_completion(&t->done);
		task = kthread_create_on_cpu(st_thread_main, t, t->cpu, "luf_st/%u");
		if (IS_ERR(task)) {
			ret = PTR_ERR(task);
			run.fn = NULL; /* release the threads already made without work */
			break;
		}
		get_task_struct(task);
		t->task = task;
		wake_up_process(task);
		started++;
	}
	complete_all(&run.go);
	for (i = 0; i < started; i++) {
		struct st_thread *t = &run.t[i];

		while (!wait_for_completion_timeout(&t->done, HZ)) {
			if (time_after(jiffies, deadline)) {
				st_fail(r, __LINE__, "CPU %u: thread still running after 600 s",
					t->cpu);
				deadline = jiffies + 3600 * HZ;
			}
		}
		kthread_stop(t->task);
		put_task_struct(t->task);
		if (t->rec.fails) {
			unsigned int f = r->fails;

			st_fail(r, __LINE__, "CPU %u: %s", t->cpu, t->rec.msg);
			r->fails = f + t->rec.fails;
		}
		for (j = 0; j < ST_NR_SUMS && sum; j++)
			sum[j] += t->sum[j];
	}
	kfree(run.t);
	if (ret)
		st_fail(r, __LINE__, "kthread_create_on_cpu: %d", ret);
	return ret;
}

/* Pages: the pattern covers every word, so any write by luf or a stale user shows. */
void st_page_fill(struct st_page *p, unsigned int ord, u32 pattern)
{
	u32 *w = page_address(p->page);
	size_t i, n = (PAGE_SIZE << ord) / sizeof(u32);

	for (i = 0; i < n; i++)
		w[i] = pattern ^ (u32)i;
	p->pattern = pattern;
}

bool st_page_intact(const struct st_page *p, unsigned int ord)
{
	const u32 *w = page_address(p->page);
	size_t i, n = (PAGE_SIZE << ord) / sizeof(u32);

	for (i = 0; i < n; i++)
		if (w[i] != (p->pattern ^ (u32)i))
			return false;
	return true;
}

int st_pages_alloc(struct st_page *pg, unsigned int n, unsigned int ord, u32 seed)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(&pg[i], 0, sizeof(pg[i]));
		pg[i].page = alloc_pages(GFP_KERNEL, ord);
		if (!pg[i].page) {
			st_pages_free(pg, i, ord);
			return -ENOMEM;
		}
		st_page_fill(&pg[i], ord, seed * 2654435761u + i);
	}
	return 0;
}

void st_pages_free(struct st_page *pg, unsigned int n, unsigned int ord)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (pg[i].page)
			__free_pages(pg[i].page, ord);
		pg[i].page = NULL;
	}
}

/*
 * Record the unmap of @p from the CPUs of @mask. Call after the (simulated)
 * PTE clear and before luf_unmap(): both stamps are then no newer than the
 * one luf takes, so a flush luf may count for the page also counts here.
 */
void st_page_unmapped(struct luf_kernel *k, struct st_page *p, const unsigned long *mask)
{
	p->mask = mask;
	p->need = luf_kernel_gen_stamp(k);
	p->ugen = luf_ugen_stamp(&k->luf.ugen);
}

/*
 * The safety check at reuse (S1): every CPU that may cache @p has done >=
 * its ugen in luf's counters, and has run a real flush that started after
 * its unmap in the backend's own count.
 */
bool st_page_reuse_ok(struct luf_kernel *k, const struct st_page *p, unsigned int nr_cpus)
{
	unsigned int cpu;

	if (!p->need)
		return true;
	luf_for_each_cpu (cpu, p->mask, nr_cpus) {
		if (p->ugen && !__luf_cpu_done(&k->luf.done, cpu, p->ugen))
			return false;
		if (!luf_kernel_covered(k, cpu, p->need))
			return false;
	}
	return true;
}

struct st_test {
	const char *name;
	void (*fn)(struct st_ctx *c, unsigned long arg, struct st_rec *r);
	unsigned long arg;
};

static const struct st_test st_tests[] = {
    {"ugen_wrap", st_ugen_wrap, 0},
    {"cpumask_glue", st_cpumask_glue, 0},
    {"fold_diet_mark_real_done", st_fold_diet_mark, 0},
    {"flush_failure_keeps_pending", st_flush_failure, 0},
    {"local_flush_diet", st_local_flush, 0},
    {"checker_catches_early_reuse", st_checker_catches, 0},
    {"keytab_concurrent_kthreads", st_keytab_conc, 0},
    {"pcpu_batching_bound_kthreads", st_pcpu_batching, 0},
    {"domain_settle", st_domain_settle, 0},
    {"abort_write_fault", st_abort, LUF_ABORT_WRITE_FAULT},
    {"abort_prot_upgrade", st_abort, LUF_ABORT_PROT_UPGRADE},
    {"abort_write_other", st_abort, LUF_ABORT_WRITE_OTHER},
    {"abort_poison", st_abort, LUF_ABORT_POISON},
    {"abort_init_on_free", st_abort, LUF_ABORT_INIT_ON_FREE},
    {"abort_migrate_copy", st_abort, LUF_ABORT_MIGRATE_COPY},
    {"abort_move", st_abort, LUF_ABORT_MOVE},
    {"freelist_real_pages", st_freelist_pages, 0},
    {"freelist_reserve_no_flush", st_freelist_reserve, 0},
    {"stress_readonly_reclaim", st_stress, ST_STRESS_READONLY},
    {"stress_mixed_writable", st_stress, ST_STRESS_MIXED},
};

#if defined(LUF_DEBUG)
#define ST_DEBUG_STR " LUF_DEBUG"
#else
#define ST_DEBUG_STR ""
#endif

static void st_print_params(const struct st_params *p)
{
	char list[128];
	unsigned int i;
	int n = 0;

	list[0] = '\0';
	for (i = 0; i < p->nr_cpus; i++)
		n += scnprintf(list + n, sizeof(list) - n, "%s%u", i ? "," : "", p->cpus[i]);
	pr_info("# luf_selftest: luf %s, cpus=%s order=%u nr_keys=%u keys=%u..%u batch=%u pool=%u "
		"rounds=%u real_flush=%d%s\n",
		LUF_VERSION_STRING, list, p->order, p->nr_keys, p->key_lo, p->key_hi, p->batch,
		p->pool, p->rounds, LUF_KERNEL_REAL_FLUSH, ST_DEBUG_STR);
}

static int st_run_all(const struct st_params *p)
{
	unsigned int i, pass = 0, fail = 0, skip = 0, nr = nr_cpu_ids;
	u64 t0 = ktime_get_ns();
	struct st_rec *r;
	struct st_ctx c;

	c.p = p;
	c.nr = nr;
	c.sel = st_mask_new(nr);
	r = kmalloc(sizeof(*r), GFP_KERNEL);
	if (!c.sel || !r) {
		kfree(c.sel);
		kfree(r);
		return -ENOMEM;
	}
	for (i = 0; i < p->nr_cpus; i++)
		luf_cpumask_set_cpu(c.sel, nr, p->cpus[i]);

	pr_info("KTAP version 1\n");
	pr_info("1..%zu\n", ARRAY_SIZE(st_tests));
	st_print_params(p);
	for (i = 0; i < ARRAY_SIZE(st_tests); i++) {
		u64 t = ktime_get_ns();

		memset(r, 0, sizeof(*r));
		st_tests[i].fn(&c, st_tests[i].arg, r);
		t = ktime_get_ns() - t;
		if (r->info[0])
			pr_info("# %s: %s\n", st_tests[i].name, r->info);
		pr_info("# %s: %llu ms\n", st_tests[i].name, t / NSEC_PER_MSEC);
		if (r->fails)
			pr_info("# %s: %u failure(s), first: %s\n", st_tests[i].name, r->fails,
				r->msg);
		if (r->skip && !r->fails) {
			pr_info("ok %u %s # SKIP %s\n", i + 1, st_tests[i].name, r->skip);
			skip++;
		} else {
			pr_info("%sok %u %s\n", r->fails ? "not " : "", i + 1, st_tests[i].name);
			if (r->fails)
				fail++;
			else
				pass++;
		}
	}
	pr_info("# luf_selftest: pass:%u fail:%u skip:%u total:%zu in %llu ms\n", pass, fail, skip,
		ARRAY_SIZE(st_tests), (ktime_get_ns() - t0) / NSEC_PER_MSEC);
	kfree(r);
	kfree(c.sel);
	return 0;
}

static int __init luf_selftest_init(void)
{
	int ret = st_validate(&st_params);

	if (ret)
		return ret;
	return st_run_all(&st_params);
}

static void __exit luf_selftest_exit(void)
{
}

module_init(luf_selftest_init);
module_exit(luf_selftest_exit);
MODULE_DESCRIPTION("luf (Lazy Unmap Flush primitives) self-test in a real kernel, KTAP output");
MODULE_LICENSE("Dual MIT/GPL");
