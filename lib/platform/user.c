// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The user-space side of luf/error.h: each thread's last set-up failure
 * and the process's error hook. libluf only: a kernel gets __luf_fail()
 * from luf/platform/kernel.h (a log line), so this file is not vendored
 * (lib/kernel/patches/refresh copies lib/<concept>.c only).
 */
#include <luf/luf.h>

#include <stdio.h>

_Static_assert(LUF_CACHELINE == 64, "__LUF_CACHELINE_TEXT in platform/user.h says 64 bytes");

/* Longest line luf_last_error() returns, with its NUL; longer ones are cut. */
#define LUF_ERROR_LEN 256

/* This thread's last failure as one line ("" if none) and whether its hook is running. */
static _Thread_local char luf_error_line[LUF_ERROR_LEN];
static _Thread_local bool luf_error_in_hook;

/*
 * The hook and its argument, published together under a sequence count:
 * odd while luf_set_error_hook() writes them. Writers take the count from
 * even to odd with a compare-and-swap, so two setters do not interleave.
 */
static unsigned long luf_hook_seq;
static luf_error_hook_fn *luf_hook_fn;
static void *luf_hook_arg;

/* Names of the errnos luf and its backends return; others print as numbers. */
static const struct {
	int err;
	const char *name;
} luf_errnos[] = {
    {EINVAL, "EINVAL"},	      {EBUSY, "EBUSY"},		  {ENOMEM, "ENOMEM"},
    {EAGAIN, "EAGAIN"},	      {ENOSPC, "ENOSPC"},	  {EPERM, "EPERM"},
    {EACCES, "EACCES"},	      {ENOSYS, "ENOSYS"},	  {EBADF, "EBADF"},
    {EOVERFLOW, "EOVERFLOW"}, {EOPNOTSUPP, "EOPNOTSUPP"}, {EIO, "EIO"},
    {EUSERS, "EUSERS"},	      {ENODEV, "ENODEV"},	  {ENOENT, "ENOENT"},
    {EEXIST, "EEXIST"},	      {ERANGE, "ERANGE"},	  {EFAULT, "EFAULT"},
    {EINTR, "EINTR"},	      {EDEADLK, "EDEADLK"},	  {ETIMEDOUT, "ETIMEDOUT"},
};

static const char *luf_errno_name(int err)
{
	for (size_t i = 0; i < sizeof(luf_errnos) / sizeof(luf_errnos[0]); i++)
		if (luf_errnos[i].err == err)
			return luf_errnos[i].name;
	return NULL;
}

/* Read the hook pair as one (a seqcount reader). */
static luf_error_hook_fn *luf_hook_read(void **arg)
{
	luf_error_hook_fn *fn;
	unsigned long seq;
	unsigned int spins = 0;

	for (;;) {
		seq = __atomic_load_n(&luf_hook_seq, __ATOMIC_ACQUIRE);
		if (!(seq & 1)) {
			fn = __atomic_load_n(&luf_hook_fn, __ATOMIC_RELAXED);
			*arg = __atomic_load_n(&luf_hook_arg, __ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&luf_hook_seq, __ATOMIC_RELAXED) == seq)
				return fn;
		}
		__luf_spin_wait(&spins);
	}
}

int __luf_fail(int err, const char *fn, const char *what)
{
	const char *name = luf_errno_name(-err);
	luf_error_hook_fn *hook;
	void *arg;

	if (!fn)
		fn = "luf";
	if (!what)
		what = "failed";
	if (name)
		snprintf(luf_error_line, sizeof(luf_error_line), "%s: %s (-%s)", fn, what, name);
	else
		snprintf(luf_error_line, sizeof(luf_error_line), "%s: %s (%d)", fn, what, err);
	if (luf_error_in_hook)
		return err;
	hook = luf_hook_read(&arg);
	if (hook) {
		luf_error_in_hook = true;
		hook(err, fn, what, arg);
		luf_error_in_hook = false;
	}
	return err;
}

const char *luf_last_error(void)
{
	return luf_error_line;
}

void luf_clear_error(void)
{
	luf_error_line[0] = '\0';
}

void luf_set_error_hook(luf_error_hook_fn *fn, void *arg)
{
	unsigned long seq = __atomic_load_n(&luf_hook_seq, __ATOMIC_RELAXED);
	unsigned int spins = 0;

	/* Take the count from even to odd: readers retry until it is even again. */
	for (;;) {
		if (!(seq & 1) && __atomic_compare_exchange_n(&luf_hook_seq, &seq, seq + 1, true,
							      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
		__luf_spin_wait(&spins);
		seq = __atomic_load_n(&luf_hook_seq, __ATOMIC_RELAXED);
	}
	/* The odd count before the pair (pairs with the reader's acquire fence). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&luf_hook_fn, fn, __ATOMIC_RELAXED);
	__atomic_store_n(&luf_hook_arg, arg, __ATOMIC_RELAXED);
	/* The pair before the even count (pairs with the reader's first, acquire, load). */
	__atomic_store_n(&luf_hook_seq, seq + 2, __ATOMIC_RELEASE);
}
