// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_kmodel.h - a kernel trace (rp_kparse.h) replayed on the
 * policy simulator (lib/sim/luf_cmp.h), as the reclaim path does it:
 *
 *   unmap    a removal of one page from an mm by the CPU's reclaimer (one
 *            task per CPU: the kernel's current->tlb_ubc), writable if the
 *            next event of that CPU is a dirty mark of the same folio;
 *            immediate flushes it at once (ptep_clear_flush());
 *   batch    try_to_unmap_flush(): the batch end; the CPU's reclaimed
 *            frames are freed (luf: under the batch's key);
 *   alloc    the page allocator hands a frame out: luf_cmp_take(), whose
 *            luf flushes the key the frame was freed under if still owed
 *            (LUF's check of a pend folio at allocation);
 *   switch   the CPU loads another mm: a full local flush (no PCID under
 *            TCG) and the CPU joins that mm's CPUs; any switch ends lazy mode;
 *   lazy     enter_lazy_tlb(): a kernel thread or idle runs on the CPU's last
 *            mm; batched and immediate flush it without an IPI (x86 skips
 *            lazy CPUs), luf's flush interrupts it (arch_luf_flush());
 *   wp       a write fault on a read-only PTE: write permission granted in
 *            the mm (luf_abort_domain(LUF_ABORT_WRITE_FAULT)).
 * A frame is a pfn: folio pointer - VMEMMAP_START, over 64 bytes per struct
 * page (x86-64, 4-level paging, no memory randomisation: the trace kernel).
 *
 * What the model does not do as the kernel does (the explain of the
 * comparison): an mm's CPUs never shrink (x86 clears a CPU from
 * mm_cpumask when it switches away), a CPU is done only when it loads
 * another mm (the patched kernel also reports flushes that catch a CPU up
 * with its mm), and a page unmapped from several mms keeps only its newest
 * record.
 */
#ifndef RP_KMODEL_H
#define RP_KMODEL_H

#include <stdint.h>

#include "luf_cmp.h"
#include "rp_kparse.h"

#define RP_K_VMEMMAP 0xffffea0000000000ull
#define RP_K_MAX_PFN (1ul << 18) /* default frames: 1 GiB of RAM */

struct rp_kstats {
	unsigned long long events[RP_K_NR];
	unsigned long long dirty_unmaps; /* unmaps marked dirty */
	unsigned long long busy_allocs;	 /* a page allocated before its batch end */
	unsigned long long mms;
};

struct rp_kmodel;

/* Frames for pfns 0..@max_pfn - 1. Return: 0, -1 out of memory or a bad count. */
int rp_kmodel_new(unsigned int nr_cpus, unsigned long max_pfn, struct rp_kmodel **out);
void rp_kmodel_free(struct rp_kmodel *k);
struct luf_cmp *rp_kmodel_cmp(struct rp_kmodel *k);
/*
 * Apply one event. Return: 0; -1 out of memory; -2 with *@why for an event
 * the model cannot take (a CPU beyond the model's, a folio outside the
 * memory map, a lost-events mark).
 */
int rp_kmodel_event(struct rp_kmodel *k, const struct rp_kev *ev, const char **why);
/* The counts so far. */
void rp_kmodel_stats(const struct rp_kmodel *k, struct rp_kstats *st);
/* End of trace: close open batches; results and counts. */
void rp_kmodel_finish(struct rp_kmodel *k, struct luf_cmp_result *res, struct rp_kstats *st);

#endif /* RP_KMODEL_H */
