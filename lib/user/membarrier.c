// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/user/membarrier.c - the membarrier backend.
 *
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED sends an IPI to every CPU that is
 * running a thread of this process and waits for each to execute a full
 * memory barrier; a thread that is not running passes one at its next
 * context switch, which the kernel orders before the command returns
 * (membarrier(2); kernel/sched/membarrier.c). That is the guarantee a
 * shootdown gives the kernel: when the flush returns, no thread can act on
 * state it published before the flush started without that state being
 * visible to the caller. _SYNC_CORE adds a core-serialising instruction on
 * every such CPU before it returns to user space, which a JIT needs before
 * it runs code written into memory that other threads executed before.
 *
 * Per-CPU flushing (struct luf_user_config.rseq_max_cpus): one
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ call with MEMBARRIER_CMD_FLAG_CPU
 * per CPU of the set, each an IPI to that CPU only if it runs a thread of
 * this process (its handler runs a full barrier before restarting any
 * rseq critical section). It pays a system call per CPU, so it can only
 * win when few CPUs of many run the process; it is off by default.
 */
#define _GNU_SOURCE
#include "user_internal.h"

#include <sys/syscall.h>
#include <unistd.h>

static long luf_user_sys_membarrier(int cmd, unsigned int flags, int cpu_id)
{
#if defined(__NR_membarrier)
	return syscall(__NR_membarrier, cmd, flags, cpu_id);
#else
	(void)cmd, (void)flags, (void)cpu_id;
	errno = ENOSYS;
	return -1;
#endif
}

/* One membarrier call: 0 or -errno (-EIO if errno was not set). */
static int luf_user_mb(const struct luf_user *u, int cmd, unsigned int flags, int cpu_id)
{
	luf_user_membarrier_fn *fn = u->membarrier ? u->membarrier : luf_user_sys_membarrier;

	errno = 0;
	if (fn(cmd, flags, cpu_id) >= 0)
		return 0;
	return errno ? -errno : -EIO;
}

static const char *luf_user_mb_cause(int err)
{
	switch (-err) {
	case ENOSYS:
		return "absent (kernel without CONFIG_MEMBARRIER, or older than 4.3)";
	case EPERM:
		return "blocked (a seccomp filter or an LSM) or not registered";
	case EINVAL:
		return "command not supported by this kernel";
	default:
		return "failed";
	}
}

/* Query, check and register the commands u->flags need. */
static int luf_user_mb_register(struct luf_user *u)
{
	static const struct {
		int cmd, reg;
		const char *name;
	} cmds[] = {
	    {LUF_MB_PRIVATE_EXPEDITED, LUF_MB_REGISTER_PRIVATE_EXPEDITED, "PRIVATE_EXPEDITED"},
	    {LUF_MB_PRIVATE_EXPEDITED_SYNC_CORE, LUF_MB_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE,
	     "PRIVATE_EXPEDITED_SYNC_CORE"},
	    {LUF_MB_PRIVATE_EXPEDITED_RSEQ, LUF_MB_REGISTER_PRIVATE_EXPEDITED_RSEQ,
	     "PRIVATE_EXPEDITED_RSEQ"},
	};
	luf_user_membarrier_fn *fn = u->membarrier ? u->membarrier : luf_user_sys_membarrier;
	char buf[24]; /* "errno -2147483648" */
	long q;
	int ret;

	errno = 0;
	q = fn(LUF_MB_QUERY, 0, 0);
	if (q < 0) {
		ret = errno ? -errno : -EIO;
		u->mb_supported = ret;
		__luf_user_set_why(u, "membarrier: %s: MEMBARRIER_CMD_QUERY (-%s)",
				 luf_user_mb_cause(ret), __luf_user_errname(ret, buf, sizeof(buf)));
		return ret;
	}
	u->mb_supported = q;
	for (unsigned int i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (i == 1 && !(u->flags & LUF_USER_SYNC_CORE))
			continue;
		if (i == 2 && !u->rseq_max_cpus)
			continue;
		if ((q & (cmds[i].cmd | cmds[i].reg)) != (cmds[i].cmd | cmds[i].reg)) {
			__luf_user_set_why(
			    u,
			    "membarrier: kernel lacks MEMBARRIER_CMD_%s (commands %#lx) "
			    "(-EINVAL)",
			    cmds[i].name, q);
			return -EINVAL;
		}
		ret = luf_user_mb(u, cmds[i].reg, 0, 0);
		if (ret) {
			__luf_user_set_why(u, "membarrier: %s: MEMBARRIER_CMD_REGISTER_%s (-%s)",
					 luf_user_mb_cause(ret), cmds[i].name,
					 __luf_user_errname(ret, buf, sizeof(buf)));
			return ret;
		}
	}
	return 0;
}

int __luf_user_membarrier_setup(struct luf_user *u)
{
	bool sync = u->flags & LUF_USER_SYNC_CORE;
	char buf[24]; /* "errno -2147483648" */
	int ret, cpu;

	u->mb_cmd = sync ? LUF_MB_PRIVATE_EXPEDITED_SYNC_CORE : LUF_MB_PRIVATE_EXPEDITED;
	ret = luf_user_mb_register(u);
	if (ret)
		return ret;
	if (!(u->flags & LUF_USER_NO_TRIAL)) {
		/* A filter may pass QUERY and REGISTER yet block the command itself. */
		ret = luf_user_mb(u, u->mb_cmd, 0, 0);
		if (!ret && u->rseq_max_cpus) {
			cpu = sched_getcpu();
			ret = luf_user_mb(u, LUF_MB_PRIVATE_EXPEDITED_RSEQ, LUF_MB_FLAG_CPU,
					  cpu < 0 ? 0 : cpu);
		}
		if (ret) {
			__luf_user_set_why(u, "membarrier: %s: trial flush (-%s)",
					 luf_user_mb_cause(ret),
					 __luf_user_errname(ret, buf, sizeof(buf)));
			return ret;
		}
	}
	if (u->rseq_max_cpus)
		__luf_user_set_why(
		    u,
		    "membarrier: PRIVATE_EXPEDITED, per-CPU PRIVATE_EXPEDITED_RSEQ for "
		    "sets of <= %u other CPUs (kernel commands %#lx)",
		    u->rseq_max_cpus, u->mb_supported);
	else
		__luf_user_set_why(u, "membarrier: %s (kernel commands %#lx)",
				 sync ? "PRIVATE_EXPEDITED_SYNC_CORE" : "PRIVATE_EXPEDITED",
				 u->mb_supported);
	return 0;
}

/*
 * Per-CPU flush of @cpus less the caller's CPU (the caller's own barrier
 * is the system call, or the fence below). Sound under the condition
 * rseq_max_cpus documents, that every thread the flush must reach stays on
 * a CPU of the set: a thread whose CPU is the caller's is not running now,
 * its last run ended with a context switch (a full barrier), and its next
 * run can only start after the caller leaves that CPU, by another one.
 */
static int luf_user_mb_flush_cpus(struct luf_user *u, const unsigned long *cpus, unsigned int nr,
				  int self)
{
	unsigned int cpu;
	int ret;

	luf_for_each_cpu (cpu, cpus, nr) {
		if ((int)cpu == self)
			continue;
		__luf_add_relaxed(&u->calls, 1);
		ret = luf_user_mb(u, LUF_MB_PRIVATE_EXPEDITED_RSEQ, LUF_MB_FLAG_CPU, (int)cpu);
		if (ret)
			return ret;
	}
	__luf_smp_mb();
	return 0;
}

int __luf_user_membarrier_flush(struct luf_user *u, const unsigned long *cpus, unsigned int nr)
{
	int self;

	if (u->rseq_max_cpus && cpus) {
		self = sched_getcpu();
		if (luf_cpumask_weight(cpus, nr) -
			(self >= 0 && luf_cpumask_test_cpu(cpus, nr, (unsigned int)self)) <=
		    u->rseq_max_cpus)
			return luf_user_mb_flush_cpus(u, cpus, nr, self);
	}
	__luf_add_relaxed(&u->calls, 1);
	return luf_user_mb(u, u->mb_cmd, 0, 0);
}
