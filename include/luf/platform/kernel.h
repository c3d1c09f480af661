/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/platform/kernel.h - the kernel platform shim: the names of
 * platform/user.h mapped onto kernel primitives. platform.h selects this
 * file when __KERNEL__ is defined (every Kbuild compilation).
 *
 * Shared words are plain unsigned longs, so a luf cpumask is a kernel
 * bitmap: to_cpumask() turns a set's words into a struct cpumask and
 * cpumask_bits() the other way, with no copy. Loads and stores go through
 * READ_ONCE()/WRITE_ONCE() and smp_load_acquire()/smp_store_release(),
 * read-modify-writes through try_cmpxchg() and set_bit()/clear_bit(), so
 * KCSAN sees every access as marked. The fully ordered add is a
 * try_cmpxchg() loop: the kernel has no fetch-and-add on a plain scalar
 * on every architecture, and the two words that need one (the ugen
 * source and the key counter) are written on the flush and fold paths
 * only.
 *
 * Per-CPU data. Done counters and statistics are per-CPU variables
 * (DEFINE_PER_CPU_ALIGNED() or alloc_percpu(), annotated __percpu as
 * usual); __luf_per_cpu() is per_cpu_ptr(), and loops over CPUs visit
 * the possible ones only. A statistic is counted on the CPU that runs the
 * code (this_cpu_add()), whatever CPU id the caller's per-CPU state names.
 *
 * Locks. struct luf_lock is a raw_spinlock_t taken with interrupts
 * disabled: the seqcount readers of a shared set (check_done on the
 * allocation path) spin while the count is odd, so the writer must run to
 * the end of its section on its CPU. A reader in interrupt context that
 * interrupted the writer would spin for ever; on PREEMPT_RT a spinlock_t
 * is a sleeping lock that disables neither preemption nor interrupts, and
 * a reader that preempted its writer would spin for ever too (the kernel's
 * seqcount_spinlock_t has readers take the lock instead; luf's readers
 * must stay lock-free, in interrupt context too). Under the lock luf
 * changes a set's words and, in a diet, reads the done counter of each
 * CPU whose group lags (O(nr_cpu_ids) loads at worst, no store to a
 * shared line); it takes no other lock under it, allocates nothing,
 * prints nothing, flushes nothing and never nests two, so one lockdep
 * class serves them all.
 *
 * Reports. A failed set-up or tear-down check (an init or fini function
 * refusing its arguments) logs one ratelimited warning naming the
 * function and the check before it returns the errno (__luf_fail()).
 * LUF_DEBUG misuse reports go to pr_warn(). The slow paths are
 * exported to KUnit tests only (EXPORT_SYMBOL_IF_KUNIT()), and not at all
 * from a module's own copy; built-in callers need no export.
 */
#ifndef LUF_PLATFORM_KERNEL_H
#define LUF_PLATFORM_KERNEL_H

#if !defined(__KERNEL__)
#error "luf/platform/kernel.h is for kernel builds: include luf/platform.h"
#endif

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/processor.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <kunit/visibility.h>
#include <asm/barrier.h>

/* CONFIG_LUF_DEBUG: folio state checks and misuse reports (luf/flush.h). */
#if IS_ENABLED(CONFIG_LUF_DEBUG) && !defined(LUF_DEBUG)
#define LUF_DEBUG
#endif

#define LUF_BITS_PER_LONG BITS_PER_LONG
#define LUF_CACHELINE SMP_CACHE_BYTES
#define LUF_CACHE_ALIGNED __aligned(SMP_CACHE_BYTES)
#define __LUF_CACHELINE_TEXT "SMP_CACHE_BYTES"

/* Brackets of C++ linkage in the user-space shim: nothing in the kernel. */
#define LUF_BEGIN_DECLS
#define LUF_END_DECLS

#define luf_likely(x) likely(x)
#define luf_unlikely(x) unlikely(x)

#define __luf_per_cpu(p, cpu) per_cpu_ptr((p), (cpu))
/*
 * Statistics count on the CPU that runs the code, as vm events do, so any
 * task or interrupt may count without owning @cpu's block.
 */
#define __luf_counter_add(p, cpu, member, delta) this_cpu_add((p)->member, (delta))
#define __luf_for_each_possible_cpu(cpu, nr) for_each_possible_cpu(cpu)
#define __luf_cpu_possible(cpu, nr) cpu_possible(cpu)
#define __luf_percpu_aligned(p) IS_ALIGNED((unsigned long)(__force void *)(p), SMP_CACHE_BYTES)

static inline unsigned long __luf_read_once(const unsigned long *p)
{
	return READ_ONCE(*p);
}

static inline void __luf_write_once(unsigned long *p, unsigned long v)
{
	WRITE_ONCE(*p, v);
}

static inline unsigned long __luf_load_acquire(const unsigned long *p)
{
	/* Pairs with the writer's release; each caller names the pair. */
	return smp_load_acquire(p);
}

static inline void __luf_store_release(unsigned long *p, unsigned long v)
{
	/* Pairs with the reader's acquire; each caller names the pair. */
	smp_store_release(p, v);
}

/* Fully ordered add returning the new value: try_cmpxchg() is ordered on success. */
static inline unsigned long __luf_add_return(unsigned long *p, unsigned long v)
{
	unsigned long old = READ_ONCE(*p);

	while (!try_cmpxchg(p, &old, old + v))
		;
	return old + v;
}

/* Fully ordered *@p &= ~@mask returning the new value: try_cmpxchg() is ordered on success. */
static inline unsigned long __luf_andnot_return(unsigned long *p, unsigned long mask)
{
	unsigned long old = READ_ONCE(*p);

	while (!try_cmpxchg(p, &old, old & ~mask))
		;
	return old & ~mask;
}

static inline void __luf_add_relaxed(unsigned long *p, unsigned long v)
{
	unsigned long old = READ_ONCE(*p);

	while (!try_cmpxchg_relaxed(p, &old, old + v))
		;
}

static inline bool __luf_try_cmpxchg_release(unsigned long *p, unsigned long *old,
					     unsigned long new_val)
{
	return try_cmpxchg_release(p, old, new_val);
}

static inline void __luf_set_bit(unsigned int nr, unsigned long *addr)
{
	set_bit(nr, addr);
}

static inline void __luf_clear_bit(unsigned int nr, unsigned long *addr)
{
	clear_bit(nr, addr);
}

static inline void __luf_smp_mb(void)
{
	/* Each caller says which reordering it forbids. */
	smp_mb();
}

static inline void __luf_smp_mb__after_atomic(void)
{
	/* After a successful try_cmpxchg(): free where that is a full barrier. */
	smp_mb__after_atomic();
}

static inline void __luf_smp_wmb(void)
{
	/* The seqcount writer: the odd count before the set's words. */
	smp_wmb();
}

static inline void __luf_smp_rmb(void)
{
	/* The seqcount reader: the set's words before the count's second read. */
	smp_rmb();
}

static inline void __luf_cpu_relax(void)
{
	cpu_relax();
}

/* A writer holds a raw spinlock with interrupts off: it runs to the end, so just relax. */
static inline void __luf_spin_wait(unsigned int *spins)
{
	cpu_relax();
}

struct luf_lock {
	raw_spinlock_t lock; /* serialises the writers of one shared set */
};

static inline void __luf_lock_init(struct luf_lock *l)
{
	raw_spin_lock_init(&l->lock);
}

static inline unsigned long __luf_lock(struct luf_lock *l)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&l->lock, flags);
	return flags;
}

static inline void __luf_unlock(struct luf_lock *l, unsigned long flags)
{
	raw_spin_unlock_irqrestore(&l->lock, flags);
}

static inline unsigned int __luf_popcount(unsigned long w)
{
	return hweight_long(w);
}

static inline unsigned int __luf_ffs(unsigned long w)
{
	return __ffs(w);
}

/*
 * lib/<concept>.c: LUF_EXPORT(fn); after each slow path. Built in, luf exports
 * its slow paths to KUnit tests only. A module that carries its own copy of
 * luf (the out-of-tree self-test) exports nothing: its names would clash with
 * the exports of a kernel that has luf built in.
 */
#if defined(MODULE)
#define LUF_EXPORT(fn)
#else
#define LUF_EXPORT EXPORT_SYMBOL_IF_KUNIT
#endif

/*
 * A set-up or tear-down check failed: log which one and return @err.
 * @fn is the caller's __func__, @what names the parameter and the rule
 * ("@kt belongs to another struct luf"). Only init and fini functions
 * call it, never a fast path; ratelimited, as a caller may retry in a
 * loop. (User space keeps the line per thread for luf_last_error().)
 */
static inline int __luf_fail(int err, const char *fn, const char *what)
{
	pr_warn_ratelimited("luf: %s: %s\n", fn, what);
	return err;
}

#if defined(LUF_DEBUG)
static inline void __luf_platform_report(const char *what, const void *obj, const char *file,
					 int line)
{
	pr_warn("luf: %s: %p at %s:%d\n", what, obj, file, line);
}
#endif

#endif /* LUF_PLATFORM_KERNEL_H */
