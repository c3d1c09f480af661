// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_syms.c - the flag and constant names strace prints for
 * the calls luf-replay models, with their Linux x86-64 UAPI values
 * (sys/mman.h, sched.h, asm-generic/mman-common.h). Unknown names in a
 * flags argument are not an error (strace knows more than we need); they
 * count as 0.
 */
#include <stdlib.h>
#include <string.h>

#include "rp_parse.h"

struct rp_sym {
	const char *name;
	unsigned long val;
};

/* Sorted by name (strcmp order): checked at first use. */
static const struct rp_sym syms[] = {
    {"CLONE_CHILD_CLEARTID", 0x200000},
    {"CLONE_CHILD_SETTID", 0x1000000},
    {"CLONE_CLEAR_SIGHAND", 0x100000000ul},
    {"CLONE_FILES", 0x400},
    {"CLONE_FS", 0x200},
    {"CLONE_INTO_CGROUP", 0x200000000ul},
    {"CLONE_IO", 0x80000000ul},
    {"CLONE_NEWCGROUP", 0x2000000},
    {"CLONE_NEWIPC", 0x8000000},
    {"CLONE_NEWNET", 0x40000000},
    {"CLONE_NEWNS", 0x20000},
    {"CLONE_NEWPID", 0x20000000},
    {"CLONE_NEWUSER", 0x10000000},
    {"CLONE_NEWUTS", 0x4000000},
    {"CLONE_PARENT", 0x8000},
    {"CLONE_PARENT_SETTID", 0x100000},
    {"CLONE_PIDFD", 0x1000},
    {"CLONE_PTRACE", 0x2000},
    {"CLONE_SETTLS", 0x80000},
    {"CLONE_SIGHAND", 0x800},
    {"CLONE_SYSVSEM", 0x40000},
    {"CLONE_THREAD", 0x10000},
    {"CLONE_UNTRACED", 0x800000},
    {"CLONE_VFORK", 0x4000},
    {"CLONE_VM", 0x100},
    {"MADV_COLD", 20},
    {"MADV_COLLAPSE", 25},
    {"MADV_DODUMP", 17},
    {"MADV_DOFORK", 11},
    {"MADV_DONTDUMP", 16},
    {"MADV_DONTFORK", 10},
    {"MADV_DONTNEED", 4},
    {"MADV_DONTNEED_LOCKED", 24},
    {"MADV_FREE", 8},
    {"MADV_HUGEPAGE", 14},
    {"MADV_HWPOISON", 100},
    {"MADV_KEEPONFORK", 19},
    {"MADV_MERGEABLE", 12},
    {"MADV_NOHUGEPAGE", 15},
    {"MADV_NORMAL", 0},
    {"MADV_PAGEOUT", 21},
    {"MADV_POPULATE_READ", 22},
    {"MADV_POPULATE_WRITE", 23},
    {"MADV_RANDOM", 1},
    {"MADV_REMOVE", 9},
    {"MADV_SEQUENTIAL", 2},
    {"MADV_SOFT_OFFLINE", 101},
    {"MADV_UNMERGEABLE", 13},
    {"MADV_WILLNEED", 3},
    {"MADV_WIPEONFORK", 18},
    {"MAP_32BIT", 0x40},
    {"MAP_ANON", 0x20},
    {"MAP_ANONYMOUS", 0x20},
    {"MAP_DENYWRITE", 0x800},
    {"MAP_EXECUTABLE", 0x1000},
    {"MAP_FILE", 0},
    {"MAP_FIXED", 0x10},
    {"MAP_FIXED_NOREPLACE", 0x100000},
    {"MAP_GROWSDOWN", 0x100},
    {"MAP_HUGETLB", 0x40000},
    {"MAP_HUGE_1GB", 30ul << 26},
    {"MAP_HUGE_2MB", 21ul << 26},
    {"MAP_LOCKED", 0x2000},
    {"MAP_NONBLOCK", 0x10000},
    {"MAP_NORESERVE", 0x4000},
    {"MAP_POPULATE", 0x8000},
    {"MAP_PRIVATE", 0x2},
    {"MAP_SHARED", 0x1},
    {"MAP_SHARED_VALIDATE", 0x3},
    {"MAP_STACK", 0x20000},
    {"MAP_SYNC", 0x80000},
    {"MAP_UNINITIALIZED", 0x4000000},
    {"MREMAP_DONTUNMAP", 4},
    {"MREMAP_FIXED", 2},
    {"MREMAP_MAYMOVE", 1},
    {"NULL", 0},
    {"PROT_EXEC", 0x4},
    {"PROT_GROWSDOWN", 0x01000000},
    {"PROT_GROWSUP", 0x02000000},
    {"PROT_NONE", 0},
    {"PROT_READ", 0x1},
    {"PROT_SEM", 0x8},
    {"PROT_WRITE", 0x2},
};

static int sym_cmp(const void *key, const void *elt)
{
	return strcmp((const char *)key, ((const struct rp_sym *)elt)->name);
}

int rp_sym_lookup(const char *name, size_t len, unsigned long *val)
{
	char buf[40];
	const struct rp_sym *s;

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, name, len);
	buf[len] = '\0';
	s = bsearch(buf, syms, sizeof(syms) / sizeof(syms[0]), sizeof(syms[0]), sym_cmp);
	if (!s)
		return -1;
	*val = s->val;
	return 0;
}

static const char *const sys_names[RP_SYS_NR] = {
    [RP_SYS_OTHER] = "other",
    [RP_SYS_MMAP] = "mmap",
    [RP_SYS_MUNMAP] = "munmap",
    [RP_SYS_MPROTECT] = "mprotect",
    [RP_SYS_PKEY_MPROTECT] = "pkey_mprotect",
    [RP_SYS_MADVISE] = "madvise",
    [RP_SYS_MREMAP] = "mremap",
    [RP_SYS_BRK] = "brk",
    [RP_SYS_CLONE] = "clone",
    [RP_SYS_CLONE3] = "clone3",
    [RP_SYS_FORK] = "fork",
    [RP_SYS_VFORK] = "vfork",
    [RP_SYS_EXECVE] = "execve",
    [RP_SYS_EXECVEAT] = "execveat",
    [RP_SYS_EXIT] = "exit",
    [RP_SYS_EXIT_GROUP] = "exit_group",
};

enum rp_sys rp_sys_lookup(const char *name, size_t len)
{
	for (int s = 1; s < RP_SYS_NR; s++)
		if (strlen(sys_names[s]) == len && !memcmp(sys_names[s], name, len))
			return (enum rp_sys)s;
	if (len == 5 && !memcmp(name, "mmap2", 5))
		return RP_SYS_MMAP;
	return RP_SYS_OTHER;
}

const char *rp_sys_name(enum rp_sys sys)
{
	return (unsigned int)sys < RP_SYS_NR ? sys_names[sys] : "?";
}
