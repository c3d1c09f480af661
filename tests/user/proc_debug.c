// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * LUF_DEBUG's checks of the read-section calls of <luf/luf_proc.h> (issue
 * 30, finding 5): luf_read_lock(), luf_read_unlock() and luf_read_inside()
 * on a NULL handle, on another thread's handle or one kept after
 * luf_thread_unregister(), and a lock that would wrap the depth of nested
 * sections. Each misuse runs in a forked child, which must die of SIGABRT
 * after the error hook, luf_last_error() and stderr got one line naming
 * the call, the rule and the call site. Correct use (nesting up to the
 * largest depth, a stray unlock, a signal handler's section, a fork()
 * child's) must not abort.
 *
 * Built with -DLUF_DEBUG from lib/user's sources, against a libluf built
 * the same way (tests/user/CMakeLists.txt), and once more with
 * LUF_MUTANT_PROC_NO_DEBUG_CHECKS (the checks switched off): each misuse
 * test must then fail (ctest WILL_FAIL).
 */
#define _GNU_SOURCE
#include <luf/luf_proc.h>

#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/wait.h>
#include <unistd.h>

#if !defined(LUF_DEBUG)
#error "proc_debug.c tests what LUF_DEBUG adds: build it with -DLUF_DEBUG"
#endif

/* The child's end of the pipe its report goes through. */
static int report_fd = -1;

/* In the child: one line to the parent. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(report_fd, line, (size_t)n) < 0)
		_exit(4);
}

/* In the child: a set-up step failed (exit 3: not the abort a test wants). */
#define child_assert(cond)                             \
	do {                                           \
		if (!(cond)) {                         \
			say("child: FAIL: %s", #cond); \
			_exit(3);                      \
		}                                      \
	} while (0)

/* In the child: the call site of @call, then @call (both on one line). */
#define misuse(call)                                    \
	do {                                            \
		say("site: %s:%d", __FILE__, __LINE__); \
		call;                                   \
	} while (0)

/* The child's error hook: what it gets, and luf_last_error() by then. */
static void hook(int err, const char *fn, const char *what, void *arg)
{
	(void)arg;
	say("hook: %s: %s (%d)", fn, what, err);
	say("last: %s", luf_last_error());
}

static struct luf_proc *proc;
static struct luf_thread *self;

/* In the child: a domain with the calling thread registered. */
static void child_register(void)
{
	struct luf_proc_config cfg = {.max_threads = 4};

	child_assert(luf_proc_create(&proc, &cfg) == 0);
	child_assert(luf_thread_register(proc, &self) == 0);
}

/*
 * Run @body in a child with the default action for every signal a test
 * framework may catch, the error hook set and stderr into the pipe; put
 * what it said in @buf (NUL-terminated). Return: its wait status.
 */
static int run_child(void (*body)(void), char *buf, size_t size)
{
	static const int sigs[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS};
	size_t len = 0;
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		report_fd = fds[1];
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		dup2(fds[1], STDERR_FILENO);
		luf_set_error_hook(hook, NULL);
		body();
		say("child: returned");
		_exit(0);
	}
	close(fds[1]);
	while (len < size - 1 && (n = read(fds[0], buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

/* What the last child said. */
static char out[8192];

/* Did the last child say a line that starts with @head and ends with @tail? */
static bool said(const char *head, const char *tail)
{
	size_t hl = strlen(head), tl = strlen(tail);

	for (const char *l = out; *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);

		if (n >= hl + tl && !memcmp(l, head, hl) && !memcmp(l + n - tl, tail, tl))
			return true;
		l += n + (e != NULL);
	}
	return false;
}

/*
 * @body must die of SIGABRT after it reported @fn and @rule (the start of
 * the rule's text) with the call site it gave (its "site:" line) to the
 * hook and stderr, and @fn and @rule to luf_last_error() (which may cut a
 * long path).
 */
static void expect_abort(void (*body)(void), const char *fn, const char *rule)
{
	char head[512], tail[512];
	const char *site, *end;
	int status = run_child(body, out, sizeof(out));

	print_message("%s", out);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	site = strstr(out, "site: ");
	assert_non_null(site);
	site += strlen("site: ");
	end = strchr(site, '\n');
	assert_non_null(end);
	snprintf(head, sizeof(head), "hook: %s: %s", fn, rule);
	snprintf(tail, sizeof(tail), ", at %.*s (%d)", (int)(end - site), site, -EINVAL);
	assert_true(said(head, tail));
	snprintf(head, sizeof(head), "last: %s: %s", fn, rule);
	assert_true(said(head, ""));
	snprintf(head, sizeof(head), "luf: %s: %s", fn, rule);
	snprintf(tail, sizeof(tail), ", at %.*s", (int)(end - site), site);
	assert_true(said(head, tail));
}

#define RULE_NULL "@t is NULL"
#define RULE_OWNER "@t is not the calling thread's registered handle"
#define RULE_NEST "the depth of nested sections is at LUF_READER_NEST_MASK"

/* NULL through a volatile: the compiler cannot turn the fault into a trap of its own. */
static struct luf_thread *volatile nil;

static void lock_null_body(void)
{
	misuse(luf_read_lock(nil));
}

static void lock_null(void **state)
{
	(void)state;
	expect_abort(lock_null_body, "luf_read_lock", RULE_NULL);
}

static void unlock_null_body(void)
{
	misuse(luf_read_unlock(nil));
}

static void unlock_null(void **state)
{
	(void)state;
	expect_abort(unlock_null_body, "luf_read_unlock", RULE_NULL);
}

static void inside_null_body(void)
{
	misuse(say("inside: %d", luf_read_inside(nil)));
}

static void inside_null(void **state)
{
	(void)state;
	expect_abort(inside_null_body, "luf_read_inside", RULE_NULL);
}

/* Another registered thread of the child, which hands out its handle and waits. */
static struct luf_thread *theirs;
static sem_t registered, never;

static void *other_main(void *arg)
{
	(void)arg;
	if (luf_thread_register(proc, &theirs))
		theirs = NULL;
	sem_post(&registered);
	sem_wait(&never);
	return NULL;
}

static void start_other(void)
{
	pthread_t th;

	child_register();
	child_assert(sem_init(&registered, 0, 0) == 0 && sem_init(&never, 0, 0) == 0);
	child_assert(pthread_create(&th, NULL, other_main, NULL) == 0);
	sem_wait(&registered);
	child_assert(theirs && theirs != self);
}

static void lock_other_thread_body(void)
{
	start_other();
	misuse(luf_read_lock(theirs));
}

static void lock_other_thread(void **state)
{
	(void)state;
	expect_abort(lock_other_thread_body, "luf_read_lock", RULE_OWNER);
}

static void unlock_other_thread_body(void)
{
	start_other();
	misuse(luf_read_unlock(theirs));
}

static void unlock_other_thread(void **state)
{
	(void)state;
	expect_abort(unlock_other_thread_body, "luf_read_unlock", RULE_OWNER);
}

static void inside_other_thread_body(void)
{
	start_other();
	misuse(say("inside: %d", luf_read_inside(theirs)));
}

static void inside_other_thread(void **state)
{
	(void)state;
	expect_abort(inside_other_thread_body, "luf_read_inside", RULE_OWNER);
}

/* The handle kept after luf_thread_unregister() (the slot is free). */
static void lock_stale_body(void)
{
	child_register();
	child_assert(luf_thread_unregister(self) == 0);
	misuse(luf_read_lock(self));
}

static void lock_stale(void **state)
{
	(void)state;
	expect_abort(lock_stale_body, "luf_read_lock", RULE_OWNER);
}

static void unlock_stale_body(void)
{
	child_register();
	luf_read_lock(self);
	child_assert(luf_thread_unregister(self) == -EBUSY);
	luf_read_unlock(self);
	child_assert(luf_thread_unregister(self) == 0);
	misuse(luf_read_unlock(self));
}

static void unlock_stale(void **state)
{
	(void)state;
	expect_abort(unlock_stale_body, "luf_read_unlock", RULE_OWNER);
}

/*
 * LUF_READER_NEST_MASK - 1 sections open (the reader word written
 * directly: it is the handle's first member): one more lock reaches the
 * largest depth, the next would wrap it into the count of sections left.
 */
static void lock_nest_overflow_body(void)
{
	child_register();
	((struct luf_reader *)(void *)self)->ctr = LUF_READER_NEST_MASK - 1;
	luf_read_lock(self);
	child_assert(((struct luf_reader *)(void *)self)->ctr == LUF_READER_NEST_MASK);
	say("depth: largest");
	misuse(luf_read_lock(self));
	child_assert(luf_read_inside(self)); /* the mutant wrapped the depth */
}

static void lock_nest_overflow(void **state)
{
	(void)state;
	expect_abort(lock_nest_overflow_body, "luf_read_lock", RULE_NEST);
	/* The lock that reached the largest depth was allowed. */
	assert_non_null(strstr(out, "depth: largest\n"));
}

/* Correct use, in every way the checks must let through. */
static void on_signal(int sig)
{
	(void)sig;
	luf_read_lock(self); /* the handle of the thread it interrupted */
	if (!luf_read_inside(self))
		_exit(5);
	luf_read_unlock(self);
}

static void good_use_body(void)
{
	int status;
	pid_t pid;

	child_register();
	luf_read_unlock(self); /* a stray unlock: ignored */
	luf_read_lock(self);
	luf_read_lock(self);
	child_assert(luf_read_inside(self));
	child_assert(sigaction(SIGUSR1, &(struct sigaction){.sa_handler = on_signal}, NULL) == 0);
	child_assert(raise(SIGUSR1) == 0); /* inside a section */
	luf_read_unlock(self);
	luf_read_unlock(self);
	child_assert(!luf_read_inside(self));
	child_assert(raise(SIGUSR1) == 0); /* outside */
	/* Up to the largest depth and back. */
	((struct luf_reader *)(void *)self)->ctr = LUF_READER_NEST_MASK - 1;
	luf_read_lock(self);
	luf_read_unlock(self);
	child_assert(((struct luf_reader *)(void *)self)->ctr == LUF_READER_NEST_MASK - 1);
	((struct luf_reader *)(void *)self)->ctr = 0;
	/* The forking thread keeps its handle in a fork()'s child, also inside a section. */
	luf_read_lock(self);
	pid = fork();
	child_assert(pid >= 0);
	if (pid == 0) {
		if (!luf_read_inside(self))
			_exit(6);
		luf_read_unlock(self);
		luf_read_lock(self);
		luf_read_unlock(self);
		_exit(luf_thread_unregister(self) == 0 ? 0 : 7);
	}
	child_assert(waitpid(pid, &status, 0) == pid);
	child_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	luf_read_unlock(self);
	child_assert(luf_thread_unregister(self) == 0);
	child_assert(luf_proc_destroy(proc, NULL, NULL) == 0);
	say("good: done");
}

static void good_use(void **state)
{
	int status;

	(void)state;
	status = run_child(good_use_body, out, sizeof(out));
	print_message("%s", out);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(out, "good: done\n"));
	assert_null(strstr(out, "hook: "));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(good_use),
	    cmocka_unit_test(lock_null),
	    cmocka_unit_test(unlock_null),
	    cmocka_unit_test(inside_null),
	    cmocka_unit_test(lock_other_thread),
	    cmocka_unit_test(unlock_other_thread),
	    cmocka_unit_test(inside_other_thread),
	    cmocka_unit_test(lock_stale),
	    cmocka_unit_test(unlock_stale),
	    cmocka_unit_test(lock_nest_overflow),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* one test, e.g. for the mutant */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
