/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/platform/user.h - the user-space platform shim: GCC and Clang
 * __atomic builtins on plain words, sched_yield() while a lock holder
 * may be preempted, errno constants.
 *
 * Every core header reaches the machine only through the names defined
 * here (and in platform/kernel.h for the kernel); they are internal
 * (__luf_*) except the few constants and macros a caller sizes storage
 * with. Shared words are plain unsigned longs, accessed only through the
 * helpers below with an explicit memory order: the lockless readers
 * (seqcount readers, check_done) are then data-race free for the
 * compiler and for ThreadSanitizer, which understands the builtins, and
 * the same words are kernel bitmaps on the other side of the shim. On
 * x86-64 a relaxed load or store is a plain mov: the fast paths pay
 * nothing for it.
 */
#ifndef LUF_PLATFORM_USER_H
#define LUF_PLATFORM_USER_H

#if !defined(__GNUC__)
#error "luf needs GCC or Clang (their __atomic builtins)"
#endif

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#if !defined(__cplusplus)
#include <stdbool.h>
#endif

/*
 * LUF_BEGIN_DECLS ... LUF_END_DECLS bracket the declarations of every luf
 * header (platform/kernel.h defines them empty). In C they are nothing. In
 * C++ they give luf's functions C linkage, and let the one C99 construct a
 * header keeps, the flexible array member of struct luf_batch (same layout
 * as in C), pass without a pedantic warning: GCC has no narrower switch for
 * it than -Wpedantic, Clang has -Wc99-extensions.
 */
#if defined(__cplusplus) && defined(__clang__)
#define LUF_BEGIN_DECLS								\
	_Pragma("clang diagnostic push")					\
	_Pragma("clang diagnostic ignored \"-Wc99-extensions\"")		\
	extern "C" {
#define LUF_END_DECLS } _Pragma("clang diagnostic pop")
#elif defined(__cplusplus)
#define LUF_BEGIN_DECLS								\
	_Pragma("GCC diagnostic push")						\
	_Pragma("GCC diagnostic ignored \"-Wpedantic\"")			\
	extern "C" {
#define LUF_END_DECLS } _Pragma("GCC diagnostic pop")
#else
/* Opens the declarations of a luf header: extern "C" { in C++, nothing in C. */
#define LUF_BEGIN_DECLS
/* Closes the declarations LUF_BEGIN_DECLS opened: } in C++, nothing in C. */
#define LUF_END_DECLS
#endif

/* Bits in an unsigned long, the word of cpumasks. */
#define LUF_BITS_PER_LONG (__SIZEOF_LONG__ * 8u)
/* Bytes in a cache line: the alignment and padding unit of per-CPU data. */
#define LUF_CACHELINE 64
/* The alignment rule as set-up failures name it (luf/error.h). */
#define __LUF_CACHELINE_TEXT "LUF_CACHELINE (64 bytes)"
/* Start a member or variable on its own cache line. */
#define LUF_CACHE_ALIGNED __attribute__((aligned(LUF_CACHELINE)))
/* Marks per-CPU storage (the kernel's own annotation); an array indexed by CPU id here. */
#if !defined(__percpu)
#define __percpu
#endif

/* Branch hint: @x is usually true (the kernel's likely()). */
#define luf_likely(x) __builtin_expect(!!(x), 1)
/* Branch hint: @x is rarely true. */
#define luf_unlikely(x) __builtin_expect(!!(x), 0)

/* CPU @cpu's element of per-CPU storage @p (per_cpu_ptr() in the kernel). */
#define __luf_per_cpu(p, cpu) (&(p)[cpu])
/*
 * Add @delta to @member of CPU @cpu's element of @p: a relaxed load and
 * store by the element's owner (the kernel counts on the running CPU).
 */
#define __luf_counter_add(p, cpu, member, delta)         \
	__luf_write_once(&__luf_per_cpu(p, cpu)->member, \
			 __luf_read_once(&__luf_per_cpu(p, cpu)->member) + (unsigned long)(delta))
/* Iterate @cpu over the CPU ids that may exist, 0 .. @nr - 1. */
#define __luf_for_each_possible_cpu(cpu, nr) for ((cpu) = 0; (cpu) < (nr); (cpu)++)
/* True iff CPU id @cpu may exist (below @nr here; cpu_possible() in a kernel). */
#define __luf_cpu_possible(cpu, nr) ((cpu) < (nr))
/* True iff per-CPU storage @p starts on a cache line (storage rule of luf_init()). */
#define __luf_percpu_aligned(p) (((uintptr_t)(p) % LUF_CACHELINE) == 0)

/* Load *@p, ordering nothing (READ_ONCE()). */
static inline unsigned long __luf_read_once(const unsigned long *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Store @v to *@p, ordering nothing (WRITE_ONCE()). */
static inline void __luf_write_once(unsigned long *p, unsigned long v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Load *@p; later loads and stores stay after it (smp_load_acquire()). */
static inline unsigned long __luf_load_acquire(const unsigned long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Store @v to *@p; earlier loads and stores stay before it (smp_store_release()). */
static inline void __luf_store_release(unsigned long *p, unsigned long v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Fully ordered add; returns the new value (atomic_long_add_return()). */
static inline unsigned long __luf_add_return(unsigned long *p, unsigned long v)
{
	return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST);
}

/* Unordered atomic add, for counters that order nothing. */
static inline void __luf_add_relaxed(unsigned long *p, unsigned long v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/*
 * Compare-and-swap, release on success (it publishes what the caller did
 * before, e.g. a completed flush), relaxed on failure; *@old gets the
 * current value on failure (try_cmpxchg_release()).
 */
static inline bool __luf_try_cmpxchg_release(unsigned long *p, unsigned long *old,
					     unsigned long new_val)
{
	return __atomic_compare_exchange_n(p, old, new_val, true, __ATOMIC_RELEASE,
					   __ATOMIC_RELAXED);
}

/*
 * Full barrier after a successful atomic read-modify-write
 * (smp_mb__after_atomic()): on x86 the locked instruction is one already.
 */
static inline void __luf_smp_mb__after_atomic(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* Fully ordered *@p &= ~@mask, returning the new value (atomic_long_andnot_return()). */
static inline unsigned long __luf_andnot_return(unsigned long *p, unsigned long mask)
{
	return __atomic_and_fetch(p, ~mask, __ATOMIC_SEQ_CST);
}

/* Atomically set bit @nr of the bitmap at @addr (set_bit()); orders nothing. */
static inline void __luf_set_bit(unsigned int nr, unsigned long *addr)
{
	__atomic_fetch_or(&addr[nr / LUF_BITS_PER_LONG], 1UL << (nr % LUF_BITS_PER_LONG),
			  __ATOMIC_RELAXED);
}

/* Atomically clear bit @nr of the bitmap at @addr (clear_bit()); orders nothing. */
static inline void __luf_clear_bit(unsigned int nr, unsigned long *addr)
{
	__atomic_fetch_and(&addr[nr / LUF_BITS_PER_LONG], ~(1UL << (nr % LUF_BITS_PER_LONG)),
			   __ATOMIC_RELAXED);
}

/* Full barrier (smp_mb()): orders earlier loads and stores against later ones. */
static inline void __luf_smp_mb(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Write barrier (smp_wmb()): earlier stores before later stores. */
static inline void __luf_smp_wmb(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* Read barrier (smp_rmb()): earlier loads before later loads. */
static inline void __luf_smp_rmb(void)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/* Spin-wait hint to the CPU (pause, yield), as the kernel's cpu_relax(). */
static inline void __luf_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/*
 * One step of a bounded spin: pause 128 times, then yield the processor.
 * In user space the thread we wait for may be preempted, and with more
 * threads than cores pure spinning would burn its time slice.
 */
static inline void __luf_spin_wait(unsigned int *spins)
{
	if (++*spins < 128)
		__luf_cpu_relax();
	else
		sched_yield();
}

/*
 * The writers' lock of the shared sets (a few word operations each): a
 * test-and-test-and-set lock that spins briefly, then yields. The kernel
 * shim maps it onto spinlock_t with interrupts disabled.
 */
struct luf_lock {
	unsigned long v; /* 0: free, 1: held */
};

/* Set up @l unlocked. */
static inline void __luf_lock_init(struct luf_lock *l)
{
	__luf_write_once(&l->v, 0);
}

/* Take @l (acquire). Returns the flags for __luf_unlock() (0 here). */
static inline unsigned long __luf_lock(struct luf_lock *l)
{
	unsigned int spins = 0;

	for (;;) {
		if (!__atomic_exchange_n(&l->v, 1UL, __ATOMIC_ACQUIRE))
			return 0;
		while (__luf_read_once(&l->v))
			__luf_spin_wait(&spins);
	}
}

/* Release @l (release ordering); @flags from __luf_lock(). */
static inline void __luf_unlock(struct luf_lock *l, unsigned long flags)
{
	(void)flags;
	__luf_store_release(&l->v, 0);
}

/* Number of set bits in @w. */
static inline unsigned int __luf_popcount(unsigned long w)
{
	return (unsigned int)__builtin_popcountl(w);
}

/* Index of the lowest set bit of @w, which must not be 0 (__ffs()). */
static inline unsigned int __luf_ffs(unsigned long w)
{
	return (unsigned int)__builtin_ctzl(w);
}

/*
 * Export a slow-path function (EXPORT_SYMBOL_*() in the kernel). libluf
 * exports every non-static function anyway; this only takes the semicolon.
 */
#define LUF_EXPORT(sym) struct __luf_export_##sym

#if defined(LUF_DEBUG)
#include <stdio.h>

/* Default sink of LUF_DEBUG misuse reports: one line on stderr. */
static inline void __luf_platform_report(const char *what, const void *obj, const char *file,
					 int line)
{
	fprintf(stderr, "luf: %s: %p at %s:%d\n", what, obj, file, line);
}

#endif

#endif /* LUF_PLATFORM_USER_H */
