/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/upgrade.h - which removals may defer their flush, and the
 * write-upgrade abort that cancels a deferral.
 *
 * A removed translation may defer its flush only if it was read-only and
 * clean: a stale entry can then only read the old contents, which stay
 * intact while the folio sits unused (S3). A writable or dirty one is
 * flushed before the folio is freed. An inaccessible one (PROT_NONE, a
 * NUMA-hinting entry) cannot be used at all, so it owes no flush and adds
 * nothing to any set (Linux commit 4d4b6d66db, "mm,unmap: avoid flushing
 * tlb in batch if PTE is inaccessible").
 *
 * A deferral is aborted, its flush run now, before anything could make a
 * stale read-only entry observe a change (S2):
 *
 *   CPU0 (stale read-only entry for VA)   CPU1
 *                                         grant write on VA / write the folio
 *                                         by another path / move VA
 *   read VA: old contents                 VA now holds new contents
 *
 * so CPU0 would read a value CPU1 has already overwritten. The causes are
 * enum luf_abort_cause (stats.h): a write fault, a protection upgrade, a
 * write by another path (file write), poison-on-free, init-on-free, a
 * migration copy into the folio, and moving a translation (mremap,
 * migration). Source: LUF RFC v12 (luf_flush() calls in the fault,
 * mprotect, file write and migration paths).
 */
#ifndef LUF_UPGRADE_H
#define LUF_UPGRADE_H

#include "platform.h"
#include "pcpu.h"

LUF_BEGIN_DECLS

/* Present and usable (not PROT_NONE, not a NUMA-hinting entry). */
#define LUF_PTE_ACCESSIBLE 0x1u
/* Writable: its removal is flushed, never deferred (S3). */
#define LUF_PTE_WRITABLE 0x2u
/* Dirty: its removal is flushed, never deferred (S3). */
#define LUF_PTE_DIRTY 0x4u
/*
 * A protection change of this range has not flushed yet (the kernel's
 * mm_tlb_flush_pending()): CPUs may still cache more rights than the PTE
 * shows, so its bits cannot be trusted and the removal is flushed, never
 * deferred or skipped.
 */
#define LUF_PTE_FLUSH_PENDING 0x8u
/* Every LUF_PTE_* bit; luf_unmap() refuses others. */
#define LUF_PTE_ALL 0xfu

/**
 * enum luf_unmap_kind - what a removed translation owes
 * @LUF_UNMAP_NO_FLUSH: inaccessible: no CPU can use it, nothing owed
 * @LUF_UNMAP_DEFER: read-only and clean: the flush may wait
 * @LUF_UNMAP_FLUSH: writable or dirty: flush before the folio is freed
 */
enum luf_unmap_kind {
	LUF_UNMAP_NO_FLUSH,
	LUF_UNMAP_DEFER,
	LUF_UNMAP_FLUSH,
};

/**
 * luf_unmap_classify() - what a removed translation owes
 * @pte_flags: LUF_PTE_* bits of the translation as it was
 *
 * Every combination has one answer, the most conservative one it allows:
 * FLUSH_PENDING, WRITABLE or DIRTY (with or without ACCESSIBLE: a writable
 * or dirty bit on an entry reported inaccessible is contradictory, and a
 * CPU may still hold it writable) give %LUF_UNMAP_FLUSH; else ACCESSIBLE
 * gives %LUF_UNMAP_DEFER; else %LUF_UNMAP_NO_FLUSH. Bits outside
 * %LUF_PTE_ALL are ignored here and refused by luf_unmap().
 * Return: an enum luf_unmap_kind.
 */
static inline enum luf_unmap_kind luf_unmap_classify(unsigned int pte_flags)
{
	if (pte_flags & LUF_PTE_FLUSH_PENDING)
		return LUF_UNMAP_FLUSH;
#if !defined(LUF_MUTANT_DEFER_WRITABLE)
	if (pte_flags & (LUF_PTE_WRITABLE | LUF_PTE_DIRTY))
		return LUF_UNMAP_FLUSH;
#endif
	if (!(pte_flags & LUF_PTE_ACCESSIBLE))
		return LUF_UNMAP_NO_FLUSH;
	return LUF_UNMAP_DEFER;
}

/**
 * luf_can_defer() - may the flush of a removed translation wait for reuse?
 * @pte_flags: LUF_PTE_* bits of the translation as it was
 *
 * Return: true iff luf_unmap_classify() gives %LUF_UNMAP_DEFER.
 */
static inline bool luf_can_defer(unsigned int pte_flags)
{
	return luf_unmap_classify(pte_flags) == LUF_UNMAP_DEFER;
}

/**
 * luf_unmap() - record the removal of one translation, by its kind
 * @pc: this CPU's state
 * @dom: its address space, or NULL
 * @cpus: the CPUs that may cache it (l->nr_cpus bits)
 * @pte_flags: LUF_PTE_* bits it had
 *
 * Call it after the PTE is cleared and before the page-table lock that
 * covers the PTE is released (as the kernel sets tlb_flush_batched under
 * the PTL): a protection change that settles under that lock then either
 * still sees the PTE or finds the removal recorded in the domain.
 * Inaccessible: counted, nothing else. Otherwise luf_pcpu_defer(), with
 * writable set for a writable or dirty translation (flushed at the next
 * fold, never deferred past it).
 *
 * Context: as luf_pcpu_defer().
 * Return: as luf_pcpu_defer(); also -EINVAL for @pte_flags bits outside
 * %LUF_PTE_ALL (checked before anything is counted or recorded).
 */
static inline int luf_unmap(struct luf_pcpu *pc, struct luf_domain *dom, const unsigned long *cpus,
			    unsigned int pte_flags)
{
	enum luf_unmap_kind kind = luf_unmap_classify(pte_flags);

	if (!__luf_pcpu_live(pc) || !cpus || !luf_cpumask_valid(cpus, pc->luf->nr_cpus) ||
	    !__luf_domain_fits(dom, pc->luf) || (pte_flags & ~LUF_PTE_ALL))
		return -EINVAL;
	if (kind == LUF_UNMAP_NO_FLUSH) {
		__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_NO_FLUSH);
		return 0;
	}
	return luf_pcpu_defer(pc, dom, cpus, kind == LUF_UNMAP_FLUSH);
}

/**
 * luf_abort_key() - cancel the deferral of a free folio's flush
 * @pc: this CPU's state
 * @key: the folio's key (0: nothing owed)
 * @cause: why; counted in LUF_STAT_ABORT + @cause when a flush was sent
 *	and succeeded
 *
 * Flush @key's set now, before the folio is written by another path (file
 * write, poison-on-free, init-on-free, a migration copy into it).
 *
 * Context: may flush.
 * Return: 0, -EINVAL for a @pc that is not live, a bad key or cause, or
 * the flush's error (still pending: the caller must not write the folio).
 */
int luf_abort_key(struct luf_pcpu *pc, unsigned int key, enum luf_abort_cause cause);

/**
 * luf_abort_domain() - cancel the deferrals pending on an address space
 * @pc: this CPU's state
 * @dom: the domain
 * @cause: why (counted when a flush was sent and succeeded)
 *
 * Settle @dom before write permission is granted (a write fault,
 * mprotect), or a translation in it is moved (mremap, migration).
 *
 * Context: may flush.
 * Return: 0, -EINVAL for NULL, a @pc or domain that is not live, a bad
 * cause or a domain of another instance, or the flush's error (still
 * pending: the caller must not grant the write).
 */
int luf_abort_domain(struct luf_pcpu *pc, struct luf_domain *dom, enum luf_abort_cause cause);

/**
 * luf_abort_stamp() - cancel the deferrals up to a stamp on a set of CPUs
 * @pc: this CPU's state (its scratch set)
 * @cpus: the CPUs that may cache them, l->nr_cpus bits; all possible
 *	CPUs when the caller did not keep a set
 * @stamp: the newest stamp among them (luf_ugen_stamp() read after each
 *	removal was deferred), or 0 for none
 * @cause: why (counted when a flush was sent and succeeded)
 *
 * For a caller that keeps one stamp per object instead of a domain (a
 * file whose folios were unmapped, where a write must not leave a stale
 * translation of the old contents): the CPUs of @cpus that have not
 * flushed since @stamp are flushed, the others are dropped by diet.
 *
 * Context: may flush.
 * Return: 1 if it flushed, 0 if nothing needed flushing; -EINVAL for a
 * @pc that is not live, NULL @cpus, bits at or above nr_cpus or a bad
 * cause; or the flush's error (still pending: the caller must not go on
 * with the write).
 */
int luf_abort_stamp(struct luf_pcpu *pc, const unsigned long *cpus, unsigned long stamp,
		    enum luf_abort_cause cause);

/**
 * luf_upgrade_check_at() - assert that no flush is owed before write access is granted
 * @pc: this CPU's state
 * @key: a folio's key, or 0
 * @dom: a domain, or NULL
 * @file: the call site, for the LUF_DEBUG report (luf_upgrade_check() passes __FILE__)
 * @line: ... and its line (__LINE__)
 *
 * Under LUF_DEBUG a write upgrade without abort is reported with the call
 * site. Use luf_upgrade_check().
 *
 * Context: any; reads only.
 * Return: 0 if neither owes a flush; -EBUSY if one does; -EINVAL for a
 * @pc or domain that is not live, a bad key or a domain of another
 * instance.
 */
static inline int luf_upgrade_check_at(struct luf_pcpu *pc, unsigned int key,
				       const struct luf_domain *dom, const char *file, int line)
{
	int done;

	if (!__luf_pcpu_live(pc) || !__luf_domain_fits(dom, pc->luf))
		return -EINVAL;
	done = luf_keytab_check_done(pc->kt, key);
	if (done < 0)
		return done;
	if (done && (!dom || !luf_domain_pending(dom)))
		return 0;
#if defined(LUF_DEBUG)
	__luf_debug_report(pc->luf, "write-upgrade without abort (a flush is still owed)",
			   dom ? (const void *)dom : (const void *)pc, file, line);
#else
	(void)file, (void)line;
#endif
	return -EBUSY;
}

/* luf_upgrade_check_at() with the caller's __FILE__ and __LINE__: the call to use. */
#define luf_upgrade_check(pc, key, dom) luf_upgrade_check_at((pc), (key), (dom), __FILE__, __LINE__)

LUF_END_DECLS

#endif /* LUF_UPGRADE_H */
