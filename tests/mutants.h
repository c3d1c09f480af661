/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/mutant.h - the safety rules that a test build may switch off.
 *
 * Never define these in a real build. Each one breaks exactly one rule of
 * the safety contract (DESIGN.md section 5) so that the tests can show they
 * notice: a check that cannot fail proves nothing.
 *
 *   LUF_MUTANT_MARK_BEFORE_FLUSH  flush.h    marks done before ops->flush
 *                                            returns, even if it fails (S1)
 *   LUF_MUTANT_DIET_EARLY         batch.h    counts a CPU one ugen behind as
 *                                            done: diet drops it, check_done
 *                                            passes (S1)
 *   LUF_MUTANT_NO_SETTLE          domain.h   luf_domain_settle() flushes
 *                                            nothing (S2)
 *   LUF_MUTANT_DEFER_WRITABLE     upgrade.h, writable or dirty translations are
 *                                 pcpu.h     deferred like read-only ones (S3)
 *   LUF_MUTANT_NO_ABORT           upgrade.h  luf_abort_key() and
 *                                            luf_abort_domain() do nothing (S2)
 *   LUF_MUTANT_UGEN_LT            ugen.h     luf_ugen_before() is a plain <,
 *                                            wrong across the wrap (S4, S1)
 *   LUF_MUTANT_DONE_RELAXED       done.h     luf_done_read() without acquire:
 *                                            a reuse is not ordered after the
 *                                            flush it relies on (S1, memory
 *                                            order; caught by ThreadSanitizer
 *                                            in tests/property/tsan_order.c,
 *                                            not by the sequential checkers)
 *
 * This header only documents them; the switches sit at the lines they
 * change, and including it in a build defines nothing.
 */
#ifndef LUF_MUTANT_H
#define LUF_MUTANT_H
#endif /* LUF_MUTANT_H */
