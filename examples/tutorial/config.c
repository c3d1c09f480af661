// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * config.c - the tutorial's second program: a read-mostly configuration
 * replaced while threads, and a signal handler, read it. Two ways to free
 * the old version: luf_synchronize() then free() (the waiting form), or
 * luf_call() with a function that frees it (the callback form). Each
 * version is poisoned before it is freed, so a reader that could still
 * see it would count a torn read.
 *
 * Usage: luf-tutorial-config [UPDATES] [READERS]   (defaults 2000 2)
 * Prints "config: ok" when no read was torn.
 */
#define _GNU_SOURCE
#include <luf/luf_proc.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POISON 0xdeadul

struct config {
	atomic_ulong version;
	atomic_ulong check; /* version * 3 while the version is live, POISON once dead */
	struct luf_node node;
};

static struct luf_proc *proc;
static struct config *_Atomic current;
static atomic_bool stop;
static atomic_ulong reads, torn;

/* One read: inside the caller's section, the version and its check agree. */
static void read_config(void)
{
	struct config *c = atomic_load_explicit(&current, memory_order_acquire);
	unsigned long v = atomic_load_explicit(&c->version, memory_order_relaxed);

	if (atomic_load_explicit(&c->check, memory_order_relaxed) != v * 3)
		atomic_fetch_add_explicit(&torn, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&reads, 1, memory_order_relaxed);
}

/* [signal] */
/* The reading thread's handle, for its signal handler. */
static _Thread_local struct luf_thread *me;

/* SIGALRM interrupts a reader anywhere, even inside luf_read_lock(). */
static void on_alarm(int sig)
{
	(void)sig;
	if (!me)
		return;
	luf_read_lock(me); /* a section of its own, on the same handle */
	read_config();
	luf_read_unlock(me);
}
/* [signal] */

static void *reader_main(void *arg)
{
	struct luf_thread *t;
	int *err = arg;

	*err = luf_thread_register(proc, &t);
	if (*err)
		return NULL;
	me = t;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		luf_read_lock(t);
		read_config();
		luf_read_unlock(t);
	}
	me = NULL;
	*err = luf_thread_unregister(t);
	return NULL;
}

static struct config *new_config(unsigned long v)
{
	struct config *c = calloc(1, sizeof(*c));

	if (!c) {
		fprintf(stderr, "config: out of memory\n");
		exit(1);
	}
	atomic_store_explicit(&c->version, v, memory_order_relaxed);
	atomic_store_explicit(&c->check, v * 3, memory_order_relaxed);
	return c;
}

static void kill_config(struct config *c)
{
	atomic_store_explicit(&c->check, POISON, memory_order_relaxed);
	free(c);
}

/* [call] */
/* luf_call()'s callback: no reader can see the old version any more. */
static void free_config(struct luf_node *n)
{
	kill_config(luf_node_entry(n, struct config, node));
}

/* Replace the configuration; luf frees the old one when it is safe. */
static int replace_call(struct luf_thread *t, unsigned long v)
{
	struct config *old = atomic_exchange(&current, new_config(v)); /* U1 */

	return luf_call(t, &old->node, free_config);
}
/* [call] */

/* [sync] */
/* Replace the configuration and free the old one before returning. */
static int replace_sync(struct luf_thread *t, unsigned long v)
{
	struct config *old = atomic_exchange(&current, new_config(v)); /* U1 */
	int ret = luf_synchronize(t); /* blocks: no reader can see @old after it */

	if (ret)
		return ret; /* @old may still be read: keep it (a leak, not a crash) */
	kill_config(old);
	return 0;
}
/* [sync] */

int main(int argc, char **argv)
{
	unsigned long updates = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000;
	unsigned int nr = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 2;
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	struct itimerspec its = {{0, 100000}, {0, 100000}}; /* every 100 us */
	pthread_t th[8];
	int err[8] = {0};
	struct luf_thread *t;
	timer_t timer;
	int ret;

	if (nr < 1 || nr > 8) {
		fprintf(stderr, "config: READERS must be 1..8\n");
		return 2;
	}
	ret = luf_proc_create(&proc, NULL);
	if (ret) {
		fprintf(stderr, "config: luf_proc_create: %s\n", luf_last_error());
		return ret == -ENOSYS || ret == -EPERM ? 77 : 1;
	}
	atomic_store(&current, new_config(1));
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || timer_create(CLOCK_MONOTONIC, NULL, &timer))
		return 1;
	for (unsigned int i = 0; i < nr; i++)
		if (pthread_create(&th[i], NULL, reader_main, &err[i]))
			return 1;
	if (luf_thread_register(proc, &t))
		return 1;
	timer_settime(timer, 0, &its, NULL); /* SIGALRM to any thread: readers too */
	for (unsigned long v = 2; v < updates + 2 && !ret; v++)
		ret = v % 2 ? replace_sync(t, v) : replace_call(t, v);
	timer_delete(timer);
	atomic_store(&stop, true);
	for (unsigned int i = 0; i < nr; i++) {
		pthread_join(th[i], NULL);
		if (err[i])
			ret = err[i];
	}
	if (!ret)
		ret = luf_synchronize(t); /* the last callbacks run */
	if (ret || luf_thread_unregister(t)) {
		fprintf(stderr, "config: %s\n", luf_last_error());
		return 1;
	}
	if (luf_proc_destroy(proc, NULL, NULL))
		return 1;
	kill_config(atomic_load(&current));
	printf("config: %lu updates, %lu reads, %lu torn\n", updates, atomic_load(&reads),
	       atomic_load(&torn));
	if (atomic_load(&torn))
		return 1;
	printf("config: ok\n");
	return 0;
}
