// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_parse.h - the strace line parser of luf-replay.
 *
 * Input: the text of `strace -f -tt -e trace=memory,process -o FILE cmd`
 * (or without -o: "[pid N] " prefixes on stderr; -t, -ttt, -T and a trace
 * without pids are accepted too). One line gives at most one event; an
 * "<unfinished ...>" line is kept per pid and joined with its
 * "<... NAME resumed>" line, so the call is reported once, complete, when
 * it returns. Memory: one stashed prefix per pid with a call in flight.
 */
#ifndef RP_PARSE_H
#define RP_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define RP_LINE_MAX 65536 /* longer lines are an error */

enum rp_ev_kind {
	RP_EV_NONE,	  /* nothing to do: a stashed "<unfinished ...>", a message */
	RP_EV_CALL,	  /* a completed system call */
	RP_EV_SIGNAL,	  /* "--- SIGxxx ... ---" */
	RP_EV_EXIT,	  /* "+++ exited with N +++" / "+++ killed by SIG +++" */
	RP_EV_SUPERSEDED, /* "+++ superseded by execve in pid N +++" */
};

enum rp_sys {
	RP_SYS_OTHER, /* any other call: checked for shape, then ignored */
	RP_SYS_MMAP,
	RP_SYS_MUNMAP,
	RP_SYS_MPROTECT,
	RP_SYS_PKEY_MPROTECT,
	RP_SYS_MADVISE,
	RP_SYS_MREMAP,
	RP_SYS_BRK,
	RP_SYS_CLONE,
	RP_SYS_CLONE3,
	RP_SYS_FORK,
	RP_SYS_VFORK,
	RP_SYS_EXECVE,
	RP_SYS_EXECVEAT,
	RP_SYS_EXIT,
	RP_SYS_EXIT_GROUP,
	RP_SYS_NR
};

/* Symbol values the model needs (Linux x86-64 UAPI numbers). */
#define RP_PROT_READ 0x1ul
#define RP_PROT_WRITE 0x2ul
#define RP_PROT_EXEC 0x4ul
#define RP_MAP_FIXED 0x10ul
#define RP_CLONE_VM 0x100ul
#define RP_CLONE_VFORK 0x4000ul
#define RP_CLONE_THREAD 0x10000ul
#define RP_MREMAP_MAYMOVE 0x1ul
#define RP_MREMAP_FIXED 0x2ul
#define RP_MREMAP_DONTUNMAP 0x4ul
#define RP_MADV_DONTNEED 4
#define RP_MADV_FREE 8
#define RP_MADV_REMOVE 9
#define RP_MADV_COLD 20
#define RP_MADV_PAGEOUT 21
#define RP_MADV_DONTNEED_LOCKED 24

struct rp_event {
	enum rp_ev_kind kind;
	enum rp_sys sys;
	long pid;		     /* -1: no pid on the line (the first task) */
	int nargs;		     /* numeric arguments parsed into arg[] */
	unsigned long arg[6];	     /* mmap: addr len prot flags; clone*: arg[0] = flags */
	long ret;		     /* the return value (mmap, brk: an address) */
	int failed;		     /* "= -1 ERRNO" or "= ? ..." without success */
	int unknown_ret;	     /* "= ?" (exit, exit_group, a killed call) */
	int status;		     /* RP_EV_EXIT: exit code, or 128 + signal */
	int started;		     /* RP_EV_NONE from "<unfinished ...>" of a clone-family call */
	unsigned long started_flags; /* its clone flags, if readable */
};

struct rp_parser;

/* A parser with no call in flight. NULL if out of memory. */
struct rp_parser *rp_parser_new(void);
void rp_parser_free(struct rp_parser *p);

/*
 * rp_parse_line() - parse one line (without its newline; @len bytes, NUL
 * bytes allowed and rejected) into @ev.
 * Return: 0 (see ev->kind), or -1 with a static "expected ..." message in
 * *@err: the line is malformed and changes nothing.
 */
int rp_parse_line(struct rp_parser *p, const char *line, size_t len, struct rp_event *ev,
		  const char **err);

/* Calls still "<unfinished ...>" (at the end of a trace: cut off). */
unsigned long rp_parser_in_flight(const struct rp_parser *p);

/* Flags and constants by name (PROT_*, MAP_*, CLONE_*, MADV_*, MREMAP_*, SIG*). */
int rp_sym_lookup(const char *name, size_t len, unsigned long *val);

/* The RP_SYS_* of a call name, RP_SYS_OTHER if not one the model uses. */
enum rp_sys rp_sys_lookup(const char *name, size_t len);
const char *rp_sys_name(enum rp_sys sys);

#endif /* RP_PARSE_H */
