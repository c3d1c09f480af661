/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/platform/user.h - the user-space platform shim: C11 <stdatomic.h>,
 * sched_yield() for contended spinning, errno constants.
 *
 * Every core header reaches the machine only through the names defined
 * here (and in platform/kernel.h for the kernel). Shared words are
 * luf_aulong: C11 atomics accessed with explicit memory orders, so that
 * the lockless readers (seqcount readers, check_done) are data-race free
 * in the C11 sense and ThreadSanitizer-clean. On x86-64 a relaxed atomic
 * load or store compiles to a plain mov: the fast paths pay nothing for it.
 */
#ifndef LUF_PLATFORM_USER_H
#define LUF_PLATFORM_USER_H

#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#error "luf needs a C11 compiler (-std=c11 or later)"
#endif
#if defined(__STDC_NO_ATOMICS__)
#error "luf needs C11 atomics (<stdatomic.h>); this compiler has none"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>

/* Bits in an unsigned long, the word of cpumasks. */
#define LUF_BITS_PER_LONG (sizeof(unsigned long) * CHAR_BIT)
/* Bytes in a cache line: the alignment and padding unit of per-CPU data. */
#define LUF_CACHELINE 64
/* Start a member or variable on its own cache line. */
#define LUF_CACHE_ALIGNED _Alignas(LUF_CACHELINE)

/* Branch hints (the kernel's likely() and unlikely()). */
#define luf_likely(x) __builtin_expect(!!(x), 1)
/* Branch hint: @x is rarely true. */
#define luf_unlikely(x) __builtin_expect(!!(x), 0)
/* A slow path kept out of line, so the fast path around it inlines. */
#define luf_noinline_cold __attribute__((noinline, cold, unused))

/* A word shared between CPUs. Always accessed through the helpers below. */
typedef _Atomic unsigned long luf_aulong;

/* Load *@p, ordering nothing (READ_ONCE()). */
static inline unsigned long luf_load_relaxed(const luf_aulong *p)
{
	return atomic_load_explicit((luf_aulong *)p, memory_order_relaxed);
}

/* Store @v to *@p, ordering nothing (WRITE_ONCE()). */
static inline void luf_store_relaxed(luf_aulong *p, unsigned long v)
{
	atomic_store_explicit(p, v, memory_order_relaxed);
}

/* Load *@p; later loads and stores stay after it (smp_load_acquire()). */
static inline unsigned long luf_load_acquire(const luf_aulong *p)
{
	return atomic_load_explicit((luf_aulong *)p, memory_order_acquire);
}

/* Store @v to *@p; earlier loads and stores stay before it (smp_store_release()). */
static inline void luf_store_release(luf_aulong *p, unsigned long v)
{
	atomic_store_explicit(p, v, memory_order_release);
}

/* Fully ordered fetch-and-add; returns the new value (like atomic_long_add_return()). */
static inline unsigned long luf_add_return(luf_aulong *p, unsigned long v)
{
	return atomic_fetch_add_explicit(p, v, memory_order_seq_cst) + v;
}

/* Relaxed fetch-and-add, for counters that order nothing. */
static inline void luf_add_relaxed(luf_aulong *p, unsigned long v)
{
	atomic_fetch_add_explicit(p, v, memory_order_relaxed);
}

/* Relaxed atomic *p |= v and *p &= ~v, for bits that several CPUs set or clear. */
static inline void luf_or_relaxed(luf_aulong *p, unsigned long v)
{
	atomic_fetch_or_explicit(p, v, memory_order_relaxed);
}

/* Relaxed atomic *@p &= ~@v. */
/* Relaxed atomic *@p &= ~@v. */
static inline void luf_andnot_relaxed(luf_aulong *p, unsigned long v)
{
	atomic_fetch_and_explicit(p, ~v, memory_order_relaxed);
}

/*
 * Compare-and-swap with release semantics on success (publishes what the
 * caller did before, e.g. a completed flush) and relaxed on failure; *old is
 * updated with the current value on failure, like try_cmpxchg_release().
 */
static inline bool luf_try_cmpxchg_release(luf_aulong *p, unsigned long *old, unsigned long new)
{
	return atomic_compare_exchange_weak_explicit(p, old, new, memory_order_release,
						     memory_order_relaxed);
}

/* Full barrier (smp_mb()): orders earlier loads and stores against later ones. */
static inline void luf_smp_mb(void)
{
	atomic_thread_fence(memory_order_seq_cst);
}

/* Write barrier between the two seqcount increments and the data (smp_wmb()). */
static inline void luf_smp_wmb(void)
{
	atomic_thread_fence(memory_order_release);
}

/* Read barrier for seqcount readers before re-reading the count (smp_rmb()). */
static inline void luf_smp_rmb(void)
{
	atomic_thread_fence(memory_order_acquire);
}

/* Spin-wait hint to the CPU (pause / yield), as the kernel's cpu_relax(). */
/* Spin-wait hint to the CPU (pause / yield), as the kernel's cpu_relax(). */
static inline void luf_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/*
 * A small test-and-test-and-set lock for the short writer sections of the
 * key table and the domains (a few word operations each). After a bounded
 * spin it yields the processor: in user space the holder may be preempted,
 * and with more threads than cores pure spinning would burn the holder's
 * time slice. The kernel shim maps this onto spinlock_t.
 */
typedef struct {
	atomic_int v; /* 0: free, 1: held */
} luf_lock_t;

/* Static initialiser of an unlocked luf_lock_t. */
#define LUF_LOCK_INIT \
	{             \
		0     \
	}

/* Set up @l unlocked. */
/* Set up @l unlocked. */
static inline void luf_lock_init(luf_lock_t *l)
{
	atomic_init(&l->v, 0);
}

/* One step of a bounded spin: pause 128 times, then yield the processor. */
static inline void luf_spin_wait(unsigned int *spins)
{
	if (++*spins < 128)
		luf_cpu_relax();
	else
		sched_yield();
}

/* Take @l (acquire): spin briefly, then yield until it is free. */
static inline void luf_lock(luf_lock_t *l)
{
	unsigned int spins = 0;

	for (;;) {
		if (!atomic_exchange_explicit(&l->v, 1, memory_order_acquire))
			return;
		while (atomic_load_explicit(&l->v, memory_order_relaxed))
			luf_spin_wait(&spins);
	}
}

/* Release @l (release ordering). */
/* Release @l (release ordering). */
static inline void luf_unlock(luf_lock_t *l)
{
	atomic_store_explicit(&l->v, 0, memory_order_release);
}

/* Number of set bits in @w. */
/* Number of set bits in @w. */
static inline unsigned int luf_popcount(unsigned long w)
{
	return (unsigned int)__builtin_popcountl(w);
}

/* Index of the lowest set bit; w must not be 0. */
static inline unsigned int luf_ffs0(unsigned long w)
{
	return (unsigned int)__builtin_ctzl(w);
}

/* Assertion of an internal invariant: a bug in luf, never bad input. */
#if defined(LUF_DEBUG)
#include <stdio.h>
#include <stdlib.h>
static inline void luf_platform_report(const char *what, const void *obj, const char *file,
				       int line)
{
	fprintf(stderr, "luf: %s: %p at %s:%d\n", what, obj, file, line);
}

#define LUF_BUG_ON(cond)                                                                       \
	do {                                                                                   \
		if (luf_unlikely(cond)) {                                                      \
			fprintf(stderr, "luf: BUG at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                               \
		}                                                                              \
	} while (0)
#else
#define LUF_BUG_ON(cond) ((void)0)
#endif

#endif /* LUF_PLATFORM_USER_H */
