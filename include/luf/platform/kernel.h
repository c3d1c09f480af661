/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/platform/kernel.h - the kernel platform shim: the same names as
 * platform/user.h, mapped onto kernel primitives. platform.h selects this
 * file when __KERNEL__ is defined (every Kbuild compilation).
 *
 * Shared words. luf_aulong is atomic_long_t, and every helper below is an
 * atomic_long_*() call:
 *
 *   luf_load_relaxed / luf_store_relaxed   atomic_long_read / atomic_long_set
 *                                          (READ_ONCE / WRITE_ONCE underneath)
 *   luf_load_acquire / luf_store_release   atomic_long_read_acquire /
 *                                          atomic_long_set_release
 *                                          (smp_load_acquire / smp_store_release)
 *   luf_add_return                         atomic_long_add_return (fully ordered)
 *   luf_add_relaxed                        atomic_long_add (no ordering)
 *   luf_or_relaxed / luf_andnot_relaxed    atomic_long_or / atomic_long_andnot
 *   luf_try_cmpxchg_release                atomic_long_try_cmpxchg_release
 *
 * Why atomic_long_t rather than a plain unsigned long with READ_ONCE() and
 * the scalar cmpxchg() macros: the kernel has no fully ordered fetch-and-add
 * on a plain scalar that works on every architecture (xadd() is x86 only),
 * and the atomic_long_*() family is the one that exists everywhere, is
 * instrumented for KCSAN and KASAN, and on a 32-bit kernel stays 32 bits
 * wide like unsigned long (it is atomic_t there). Its layout is one long,
 * so an array of luf_aulong has the layout of a kernel bitmap; the glue
 * (lib/kernel/luf_kernel.c) still copies a luf cpumask bit by bit into a
 * struct cpumask rather than casting, so it never depends on how many
 * words the kernel's cpumask helpers read (nr_cpumask_bits vs NR_CPUS).
 * The orders match platform/user.h exactly: relaxed = READ_ONCE/WRITE_ONCE,
 * seq_cst RMW = a fully ordered atomic_long_*_return().
 *
 * Locks. luf_lock_t is spinlock_t. luf holds it for a few word operations
 * and never nests two luf locks, so one lockdep class (taken in
 * luf_lock_init()) serves them all. It is not IRQ-safe: call the luf
 * functions that write shared sets (fold, defer, flush, settle, abort) from
 * process context, or all from one context class. The seqcount readers
 * spin while a writer holds the lock; a reader that interrupted the writer
 * on the same CPU would spin for ever, so no luf call from hardirq or NMI.
 *
 * Per-CPU storage. The core indexes done counters and statistics as arrays
 * by CPU id (d[cpu]), so they are caller storage of nr_cpu_ids entries
 * (cache-line aligned: luf_init() checks it), not DEFINE_PER_CPU variables.
 * Use DEFINE_PER_CPU / alloc_percpu() for what one CPU alone touches: its
 * struct luf_pcpu pointer, its free list, the backend's scratch cpumask.
 *
 * Assertions. LUF_BUG_ON() is WARN_ON_ONCE(): an internal invariant broken
 * in luf is reported once with a backtrace, never a panic. LUF_DEBUG misuse
 * reports go to pr_warn().
 *
 * No floating point, no VLAs, no recursion anywhere in the core headers
 * (the kernel builds with -Wvla and without FPU registers).
 */
#ifndef LUF_PLATFORM_KERNEL_H
#define LUF_PLATFORM_KERNEL_H

#if !defined(__KERNEL__)
#error "luf/platform/kernel.h is for kernel builds: include luf/platform.h (or luf/luf.h)"
#endif

#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/compiler.h>
#include <linux/cache.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/printk.h>
#include <linux/spinlock.h>
#include <asm/barrier.h>
#include <asm/processor.h>

#define LUF_BITS_PER_LONG BITS_PER_LONG
#define LUF_CACHELINE SMP_CACHE_BYTES
#define LUF_CACHE_ALIGNED __aligned(SMP_CACHE_BYTES)

#define luf_likely(x) likely(x)
#define luf_unlikely(x) unlikely(x)
#define luf_noinline_cold noinline __cold __maybe_unused

/* A word shared between CPUs. Always accessed through the helpers below. */
typedef atomic_long_t luf_aulong;

static inline unsigned long luf_load_relaxed(const luf_aulong *p)
{
	return (unsigned long)atomic_long_read(p);
}

static inline void luf_store_relaxed(luf_aulong *p, unsigned long v)
{
	atomic_long_set(p, (long)v);
}

static inline unsigned long luf_load_acquire(const luf_aulong *p)
{
	return (unsigned long)atomic_long_read_acquire(p);
}

static inline void luf_store_release(luf_aulong *p, unsigned long v)
{
	atomic_long_set_release(p, (long)v);
}

/* Fully ordered add; returns the new value (atomic_long_add_return()). */
static inline unsigned long luf_add_return(luf_aulong *p, unsigned long v)
{
	return (unsigned long)atomic_long_add_return((long)v, p);
}

/* Unordered add, for counters that order nothing (atomic_long_add()). */
static inline void luf_add_relaxed(luf_aulong *p, unsigned long v)
{
	atomic_long_add((long)v, p);
}

static inline void luf_or_relaxed(luf_aulong *p, unsigned long v)
{
	atomic_long_or((long)v, p);
}

static inline void luf_andnot_relaxed(luf_aulong *p, unsigned long v)
{
	atomic_long_andnot((long)v, p);
}

/*
 * Compare-and-swap, release on success, no ordering on failure; *old gets
 * the current value on failure. The kernel's try_cmpxchg never fails
 * spuriously, which the core's retry loop does not need but accepts.
 */
static inline bool luf_try_cmpxchg_release(luf_aulong *p, unsigned long *old, unsigned long new)
{
	long o = (long)*old;
	bool ok = atomic_long_try_cmpxchg_release(p, &o, (long)new);

	*old = (unsigned long)o;
	return ok;
}

/* smp_mb(): orders earlier loads and stores against later ones. */
static inline void luf_smp_mb(void)
{
	smp_mb();
}

/* smp_wmb(): seqcount writer, between the odd count and the data. */
static inline void luf_smp_wmb(void)
{
	smp_wmb();
}

/* smp_rmb(): seqcount reader, between the data and the count re-read. */
static inline void luf_smp_rmb(void)
{
	smp_rmb();
}

static inline void luf_cpu_relax(void)
{
	cpu_relax();
}

/*
 * One step of a seqcount reader's wait. A writer holds a spinlock, so it
 * cannot be preempted while the count is odd: plain cpu_relax() suffices.
 */
static inline void luf_spin_wait(unsigned int *spins)
{
	(void)spins;
	cpu_relax();
}

/* Writers' lock of the shared sets: a spinlock (see the comment at the top). */
typedef spinlock_t luf_lock_t;

#define LUF_LOCK_INIT __SPIN_LOCK_UNLOCKED(luf_lock)

static inline void luf_lock_init(luf_lock_t *l)
{
	spin_lock_init(l);
}

static inline void luf_lock(luf_lock_t *l)
{
	spin_lock(l);
}

static inline void luf_unlock(luf_lock_t *l)
{
	spin_unlock(l);
}

static inline unsigned int luf_popcount(unsigned long w)
{
	return (unsigned int)hweight_long(w);
}

/* Index of the lowest set bit; w must not be 0 (__ffs()). */
static inline unsigned int luf_ffs0(unsigned long w)
{
	return (unsigned int)__ffs(w);
}

/* An internal invariant broken in luf: warn once with a backtrace. */
#define LUF_BUG_ON(cond) ((void)WARN_ON_ONCE(cond))

#if defined(LUF_DEBUG)
/* Default sink of LUF_DEBUG misuse reports (luf_set_report() overrides it). */
static inline void luf_platform_report(const char *what, const void *obj, const char *file,
				       int line)
{
	pr_warn("luf: %s: %p at %s:%d\n", what, obj, file, line);
}
#endif

#endif /* LUF_PLATFORM_KERNEL_H */
