// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/user/user.c - what both user-space backends share: argument and
 * state checks, CPU ids, auto-selection, the arch-ops vtable.
 */
#define _GNU_SOURCE
#include "user_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static _Thread_local unsigned int luf_user_tid;

void __luf_user_set_why(struct luf_user *u, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(u->why, sizeof(u->why), fmt, ap);
	va_end(ap);
}

const char *__luf_user_errname(int err, char *buf, size_t len)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
	    {EPERM, "EPERM"},	{ENOSYS, "ENOSYS"},	  {EINVAL, "EINVAL"},
	    {ENOMEM, "ENOMEM"}, {EAGAIN, "EAGAIN"},	  {EBUSY, "EBUSY"},
	    {EBADF, "EBADF"},	{EACCES, "EACCES"},	  {EOPNOTSUPP, "EOPNOTSUPP"},
	    {EFAULT, "EFAULT"}, {EOVERFLOW, "EOVERFLOW"},
	};

	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	snprintf(buf, len, "errno %d", err);
	return buf;
}

/*
 * The kernel's nr_cpu_ids: the highest id in /sys/devices/system/cpu/possible
 * ("0-3", "0,2-5", ...) plus one; sysconf(_SC_NPROCESSORS_CONF) if the file
 * cannot be read. Return: 0 or -EOVERFLOW (more than LUF_MAX_CPUS ids).
 */
static int luf_user_kernel_cpus(unsigned int *nr)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned long last = 0, v;
	long conf;
	int c, have = 0;

	if (f) {
		v = 0;
		while ((c = fgetc(f)) != EOF) {
			if (c >= '0' && c <= '9') {
				v = v * 10 + (unsigned long)(c - '0');
				have = 1;
				if (v > 1000000)
					break;
			} else {
				if (have)
					last = v;
				v = 0;
			}
		}
		if (have && c == EOF)
			last = v > last ? v : last;
		fclose(f);
	}
	if (!have) {
		conf = sysconf(_SC_NPROCESSORS_CONF);
		last = conf > 0 ? (unsigned long)conf - 1 : 0;
	}
	if (last + 1 > LUF_MAX_CPUS)
		return -EOVERFLOW;
	*nr = (unsigned int)(last + 1);
	return 0;
}

/* Argument checks shared by every open: nothing is written on failure. */
static int luf_user_check_open(const struct luf_user *u, const struct luf_user_config *cfg)
{
	static const char fn[] = "luf_user_*_open";

	if (!u) {
		__luf_fail(-EINVAL, fn, "@u is NULL");
		return -EINVAL; /* spelled out: the analyzer cannot see __luf_fail() */
	}
	if (u->state == LUF_USER_OPEN)
		return __luf_fail(-EBUSY, fn, "@u is open already: luf_user_close() it first");
	if (u->state != 0 && u->state != LUF_USER_CLOSED)
		return __luf_fail(-EINVAL, fn,
				  "@u is neither zeroed nor closed (garbage storage, or not a "
				  "struct luf_user)");
	if (!cfg)
		return 0;
	if (cfg->flags & ~LUF_USER_FLAGS_ALL)
		return __luf_fail(-EINVAL, fn, "@cfg->flags has bits outside LUF_USER_FLAGS_ALL");
	if (cfg->nr_ids > LUF_MAX_CPUS)
		return __luf_fail(-EINVAL, fn, "@cfg->nr_ids is above LUF_MAX_CPUS");
	if (cfg->rseq_max_cpus && (cfg->nr_ids || (cfg->flags & LUF_USER_SYNC_CORE)))
		return __luf_fail(-EINVAL, fn,
				  "@cfg->rseq_max_cpus needs kernel CPU ids (nr_ids 0) and no "
				  "LUF_USER_SYNC_CORE");
	return 0;
}

/* Fresh closed state with @cfg applied and CPU ids counted. */
static int luf_user_reset(struct luf_user *u, const struct luf_user_config *cfg)
{
	static const struct luf_user_config defaults;
	char buf[24]; /* "errno -2147483648" */
	int ret;

	if (!cfg)
		cfg = &defaults;
	memset(u, 0, sizeof(*u));
	u->state = LUF_USER_CLOSED;
	u->flags = cfg->flags;
	u->rseq_max_cpus = cfg->rseq_max_cpus;
	u->membarrier = cfg->membarrier;
	u->mb_supported = -ENOSYS;
	__luf_write_once(&u->flushes, 0);
	__luf_write_once(&u->calls, 0);
	if (cfg->nr_ids) {
		u->nr_cpus = cfg->nr_ids;
		u->thread_ids = true;
		return 0;
	}
	ret = luf_user_kernel_cpus(&u->nr_cpus);
	if (ret)
		__luf_user_set_why(u, "more than %u possible CPUs (%s)", LUF_MAX_CPUS,
				   __luf_user_errname(ret, buf, sizeof(buf)));
	return ret;
}

static int luf_user_open_one(struct luf_user *u, const struct luf_user_config *cfg,
			     enum luf_user_kind kind)
{
	int ret = luf_user_check_open(u, cfg);

	if (ret)
		return ret;
	ret = luf_user_reset(u, cfg);
	if (!ret)
		ret = kind == LUF_USER_MEMBARRIER ? __luf_user_membarrier_setup(u)
						  : __luf_user_mprotect_setup(u);
	if (ret) {
		if (kind == LUF_USER_MEMBARRIER)
			u->mb_err = ret;
		else
			u->mp_err = ret;
		return ret;
	}
	u->kind = kind;
	u->state = LUF_USER_OPEN;
	return 0;
}

int luf_user_membarrier_open(struct luf_user *u, const struct luf_user_config *cfg)
{
	int ret = luf_user_open_one(u, cfg, LUF_USER_MEMBARRIER);

	/* A bad argument was reported by the check; a refusal says why in u->why. */
	if (ret && u && u->mb_err == ret)
		__luf_fail(ret, __func__, u->why);
	return ret;
}

int luf_user_mprotect_open(struct luf_user *u, const struct luf_user_config *cfg)
{
	int ret = luf_user_open_one(u, cfg, LUF_USER_MPROTECT);

	if (ret && u && u->mp_err == ret)
		__luf_fail(ret, __func__, u->why);
	return ret;
}

int luf_user_backend_open(struct luf_user *u, const struct luf_user_config *cfg)
{
	char mb_why[LUF_USER_WHY_LEN], mp_why[LUF_USER_WHY_LEN], buf[24]; /* "errno -2147483648" */
	const char *name;
	int ret, mb_err;

	ret = luf_user_check_open(u, cfg);
	if (ret)
		return ret;
	mb_err = luf_user_open_one(u, cfg, LUF_USER_MEMBARRIER);
	if (!mb_err)
		return 0;
	memcpy(mb_why, u->why, sizeof(mb_why));
	ret = luf_user_open_one(u, cfg, LUF_USER_MPROTECT);
	if (!ret) {
		u->mb_err = mb_err;
		memcpy(mp_why, u->why, sizeof(mp_why));
		__luf_user_set_why(u, "%.*s; chosen because %.*s", 100, mp_why, 140, mb_why);
		return 0;
	}
	memcpy(mp_why, u->why, sizeof(mp_why));
	u->mb_err = mb_err;
	u->mp_err = ret;
	name = __luf_user_errname(mb_err, buf, sizeof(buf));
	__luf_user_set_why(u, "no sound backend (%s): %.*s; %.*s", name, 110, mb_why, 110, mp_why);
	return __luf_fail(mb_err, __func__, u->why);
}

int luf_user_close(struct luf_user *u)
{
	if (!u)
		return __luf_fail(-EINVAL, __func__, "@u is NULL");
	if (u->state != LUF_USER_OPEN)
		return __luf_fail(-EBADF, __func__,
				  "@u is not open (closed twice, or never opened)");
	if (u->kind == LUF_USER_MPROTECT)
		__luf_user_mprotect_teardown(u);
	u->state = LUF_USER_CLOSED;
	u->kind = LUF_USER_NONE;
	__luf_user_set_why(u, "closed");
	return 0;
}

int luf_user_flush(struct luf_user *u, const unsigned long *cpus, unsigned int nr_cpus)
{
	unsigned int tail;

	if (!u)
		return -EINVAL;
	if (u->state != LUF_USER_OPEN)
		return -EBADF;
	if (cpus) {
		/* A set wider than the machine: refuse before any system call. */
		if (nr_cpus > u->nr_cpus)
			return -EINVAL;
		tail = nr_cpus % LUF_BITS_PER_LONG;
		if (tail && (__luf_read_once(&cpus[nr_cpus / LUF_BITS_PER_LONG]) >> tail))
			return -EINVAL;
	}
	__luf_add_relaxed(&u->flushes, 1);
	if (u->kind == LUF_USER_MPROTECT)
		return __luf_user_mprotect_flush(u);
	return __luf_user_membarrier_flush(u, cpus, cpus ? nr_cpus : 0);
}

unsigned int luf_user_nr_cpu_ids(const struct luf_user *u)
{
	return u && u->state == LUF_USER_OPEN ? u->nr_cpus : 0;
}

unsigned int luf_user_this_cpu(const struct luf_user *u)
{
	int cpu;

	if (!u || !u->nr_cpus)
		return 0;
	if (u->thread_ids)
		return luf_user_tid < u->nr_cpus ? luf_user_tid : 0;
	cpu = sched_getcpu();
	return cpu >= 0 && (unsigned int)cpu < u->nr_cpus ? (unsigned int)cpu : 0;
}

int luf_user_set_thread_id(const struct luf_user *u, unsigned int id)
{
	if (!u || u->state != LUF_USER_OPEN)
		return __luf_fail(-EINVAL, __func__, "@u is not an open backend");
	if (!u->thread_ids)
		return __luf_fail(-EINVAL, __func__,
				  "@u was opened without caller ids (struct luf_user_config.nr_ids "
				  "0): ids come from sched_getcpu()");
	if (id >= u->nr_cpus)
		return __luf_fail(-EINVAL, __func__,
				  "@id is not below luf_user_nr_cpu_ids(@u): the thread would pass "
				  "for another CPU");
	luf_user_tid = id;
	return 0;
}

enum luf_user_kind luf_user_kind(const struct luf_user *u)
{
	return u && u->state == LUF_USER_OPEN ? u->kind : LUF_USER_NONE;
}

const char *luf_user_kind_name(enum luf_user_kind kind)
{
	switch (kind) {
	case LUF_USER_MEMBARRIER:
		return "membarrier";
	case LUF_USER_MPROTECT:
		return "mprotect";
	default:
		return "none";
	}
}

const char *luf_user_why(const struct luf_user *u)
{
	if (!u)
		return "no backend (NULL)";
	if (u->state != LUF_USER_OPEN && u->state != LUF_USER_CLOSED)
		return "never opened";
	return u->why;
}

unsigned long luf_user_calls(const struct luf_user *u)
{
	return u ? __luf_read_once(&u->calls) : 0;
}

unsigned long luf_user_flushes(const struct luf_user *u)
{
	return u ? __luf_read_once(&u->flushes) : 0;
}

static int luf_user_ops_flush(void *arch, const unsigned long *cpus, unsigned int nr_cpus,
			      const struct luf_range *r)
{
	(void)r; /* a barrier has no range: every flush covers everything */
	return luf_user_flush(arch, cpus, nr_cpus);
}

static int luf_user_ops_flush_all(void *arch)
{
	return luf_user_flush(arch, NULL, 0);
}

static unsigned int luf_user_ops_nr_cpu_ids(void *arch)
{
	return luf_user_nr_cpu_ids(arch);
}

static unsigned int luf_user_ops_this_cpu(void *arch)
{
	return luf_user_this_cpu(arch);
}

const struct luf_arch_ops luf_user_ops = {
    .flush = luf_user_ops_flush,
    .nr_cpu_ids = luf_user_ops_nr_cpu_ids,
    .this_cpu = luf_user_ops_this_cpu,
    .flush_all = luf_user_ops_flush_all,
    .mm_cpus = NULL,
};
