// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/user/user_errors.c - the error paths of the user-space backends
 * (CMocka): errno mapping through an injected membarrier entry point, the
 * same through a real seccomp filter in a child process, bad input (open
 * twice, use after close, a set wider than the machine) that must change
 * nothing, auto-selection's choice and its reasons, and a failed flush
 * leaving luf's sets pending.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <luf/luf_user.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MB_QUERY 0
#define MB_PRIVATE_EXPEDITED (1 << 3)
#define MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#define MB_ALL_CMDS 0x1f9L /* what a 5.10+ kernel reports, less GLOBAL_EXPEDITED */

/* The injected membarrier: each stage fails with its errno if set. */
static struct {
	long query_ret;
	int query_errno, register_errno, cmd_errno;
	unsigned long calls;
} inj;

static long fake_membarrier(int cmd, unsigned int flags, int cpu_id)
{
	int err;

	(void)flags, (void)cpu_id;
	inj.calls++;
	if (cmd == MB_QUERY) {
		err = inj.query_errno;
		if (!err)
			return inj.query_ret;
	} else {
		/* REGISTER_* commands are the odd powers of two from 1 << 4 up. */
		err = (cmd & 0x150) ? inj.register_errno : inj.cmd_errno;
		if (!err)
			return 0;
	}
	errno = err;
	return -1;
}

static int reset_inj(void **state)
{
	(void)state;
	memset(&inj, 0, sizeof(inj));
	inj.query_ret = MB_ALL_CMDS;
	return 0;
}

static struct luf_user_config fake_cfg(unsigned int flags)
{
	struct luf_user_config cfg = {.flags = flags, .membarrier = fake_membarrier};

	return cfg;
}

static void expect_open_error(int want, const struct luf_user_config *cfg, const char *why_part)
{
	struct luf_user u = {0};

	assert_int_equal(luf_user_membarrier_open(&u, cfg), want);
	assert_int_equal(luf_user_kind(&u), LUF_USER_NONE);
	assert_non_null(strstr(luf_user_why(&u), why_part));
	assert_int_equal(luf_user_flush(&u, NULL, 0), -EBADF); /* never runs without a barrier */
}

static void test_enosys(void **state)
{
	struct luf_user_config cfg = fake_cfg(0);

	(void)state;
	inj.query_errno = ENOSYS;
	expect_open_error(-ENOSYS, &cfg, "absent");
}

static void test_eperm_query(void **state)
{
	struct luf_user_config cfg = fake_cfg(0);

	(void)state;
	inj.query_errno = EPERM;
	expect_open_error(-EPERM, &cfg, "blocked");
}

static void test_eperm_register(void **state)
{
	struct luf_user_config cfg = fake_cfg(0);

	(void)state;
	inj.register_errno = EPERM;
	expect_open_error(-EPERM, &cfg, "REGISTER_PRIVATE_EXPEDITED");
}

static void test_eperm_command(void **state)
{
	struct luf_user_config cfg = fake_cfg(0);

	(void)state;
	inj.cmd_errno = EPERM; /* QUERY and REGISTER pass, the command itself is blocked */
	expect_open_error(-EPERM, &cfg, "trial flush");
}

static void test_einval_unsupported(void **state)
{
	struct luf_user_config cfg = fake_cfg(0);

	(void)state;
	inj.query_ret = 0x7; /* 4.3-era: GLOBAL only, no PRIVATE_EXPEDITED */
	expect_open_error(-EINVAL, &cfg, "PRIVATE_EXPEDITED");
	inj.query_ret = MB_PRIVATE_EXPEDITED | MB_REGISTER_PRIVATE_EXPEDITED; /* 4.14 */
	cfg = fake_cfg(LUF_USER_SYNC_CORE);
	expect_open_error(-EINVAL, &cfg, "SYNC_CORE");
	cfg = fake_cfg(0);
	cfg.rseq_max_cpus = 1;
	expect_open_error(-EINVAL, &cfg, "RSEQ");
}

static void test_flush_error_keeps_pending(void **state)
{
	struct luf_user_config cfg = fake_cfg(0);
	static struct luf_user u;
	struct luf *l;
	struct luf_done_cpu *done;
	struct luf_stats_cpu *stats;
	struct luf_batch *b;
	unsigned int nr;

	(void)state;
	cfg.nr_ids = 4;
	assert_int_equal(luf_user_membarrier_open(&u, &cfg), 0);
	nr = luf_user_nr_cpu_ids(&u);
	assert_int_equal(nr, 4);
	l = aligned_alloc(LUF_CACHELINE,
			  (sizeof(*l) + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE);
	done = aligned_alloc(LUF_CACHELINE, luf_done_size(nr));
	stats = aligned_alloc(LUF_CACHELINE, luf_stats_size(nr));
	b = malloc(luf_batch_size(nr));
	assert_true(l && done && stats && b);
	assert_int_equal(luf_init(l, &luf_user_ops, &u, done, stats, 0), 0);
	assert_int_equal(luf_batch_init(b, nr), 0);
	luf_clear_error();
	assert_int_equal(luf_user_set_thread_id(&u, 4), -EINVAL); /* beyond the 4 ids */
	assert_non_null(strstr(luf_last_error(), "luf_user_set_thread_id: @id is not below"));
	assert_int_equal(luf_user_set_thread_id(NULL, 2), -EINVAL);
	assert_int_equal(luf_user_set_thread_id(&u, 2), 0);
	assert_int_equal(luf_user_ops.this_cpu(&u), 2);
	{
		unsigned long m[1] = {0x6};

		luf_batch_add(b, m, luf_ugen_stamp(&l->ugen), false);
	}
	inj.cmd_errno = EINTR;
	assert_int_equal(luf_flush_batch(l, 2, b), -EINTR);
	assert_false(luf_batch_empty(b));	     /* still pending */
	assert_false(luf_batch_check_done(b, &l->done)); /* done not marked */
	inj.cmd_errno = 0;
	assert_int_equal(luf_flush_batch(l, 2, b), 1);
	assert_true(luf_batch_empty(b));
	assert_int_equal(luf_user_calls(&u), 2);
	assert_int_equal(luf_user_close(&u), 0);
	free(b), free(stats), free(done), free(l);
}

static void test_bad_input_changes_nothing(void **state)
{
	struct luf_user_config cfg = fake_cfg(0), bad;
	unsigned long wide[2] = {0, 1};
	static struct luf_user u, copy;
	unsigned long calls;

	(void)state;
	/* Bad configurations leave zeroed storage zeroed. */
	bad = cfg;
	bad.flags = 0x80;
	assert_int_equal(luf_user_membarrier_open(&u, &bad), -EINVAL);
	bad = cfg;
	bad.nr_ids = LUF_MAX_CPUS + 1;
	assert_int_equal(luf_user_backend_open(&u, &bad), -EINVAL);
	bad = cfg;
	bad.flags = LUF_USER_SYNC_CORE;
	bad.rseq_max_cpus = 2;
	assert_int_equal(luf_user_membarrier_open(&u, &bad), -EINVAL);
	assert_int_equal(luf_user_membarrier_open(NULL, &cfg), -EINVAL);
	assert_int_equal(u.state, 0);
	assert_int_equal(inj.calls, 0);

	/* Opened twice: -EBUSY, nothing changes (not even the reason). */
	cfg.nr_ids = 2;
	assert_int_equal(luf_user_membarrier_open(&u, &cfg), 0);
	memcpy(&copy, &u, sizeof(u));
	calls = inj.calls;
	assert_int_equal(luf_user_membarrier_open(&u, &cfg), -EBUSY);
	assert_int_equal(luf_user_mprotect_open(&u, &cfg), -EBUSY);
	assert_int_equal(luf_user_backend_open(&u, &cfg), -EBUSY);
	assert_memory_equal(&copy, &u, sizeof(u));
	assert_int_equal(inj.calls, calls);

	/* A set wider than the machine (2 ids): refused before any system call. */
	assert_int_equal(luf_user_flush(&u, wide, 65), -EINVAL);
	wide[1] = 0;
	wide[0] = 0x4; /* CPU 2 of a 3-bit set */
	assert_int_equal(luf_user_flush(&u, wide, 3), -EINVAL);
	wide[0] = 0x1;
	assert_int_equal(luf_user_flush(&u, wide, 1), 0); /* narrower is fine */
	assert_int_equal(luf_user_calls(&u), 1);
	assert_int_equal(luf_user_flush(NULL, NULL, 0), -EINVAL);

	/* Used after close, closed twice. */
	assert_int_equal(luf_user_close(&u), 0);
	assert_int_equal(luf_user_flush(&u, NULL, 0), -EBADF);
	assert_int_equal(luf_user_close(&u), -EBADF);
	assert_int_equal(luf_user_nr_cpu_ids(&u), 0);
	assert_int_equal(luf_user_kind(&u), LUF_USER_NONE);
	assert_int_equal(luf_user_calls(&u), 1);

	/* Garbage storage is refused, not trusted. */
	memset(&u, 0x5a, sizeof(u));
	assert_int_equal(luf_user_membarrier_open(&u, &cfg), -EINVAL);
	assert_int_equal(luf_user_close(&u), -EBADF);
	assert_int_equal(luf_user_set_thread_id(&u, 0), -EINVAL); /* not open */
}

static void test_auto_fallback(void **state)
{
	struct luf_user_config cfg = fake_cfg(0);
	struct luf_user u = {0};
	int ret;

	(void)state;
	inj.query_errno = ENOSYS;
	ret = luf_user_backend_open(&u, &cfg);
	print_message("auto, membarrier absent: %d, %s\n", ret, luf_user_why(&u));
#if defined(__x86_64__)
	if (ret == -EOPNOTSUPP || (ret && strstr(luf_user_why(&u), "INVLPGB")))
		skip();
	assert_int_equal(ret, 0);
	assert_int_equal(luf_user_kind(&u), LUF_USER_MPROTECT);
	assert_non_null(strstr(luf_user_why(&u), "ENOSYS"));
	assert_int_equal(luf_user_flush(&u, NULL, 0), 0);
	assert_int_equal(luf_user_close(&u), 0);
#else
	assert_int_equal(ret, -ENOSYS);
	assert_non_null(strstr(luf_user_why(&u), "EOPNOTSUPP"));
#endif
	/* SYNC_CORE has no sound fallback: fail with membarrier's reason. */
	memset(&u, 0, sizeof(u));
	cfg = fake_cfg(LUF_USER_SYNC_CORE);
	inj.query_errno = EPERM;
	assert_int_equal(luf_user_backend_open(&u, &cfg), -EPERM);
	assert_int_equal(luf_user_kind(&u), LUF_USER_NONE);
	assert_non_null(strstr(luf_user_why(&u), "no sound backend"));
	assert_non_null(strstr(luf_user_why(&u), "SYNC_CORE"));
	assert_int_equal(luf_user_flush(&u, NULL, 0), -EBADF);
}

static void test_real_backends(void **state)
{
	struct luf_user_config cfg = {0};
	struct luf_user u = {0};
	int ret;

	(void)state;
	ret = luf_user_backend_open(&u, NULL);
	print_message("auto: %d, %s\n", ret, luf_user_why(&u));
	if (ret)
		skip();
	assert_true(luf_user_nr_cpu_ids(&u) >= 1);
	assert_true(luf_user_this_cpu(&u) < luf_user_nr_cpu_ids(&u));
	assert_int_equal(luf_user_ops.flush_all(&u), 0);
	assert_int_equal(luf_user_close(&u), 0);
	cfg.flags = LUF_USER_SYNC_CORE;
	assert_int_equal(luf_user_mprotect_open(&u, &cfg), -EOPNOTSUPP);
	assert_non_null(strstr(luf_user_why(&u), "SYNC_CORE"));
}

/* --- a real seccomp filter, in a child process ---------------------------- */

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#if defined(TEST_AUDIT_ARCH) && defined(__NR_membarrier)
/* Make membarrier(2) return -1 with @err (or 0 when @err is 0: a faked success). */
static int block_membarrier(int err)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned int)err & SECCOMP_RET_DATA)),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/*
 * In a child under a filter returning @err: the membarrier open must fail
 * with @want; auto-selection must then pick mprotect (x86-64) or fail.
 * Child exit: 0 ok, 1 wrong, 2 filter not installable (skip).
 */
static int seccomp_child(int err, int want)
{
	struct luf_user u = {0};
	int ret;

	if (block_membarrier(err))
		return 2;
	ret = luf_user_membarrier_open(&u, NULL);
	printf("  seccomp errno %d: membarrier open %d: %s\n", err, ret, luf_user_why(&u));
	if (ret != want || luf_user_flush(&u, NULL, 0) != -EBADF)
		return 1;
	memset(&u, 0, sizeof(u));
	ret = luf_user_backend_open(&u, NULL);
	printf("  seccomp errno %d: auto %d: %s\n", err, ret, luf_user_why(&u));
#if defined(__x86_64__)
	if (ret == 0)
		return luf_user_kind(&u) == LUF_USER_MPROTECT && !luf_user_flush(&u, NULL, 0) ? 0
											      : 1;
	return strstr(luf_user_why(&u), "INVLPGB") ? 0 : 1;
#else
	return ret == want ? 0 : 1;
#endif
}

static void run_seccomp_child(int err, int want)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ret = seccomp_child(err, want);

		fflush(stdout);
		_exit(ret);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 2)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_seccomp_eperm(void **state)
{
	(void)state;
	run_seccomp_child(EPERM, -EPERM);
}

static void test_seccomp_enosys(void **state)
{
	(void)state;
	run_seccomp_child(ENOSYS, -ENOSYS);
}

static void test_seccomp_fake_success(void **state)
{
	(void)state;
	/* Every call "succeeds" with 0: QUERY reports no command, so refuse (-EINVAL). */
	run_seccomp_child(0, -EINVAL);
}
#else
static void test_seccomp_eperm(void **state)
{
	(void)state;
	skip();
}
#define test_seccomp_enosys test_seccomp_eperm
#define test_seccomp_fake_success test_seccomp_eperm
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_enosys, reset_inj),
	    cmocka_unit_test_setup(test_eperm_query, reset_inj),
	    cmocka_unit_test_setup(test_eperm_register, reset_inj),
	    cmocka_unit_test_setup(test_eperm_command, reset_inj),
	    cmocka_unit_test_setup(test_einval_unsupported, reset_inj),
	    cmocka_unit_test_setup(test_flush_error_keeps_pending, reset_inj),
	    cmocka_unit_test_setup(test_bad_input_changes_nothing, reset_inj),
	    cmocka_unit_test_setup(test_auto_fallback, reset_inj),
	    cmocka_unit_test(test_real_backends),
	    cmocka_unit_test(test_seccomp_eperm),
	    cmocka_unit_test(test_seccomp_enosys),
	    cmocka_unit_test(test_seccomp_fake_success),
	};

	return cmocka_run_group_tests_name("user backend errors", tests, NULL, NULL);
}
