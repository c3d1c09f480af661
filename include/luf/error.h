/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/error.h - why a set-up or tear-down call failed.
 *
 * The init and fini functions return a negative errno, and the same errno
 * covers several checks (-EINVAL: a NULL argument, misaligned storage, an
 * object that is not live, a count out of range, ...). Each failed check
 * also names itself, in one line: the function, the parameter and the
 * rule it broke, e.g.
 *
 *   luf_init: @l is not aligned to LUF_CACHELINE (64 bytes) (-EINVAL)
 *
 * In user space (libluf) the line is kept per thread for
 * luf_last_error() and passed to the hook set by luf_set_error_hook().
 * In a kernel, platform/kernel.h defines __luf_fail() as one
 * pr_warn_ratelimited() line ("luf: luf_init: @l is not aligned ...")
 * and this header is neither included nor vendored, as platform/user.h.
 *
 * Only set-up and tear-down report this way: the fast paths (static
 * inline in their headers) and the flush paths return their errno alone,
 * and a successful call leaves the record as it was (as errno is). One
 * warning goes the same way: <luf/luf_proc.h> reports a read section that
 * has stalled reuse for over a second (@fn "luf_proc", -EAGAIN) from the
 * luf_reuse() or luf_call() that noticed it, whatever that call returns.
 */
#ifndef LUF_ERROR_H
#define LUF_ERROR_H

#if defined(__KERNEL__)
#error "luf/error.h is user space only: a kernel logs set-up failures (luf/platform/kernel.h)"
#endif

#include "platform.h"

LUF_BEGIN_DECLS

/**
 * typedef luf_error_hook_fn - receives every set-up failure of the process
 * @err: the negative errno the failing call returns
 * @fn: the failing function's name, e.g. "luf_init"
 * @what: the failed check, e.g. "@l is NULL"
 * @arg: the argument given to luf_set_error_hook()
 *
 * "Set-up failure" is every failure a call names with a message: bad
 * arguments and states, and refusals of the high-level API such as
 * -EDEADLK (luf_synchronize() inside a read section) or -EUSERS (a
 * domain full of threads); -EAGAIN from luf_reuse() (nothing reusable
 * yet) is not a failure and is neither recorded nor reported.
 * Called on the failing thread, after luf_last_error() was updated and
 * before the failing call returns; @fn and @what are valid for the call
 * only (copy them to keep them). It may call luf_last_error(); a set-up failure inside the hook is recorded
 * but does not call the hook again.
 */
typedef void luf_error_hook_fn(int err, const char *fn, const char *what, void *arg);

/**
 * luf_last_error() - the calling thread's most recent set-up failure
 *
 * One line: the function, the failed check and the errno it returned,
 * e.g. "luf_keytab_init: @l is not a live struct luf: luf_init() it first
 * (-EINVAL)". A successful call does not clear it (as with errno): read
 * it right after a call that returned an error, or luf_clear_error()
 * before the call.
 *
 * Context: any thread; each thread has its own record.
 * Return: the line, or "" if this thread has had no failure since it
 * started or since luf_clear_error(). Valid until this thread's next
 * failure or luf_clear_error(); never NULL.
 */
const char *luf_last_error(void);

/**
 * luf_clear_error() - forget the calling thread's last set-up failure
 *
 * luf_last_error() returns "" until the thread's next failure.
 * Context: any thread; other threads' records stay as they are.
 */
void luf_clear_error(void);

/**
 * luf_set_error_hook() - call @fn on every set-up failure of the process
 * @fn: the hook (luf_error_hook_fn), or NULL for none
 * @arg: passed to @fn as its last argument
 *
 * One hook per process; a new one replaces the old. The pair is published
 * together: a failure never sees the new @fn with the old @arg. But a
 * failure racing with this call on another thread may still call the old
 * hook after this call returned (it read the pair just before): keep what
 * the old @arg points to alive until no set-up can be running, or set the
 * hook once, before the threads start.
 *
 * Context: any thread; does not block.
 */
void luf_set_error_hook(luf_error_hook_fn *fn, void *arg);

/**
 * __luf_fail() - record a failed set-up check and return its errno
 * @err: the negative errno the caller returns
 * @fn: the failing function, __func__
 * @what: the failed check: the parameter and the rule, a string constant
 *	(copied, so a buffer of the caller's works too)
 *
 * Internal (luf's own init and fini functions and backends): a check
 * reads "return __luf_fail(-EINVAL, __func__, "@l is NULL");". User space
 * keeps the line for luf_last_error() and calls the hook; the kernel's
 * platform/kernel.h defines it as a pr_warn_ratelimited() line.
 *
 * Return: @err.
 */
int __luf_fail(int err, const char *fn, const char *what);

LUF_END_DECLS

#endif /* LUF_ERROR_H */
