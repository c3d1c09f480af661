// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The high-level API (<luf/luf_proc.h>) on real threads and the real
 * membarrier backend: the life cycle, one flush per batch, the reader
 * rules (an object some section may still read is never handed back),
 * the grace-period generations, hand-over at unregister, a failed flush,
 * and every set-up mistake with its error.
 *
 * Built again with each LUF_MUTANT_PROC_* rule of lib/user/proc.c
 * switched off (tests/MUTANTS.md): each build must fail its test here
 * (ctest WILL_FAIL), which shows these tests see the rule.
 */
#define _GNU_SOURCE
#include <luf/luf_proc.h>

#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

/* @call fails with @err and luf_last_error() names the check: @fn and @what. */
#define assert_fails(call, err, fn, what)                           \
	do {                                                        \
		luf_clear_error();                                  \
		assert_int_equal((call), (err));                    \
		assert_non_null(strstr(luf_last_error(), fn ": ")); \
		assert_non_null(strstr(luf_last_error(), what));    \
	} while (0)

struct obj {
	unsigned long value;
	struct luf_node node;
};

static struct luf_proc *proc;
static struct luf_thread *self;

static int setup(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 8, .batch = 1};

	(void)state;
	assert_int_equal(luf_proc_create(&proc, &cfg), 0);
	assert_int_equal(luf_thread_register(proc, &self), 0);
	return 0;
}

static unsigned long released;

static void count_release(struct luf_node *n, void *arg)
{
	(void)arg;
	released++;
	free(luf_node_entry(n, struct obj, node));
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_destroy(proc, count_release, NULL), 0);
	return 0;
}

static struct obj *new_obj(void)
{
	struct obj *o = calloc(1, sizeof(*o));

	assert_non_null(o);
	return o;
}

/*
 * Reader threads, each driven step by step: enter a section, leave it.
 * Their handles are registered with @p, or with the fixture's domain.
 * Idle (started, not stopped), a reader is a registered thread that has
 * passed no barrier of its own: what it may hold needs a membarrier.
 */
struct reader {
	struct luf_proc *p;
	pthread_t thread;
	struct luf_thread *t;
	sem_t go, done;
	int cmd; /* 1: lock, 2: unlock, 3: unregister and exit */
	int err;
	int tid;
};

/* Static: a failed check longjmps out of the test, the threads live on. */
static struct reader readers[2];

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	r->err = luf_thread_register(r->p ? r->p : proc, &r->t);
	r->tid = (int)syscall(SYS_gettid);
	sem_post(&r->done);
	for (;;) {
		sem_wait(&r->go);
		if (r->cmd == 1)
			luf_read_lock(r->t);
		else if (r->cmd == 2)
			luf_read_unlock(r->t);
		else
			break;
		sem_post(&r->done);
	}
	r->err = luf_thread_unregister(r->t);
	sem_post(&r->done);
	return NULL;
}

/* Start @r on @r->p (NULL: the fixture's domain). */
static void reader_start_on(struct reader *r)
{
	sem_init(&r->go, 0, 0);
	sem_init(&r->done, 0, 0);
	assert_int_equal(pthread_create(&r->thread, NULL, reader_main, r), 0);
	sem_wait(&r->done);
	assert_int_equal(r->err, 0);
}

static void reader_start(struct reader *r)
{
	r->p = NULL;
	reader_start_on(r);
}

static void reader_do(struct reader *r, int cmd)
{
	r->cmd = cmd;
	sem_post(&r->go);
	sem_wait(&r->done);
}

static void reader_stop(struct reader *r)
{
	reader_do(r, 3);
	pthread_join(r->thread, NULL);
	assert_int_equal(r->err, 0);
	sem_destroy(&r->go);
	sem_destroy(&r->done);
}

/*
 * A retired object comes back after one flush; a second reuse finds
 * nothing. With another thread registered (an idle reader) the flush is a
 * membarrier; with the retiring thread alone, its own barrier at the fold
 * is the flush of its id, and no system call is made.
 */
static void retire_then_reuse(void **state)
{
	const struct luf_user *u = luf_proc_backend(proc);
	struct reader *r = &readers[0];
	struct obj *o = new_obj();
	struct luf_node *n;
	unsigned long calls;

	(void)state;
	for (int others = 1; others >= 0; others--) {
		if (others)
			reader_start(r);
		calls = luf_user_calls(u);
		assert_int_equal(luf_retire(self, &o->node), 0);
		assert_int_equal(luf_thread_held(self), 1);
		assert_int_equal(luf_reuse(self, &n), 0);
		assert_ptr_equal(n, &o->node);
		assert_int_equal(luf_user_calls(u), calls + (unsigned long)others);
		assert_int_equal(luf_thread_held(self), 0);
		assert_int_equal(luf_reuse(self, &n), -EAGAIN);
		if (others)
			reader_stop(r);
	}
	free(o);
}

/*
 * A part batch is folded (and flushed for) only after a batch of reuse
 * calls found nothing: a thread reusing what it just retired does not
 * flush on every call.
 */
static void part_batch_waits_for_misses(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 2, .batch = 4};
	struct obj *o = new_obj(), *x[4];
	struct luf_proc *p;
	struct luf_thread *t;
	struct luf_node *n;
	unsigned long calls;

	(void)state;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&p, &cfg), 0);
	assert_int_equal(luf_thread_register(p, &t), 0);
	readers[0].p = p;
	reader_start_on(&readers[0]); /* registered, idle: each flush is a membarrier */
	calls = luf_user_calls(luf_proc_backend(p));
	assert_int_equal(luf_retire(t, &o->node), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(luf_reuse(t, &n), -EAGAIN);
	assert_int_equal(luf_user_calls(luf_proc_backend(p)), calls);
	assert_int_equal(luf_reuse(t, &n), 0);
	assert_ptr_equal(n, &o->node);
	assert_int_equal(luf_user_calls(luf_proc_backend(p)), calls + 1);
	/* A full batch folds at once. */
	for (int i = 0; i < 4; i++) {
		x[i] = new_obj();
		assert_int_equal(luf_retire(t, &x[i]->node), 0);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(luf_reuse(t, &n), 0);
	assert_int_equal(luf_user_calls(luf_proc_backend(p)), calls + 2);
	reader_stop(&readers[0]);
	assert_int_equal(luf_thread_unregister(t), 0);
	assert_int_equal(luf_proc_destroy(p, NULL, NULL), 0);
	assert_int_equal(luf_thread_register(proc, &self), 0);
	free(o);
	for (int i = 0; i < 4; i++)
		free(x[i]);
}

/* A batch of retirements costs one flush for all of them. */
static void one_flush_per_batch(void **state)
{
	const struct luf_user *u = luf_proc_backend(proc);
	unsigned long calls;
	struct obj *o[16];
	struct luf_node *n;

	(void)state;
	reader_start(&readers[0]); /* registered, idle: the flush is a membarrier */
	calls = luf_user_calls(u);
	for (int i = 0; i < 16; i++) {
		o[i] = new_obj();
		assert_int_equal(luf_retire(self, &o[i]->node), 0);
	}
	for (int i = 0; i < 16; i++)
		assert_int_equal(luf_reuse(self, &n), 0);
	assert_int_equal(luf_user_calls(u), calls + 1);
	reader_stop(&readers[0]);
	for (int i = 0; i < 16; i++)
		free(o[i]);
}

/*
 * Another thread of @p (NULL: the fixture's domain): registers, retires
 * its @n objects, reuses them (a flush if still owed), unregisters; @err
 * is the first error.
 */
struct flusher {
	struct luf_proc *p;
	struct obj **o;
	int n;
	int err;
};

static void *retire_reuse_leave(void *arg)
{
	struct flusher *f = arg;
	struct luf_thread *t;
	struct luf_node *n;

	f->err = luf_thread_register(f->p ? f->p : proc, &t);
	for (int i = 0; !f->err && i < f->n; i++)
		f->err = luf_retire(t, &f->o[i]->node);
	for (int i = 0; !f->err && i < f->n; i++) {
		int mine = 0;

		f->err = luf_reuse(t, &n);
		for (int j = 0; !f->err && j < f->n; j++)
			mine |= n == &f->o[j]->node;
		if (!f->err && !mine)
			f->err = -EPROTO; /* not one of its own objects */
	}
	if (!f->err)
		f->err = luf_thread_unregister(t);
	return NULL;
}

/*
 * Rule: a batch is stamped after its last retirement (after that
 * object's unpublish). A flush that ran between the batch's first
 * retirement and its last, here another thread's, came before the last
 * object was unpublished, so a reader may have loaded it after that
 * barrier: the batch comes back only after one more flush.
 */
static void batch_stamped_after_its_last_retirement(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 4, .batch = 4};
	struct obj *x[4], *theirs[4];
	struct flusher f = {.o = theirs, .n = 4};
	struct luf_proc *p;
	struct luf_thread *t;
	struct luf_node *n;
	pthread_t thread;
	unsigned long calls;

	(void)state;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&p, &cfg), 0);
	assert_int_equal(luf_thread_register(p, &t), 0);
	readers[0].p = p;
	reader_start_on(&readers[0]); /* registered, idle: only a membarrier covers it */
	for (int i = 0; i < 4; i++) {
		x[i] = new_obj();
		theirs[i] = new_obj();
	}
	assert_int_equal(luf_retire(t, &x[0]->node), 0);
	f.p = p;
	calls = luf_user_calls(luf_proc_backend(p));
	assert_int_equal(pthread_create(&thread, NULL, retire_reuse_leave, &f), 0);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(f.err, 0);
	assert_int_equal(luf_user_calls(luf_proc_backend(p)), calls + 1); /* its flush */
	for (int i = 1; i < 4; i++)
		assert_int_equal(luf_retire(t, &x[i]->node), 0); /* the batch folds */
	calls = luf_user_calls(luf_proc_backend(p));
	for (int i = 0; i < 4; i++) {
		assert_int_equal(luf_reuse(t, &n), 0);
		assert_int_equal(luf_user_calls(luf_proc_backend(p)), calls + 1);
	}
	reader_stop(&readers[0]);
	assert_int_equal(luf_thread_unregister(t), 0);
	assert_int_equal(luf_proc_destroy(p, NULL, NULL), 0);
	assert_int_equal(luf_thread_register(proc, &self), 0);
	for (int i = 0; i < 4; i++) {
		free(x[i]);
		free(theirs[i]);
	}
}

/*
 * luf_synchronize(): what the thread retired before it comes back from
 * luf_reuse() with no further system call; at most two for the call.
 */
static void synchronize_makes_retired_reusable(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 2, .batch = 8};
	const struct luf_user *u;
	struct luf_proc *p;
	struct luf_thread *t;
	struct obj *o[3];
	struct luf_node *n;
	unsigned long calls;

	(void)state;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&p, &cfg), 0);
	assert_int_equal(luf_thread_register(p, &t), 0);
	u = luf_proc_backend(p);
	for (int i = 0; i < 3; i++) {
		o[i] = new_obj();
		assert_int_equal(luf_retire(t, &o[i]->node), 0); /* a part batch: open */
	}
	calls = luf_user_calls(u);
	assert_int_equal(luf_synchronize(t), 0);
	assert_in_range(luf_user_calls(u) - calls, 1, 2);
	calls = luf_user_calls(u);
	for (int i = 0; i < 3; i++)
		assert_int_equal(luf_reuse(t, &n), 0);
	assert_int_equal(luf_reuse(t, &n), -EAGAIN);
	assert_int_equal(luf_user_calls(u), calls);
	assert_int_equal(luf_thread_held(t), 0);
	assert_int_equal(luf_synchronize(t), 0); /* nothing held: the barrier alone */
	assert_int_equal(luf_user_calls(u), calls + 1);
	assert_int_equal(luf_thread_unregister(t), 0);
	assert_int_equal(luf_proc_destroy(p, NULL, NULL), 0);
	assert_int_equal(luf_thread_register(proc, &self), 0);
	for (int i = 0; i < 3; i++)
		free(o[i]);
}

/* luf_synchronize() inside a section, with a bad handle, and when its flush fails. */
static int fail_flushes;

static long flaky_membarrier(int cmd, unsigned int flags, int cpu_id);

static void synchronize_errors(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 2, .batch = 1, .membarrier = flaky_membarrier};
	struct luf_proc *p;
	struct luf_thread *t;
	struct obj *o = new_obj();
	struct luf_node *n;

	(void)state;
	assert_fails(luf_synchronize(NULL), -EINVAL, "luf_synchronize", "registered handle");
	luf_read_lock(self);
	assert_fails(luf_synchronize(self), -EDEADLK, "luf_synchronize", "inside a read section");
	luf_read_lock(self);
	assert_int_equal(luf_synchronize(self), -EDEADLK); /* nested */
	luf_read_unlock(self);
	luf_read_unlock(self);
	assert_int_equal(luf_synchronize(self), 0);

	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&p, &cfg), 0);
	assert_int_equal(luf_thread_register(p, &t), 0);
	readers[0].p = p;
	reader_start_on(&readers[0]); /* registered, idle: the flush is a membarrier */
	assert_int_equal(luf_retire(t, &o->node), 0);
	__atomic_store_n(&fail_flushes, 1, __ATOMIC_RELAXED);
	assert_fails(luf_synchronize(t), -EIO, "luf_synchronize", "failed");
	assert_int_equal(luf_thread_held(t), 1); /* nothing lost */
	__atomic_store_n(&fail_flushes, 0, __ATOMIC_RELAXED);
	assert_int_equal(luf_synchronize(t), 0);
	assert_int_equal(luf_reuse(t, &n), 0);
	assert_ptr_equal(n, &o->node);
	reader_stop(&readers[0]);
	assert_int_equal(luf_thread_unregister(t), 0);
	assert_int_equal(luf_proc_destroy(p, NULL, NULL), 0);
	assert_int_equal(luf_thread_register(proc, &self), 0);
	free(o);
}

/* Double retirement, a handle of another thread, NULLs. */
static void misuse(void **state)
{
	struct obj *o = new_obj();
	struct luf_node *n;

	(void)state;
	assert_int_equal(luf_retire(self, &o->node), 0);
	assert_int_equal(luf_retire(self, &o->node), -EBUSY);
	assert_int_equal(luf_retire(NULL, &o->node), -EINVAL);
	assert_int_equal(luf_retire(self, NULL), -EINVAL);
	assert_int_equal(luf_reuse(self, NULL), -EINVAL);
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_int_equal(luf_retire(self, &o->node), 0);
	/* After the fold it is on the deferred list: still refused. */
	assert_int_equal(luf_retire(self, &o->node), -EBUSY);
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_ptr_equal(n, &o->node);
	assert_int_equal(luf_thread_register(proc, &self), -EBUSY);
	assert_int_equal(luf_proc_destroy(proc, NULL, NULL), -EBUSY);
	luf_read_lock(self);
	assert_int_equal(luf_thread_unregister(self), -EBUSY);
	luf_read_unlock(self);
	free(o);
}

/* Rule: an object is not handed back while a section open before its flush is. */
static void reader_inside_holds_reuse(void **state)
{
	struct reader *r = &readers[0];
	struct obj *o = new_obj();
	struct luf_node *n;

	(void)state;
	reader_start(r);
	reader_do(r, 1); /* may have loaded o's pointer */
	assert_int_equal(luf_retire(self, &o->node), 0);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	assert_int_equal(luf_thread_held(self), 1);
	reader_do(r, 2);
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_ptr_equal(n, &o->node);
	reader_stop(r);
	free(o);
}

/*
 * Rule: an object found while a snapshot is pending waits for the next
 * one. Reader 1's section is open at the snapshot taken for A; reader 2
 * opens its section after that snapshot and may read B; B's reuse must
 * wait for reader 2, not only for reader 1.
 */
static void later_objects_wait_for_a_later_snapshot(void **state)
{
	struct reader *r1 = &readers[0], *r2 = &readers[1];
	struct obj *a = new_obj(), *b = new_obj();
	struct luf_node *n;

	(void)state;
	reader_start(r1);
	reader_start(r2);
	reader_do(r1, 1);
	assert_int_equal(luf_retire(self, &a->node), 0);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN); /* A waits for reader 1 */
	reader_do(r2, 1);				/* reads B */
	assert_int_equal(luf_retire(self, &b->node), 0);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN); /* B found, waits */
	reader_do(r1, 2);
	/* A, and only A: reader 2 may still read B. */
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_ptr_not_equal(n, &b->node);
	assert_ptr_equal(n, &a->node);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	reader_do(r2, 2);
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_ptr_equal(n, &b->node);
	reader_stop(r1);
	reader_stop(r2);
	free(a);
	free(b);
}

/*
 * Rule: luf_synchronize() returns only once every section open at its
 * barrier has closed. A reader inside a section may have loaded a pointer
 * the caller then unpublished; the call (on a thread of its own) must
 * still be waiting 100 ms later, and return once the section closes.
 */
struct sync_call {
	pthread_t thread;
	int ret;
	int returned;
};

static void *synchronize_main(void *arg)
{
	struct sync_call *c = arg;
	struct luf_thread *t;

	c->ret = luf_thread_register(proc, &t);
	if (!c->ret)
		c->ret = luf_synchronize(t);
	__atomic_store_n(&c->returned, 1, __ATOMIC_RELEASE);
	if (!c->ret)
		c->ret = luf_thread_unregister(t);
	return NULL;
}

static void synchronize_waits_for_readers(void **state)
{
	static struct sync_call c; /* static: a failed check leaves the thread running */
	struct reader *r = &readers[0];
	struct timespec ts = {0, 100 * 1000 * 1000L};

	(void)state;
	c = (struct sync_call){0};
	reader_start(r);
	reader_do(r, 1); /* may have loaded what the caller unpublishes */
	assert_int_equal(pthread_create(&c.thread, NULL, synchronize_main, &c), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(__atomic_load_n(&c.returned, __ATOMIC_ACQUIRE), 0);
	reader_do(r, 2);
	pthread_join(c.thread, NULL);
	assert_int_equal(c.ret, 0);
	assert_int_equal(c.returned, 1);
	reader_stop(r);
}

/* luf_call()'s callback: counts, and frees the object. */
static unsigned long called;

static void count_call(struct luf_node *n)
{
	assert_null(n->func); /* the caller's again */
	called++;
	free(luf_node_entry(n, struct obj, node));
}

/*
 * Rule: luf_call()'s callback waits for every section that may read the
 * object, like a reuse; luf_reuse() never hands the object out.
 */
static void call_waits_for_readers(void **state)
{
	struct reader *r = &readers[0];
	struct luf_node *n;

	(void)state;
	called = 0;
	reader_start(r);
	reader_do(r, 1); /* may have loaded the object's pointer */
	assert_int_equal(luf_call(self, &new_obj()->node, count_call), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	assert_int_equal(called, 0);
	assert_int_equal(luf_thread_held(self), 1);
	reader_do(r, 2);
	assert_int_equal(luf_synchronize(self), 0);
	assert_int_equal(called, 1);
	assert_int_equal(luf_thread_held(self), 0);
	reader_stop(r);
}

/* Each callback runs once; luf_call() alone keeps them moving; errors change nothing. */
static void call_runs_each_once(void **state)
{
	struct obj *o = new_obj();
	struct luf_node *n;

	(void)state;
	called = 0;
	for (int i = 0; i < 100; i++)
		assert_int_equal(luf_call(self, &new_obj()->node, count_call), 0);
	/* batch 1: luf_call() itself flushed and ran all but the newest few */
	assert_in_range(called, 90, 100);
	assert_int_equal(luf_synchronize(self), 0);
	assert_int_equal(called, 100);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN);

	assert_fails(luf_call(self, &o->node, NULL), -EINVAL, "luf_call", "@func is NULL");
	assert_fails(luf_call(self, NULL, count_call), -EINVAL, "luf_call", "@n is NULL");
	assert_fails(luf_call(NULL, &o->node, count_call), -EINVAL, "luf_call",
		     "registered handle");
	assert_int_equal(luf_retire(self, &o->node), 0);
	assert_fails(luf_call(self, &o->node, count_call), -EBUSY, "luf_call", "retired already");
	assert_int_equal(luf_reuse(self, &n), 0); /* a retirement: handed back, no callback */
	assert_ptr_equal(n, &o->node);
	assert_int_equal(called, 100);
	assert_int_equal(luf_call(self, n, count_call), 0); /* the reused node, now a call */
	assert_int_equal(luf_synchronize(self), 0);
	assert_int_equal(called, 101);
}

/* A chain: each callback calls luf_call() again on its node, N times; depth counts nesting. */
static unsigned long hops, depth, max_depth;

static void chain_call(struct luf_node *n)
{
	if (++depth > max_depth)
		max_depth = depth;
	if (++hops < 10000)
		assert_int_equal(luf_call(self, n, chain_call), 0);
	else
		free(luf_node_entry(n, struct obj, node));
	depth--;
}

/*
 * A callback never runs before the luf_call() that queued it returns, and
 * callbacks do not nest: a chain of 10,000 runs one at a time.
 */
static void call_runs_later_and_flat(void **state)
{
	struct luf_node *n;

	(void)state;
	called = 0;
	for (int i = 0; i < 10; i++) { /* batch 1, no reader: due at once */
		assert_int_equal(luf_call(self, &new_obj()->node, count_call), 0);
		assert_true(called <= (unsigned long)i); /* not the one just queued */
	}
	assert_int_equal(luf_synchronize(self), 0);
	assert_int_equal(called, 10);
	hops = depth = max_depth = 0;
	assert_int_equal(luf_call(self, &new_obj()->node, chain_call), 0);
	for (int i = 0; i < 100000 && hops < 10000; i++)
		assert_true(luf_reuse(self, &n) == -EAGAIN);
	assert_int_equal(hops, 10000);
	assert_int_equal(max_depth, 1);
}

/* Callbacks a thread handed over at unregister run on a thread that only calls luf_call(). */
static unsigned long theirs_called;

static void count_theirs(struct luf_node *n)
{
	theirs_called++;
	free(luf_node_entry(n, struct obj, node));
}

static void *call_and_leave(void *arg)
{
	struct luf_thread *t;

	(void)arg;
	assert_int_equal(luf_thread_register(proc, &t), 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(luf_call(t, &new_obj()->node, count_theirs), 0);
	assert_int_equal(luf_thread_unregister(t), 0);
	return NULL;
}

static void handed_over_calls_run(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 2, .batch = 8};
	struct luf_proc *saved = proc;
	unsigned long theirs;
	pthread_t th;

	(void)state;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&proc, &cfg), 0);
	assert_int_equal(luf_thread_register(proc, &self), 0);
	theirs_called = 0;
	assert_int_equal(pthread_create(&th, NULL, call_and_leave, NULL), 0);
	pthread_join(th, NULL);
	theirs = 10 - theirs_called; /* those its unregister did not run */
	assert_true(theirs > 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(luf_call(self, &new_obj()->node, count_call), 0);
	assert_int_equal(theirs_called, 10);
	assert_int_equal(luf_synchronize(self), 0);
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_destroy(proc, NULL, NULL), 0);
	proc = saved;
	assert_int_equal(luf_thread_register(proc, &self), 0);
}

/* Callbacks still pending at destroy run there, not the release function. */
static void destroy_runs_pending_calls(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 2, .batch = 8};
	struct luf_proc *p;
	struct luf_thread *t;

	(void)state;
	called = 0;
	released = 0;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&p, &cfg), 0);
	assert_int_equal(luf_thread_register(p, &t), 0);
	assert_int_equal(luf_call(t, &new_obj()->node, count_call), 0);
	assert_int_equal(luf_call(t, &new_obj()->node, count_call), 0);
	assert_int_equal(luf_retire(t, &new_obj()->node), 0);
	assert_int_equal(luf_thread_unregister(t), 0); /* a part batch: handed over */
	assert_int_equal(called, 0);
	assert_int_equal(luf_proc_destroy(p, count_release, NULL), 0);
	assert_int_equal(called, 2);
	assert_int_equal(released, 1);
	assert_int_equal(luf_thread_register(proc, &self), 0);
}

/* A section that starts after the flush does not hold an object back for ever. */
static void new_sections_do_not_starve(void **state)
{
	struct reader *r = &readers[0];
	struct obj *o = new_obj();
	struct luf_node *n;

	(void)state;
	reader_start(r);
	reader_do(r, 1);
	assert_int_equal(luf_retire(self, &o->node), 0);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	reader_do(r, 2);
	reader_do(r, 1); /* a new section: cannot have loaded o */
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_ptr_equal(n, &o->node);
	reader_do(r, 2);
	reader_stop(r);
	free(o);
}

/*
 * A thread that only retires: it retires @n objects, then waits for @go
 * before it unregisters.
 */
struct retirer {
	pthread_t thread;
	sem_t go, done;
	struct obj **o;
	int n;
	int err;
};

static void *retire_then_wait(void *arg)
{
	struct retirer *r = arg;
	struct luf_thread *t;

	r->err = luf_thread_register(proc, &t);
	for (int i = 0; !r->err && i < r->n; i++)
		r->err = luf_retire(t, &r->o[i]->node);
	sem_post(&r->done);
	sem_wait(&r->go);
	if (!r->err)
		r->err = luf_thread_unregister(t);
	return NULL;
}

static void retirer_start(struct retirer *r, struct obj **o, int n)
{
	r->o = o;
	r->n = n;
	sem_init(&r->go, 0, 0);
	sem_init(&r->done, 0, 0);
	assert_int_equal(pthread_create(&r->thread, NULL, retire_then_wait, r), 0);
	sem_wait(&r->done);
	assert_int_equal(r->err, 0);
}

static void retirer_stop(struct retirer *r)
{
	sem_post(&r->go);
	pthread_join(r->thread, NULL);
	assert_int_equal(r->err, 0);
	sem_destroy(&r->go);
	sem_destroy(&r->done);
}

/* Static: a failed check longjmps out of the test, the thread lives on. */
static struct retirer retirers[1];

/*
 * A thread's fold is its own barrier (lib/user/proc.c): once every
 * registered thread has folded a batch since another batch's stamp, that
 * batch is reusable with no system call. Here the other thread folds
 * after self's retirement; an idle registered reader would need a
 * membarrier instead (one_flush_per_batch).
 */
static void others_folds_cover_a_batch(void **state)
{
	const struct luf_user *u = luf_proc_backend(proc);
	struct retirer *r = &retirers[0];
	struct obj *o = new_obj(), *theirs = new_obj();
	struct luf_node *n;
	unsigned long calls;

	(void)state;
	calls = luf_user_calls(u);
	assert_int_equal(luf_retire(self, &o->node), 0);
	retirer_start(r, &theirs, 1); /* registers, retires (a fold: batch 1), waits */
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_ptr_equal(n, &o->node);
	assert_int_equal(luf_user_calls(u), calls);
	retirer_stop(r);
	free(o);
}

/*
 * Rule: a thread that retires more than it reuses keeps 4 batches and
 * hands the rest to the pool, which another thread's luf_reuse() takes,
 * after one flush for all of them (they owe it: no flush ran since their
 * retirement), and the 4 kept come back once their thread unregisters.
 */
static void pool_hands_batches_to_allocators(void **state)
{
	const struct luf_user *u = luf_proc_backend(proc);
	struct retirer *r = &retirers[0];
	struct obj *o[10];
	unsigned long calls;
	struct luf_node *n;
	int got = 0;

	(void)state;
	for (int i = 0; i < 10; i++)
		o[i] = new_obj();
	reader_start(&readers[0]); /* registered, idle: the pool's flush is a membarrier */
	retirer_start(r, o, 10);   /* batch 1: o[0..3] kept, o[4..9] pooled */
	assert_int_equal(luf_proc_pooled(proc), 6);
	calls = luf_user_calls(u);
	for (int i = 0; i < 6; i++) {
		struct obj *x;

		assert_int_equal(luf_reuse(self, &n), 0);
		x = luf_node_entry(n, struct obj, node);
		assert_true(x == o[4] || x == o[5] || x == o[6] || x == o[7] || x == o[8] ||
			    x == o[9]);
	}
	assert_int_equal(luf_user_calls(u), calls + 1);
	assert_int_equal(luf_proc_pooled(proc), 0);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	reader_stop(&readers[0]);
	retirer_stop(r);
	while (luf_reuse(self, &n) == 0)
		got++;
	assert_int_equal(got, 4);
	for (int i = 0; i < 10; i++)
		free(o[i]);
}

/* Rule: the pool's objects wait for the sections open when they are taken. */
static void pool_objects_wait_for_readers(void **state)
{
	struct reader *rd = &readers[0];
	struct retirer *r = &retirers[0];
	struct obj *o[10];
	struct luf_node *n;

	(void)state;
	for (int i = 0; i < 10; i++)
		o[i] = new_obj();
	reader_start(rd);
	reader_do(rd, 1); /* may have loaded the pointers of o[4..9] */
	retirer_start(r, o, 10);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	reader_do(rd, 2);
	assert_int_equal(luf_reuse(self, &n), 0);
	reader_stop(rd);
	retirer_stop(r);
	while (luf_reuse(self, &n) == 0)
		;
	for (int i = 0; i < 10; i++)
		free(o[i]);
}

/*
 * A thread that retires and queues callbacks in the same batches (so the
 * batches stay with it) and reuses nothing: its plain objects still reach
 * a thread that allocates, through the spare list.
 */
static struct luf_proc *mix_proc;
static sem_t mix_done, mix_go;

static void mix_nothing(struct luf_node *n)
{
	(void)n;
}

static void *mix_retire_and_call(void *arg)
{
	struct obj **o = arg;
	struct luf_thread *t;
	void *ret = NULL;

	if (luf_thread_register(mix_proc, &t))
		ret = (void *)1;
	for (int i = 0; !ret && i < 64; i++)
		if (i % 4 ? luf_retire(t, &o[i]->node) : luf_call(t, &o[i]->node, mix_nothing))
			ret = (void *)2;
	sem_post(&mix_done);
	sem_wait(&mix_go);
	if (!ret && luf_thread_unregister(t))
		ret = (void *)3;
	return ret;
}

static void mixed_batches_reach_allocators(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 2, .batch = 4};
	struct obj *o[64];
	struct luf_thread *t;
	struct luf_node *n;
	pthread_t th;
	void *ret;
	int got = 0;

	(void)state;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&mix_proc, &cfg), 0);
	assert_int_equal(luf_thread_register(mix_proc, &t), 0);
	for (int i = 0; i < 64; i++)
		o[i] = new_obj();
	sem_init(&mix_done, 0, 0);
	sem_init(&mix_go, 0, 0);
	assert_int_equal(pthread_create(&th, NULL, mix_retire_and_call, o), 0);
	sem_wait(&mix_done);
	while (luf_reuse(t, &n) == 0)
		got++;
	sem_post(&mix_go);
	pthread_join(th, &ret);
	assert_null(ret);
	assert_true(got > 0);
	while (luf_reuse(t, &n) == 0)
		;
	assert_int_equal(luf_thread_unregister(t), 0);
	assert_int_equal(luf_proc_destroy(mix_proc, NULL, NULL), 0);
	for (int i = 0; i < 64; i++)
		free(o[i]);
	sem_destroy(&mix_done);
	sem_destroy(&mix_go);
	assert_int_equal(luf_thread_register(proc, &self), 0);
}

static unsigned long stall_reports;
static char stall_report[256];

static void catch_stall(int err, const char *fn, const char *what, void *arg)
{
	(void)arg;
	if (err == -EAGAIN && !strcmp(fn, "luf_proc")) {
		stall_reports++;
		snprintf(stall_report, sizeof(stall_report), "%s", what);
	}
}

/*
 * A section that stalls a grace period for over a second is reported
 * once through the error hook, with the reader's thread id.
 */
static void stall_is_reported(void **state)
{
	struct reader *rd = &readers[0];
	struct obj *o = new_obj();
	struct luf_node *n;
	char tid[32];

	(void)state;
	stall_reports = 0;
	reader_start(rd);
	reader_do(rd, 1);
	assert_int_equal(luf_retire(self, &o->node), 0);
	luf_set_error_hook(catch_stall, NULL);
	for (int ms = 0; ms < 5000 && !stall_reports; ms++) {
		assert_int_equal(luf_reuse(self, &n), -EAGAIN);
		usleep(1000);
	}
	for (int i = 0; i < 1000; i++)
		assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	luf_set_error_hook(NULL, NULL);
	assert_int_equal(stall_reports, 1);
	snprintf(tid, sizeof(tid), "(thread id %d)", rd->tid);
	assert_non_null(strstr(stall_report, tid));
	assert_non_null(strstr(stall_report, "inside one read section"));
	reader_do(rd, 2);
	assert_int_equal(luf_reuse(self, &n), 0);
	reader_stop(rd);
	free(o);
}

/* A thread that unregisters hands its objects to the others. */
static void *retire_and_leave(void *arg)
{
	struct obj **o = arg;
	struct luf_thread *t;

	if (luf_thread_register(proc, &t))
		return (void *)1;
	for (int i = 0; i < 3; i++)
		if (luf_retire(t, &o[i]->node))
			return (void *)2;
	return luf_thread_unregister(t) ? (void *)3 : NULL;
}

static void unregister_hands_over(void **state)
{
	struct obj *o[3] = {new_obj(), new_obj(), new_obj()};
	struct luf_node *n;
	pthread_t th;
	void *ret;
	int got = 0;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, retire_and_leave, o), 0);
	pthread_join(th, &ret);
	assert_null(ret);
	while (luf_reuse(self, &n) == 0) {
		struct obj *x = luf_node_entry(n, struct obj, node);

		assert_true(x == o[0] || x == o[1] || x == o[2]);
		got++;
	}
	assert_int_equal(got, 3);
	for (int i = 0; i < 3; i++)
		free(o[i]);
}

/* A failed flush loses nothing: the object comes back once a flush works. */
static long flaky_membarrier(int cmd, unsigned int flags, int cpu_id)
{
	if (cmd == 1 << 3 && __atomic_load_n(&fail_flushes, __ATOMIC_RELAXED)) {
		errno = EIO;
		return -1;
	}
	return syscall(__NR_membarrier, cmd, flags, cpu_id);
}

static void failed_flush_keeps_objects(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 2, .batch = 1, .membarrier = flaky_membarrier};
	struct luf_proc *p;
	struct luf_thread *t;
	struct obj *o = new_obj();
	struct luf_node *n;

	(void)state;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&p, &cfg), 0);
	assert_int_equal(luf_thread_register(p, &t), 0);
	readers[0].p = p;
	reader_start_on(&readers[0]); /* registered, idle: the flush is a membarrier */
	assert_int_equal(luf_retire(t, &o->node), 0);
	__atomic_store_n(&fail_flushes, 1, __ATOMIC_RELAXED);
	assert_int_equal(luf_reuse(t, &n), -EIO);
	assert_int_equal(luf_thread_held(t), 1);
	assert_int_equal(luf_thread_unregister(t), -EIO); /* its flush fails too */
	__atomic_store_n(&fail_flushes, 0, __ATOMIC_RELAXED);
	assert_int_equal(luf_reuse(t, &n), 0);
	assert_ptr_equal(n, &o->node);
	reader_stop(&readers[0]);
	assert_int_equal(luf_thread_unregister(t), 0);
	assert_int_equal(luf_proc_destroy(p, NULL, NULL), 0);
	assert_int_equal(luf_thread_register(proc, &self), 0);
	free(o);
}

/*
 * Unregister hands over everything, also when another thread's flush has
 * covered only the head of the thread's pend list (a refill then releases
 * that head alone): nothing may stay behind in the slot.
 */
static void unregister_drains_a_done_head(void **state)
{
	struct obj *o1 = new_obj(), *o2 = new_obj(), *x = new_obj();
	struct flusher f = {.o = &x, .n = 1};
	struct luf_node *n;
	pthread_t th;

	(void)state;
	assert_int_equal(luf_retire(self, &o1->node), 0); /* pend, key 1 */
	/* Its reuse flushed: every id is done up to here. */
	assert_int_equal(pthread_create(&th, NULL, retire_reuse_leave, &f), 0);
	pthread_join(th, NULL);
	assert_int_equal(f.err, 0);
	assert_int_equal(luf_retire(self, &o2->node), 0); /* pend, key 2: not done */
	assert_int_equal(luf_thread_unregister(self), 0);
	/* The slot is empty: both went to the domain, and come back from it. */
	assert_int_equal(luf_thread_register(proc, &self), 0);
	assert_int_equal(luf_thread_held(self), 0);
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_true(n == &o1->node || n == &o2->node);
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_true(n == &o1->node || n == &o2->node);
	free(o1);
	free(o2);
	free(x);
}

/* A thread that exits registered, even inside a section, is unregistered. */
static void *exit_registered(void *arg)
{
	struct luf_thread *t;

	if (luf_thread_register(proc, &t))
		return (void *)1;
	luf_read_lock(t);
	return luf_retire(t, &((struct obj *)arg)->node) ? (void *)2 : NULL;
}

static void thread_exit_unregisters(void **state)
{
	struct obj *o = new_obj(), *p = new_obj();
	struct luf_node *n;
	pthread_t th;
	void *ret;
	int got = 0;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, exit_registered, o), 0);
	pthread_join(th, &ret);
	assert_null(ret);
	/* Its object was handed over; its section does not hold it back. */
	assert_int_equal(luf_retire(self, &p->node), 0);
	while (luf_reuse(self, &n) == 0) {
		assert_true(n == &o->node || n == &p->node);
		got++;
	}
	assert_int_equal(got, 2);
	free(o);
	free(p);
}

/* An unlock without a lock is ignored: the thread's next section still counts. */
static void stray_unlock_is_ignored(void **state)
{
	struct reader *r = &readers[0];
	struct obj *o = new_obj();
	struct luf_node *n;

	(void)state;
	reader_start(r);
	reader_do(r, 2); /* stray */
	reader_do(r, 1);
	assert_int_equal(luf_retire(self, &o->node), 0);
	assert_int_equal(luf_reuse(self, &n), -EAGAIN);
	reader_do(r, 2);
	assert_int_equal(luf_reuse(self, &n), 0);
	assert_ptr_equal(n, &o->node);
	reader_stop(r);
	free(o);
}

/* Destroy hands every object still held to the release callback. */
static void destroy_releases_everything(void **state)
{
	struct luf_proc *p;
	struct luf_thread *t;

	(void)state;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&p, NULL), 0);
	assert_int_equal(luf_thread_register(p, &t), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(luf_retire(t, &new_obj()->node), 0);
	assert_int_equal(luf_thread_unregister(t), 0);
	released = 0;
	assert_int_equal(luf_proc_destroy(p, count_release, NULL), 0);
	assert_int_equal(released, 100);
	assert_int_equal(luf_thread_register(proc, &self), 0);
}

/* Set-up mistakes: each gets its own error. */
static void setup_mistakes(void **state)
{
	struct luf_proc_config cfg = {0};
	struct luf_proc *p = NULL;
	size_t size;
	char *mem;

	(void)state;
	assert_fails(luf_proc_create(NULL, NULL), -EINVAL, "luf_proc_create", "@out is NULL");
	cfg.flags = LUF_USER_NO_TRIAL;
	assert_fails(luf_proc_create(&p, &cfg), -EINVAL, "luf_proc_create", "cfg->flags");
	cfg.flags = 0;
	cfg.batch = LUF_PROC_MAX_BATCH + 1;
	assert_fails(luf_proc_create(&p, &cfg), -EINVAL, "luf_proc_create",
		     "cfg->batch is above LUF_PROC_MAX_BATCH");
	cfg.batch = 0;
	cfg.max_threads = LUF_PROC_MAX_THREADS + 1;
	assert_int_equal(luf_proc_size(&cfg), 0);
	assert_fails(luf_proc_create(&p, &cfg), -EINVAL, "luf_proc_create",
		     "cfg->max_threads is above LUF_PROC_MAX_THREADS");
	cfg.max_threads = 2;
	size = luf_proc_size(&cfg);
	assert_true(size > 0 && size % LUF_CACHELINE == 0);
	mem = aligned_alloc(LUF_CACHELINE, size + LUF_CACHELINE);
	assert_non_null(mem);
	cfg.mem = mem + 8;
	cfg.mem_size = size;
	assert_fails(luf_proc_create(&p, &cfg), -EINVAL, "luf_proc_create",
		     "cfg->mem is not aligned to LUF_CACHELINE");
	cfg.mem = mem;
	cfg.mem_size = size - 1;
	assert_fails(luf_proc_create(&p, &cfg), -ENOSPC, "luf_proc_create",
		     "cfg->mem_size is below luf_proc_size(cfg)");
	cfg.mem = NULL;
	assert_fails(luf_proc_create(&p, &cfg), -EINVAL, "luf_proc_create",
		     "cfg->mem_size is set but cfg->mem is NULL");
	assert_null(p);
	cfg.mem = mem;
	cfg.mem_size = size;
	assert_int_equal(luf_proc_create(&p, &cfg), 0); /* the caller's block */
	assert_int_equal(luf_proc_destroy(p, NULL, NULL), 0);
	/* Wrong order: a destroyed domain. */
	assert_fails(luf_proc_destroy(p, NULL, NULL), -EINVAL, "luf_proc_destroy",
		     "@p is not a live domain");
	assert_fails(luf_thread_register(p, &self), -EINVAL, "luf_thread_register",
		     "@p is not a live domain");
	free(mem);
	assert_fails(luf_thread_register(NULL, &self), -EINVAL, "luf_thread_register",
		     "@p is not a live domain");
	assert_fails(luf_proc_destroy(NULL, NULL, NULL), -EINVAL, "luf_proc_destroy",
		     "@p is not a live domain");
	/* Wrong order: registered twice, torn down with a thread registered. */
	assert_fails(luf_thread_register(proc, &self), -EBUSY, "luf_thread_register",
		     "registered already");
	assert_fails(luf_proc_destroy(proc, NULL, NULL), -EBUSY, "luf_proc_destroy",
		     "a thread is still registered");
	luf_read_lock(self);
	assert_fails(luf_thread_unregister(self), -EBUSY, "luf_thread_unregister",
		     "inside a read section");
	luf_read_unlock(self);
	assert_fails(luf_retire(self, NULL), -EINVAL, "luf_retire", "@n is NULL");
	assert_fails(luf_reuse(NULL, NULL), -EINVAL, "luf_reuse", "registered handle");
	assert_null(luf_proc_backend(NULL));
	assert_null(luf_proc_luf(NULL));
}

/* More threads than max_threads: the id would be out of range. */
static char register_error[256]; /* the registering thread's luf_last_error() */

static void *register_one(void *arg)
{
	struct luf_thread *t;
	int ret = luf_thread_register(arg, &t);

	snprintf(register_error, sizeof(register_error), "%s", luf_last_error());
	if (!ret)
		ret = luf_thread_unregister(t);
	return (void *)(intptr_t)ret;
}

static void too_many_threads(void **state)
{
	struct luf_proc_config cfg = {.max_threads = 1};
	struct luf_proc *p;
	struct luf_thread *t;
	pthread_t th;
	void *ret;

	(void)state;
	assert_int_equal(luf_thread_unregister(self), 0);
	assert_int_equal(luf_proc_create(&p, &cfg), 0);
	assert_int_equal(luf_thread_register(p, &t), 0);
	assert_int_equal(pthread_create(&th, NULL, register_one, p), 0);
	pthread_join(th, &ret);
	assert_int_equal((intptr_t)ret, -EUSERS);
	assert_non_null(strstr(register_error, "luf_thread_register: "));
	assert_non_null(strstr(register_error, "the thread id would be out of range"));
	assert_int_equal(luf_thread_unregister(t), 0);
	assert_int_equal(pthread_create(&th, NULL, register_one, p), 0);
	pthread_join(th, &ret);
	assert_int_equal((intptr_t)ret, 0);
	assert_int_equal(luf_proc_destroy(p, NULL, NULL), 0);
	assert_int_equal(luf_thread_register(proc, &self), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(retire_then_reuse, setup, teardown),
	    cmocka_unit_test_setup_teardown(one_flush_per_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(part_batch_waits_for_misses, setup, teardown),
	    cmocka_unit_test_setup_teardown(batch_stamped_after_its_last_retirement, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(others_folds_cover_a_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(misuse, setup, teardown),
	    cmocka_unit_test_setup_teardown(synchronize_makes_retired_reusable, setup, teardown),
	    cmocka_unit_test_setup_teardown(synchronize_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(synchronize_waits_for_readers, setup, teardown),
	    cmocka_unit_test_setup_teardown(call_waits_for_readers, setup, teardown),
	    cmocka_unit_test_setup_teardown(call_runs_each_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(destroy_runs_pending_calls, setup, teardown),
	    cmocka_unit_test_setup_teardown(call_runs_later_and_flat, setup, teardown),
	    cmocka_unit_test_setup_teardown(handed_over_calls_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(reader_inside_holds_reuse, setup, teardown),
	    cmocka_unit_test_setup_teardown(later_objects_wait_for_a_later_snapshot, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(new_sections_do_not_starve, setup, teardown),
	    cmocka_unit_test_setup_teardown(unregister_hands_over, setup, teardown),
	    cmocka_unit_test_setup_teardown(pool_hands_batches_to_allocators, setup, teardown),
	    cmocka_unit_test_setup_teardown(pool_objects_wait_for_readers, setup, teardown),
	    cmocka_unit_test_setup_teardown(stall_is_reported, setup, teardown),
	    cmocka_unit_test_setup_teardown(mixed_batches_reach_allocators, setup, teardown),
	    cmocka_unit_test_setup_teardown(failed_flush_keeps_objects, setup, teardown),
	    cmocka_unit_test_setup_teardown(destroy_releases_everything, setup, teardown),
	    cmocka_unit_test_setup_teardown(unregister_drains_a_done_head, setup, teardown),
	    cmocka_unit_test_setup_teardown(thread_exit_unregisters, setup, teardown),
	    cmocka_unit_test_setup_teardown(stray_unlock_is_ignored, setup, teardown),
	    cmocka_unit_test_setup_teardown(setup_mistakes, setup, teardown),
	    cmocka_unit_test_setup_teardown(too_many_threads, setup, teardown),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* one test, e.g. for a mutant */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
