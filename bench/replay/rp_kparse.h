// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_kparse.h - lines of a Linux kernel trace, as tracefs's
 * trace_pipe prints them, captured by tests/kernel/capture:
 *
 *   TASK-PID [CPU] [FLAGS] SECONDS: EVENT: FIELDS
 *
 * (FLAGS, the irq-info column, may be there or not; TASK may hold spaces
 * and dashes.) The events luf-replay reads (tests/kernel/boot --trace
 * defines the kprobes):
 *
 *   unmap: (try_to_unmap_one+0x0/...) folio=0x.. mm=0x.. vmflags=0x..
 *                       reclaim or migration unmaps a folio from an mm
 *   dirty: (folio_mark_dirty+...) folio=0x..
 *                       (right after an unmap of that folio on that CPU:
 *                       the PTE was dirty)
 *   batch: (try_to_unmap_flush+...)
 *                       the end of a reclaim batch on that CPU
 *   switch: (switch_mm_irqs_off+...) prev=0x.. next=0x..
 *                       the CPU loads another address space
 *   wp: (do_wp_page+...) mm=0x..
 *                       a write fault on a present read-only PTE
 *   lazy: (enter_lazy_tlb+...)
 *                       a kernel thread or idle keeps the CPU's mm loaded
 *   mm_page_alloc: page=.. pfn=0x.. order=N ...
 *                       a page handed out (the reuse of a frame)
 *   tlb_flush: pages:N reason:remote shootdown (1)
 *                       a TLB shootdown IPI received (measured; other
 *                       reasons are local flushes and are not used)
 *
 * Other events are counted and skipped; "CPU:N [LOST M EVENTS]" (the ring
 * buffer overran) and lines starting with '#' are reported as such.
 */
#ifndef RP_KPARSE_H
#define RP_KPARSE_H

#include <stddef.h>
#include <stdint.h>

enum rp_kev_kind {
	RP_K_NONE,   /* blank line or '#' comment */
	RP_K_UNMAP,  /* a = folio, b = mm, c = vm_flags */
	RP_K_DIRTY,  /* a = folio */
	RP_K_BATCH,  /* - */
	RP_K_SWITCH, /* a = prev mm, b = next mm */
	RP_K_WP,     /* b = mm */
	RP_K_ALLOC,  /* a = pfn, c = order */
	RP_K_IPI,    /* - (a remote shootdown received on @cpu) */
	RP_K_LAZY,   /* - (@cpu enters lazy-TLB mode) */
	RP_K_LOST,   /* a = events the ring buffer lost on @cpu */
	RP_K_OTHER,  /* an event luf-replay does not use */
	RP_K_NR
};

struct rp_kev {
	enum rp_kev_kind kind;
	unsigned int cpu;
	uint64_t a, b, c;
};

/* Is @line (@len bytes) a kernel trace line (a '#' header or an event)? */
int rp_kparse_sniff(const char *line, size_t len);

/*
 * rp_kparse() - parse one line into @ev.
 * Return: 0; -1 for a malformed line, with *@why (a static string) saying
 * what was expected.
 */
int rp_kparse(const char *line, size_t len, struct rp_kev *ev, const char **why);

const char *rp_kev_name(enum rp_kev_kind k);

#endif /* RP_KPARSE_H */
