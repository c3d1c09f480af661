// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/unit/test_linked.c - built into luf_unit_linked only: compiled with
 * LUF_LINKED and linked with libluf.so, with the free list and upgrade
 * groups, so the same cases run through the exported API.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "unit.h"

#if !defined(LUF_LINKED)
#error "test_linked.c is for the LUF_LINKED build"
#endif
#if !defined(LUF_UNIT_LIBLUF_SONAME)
#error "define LUF_UNIT_LIBLUF_SONAME (the shared library's soname)"
#endif

/* libluf.so is loaded and exports the API (not an inline copy in the test). */
static void linked_library_exports_api(void **state)
{
	static const char *const names[] = {
	    "luf_init",		 "luf_flush_batch",	 "luf_free_at",	  "luf_alloc_at",
	    "luf_unmap",	 "luf_pcpu_fold",	 "luf_abort_key", "luf_abort_domain",
	    "luf_domain_settle", "luf_upgrade_check_at",
	};
	void *h = dlopen(LUF_UNIT_LIBLUF_SONAME, RTLD_NOW | RTLD_NOLOAD);
	Dl_info info;

	(void)state;
	assert_non_null(h);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *sym = dlsym(h, names[i]);

		if (!sym)
			fail_msg("%s is not exported by %s", names[i], LUF_UNIT_LIBLUF_SONAME);
		assert_true(dladdr(sym, &info) != 0);
		assert_non_null(strstr(info.dli_fname, "libluf"));
	}
	/* Only luf_ names are exported: an inline helper is not. */
	assert_null(dlsym(h, "luf_init_inline"));
	assert_null(dlsym(h, "luf_batch_ugen"));
	dlclose(h);
}

/* A short round trip through the exported functions. */
static void linked_round_trip(void **state)
{
	struct uenv *e = *state;
	luf_key_t key = uenv_unmap_fold(e, 0, e->dom, UMASK(e, 1, 2), RO);
	struct luf_folio *f = NULL;

	assert_int_equal(luf_keytab_check_done(e->kt, key), 0);
	uenv_free_range(e, e->fl, 0, key, 0, 3);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], 0, &f), -EAGAIN);
	EXPECT_FLUSH(e, 1, 0, 1, 2);
	assert_int_equal(luf_alloc(e->fl, e->pc[0], LUF_ALLOC_MAY_FLUSH, &f), 0);
	assert_false(luf_domain_pending(e->dom));
	assert_int_equal(luf_free(e->fl, e->pc[0], f, 0), 0);
	assert_int_equal(luf_free(e->fl, e->pc[0], f, 0), -EBUSY);
	assert_int_equal(luf_stats_sum(e->stats, e->nr_cpus, LUF_STAT_ALLOC_FLUSH), 1);
}

int unit_run_linked(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(linked_library_exports_api),
	    cmocka_unit_test_setup_teardown(linked_round_trip, uenv_setup, uenv_teardown),
	};

	return cmocka_run_group_tests_name("linked", tests, NULL, NULL);
}
