// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_user.h - luf's user-space backends: a struct luf_arch_ops whose
 * flush makes every thread of the process pass a full barrier (or a core
 * serialisation) before it returns, the user-space equivalent of a TLB
 * shootdown IPI (docs/DESIGN.md section 6).
 *
 *   membarrier  flush = one membarrier(2) call: MEMBARRIER_CMD_PRIVATE_EXPEDITED,
 *               or _SYNC_CORE for JITs that reuse code memory; optionally
 *               one MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ call per CPU
 *               (MEMBARRIER_CMD_FLAG_CPU, Linux 5.10+) for small CPU sets.
 *   mprotect    fallback when membarrier is missing or blocked: change the
 *               protection of a private, locked, touched helper page, so the
 *               kernel must shoot down its translation on every CPU running
 *               the process (the technique behind the .NET runtime's
 *               FlushProcessWriteBuffers on Linux). x86-64 only: see
 *               luf_user_mprotect_open().
 *
 * Why a barrier is the "flush" here. A reader in user space caches no
 * translation luf can invalidate; what it holds is a published pointer
 * (a hazard pointer, an epoch) that it stored with only a compiler barrier
 * and that may still sit in its store buffer. Store buffering is the race:
 *
 *   reader (CPU0)                        reclaimer (CPU1)
 *   hazard = p          (store buffered) slot = q   (p unreachable now)
 *   slot == p ? yes, use p               scan hazards: none (CPU0's store
 *                                        is not visible yet) -> reuse p
 *   read p: new contents                 write p
 *
 * Calling flush between the reclaimer's two steps forces a barrier on
 * CPU0: either CPU0's hazard store is visible to the scan, or CPU0's check
 * runs after the barrier and sees slot == q. luf decides when that flush
 * is still owed (deferred to reuse, skipped when done); this backend only
 * performs it.
 *
 * Storage is the caller's: zero a struct luf_user before its first open
 * (static storage, {0} or memset). Every function returns 0 or a negative
 * errno. Thread-safe after open: many threads may flush at once; open and
 * close must not race with anything else on the same struct.
 */
#ifndef LUF_USER_H
#define LUF_USER_H

#include <luf/luf.h>

LUF_BEGIN_DECLS

/* Which backend a struct luf_user runs (luf_user_kind_name() names it). */
enum luf_user_kind {
	LUF_USER_NONE = 0,   /* not open */
	LUF_USER_MEMBARRIER, /* membarrier(2) */
	LUF_USER_MPROTECT,   /* helper-page protection change (x86-64) */
};

/* Flags of struct luf_user_config. */
#define LUF_USER_SYNC_CORE 0x1u	     /* membarrier: core-serialising flush (JIT code reuse) */
#define LUF_USER_FORCE_MPROTECT 0x2u /* mprotect: open where it is not known to send IPIs */
#define LUF_USER_NO_TRIAL 0x4u	     /* skip the trial flush at open (not recommended) */
#define LUF_USER_FLAGS_ALL 0x7u	     /* every valid flag: others are -EINVAL */

/* Longest explanation luf_user_why() returns, including the NUL. */
#define LUF_USER_WHY_LEN 256

/*
 * A membarrier(2) entry point: (cmd, flags, cpu_id) -> >= 0, or -1 with
 * errno set. NULL in the configuration means the real system call; tests
 * inject failures through it.
 */
typedef long luf_user_membarrier_fn(int cmd, unsigned int flags, int cpu_id);

/* Options of the open functions; zero-initialise, NULL for all defaults. */
struct luf_user_config {
	unsigned int flags; /* LUF_USER_* */
	/*
	 * 0: CPU ids are the kernel's (nr_cpu_ids from
	 * /sys/devices/system/cpu/possible, else sysconf(_SC_NPROCESSORS_CONF);
	 * this_cpu from sched_getcpu()). N > 0: ids are the caller's, 0..N-1,
	 * one per thread, set with luf_user_set_thread_id() (e.g. one
	 * struct luf_pcpu per thread).
	 */
	unsigned int nr_ids;
	/*
	 * membarrier only, kernel CPU ids only: flush a set of at most this
	 * many CPUs (other than the caller's) with one
	 * MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ | MEMBARRIER_CMD_FLAG_CPU call
	 * per CPU instead of one call for the whole process. 0 = off, the
	 * default: measured no faster on the machines tried (lib/user/README.md).
	 * Sound only if the threads a flush must reach stay on the CPUs the
	 * caller put in the set (pinned threads, or rseq critical sections).
	 */
	unsigned int rseq_max_cpus;
	luf_user_membarrier_fn *membarrier; /* NULL: the system call */
};

/*
 * One backend instance. Read-only after open except the counters. The
 * caller owns the storage and passes it to luf_init() as the arch context
 * with luf_user_ops.
 */
struct luf_user {
	unsigned int state;		    /* 0 / open / closed magic: catches reuse errors */
	enum luf_user_kind kind;	    /* the backend, LUF_USER_NONE until open */
	unsigned int flags;		    /* LUF_USER_* of the configuration */
	unsigned int nr_cpus;		    /* CPU ids: 0..nr_cpus-1 */
	bool thread_ids;		    /* ids from luf_user_set_thread_id() */
	int mb_cmd;			    /* membarrier command of a whole-process flush */
	long mb_supported;		    /* MEMBARRIER_CMD_QUERY result, or -errno */
	unsigned int rseq_max_cpus;	    /* 0: per-CPU flushing off */
	luf_user_membarrier_fn *membarrier; /* the configuration's, or the system call */
	void *page;			    /* mprotect: the helper page */
	size_t page_size;		    /* mprotect: its size in bytes */
	void *lock;			    /* mprotect: a pthread mutex (malloc'd) */
	int mb_err;		    /* why membarrier was not chosen (-errno; 0: chosen/untried) */
	int mp_err;		    /* why mprotect was not chosen (-errno; 0: chosen/untried) */
	unsigned long flushes;	    /* flush requests served */
	unsigned long calls;	    /* system calls issued by flushes */
	char why[LUF_USER_WHY_LEN]; /* which backend, and why (NUL-terminated) */
};

/*
 * The arch-ops vtable for luf_init(): pass an open struct luf_user as the
 * arch context. flush and flush_all call luf_user_flush(); nr_cpu_ids and
 * this_cpu return luf_user_nr_cpu_ids() and luf_user_this_cpu(); mm_cpus
 * is NULL (every flush reaches the whole process anyway).
 */
extern const struct luf_arch_ops luf_user_ops;

/**
 * luf_user_membarrier_open() - open the membarrier backend.
 * @u: zeroed or closed storage
 * @cfg: options, or NULL for the defaults
 *
 * Queries the supported commands (MEMBARRIER_CMD_QUERY), registers the
 * process for MEMBARRIER_CMD_PRIVATE_EXPEDITED (and _SYNC_CORE with
 * LUF_USER_SYNC_CORE, _RSEQ with rseq_max_cpus), then issues one trial
 * flush, so a command blocked later in the chain (a seccomp filter that
 * allows only some commands) fails here rather than at the first reuse.
 * Registration is per process and cannot be undone; opening again costs a
 * query and a trial flush. Blocks: only inside membarrier(2) (a few
 * microseconds: IPIs to the CPUs running this process's threads).
 * Source: membarrier(2); Linux kernel/sched/membarrier.c.
 *
 * Return: 0; -EBUSY if @u is open already, -EINVAL for a garbage @u,
 * unknown flags, nr_ids above LUF_MAX_CPUS, per-CPU RSEQ with SYNC_CORE or
 * with caller thread ids (nothing changed on any of these); -ENOSYS if the
 * kernel has no membarrier; -EPERM if a seccomp filter (or an LSM) blocks
 * it; -EINVAL if the kernel lacks a needed command (PRIVATE_EXPEDITED
 * from 4.14, SYNC_CORE from 4.16, RSEQ from 5.10); -EOVERFLOW for more
 * than LUF_MAX_CPUS kernel CPU ids; or another -errno of membarrier(2).
 * On error @u is left closed with luf_user_why() saying what failed.
 */
int luf_user_membarrier_open(struct luf_user *u, const struct luf_user_config *cfg);

/**
 * luf_user_mprotect_open() - open the mprotect fallback backend
 * @u: zeroed or closed storage
 * @cfg: options, or NULL
 *
 * Maps one private anonymous page, locks it in memory (mlock: a page
 * swapped out between the touch and the protection change would owe no
 * shootdown) and issues a trial flush. A flush then takes a process-wide
 * lock, makes the page writable, writes to it (so its translation is
 * present and dirty), and makes it inaccessible: the kernel must then
 * invalidate that translation on every CPU that runs this process's
 * address space, which on x86-64 Linux means an IPI to each of them, and
 * an interrupt is a full barrier on the CPU that takes it (the argument
 * behind .NET's FlushProcessWriteBuffers on Linux; facts, not its code).
 *
 * Refused where that argument fails, unless LUF_USER_FORCE_MPROTECT:
 * - not x86-64 (arm64, for one, invalidates TLBs by hardware broadcast,
 *   TLBI ...IS: no IPI reaches other CPUs, so they pass no barrier);
 * - an x86-64 CPU that advertises INVLPGB (AMD Zen 3 and later), with
 *   which Linux 6.15+ may invalidate a busy process's TLBs by broadcast,
 *   again with no IPI.
 * It cannot core-serialise a thread that is inside the kernel when the IPI
 * arrives, so LUF_USER_SYNC_CORE is refused too.
 * Blocks: flushes serialise on one mutex; each costs two mprotect(2)
 * calls, each of which may wait for the IPIs it sends.
 *
 * Return: 0; -EBUSY / -EINVAL for bad @u or @cfg as for
 * luf_user_membarrier_open(); -EOPNOTSUPP where refused (see above);
 * -ENOMEM, -EPERM, -EAGAIN from mmap/mlock/mprotect (a tight
 * RLIMIT_MEMLOCK, a seccomp filter). On error @u is left closed.
 */
int luf_user_mprotect_open(struct luf_user *u, const struct luf_user_config *cfg);

/**
 * luf_user_backend_open() - open the best sound backend
 * @u: zeroed or closed storage
 * @cfg: options, or NULL
 *
 * Membarrier, else mprotect where it is sound (x86-64, or forced), else
 * fail: it never opens a backend without a barrier. luf_user_kind() then says which was chosen and luf_user_why() why, e.g.
 * "membarrier: PRIVATE_EXPEDITED (kernel commands 0x3ff)" or
 * "mprotect: membarrier unavailable: blocked (seccomp?) (-EPERM)".
 * Blocks: as the two opens.
 * Return: 0; the argument errors of luf_user_membarrier_open() (nothing
 * tried); if neither backend opens, membarrier's error (-ENOSYS, -EPERM,
 * -EINVAL, ...), with both reasons in luf_user_why().
 */
int luf_user_backend_open(struct luf_user *u, const struct luf_user_config *cfg);

/**
 * luf_user_close() - close an open backend
 * @u: an open backend
 *
 * Unmaps the mprotect helper page. Call when no thread can flush through
 * @u any more (luf may call flush from any thread that owns a struct
 * luf_pcpu of this instance).
 * Return: 0; -EBADF if @u is not open (closed twice, never opened);
 * -EINVAL for NULL. Nothing changes on error.
 */
int luf_user_close(struct luf_user *u);

/**
 * luf_user_flush() - make every thread of the process pass a full barrier
 * @u: an open backend
 * @cpus: a set of @nr_cpus CPU ids (luf's cpumask layout), or NULL for
 *	every CPU
 * @nr_cpus: at most luf_user_nr_cpu_ids()
 *
 * The barrier (a core serialisation with LUF_USER_SYNC_CORE) is ordered
 * after the caller's earlier stores; the call returns after every thread
 * has passed it. The set matters only with per-CPU RSEQ flushing (rseq_max_cpus): every
 * other flush reaches the whole process, a superset. Blocks in
 * membarrier(2) or mprotect(2) (IPIs); takes the backend's mutex
 * (mprotect). Source: membarrier(2).
 *
 * Return: 0; -EINVAL for NULL @u, @nr_cpus above the backend's count or a
 * CPU id at or above it (no system call made); -EBADF if @u is not open;
 * or the system call's -errno (then nothing may be assumed flushed: luf
 * leaves every set pending).
 */
int luf_user_flush(struct luf_user *u, const unsigned long *cpus, unsigned int nr_cpus);

/**
 * luf_user_nr_cpu_ids() - how many CPU ids a backend's flushes take
 * @u: a backend
 *
 * Never blocks; no system call.
 * Return: the ids are 0..N-1 with N the configuration's nr_ids, or the
 * kernel's nr_cpu_ids (/sys/devices/system/cpu/possible) when nr_ids was 0;
 * 0 if @u is NULL or not open.
 */
unsigned int luf_user_nr_cpu_ids(const struct luf_user *u);

/**
 * luf_user_this_cpu() - the calling thread's CPU id
 * @u: an open backend
 *
 * A kernel CPU id is a hint: the thread may have moved by the time the
 * caller uses it. Never blocks; sched_getcpu() is a vDSO call on Linux.
 * Return: an id below luf_user_nr_cpu_ids(@u): with caller ids the one
 * luf_user_set_thread_id() gave this thread (0 if never set), else
 * sched_getcpu() (0 if that fails); 0 if @u is NULL or has no CPU ids.
 */
unsigned int luf_user_this_cpu(const struct luf_user *u);

/**
 * luf_user_set_thread_id() - give the calling thread its caller CPU id
 * @u: an open backend, opened with caller ids (struct luf_user_config.nr_ids)
 * @id: the thread's CPU id
 *
 * Thread-local, shared by every backend of the process.
 * Return: 0; -EINVAL if @u is not open, was opened without caller ids
 * (nr_ids 0: ids come from sched_getcpu()), or @id >= luf_user_nr_cpu_ids(@u)
 * (the thread would otherwise pass for another CPU and share its
 * single-owner state).
 */
int luf_user_set_thread_id(const struct luf_user *u, unsigned int id);

/**
 * luf_user_kind() - which backend is open
 * @u: a backend
 *
 * Return: LUF_USER_MEMBARRIER or LUF_USER_MPROTECT; LUF_USER_NONE if @u is
 * NULL or not open.
 */
enum luf_user_kind luf_user_kind(const struct luf_user *u);

/**
 * luf_user_kind_name() - the name of a backend kind
 * @kind: a value of enum luf_user_kind
 *
 * Return: "membarrier", "mprotect" or "none" (also for a value outside the
 * enum); a string constant, never NULL.
 */
const char *luf_user_kind_name(enum luf_user_kind kind);

/**
 * luf_user_why() - which backend is open and why, or why the open failed
 * @u: a backend, open or not
 *
 * For example "membarrier: PRIVATE_EXPEDITED (kernel commands 0x3ff)" or
 * "mprotect: membarrier unavailable: blocked (seccomp?) (-EPERM)".
 * Return: a NUL-terminated string of at most LUF_USER_WHY_LEN bytes held
 * in @u, stable until its next open or close; a string constant, "never
 * opened" for zeroed storage and "no backend (NULL)" for NULL.
 */
const char *luf_user_why(const struct luf_user *u);

/**
 * luf_user_calls() - how many system calls flushes have made
 * @u: a backend
 *
 * Counts membarrier(2) calls, or mprotect(2) pairs, made by luf_user_flush()
 * since the open (not the open's trial flush). A relaxed read of a
 * counter other threads may be raising.
 * Return: the count; 0 if @u is NULL.
 */
unsigned long luf_user_calls(const struct luf_user *u);

/**
 * luf_user_flushes() - how many flush requests a backend has served
 * @u: a backend
 *
 * Counts calls of luf_user_flush() since the open, successful or not. A
 * relaxed read of a counter other threads may be raising.
 * Return: the count; 0 if @u is NULL.
 */
unsigned long luf_user_flushes(const struct luf_user *u);

LUF_END_DECLS

#endif /* LUF_USER_H */
