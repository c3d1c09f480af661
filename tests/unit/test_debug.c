// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/test_debug.c - LUF_DEBUG mode (built only into luf_unit_debug,
 * compiled with -DLUF_DEBUG): misuse is reported through luf_set_report()
 * with the caller's __FILE__ and __LINE__, and folios remember the call
 * site of their last free or allocation.
 */
#include "unit.h"

#if defined(LUF_DEBUG)

static struct {
	unsigned int n;
	const char *what;
	const void *obj;
	const char *file;
	int line;
} rep;

static void capture(const char *what, const void *obj, const char *file, int line)
{
	rep.n++;
	rep.what = what;
	rep.obj = obj;
	rep.file = file;
	rep.line = line;
}

static int debug_setup(void **state)
{
	uenv_setup(state);
	memset(&rep, 0, sizeof(rep));
	luf_set_report(((struct uenv *)*state)->l, capture);
	return 0;
}

static void assert_report(const char *what, const void *obj, int line)
{
	assert_non_null(rep.what);
	assert_non_null(strstr(rep.what, what));
	assert_ptr_equal(rep.obj, obj);
	assert_string_equal(rep.file, __FILE__);
	assert_int_equal(rep.line, line);
}

static void debug_double_free_reported(void **state)
{
	struct uenv *e = *state;
	struct luf_folio *f = &e->folios[3].lf;
	int free_line, line;

	free_line = __LINE__ + 1;
	assert_int_equal(luf_free(e->fl, e->pc[0], f, 0), 0);
	assert_int_equal(rep.n, 0);
	assert_string_equal(f->file, __FILE__);
	assert_int_equal(f->line, free_line);

	line = __LINE__ + 1;
	assert_int_equal(luf_free(e->fl, e->pc[1], f, 0), -EBUSY);
	assert_int_equal(rep.n, 1);
	assert_report("double free", f, line);
	assert_int_equal(f->line, free_line); /* the failed call changed nothing */

	/* Freed into a second list: reported the same way. */
	line = __LINE__ + 1;
	assert_int_equal(luf_free(e->fl2, e->pc[0], f, 0), -EBUSY);
	assert_int_equal(rep.n, 2);
	assert_report("double free", f, line);
}

static void debug_upgrade_without_abort_reported(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 0, NULL, UMASK(e, 1), RO);
	int line;

	line = __LINE__ + 1;
	assert_int_equal(luf_upgrade_check(e->pc[2], key, NULL), -EBUSY);
	assert_int_equal(rep.n, 1);
	assert_report("write-upgrade without abort", e->pc[2], line);

	assert_int_equal(luf_unmap(e->pc[1], e->dom, UMASK(e, 2), RO), 0);
	line = __LINE__ + 1;
	assert_int_equal(luf_upgrade_check(e->pc[2], 0, e->dom), -EBUSY);
	assert_int_equal(rep.n, 2);
	assert_report("write-upgrade without abort", e->dom, line);

	/* After the aborts the same checks pass and report nothing. */
	EXPECT_FLUSH(e, 1, 0, 1);
	assert_int_equal(luf_abort_key(e->pc[2], key, LUF_ABORT_WRITE_FAULT), 0);
	EXPECT_FLUSH(e, 2, 0, 2);
	assert_int_equal(luf_abort_domain(e->pc[2], e->dom, LUF_ABORT_PROT_UPGRADE), 0);
	assert_int_equal(luf_upgrade_check(e->pc[2], key, e->dom), 0);
	assert_int_equal(rep.n, 2);
}

static void debug_alloc_tracks_call_site(void **state)
{
	struct uenv *e = *state;
	struct luf_folio *f = NULL;
	int line;

	uenv_free_range(e, e->fl, 0, 0, 0, 1);
	line = __LINE__ + 1;
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), 0);
	assert_string_equal(f->file, __FILE__);
	assert_int_equal(f->line, line);
	assert_int_equal(rep.n, 0);
}

/* A whole correct cycle reports nothing; luf_set_report(NULL) restores the default. */
static void debug_correct_use_reports_nothing(void **state)
{
	struct uenv *e = *state;
	unsigned short key = uenv_unmap_fold(e, 0, e->dom, UMASK(e, 1, 3), RO);
	struct luf_folio *f = NULL;

	uenv_free_range(e, e->fl, 0, key, 0, 4);
	EXPECT_FLUSH(e, 1, 0, 1, 3);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), 0);
	assert_int_equal(luf_upgrade_check(e->pc[0], key, e->dom), 0);
	assert_int_equal(luf_free(e->fl, e->pc[0], f, 0), 0);
	assert_int_equal(rep.n, 0);

	luf_set_report(e->l, NULL); /* the default: a line on stderr */
	assert_null(e->l->report);
	assert_int_equal(luf_free(e->fl, e->pc[0], f, 0), -EBUSY);
	assert_int_equal(rep.n, 0);
}

int unit_run_debug(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(debug_double_free_reported, debug_setup, uenv_teardown),
	    cmocka_unit_test_setup_teardown(debug_upgrade_without_abort_reported, debug_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(debug_alloc_tracks_call_site, debug_setup,
					    uenv_teardown),
	    cmocka_unit_test_setup_teardown(debug_correct_use_reports_nothing, debug_setup,
					    uenv_teardown),
	};

	return cmocka_run_group_tests_name("debug", tests, NULL, NULL);
}

#else

int unit_run_debug(void)
{
	return 0; /* LUF_DEBUG only: see luf_unit_debug */
}

#endif
