// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/user/proc.c - luf for a process (<luf/luf_proc.h>), built on the
 * low-level API: one struct luf over the user backend with caller CPU
 * ids, one id per registered thread; per thread a struct luf_pcpu, a
 * struct luf_freelist of retired objects and a reader line.
 *
 * A retirement puts the object on the thread's open batch; a full batch
 * is one luf_unmap() of a read-only "translation" on every id registered
 * now (its stamp read after every retirement of the batch, so after each
 * one's unpublish: the stamp of the last one, or later, which a flush must
 * reach), folded into one key (luf_pcpu_fold()) and freed under it
 * (luf_free()) as one folio: the first node's, the batch's other nodes
 * linked behind it (a batch is one entry of the free list, so a fold and
 * a reuse cost one luf_free() and one luf_alloc() per batch, not per
 * object). A reuse is
 * luf_alloc() with LUF_ALLOC_MAY_FLUSH, which hands out a batch only once
 * a flush (a barrier on every thread) ran after its stamp, then the
 * reader check: an object no section was open for at that point is
 * reusable; else it waits, with the others found that way, until each
 * section open at the snapshot has closed.
 *
 * A thread's own full barrier is a flush of its id, as a CPU's own full
 * TLB flush is in the kernel (luf_local_flush_begin() and _end()): when it
 * folds a batch, a thread takes a new ugen (an atomic add on the source's
 * line), passes a full barrier, and raises its own done counter to that
 * ugen. Every batch stamped before the add, by any thread, then owes that
 * thread nothing: its later loads see every unpublish before those stamps
 * (the store-buffering pattern of <luf/ugen.h>, with the add in the
 * flusher's place), and a section it opened earlier is visible to the
 * reader check of whoever reads that done counter. A thread passes such
 * a barrier at each fold and before a flush it may owe (take_flushed()).
 * So a batch whose every thread of its set has passed one since its
 * stamp is reusable with no system call; a membarrier is sent only for
 * the threads that have not (readers that never retire, threads that
 * sleep). A thread that unregisters leaves the set of later retirements
 * and passes the same barrier last.
 *
 * The snapshot is taken when the first object of a waiting batch is
 * found, which is after that object's flush; objects found while a
 * snapshot is pending wait for the next one (taken once the pending one
 * passes, so after their flushes too). That is the whole grace period:
 * two generations of waiting objects per thread.
 *
 * A node's @next is its owner word: NULL while the object is the caller's,
 * never NULL from the luf_retire() that claims it (one compare-and-swap,
 * so of two threads retiring it at once exactly one wins) until
 * luf_reuse() or luf_proc_destroy() hands it back. Every access to it is
 * atomic: a losing retirement may read it while the owner relinks it.
 *
 * Cross-thread frees: a thread that retires more than it reuses (it holds
 * LUF_PROC_KEEP batches already) folds each further batch for the
 * domain's pool instead of its own free list: the nodes keep the batch's
 * key in their folio, not flushed for, and a thread whose luf_reuse()
 * finds its own lists empty takes up to a batch of them onto its free
 * list under that key (luf_free(): keys are the domain's, and a key's set
 * only grows until it is flushed, so the flush they owe is still named by
 * it). From there they go the usual way: one flush if still owed, then
 * the reader check. The pool is the pattern of mimalloc's and jemalloc's
 * remote frees (objects freed on one thread, reused on another), on
 * luf's deferred flush. A thread whose ready list outgrows LUF_PROC_KEEP
 * batches (it took pool batches while a reader stalled its grace
 * periods, and allocated meanwhile) moves the surplus to the domain's
 * spare list, which a thread with nothing ready takes before anything
 * else: readiness is the domain's (the flush and the reader check cover
 * every thread), so the objects one stall made the program allocate are
 * reused in the next stall, on any thread, instead of adding to them.
 *
 * A grace period that a reader stalls (one section open for more than
 * LUF_PROC_STALL_MS while objects wait for it) is reported once per
 * snapshot through the error hook (<luf/error.h>), naming the reader's
 * thread id; the clock is read only while a snapshot has not passed.
 *
 * fork(): the child has only the forking thread. pthread_atfork()
 * handlers take every lock of every live domain before the fork (the
 * domain's mutex, each key table entry's lock, the mprotect backend's
 * mutex), so that no lock and no shared set is left half-held in the
 * child, and release them after it; in the child, every other thread's
 * registration is dropped (its section closed, its slot free, its objects
 * left in the slot for the next thread that registers, or for destroy).
 */
#define _GNU_SOURCE
#include "user_internal.h"

#include <luf/luf_proc.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LUF_PROC_MAGIC 0x4c756650726f63UL /* "LufProc" */
#define LUF_THREAD_FREE 0u
#define LUF_THREAD_LIVE 0x4c756654u /* "LufT" */

/* Batches a thread keeps for itself before it hands further ones to the pool. */
#define LUF_PROC_KEEP 4u
/* A section open this long while objects wait for it is reported (ms). */
#define LUF_PROC_STALL_MS 1000u
/* Failed snapshot checks between two reads of the clock. */
#define LUF_PROC_STALL_CHECKS 64u

/* The end of a node list: every node luf holds has a non-NULL next. */
static struct luf_node node_end;
#define NODE_END (&node_end)

/* A list of nodes: LIFO at the head (hot first), spliced in O(1). */
struct node_list {
	struct luf_node *head, *tail;
	unsigned long nr;
};

/*
 * The updater's half of a thread (from @state) fills 3 cache lines; its
 * small counters are as narrow as their uses allow, so that it stays so.
 */
struct luf_thread {
	LUF_CACHE_ALIGNED struct luf_reader rd; /* first: luf_read_lock() casts */
	LUF_CACHE_ALIGNED unsigned int state;	/* LUF_THREAD_FREE or _LIVE */
	unsigned short id;			/* its backend CPU id */
	bool in_calls;				/* run_calls() is running: a nested call returns */
	bool stall_warned;			/* the pending snapshot's stall was reported */
	int tid;				/* its thread's id (gettid()), for reports */
	unsigned int stall_ms; /* when a failed check first read the clock (ms), 0 before */
	struct luf_proc *proc;
	struct luf_pcpu *pc;
	struct luf_freelist *fl;
	struct node_list open;	      /* retired, batch not folded yet */
	struct node_list ready;	      /* flushed, readers gone */
	struct node_list wait;	      /* flushed, waiting for the snapshot in @snap */
	struct node_list later;	      /* flushed, found while @wait's snapshot was pending */
	struct node_list calls;	      /* luf_call() objects no reader can read: callbacks to run */
	unsigned long calls_inflight; /* luf_call() objects on the lists above @calls */
	unsigned long *snap;   /* each thread's reader counter at the snapshot, 0 if outside */
	unsigned long fl_nr;   /* objects on @fl (its entries are batches: see fold_open()) */
	unsigned int poll_gen; /* the ugen source (low bits) when a poll of @fl found nothing */
	unsigned short misses; /* luf_reuse() calls in a row that found nothing (saturates) */
	unsigned char ticks;   /* luf_reuse() calls, modulo 256, for the periodic checks */
	unsigned char stall_checks; /* failed checks of the pending snapshot, modulo 256 */
};

_Static_assert(LUF_PROC_MAX_THREADS <= 65536, "struct luf_thread.id is 16 bits");
_Static_assert(LUF_PROC_MAX_BATCH < 65535, "struct luf_thread.misses saturates at 65535");
_Static_assert(256 % LUF_PROC_STALL_CHECKS == 0, "struct luf_thread.stall_checks wraps");

struct luf_proc {
	unsigned long magic;
	struct luf_user u;
	struct luf *l;
	struct luf_keytab *kt;
	unsigned long *all; /* every id registered now: the set a retirement may be read on */
	struct luf_thread *threads;
	unsigned int max_threads;
	unsigned int batch;
	void *mem;
	bool own_mem;
	pthread_mutex_t lock;	    /* registration and the orphans */
	struct luf_proc *next_live; /* on the list of live domains (fork handlers) */
	pthread_key_t exit_key;	    /* unregisters a thread that exits registered */
	unsigned int nr_registered;
	unsigned int hi;	    /* ids below it were ever registered: the ones to scan */
	struct node_list orphans;   /* handed over by unregistered threads: flushed */
	unsigned long orphan_calls; /* luf_call() objects among them, under @lock */
	unsigned long nr_orphans;   /* orphans.nr, written under @lock, read without it */
	struct node_list pool;	    /* folded batches of threads that reuse less: not flushed */
	unsigned long nr_pool;	    /* pool.nr, written under @lock, read without it */
	struct node_list spare;	    /* ready objects a thread had too many of: reusable */
	unsigned long nr_spare;	    /* spare.nr, written under @lock, read without it */
};

/* The calling thread's handle, if it is registered. */
static _Thread_local struct luf_thread *luf_self;

/* Every created domain, for the fork handlers; they hold @live_lock across fork(). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct luf_proc *live;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int atfork_err; /* pthread_atfork()'s error, if it failed */

static int proc_fail(int err, const char *fn, const char *what)
{
	return __luf_fail(err, fn, what);
}

static size_t lines(size_t bytes)
{
	return (bytes + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
}

static unsigned int nr_keys(unsigned int threads)
{
	unsigned int n = 4 * threads;

	return n < 64 ? 64 : n;
}

/* The layout of the block: each part's offset; returns the total, 0 if invalid. */
struct layout {
	size_t l, done, stats, kt, all, threads; /* offsets in the block */
	size_t per;				 /* where the per-thread parts start */
	size_t fl, snap;			 /* offsets in one thread's part (its pcpu at 0) */
	size_t per_thread, total;		 /* the size of one thread's part; of the block */
};

static size_t layout(const struct luf_proc_config *cfg, struct layout *lo)
{
	unsigned int n = cfg && cfg->max_threads ? cfg->max_threads : LUF_PROC_DEFAULT_THREADS;
	size_t off = lines(sizeof(struct luf_proc));

	if (n > LUF_PROC_MAX_THREADS)
		return 0;
	lo->l = off, off += lines(sizeof(struct luf));
	lo->done = off, off += lines(luf_done_size(n));
	lo->stats = off, off += lines(luf_stats_size(n));
	lo->kt = off, off += lines(luf_keytab_size(nr_keys(n), n));
	lo->all = off, off += lines(luf_cpumask_size(n));
	lo->threads = off, off += n * lines(sizeof(struct luf_thread));
	lo->fl = lines(luf_pcpu_size(n));
	lo->snap = lo->fl + lines(luf_freelist_size(n));
	lo->per_thread = lo->snap + lines(n * sizeof(unsigned long));
	lo->per = off;
	off += n * lo->per_thread;
	lo->total = off;
	return off;
}

size_t luf_proc_size(const struct luf_proc_config *cfg)
{
	struct layout lo;

	return layout(cfg, &lo);
}

static bool proc_ok(const struct luf_proc *p)
{
	return p && p->magic == LUF_PROC_MAGIC;
}

/* @t is a live handle and the calling thread's. */
static bool thread_ok(const struct luf_thread *t)
{
	return t && t == luf_self && t->state == LUF_THREAD_LIVE;
}

#if defined(LUF_DEBUG)
/* @t's depth of nested sections is at its largest: one more lock would wrap it. */
static bool nest_full(const struct luf_thread *t)
{
	unsigned long c = __atomic_load_n(&t->rd.ctr, __ATOMIC_RELAXED);

	return (c & LUF_READER_NEST_MASK) == LUF_READER_NEST_MASK;
}

/*
 * LUF_DEBUG: the checks of luf_read_lock(), luf_read_unlock() and
 * luf_read_inside(), called by their macros in luf_proc.h with the call
 * site (issue 30, finding 5). A failed check is one line through
 * __luf_fail() (so luf_last_error() and the error hook see it) and on
 * stderr, then abort().
 *
 * Why abort, where the core's LUF_DEBUG reports (__luf_freelist_report()
 * in luf_free() and luf_alloc()) report and go on: luf_free() refuses a
 * double free with -EBUSY and changes nothing, so its caller hears of it
 * and nothing is broken. These calls return nothing: going on
 * after a NULL handle faults, and a lock refused, or made on a wrong
 * handle, leaves the caller reading unprotected while it believes itself
 * inside a section: the silent failure the check exists to stop. So the
 * report ends the process, as a failed assert() does. (Only a hook that
 * does not return, e.g. a test's longjmp, goes on.)
 *
 * Async-signal-safe when the check passes (loads of the thread's own
 * words); a failed one calls snprintf() and stdio before it aborts.
 */
void __luf_proc_read_check(const struct luf_thread *t, bool lock, const char *fn, const char *file,
			   int line)
{
	const char *rule;
	char what[512];

#if defined(LUF_MUTANT_PROC_NO_DEBUG_CHECKS)
	/* Mutant: LUF_DEBUG checks nothing (tests/user/proc_debug.c must fail). */
	return;
#endif
	if (!t)
		rule = "@t is NULL";
	else if (!thread_ok(t))
		rule = "@t is not the calling thread's registered handle (another thread's, "
		       "or kept after luf_thread_unregister())";
	else if (lock && nest_full(t))
		rule = "the depth of nested sections is at LUF_READER_NEST_MASK: one more lock "
		       "would wrap it (a luf_read_lock() without its unlock?)";
	else
		return;
	snprintf(what, sizeof(what), "%s, at %s:%d", rule, file ? file : "?", line);
	__luf_fail(-EINVAL, fn, what);
	fprintf(stderr, "luf: %s: %s\n", fn, what);
	abort();
}
#endif

static void hold_back(struct luf_thread *t, struct node_list *list);
static void own_barrier(struct luf_proc *p, unsigned int id);
static inline void run_calls(struct luf_thread *t);
static void thread_exit(void *arg);

/* @n's link (its owner word: see the top of this file), read and written atomically. */
static struct luf_node *next_of(const struct luf_node *n)
{
	return __atomic_load_n(&n->next, __ATOMIC_RELAXED);
}

static void set_next(struct luf_node *n, struct luf_node *next)
{
	__atomic_store_n(&n->next, next, __ATOMIC_RELAXED);
}

static void push(struct node_list *l, struct luf_node *n)
{
	set_next(n, l->head ? l->head : NODE_END);
	if (!l->head)
		l->tail = n;
	l->head = n;
	l->nr++;
}

/* Take the head of @l; it stays luf's (its link non-NULL) until handed back. */
static struct luf_node *pop(struct node_list *l)
{
	struct luf_node *n = l->head;
	struct luf_node *next = next_of(n);

	l->head = next == NODE_END ? NULL : next;
	if (!l->head)
		l->tail = NULL;
	l->nr--;
	set_next(n, NODE_END);
	return n;
}

/*
 * The caller's again: release, so that the caller's next retirement (on
 * any thread the caller hands it to) claims a node luf no longer touches.
 */
static void hand_back(struct luf_node *n)
{
	__atomic_store_n(&n->next, NULL, __ATOMIC_RELEASE);
}

/* Put @src in front of @dst and empty @src. */
static void splice(struct node_list *dst, struct node_list *src)
{
	if (!src->head)
		return;
	set_next(src->tail, dst->head ? dst->head : NODE_END);
	if (!dst->head)
		dst->tail = src->tail;
	dst->head = src->head;
	dst->nr += src->nr;
	*src = (struct node_list){0};
}

/*
 * Close @t's open sections, if any, for a thread that reads nothing any
 * more (it exits, or it does not exist in a fork()'s child): depth 0 and
 * one more section left, in one store.
 */
static void close_sections(struct luf_thread *t)
{
	unsigned long c = t->rd.ctr;

	if (c & LUF_READER_NEST_MASK)
		__luf_store_release(&t->rd.ctr, (c & ~LUF_READER_NEST_MASK) + LUF_READER_LEFT);
}

/* Is the section a snapshot saw (@snap, depth not 0) still open at @cur? */
static bool section_open(unsigned long cur, unsigned long snap)
{
	return (cur & LUF_READER_NEST_MASK) &&
	       (cur >> LUF_READER_NEST_BITS) == (snap >> LUF_READER_NEST_BITS);
}

/*
 * Every lock of @p that a thread may hold for a moment: taken before
 * fork() so that none is held by a thread the child will not have.
 * Order: the domain's mutex, the key table's entries (never nested with
 * each other), the mprotect backend's mutex (held only around a flush,
 * which runs with no other lock held).
 */
static void lock_all(struct luf_proc *p)
{
	pthread_mutex_lock(&p->lock);
	for (unsigned int key = 1; key < p->kt->nr_keys; key++)
		(void)__luf_lock(&__luf_keytab_entry(p->kt, key)->lock);
	if (p->u.lock)
		pthread_mutex_lock(p->u.lock);
}

static void unlock_all(struct luf_proc *p)
{
	if (p->u.lock)
		pthread_mutex_unlock(p->u.lock);
	for (unsigned int key = 1; key < p->kt->nr_keys; key++)
		__luf_unlock(&__luf_keytab_entry(p->kt, key)->lock, 0);
	pthread_mutex_unlock(&p->lock);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&live_lock);
	for (struct luf_proc *p = live; p; p = p->next_live)
		lock_all(p);
}

static void fork_parent(void)
{
	for (struct luf_proc *p = live; p; p = p->next_live)
		unlock_all(p);
	pthread_mutex_unlock(&live_lock);
}

/*
 * In the child only the forking thread exists. Every other registered
 * thread reads nothing any more: its section is closed (a counter left odd
 * would hold back every reuse for ever) and its slot freed (destroy would
 * refuse for ever). Its objects stay in the slot: the next thread to take
 * the slot reuses them, destroy releases the rest. A domain being
 * destroyed at the fork (magic cleared) is left alone: it is the child's
 * leak, never its use.
 */
static void fork_child(void)
{
	for (struct luf_proc *p = live; p; p = p->next_live) {
		for (unsigned int i = 0; p->magic == LUF_PROC_MAGIC && i < p->max_threads; i++) {
			struct luf_thread *t = &p->threads[i];

			if (t->state != LUF_THREAD_LIVE || t == luf_self)
				continue;
			close_sections(t);
			own_barrier(p, t->id); /* it reads nothing here: it does not exist */
			luf_cpumask_clear_cpu(p->all, p->max_threads, t->id);
			t->state = LUF_THREAD_FREE;
			p->nr_registered--;
		}
		unlock_all(p);
	}
	pthread_mutex_unlock(&live_lock);
}

static void atfork_init(void)
{
	atfork_err = pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int luf_proc_create(struct luf_proc **out, const struct luf_proc_config *cfg)
{
	struct luf_proc_config def = {0};
	struct luf_user_config ucfg = {0};
	struct layout lo;
	struct luf_proc *p;
	unsigned int n;
	char *mem;
	int ret;

	if (!out)
		return proc_fail(-EINVAL, __func__, "@out is NULL");
	if (!cfg)
		cfg = &def;
	if (cfg->flags & ~(LUF_USER_SYNC_CORE | LUF_USER_FORCE_MPROTECT))
		return proc_fail(-EINVAL, __func__,
				 "cfg->flags has bits other than LUF_USER_SYNC_CORE and "
				 "LUF_USER_FORCE_MPROTECT");
	if (cfg->batch > LUF_PROC_MAX_BATCH)
		return proc_fail(-EINVAL, __func__,
				 "cfg->batch is above LUF_PROC_MAX_BATCH (4096)");
	if (!layout(cfg, &lo))
		return proc_fail(-EINVAL, __func__,
				 "cfg->max_threads is above LUF_PROC_MAX_THREADS (1024)");
	if (cfg->mem && (uintptr_t)cfg->mem % LUF_CACHELINE)
		return proc_fail(-EINVAL, __func__,
				 "cfg->mem is not aligned to LUF_CACHELINE (64 bytes)");
	if (cfg->mem && cfg->mem_size < lo.total)
		return proc_fail(
		    -ENOSPC, __func__,
		    "cfg->mem_size is below luf_proc_size(cfg): the block is too small");
	if (!cfg->mem && cfg->mem_size)
		return proc_fail(-EINVAL, __func__, "cfg->mem_size is set but cfg->mem is NULL");
	pthread_once(&atfork_once, atfork_init);
	if (atfork_err)
		return proc_fail(-atfork_err, __func__,
				 "pthread_atfork failed: fork() could not be handled");
	n = cfg->max_threads ? cfg->max_threads : LUF_PROC_DEFAULT_THREADS;
	mem = cfg->mem ? cfg->mem : aligned_alloc(LUF_CACHELINE, lo.total);
	if (!mem)
		return proc_fail(-ENOMEM, __func__, "no memory for the domain (aligned_alloc)");
	memset(mem, 0, lo.total);
	p = (struct luf_proc *)(void *)mem;
	p->mem = mem;
	p->own_mem = !cfg->mem;
	p->max_threads = n;
	p->batch = cfg->batch ? cfg->batch : LUF_PROC_DEFAULT_BATCH;
	p->l = (struct luf *)(void *)(mem + lo.l);
	p->kt = (struct luf_keytab *)(void *)(mem + lo.kt);
	p->all = (unsigned long *)(void *)(mem + lo.all); /* empty: registration fills it */
	p->threads = (struct luf_thread *)(void *)(mem + lo.threads);

	ucfg.flags = cfg->flags;
	ucfg.nr_ids = n;
	ucfg.membarrier = cfg->membarrier;
	ret = luf_user_backend_open(&p->u, &ucfg);
	if (ret) {
		char why[LUF_USER_WHY_LEN + 32];

		snprintf(why, sizeof(why), "no sound backend: %s", p->u.why);
		proc_fail(ret, __func__, why);
		goto free;
	}
	ret = luf_init(p->l, &luf_user_ops, &p->u, (struct luf_done_cpu *)(void *)(mem + lo.done),
		       (struct luf_stats_cpu *)(void *)(mem + lo.stats), 0);
	if (!ret)
		ret = luf_keytab_init(p->kt, p->l, nr_keys(n));
	for (unsigned int i = 0; !ret && i < n; i++) {
		struct luf_thread *t = &p->threads[i];
		char *base = mem + lo.per + i * lo.per_thread;

		t->id = (unsigned short)i;
		t->proc = p;
		t->pc = (struct luf_pcpu *)(void *)base;
		t->fl = (struct luf_freelist *)(void *)(base + lo.fl);
		t->snap = (unsigned long *)(void *)(base + lo.snap);
		ret = luf_pcpu_init(t->pc, p->l, p->kt, i, LUF_PCPU_DEFAULT_THRESHOLD);
		if (!ret)
			ret = luf_freelist_init(t->fl, p->l, p->kt, 0);
	}
	if (ret) {
		proc_fail(ret, __func__, "the low-level set-up failed (a luf bug)");
		goto close;
	}
	ret = pthread_key_create(&p->exit_key, thread_exit);
	if (ret) {
		ret = proc_fail(-ret, __func__, "pthread_key_create failed (PTHREAD_KEYS_MAX?)");
		goto close;
	}
	ret = pthread_mutex_init(&p->lock, NULL);
	if (ret) {
		pthread_key_delete(p->exit_key);
		ret = proc_fail(-ret, __func__, "pthread_mutex_init failed");
		goto close;
	}
	p->magic = LUF_PROC_MAGIC;
	pthread_mutex_lock(&live_lock);
	p->next_live = live;
	live = p;
	pthread_mutex_unlock(&live_lock);
	*out = p;
	return 0;
close:
	luf_user_close(&p->u);
free:
	if (!cfg->mem)
		free(mem);
	return ret;
}

/*
 * Thread id @id passed a full barrier: its done counter goes to a ugen
 * taken before it, which covers every batch stamped before that (the top
 * of this file). Called by the thread itself (a fold, its unregister), or
 * for a thread that no longer exists (fork_child()).
 */
static void own_barrier(struct luf_proc *p, unsigned int id)
{
	unsigned long g = luf_local_flush_begin(p->l); /* a new ugen, never 0 */

	__luf_smp_mb(); /* the barrier: after the add (above), before the mark */
#if defined(LUF_MUTANT_PROC_BARRIER_MARKS_ALL)
	/* Mutant: a thread's barrier marks every id done, as if each had passed one. */
	for (id = 0; id < p->max_threads; id++)
		luf_local_flush_end(p->l, id, g);
#else
	luf_local_flush_end(p->l, id, g);
#endif
}

/*
 * Close @t's open batch: record its removal (one luf_unmap() of a
 * read-only translation on every id) and fold it, naming its key in
 * *@key. One stamp for the whole batch, read now: after every retirement
 * of the batch, and so after each one's unpublish (U1, earlier on this
 * thread; luf_ugen_stamp() has the full barrier), it is at or past each
 * object's own stamp, and only a flush that started after it covers the
 * batch. Per object it cost a fence and a few dozen instructions in
 * luf_retire(), for the same key.
 */
static int close_open(struct luf_thread *t, unsigned short *key)
{
	/*
	 * The set: the ids registered now (@p->all, read after the stamp's
	 * fence), not every id of max_threads. A thread that unregistered
	 * passed its last barrier then (own_barrier()), so it holds nothing
	 * stamped after it. A thread whose id this read misses set it and
	 * then passed a full fence (luf_thread_register()) before its first
	 * load: store buffering against the stamp's fence, so that load sees
	 * every unpublish of the batch. The calling thread's own id is in
	 * the set (its registration set it, earlier on this thread), so it
	 * is never empty. With the default 64 ids and 2 threads registered,
	 * each flush raised and summed 64 counters (about 4,700 instructions
	 * and 128 atomic operations); now 2. After the fold, the thread's
	 * own barrier marks its id done (own_barrier()).
	 */
#if defined(LUF_MUTANT_PROC_STAMP_AT_FIRST)
	/* Mutant: stamped at the batch's first retirement (retire()), not now. */
	int ret = 0;
#else
	int ret = luf_unmap(t->pc, NULL, t->proc->all, LUF_PTE_ACCESSIBLE);
#endif

	if (!ret)
		ret = luf_pcpu_fold(t->pc, key);
	if (!ret)
		own_barrier(t->proc, t->id);
	return ret;
}

/*
 * Fold the open batch and free it under the batch's key, as one folio of
 * the free list: its first node's. The batch's other nodes stay linked
 * behind that node (their links, to NODE_END), so take_batch() gets the
 * whole batch back from the one folio luf_alloc() hands out: one
 * luf_free() and one luf_alloc() per batch. The other nodes' folios stay
 * LUF_FOLIO_IN_USE, on no list; only the first node's is the free list's.
 */
static int fold_open(struct luf_thread *t)
{
	unsigned short key = 0;
	int ret;

	if (!t->open.head)
		return 0;
	ret = close_open(t, &key);
	if (!ret)
		ret = luf_free(t->fl, t->pc, &t->open.head->folio, key);
	if (ret)
		return ret; /* the batch stays open, as it was */
	t->fl_nr += t->open.nr;
	t->open = (struct node_list){0};
	return 0;
}

/*
 * The batch whose first node's folio @f luf_alloc() handed out: its nodes
 * (the first and those linked behind it, to NODE_END) go in front of
 * @list, off @t's free list.
 */
static void take_batch(struct luf_thread *t, struct node_list *list, struct luf_folio *f)
{
	struct luf_node *first = luf_node_entry(f, struct luf_node, folio), *last = first, *next;
	unsigned long nr = 1;

	while ((next = next_of(last)) != NODE_END)
		last = next, nr++;
	set_next(last, list->head ? list->head : NODE_END);
	if (!list->head)
		list->tail = last;
	list->head = first;
	list->nr += nr;
	t->fl_nr -= nr;
}

/* Objects on @t's free list (its entries are batches: luf_freelist_nr_*() count those). */
static unsigned long on_free_list(const struct luf_thread *t)
{
	return t->fl_nr;
}

/* What @t holds past its open batch: its free list and the objects found on it. */
static unsigned long held_back(const struct luf_thread *t)
{
	return on_free_list(t) + t->ready.nr + t->wait.nr + t->later.nr;
}

/*
 * Does @t fold its full batch for the pool? When it holds LUF_PROC_KEEP
 * batches already: it retires more than it reuses.
 */
static bool hands_over(const struct luf_thread *t)
{
#if defined(LUF_MUTANT_PROC_NO_POOL)
	/* Mutant: every batch stays with the thread that retired it. */
	return false;
#endif
	return held_back(t) >= (unsigned long)LUF_PROC_KEEP * t->proc->batch;
}

/*
 * Fold the open batch and hand it to the domain's pool: each node keeps
 * the batch's key in its folio (still LUF_FOLIO_IN_USE, on no free list)
 * for the luf_free() of the thread that takes it (take_pool()). No flush.
 * A batch with a luf_call() object stays with the thread (fold_open()): a
 * callback runs on the thread that queued it, or on one that adopts it.
 */
static int fold_to_pool(struct luf_thread *t)
{
	struct luf_proc *p = t->proc;
	unsigned short key = 0;
	int ret;

	for (struct luf_node *n = t->open.head; n != NODE_END; n = next_of(n))
		if (n->func)
			return fold_open(t);
	ret = close_open(t, &key);
	if (ret)
		return ret;
	for (struct luf_node *n = t->open.head; n != NODE_END; n = next_of(n))
		n->folio.key = key;
	pthread_mutex_lock(&p->lock);
	splice(&p->pool, &t->open);
	__atomic_store_n(&p->nr_pool, p->pool.nr, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/*
 * Keep at most LUF_PROC_KEEP batches ready on @t: the rest (whole, from
 * the first node past the kept ones) go to the domain's spare list.
 */
static void spill_ready_slow(struct luf_thread *t, unsigned long keep)
{
	struct luf_proc *p = t->proc;
	struct node_list rest;
	struct luf_node *cut = t->ready.head;

	for (unsigned long i = 1; i < keep; i++)
		cut = next_of(cut);
	rest.head = next_of(cut);
	rest.tail = t->ready.tail;
	rest.nr = t->ready.nr - keep;
	set_next(cut, NODE_END);
	t->ready.tail = cut;
	t->ready.nr = keep;
	pthread_mutex_lock(&p->lock);
	splice(&p->spare, &rest);
	__atomic_store_n(&p->nr_spare, p->spare.nr, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
}

static inline void spill_ready(struct luf_thread *t)
{
	unsigned long keep = (unsigned long)LUF_PROC_KEEP * t->proc->batch;

	if (t->ready.nr > keep)
		spill_ready_slow(t, keep);
}

/* Take up to a batch of the spare list: ready at once. Return: true if some were. */
static bool take_spare(struct luf_thread *t)
{
	struct luf_proc *p = t->proc;
	bool took = false;

	if (!__atomic_load_n(&p->nr_spare, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&p->lock);
	for (unsigned long i = 0; p->spare.head && i < p->batch; i++, took = true)
		push(&t->ready, pop(&p->spare));
	__atomic_store_n(&p->nr_spare, p->spare.nr, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	return took;
}

/*
 * Take the whole pool onto @t's free list, each node under the key it was
 * folded with: one flush and one grace period for all of it (what the
 * thread then has too many of goes to the spare list once it is ready).
 * A run of nodes with one key (a folded batch) is one entry of the free
 * list, as fold_open() makes them.
 * Return: true if some were taken.
 */
static bool take_pool(struct luf_thread *t)
{
	struct luf_proc *p = t->proc;
	struct node_list list = {0};

	if (!__atomic_load_n(&p->nr_pool, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&p->lock);
	splice(&list, &p->pool);
	__atomic_store_n(&p->nr_pool, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	while (list.head) {
		struct luf_node *first = list.head, *last = first, *next;
		unsigned short key = first->folio.key;
		unsigned long nr = 1;

		while ((next = next_of(last)) != NODE_END && next->folio.key == key)
			last = next, nr++;
#if defined(LUF_MUTANT_PROC_POOL_NO_KEY)
		/* Mutant: the pool's objects are freed as if they owed no flush. */
		key = 0;
#endif
		set_next(last, NODE_END); /* the run, cut off the list */
		if (luf_free(t->fl, t->pc, &first->folio, key)) {
			/* Cannot happen (a valid key, IN_USE): keep them pooled, lose nothing. */
			set_next(last, next);
			pthread_mutex_lock(&p->lock);
			splice(&p->pool, &list);
			__atomic_store_n(&p->nr_pool, p->pool.nr, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&p->lock);
			break;
		}
		t->fl_nr += nr;
		list.head = next == NODE_END ? NULL : next;
		if (!list.head)
			list.tail = NULL;
		list.nr -= nr;
	}
	return true;
}

/*
 * Take every object off @t's free list into @out, flushing first what is
 * still owed (a refill may release only the done head of the pend list:
 * repeat until none is left). On a flush error the objects not taken stay
 * on the list, pend.
 */
static int drain(struct luf_thread *t, struct node_list *out)
{
	struct luf_folio *f;
	int ret;

	for (;;) {
		while (!luf_alloc(t->fl, t->pc, 0, &f))
			take_batch(t, out, f);
		if (!luf_freelist_nr_pend(t->fl))
			return 0;
		ret = luf_freelist_refill(t->fl, t->pc, LUF_ALLOC_MAY_FLUSH);
		if (ret < 0)
			return ret;
	}
}

int luf_proc_destroy(struct luf_proc *p, void (*release)(struct luf_node *n, void *arg), void *arg)
{
	int ret = 0;

	if (!proc_ok(p))
		return proc_fail(-EINVAL, __func__,
				 "@p is not a live domain (NULL, or destroyed with its own block)");
	pthread_mutex_lock(&p->lock);
	if (p->nr_registered) {
		pthread_mutex_unlock(&p->lock);
		return proc_fail(-EBUSY, __func__,
				 "a thread is still registered: luf_thread_unregister() it first");
	}
	/* Whatever a slot still holds (a failed hand-over) joins the orphans. */
	for (unsigned int i = 0; i < p->max_threads && !ret; i++) {
		struct luf_thread *t = &p->threads[i];
		struct node_list list = {0};

		ret = fold_open(t);
		if (!ret)
			ret = drain(t, &list);
		splice(&list, &t->ready);
		splice(&list, &t->wait);
		splice(&list, &t->later);
		splice(&list, &t->calls);
		splice(&p->orphans, &list);
	}
	if (ret) {
		pthread_mutex_unlock(&p->lock);
		return proc_fail(ret, __func__, "the last flush failed: nothing was released");
	}
	/* The pool was never flushed for: with no thread registered, no reader is left. */
	splice(&p->orphans, &p->pool);
	splice(&p->orphans, &p->spare);
	p->magic = 0;
	pthread_mutex_unlock(&p->lock);
	/* Off the live list before its locks go: a fork waits for this. */
	pthread_mutex_lock(&live_lock);
	for (struct luf_proc **pp = &live; *pp; pp = &(*pp)->next_live)
		if (*pp == p) {
			*pp = p->next_live;
			break;
		}
	pthread_mutex_unlock(&live_lock);
	pthread_key_delete(p->exit_key);
	while (p->orphans.head) {
		struct luf_node *n = pop(&p->orphans);
		luf_call_fn *func = n->func;

		n->func = NULL;
		hand_back(n);
		if (func)
			func(n);
		else if (release)
			release(n, arg);
	}
	for (unsigned int i = 0; i < p->max_threads; i++) {
		luf_freelist_fini(p->threads[i].fl);
		luf_pcpu_fini(p->threads[i].pc);
	}
	luf_keytab_fini(p->kt);
	luf_fini(p->l);
	luf_user_close(&p->u);
	pthread_mutex_destroy(&p->lock);
	if (p->own_mem)
		free(p->mem);
	return 0;
}

int luf_thread_register(struct luf_proc *p, struct luf_thread **out)
{
	struct luf_thread *t = NULL;
	int ret;

	if (!proc_ok(p) || !out)
		return proc_fail(-EINVAL, __func__, "@p is not a live domain, or @out is NULL");
	if (luf_self)
		return proc_fail(-EBUSY, __func__,
				 "the calling thread is registered already (with this domain or "
				 "another): luf_thread_unregister() first");
	pthread_mutex_lock(&p->lock);
	for (unsigned int i = 0; i < p->max_threads && !t; i++)
		if (p->threads[i].state == LUF_THREAD_FREE)
			t = &p->threads[i];
	if (!t) {
		pthread_mutex_unlock(&p->lock);
		return proc_fail(-EUSERS, __func__,
				 "cfg->max_threads threads are registered already: the thread id "
				 "would be out of range");
	}
	ret = luf_user_set_thread_id(&p->u, t->id);
	if (ret) {
		pthread_mutex_unlock(&p->lock);
		return proc_fail(ret, __func__, "luf_user_set_thread_id() refused the id");
	}
	t->state = LUF_THREAD_LIVE;
	__atomic_store_n(&t->tid, (int)gettid(), __ATOMIC_RELAXED);
	p->nr_registered++;
	/* Its id joins the set of every later retirement (close_open()), before any of its own. */
#if !defined(LUF_MUTANT_PROC_REGISTER_NOT_IN_SET)
	luf_cpumask_set_cpu(p->all, p->max_threads, t->id);
#else
	/* Mutant: the id never joins the set: no retirement names it, and no flush waits for it. */
#endif
	if (t->id >= p->hi)
		__atomic_store_n(&p->hi, t->id + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->lock);
	/*
	 * Its id in the set before any load of its sections: a retirement
	 * whose fold (its barrier, then the read of the set) misses the id
	 * was unpublished before every load this thread does from here on
	 * (store buffering, with a full barrier on both sides). Without it a
	 * batch of the other threads could be marked done by their own
	 * barriers alone while this thread still loads an object of it.
	 */
	__luf_smp_mb();
	luf_self = t;
	pthread_setspecific(p->exit_key, t);
	*out = t;
	return 0;
}

int luf_thread_unregister(struct luf_thread *t)
{
	struct node_list list = {0};
	struct luf_proc *p;
	int ret;

	if (!thread_ok(t))
		return proc_fail(-EINVAL, __func__,
				 "@t is not the calling thread's registered handle");
	if (t->rd.ctr & LUF_READER_NEST_MASK)
		return proc_fail(-EBUSY, __func__, "the thread is inside a read section");
	p = t->proc;
	run_calls(t);
	own_barrier(p, t->id); /* its own id owes nothing: drain flushes for the others only */
	ret = fold_open(t);
	if (!ret)
		ret = drain(t, &list);
	if (ret) {
		hold_back(t, &list); /* flushed: nothing is lost, the thread stays */
		return proc_fail(ret, __func__, "the flush of what the thread holds failed");
	}
	splice(&list, &t->ready);
	splice(&list, &t->wait);
	splice(&list, &t->later);
	pthread_mutex_lock(&p->lock);
	splice(&p->orphans, &list);
	p->orphan_calls += t->calls_inflight;
	t->calls_inflight = 0;
	__atomic_store_n(&p->nr_orphans, p->orphans.nr, __ATOMIC_RELAXED);
	/*
	 * It reads nothing from here on: it leaves the set of later
	 * retirements, then its last barrier covers every batch stamped
	 * before that (a fold whose read of the set, after its stamp's
	 * fence, still saw the id stamped before this fence), so no flush
	 * waits for a thread that is gone.
	 */
	luf_cpumask_clear_cpu(p->all, p->max_threads, t->id);
	__luf_smp_mb();
	own_barrier(p, t->id);
	t->state = LUF_THREAD_FREE;
	p->nr_registered--;
	pthread_mutex_unlock(&p->lock);
	pthread_setspecific(p->exit_key, NULL);
	luf_self = NULL;
	return 0;
}

/*
 * A thread exits registered (pthread key destructor): it reads nothing
 * any more, so its open section, if any, is closed, and it unregisters.
 * If the flush fails every time, its objects stay in its slot, which
 * luf_proc_destroy() drains; the slot is then never reused.
 *
 * Signals are blocked first, for the rest of the thread's life: key
 * destructors run with them unblocked, and a handler that opens a section
 * on the thread's handle after its slot is free would write the reader
 * word of the slot's next owner (a section of its hidden, or one left
 * open for ever). Without the block a checker saw 2 such writes in 10 s
 * (tests/user/proc_signal.c, --exit-registered).
 */
static void thread_exit(void *arg)
{
	struct luf_thread *t = arg;
	sigset_t all;

	if (t != luf_self)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	close_sections(t);
	for (int i = 0; i < 3 && luf_thread_unregister(t); i++)
		;
}

/*
 * The open batch is full: to the thread's free list, or to the pool if the
 * thread holds enough. Out of line: once per batch, and luf_retire() then
 * saves and restores few registers.
 */
static __attribute__((noinline)) int fold_full(struct luf_thread *t)
{
	return hands_over(t) ? fold_to_pool(t) : fold_open(t);
}

/*
 * Make @n luf's: its link from NULL to non-NULL in one compare-and-swap.
 * Of two threads retiring @n at once, exactly one succeeds; the other sees
 * a non-NULL link and changes nothing. Without it both passed a plain
 * check and put @n on two lists (issue 30, finding 2):
 *
 *   thread A                        thread B
 *   n->next == NULL: ok             n->next == NULL: ok
 *   push(A's open list, n)          push(B's open list, n)   n on both
 *
 * Acquire pairs with hand_back()'s release: luf's last writes to @n are
 * done before a new claim.
 */
static bool claim(struct luf_node *n)
{
	struct luf_node *none = NULL;

	return __atomic_compare_exchange_n(&n->next, &none, NODE_END, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

/*
 * luf_retire() and luf_call(): @func NULL for a retirement; @fn names the
 * call. The removal is recorded when the batch is folded (close_open()).
 */
static int retire(struct luf_thread *t, struct luf_node *n, luf_call_fn *func, const char *fn)
{
	if (!thread_ok(t))
		return proc_fail(-EINVAL, fn, "@t is not the calling thread's registered handle");
	if (!n)
		return proc_fail(-EINVAL, fn, "@n is NULL");
	if (!claim(n))
		return proc_fail(-EBUSY, fn,
				 "@n is retired already (maybe by another thread at the same "
				 "time), or was not zeroed before its first retirement");
	if (n->folio.state != LUF_FOLIO_IN_USE) {
		hand_back(n);
		return proc_fail(-EBUSY, fn,
				 "@n was not zeroed before its first retirement (its folio "
				 "state is not LUF_FOLIO_IN_USE)");
	}
#if defined(LUF_MUTANT_PROC_STAMP_AT_FIRST)
	/*
	 * Mutant: the batch's stamp is read at its first retirement, before
	 * the later ones' unpublish: a flush between the two covers them.
	 */
	if (!t->open.head) {
		int ret = luf_unmap(t->pc, NULL, t->proc->all, LUF_PTE_ACCESSIBLE);

		if (ret) {
			hand_back(n);
			return ret;
		}
	}
#endif
	n->func = func;
	if (func)
		t->calls_inflight++;
	push(&t->open, n);
	if (t->open.nr >= t->proc->batch)
		return fold_full(t);
	return 0;
}

int luf_retire(struct luf_thread *t, struct luf_node *n)
{
	return retire(t, n, NULL, __func__);
}

/* Is some registered thread inside a read section? (Its depth is not 0.) */
static bool readers_inside(const struct luf_proc *p)
{
#if defined(LUF_MUTANT_PROC_NO_READERS)
	/* Mutant: hands objects back while sections may still read them. */
	return false;
#endif
	unsigned int hi = __atomic_load_n(&p->hi, __ATOMIC_ACQUIRE);

	for (unsigned int i = 0; i < hi; i++)
		if (__luf_load_acquire(&p->threads[i].rd.ctr) & LUF_READER_NEST_MASK)
			return true;
	return false;
}

static void take_snapshot(struct luf_thread *t)
{
	const struct luf_proc *p = t->proc;
	unsigned int hi = __atomic_load_n(&p->hi, __ATOMIC_ACQUIRE);

	for (unsigned int i = 0; i < p->max_threads; i++) {
		unsigned long c = i < hi ? __luf_load_acquire(&p->threads[i].rd.ctr) : 0;

		t->snap[i] = (c & LUF_READER_NEST_MASK) ? c : 0;
	}
	t->stall_checks = 0;
	t->stall_ms = 0;
	t->stall_warned = false;
}

/* The monotonic clock in ms, modulo 2^32 (differences of up to 49 days are right); never 0. */
static unsigned int now_ms(void)
{
	struct timespec ts;
	unsigned int ms;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ms = (unsigned int)((unsigned long long)ts.tv_sec * 1000u +
			    (unsigned long long)ts.tv_nsec / 1000000u);
	return ms ? ms : 1;
}

/*
 * The pending snapshot of @t did not pass: once it has failed for
 * LUF_PROC_STALL_MS (the clock is read every LUF_PROC_STALL_CHECKS
 * failed checks, from the first such read), report the first reader
 * still inside its section, once, through the error hook: a section that
 * never closes would otherwise hold back every later object in silence.
 */
static void check_stall(struct luf_thread *t)
{
	const struct luf_proc *p = t->proc;
	unsigned int hi = __atomic_load_n(&p->hi, __ATOMIC_ACQUIRE);
	unsigned int now;
	char what[160];

	if (t->stall_warned || ++t->stall_checks % LUF_PROC_STALL_CHECKS)
		return;
	now = now_ms();
	if (!t->stall_ms) {
		t->stall_ms = now;
		return;
	}
	if (now - t->stall_ms < LUF_PROC_STALL_MS)
		return;
	for (unsigned int i = 0; i < hi; i++) {
		if (!t->snap[i] ||
		    !section_open(__luf_load_acquire(&p->threads[i].rd.ctr), t->snap[i]))
			continue;
		snprintf(what, sizeof(what),
			 "reader %u (thread id %d) has stayed inside one read section for over "
			 "%u ms: %lu objects wait for it",
			 i, __atomic_load_n(&p->threads[i].tid, __ATOMIC_RELAXED),
			 LUF_PROC_STALL_MS, t->wait.nr + t->later.nr);
		t->stall_warned = true;
		(void)__luf_fail(-EAGAIN, "luf_proc", what);
		return;
	}
}

/*
 * Has every section open at the snapshot closed? A thread's section is
 * still open while its depth is not 0 and its count of sections left is
 * the snapshot's; its depth alone may change (nested sections, signal
 * handlers) while the section stays open.
 */
static bool snapshot_passed(const struct luf_thread *t)
{
	const struct luf_proc *p = t->proc;

#if defined(LUF_MUTANT_PROC_NO_READERS)
	return true;
#endif
	unsigned int hi = __atomic_load_n(&p->hi, __ATOMIC_ACQUIRE);

	for (unsigned int i = 0; i < hi; i++)
		if (t->snap[i] &&
		    section_open(__luf_load_acquire(&p->threads[i].rd.ctr), t->snap[i]))
			return false;
	return true;
}

/*
 * Flushed objects (@list) that some reader may still read: they wait for
 * a snapshot taken after their flush.
 */
static void hold_back(struct luf_thread *t, struct node_list *list)
{
#if defined(LUF_MUTANT_PROC_SNAP_EARLY)
	/* Mutant: joins a snapshot taken before these objects' flush. */
	if (t->wait.head) {
		splice(&t->wait, list);
		return;
	}
#endif
	if (!t->wait.head) {
		splice(&t->wait, list);
		take_snapshot(t);
	} else {
		splice(&t->later, list);
	}
}

/*
 * @list no reader can read any more: to @t's ready list, but luf_call()'s
 * objects to its calls list (a walk only while some are under way).
 */
static void make_ready(struct luf_thread *t, struct node_list *list)
{
	if (!t->calls_inflight) {
		splice(&t->ready, list);
		return;
	}
	while (list->head) {
		struct luf_node *n = pop(list);

		if (n->func) {
			push(&t->calls, n);
			t->calls_inflight--;
		} else {
			push(&t->ready, n);
		}
	}
}

/*
 * Run the callbacks of @t's calls list; each object is the caller's again
 * first. Not nested: a callback's own luf calls leave what becomes due to
 * this loop, so a callback that calls luf_call() again (a chain) runs in
 * constant stack.
 */
static void run_calls_slow(struct luf_thread *t)
{
	t->in_calls = true;
	while (t->calls.head) {
		struct luf_node *n = pop(&t->calls);
		luf_call_fn *func = n->func;

		n->func = NULL;
		hand_back(n);
		func(n);
	}
	t->in_calls = false;
}

static inline void run_calls(struct luf_thread *t)
{
	if (t->calls.head && !t->in_calls)
		run_calls_slow(t);
}

/* Move @wait to @ready if its snapshot passed, and start the next generation. */
static void advance(struct luf_thread *t)
{
	if (!t->wait.head)
		return;
	if (!snapshot_passed(t)) {
		check_stall(t);
		return;
	}
	make_ready(t, &t->wait);
	splice(&t->wait, &t->later);
	if (t->wait.head)
		take_snapshot(t);
}

/* Take over the objects unregistered threads left: flushed, readers unknown. */
static bool adopt(struct luf_thread *t)
{
	struct luf_proc *p = t->proc;
	struct node_list list;

	if (!__atomic_load_n(&p->nr_orphans, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&p->lock);
	list = p->orphans;
	p->orphans = (struct node_list){0};
	t->calls_inflight += p->orphan_calls;
	p->orphan_calls = 0;
	__atomic_store_n(&p->nr_orphans, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	if (!list.head)
		return false;
	hold_back(t, &list);
	return true;
}

/*
 * Take the objects of the free list that owe no flush, or with
 * LUF_ALLOC_MAY_FLUSH every object, flushing first if they still owe it
 * (luf_alloc() flushes once for the whole pend list): ready if no reader
 * is inside a section now, else held back. Return: 1 if objects were
 * taken, 0 if none was, or the flush's error.
 */
static int take_flushed(struct luf_thread *t, unsigned int flags)
{
	struct node_list list = {0};
	struct luf_folio *f;
	int ret;

	/*
	 * Before a flush that may be owed: the thread's own barrier, so that
	 * its own id owes nothing (a thread that only reuses, such as the
	 * allocating side of cross-thread frees, never folds) and a flush is
	 * sent only for the others that passed none.
	 */
	if ((flags & LUF_ALLOC_MAY_FLUSH) && luf_freelist_nr_pend(t->fl))
		own_barrier(t->proc, t->id);
	while (!(ret = luf_alloc(t->fl, t->pc, flags, &f))) {
		take_batch(t, &list, f);
		flags = 0; /* the rest are clean now: never a second flush */
	}
	if (!list.head)
		return ret == -ENOMEM || (ret == -EAGAIN && !(flags & LUF_ALLOC_MAY_FLUSH)) ? 0
											    : ret;
	if (!readers_inside(t->proc))
		make_ready(t, &list);
	else
		hold_back(t, &list);
	return 1;
}

/*
 * luf_reuse() with an empty ready list: fill it, in the order of
 * luf_reuse()'s comment. Out of line, so that the common call (an object
 * on the ready list) saves and restores few registers. Return: 0 (the
 * ready list may still be empty) or the flush's error.
 */
static __attribute__((noinline)) int refill_ready(struct luf_thread *t)
{
	int ret;

	advance(t);
	if (!t->ready.head) {
		ret = take_flushed(t, LUF_ALLOC_MAY_FLUSH);
		/*
		 * Nothing on the free list. A part batch is folded (and so
		 * flushed for) only after a whole batch of calls found nothing,
		 * and none waits for readers: otherwise a thread that reuses
		 * what it just retired would flush on every call. Then what
		 * unregistered threads left.
		 */
		if (!ret && t->open.head && !t->wait.head && t->misses >= t->proc->batch) {
			ret = fold_open(t);
			if (!ret)
				ret = take_flushed(t, LUF_ALLOC_MAY_FLUSH);
		}
		/*
		 * Then the pool (what threads that retire more than they reuse
		 * left); if that gives nothing ready (its objects wait for
		 * readers) the spare list (what threads had too many of: ready
		 * at once), the reserve for a grace period a reader stalls.
		 */
		if (!ret && take_pool(t))
			ret = take_flushed(t, LUF_ALLOC_MAY_FLUSH);
		if (ret >= 0 && !t->ready.head && take_spare(t))
			ret = 1;
		if (!ret && adopt(t))
			advance(t);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int luf_reuse(struct luf_thread *t, struct luf_node **out)
{
	unsigned long batch, free;
	int ret;

	if (!thread_ok(t))
		return proc_fail(-EINVAL, __func__,
				 "@t is not the calling thread's registered handle");
	if (!out)
		return proc_fail(-EINVAL, __func__, "@out is NULL");
	run_calls(t); /* luf_call()'s objects that became due in earlier calls */
	if (!t->ready.head) {
		ret = refill_ready(t);
		if (ret < 0)
			return ret;
	}
	if (!t->ready.head) {
		if (t->misses != 0xffff)
			t->misses++;
		return -EAGAIN;
	}
	t->misses = 0;
	*out = pop(&t->ready);
	hand_back(*out);
	/*
	 * Keep a grace period under way while objects wait for one, so they
	 * reach the ready list before it runs out: a stalled reader (one
	 * preempted inside its section) is then absorbed by what is ready
	 * instead of by new allocations. When the ready list runs low or the
	 * free list outgrows it, the free list is taken as far as it owes no
	 * flush (the threads' own barriers at their folds, or another
	 * thread's flush, covered it), with a flush only as the branch below
	 * says; a free list of a batch or more is polled the same way. A
	 * pending period is checked when the ready list is short, else every
	 * 16th call (the scan reads lines the readers write).
	 *
	 * A poll finds something only after done counters moved, and each
	 * move takes a new ugen from the source first (a flush, a fold's own
	 * barrier): while the source is where it was at the last poll that
	 * found nothing, the poll is skipped (one load of a line only those
	 * write, where a failing poll read the pend set, the done summary and
	 * a key's entry: most of luf_reuse()'s cost with a batch on the free
	 * list). A move that took its ugen before that poll and raised done
	 * after it is found by the poll of every 16th call, or by the next
	 * flush of this thread, whose diet drops what it covered.
	 */
	batch = t->proc->batch;
	spill_ready(t);
	free = on_free_list(t);
	if (t->wait.head) {
		if (t->ready.nr < batch || !(++t->ticks % 16))
			advance(t);
	} else if ((t->ready.nr < batch / 2 && (free || take_pool(t))) ||
		   free > (t->ready.nr > batch ? t->ready.nr : batch)) {
		/*
		 * The free list (else the pool, taken early): what the threads'
		 * own barriers covered, with no system call. A flush only if
		 * that was nothing and the free list holds more than
		 * LUF_PROC_KEEP batches (rare: a thread hands further batches
		 * to the pool; pool batches and luf_call() batches can get it
		 * there); else the threads' next folds may cover it, and an
		 * empty ready list flushes (refill_ready()). Flushing
		 * here as soon as the ready list ran below half a batch cost
		 * luf-ds 1.9 membarriers per 1000 updates at 2 threads and 50%
		 * updates, 0.7 this way.
		 */
		if (!take_flushed(t, 0) && on_free_list(t) > (unsigned long)LUF_PROC_KEEP * batch)
			take_flushed(t, LUF_ALLOC_MAY_FLUSH);
	} else if (free >= batch) {
		unsigned int gen = (unsigned int)luf_flush_snapshot(t->proc->l);

		if ((gen != t->poll_gen || !(++t->ticks % 16)) && !take_flushed(t, 0))
			t->poll_gen = gen;
	}
	return 0;
}

/*
 * Wait until every section open now has closed: per thread, its counter
 * now, then until its count of sections left moves or its depth is 0
 * (liburcu's wait for readers, one thread at a time: a section that opens
 * after the read of its thread's counter began after the caller's
 * barrier, so it cannot hold what the caller unpublished before it).
 * Yields while it spins. Skips the calling thread (outside any section).
 */
static void wait_for_readers(const struct luf_thread *t)
{
	const struct luf_proc *p = t->proc;
	unsigned int hi = __atomic_load_n(&p->hi, __ATOMIC_ACQUIRE);

#if defined(LUF_MUTANT_PROC_SYNC_NO_WAIT)
	/* Mutant: returns while sections that may hold the objects are open. */
	return;
#endif
	for (unsigned int i = 0; i < hi; i++) {
		const unsigned long *ctr = &p->threads[i].rd.ctr;
		unsigned long c = __luf_load_acquire(ctr);

		if (&p->threads[i] == t || !(c & LUF_READER_NEST_MASK))
			continue;
		for (unsigned int spin = 0; section_open(__luf_load_acquire(ctr), c); spin++)
			if (spin >= 64)
				sched_yield();
	}
}

int luf_synchronize(struct luf_thread *t)
{
	struct node_list list = {0};
	struct luf_proc *p;
	int ret;

	if (!thread_ok(t))
		return proc_fail(-EINVAL, __func__,
				 "@t is not the calling thread's registered handle");
	if (t->rd.ctr & LUF_READER_NEST_MASK)
		return proc_fail(-EDEADLK, __func__,
				 "the thread is inside a read section (it would wait for itself)");
	p = t->proc;
	/* The thread's objects: folded, flushed for if they owe it, off the free list. */
	ret = fold_open(t);
	if (!ret)
		ret = drain(t, &list);
	if (ret) {
		if (list.head)
			hold_back(t, &list); /* flushed: nothing is lost */
		return proc_fail(ret, __func__, "the flush of what the thread holds failed");
	}
	/* The barrier after everything the caller unpublished, retired or not. */
	ret = luf_user_flush(&p->u, p->all, p->max_threads);
	if (ret) {
		if (list.head)
			hold_back(t, &list);
		return proc_fail(ret, __func__, "the barrier (flush) failed");
	}
	adopt(t);
	wait_for_readers(t);
	/* Every section open at this call, or at any earlier snapshot, has closed. */
	make_ready(t, &list);
	make_ready(t, &t->wait);
	make_ready(t, &t->later);
	run_calls(t);
	return 0;
}

int luf_call(struct luf_thread *t, struct luf_node *n, luf_call_fn *func)
{
	int ret;

	if (!func)
		return proc_fail(-EINVAL, __func__, "@func is NULL");
	ret = retire(t, n, func, __func__);
	if (ret)
		return ret;
	/* What earlier calls made due runs now; never @n's own callback. */
	run_calls(t);
	/*
	 * Keep the callbacks moving without a luf_reuse(): a pending grace
	 * period is checked, else a batch on the free list is flushed for
	 * (if it still owes it) and checked; objects (and callbacks) that
	 * unregistered threads handed over are taken. What this makes due
	 * runs at the thread's next call.
	 */
	if (t->wait.head)
		advance(t);
	else if (on_free_list(t) >= t->proc->batch)
		take_flushed(t, LUF_ALLOC_MAY_FLUSH); /* an error leaves them pending */
	if (adopt(t))
		advance(t);
	/*
	 * A thread that mixes luf_call() and luf_retire() keeps its batches
	 * (they hold a callback), and its plain objects become ready here:
	 * what it does not reuse itself goes to the spare list.
	 */
	spill_ready(t);
	return 0;
}

unsigned long luf_thread_held(const struct luf_thread *t)
{
	if (!t || t->state != LUF_THREAD_LIVE)
		return 0;
	return t->open.nr + on_free_list(t) + t->ready.nr + t->wait.nr + t->later.nr + t->calls.nr;
}

unsigned long luf_proc_pooled(const struct luf_proc *p)
{
	if (!proc_ok(p))
		return 0;
	return __atomic_load_n(&p->nr_pool, __ATOMIC_RELAXED) +
	       __atomic_load_n(&p->nr_spare, __ATOMIC_RELAXED) +
	       __atomic_load_n(&p->nr_orphans, __ATOMIC_RELAXED);
}

const struct luf_user *luf_proc_backend(const struct luf_proc *p)
{
	return proc_ok(p) ? &p->u : NULL;
}

struct luf *luf_proc_luf(const struct luf_proc *p)
{
	return proc_ok(p) ? p->l : NULL;
}
