// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/replay/test_kparse.c - the kernel trace line parser of luf-replay
 * (bench/replay/rp_kparse.c) on lines of the form tracefs's trace_pipe
 * prints for the capture's events (with and without the irq-info column,
 * task names with spaces and dashes), and on malformed ones (CMocka, label
 * unit). Also the kernel model (rp_kmodel.c) on a few hand-made events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rp_kmodel.h"
#include "rp_kparse.h"

static int parse(const char *line, struct rp_kev *ev)
{
	const char *why = NULL;
	int r = rp_kparse(line, strlen(line), ev, &why);

	if (r)
		assert_non_null(why);
	return r;
}

static void events(void **state)
{
	struct rp_kev ev;

	(void)state;
	assert_int_equal(parse("         reclaim-123     [002]      6.954947: unmap: "
			       "(try_to_unmap_one+0x0/0x432) folio=0xffffea0000459ac0 "
			       "mm=0xffff888000cc4000 vmflags=0xd1",
			       &ev),
			 0);
	assert_int_equal(ev.kind, RP_K_UNMAP);
	assert_int_equal(ev.cpu, 2);
	assert_true(ev.a == 0xffffea0000459ac0ull);
	assert_true(ev.b == 0xffff888000cc4000ull);
	assert_true(ev.c == 0xd1);
	/* the irq-info column, a task name with a space and dashes */
	assert_int_equal(parse("  kworker/u8:1-my task-45  [003] d.Z..  12.000001: switch: "
			       "(switch_mm_irqs_off+0x0/0x33f) prev=0xffff888000144380 "
			       "next=0xffff888000b05500",
			       &ev),
			 0);
	assert_int_equal(ev.kind, RP_K_SWITCH);
	assert_int_equal(ev.cpu, 3);
	assert_true(ev.a == 0xffff888000144380ull && ev.b == 0xffff888000b05500ull);
	assert_int_equal(parse("<idle>-0 [000] 1.5: batch: (try_to_unmap_flush+0x0/0x2a)", &ev), 0);
	assert_int_equal(ev.kind, RP_K_BATCH);
	assert_int_equal(parse("init-1 [001] 1.975746: mm_page_alloc: page=(____ptrval____) "
			       "pfn=0x1bfe order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE",
			       &ev),
			 0);
	assert_int_equal(ev.kind, RP_K_ALLOC);
	assert_true(ev.a == 0x1bfe && ev.c == 0);
	assert_int_equal(
	    parse("a-2 [001] 3.1: tlb_flush: pages:-1 reason:remote shootdown (1)", &ev), 0);
	assert_int_equal(ev.kind, RP_K_IPI);
	assert_int_equal(
	    parse("a-2 [001] 3.1: tlb_flush: pages:1 reason:local mm shootdown (3)", &ev), 0);
	assert_int_equal(ev.kind, RP_K_OTHER);
	assert_int_equal(parse("w-7 [000] 3.2: dirty: (folio_mark_dirty+0x0/0x90) folio=0x10", &ev),
			 0);
	assert_int_equal(ev.kind, RP_K_DIRTY);
	assert_int_equal(
	    parse("w-7 [000] 3.2: wp: (do_wp_page+0x0/0x3a0) mm=0xffff888000cc4000", &ev), 0);
	assert_int_equal(ev.kind, RP_K_WP);
	assert_int_equal(parse("kswapd0-25 [001] 3.3: lazy: (enter_lazy_tlb+0x0/0x1e)", &ev), 0);
	assert_int_equal(ev.kind, RP_K_LAZY);
	assert_int_equal(parse("w-7 [000] 3.2: sched_wakeup: comm=x pid=3", &ev), 0);
	assert_int_equal(ev.kind, RP_K_OTHER);
	assert_int_equal(parse("CPU:3 [LOST 1024 EVENTS]", &ev), 0);
	assert_int_equal(ev.kind, RP_K_LOST);
	assert_int_equal(ev.cpu, 3);
	assert_true(ev.a == 1024);
	assert_int_equal(parse("# tracer: nop", &ev), 0);
	assert_int_equal(ev.kind, RP_K_NONE);
	assert_int_equal(parse("", &ev), 0);
	assert_int_equal(ev.kind, RP_K_NONE);
}

static void malformed(void **state)
{
	static const char *const bad[] = {
	    "garbage",
	    "task [001] 1.0: batch:",				/* no -PID */
	    "t-1 [x] 1.0: batch:",				/* CPU not a number */
	    "t-1 [1 1.0: batch:",				/* no ] */
	    "t-1 [99999999999] 1.0: batch:",			/* CPU over 32 bits */
	    "t-1 [001] 1: batch:",				/* timestamp without '.' */
	    "t-1 [001] 1.0 batch:",				/* no ':' after the timestamp */
	    "t-1 [001] 1.0: batch",				/* no ':' after the event */
	    "t-1 [001] 1.0: unmap: folio=0x1 mm=0x2",		/* vmflags missing */
	    "t-1 [001] 1.0: unmap: folio=1 mm=0x2 vmflags=0x3", /* not hex */
	    "t-1 [001] 1.0: unmap: folio=0x10000000000000000 mm=0x2 vmflags=0x3", /* > 64 bits */
	    "t-1 [001] 1.0: switch: prev=0x1",					  /* next missing */
	    "t-1 [001] 1.0: wp: mm=",						  /* empty */
	    "t-1 [001] 1.0: mm_page_alloc: pfn=0x1",				/* order missing */
	    "t-1 [001] 1.0: mm_page_alloc: pfn=0x1 order=99999999999999999999", /* overflow */
	    "t-1 [001] 1.0: dirty: page=0x1",					/* folio missing */
	};
	struct rp_kev ev;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &ev) != -1)
			fail_msg("accepted: %s", bad[i]);
}

static void sniff(void **state)
{
	static const char k[] = "reclaim-123 [002] 6.9: batch: (try_to_unmap_flush+0x0/0x2a)";
	static const char s[] = "100 12:00:00.000001 munmap(0x7f0000000000, 4096) = 0";

	(void)state;
	assert_true(rp_kparse_sniff(k, strlen(k)));
	assert_true(rp_kparse_sniff("# tracer: nop", 13));
	assert_false(rp_kparse_sniff(s, strlen(s)));
	assert_false(rp_kparse_sniff("", 0));
}

/* A read-only page unmapped on CPU 0 of an mm on CPUs 0-1, its batch end, its reuse. */
static void model(void **state)
{
	static const char *const lines[] = {
	    "r-1 [000] 1.0: switch: (x) prev=0x1 next=0xa0",
	    "r-2 [001] 1.0: switch: (x) prev=0x1 next=0xa0",
	    "r-1 [000] 1.1: unmap: (x) folio=0xffffea0000000140 mm=0xa0 vmflags=0xd1",
	    "r-1 [000] 1.2: batch: (x)",
	    "r-2 [001] 1.3: mm_page_alloc: page=(x) pfn=0x5 order=0",
	    "r-2 [001] 1.3: tlb_flush: pages:-1 reason:remote shootdown (1)",
	};
	struct rp_kmodel *k;
	struct luf_cmp_result res;
	struct rp_kstats st;
	struct rp_kev ev;
	const char *why;

	(void)state;
	assert_int_equal(rp_kmodel_new(2, 64, &k), 0);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		assert_int_equal(parse(lines[i], &ev), 0);
		assert_int_equal(rp_kmodel_event(k, &ev, &why), 0);
	}
	rp_kmodel_finish(k, &res, &st);
	assert_int_equal(st.events[RP_K_UNMAP], 1);
	assert_int_equal(st.events[RP_K_IPI], 1);
	assert_int_equal(res.c[LUF_CMP_IMMEDIATE].received, 1); /* at the unmap */
	assert_int_equal(res.c[LUF_CMP_BATCHED].received, 1);	/* at the batch end */
	assert_int_equal(res.c[LUF_CMP_LUF].received, 1);	/* at the allocation */
	assert_int_equal(res.c[LUF_CMP_LUF].by_cause[LUF_CMP_C_REUSE], 1);
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		for (int r = 0; r < LUF_CMP_NRULES; r++)
			assert_int_equal(res.c[p].viol[r], 0);
	rp_kmodel_free(k);
	/* CPU 1 lazy at the batch end: batched does not interrupt it, luf does */
	assert_int_equal(rp_kmodel_new(2, 64, &k), 0);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		assert_int_equal(parse(lines[i], &ev), 0);
		assert_int_equal(rp_kmodel_event(k, &ev, &why), 0);
		if (i == 2) { /* after the unmap: CPU 1 runs a kernel thread */
			assert_int_equal(
			    parse("k-9 [001] 1.15: lazy: (enter_lazy_tlb+0x0/0x1e)", &ev), 0);
			assert_int_equal(rp_kmodel_event(k, &ev, &why), 0);
		}
	}
	rp_kmodel_finish(k, &res, &st);
	assert_int_equal(res.c[LUF_CMP_BATCHED].received, 0);
	assert_int_equal(res.c[LUF_CMP_LUF].received, 1);
	assert_true(res.bound_cpus <= res.c[LUF_CMP_BATCHED].cpus);
	for (int p = 0; p < LUF_CMP_NPOL; p++)
		for (int r = 0; r < LUF_CMP_NRULES; r++)
			assert_int_equal(res.c[p].viol[r], 0);
	rp_kmodel_free(k);
	/* what the model refuses */
	assert_int_equal(rp_kmodel_new(2, 64, &k), 0);
	assert_int_equal(parse("r-1 [002] 1.0: batch: (x)", &ev), 0);
	assert_int_equal(rp_kmodel_event(k, &ev, &why), -2); /* CPU 2 of 2 */
	assert_int_equal(parse("CPU:0 [LOST 5 EVENTS]", &ev), 0);
	assert_int_equal(rp_kmodel_event(k, &ev, &why), -2);
	assert_int_equal(parse("r-1 [000] 1.1: unmap: (x) folio=0x1234 mm=0xa0 vmflags=0xd1", &ev),
			 0);
	assert_int_equal(rp_kmodel_event(k, &ev, &why), -2); /* not a struct page pointer */
	assert_int_equal(
	    parse("r-1 [000] 1.1: unmap: (x) folio=0xffffea0000001000 mm=0xa0 vmflags=0x0", &ev), 0);
	assert_int_equal(rp_kmodel_event(k, &ev, &why), -2); /* pfn 64 of 64 frames */
	assert_int_equal(
	    parse("r-1 [000] 1.1: unmap: (x) folio=0xffffea0000000040 mm=0x0 vmflags=0x0", &ev), 0);
	assert_int_equal(rp_kmodel_event(k, &ev, &why), -2); /* no mm */
	assert_int_equal(parse("r-1 [000] 1.3: mm_page_alloc: page=(x) pfn=0x40 order=0", &ev), 0);
	assert_int_equal(rp_kmodel_event(k, &ev, &why), -2); /* pfn 64 of 64 frames */
	assert_int_equal(parse("r-1 [000] 1.3: mm_page_alloc: page=(x) pfn=0x3e order=1", &ev), 0);
	assert_int_equal(rp_kmodel_event(k, &ev, &why), 0); /* pfns 62 and 63 */
	assert_int_equal(parse("r-1 [000] 1.3: mm_page_alloc: page=(x) pfn=0x3f order=1", &ev), 0);
	assert_int_equal(rp_kmodel_event(k, &ev, &why), -2); /* runs past the frames */
	rp_kmodel_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(events),
	    cmocka_unit_test(malformed),
	    cmocka_unit_test(sniff),
	    cmocka_unit_test(model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
