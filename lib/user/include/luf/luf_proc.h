// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_proc.h - luf for a process, in a few calls: deferred reuse of
 * retired objects whose readers publish with no fence of their own.
 *
 * The shape users know from ck_epoch and call_rcu:
 *
 *   luf_proc_create()        one per process: the backend (membarrier, or
 *                            mprotect), the instance, its counters, key
 *                            table and per-thread state, sized and
 *                            allocated inside
 *   luf_thread_register()    once per thread; luf_thread_unregister()
 *                            hands what the thread still holds to the others
 *   luf_read_lock()/unlock() around every read of shared objects: one
 *                            release store each, no fence, no atomic RMW
 *   luf_retire()             an object readers can no longer reach: no
 *                            system call, no allocation; shared lines
 *                            written once per batch, not per object
 *   luf_reuse()              an object retired earlier that no reader can
 *                            still be reading; flushes (one membarrier for
 *                            everything pending) only for threads that
 *                            passed no barrier since the retirement:
 *                            another flush, or their own fold of a batch
 *   luf_synchronize()        the waiting form: returns once no reader can
 *                            still read what was unpublished before it
 *   luf_call()               the callback form: retires an object and runs
 *                            a function on it once no reader can read it
 *
 * The objects are the caller's: embed a struct luf_node in each (zeroed
 * before its first retirement) and allocate from luf_reuse() first, from
 * malloc() or a fresh page when it returns -EAGAIN. An object may be a
 * page range as well as a small struct: luf never touches its memory,
 * only the node.
 *
 * What a reader must do for the guarantee to hold (the rules, exactly):
 *  R1. Call luf_read_lock() before loading a pointer to a shared object
 *      and luf_read_unlock() after its last access through that pointer,
 *      on the struct luf_thread of the calling thread. Sections nest,
 *      and a signal handler may open its own on the handle of the thread
 *      it interrupted (both calls are async-signal-safe), as long as that
 *      handle is registered: before luf_thread_unregister(), clear the
 *      pointer the handler reads (or block the signal). A thread that
 *      exits registered needs nothing: luf blocks its signals before it
 *      unregisters it.
 *  R2. Load shared pointers with at least a relaxed atomic load (or
 *      READ_ONCE): luf puts no fence in the reader, so the compiler must
 *      not move the load out of the section; luf_read_lock() has a
 *      compiler barrier after its store, luf_read_unlock() a release store.
 *  R3. Not keep or use such a pointer after luf_read_unlock().
 * and what the updater must do:
 *  U1. Make the object unreachable for new readers (store the new pointer,
 *      unlink it) before luf_retire(), on the same thread.
 *  U2. Retire each object once; take it back only from luf_reuse().
 * Then an object luf_reuse() returns is read by no reader: every read
 * section that could have loaded its pointer has ended. Why: the flush a
 * reuse waits for is a barrier on every thread of the process after U1
 * (membarrier(2), or an IPI-sending mprotect()), so a reader whose load
 * came before that barrier has its luf_read_lock() store visible once the
 * flush returns, and one whose load came after it sees the object gone.
 * luf_reuse() then waits (without blocking: it hands back another object
 * or -EAGAIN) until every section it saw open at that point has closed.
 * This is the store-buffering argument of <luf/luf_user.h>, and the reader
 * protocol of liburcu's membarrier flavour (urcu-memb); luf's part is to
 * defer the barrier to reuse and to skip it for every thread that passed
 * one since the retirement: another thread's flush, or a full barrier of
 * its own, which each thread passes when it folds a batch of retirements
 * and counts as its flush, as a CPU's own full TLB flush counts in the
 * LUF patches (docs/DESIGN.md section 6). A program whose threads all
 * retire flushes rarely; one with readers that never retire flushes for
 * them.
 *
 * Each retired object comes back through the thread that retired it,
 * or, after that thread unregisters, through any thread; and a thread
 * that retires more than it reuses hands its objects to the threads that
 * allocate: once it holds 4 batches (4 x struct luf_proc_config.batch
 * objects), each further batch goes to the domain's pool (a batch with a
 * luf_call() object stays with the thread), whose whole content the
 * luf_reuse() of a thread with empty lists takes (the remote frees of
 * mimalloc and jemalloc: retire on one thread, reuse on another). A
 * thread that has more than 4 batches ready (in luf_reuse() or
 * luf_call()) moves the rest to the domain's spare list, which a thread
 * with nothing ready takes, a batch at a time: ready objects are ready
 * for every thread. So what luf holds stays bounded when the program
 * reuses as much as it retires: per thread about 6 batches (the open
 * one, 4 kept or ready, one waiting for readers), plus what the program
 * allocated while a reader stalled a grace period (nothing retired after
 * a section began is reusable until it ends). luf never frees those: the
 * pool and the spare list keep them for the next stall, so the total
 * ratchets up to what the longest stalls cost (luf_thread_held(),
 * luf_proc_pooled(); tests/user/proc_pc.c checks this bound). A thread
 * is registered with at most one struct luf_proc at a time.
 *
 * A reader that stays inside one section holds back every object retired
 * after it began. When a section has stalled a grace period for over a
 * second while objects wait for it, luf reports it once per grace period
 * of each thread whose objects wait (two waiting threads: two lines,
 * each with its own count) through the error hook (luf_set_error_hook(), <luf/error.h>), e.g.
 * "luf_proc: reader 3 (thread id 4242) has stayed inside one read section
 * for over 1000 ms: 4096 objects wait for it (-EAGAIN)"; the call that
 * noticed it (luf_reuse() or luf_call()) still succeeds or returns
 * -EAGAIN as usual.
 *
 * Two threads that retire the same object at once (breaking U2) do not
 * corrupt the domain: one compare-and-swap on the node claims it, exactly
 * one call is accepted and the others return -EBUSY, changing nothing.
 *
 * fork(): the child process has only the thread that called fork(), and
 * luf_proc knows it (pthread_atfork() handlers, installed by the first
 * luf_proc_create(); liburcu's bulletproof flavour does the same). In the
 * child, the forking thread keeps its registration with every domain, its
 * handle, what it holds, and its read section if it forked inside one.
 * Every other thread is unregistered: a read section it had open is
 * closed (no reuse waits for a thread that does not exist) and its slot
 * is free, so luf_proc_destroy() succeeds once the forking thread
 * unregisters. The objects such a thread held stay in its slot: the
 * thread of the child that is given that slot (registration takes the
 * lowest free one) takes them over and reuses them, and
 * luf_proc_destroy() releases the rest. The parent is unchanged.
 *
 * Around the fork() call the handlers take every lock of every domain, so
 * a fork() waits for a registration, an unregistration, a batch fold or a
 * flush (mprotect backend) in progress on another thread, and no lock is
 * left held in the child. Not covered: another thread that is inside
 * luf_retire(), luf_reuse() or luf_thread_unregister(), between two of its
 * list updates, at the instant of the fork leaves its slot half-updated
 * in the child. A fork() while the other threads are anywhere else
 * (reading, or outside luf) is covered. A program that forks while other
 * threads retire or reuse can keep them out of those calls at the fork:
 * a pthread_rwlock_t held for reading around each luf_retire(),
 * luf_reuse() and luf_thread_unregister() call and for writing around
 * fork() (reinitialised in the child). A child that calls exec() at
 * once needs none of this.
 *
 * Misuse of a read section is not checked in a release build, where
 * luf_read_lock() and luf_read_unlock() are one store each: a NULL handle
 * faults; a handle of another thread, or one kept after
 * luf_thread_unregister(), leaves the caller's reads unprotected and
 * races with the stores of the thread that owns (or next takes) its slot;
 * and after LUF_READER_NEST_MASK nested sections (2^32 - 1 with a 64-bit
 * long: luf_read_lock()s without their unlock) the next lock wraps the
 * depth to 0, and the thread reads as if outside every section. A
 * LUF_DEBUG build (-DLUF_DEBUG, or cmake -DLUF_DEBUG=ON) checks all three
 * at each luf_read_lock(), luf_read_unlock() and luf_read_inside(): a
 * failed check names the call, the rule and the call site in one line
 * (luf_last_error(), the hook of luf_set_error_hook(), stderr), then
 * aborts the process.
 *
 * Errors are negative errno values; a set-up error is also named in one
 * line by luf_last_error() (<luf/error.h>), e.g.
 * "luf_proc_create: cfg->mem is not aligned to LUF_CACHELINE (64 bytes) (-EINVAL)".
 * Built on the low-level API (<luf/luf.h>, <luf/luf_user.h>), which stays
 * the way for kernels and for callers that manage CPUs, keys and free
 * lists themselves.
 */
#ifndef LUF_PROC_H
#define LUF_PROC_H

#include <luf/luf_user.h>

LUF_BEGIN_DECLS

/* Threads that may be registered at once when struct luf_proc_config.max_threads is 0. */
#define LUF_PROC_DEFAULT_THREADS 64u
/* Retirements folded into one pending set when struct luf_proc_config.batch is 0. */
#define LUF_PROC_DEFAULT_BATCH 64u
/* Most threads one struct luf_proc can register (memory grows with its square). */
#define LUF_PROC_MAX_THREADS 1024u
/* Largest struct luf_proc_config.batch. */
#define LUF_PROC_MAX_BATCH 4096u

/**
 * struct luf_proc_config - options of luf_proc_create()
 * @max_threads: threads registered at once (0: %LUF_PROC_DEFAULT_THREADS;
 *	at most %LUF_PROC_MAX_THREADS)
 * @flags: backend flags: %LUF_USER_SYNC_CORE (JIT code reuse: the flush
 *	also serialises every core), %LUF_USER_FORCE_MPROTECT (allow the
 *	mprotect fallback where it is not known to send IPIs; membarrier is
 *	still preferred where it works); others are refused
 * @batch: retirements folded into one pending set (0:
 *	%LUF_PROC_DEFAULT_BATCH; at most %LUF_PROC_MAX_BATCH); a retired object is reusable only after
 *	its batch is folded: when it is full, or when luf_reuse() has found
 *	nothing @batch times in a row. 1 folds every retirement (one flush
 *	per reuse when a thread reuses what it has just retired)
 * @mem: NULL to let luf allocate (aligned_alloc()), or one block of
 *	luf_proc_size() bytes aligned to %LUF_CACHELINE that the caller
 *	owns until luf_proc_destroy() returns
 * @mem_size: the size of @mem in bytes
 * @membarrier: NULL for the system call; tests inject failures here
 *	(see struct luf_user_config)
 *
 * Zero-initialise it: zero is the default of every field.
 */
struct luf_proc_config {
	unsigned int max_threads;
	unsigned int flags;
	unsigned int batch;
	void *mem;
	size_t mem_size;
	luf_user_membarrier_fn *membarrier;
};

/* One process's luf: opaque. */
struct luf_proc;

/* One registered thread: opaque, but for its reader half (struct luf_reader). */
struct luf_thread;

/* Bits of struct luf_reader.ctr that hold the depth of nested sections: its low half. */
#define LUF_READER_NEST_BITS (sizeof(unsigned long) * 4)
/* The depth of nested sections in struct luf_reader.ctr (0 outside every section). */
#define LUF_READER_NEST_MASK ((1ul << LUF_READER_NEST_BITS) - 1)
/* One section left, in the high half of struct luf_reader.ctr. */
#define LUF_READER_LEFT (1ul << LUF_READER_NEST_BITS)

/**
 * struct luf_reader - the reader half of a struct luf_thread, its first member
 * @ctr: one word, written only by its thread, read by reusers: the low
 *	%LUF_READER_NEST_BITS bits are the depth of nested sections (not 0
 *	while the thread is inside a section), the high bits count the
 *	outermost sections it has left (modulo their width)
 *
 * One word, so that every change of a section's state is one store: a
 * signal handler that runs between two stores of a two-word reader would
 * find the depth raised but the section unpublished (liburcu's membarrier
 * flavour keeps its nesting count and grace-period phase in one word for
 * the same reason). The fields are luf's: use luf_read_lock() and
 * luf_read_unlock().
 */
struct luf_reader {
	unsigned long ctr;
};

struct luf_node;

/* luf_call()'s callback: gets the node of an object no reader can read. */
typedef void luf_call_fn(struct luf_node *n);

/**
 * struct luf_node - what luf keeps in a retired object
 * @folio: its place on a deferred free list (luf_folio: key, state, link)
 * @next: its link on the per-thread lists of luf_proc.c
 * @func: the callback luf_call() runs, NULL after luf_retire()
 *
 * Embed one in each object; zero it before the object's first
 * luf_retire() or luf_call() (a node luf_reuse() returned, or one whose
 * callback runs, is ready as it is).
 * luf_node_entry() gets the object back.
 */
struct luf_node {
	struct luf_folio folio;
	struct luf_node *next;
	luf_call_fn *func;
};

/**
 * luf_node_entry() - the object around a struct luf_node
 * @ptr: the node (struct luf_node *), e.g. from luf_reuse() or in the
 *	release callback of luf_proc_destroy()
 * @type: the type of the object that embeds it, e.g. struct entry
 * @member: the name of the struct luf_node member in @type
 *
 * container_of() for luf's node: luf hands back nodes, and this gets the
 * caller's object from one. A macro: @type is a type name, not a value.
 * Nothing is checked: @ptr must point to the @member of a @type object.
 *
 * Context: any; @ptr is evaluated once, nothing is read or written.
 * Return: a pointer (@type *) to the object whose @member is at @ptr.
 */
/* clang-format off */
#define luf_node_entry(ptr, type, member) \
	((type *)((uintptr_t)(ptr) - offsetof(type, member)))
/* clang-format on */

/**
 * luf_proc_size() - bytes luf_proc_create() needs for @cfg
 * @cfg: the options (NULL for the defaults); @cfg->mem is ignored
 *
 * The instance, its done counters and statistics, the key table, and per
 * thread a batching state, a free list, a reader line and a snapshot of
 * every thread's reader counter: O(max_threads^2) bytes, about 0.2 MiB
 * for the default 64 threads.
 *
 * Return: a size in bytes, a multiple of %LUF_CACHELINE; 0 if @cfg is
 * invalid (max_threads above %LUF_PROC_MAX_THREADS).
 */
size_t luf_proc_size(const struct luf_proc_config *cfg);

/**
 * luf_proc_create() - set up luf for this process
 * @out: where the new domain goes
 * @cfg: the options, or NULL for the defaults
 *
 * Opens the best sound backend (luf_user_backend_open(): membarrier, else
 * mprotect on x86-64) with caller CPU ids, one per registered thread, then
 * sets up the instance, its key table and the per-thread state in one
 * block (@cfg->mem, or aligned_alloc()). No thread is registered yet.
 * Blocks: registers the process for membarrier and issues one trial
 * flush (a few microseconds).
 *
 * Return: 0 and *@out set; -EINVAL for a NULL @out, unknown flags,
 * max_threads above %LUF_PROC_MAX_THREADS, batch above
 * %LUF_PROC_MAX_BATCH or a misaligned @cfg->mem;
 * -ENOSPC if @cfg->mem_size is below luf_proc_size(@cfg); -ENOMEM;
 * or the backend's error (-ENOSYS, -EPERM, ...: see
 * luf_user_backend_open()). On error nothing is left allocated and
 * luf_last_error() names the failed check.
 */
int luf_proc_create(struct luf_proc **out, const struct luf_proc_config *cfg);

/**
 * luf_proc_destroy() - tear down a domain, handing every object back
 * @p: a domain with no thread registered
 * @release: called once for each object luf still holds (retired, not
 *	reused), to free it; NULL if the caller frees them otherwise. An
 *	object given to luf_call() gets its own callback instead
 * @arg: passed to @release
 *
 * No reader can be left (no thread is registered), so every object is
 * handed to @release without a flush. Then closes the backend and frees
 * the block luf allocated. Like free(), @p must not be used afterwards:
 * a second destroy is caught only when @p lives in the caller's block.
 * Blocks: may flush once, for objects a failed hand-over left pending.
 *
 * Return: 0; -EINVAL for a NULL or garbage @p; -EBUSY if a thread is
 * still registered; or that flush's error (nothing changed).
 */
int luf_proc_destroy(struct luf_proc *p, void (*release)(struct luf_node *n, void *arg), void *arg);

/**
 * luf_thread_register() - register the calling thread
 * @p: the domain
 * @out: where the calling thread's handle goes
 *
 * Gives the thread the lowest free CPU id of @p's backend
 * (luf_user_set_thread_id()). The handle is the thread's own: pass it to
 * the calls below from this thread only. A thread that exits registered
 * is unregistered on its way out (a pthread key destructor), its open
 * read section closed. After fork(), only the forking thread is still
 * registered in the child (see the top of this header); a new thread of
 * the child may take the slot of a parent thread and reuse its objects.
 * The id joins the set of every later retirement; a full fence then
 * keeps the thread's first section after that (a retirement whose set
 * missed the id was unpublished before the thread's first load).
 *
 * Return: 0 and *@out set; -EINVAL for NULL or a garbage @p; -EBUSY if
 * the thread is registered already (with @p or another domain);
 * -EUSERS if @p's max_threads threads are registered (the id would be out
 * of range). luf_last_error() names the failed check.
 */
int luf_thread_register(struct luf_proc *p, struct luf_thread **out);

/**
 * luf_thread_unregister() - unregister the calling thread
 * @t: the calling thread's handle, outside any read section
 *
 * Folds the thread's open batch and hands every object it still holds to
 * the domain, from which any thread's luf_reuse() takes them, first
 * flushing what they still owe. The thread then passes a last barrier of
 * its own and leaves the set of later retirements: no flush waits for it
 * again. Blocks: may flush (membarrier).
 *
 * Return: 0; -EINVAL for NULL, a garbage handle or one of another thread;
 * -EBUSY inside a read section; or the flush's error (the thread stays
 * registered and nothing is lost: call again).
 */
int luf_thread_unregister(struct luf_thread *t);

#if defined(LUF_MUTANT_PROC_SIGNAL_SPLIT)
/* Mutant: the depth of nested sections in a word of its own (luf_read_lock()). */
static __thread unsigned long luf_mutant_depth;
#endif

/**
 * luf_read_lock() - enter a read section
 * @t: the calling thread's handle
 *
 * One load and one release store of the thread's own reader line (a plain
 * store on x86-64) and a compiler barrier: no fence, no atomic
 * read-modify-write. Sections nest. Async-signal-safe: a signal handler
 * may open and close sections on the handle of the thread it interrupts,
 * also while that thread is inside luf_read_lock() or luf_read_unlock()
 * (a handler leaves the depth as it found it, so the one store the
 * interrupted call makes after it is still right; the count of sections
 * left may lose the handler's step, which only makes a reuser or
 * luf_synchronize() that saw the handler's section wait longer: until the
 * end of the thread's next section). See the reader rules R1-R3 at the top
 * of this header.
 *
 * Misuse is undefined in a release build, which checks nothing: a NULL
 * @t faults; a handle of another thread, or one kept after
 * luf_thread_unregister(), publishes the section where no reuser looks
 * for the caller (its reads are unprotected) and races with the owner's
 * stores (a section of the owner lost, or left open for ever); and a lock
 * at a depth of %LUF_READER_NEST_MASK (2^32 - 1 nested sections with a
 * 64-bit long, e.g. locks without their unlock in a loop) wraps the depth
 * to 0: the thread reads as if outside every section. A LUF_DEBUG build
 * checks all three before the store (one call out of line): a failed
 * check names the rule and the call site in one line, through
 * luf_last_error(), the hook of luf_set_error_hook() and stderr, then
 * calls abort().
 */
static inline void luf_read_lock(struct luf_thread *t)
{
	struct luf_reader *r = (struct luf_reader *)(void *)t;

#if defined(LUF_MUTANT_PROC_SIGNAL_SPLIT)
	/*
	 * Mutant: the depth in a word of its own, raised before the section
	 * is published: a signal handler between the two finds the depth
	 * raised and reads unpublished.
	 */
	if (luf_mutant_depth++ != 0)
		return;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
	/*
	 * Release (a plain store on x86-64, stlr on arm64: no fence): a
	 * reuser that reads the raised depth is then ordered after the
	 * thread's previous section too, not only after its unlock.
	 */
	__luf_store_release(&r->ctr, __atomic_load_n(&r->ctr, __ATOMIC_RELAXED) + 1);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/**
 * luf_read_unlock() - leave a read section
 * @t: the calling thread's handle
 *
 * A release store of the reader line: the section's loads are ordered
 * before it; the outermost unlock also counts the section as left. An
 * unlock without a lock is ignored (it would otherwise hide the thread's
 * later sections). Async-signal-safe, like luf_read_lock().
 *
 * Misuse is undefined in a release build: a NULL @t faults; a handle of
 * another thread, or one kept after luf_thread_unregister(), may close a
 * section of the thread that owns its slot (whose reads are then
 * unprotected) and races with its stores. A LUF_DEBUG build checks both,
 * as luf_read_lock() does, and aborts; an unlock without a lock is
 * ignored in both builds.
 */
static inline void luf_read_unlock(struct luf_thread *t)
{
	struct luf_reader *r = (struct luf_reader *)(void *)t;
	unsigned long c;

#if defined(LUF_MUTANT_PROC_SIGNAL_SPLIT)
	if (luf_mutant_depth == 0 || --luf_mutant_depth != 0)
		return;
#endif
	c = __atomic_load_n(&r->ctr, __ATOMIC_RELAXED);
	if (__builtin_expect((c & LUF_READER_NEST_MASK) == 0, 0))
		return;
	c--;
	if ((c & LUF_READER_NEST_MASK) == 0)
		c += LUF_READER_LEFT;
	__luf_store_release(&r->ctr, c);
}

/**
 * luf_read_inside() - is the calling thread inside a read section?
 * @t: the calling thread's handle
 *
 * As reusers see it: true from the store of the outermost luf_read_lock()
 * to the store of the matching luf_read_unlock(). For assertions, like
 * rcu_read_lock_held(). A LUF_DEBUG build checks @t as luf_read_lock()
 * does (NULL, or not the calling thread's registered handle: abort); a
 * release build faults on NULL and answers for the handle's owner.
 *
 * Return: true inside a read section, false outside.
 */
static inline bool luf_read_inside(const struct luf_thread *t)
{
	const struct luf_reader *r = (const struct luf_reader *)(const void *)t;

	return (__atomic_load_n(&r->ctr, __ATOMIC_RELAXED) & LUF_READER_NEST_MASK) != 0;
}

#if defined(LUF_DEBUG)
/*
 * LUF_DEBUG: luf_read_lock(), luf_read_unlock() and luf_read_inside() are
 * macros that pass their call site to __luf_proc_read_check()
 * (lib/user/proc.c) before the inline function runs. It checks that @t is
 * not NULL and is the calling thread's registered handle, and with @lock
 * that its depth is below LUF_READER_NEST_MASK; it reports a failed check
 * and aborts. A release build has neither the macros nor the call. (A
 * call that bypasses the macro, through a function pointer or as
 * (luf_read_lock)(t), is not checked.)
 */
void __luf_proc_read_check(const struct luf_thread *t, bool lock, const char *fn, const char *file,
			   int line);

static inline void __luf_read_lock_at(struct luf_thread *t, const char *file, int line)
{
	__luf_proc_read_check(t, true, "luf_read_lock", file, line);
	luf_read_lock(t);
}

static inline void __luf_read_unlock_at(struct luf_thread *t, const char *file, int line)
{
	__luf_proc_read_check(t, false, "luf_read_unlock", file, line);
	luf_read_unlock(t);
}

static inline bool __luf_read_inside_at(const struct luf_thread *t, const char *file, int line)
{
	__luf_proc_read_check(t, false, "luf_read_inside", file, line);
	return luf_read_inside(t);
}

#define luf_read_lock(t) __luf_read_lock_at((t), __FILE__, __LINE__)
#define luf_read_unlock(t) __luf_read_unlock_at((t), __FILE__, __LINE__)
#define luf_read_inside(t) __luf_read_inside_at((t), __FILE__, __LINE__)
#endif

/**
 * luf_retire() - an object no new reader can reach will be reused later
 * @t: the calling thread's handle
 * @n: the object's node: zeroed, or as luf_reuse() returned it
 *
 * Puts the object on the thread's open batch; every struct
 * luf_proc_config.batch retirements the batch is recorded as removed
 * read-only "translations" on every thread id registered now (their
 * flush may wait), folded into one pending set, and goes to the thread's
 * deferred free list as one entry. Call after the object was unpublished
 * (U1).
 *
 * Context: no system call, no allocation, no flush; one compare-and-swap
 * on @n (claiming it) and writes to the thread's own lines. Once per
 * batch: two full fences (the stamp's, its own barrier's), the key
 * table, one atomic add on the ugen source and the thread's done counter
 * (its own barrier, which covers its id for every batch stamped before
 * it); a thread that holds 4 batches
 * hands each further batch to the domain's pool (under the domain's
 * mutex).
 * Return: 0; -EINVAL for NULL or a handle that is not the calling
 * thread's registered one; -EBUSY if @n is retired already (a double
 * retirement, also when another thread retires it at the same time:
 * exactly one of the calls is accepted) or was not zeroed before its
 * first retirement. Nothing changes on error; luf_last_error() names it.
 */
int luf_retire(struct luf_thread *t, struct luf_node *n);

/**
 * luf_reuse() - take back an object that no reader can still be reading
 * @t: the calling thread's handle
 * @out: where the object's node goes
 *
 * In order: an object whose readers are known gone; else the thread's
 * whole deferred free list (luf_alloc(): one flush for all of it, and
 * none if another flush since the retirements covered it), checked
 * against every reader's counter at once; else, after @batch calls in a
 * row found nothing, the thread's part batch, folded and flushed; else
 * a batch from the domain's pool (objects of threads that retire more
 * than they reuse: flushed for once, if still owed); else objects other
 * threads handed over when they unregistered. Objects some
 * reader may still be reading are kept back until every section open at
 * the check has closed (a later call hands them out). While objects wait,
 * a call that hands one out may also start the next such wait: when the
 * free list has outgrown the ready list, or the ready list runs low, its
 * objects that owe no flush any more are checked (others wait for the
 * threads' next barriers, or for the flush of a call that finds the ready
 * list empty), so that a reader preempted inside its section does not
 * leave the thread with nothing to reuse. Source: the grace-period pipeline of RCU implementations
 * (liburcu's call_rcu batches), with luf's deferred, skippable flush.
 * The caller's own open section counts like any other: called inside
 * one, it gets -EAGAIN for every object retired after that section
 * began (do not wait for reuse inside a section: allocate instead).
 *
 * Context: may flush (one membarrier(2) call) when pend objects still
 * owe it; otherwise no system call and no allocation. Never waits for a
 * reader.
 * Return: 0 and *@out set (the node as retired; the object is the
 * caller's again); -EAGAIN if no retired object is reusable yet (allocate
 * a new one); -EINVAL for NULL or a garbage handle; or the flush's error
 * (every object stays pending).
 */
int luf_reuse(struct luf_thread *t, struct luf_node **out);

/**
 * luf_synchronize() - wait until no reader can still read what was unpublished
 * @t: the calling thread's handle, outside any read section
 *
 * The waiting form, like liburcu's synchronize_rcu(): when it returns,
 * every read section that could have loaded a pointer the program
 * unpublished before the call has ended. So an object unpublished before
 * it (U1) may be freed or rewritten at once, retired or not; and every
 * object the calling thread retired before it is on its ready list:
 * luf_reuse() hands each back without a flush or a wait, but for the
 * batches it handed to the domain's pool, which stay there for any
 * thread's luf_reuse(). Objects other threads retired stay theirs (their
 * own luf_reuse() finds them).
 *
 * In order: folds the thread's open batch and takes its whole deferred
 * free list (one flush if it still owes one), issues one barrier on every
 * thread (luf_user_flush()), then waits for each thread's section open at
 * that point to close, yielding the CPU while it spins.
 *
 * Context: blocks: one or two system calls (membarrier(2), or mprotect(2)
 * with the mprotect backend) and as long as the longest read section open
 * after the barrier; never call it from a signal handler or inside a
 * section. Source: synchronize_rcu() (the grace period of RCU), built here
 * from luf's barrier and the reader counters.
 * Return: 0; -EINVAL for NULL or a handle that is not the calling
 * thread's registered one; -EDEADLK inside a read section (the call would
 * wait for itself); or the flush's error (objects the thread held stay
 * held, nothing is lost; the caller must not free what it unpublished).
 */
int luf_synchronize(struct luf_thread *t);

/**
 * luf_call() - run a function on an object once no reader can read it
 * @t: the calling thread's handle
 * @n: the object's node, unpublished (U1): zeroed, or as luf_reuse()
 *	returned it, or as its last callback received it
 * @func: called once with @n, when no read section that could have
 *	loaded the object's pointer is still open; the object is the
 *	caller's again then (free it, or put it back in use)
 *
 * The callback form, like call_rcu(): @n is retired as by luf_retire()
 * and goes the same way (batch, deferred free list, flush, reader check),
 * but luf_reuse() never hands it out: @func runs instead. Callbacks run on
 * the thread that holds the object, from inside its luf_reuse() and
 * luf_synchronize() calls (luf_synchronize() runs every callback of the
 * objects the thread retired before it), its later luf_call() calls (never
 * before the luf_call() that queued the object returns) and its
 * luf_thread_unregister() (those that are due; it hands the others over
 * with its objects to the thread that takes them, which luf_call(),
 * luf_reuse() and luf_synchronize() do). luf_proc_destroy() runs the rest.
 * So a callback may run late (a thread that calls none of these keeps its
 * callbacks), never early. Callbacks do not nest: one that calls luf_call()
 * again (a chain) returns before the next runs.
 *
 * A callback gets no thread handle: it runs on a registered thread (use
 * that thread's handle from a thread-local pointer), but for those
 * luf_proc_destroy() runs, with no thread registered, which may only free
 * or reinitialise the object. It may call luf_call(), luf_retire(),
 * luf_reuse() and luf_synchronize() on its thread's handle, not
 * luf_thread_unregister() nor luf_proc_destroy(); it runs inside the luf
 * call that ran it, so it must not take a lock the caller of that call
 * holds, and if that call was made inside a read section, so is the
 * callback: luf_synchronize() there returns -EDEADLK.
 *
 * Context: like luf_retire(), and may then flush (one membarrier(2) once
 * a batch of objects is on the thread's deferred free list) and run due
 * callbacks; never waits for a reader. Source: call_rcu() (RCU's callback
 * form), on luf's deferred, skippable flush.
 * Return: 0; -EINVAL for a NULL @func or @n, or a handle that is not the
 * calling thread's registered one; -EBUSY if @n is retired already (as
 * luf_retire()). Nothing changes on error.
 */
int luf_call(struct luf_thread *t, struct luf_node *n, luf_call_fn *func);

/**
 * luf_thread_held() - objects the thread holds for later reuse
 * @t: the calling thread's handle
 *
 * Retired and not reused yet: open batch, deferred free list and objects
 * waiting for readers. The memory a deferred scheme holds back.
 * Return: a count of objects; 0 for NULL.
 */
unsigned long luf_thread_held(const struct luf_thread *t);

/**
 * luf_proc_pooled() - objects the domain holds for any thread
 * @p: the domain
 *
 * Retired objects no thread holds: batches handed to the pool by threads
 * that retire more than they reuse, and what unregistered threads left.
 * With luf_thread_held() of every thread, all that luf holds back.
 * Context: any thread; two relaxed loads, a moment's value.
 * Return: a count of objects; 0 for a NULL or garbage @p.
 */
unsigned long luf_proc_pooled(const struct luf_proc *p);

/**
 * luf_proc_backend() - the domain's backend
 * @p: the domain
 *
 * Return: its struct luf_user (luf_user_why() says which backend was
 * chosen and why; luf_user_calls() counts system calls), or NULL for a
 * NULL or garbage @p.
 */
const struct luf_user *luf_proc_backend(const struct luf_proc *p);

/**
 * luf_proc_luf() - the domain's low-level instance
 * @p: the domain
 *
 * For statistics (luf_stats_sum()) and for mixing in the low-level API.
 * Return: the struct luf, or NULL for a NULL or garbage @p.
 */
struct luf *luf_proc_luf(const struct luf_proc *p);

LUF_END_DECLS

#endif /* LUF_PROC_H */
