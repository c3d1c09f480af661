// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/user/user_internal.h - what the user-space backends share inside
 * libluf_user: the state magics, the membarrier ABI values and the
 * per-backend set-up and flush entry points called by user.c.
 */
#ifndef LUF_USER_INTERNAL_H
#define LUF_USER_INTERNAL_H

#include <luf/luf_user.h>

/* struct luf_user.state: 0 = never opened (zeroed storage). */
#define LUF_USER_OPEN 0x4c75664fu   /* "LufO" */
#define LUF_USER_CLOSED 0x4c756643u /* "LufC" */

/*
 * membarrier(2) commands: the kernel's ABI values (linux/membarrier.h),
 * spelled out so the library builds against headers older than the
 * commands it can use at run time.
 */
enum {
	LUF_MB_QUERY = 0,
	LUF_MB_PRIVATE_EXPEDITED = 1 << 3,
	LUF_MB_REGISTER_PRIVATE_EXPEDITED = 1 << 4,
	LUF_MB_PRIVATE_EXPEDITED_SYNC_CORE = 1 << 5,
	LUF_MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE = 1 << 6,
	LUF_MB_PRIVATE_EXPEDITED_RSEQ = 1 << 7,
	LUF_MB_REGISTER_PRIVATE_EXPEDITED_RSEQ = 1 << 8,
	LUF_MB_FLAG_CPU = 1 << 0,
};

/*
 * Internal: shared between the files of libluf_user, hidden, and made
 * local when the files are linked into the archive's one object
 * (lib/user/CMakeLists.txt), so the archive exports only luf_user.h.
 */
#define __LUF_USER_INTERNAL __attribute__((visibility("hidden")))

/* Set u->why from a printf format (truncated to LUF_USER_WHY_LEN). */
__LUF_USER_INTERNAL void __luf_user_set_why(struct luf_user *u, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "EPERM" for 1, ...; a number for errnos without a name here. */
__LUF_USER_INTERNAL const char *__luf_user_errname(int err, char *buf, size_t len);

/*
 * Set-up of one backend on @u (arguments checked, u->flags, nr_cpus,
 * membarrier set): 0, or a negative errno with u->why set. Neither sets
 * u->state or u->kind: user.c does.
 */
__LUF_USER_INTERNAL int __luf_user_membarrier_setup(struct luf_user *u);
__LUF_USER_INTERNAL int __luf_user_mprotect_setup(struct luf_user *u);
__LUF_USER_INTERNAL void __luf_user_mprotect_teardown(struct luf_user *u);

/* One flush of an open backend of that kind, arguments checked. */
__LUF_USER_INTERNAL int __luf_user_membarrier_flush(struct luf_user *u, const unsigned long *cpus, unsigned int nr_cpus);
__LUF_USER_INTERNAL int __luf_user_mprotect_flush(struct luf_user *u);

#endif /* LUF_USER_INTERNAL_H */
