// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/test_errors.c - set-up failures say what is wrong (issue 15,
 * luf/error.h). Every failed check of every init and fini function returns
 * its documented errno and names the function and the check: the calling
 * thread's luf_last_error() holds exactly "<function>: <check> (-<errno>)",
 * and the error hook receives the same function, check and errno once.
 * Also: a successful call leaves the record alone, luf_clear_error()
 * clears it, a thread sees only its own failures, the hook and its
 * argument are replaced as one, and a failure inside the hook does not
 * call the hook again. Run one by hand: luf_unit_errors <test name>.
 */
#include "unit.h"

#include <pthread.h>
#include <stdio.h>

/* What the hook saw (the hook runs on the failing thread). */
static struct {
	unsigned int calls;
	int err;
	char fn[64];
	char what[160];
	char line_in_hook[256]; /* luf_last_error() from inside the hook */
	void *arg;
	pthread_t thread;
} seen;
static int cookie; /* the hook's argument */

static void record_hook(int err, const char *fn, const char *what, void *arg)
{
	seen.calls++;
	seen.err = err;
	snprintf(seen.fn, sizeof(seen.fn), "%s", fn);
	snprintf(seen.what, sizeof(seen.what), "%s", what);
	snprintf(seen.line_in_hook, sizeof(seen.line_in_hook), "%s", luf_last_error());
	seen.arg = arg;
	seen.thread = pthread_self();
}

static int hook_setup(void **state)
{
	memset(&seen, 0, sizeof(seen));
	luf_set_error_hook(record_hook, &cookie);
	luf_clear_error();
	return uenv_setup(state);
}

static int hook_teardown(void **state)
{
	luf_set_error_hook(NULL, NULL);
	return uenv_teardown(state);
}

static const char *errno_name(int err)
{
	return err == -EINVAL ? "EINVAL" : err == -EBUSY ? "EBUSY" : "?";
}

/*
 * @ret came from a call made right after the record and the hook were
 * reset: it is @err, the line is exactly "@fn: @what (-E...)", and the
 * hook was called once with the same pieces, on this thread.
 */
static void check_fail(int ret, int err, const char *fn, const char *what, const char *call)
{
	char want[256];

	snprintf(want, sizeof(want), "%s: %s (-%s)", fn, what, errno_name(err));
	if (ret != err)
		fail_msg("%s returned %d, want %d (%s)", call, ret, err, want);
	if (strcmp(luf_last_error(), want) != 0)
		fail_msg("%s: luf_last_error() is \"%s\", want \"%s\"", call, luf_last_error(),
			 want);
	assert_non_null(strstr(luf_last_error(), fn));
	assert_non_null(strstr(luf_last_error(), what));
	if (seen.calls != 1)
		fail_msg("%s: the hook was called %u times, want 1", call, seen.calls);
	assert_int_equal(seen.err, err);
	assert_string_equal(seen.fn, fn);
	assert_string_equal(seen.what, what);
	assert_string_equal(seen.line_in_hook, want); /* recorded before the hook ran */
	assert_ptr_equal(seen.arg, &cookie);
	assert_true(pthread_equal(seen.thread, pthread_self()));
}

#define EXPECT_FAIL(call, err, fn, what)                      \
	do {                                                  \
		int ret_;                                     \
                                                              \
		luf_clear_error();                            \
		seen.calls = 0;                               \
		ret_ = (call);                                \
		check_fail(ret_, (err), (fn), (what), #call); \
	} while (0)

/* A success leaves the record and the hook alone. */
#define EXPECT_OK(call)                                                     \
	do {                                                                \
		char before_[256];                                          \
		unsigned int calls_ = seen.calls;                           \
                                                                            \
		snprintf(before_, sizeof(before_), "%s", luf_last_error()); \
		assert_int_equal((call), 0);                                \
		assert_string_equal(luf_last_error(), before_);             \
		assert_int_equal(seen.calls, calls_);                       \
	} while (0)

#define LINE_TEXT "LUF_CACHELINE (64 bytes)"

/* Cache-line aligned storage with room to misalign it by 8 bytes. */
static void *storage(size_t size)
{
	return testenv_zalloc(size + LUF_CACHELINE);
}

static void *misaligned(void *p)
{
	return (char *)p + 8;
}

static void errors_luf_init(void **state)
{
	struct mock_arch a = {.nr_cpus = 4};
	struct luf *l = storage(sizeof(*l));
	struct luf_done_cpu *d = storage(luf_done_size(4));
	struct luf_stats_cpu *st = storage(luf_stats_size(4));
	struct luf_arch_ops no_flush = mock_ops, no_nr = mock_ops, no_this = mock_ops;
	const char *fn = "luf_init";

	(void)state;
	no_flush.flush = NULL;
	no_nr.nr_cpu_ids = NULL;
	no_this.this_cpu = NULL;
	EXPECT_FAIL(luf_init(NULL, &mock_ops, &a, d, st, 0), -EINVAL, fn, "@l is NULL");
	EXPECT_FAIL(luf_init(l, NULL, &a, d, st, 0), -EINVAL, fn, "@ops is NULL");
	EXPECT_FAIL(luf_init(l, &no_flush, &a, d, st, 0), -EINVAL, fn,
		    "@ops->flush is NULL (required)");
	EXPECT_FAIL(luf_init(l, &no_nr, &a, d, st, 0), -EINVAL, fn,
		    "@ops->nr_cpu_ids is NULL (required)");
	EXPECT_FAIL(luf_init(l, &no_this, &a, d, st, 0), -EINVAL, fn,
		    "@ops->this_cpu is NULL (required)");
	EXPECT_FAIL(luf_init(l, &mock_ops, &a, NULL, st, 0), -EINVAL, fn, "@done is NULL");
	EXPECT_FAIL(luf_init(l, &mock_ops, &a, d, NULL, 0), -EINVAL, fn, "@stats is NULL");
	/* Misaligned storage. */
	EXPECT_FAIL(luf_init(misaligned(l), &mock_ops, &a, d, st, 0), -EINVAL, fn,
		    "@l is not aligned to " LINE_TEXT);
	EXPECT_FAIL(luf_init(l, &mock_ops, &a, misaligned(d), st, 0), -EINVAL, fn,
		    "@done is not aligned to " LINE_TEXT);
	EXPECT_FAIL(luf_init(l, &mock_ops, &a, d, misaligned(st), 0), -EINVAL, fn,
		    "@stats is not aligned to " LINE_TEXT);
	/* Out of range: the backend's CPU count. */
	a.nr_cpus = 0;
	EXPECT_FAIL(luf_init(l, &mock_ops, &a, d, st, 0), -EINVAL, fn,
		    "@ops->nr_cpu_ids() returned 0");
	a.nr_cpus = LUF_MAX_CPUS + 1;
	EXPECT_FAIL(luf_init(l, &mock_ops, &a, d, st, 0), -EINVAL, fn,
		    "@ops->nr_cpu_ids() returned more than LUF_MAX_CPUS");
	a.nr_cpus = 4;
	/* A success leaves the last failure in place, as errno. */
	EXPECT_OK(luf_init(l, &mock_ops, &a, d, st, 0));
	assert_string_equal(
	    luf_last_error(),
	    "luf_init: @ops->nr_cpu_ids() returned more than LUF_MAX_CPUS (-EINVAL)");
	/* Double init. */
	EXPECT_FAIL(luf_init(l, &mock_ops, &a, d, st, 0), -EBUSY, fn,
		    "@l is live already: luf_fini() it first");
	/* luf_fini(): NULL, live, then ended twice. */
	EXPECT_FAIL(luf_fini(NULL), -EINVAL, "luf_fini", "@l is NULL");
	EXPECT_OK(luf_fini(l));
	EXPECT_FAIL(luf_fini(l), -EINVAL, "luf_fini",
		    "@l is not live: not luf_init()ed, or ended already");
	free(l);
	free(d);
	free(st);
}

static void errors_keytab(void **state)
{
	struct uenv *e = *state;
	struct luf_keytab *kt = storage(luf_keytab_size(8, e->nr_cpus));
	struct luf *dead = storage(sizeof(*dead));
	const char *fn = "luf_keytab_init";

	EXPECT_FAIL(luf_keytab_init(NULL, e->l, 8), -EINVAL, fn, "@kt is NULL");
	EXPECT_FAIL(luf_keytab_init(misaligned(kt), e->l, 8), -EINVAL, fn,
		    "@kt is not aligned to " LINE_TEXT);
	EXPECT_FAIL(luf_keytab_init(kt, NULL, 8), -EINVAL, fn, "@l is NULL");
	/* Wrong order: the instance is not set up yet. */
	EXPECT_FAIL(luf_keytab_init(kt, dead, 8), -EINVAL, fn,
		    "@l is not a live struct luf: luf_init() it first");
	EXPECT_FAIL(luf_keytab_init(kt, e->l, 1), -EINVAL, fn, "@nr_keys is below 2");
	EXPECT_FAIL(luf_keytab_init(kt, e->l, LUF_KEYTAB_MAX_KEYS + 1), -EINVAL, fn,
		    "@nr_keys is above LUF_KEYTAB_MAX_KEYS");
	EXPECT_OK(luf_keytab_init(kt, e->l, 8));
	EXPECT_FAIL(luf_keytab_init(kt, e->l, 8), -EBUSY, fn,
		    "@kt is live already: luf_keytab_fini() it first");
	EXPECT_FAIL(luf_keytab_fini(NULL), -EINVAL, "luf_keytab_fini", "@kt is NULL");
	EXPECT_OK(luf_keytab_fini(kt));
	EXPECT_FAIL(luf_keytab_fini(kt), -EINVAL, "luf_keytab_fini",
		    "@kt is not live: not luf_keytab_init()ed, or ended already");
	free(kt);
	free(dead);
}

static void errors_pcpu(void **state)
{
	struct uenv *e = *state;
	struct uenv *b = uenv_new(4, 16, 4, 512, 0, 0);
	struct luf_pcpu *pc = storage(luf_pcpu_size(e->nr_cpus));
	struct luf_keytab *kt = storage(luf_keytab_size(8, e->nr_cpus));
	struct luf *dead = storage(sizeof(*dead));
	const char *fn = "luf_pcpu_init", *fini = "luf_pcpu_fini";
	unsigned short key;

	EXPECT_FAIL(luf_pcpu_init(NULL, e->l, e->kt, 0, 1), -EINVAL, fn, "@pc is NULL");
	EXPECT_FAIL(luf_pcpu_init(pc, NULL, e->kt, 0, 1), -EINVAL, fn, "@l is NULL");
	EXPECT_FAIL(luf_pcpu_init(pc, dead, e->kt, 0, 1), -EINVAL, fn,
		    "@l is not a live struct luf: luf_init() it first");
	EXPECT_FAIL(luf_pcpu_init(pc, e->l, NULL, 0, 1), -EINVAL, fn, "@kt is NULL");
	/* Wrong order: the key table is not set up yet. */
	EXPECT_FAIL(luf_pcpu_init(pc, e->l, kt, 0, 1), -EINVAL, fn,
		    "@kt is not live: luf_keytab_init() it first");
	EXPECT_FAIL(luf_pcpu_init(pc, e->l, b->kt, 0, 1), -EINVAL, fn,
		    "@kt belongs to another struct luf");
	EXPECT_FAIL(luf_pcpu_init(pc, e->l, e->kt, e->nr_cpus, 1), -EINVAL, fn,
		    "@cpu is not below @l's ops->nr_cpu_ids()");
	EXPECT_FAIL(luf_pcpu_init(pc, e->l, e->kt, 0, 0), -EINVAL, fn, "@threshold is 0");
	EXPECT_OK(luf_pcpu_init(pc, e->l, e->kt, 0, 1));
	EXPECT_FAIL(luf_pcpu_init(pc, e->l, e->kt, 0, 1), -EBUSY, fn,
		    "@pc is live already: luf_pcpu_fini() it first");
	/* Threshold 1: the removal folds at once into a key no fold has returned. */
	assert_int_equal(luf_unmap(pc, NULL, UMASK(e, 1), RO), 0);
	EXPECT_FAIL(luf_pcpu_fini(pc), -EBUSY, fini,
		    "@pc holds a key luf_pcpu_fold() has not returned: fold first");
	assert_int_equal(luf_pcpu_fold(pc, &key), 0);
	assert_int_not_equal(key, 0);
	EXPECT_OK(luf_pcpu_fini(pc));
	/* Threshold 512: the removal stays open. */
	EXPECT_OK(luf_pcpu_init(pc, e->l, e->kt, 0, 512));
	assert_int_equal(luf_unmap(pc, NULL, UMASK(e, 2), RO), 0);
	EXPECT_FAIL(luf_pcpu_fini(pc), -EBUSY, fini,
		    "@pc has open removals: luf_pcpu_fold() them first");
	assert_int_equal(luf_pcpu_fold(pc, &key), 0);
	EXPECT_OK(luf_pcpu_fini(pc));
	EXPECT_FAIL(luf_pcpu_fini(NULL), -EINVAL, fini, "@pc is NULL");
	EXPECT_FAIL(luf_pcpu_fini(pc), -EINVAL, fini,
		    "@pc is not live: not luf_pcpu_init()ed, or ended already");
	free(pc);
	free(kt);
	free(dead);
	uenv_free(b);
}

static void errors_freelist(void **state)
{
	struct uenv *e = *state;
	struct uenv *b = uenv_new(4, 16, 4, 512, 0, 0);
	struct luf_freelist *fl = storage(luf_freelist_size(e->nr_cpus));
	struct luf_keytab *kt = storage(luf_keytab_size(8, e->nr_cpus));
	struct luf *dead = storage(sizeof(*dead));
	struct luf_folio *got;
	const char *fn = "luf_freelist_init", *fini = "luf_freelist_fini";
	unsigned short key;

	EXPECT_FAIL(luf_freelist_init(NULL, e->l, e->kt, 0), -EINVAL, fn, "@fl is NULL");
	EXPECT_FAIL(luf_freelist_init(fl, NULL, e->kt, 0), -EINVAL, fn, "@l is NULL");
	EXPECT_FAIL(luf_freelist_init(fl, dead, e->kt, 0), -EINVAL, fn,
		    "@l is not a live struct luf: luf_init() it first");
	EXPECT_FAIL(luf_freelist_init(fl, e->l, NULL, 0), -EINVAL, fn, "@kt is NULL");
	EXPECT_FAIL(luf_freelist_init(fl, e->l, kt, 0), -EINVAL, fn,
		    "@kt is not live: luf_keytab_init() it first");
	EXPECT_FAIL(luf_freelist_init(fl, e->l, b->kt, 0), -EINVAL, fn,
		    "@kt belongs to another struct luf");
	EXPECT_OK(luf_freelist_init(fl, e->l, e->kt, 0));
	EXPECT_FAIL(luf_freelist_init(fl, e->l, e->kt, 0), -EBUSY, fn,
		    "@fl is live already: luf_freelist_fini() it first");
	/* A clean folio, then a pend one, keep it from ending. */
	assert_int_equal(luf_free(fl, e->pc[0], &e->folios[0].lf, 0), 0);
	EXPECT_FAIL(luf_freelist_fini(fl), -EBUSY, fini,
		    "@fl still holds clean folios: luf_alloc() them first");
	assert_int_equal(luf_alloc(fl, e->pc[0], 0, &got), 0);
	key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	assert_int_equal(luf_free(fl, e->pc[0], &e->folios[1].lf, key), 0);
	EXPECT_FAIL(luf_freelist_fini(fl), -EBUSY, fini,
		    "@fl still holds pend folios: luf_alloc() them first");
	EXPECT_FLUSH(e, uenv_next_ugen(e), 0, 1);
	assert_int_equal(luf_alloc(fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &got), 0);
	EXPECT_OK(luf_freelist_fini(fl));
	EXPECT_FAIL(luf_freelist_fini(NULL), -EINVAL, fini, "@fl is NULL");
	EXPECT_FAIL(luf_freelist_fini(fl), -EINVAL, fini,
		    "@fl is not live: not luf_freelist_init()ed, or ended already");
	free(fl);
	free(kt);
	free(dead);
	uenv_free(b);
}

static void errors_domain(void **state)
{
	struct uenv *e = *state;
	struct luf_domain *dom = storage(luf_domain_size(e->nr_cpus));
	struct luf *dead = storage(sizeof(*dead));
	const char *fn = "luf_domain_init", *fini = "luf_domain_fini";

	EXPECT_FAIL(luf_domain_init(NULL, e->l), -EINVAL, fn, "@dom is NULL");
	EXPECT_FAIL(luf_domain_init(dom, NULL), -EINVAL, fn, "@l is NULL");
	EXPECT_FAIL(luf_domain_init(dom, dead), -EINVAL, fn,
		    "@l is not a live struct luf: luf_init() it first");
	EXPECT_OK(luf_domain_init(dom, e->l));
	EXPECT_FAIL(luf_domain_init(dom, e->l), -EBUSY, fn,
		    "@dom is live already: luf_domain_fini() it first");
	/* A removal recorded in the domain keeps it from ending until it is settled. */
	(void)uenv_unmap_fold(e, 0, dom, UMASK(e, 3), RO);
	EXPECT_FAIL(luf_domain_fini(dom), -EBUSY, fini,
		    "@dom still owes a flush: luf_domain_settle() it first");
	EXPECT_FLUSH(e, uenv_next_ugen(e), 0, 3);
	assert_int_equal(luf_domain_settle(e->l, 0, dom, e->scratch), 1);
	EXPECT_OK(luf_domain_fini(dom));
	EXPECT_FAIL(luf_domain_fini(NULL), -EINVAL, fini, "@dom is NULL");
	EXPECT_FAIL(luf_domain_fini(dom), -EINVAL, fini,
		    "@dom is not live: not luf_domain_init()ed, or ended already");
	free(dom);
	free(dead);
}

/* The record: "" at first, kept across successes, cleared on request. */
static void errors_record_and_clear(void **state)
{
	struct uenv *e = *state;

	assert_string_equal(luf_last_error(), "");
	EXPECT_FAIL(luf_keytab_init(e->kt, e->l, 8), -EBUSY, "luf_keytab_init",
		    "@kt is live already: luf_keytab_fini() it first");
	EXPECT_OK(luf_domain_fini(e->dom2));
	assert_string_equal(
	    luf_last_error(),
	    "luf_keytab_init: @kt is live already: luf_keytab_fini() it first (-EBUSY)");
	luf_clear_error();
	assert_string_equal(luf_last_error(), "");
	assert_non_null(luf_last_error());
	/* The latest failure replaces the one before. */
	assert_int_equal(luf_domain_fini(e->dom2), -EINVAL);
	assert_int_equal(luf_domain_init(NULL, e->l), -EINVAL);
	assert_string_equal(luf_last_error(), "luf_domain_init: @dom is NULL (-EINVAL)");
}

/* The errno table, numbers for others, and lines that do not fit. */
static void errors_format(void **state)
{
	char what[600];

	(void)state;
	assert_int_equal(__luf_fail(-ENOSPC, "f", "w"), -ENOSPC);
	assert_string_equal(luf_last_error(), "f: w (-ENOSPC)");
	assert_int_equal(__luf_fail(-EOPNOTSUPP, "f", "w"), -EOPNOTSUPP);
	assert_string_equal(luf_last_error(), "f: w (-EOPNOTSUPP)");
	assert_int_equal(__luf_fail(-4000, "f", "w"), -4000);
	assert_string_equal(luf_last_error(), "f: w (-4000)");
	assert_int_equal(__luf_fail(-EINVAL, NULL, NULL), -EINVAL);
	assert_string_equal(luf_last_error(), "luf: failed (-EINVAL)");
	memset(what, 'x', sizeof(what) - 1);
	what[sizeof(what) - 1] = '\0';
	assert_int_equal(__luf_fail(-EINVAL, "f", what), -EINVAL);
	assert_true(strlen(luf_last_error()) > 200 && strlen(luf_last_error()) < 600);
	assert_true(strncmp(luf_last_error(), "f: xxx", 6) == 0);
	assert_int_equal(seen.calls, 5);
	assert_int_equal(strncmp(seen.what, what, sizeof(seen.what) - 1), 0); /* the hook's copy */
}

/* No hook: nothing is called; a new hook replaces the old one. */
static void errors_hook_unset_and_replaced(void **state)
{
	struct uenv *e = *state;
	int other;

	luf_set_error_hook(NULL, &cookie);
	seen.calls = 0;
	assert_int_equal(luf_domain_init(NULL, e->l), -EINVAL);
	assert_int_equal(seen.calls, 0);
	assert_string_equal(luf_last_error(), "luf_domain_init: @dom is NULL (-EINVAL)");
	luf_set_error_hook(record_hook, &other);
	assert_int_equal(luf_domain_init(NULL, e->l), -EINVAL);
	assert_int_equal(seen.calls, 1);
	assert_ptr_equal(seen.arg, &other);
}

/* A set-up failure inside the hook is recorded but does not call the hook again. */
static unsigned int nested_calls;

static void nested_hook(int err, const char *fn, const char *what, void *arg)
{
	(void)err, (void)fn, (void)what;
	nested_calls++;
	assert_int_equal(luf_fini(NULL), -EINVAL);
	assert_string_equal(luf_last_error(), "luf_fini: @l is NULL (-EINVAL)");
	assert_ptr_equal(arg, &cookie);
}

static void errors_hook_not_reentered(void **state)
{
	struct uenv *e = *state;

	luf_set_error_hook(nested_hook, &cookie);
	assert_int_equal(luf_domain_init(NULL, e->l), -EINVAL);
	assert_int_equal(nested_calls, 1);
	assert_string_equal(luf_last_error(), "luf_fini: @l is NULL (-EINVAL)");
	/* The guard is dropped again: the next failure calls the hook. */
	assert_int_equal(luf_domain_init(NULL, e->l), -EINVAL);
	assert_int_equal(nested_calls, 2);
}

/* Thread-locality: each thread sees its own failures only. */
struct other_thread {
	struct uenv *e;
	char first[256]; /* luf_last_error() when the thread started */
	char after[256]; /* ... after its own failure */
	unsigned int hook_calls;
	bool hook_on_this_thread;
};

static void *other_thread_main(void *p)
{
	struct other_thread *t = p;
	unsigned int calls = seen.calls;

	snprintf(t->first, sizeof(t->first), "%s", luf_last_error());
	if (luf_pcpu_init(t->e->pc[1], t->e->l, t->e->kt, 1, 1) == -EBUSY)
		snprintf(t->after, sizeof(t->after), "%s", luf_last_error());
	t->hook_calls = seen.calls - calls;
	t->hook_on_this_thread = pthread_equal(seen.thread, pthread_self());
	return NULL;
}

static void errors_thread_local(void **state)
{
	struct uenv *e = *state;
	struct other_thread t = {.e = e};
	pthread_t th;

	EXPECT_FAIL(luf_keytab_fini(NULL), -EINVAL, "luf_keytab_fini", "@kt is NULL");
	assert_int_equal(pthread_create(&th, NULL, other_thread_main, &t), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_string_equal(t.first, ""); /* this thread's failure is not the other's */
	assert_string_equal(
	    t.after, "luf_pcpu_init: @pc is live already: luf_pcpu_fini() it first (-EBUSY)");
	assert_int_equal(t.hook_calls, 1); /* the hook is process-wide, on the failing thread */
	assert_true(t.hook_on_this_thread);
	assert_string_equal(luf_last_error(), "luf_keytab_fini: @kt is NULL (-EINVAL)");
	luf_clear_error(); /* clears this thread's record only */
	assert_string_equal(luf_last_error(), "");
}

/*
 * The hook and its argument change together: one thread flips between two
 * (hook, argument) pairs while another fails; each hook checks that it got
 * its own argument.
 */
static int arg_a, arg_b;
static unsigned long mismatches, hooked;

static void hook_a(int err, const char *fn, const char *what, void *arg)
{
	(void)err, (void)fn, (void)what;
	__atomic_fetch_add(&hooked, 1, __ATOMIC_RELAXED);
	if (arg != &arg_a)
		__atomic_fetch_add(&mismatches, 1, __ATOMIC_RELAXED);
}

static void hook_b(int err, const char *fn, const char *what, void *arg)
{
	(void)err, (void)fn, (void)what;
	__atomic_fetch_add(&hooked, 1, __ATOMIC_RELAXED);
	if (arg != &arg_b)
		__atomic_fetch_add(&mismatches, 1, __ATOMIC_RELAXED);
}

static bool flipping;

static void *flipper(void *p)
{
	(void)p;
	while (__atomic_load_n(&flipping, __ATOMIC_RELAXED)) {
		luf_set_error_hook(hook_a, &arg_a);
		luf_set_error_hook(hook_b, &arg_b);
	}
	return NULL;
}

static void errors_hook_pair_consistent(void **state)
{
	pthread_t th;

	(void)state;
	luf_set_error_hook(hook_a, &arg_a);
	__atomic_store_n(&flipping, true, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&th, NULL, flipper, NULL), 0);
	for (unsigned int i = 0; i < 20000; i++)
		assert_int_equal(luf_fini(NULL), -EINVAL);
	__atomic_store_n(&flipping, false, __ATOMIC_RELAXED);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(hooked, 20000);
	assert_int_equal(mismatches, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(errors_luf_init, hook_setup, hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_keytab, hook_setup, hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_pcpu, hook_setup, hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_freelist, hook_setup, hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_domain, hook_setup, hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_record_and_clear, hook_setup, hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_format, hook_setup, hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_hook_unset_and_replaced, hook_setup,
					    hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_hook_not_reentered, hook_setup, hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_thread_local, hook_setup, hook_teardown),
	    cmocka_unit_test_setup_teardown(errors_hook_pair_consistent, hook_setup, hook_teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
