/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * kunit/test.h for a kernel built without KUnit (Debian's stock kernel has
 * CONFIG_KUNIT unset): the part of KUnit's API that lib/kernel/luf_kunit.c
 * uses, so that the out-of-tree module runs the same case file as the
 * patched kernel's KUnit. Kbuild puts this directory before the kernel's
 * own headers (NOSTDINC_FLAGS) for the out-of-tree build only.
 *
 * kunit_test_suite() becomes the module's init: it runs the suite once
 * and prints the results as KUnit does (KTAP version 1, the suite as a
 * subtest, "# SUITE: pass:P fail:F skip:S total:T"), which the kernel's
 * kunit.py parse reads. A suite_init that fails makes the load fail with
 * its error, before any case runs. Each case runs in a kthread of its own:
 * a failed assertion or kunit_skip() ends that thread, as in KUnit.
 * Memory from kunit_kzalloc() and kunit_kcalloc() is freed after the
 * case's exit. Only one file of a module may include this header.
 */
#ifndef LUF_KUNIT_SHIM_TEST_H
#define LUF_KUNIT_SHIM_TEST_H

#include <linux/completion.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

enum kunit_status { KUNIT_SUCCESS, KUNIT_FAILURE, KUNIT_SKIPPED };

struct kunit {
	void *priv;
	const char *name;
	enum kunit_status status;
	char status_comment[256];
	struct list_head resources; /* kunit_kzalloc()'s blocks */
	spinlock_t lock;
	struct completion done; /* the case's kthread has ended */
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
};

struct kunit_suite {
	const char name[256];
	int (*suite_init)(struct kunit_suite *suite);
	void (*suite_exit)(struct kunit_suite *suite);
	int (*init)(struct kunit *test);
	void (*exit)(struct kunit *test);
	struct kunit_case *test_cases;
};

#define KUNIT_CASE(fn)                      \
	{                                   \
		.run_case = fn, .name = #fn \
	}

/* Ends the running case's kthread: after a failed assertion or a skip. */
static inline void __noreturn __kunit_shim_throw(struct kunit *test)
{
	kthread_complete_and_exit(&test->done, 0);
}

static inline __printf(2, 3) void __kunit_shim_skip(struct kunit *test, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vscnprintf(test->status_comment, sizeof(test->status_comment), fmt, args);
	va_end(args);
	if (test->status != KUNIT_FAILURE)
		test->status = KUNIT_SKIPPED;
}

#define kunit_skip(test, fmt, ...)                             \
	do {                                                   \
		__kunit_shim_skip((test), fmt, ##__VA_ARGS__); \
		__kunit_shim_throw(test);                      \
	} while (0)

#define kunit_info(test, fmt, ...) pr_info("    # %s: " fmt "\n", (test)->name, ##__VA_ARGS__)

/* A failed check: the case fails; an assertion also ends it. */
static inline __printf(6, 7) void __kunit_shim_fail(struct kunit *test, bool assert,
						    const char *file, int line, const char *what,
						    const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	test->status = KUNIT_FAILURE;
	pr_info("    # %s: %s FAILED at %s:%d\n", test->name, assert ? "ASSERTION" : "EXPECTATION",
		file, line);
	pr_info("    %s\n", what);
	if (fmt && *fmt) {
		va_start(args, fmt);
		vaf.fmt = fmt;
		vaf.va = &args;
		pr_info("    %pV\n", &vaf);
		va_end(args);
	}
}

#define __KUNIT_SHIM_CHECK(test, assert, ok, what, fmt, ...)                               \
	do {                                                                               \
		if (!(ok)) {                                                               \
			__kunit_shim_fail((test), (assert), __FILE__, __LINE__, what, fmt, \
					  ##__VA_ARGS__);                                  \
			if (assert)                                                        \
				__kunit_shim_throw(test);                                  \
		}                                                                          \
	} while (0)

/* Integers, compared as KUnit does (each side evaluated once), values shown. */
#define __KUNIT_SHIM_BINARY(test, assert, l, op, r, fmt, ...)                                      \
	do {                                                                                       \
		typeof(l) __l = (l);                                                               \
		typeof(r) __r = (r);                                                               \
		char __what[160];                                                                  \
		if (!(__l op __r)) {                                                               \
			scnprintf(__what, sizeof(__what), "Expected %s %s %s, but %lld, %lld", #l, \
				  #op, #r, (long long)__l, (long long)__r);                        \
			__KUNIT_SHIM_CHECK(test, assert, false, __what, fmt, ##__VA_ARGS__);       \
		}                                                                                  \
	} while (0)

#define __KUNIT_SHIM_PTR(test, assert, l, op, r, fmt, ...)                                     \
	do {                                                                                   \
		const void *__l = (l), *__r = (r);                                             \
		char __what[160];                                                              \
		if (!(__l op __r)) {                                                           \
			scnprintf(__what, sizeof(__what), "Expected %s %s %s, but %p, %p", #l, \
				  #op, #r, __l, __r);                                          \
			__KUNIT_SHIM_CHECK(test, assert, false, __what, fmt, ##__VA_ARGS__);   \
		}                                                                              \
	} while (0)

#define KUNIT_FAIL(test, fmt, ...) __KUNIT_SHIM_CHECK(test, false, false, "", fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_TRUE_MSG(test, c, fmt, ...) \
	__KUNIT_SHIM_CHECK(test, false, c, "Expected " #c " to be true", fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_FALSE_MSG(test, c, fmt, ...) \
	__KUNIT_SHIM_CHECK(test, false, !(c), "Expected " #c " to be false", fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_TRUE_MSG(test, c, fmt, ...) \
	__KUNIT_SHIM_CHECK(test, true, c, "Expected " #c " to be true", fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_FALSE_MSG(test, c, fmt, ...) \
	__KUNIT_SHIM_CHECK(test, true, !(c), "Expected " #c " to be false", fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_TRUE(test, c) KUNIT_EXPECT_TRUE_MSG(test, c, NULL)
#define KUNIT_EXPECT_FALSE(test, c) KUNIT_EXPECT_FALSE_MSG(test, c, NULL)
#define KUNIT_ASSERT_TRUE(test, c) KUNIT_ASSERT_TRUE_MSG(test, c, NULL)
#define KUNIT_ASSERT_FALSE(test, c) KUNIT_ASSERT_FALSE_MSG(test, c, NULL)

#define KUNIT_EXPECT_EQ_MSG(test, l, r, fmt, ...) \
	__KUNIT_SHIM_BINARY(test, false, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NE_MSG(test, l, r, fmt, ...) \
	__KUNIT_SHIM_BINARY(test, false, l, !=, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_LE_MSG(test, l, r, fmt, ...) \
	__KUNIT_SHIM_BINARY(test, false, l, <=, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_GE_MSG(test, l, r, fmt, ...) \
	__KUNIT_SHIM_BINARY(test, false, l, >=, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_EQ_MSG(test, l, r, fmt, ...) \
	__KUNIT_SHIM_BINARY(test, true, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_EQ(test, l, r) KUNIT_EXPECT_EQ_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_NE(test, l, r) KUNIT_EXPECT_NE_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_LE(test, l, r) KUNIT_EXPECT_LE_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_GE(test, l, r) KUNIT_EXPECT_GE_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_LT(test, l, r) __KUNIT_SHIM_BINARY(test, false, l, <, r, NULL)
#define KUNIT_EXPECT_GT(test, l, r) __KUNIT_SHIM_BINARY(test, false, l, >, r, NULL)
#define KUNIT_ASSERT_EQ(test, l, r) KUNIT_ASSERT_EQ_MSG(test, l, r, NULL)
#define KUNIT_ASSERT_NE(test, l, r) __KUNIT_SHIM_BINARY(test, true, l, !=, r, NULL)
#define KUNIT_ASSERT_LT(test, l, r) __KUNIT_SHIM_BINARY(test, true, l, <, r, NULL)
#define KUNIT_ASSERT_GE(test, l, r) __KUNIT_SHIM_BINARY(test, true, l, >=, r, NULL)

#define KUNIT_EXPECT_PTR_EQ(test, l, r) __KUNIT_SHIM_PTR(test, false, l, ==, r, NULL)
#define KUNIT_EXPECT_PTR_NE(test, l, r) __KUNIT_SHIM_PTR(test, false, l, !=, r, NULL)
#define KUNIT_EXPECT_NULL(test, p) __KUNIT_SHIM_PTR(test, false, p, ==, NULL, NULL)
#define KUNIT_EXPECT_NOT_NULL(test, p) __KUNIT_SHIM_PTR(test, false, p, !=, NULL, NULL)
#define KUNIT_ASSERT_NOT_NULL(test, p) __KUNIT_SHIM_PTR(test, true, p, !=, NULL, NULL)

/* Memory freed when the case ends. */
struct __kunit_shim_block {
	struct list_head node;
	unsigned long data[];
};

static inline void *kunit_kzalloc(struct kunit *test, size_t size, gfp_t gfp)
{
	struct __kunit_shim_block *b = kzalloc(struct_size(b, data, 0) + size, gfp);

	if (!b)
		return NULL;
	spin_lock(&test->lock);
	list_add(&b->node, &test->resources);
	spin_unlock(&test->lock);
	return b->data;
}

static inline void *kunit_kcalloc(struct kunit *test, size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	if (check_mul_overflow(n, size, &bytes))
		return NULL;
	return kunit_kzalloc(test, bytes, gfp);
}

static inline void __kunit_shim_free_all(struct kunit *test)
{
	struct __kunit_shim_block *b, *n;

	list_for_each_entry_safe(b, n, &test->resources, node)
		kfree(b);
	INIT_LIST_HEAD(&test->resources);
}

struct __kunit_shim_run {
	struct kunit *test;
	struct kunit_suite *suite;
	struct kunit_case *c;
};

/* The case's kthread: init, the case, then it ends without running module code again. */
static int __kunit_shim_case(void *arg)
{
	struct __kunit_shim_run *r = arg;
	int ret = r->suite->init ? r->suite->init(r->test) : 0;

	if (ret) {
		r->test->status = KUNIT_FAILURE;
		pr_info("    # %s: init failed: %d\n", r->test->name, ret);
	} else {
		r->c->run_case(r->test);
	}
	kthread_complete_and_exit(&r->test->done, 0);
}

/* One case in a kthread of its own; then its exit, in this thread, and its memory. */
static void __kunit_shim_run_case(struct kunit_suite *suite, struct kunit_case *c,
				  struct kunit *test)
{
	struct __kunit_shim_run r = {test, suite, c};
	struct task_struct *t;

	memset(test, 0, sizeof(*test));
	test->name = c->name;
	INIT_LIST_HEAD(&test->resources);
	spin_lock_init(&test->lock);
	init_completion(&test->done);
	t = kthread_run(__kunit_shim_case, &r, "kunit_shim");
	if (IS_ERR(t)) {
		test->status = KUNIT_FAILURE;
		pr_info("    # %s: no kthread (%ld)\n", c->name, PTR_ERR(t));
		return;
	}
	wait_for_completion(&test->done);
	if (suite->exit)
		suite->exit(test);
	__kunit_shim_free_all(test);
}

static int __kunit_shim_run_suite(struct kunit_suite *suite)
{
	static const char *const word[] = {"ok", "not ok", "ok"};
	unsigned int n = 0, i, count[3] = {0};
	struct kunit *test;
	struct kunit_case *c;
	int ret;

	for (c = suite->test_cases; c->run_case; c++)
		n++;
	ret = suite->suite_init ? suite->suite_init(suite) : 0;
	if (ret)
		return ret;
	test = kmalloc(sizeof(*test), GFP_KERNEL);
	if (!test)
		return -ENOMEM;
	pr_info("KTAP version 1\n");
	pr_info("1..1\n");
	pr_info("    KTAP version 1\n");
	pr_info("    # Subtest: %s\n", suite->name);
	pr_info("    1..%u\n", n);
	for (i = 0, c = suite->test_cases; i < n; i++, c++) {
		__kunit_shim_run_case(suite, c, test);
		count[test->status]++;
		pr_info("    %s %u %s%s%s\n", word[test->status], i + 1, c->name,
			test->status == KUNIT_SKIPPED ? " # SKIP " : "",
			test->status == KUNIT_SKIPPED ? test->status_comment : "");
	}
	if (suite->suite_exit)
		suite->suite_exit(suite);
	pr_info("# %s: pass:%u fail:%u skip:%u total:%u\n", suite->name, count[KUNIT_SUCCESS],
		count[KUNIT_FAILURE], count[KUNIT_SKIPPED], n);
	pr_info("# Totals: pass:%u fail:%u skip:%u total:%u\n", count[KUNIT_SUCCESS],
		count[KUNIT_FAILURE], count[KUNIT_SKIPPED], n);
	pr_info("%s 1 %s\n", count[KUNIT_FAILURE] ? "not ok" : "ok", suite->name);
	kfree(test);
	return 0;
}

/* The suite of kunit_test_suite(), which the module's init runs once. */
static struct kunit_suite *__kunit_shim_suite;

static int __init __kunit_shim_init(void)
{
	return __kunit_shim_run_suite(__kunit_shim_suite);
}

static void __exit __kunit_shim_exit(void)
{
}

#define kunit_test_suite(suite)                                   \
	static struct kunit_suite *__kunit_shim_suite = &(suite); \
	module_init(__kunit_shim_init);                           \
	module_exit(__kunit_shim_exit)

#endif /* LUF_KUNIT_SHIM_TEST_H */
