// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_proc.h read sections inside a signal handler (issue 30, finding 1).
 *
 * A reader thread enters and leaves read sections in a tight loop while a
 * timer of its own sends it SIGUSR1 every few microseconds (a POSIX timer
 * aimed at the thread: its CPU's timer interrupt delivers the signal, no
 * cross-CPU interrupt), so that signals land at every instruction of
 * luf_read_lock() and luf_read_unlock(); the handler reads a shared object
 * inside a section of its own, on the same handle.
 * An updater replaces the objects and reuses the old ones (batch 1: every
 * retirement is folded at once). Each object carries a stamp and canary
 * words; a handler that reads an object reused under it sees them torn.
 *
 * Two counts must stay 0:
 *  unpublished  handler sections that luf_read_inside() says reusers
 *               cannot see (the section's counter was not published)
 *  reused reads handler sections whose object changed under them
 * and the handler must have run --sections sections (default 10^6).
 *
 * Before the reader's counter and nesting depth shared one word, a signal
 * between the two stores of luf_read_lock() left the handler's section
 * unpublished.
 *
 * With --exit-registered S, for S seconds instead: threads that register,
 * arm a timer of their own whose handler opens sections on their handle,
 * and exit registered (luf unregisters them in a key destructor while the
 * timer still fires), while a checker thread registers, reads and
 * unregisters, and counts the times it finds itself inside a section
 * outside any section of its own, or cannot unregister: a handler that
 * ran after luf freed its thread's slot and wrote the slot's new owner's
 * reader word.
 *
 * Usage: luf_proc_signal [--sections N] [--seconds S] [--hold N] [--period-ns N]
 *        luf_proc_signal --exit-registered S
 * (defaults: 10^6 sections, at most 120 s, 16 passes over the words,
 * a signal every 20 us)
 */
#define _GNU_SOURCE
#include "stamped.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* glibc before 2.35 names the field of SIGEV_THREAD_ID only in its union. */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define SLOTS 4

static struct luf_proc *proc;
static struct stamped *_Atomic slot[SLOTS];
static atomic_ulong next_stamp = 1;
static atomic_bool stop, failed;
static unsigned int hold = 16;
static long period_ns = 20000;
/* The reader's timer, deleted by main() before it stops the threads. */
static timer_t timer;
static atomic_bool timer_armed;

/* The reader thread's handle, for its signal handler. */
static struct luf_thread *_Atomic reader_handle;
/* Written by the handler (on the reader thread), read after it stopped. */
static atomic_ulong handler_sections, unpublished, reused_reads;

/* Reads one object inside the caller's section: true if it changed under it. */
static bool read_obj(unsigned int i)
{
	return stamped_torn(atomic_load_explicit(&slot[i % SLOTS], memory_order_acquire), hold);
}

static void on_signal(int sig)
{
	struct luf_thread *t = atomic_load_explicit(&reader_handle, memory_order_relaxed);
	unsigned long n;

	(void)sig;
	if (!t)
		return;
	luf_read_lock(t);
	if (!luf_read_inside(t))
		atomic_fetch_add_explicit(&unpublished, 1, memory_order_relaxed);
	n = atomic_fetch_add_explicit(&handler_sections, 1, memory_order_relaxed);
	if (read_obj((unsigned int)n))
		atomic_fetch_add_explicit(&reused_reads, 1, memory_order_relaxed);
	luf_read_unlock(t);
}

static void *reader_main(void *arg)
{
	struct luf_thread *t;
	unsigned long i = 0;
	int *err = arg;

	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1};
	struct itimerspec its = {.it_interval = {0, period_ns}, .it_value = {0, period_ns}};

	*err = luf_thread_register(proc, &t);
	if (*err)
		return NULL;
	sev.sigev_notify_thread_id = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer)) {
		*err = -errno;
		atomic_store(&failed, true);
		luf_thread_unregister(t);
		return NULL;
	}
	atomic_store(&reader_handle, t);
	timer_settime(timer, 0, &its, NULL);
	atomic_store(&timer_armed, true);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		luf_read_lock(t);
		if (++i % 4 == 0) { /* nested sections too */
			luf_read_lock(t);
			luf_read_unlock(t);
		}
		luf_read_unlock(t);
	}
	atomic_store(&reader_handle, NULL);
	*err = luf_thread_unregister(t);
	return NULL;
}

static void *updater_main(void *arg)
{
	struct luf_thread *t;
	unsigned long i = 0;
	int *err = arg;

	*err = luf_thread_register(proc, &t);
	if (*err)
		return NULL;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct luf_node *n;
		struct stamped *o, *old;
		int ret = luf_reuse(t, &n);

		if (!ret) {
			o = luf_node_entry(n, struct stamped, node);
		} else if (ret == -EAGAIN) {
			o = calloc(1, sizeof(*o));
			if (!o) {
				*err = -ENOMEM;
				break;
			}
		} else {
			*err = ret;
			break;
		}
		stamped_fill(o, &next_stamp);
		old = atomic_exchange(&slot[i++ % SLOTS], o);
		ret = luf_retire(t, &old->node);
		if (ret) {
			*err = ret;
			break;
		}
	}
	if (*err)
		atomic_store(&failed, true);
	else
		*err = luf_thread_unregister(t);
	return NULL;
}

/* --exit-registered: the handle of a thread that exits registered, for its handler. */
static _Thread_local struct luf_thread *exiting_handle;
static atomic_ulong exits, checker_sections, corrupted;

static void on_exit_signal(int sig)
{
	struct luf_thread *t = exiting_handle;

	(void)sig;
	if (!t)
		return;
	luf_read_lock(t);
	for (volatile int i = 0; i < 300; i++)
		;
	luf_read_unlock(t);
}

static void *exiting_main(void *arg)
{
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR2};
	struct itimerspec its = {.it_interval = {0, 20000}, .it_value = {0, 20000}};
	timer_t *timer_out = arg;

	if (luf_thread_register(proc, &exiting_handle))
		return NULL;
	sev.sigev_notify_thread_id = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, timer_out))
		return NULL;
	timer_settime(*timer_out, 0, &its, NULL);
	for (volatile int i = 0; i < 20000; i++)
		;
	return NULL; /* exits registered, its timer still firing */
}

static void *exiting_loop(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		timer_t timer = 0;
		pthread_t th;

		if (pthread_create(&th, NULL, exiting_main, &timer))
			break;
		pthread_join(th, NULL);
		if (timer)
			timer_delete(timer);
		atomic_fetch_add_explicit(&exits, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *checker_main(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct luf_thread *t;

		if (luf_thread_register(proc, &t))
			continue; /* every slot taken for a moment */
		for (int i = 0; i < 1000; i++) {
			luf_read_lock(t);
			for (volatile int k = 0; k < 30; k++)
				;
			luf_read_unlock(t);
			atomic_fetch_add_explicit(&checker_sections, 1, memory_order_relaxed);
			if (luf_read_inside(t)) {
				atomic_fetch_add_explicit(&corrupted, 1, memory_order_relaxed);
				break;
			}
		}
		if (luf_thread_unregister(t))
			atomic_fetch_add_explicit(&corrupted, 1, memory_order_relaxed);
	}
	return NULL;
}

static int exit_registered(double seconds)
{
	struct sigaction sa = {.sa_handler = on_exit_signal, .sa_flags = SA_RESTART};
	struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
	pthread_t ex[2], ck;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL) || pthread_create(&ex[0], NULL, exiting_loop, NULL) ||
	    pthread_create(&ex[1], NULL, exiting_loop, NULL) ||
	    pthread_create(&ck, NULL, checker_main, NULL))
		return 1;
	nanosleep(&ts, NULL);
	atomic_store(&stop, true);
	pthread_join(ex[0], NULL);
	pthread_join(ex[1], NULL);
	pthread_join(ck, NULL);
	printf(
	    "luf_proc_signal: %lu threads exited registered under signals, %lu checker sections, "
	    "%lu corrupted\n",
	    atomic_load(&exits), atomic_load(&checker_sections), atomic_load(&corrupted));
	if (luf_proc_destroy(proc, NULL, NULL))
		return 1;
	if (atomic_load(&corrupted) || atomic_load(&exits) < 100) {
		printf("luf_proc_signal: FAIL: %s\n", atomic_load(&corrupted)
							  ? "a freed slot's reader word was written"
							  : "too few threads exited");
		return 1;
	}
	printf("luf_proc_signal: ok\n");
	return 0;
}

static void release(struct luf_node *n, void *arg)
{
	(void)arg;
	free(luf_node_entry(n, struct stamped, node));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct luf_proc_config cfg = {.max_threads = 4, .batch = 1};
	unsigned long want = 1000000;
	double seconds = 120, exit_seconds = 0, t0;
	struct sigaction sa;
	pthread_t rd, up;
	int rd_err = 0, up_err = 0, ret;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--sections"))
			want = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = strtod(argv[i + 1], NULL);
		else if (!strcmp(argv[i], "--hold"))
			hold = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--exit-registered"))
			exit_seconds = strtod(argv[i + 1], NULL);
		else if (!strcmp(argv[i], "--period-ns"))
			period_ns = strtol(argv[i + 1], NULL, 0);
		else
			break;
	}
	if (period_ns < 1 || period_ns > 999999999) {
		fprintf(stderr, "luf_proc_signal: --period-ns must be 1..999999999\n");
		return 2;
	}
	ret = luf_proc_create(&proc, &cfg);
	if (ret) {
		fprintf(stderr, "luf_proc_signal: luf_proc_create: %d\n", ret);
		return ret == -ENOSYS || ret == -EPERM ? 77 : 1;
	}
	if (exit_seconds > 0)
		return exit_registered(exit_seconds);
	for (unsigned int i = 0; i < SLOTS; i++) {
		struct stamped *o = calloc(1, sizeof(*o));

		if (!o)
			return 1;
		stamped_fill(o, &next_stamp);
		atomic_store(&slot[i], o);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	if (pthread_create(&rd, NULL, reader_main, &rd_err) ||
	    pthread_create(&up, NULL, updater_main, &up_err))
		return 1;
	t0 = now();
	while (atomic_load_explicit(&handler_sections, memory_order_relaxed) < want &&
	       now() - t0 < seconds && !atomic_load(&failed)) {
		struct timespec ts = {0, 10000000L};

		nanosleep(&ts, NULL);
	}
	/* No more signals (a handler that outlasts the period would starve the loop). */
	if (atomic_load(&timer_armed))
		timer_delete(timer);
	atomic_store(&stop, true);
	pthread_join(rd, NULL);
	pthread_join(up, NULL);
	printf("luf_proc_signal: %lu handler sections in %.1f s, %lu unpublished, "
	       "%lu reused reads, %lu system calls\n",
	       atomic_load(&handler_sections), now() - t0, atomic_load(&unpublished),
	       atomic_load(&reused_reads), luf_user_calls(luf_proc_backend(proc)));
	for (unsigned int i = 0; i < SLOTS; i++)
		free(atomic_load(&slot[i]));
	if (rd_err || up_err) {
		fprintf(stderr, "luf_proc_signal: reader error %d, updater error %d\n", rd_err,
			up_err);
		return 1;
	}
	if (luf_proc_destroy(proc, release, NULL))
		return 1;
	if (atomic_load(&unpublished) || atomic_load(&reused_reads)) {
		printf("luf_proc_signal: FAIL: handler sections unprotected\n");
		return 1;
	}
	if (atomic_load(&handler_sections) < want) {
		printf("luf_proc_signal: FAIL: only %lu of %lu handler sections in %.0f s\n",
		       atomic_load(&handler_sections), want, seconds);
		return 1;
	}
	printf("luf_proc_signal: ok\n");
	return 0;
}
