/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/api.h - the API as libluf's exported symbols (the liburcu pattern of
 * one API with inline and linked variants, selected by one define).
 *
 * luf.h includes this file twice when LUF_LINKED (a program linking libluf)
 * or LUF_BUILDING_LIB (libluf itself) is defined:
 *   1. before the core headers: each exported name is renamed to
 *      <name>_inline, so the headers' static inline bodies take that name;
 *   2. after them: the renames are dropped and each name is declared as an
 *      extern function. libluf defines it by calling the inline body
 *      (lib/luf.c, through LUF_API_LIST below).
 * Functions not listed stay static inline in both uses. LUF_DEBUG changes
 * struct luf_folio: a program must use the mode libluf was built in.
 */
#if !defined(LUF_API_PHASE)
#define LUF_API_PHASE 1

#define luf_ugen_before luf_ugen_before_inline
#define luf_ugen_newer luf_ugen_newer_inline
#define luf_ugen_src_init luf_ugen_src_init_inline
#define luf_ugen_current luf_ugen_current_inline
#define luf_ugen_new luf_ugen_new_inline
#define luf_ugen_stamp luf_ugen_stamp_inline
#define luf_cpumask_size luf_cpumask_size_inline
#define luf_cpumask_clear luf_cpumask_clear_inline
#define luf_cpumask_set_cpu luf_cpumask_set_cpu_inline
#define luf_cpumask_clear_cpu luf_cpumask_clear_cpu_inline
#define luf_cpumask_test_cpu luf_cpumask_test_cpu_inline
#define luf_cpumask_copy luf_cpumask_copy_inline
#define luf_cpumask_or luf_cpumask_or_inline
#define luf_cpumask_and luf_cpumask_and_inline
#define luf_cpumask_andnot luf_cpumask_andnot_inline
#define luf_cpumask_weight luf_cpumask_weight_inline
#define luf_cpumask_empty luf_cpumask_empty_inline
#define luf_cpumask_equal luf_cpumask_equal_inline
#define luf_cpumask_subset luf_cpumask_subset_inline
#define luf_cpumask_next luf_cpumask_next_inline
#define luf_done_size luf_done_size_inline
#define luf_done_init luf_done_init_inline
#define luf_done_read luf_done_read_inline
#define luf_done_mark luf_done_mark_inline
#define luf_batch_size luf_batch_size_inline
#define luf_batch_init luf_batch_init_inline
#define luf_batch_clear luf_batch_clear_inline
#define luf_batch_empty luf_batch_empty_inline
#define luf_batch_add luf_batch_add_inline
#define luf_batch_fold luf_batch_fold_inline
#define luf_batch_copy luf_batch_copy_inline
#define luf_batch_equal luf_batch_equal_inline
#define luf_batch_check_done luf_batch_check_done_inline
#define luf_batch_diet luf_batch_diet_inline
#define luf_stats_size luf_stats_size_inline
#define luf_stats_init luf_stats_init_inline
#define luf_stats_sum luf_stats_sum_inline
#define luf_init luf_init_inline
#define luf_flush_batch luf_flush_batch_inline
#define luf_set_report luf_set_report_inline
#define luf_flush_received luf_flush_received_inline
#define luf_keytab_size luf_keytab_size_inline
#define luf_keytab_init luf_keytab_init_inline
#define luf_keytab_new_key luf_keytab_new_key_inline
#define luf_keytab_check_done luf_keytab_check_done_inline
#define luf_keytab_fold luf_keytab_fold_inline
#define luf_domain_size luf_domain_size_inline
#define luf_domain_init luf_domain_init_inline
#define luf_domain_pending luf_domain_pending_inline
#define luf_domain_settle luf_domain_settle_inline
#define luf_pcpu_size luf_pcpu_size_inline
#define luf_pcpu_init luf_pcpu_init_inline
#define luf_pcpu_defer luf_pcpu_defer_inline
#define luf_pcpu_fold luf_pcpu_fold_inline
#define luf_key_flush luf_key_flush_inline
#define luf_freelist_size luf_freelist_size_inline
#define luf_freelist_init luf_freelist_init_inline
#define luf_free_at luf_free_at_inline
#define luf_alloc_at luf_alloc_at_inline
#define luf_freelist_nr_clean luf_freelist_nr_clean_inline
#define luf_freelist_nr_pend luf_freelist_nr_pend_inline
#define luf_unmap_classify luf_unmap_classify_inline
#define luf_can_defer luf_can_defer_inline
#define luf_unmap luf_unmap_inline
#define luf_abort_key luf_abort_key_inline
#define luf_abort_domain luf_abort_domain_inline
#define luf_upgrade_check_at luf_upgrade_check_at_inline

#elif LUF_API_PHASE == 1
#undef LUF_API_PHASE
#define LUF_API_PHASE 2

#undef luf_ugen_before
#undef luf_ugen_newer
#undef luf_ugen_src_init
#undef luf_ugen_current
#undef luf_ugen_new
#undef luf_ugen_stamp
#undef luf_cpumask_size
#undef luf_cpumask_clear
#undef luf_cpumask_set_cpu
#undef luf_cpumask_clear_cpu
#undef luf_cpumask_test_cpu
#undef luf_cpumask_copy
#undef luf_cpumask_or
#undef luf_cpumask_and
#undef luf_cpumask_andnot
#undef luf_cpumask_weight
#undef luf_cpumask_empty
#undef luf_cpumask_equal
#undef luf_cpumask_subset
#undef luf_cpumask_next
#undef luf_done_size
#undef luf_done_init
#undef luf_done_read
#undef luf_done_mark
#undef luf_batch_size
#undef luf_batch_init
#undef luf_batch_clear
#undef luf_batch_empty
#undef luf_batch_add
#undef luf_batch_fold
#undef luf_batch_copy
#undef luf_batch_equal
#undef luf_batch_check_done
#undef luf_batch_diet
#undef luf_stats_size
#undef luf_stats_init
#undef luf_stats_sum
#undef luf_init
#undef luf_flush_batch
#undef luf_set_report
#undef luf_flush_received
#undef luf_keytab_size
#undef luf_keytab_init
#undef luf_keytab_new_key
#undef luf_keytab_check_done
#undef luf_keytab_fold
#undef luf_domain_size
#undef luf_domain_init
#undef luf_domain_pending
#undef luf_domain_settle
#undef luf_pcpu_size
#undef luf_pcpu_init
#undef luf_pcpu_defer
#undef luf_pcpu_fold
#undef luf_key_flush
#undef luf_freelist_size
#undef luf_freelist_init
#undef luf_free_at
#undef luf_alloc_at
#undef luf_freelist_nr_clean
#undef luf_freelist_nr_pend
#undef luf_unmap_classify
#undef luf_can_defer
#undef luf_unmap
#undef luf_abort_key
#undef luf_abort_domain
#undef luf_upgrade_check_at

#if defined(__GNUC__)
#define LUF_EXPORT __attribute__((visibility("default")))
#else
#define LUF_EXPORT
#endif

/*
 * LUF_API(return type, name, (parameters), (arguments), return-or-nothing)
 * for every exported function.
 */
#define LUF_API_LIST(LUF_API) \
	LUF_API(bool, luf_ugen_before, (luf_ugen_t a, luf_ugen_t b), (a, b), return) \
	LUF_API(luf_ugen_t, luf_ugen_newer, (luf_ugen_t a, luf_ugen_t b), (a, b), return) \
	LUF_API(void, luf_ugen_src_init, (struct luf_ugen_src *src, luf_ugen_t start), (src, start), ) \
	LUF_API(luf_ugen_t, luf_ugen_current, (const struct luf_ugen_src *src), (src), return) \
	LUF_API(luf_ugen_t, luf_ugen_new, (struct luf_ugen_src *src), (src), return) \
	LUF_API(luf_ugen_t, luf_ugen_stamp, (const struct luf_ugen_src *src), (src), return) \
	LUF_API(size_t, luf_cpumask_size, (unsigned int nr_cpus), (nr_cpus), return) \
	LUF_API(void, luf_cpumask_clear, (luf_aulong *m, unsigned int nr_cpus), (m, nr_cpus), ) \
	LUF_API(int, luf_cpumask_set_cpu, (luf_aulong *m, unsigned int nr_cpus, unsigned int cpu), (m, nr_cpus, cpu), return) \
	LUF_API(int, luf_cpumask_clear_cpu, (luf_aulong *m, unsigned int nr_cpus, unsigned int cpu), (m, nr_cpus, cpu), return) \
	LUF_API(bool, luf_cpumask_test_cpu, (const luf_aulong *m, unsigned int nr_cpus, unsigned int cpu), (m, nr_cpus, cpu), return) \
	LUF_API(void, luf_cpumask_copy, (luf_aulong *dst, const luf_aulong *src, unsigned int nr_cpus), (dst, src, nr_cpus), ) \
	LUF_API(void, luf_cpumask_or, (luf_aulong *dst, const luf_aulong *src, unsigned int nr_cpus), (dst, src, nr_cpus), ) \
	LUF_API(void, luf_cpumask_and, (luf_aulong *dst, const luf_aulong *src, unsigned int nr_cpus), (dst, src, nr_cpus), ) \
	LUF_API(void, luf_cpumask_andnot, (luf_aulong *dst, const luf_aulong *src, unsigned int nr_cpus), (dst, src, nr_cpus), ) \
	LUF_API(unsigned int, luf_cpumask_weight, (const luf_aulong *m, unsigned int nr_cpus), (m, nr_cpus), return) \
	LUF_API(bool, luf_cpumask_empty, (const luf_aulong *m, unsigned int nr_cpus), (m, nr_cpus), return) \
	LUF_API(bool, luf_cpumask_equal, (const luf_aulong *a, const luf_aulong *b, unsigned int nr_cpus), (a, b, nr_cpus), return) \
	LUF_API(bool, luf_cpumask_subset, (const luf_aulong *sub, const luf_aulong *super, unsigned int nr_cpus), (sub, super, nr_cpus), return) \
	LUF_API(unsigned int, luf_cpumask_next, (const luf_aulong *m, unsigned int nr_cpus, unsigned int cpu), (m, nr_cpus, cpu), return) \
	LUF_API(size_t, luf_done_size, (unsigned int nr_cpus), (nr_cpus), return) \
	LUF_API(void, luf_done_init, (struct luf_done_cpu *d, unsigned int nr_cpus, luf_ugen_t start), (d, nr_cpus, start), ) \
	LUF_API(luf_ugen_t, luf_done_read, (const struct luf_done_cpu *d, unsigned int cpu), (d, cpu), return) \
	LUF_API(unsigned long, luf_done_mark, (struct luf_done_cpu *d, const luf_aulong *cpus, unsigned int nr_cpus, luf_ugen_t ugen), (d, cpus, nr_cpus, ugen), return) \
	LUF_API(size_t, luf_batch_size, (unsigned int nr_cpus), (nr_cpus), return) \
	LUF_API(int, luf_batch_init, (struct luf_batch *b, unsigned int nr_cpus), (b, nr_cpus), return) \
	LUF_API(void, luf_batch_clear, (struct luf_batch *b), (b), ) \
	LUF_API(bool, luf_batch_empty, (const struct luf_batch *b), (b), return) \
	LUF_API(int, luf_batch_add, (struct luf_batch *b, const luf_aulong *cpus, luf_ugen_t ugen, bool writable), (b, cpus, ugen, writable), return) \
	LUF_API(int, luf_batch_fold, (struct luf_batch *dst, const struct luf_batch *src), (dst, src), return) \
	LUF_API(int, luf_batch_copy, (struct luf_batch *dst, const struct luf_batch *src), (dst, src), return) \
	LUF_API(bool, luf_batch_equal, (const struct luf_batch *a, const struct luf_batch *b), (a, b), return) \
	LUF_API(bool, luf_batch_check_done, (const struct luf_batch *b, const struct luf_done_cpu *d), (b, d), return) \
	LUF_API(unsigned int, luf_batch_diet, (struct luf_batch *b, const struct luf_done_cpu *d), (b, d), return) \
	LUF_API(size_t, luf_stats_size, (unsigned int nr_cpus), (nr_cpus), return) \
	LUF_API(void, luf_stats_init, (struct luf_stats_cpu *s, unsigned int nr_cpus), (s, nr_cpus), ) \
	LUF_API(long, luf_stats_sum, (const struct luf_stats_cpu *s, unsigned int nr_cpus, enum luf_stat_item item), (s, nr_cpus, item), return) \
	LUF_API(int, luf_init, (struct luf *l, const struct luf_arch_ops *ops, void *arch, struct luf_done_cpu *done, struct luf_stats_cpu *stats, luf_ugen_t start), (l, ops, arch, done, stats, start), return) \
	LUF_API(int, luf_flush_batch, (struct luf *l, unsigned int cpu, struct luf_batch *b), (l, cpu, b), return) \
	LUF_API(void, luf_set_report, (struct luf *l, luf_report_fn *fn), (l, fn), ) \
	LUF_API(unsigned long, luf_flush_received, (const struct luf *l, unsigned int cpu), (l, cpu), return) \
	LUF_API(size_t, luf_keytab_size, (unsigned int nr_keys, unsigned int nr_cpus), (nr_keys, nr_cpus), return) \
	LUF_API(int, luf_keytab_init, (struct luf_keytab *kt, unsigned int nr_keys, unsigned int nr_cpus), (kt, nr_keys, nr_cpus), return) \
	LUF_API(luf_key_t, luf_keytab_new_key, (struct luf_keytab *kt), (kt), return) \
	LUF_API(int, luf_keytab_check_done, (const struct luf_keytab *kt, unsigned int key, const struct luf_done_cpu *d), (kt, key, d), return) \
	LUF_API(int, luf_keytab_fold, (struct luf_keytab *kt, unsigned int key, const struct luf_batch *src, const struct luf_done_cpu *d), (kt, key, src, d), return) \
	LUF_API(size_t, luf_domain_size, (unsigned int nr_cpus), (nr_cpus), return) \
	LUF_API(int, luf_domain_init, (struct luf_domain *dom, unsigned int nr_cpus), (dom, nr_cpus), return) \
	LUF_API(bool, luf_domain_pending, (const struct luf_domain *dom, const struct luf_done_cpu *d), (dom, d), return) \
	LUF_API(int, luf_domain_settle, (struct luf *l, unsigned int cpu, struct luf_domain *dom, struct luf_batch *scratch), (l, cpu, dom, scratch), return) \
	LUF_API(size_t, luf_pcpu_size, (unsigned int nr_cpus), (nr_cpus), return) \
	LUF_API(int, luf_pcpu_init, (struct luf_pcpu *pc, struct luf *l, struct luf_keytab *kt, unsigned int cpu, unsigned int threshold), (pc, l, kt, cpu, threshold), return) \
	LUF_API(int, luf_pcpu_defer, (struct luf_pcpu *pc, struct luf_domain *dom, const luf_aulong *cpus, bool writable), (pc, dom, cpus, writable), return) \
	LUF_API(int, luf_pcpu_fold, (struct luf_pcpu *pc, luf_key_t *key), (pc, key), return) \
	LUF_API(int, luf_key_flush, (struct luf_pcpu *pc, unsigned int key), (pc, key), return) \
	LUF_API(size_t, luf_freelist_size, (unsigned int nr_cpus), (nr_cpus), return) \
	LUF_API(int, luf_freelist_init, (struct luf_freelist *fl, struct luf *l, struct luf_keytab *kt, unsigned long reserve), (fl, l, kt, reserve), return) \
	LUF_API(int, luf_free_at, (struct luf_freelist *fl, struct luf_pcpu *pc, struct luf_folio *f, unsigned int key, const char *file, int line), (fl, pc, f, key, file, line), return) \
	LUF_API(int, luf_alloc_at, (struct luf_freelist *fl, struct luf_pcpu *pc, unsigned int flags, struct luf_folio **out, const char *file, int line), (fl, pc, flags, out, file, line), return) \
	LUF_API(unsigned long, luf_freelist_nr_clean, (const struct luf_freelist *fl), (fl), return) \
	LUF_API(unsigned long, luf_freelist_nr_pend, (const struct luf_freelist *fl), (fl), return) \
	LUF_API(enum luf_unmap_kind, luf_unmap_classify, (unsigned int pte_flags), (pte_flags), return) \
	LUF_API(bool, luf_can_defer, (unsigned int pte_flags), (pte_flags), return) \
	LUF_API(int, luf_unmap, (struct luf_pcpu *pc, struct luf_domain *dom, const luf_aulong *cpus, unsigned int pte_flags), (pc, dom, cpus, pte_flags), return) \
	LUF_API(int, luf_abort_key, (struct luf_pcpu *pc, unsigned int key, enum luf_abort_cause cause), (pc, key, cause), return) \
	LUF_API(int, luf_abort_domain, (struct luf_pcpu *pc, struct luf_domain *dom, enum luf_abort_cause cause), (pc, dom, cause), return) \
	LUF_API(int, luf_upgrade_check_at, (struct luf_pcpu *pc, unsigned int key, const struct luf_domain *dom, const char *file, int line), (pc, key, dom, file, line), return)

#define LUF_API_DECLARE(ret, name, params, args, r) LUF_EXPORT ret name params;
LUF_API_LIST(LUF_API_DECLARE)
#undef LUF_API_DECLARE

#endif /* LUF_API_PHASE */
