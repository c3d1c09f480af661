// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/replay/test_parse.c - the strace line parser of luf-replay
 * (bench/replay/rp_parse.c) on real strace 6.1 lines of every form it
 * must handle, and on malformed ones (CMocka, label unit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rp_parse.h"

static struct rp_parser *P;

static int parse(const char *line, struct rp_event *ev)
{
	const char *err = NULL;
	int r = rp_parse_line(P, line, strlen(line), ev, &err);

	if (r)
		assert_non_null(err);
	return r;
}

static int setup(void **state)
{
	(void)state;
	P = rp_parser_new();
	return P ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rp_parser_free(P);
	return 0;
}

static void test_mmap_forms(void **state)
{
	struct rp_event ev;

	(void)state;
	assert_int_equal(parse("8776  20:55:19.499737 mmap(NULL, 1048576, PROT_READ|PROT_WRITE, "
			       "MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f3763627000",
			       &ev),
			 0);
	assert_int_equal(ev.kind, RP_EV_CALL);
	assert_int_equal(ev.sys, RP_SYS_MMAP);
	assert_int_equal(ev.pid, 8776);
	assert_int_equal(ev.arg[1], 1048576);
	assert_int_equal(ev.arg[2], RP_PROT_READ | RP_PROT_WRITE);
	assert_int_equal(ev.arg[3], 0x22);
	assert_int_equal((unsigned long)ev.ret, 0x7f3763627000ul);
	assert_false(ev.failed);
	assert_int_equal(
	    parse("8047  20:55:11.700000 mmap(0x7f6e6c000000, 8192, PROT_READ|PROT_EXEC, "
		  "MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x1000) = 0x7f6e6c000000",
		  &ev),
	    0);
	assert_int_equal(ev.arg[2], RP_PROT_READ | RP_PROT_EXEC);
	assert_true(ev.arg[3] & RP_MAP_FIXED);
	/* hex flags with a comment, and a failed call */
	assert_int_equal(parse("[pid  1234] 10:00:00.000001 mmap(NULL, 4096, 0x3 /* PROT_??? */, "
			       "0x22, -1, 0) = -1 ENOMEM (Cannot allocate memory)",
			       &ev),
			 0);
	assert_int_equal(ev.pid, 1234);
	assert_int_equal(ev.arg[2], 3);
	assert_true(ev.failed);
	/* no pid, no time (strace -e trace=memory of one process) */
	assert_int_equal(
	    parse("mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE,"
		  " -1, 0) = 0x7f0000000000 <0.000012>",
		  &ev),
	    0);
	assert_int_equal(ev.pid, -1);
	assert_int_equal(ev.arg[2], 0);
}

static void test_other_memory_calls(void **state)
{
	struct rp_event ev;

	(void)state;
	assert_int_equal(parse("8777  20:55:19.549309 munmap(0x7f3762a69000, 200704) = 0", &ev), 0);
	assert_int_equal(ev.sys, RP_SYS_MUNMAP);
	assert_int_equal(ev.arg[0], 0x7f3762a69000ul);
	assert_int_equal(ev.arg[1], 200704);
	assert_int_equal(parse("8777  20:55:19.551856 mprotect(0x7f375c025000, 94208, "
			       "PROT_READ|PROT_WRITE) = 0",
			       &ev),
			 0);
	assert_int_equal(ev.sys, RP_SYS_MPROTECT);
	assert_int_equal(ev.arg[2], 3);
	assert_int_equal(
	    parse("42 12:00:00.000000 pkey_mprotect(0x7f0000000000, 4096, PROT_READ, 1)"
		  " = 0",
		  &ev),
	    0);
	assert_int_equal(ev.sys, RP_SYS_PKEY_MPROTECT);
	assert_int_equal(parse("8777  20:55:19.549247 madvise(0x7f375c021000, 16384, MADV_DONTNEED)"
			       " = 0",
			       &ev),
			 0);
	assert_int_equal(ev.arg[2], RP_MADV_DONTNEED);
	assert_int_equal(parse("1 00:00:00.1 madvise(0x1000, 4096, MADV_FREE) = 0", &ev), 0);
	assert_int_equal(ev.arg[2], RP_MADV_FREE);
	assert_int_equal(parse("1 00:00:00.1 madvise(0x1000, 4096, MADV_REMOVE) = 0", &ev), 0);
	assert_int_equal(ev.arg[2], RP_MADV_REMOVE);
	assert_int_equal(parse("1 00:00:00.1 madvise(0x1000, 4096, MADV_PAGEOUT) = 0", &ev), 0);
	assert_int_equal(ev.arg[2], RP_MADV_PAGEOUT);
	assert_int_equal(parse("1 00:00:00.1 madvise(0x1000, 4096, MADV_COLD) = 0", &ev), 0);
	assert_int_equal(ev.arg[2], RP_MADV_COLD);
	assert_int_equal(parse("1 00:00:00.1 mremap(0x7f0000000000, 8192, 16384, MREMAP_MAYMOVE) = "
			       "0x7f0000100000",
			       &ev),
			 0);
	assert_int_equal(ev.sys, RP_SYS_MREMAP);
	assert_int_equal(ev.nargs, 4);
	assert_int_equal(ev.arg[3], RP_MREMAP_MAYMOVE);
	assert_int_equal(parse("1 00:00:00.1 mremap(0x7f0000000000, 8192, 8192, "
			       "MREMAP_MAYMOVE|MREMAP_FIXED, 0x7f0000200000) = 0x7f0000200000",
			       &ev),
			 0);
	assert_int_equal(ev.nargs, 5);
	assert_int_equal(ev.arg[4], 0x7f0000200000ul);
	assert_int_equal(parse("8776  20:55:19.494009 brk(0xf700000)    = 0xf700000", &ev), 0);
	assert_int_equal(ev.sys, RP_SYS_BRK);
	assert_int_equal(ev.ret, 0xf700000);
	assert_int_equal(
	    parse("8776  20:55:19.400000 brk(NULL)               = 0x55d5c0a4e000", &ev), 0);
	assert_int_equal(ev.arg[0], 0);
}

static void test_process_calls(void **state)
{
	struct rp_event ev;

	(void)state;
	assert_int_equal(
	    parse(
		"8776  20:55:19.544123 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|"
		"CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID,"
		" child_tid=0x7f37634c4990, parent_tid=0x7f37634c4990, exit_signal=0, "
		"stack=0x7f3762cc4000, stack_size=0x7fff80, tls=0x7f37634c46c0} => "
		"{parent_tid=[8777]}, 88) = 8777",
		&ev),
	    0);
	assert_int_equal(ev.sys, RP_SYS_CLONE3);
	assert_true(ev.arg[0] & RP_CLONE_VM);
	assert_true(ev.arg[0] & RP_CLONE_THREAD);
	assert_int_equal(ev.ret, 8777);
	assert_int_equal(parse("6544  20:54:55.043875 clone(child_stack=NULL, "
			       "flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, "
			       "child_tidptr=0x7f5d18895a10) = 6545",
			       &ev),
			 0);
	assert_int_equal(ev.sys, RP_SYS_CLONE);
	assert_false(ev.arg[0] & RP_CLONE_VM);
	assert_int_equal(parse("1 00:00:00.1 fork() = 77", &ev), 0);
	assert_int_equal(ev.sys, RP_SYS_FORK);
	assert_int_equal(ev.ret, 77);
	assert_int_equal(
	    parse("6550  20:54:55.049255 execve(\"/usr/bin/readlink\", "
		  "[\"/usr/bin/readlink\", \"pyenv\"], 0x55962e6ac140 /* 42 vars */) = 0",
		  &ev),
	    0);
	assert_int_equal(ev.sys, RP_SYS_EXECVE);
	assert_int_equal(ev.ret, 0);
	assert_int_equal(parse("6544  20:54:55.025378 execve(\"/x/bash\", [\"bash\", \"-c\", "
			       "\"\\nimport threading\\ndef w(n):\\n    \"...], 0x7ffc7f18e8a8 "
			       "/* 41 vars */) = -1 ENOENT (No such file or directory)",
			       &ev),
			 0);
	assert_true(ev.failed);
	assert_int_equal(parse("6545  20:54:55.044953 exit_group(0)     = ?", &ev), 0);
	assert_int_equal(ev.sys, RP_SYS_EXIT_GROUP);
	assert_true(ev.unknown_ret);
	assert_false(ev.failed);
	assert_int_equal(
	    parse("6544  20:54:55.045134 wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == "
		  "0}], WNOHANG, NULL) = 6545",
		  &ev),
	    0);
	assert_int_equal(ev.sys, RP_SYS_OTHER);
}

static void test_unfinished_resumed(void **state)
{
	struct rp_event ev;

	(void)state;
	assert_int_equal(parse("8808  20:55:19.918482 vfork( <unfinished ...>", &ev), 0);
	assert_int_equal(ev.kind, RP_EV_NONE);
	assert_true(ev.started);
	assert_true(ev.started_flags & RP_CLONE_VM);
	assert_int_equal(parse("6549  20:54:55.049206 wait4(-1,  <unfinished ...>", &ev), 0);
	assert_int_equal(rp_parser_in_flight(P), 2);
	/* another pid runs in between */
	assert_int_equal(
	    parse("8812  20:55:19.918554 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 3, 0)"
		  " = 0x7f0000000000",
		  &ev),
	    0);
	assert_int_equal(parse("8808  20:55:19.918683 <... vfork resumed>) = 8812", &ev), 0);
	assert_int_equal(ev.kind, RP_EV_CALL);
	assert_int_equal(ev.sys, RP_SYS_VFORK);
	assert_int_equal(ev.ret, 8812);
	assert_int_equal(parse("6549  20:54:55.052067 <... wait4 resumed>[{WIFEXITED(s) && "
			       "WEXITSTATUS(s) == 1}], 0, NULL) = 6550",
			       &ev),
			 0);
	assert_int_equal(ev.ret, 6550);
	assert_int_equal(rp_parser_in_flight(P), 0);
	/* a memory call split in two */
	assert_int_equal(parse("10 00:00:00.1 munmap(0x7f0000000000, 8192 <unfinished ...>", &ev),
			 0);
	assert_int_equal(parse("10 00:00:00.2 <... munmap resumed>) = 0", &ev), 0);
	assert_int_equal(ev.sys, RP_SYS_MUNMAP);
	assert_int_equal(ev.arg[1], 8192);
	/* a clone whose flags are known before it returns */
	assert_int_equal(parse("10 00:00:00.1 clone3({flags=CLONE_VM|CLONE_THREAD, "
			       "exit_signal=0} <unfinished ...>",
			       &ev),
			 0);
	assert_true(ev.started_flags & RP_CLONE_VM);
	assert_int_equal(
	    parse("10 00:00:00.2 <... clone3 resumed> => {parent_tid=[11]}, 88) = 11", &ev), 0);
	assert_int_equal(ev.sys, RP_SYS_CLONE3);
	assert_int_equal(ev.ret, 11);
	/* resumed without an unfinished call, or of another call */
	assert_int_equal(parse("99 00:00:00.2 <... munmap resumed>) = 0", &ev), -1);
	assert_int_equal(parse("98 00:00:00.1 brk(NULL <unfinished ...>", &ev), 0);
	assert_int_equal(parse("98 00:00:00.2 <... munmap resumed>) = 0", &ev), -1);
	/* the exit of a pid drops its unfinished call */
	assert_int_equal(parse("98 00:00:00.3 +++ killed by SIGKILL +++", &ev), 0);
	assert_int_equal(rp_parser_in_flight(P), 0);
}

static void test_signals_exits(void **state)
{
	struct rp_event ev;

	(void)state;
	assert_int_equal(
	    parse("6544  20:54:55.045116 --- SIGCHLD {si_signo=SIGCHLD, "
		  "si_code=CLD_EXITED, si_pid=6545, si_uid=0, si_status=0, si_utime=0, "
		  "si_stime=0} ---",
		  &ev),
	    0);
	assert_int_equal(ev.kind, RP_EV_SIGNAL);
	assert_int_equal(parse("5 00:00:00.1 --- stopped by SIGSTOP ---", &ev), 0);
	assert_int_equal(ev.kind, RP_EV_SIGNAL);
	assert_int_equal(parse("6545  20:54:55.045098 +++ exited with 0 +++", &ev), 0);
	assert_int_equal(ev.kind, RP_EV_EXIT);
	assert_int_equal(ev.status, 0);
	assert_int_equal(parse("[pid 7] 00:00:00.1 +++ exited with 3 +++", &ev), 0);
	assert_int_equal(ev.status, 3);
	assert_int_equal(parse("7 00:00:00.1 +++ killed by SIGSEGV (core dumped) +++", &ev), 0);
	assert_int_equal(ev.kind, RP_EV_EXIT);
	assert_int_equal(parse("7 00:00:00.1 +++ superseded by execve in pid 9 +++", &ev), 0);
	assert_int_equal(ev.kind, RP_EV_SUPERSEDED);
	assert_int_equal(ev.ret, 9);
	assert_int_equal(parse("strace: Process 1234 attached", &ev), 0);
	assert_int_equal(ev.kind, RP_EV_NONE);
	assert_int_equal(parse("", &ev), 0);
	assert_int_equal(
	    parse("12 00:00:00.1 munmap(0x1000, 4096) = ? ERESTARTSYS (To be restarted)", &ev), 0);
	assert_true(ev.failed);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
	    "12 00:00:00.1 munmap(0x1000, 4096",	       /* cut off */
	    "12 00:00:00.1 munmap(0x1000, 4096) =",	       /* no value */
	    "12 00:00:00.1 munmap(0x1000, 4096) = 0 trailing", /* junk after */
	    "12 00:00:00.1 munmap(0x1000) = 0",		       /* too few arguments */
	    "12 00:00:00.1 mprotect(0x1000, 4096, PROT_READ|) = 0",
	    "12 00:00:00.1 mmap(NULL, x, PROT_READ, MAP_PRIVATE, -1, 0) = 0x1000",
	    "12 00:00:00.1 +++ exited with +++",
	    "12 00:00:00.1 --- SIGCHLD {si_signo=SIGCHLD}",
	    "12 00:00:00.1 \"unbalanced(",
	    "[pid x] mmap()",
	    "12 00:00:00.1 clone(child_stack=NULL) = 5", /* clone without flags */
	    "12 00:00:00.1 execve(\"/bin/x\", [\"x\"], 0x1 /* 1 var */) = 0 <0.1",
	    "@@@@",
	};
	struct rp_event ev;
	char nul[] = "12 mmap(\0) = 0";

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("bad line %zu: %s\n", i, bad[i]);
		assert_int_equal(parse(bad[i], &ev), -1);
	}
	{
		const char *err = NULL;

		assert_int_equal(rp_parse_line(P, nul, sizeof(nul) - 1, &ev, &err), -1);
		assert_non_null(strstr(err, "NUL"));
	}
}

/* Numbers beyond 64 bits are refused, never wrapped (issue 14). */
static void test_overflow(void **state)
{
	static const char *const big[] = {
	    "12 00:00:00.1 munmap(0x7f0000000000, 100000000000000000000000000) = 0",
	    "12 00:00:00.1 munmap(0x7f0000000000, 18446744073709551616) = 0",
	    "12 00:00:00.1 munmap(0x10000000000000000, 4096) = 0",
	    "12 00:00:00.1 mprotect(0x1000, 4096, 0x100000000000000001|PROT_READ) = 0",
	    "12 00:00:00.1 brk(NULL) = 0x1000000000000000000000",
	    "12 00:00:00.1 brk(NULL) = -9223372036854775809",
	    "12 00:00:00.1 munmap(0xfffffffffffff000, 8192) = 0",     /* wraps */
	    "12 00:00:00.1 munmap(0x1000, 18446744073709551615) = 0", /* wraps */
	    "12 00:00:00.1 mmap(NULL, 8192, PROT_READ, MAP_SHARED, 3, 0) = 0xfffffffffffff000",
	    "12 00:00:00.1 mremap(0x1000, 4096, 18446744073709547521, MREMAP_MAYMOVE) = 0x2000",
	    "99999999999999999999 00:00:00.1 munmap(0x1000, 4096) = 0", /* pid */
	    "[pid 99999999999999999999] munmap(0x1000, 4096) = 0",
	    "12 00:00:00.1 +++ exited with 99999999999999999999 +++",
	    "12 00:00:00.1 +++ superseded by execve in pid 99999999999999999999 +++",
	};
	struct rp_event ev;

	(void)state;
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		const char *err = NULL;

		print_message("line %zu: %s\n", i, big[i]);
		assert_int_equal(rp_parse_line(P, big[i], strlen(big[i]), &ev, &err), -1);
		assert_non_null(strstr(err, "64 bits"));
	}
	/* the extremes that fit still parse */
	assert_int_equal(parse("12 00:00:00.1 mprotect(0x1000, 4096, 0xffffffffffffffff) = 0", &ev),
			 0);
	assert_int_equal(ev.arg[2], ~0ul);
	assert_int_equal(parse("12 00:00:00.1 munmap(0x1000, 18446744073709551615) = -1 EINVAL "
			       "(Invalid argument)",
			       &ev),
			 0);
	assert_true(ev.failed);
	assert_int_equal(parse("12 00:00:00.1 munmap(0xffffffffffffd000, 8192) = 0", &ev), 0);
	assert_int_equal(parse("12 00:00:00.1 brk(NULL) = -9223372036854775808", &ev), 0);
	assert_int_equal(ev.ret, -9223372036854775807L - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mmap_forms),	  cmocka_unit_test(test_other_memory_calls),
	    cmocka_unit_test(test_process_calls), cmocka_unit_test(test_unfinished_resumed),
	    cmocka_unit_test(test_signals_exits), cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_overflow),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
