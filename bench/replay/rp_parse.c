// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_parse.c - one strace line into one event.
 *
 * Line shapes (after an optional pid, "1234 " or "[pid  1234] ", and an
 * optional timestamp, "20:54:55.020248 " or "1700000000.123456 "):
 *   name(args) = ret [ERRNO (text)] [<0.000012>]
 *   name(args <unfinished ...>             kept until its resumption
 *   <... name resumed>args) = ret          joined with the kept prefix
 *   --- SIGCHLD {...} ---                  signal delivery
 *   +++ exited with 0 +++ | +++ killed by SIGKILL [(core dumped)] +++
 *   +++ superseded by execve in pid 1234 +++
 *   strace: ... | [ Process PID=... ]      messages, ignored
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rp_lex.h"
#include "rp_parse.h"

#define RP_MAX_IN_FLIGHT 65536u

struct rp_stash {
	long pid;
	char *text; /* "name(args so far", without " <unfinished ...>" */
	size_t len;
};

struct rp_parser {
	struct rp_stash *st;
	size_t n, cap;
	char *join; /* 2 * RP_LINE_MAX: a stashed prefix + its resumption */
};

struct rp_parser *rp_parser_new(void)
{
	struct rp_parser *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->join = malloc(2 * RP_LINE_MAX + 1);
	if (!p->join) {
		free(p);
		return NULL;
	}
	return p;
}

void rp_parser_free(struct rp_parser *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->st[i].text);
	free(p->st);
	free(p->join);
	free(p);
}

unsigned long rp_parser_in_flight(const struct rp_parser *p)
{
	return p->n;
}

static long stash_find(const struct rp_parser *p, long pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->st[i].pid == pid)
			return (long)i;
	return -1;
}

static void stash_drop(struct rp_parser *p, long pid)
{
	long i = stash_find(p, pid);

	if (i < 0)
		return;
	free(p->st[i].text);
	p->st[i] = p->st[--p->n];
}

static int stash_put(struct rp_parser *p, long pid, const char *s, size_t len)
{
	char *t;

	stash_drop(p, pid); /* a second unfinished call replaces a lost one */
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct rp_stash *st;

		if (p->n >= RP_MAX_IN_FLIGHT)
			return -1;
		st = realloc(p->st, cap * sizeof(*st));
		if (!st)
			return -1;
		p->st = st;
		p->cap = cap;
	}
	t = malloc(len + 1);
	if (!t)
		return -1;
	memcpy(t, s, len);
	t[len] = '\0';
	p->st[p->n++] = (struct rp_stash){pid, t, len};
	return 0;
}

/*
 * A value or flags expression: NULL, numbers and symbols joined by '|',
 * each optionally followed by a comment ("0x20 /" "* MAP_??? *" "/").
 * Unknown symbols count as 0. Return: 0 and *out, or -1. A number too
 * large sets *@big (the caller refuses the line).
 */
static int parse_value(const char *s, const char *e, unsigned long *out, bool *big)
{
	unsigned long v = 0, t;

	s = skip_sp(s, e);
	e = trim_end(s, e);
	if (s == e)
		return -1;
	for (;;) {
		const char *q = s;

		if (is_digit(*s) || *s == '-') {
			q = parse_num(s, e, &t, big);
			if (!q)
				return -1;
		} else { /* a symbol: upper case, digits and '_' */
			while (q < e && ((*q >= 'A' && *q <= 'Z') || is_digit(*q) || *q == '_'))
				q++;
			if (q == s || is_digit(*s))
				return -1;
			if (rp_sym_lookup(s, (size_t)(q - s), &t))
				t = 0;
		}
		v |= t;
		q = skip_sp(q, e);
		if (q + 1 < e && q[0] == '/' && q[1] == '*') {
			const char *c = q + 2;

			while (c + 1 < e && !(c[0] == '*' && c[1] == '/'))
				c++;
			if (c + 1 >= e)
				return -1;
			q = skip_sp(c + 2, e);
		}
		if (q == e)
			break;
		if (*q != '|')
			return -1;
		s = skip_sp(q + 1, e);
		if (s == e)
			return -1;
	}
	*out = v;
	return 0;
}

/*
 * Scan from @s (just after the call's '(') to the ')' that closes it,
 * outside strings, brackets and braces; store the top-level argument
 * bounds (at most @max). Return: the ')' or NULL (unbalanced, or the line
 * ended inside the arguments).
 */
static const char *scan_args(const char *s, const char *e, const char **as, const char **ae,
			     int max, int *nargs)
{
	int depth = 0, n = 0;
	const char *start = s;

	for (; s < e; s++) {
		char c = *s;

		if (c == '"') {
			for (s++; s < e && *s != '"'; s++)
				if (*s == '\\')
					s++;
			if (s >= e)
				return NULL;
		} else if (c == '(' || c == '[' || c == '{') {
			depth++;
		} else if (c == ']' || c == '}') {
			if (--depth < 0)
				return NULL;
		} else if (c == ')') {
			if (depth == 0)
				break;
			depth--;
		} else if (c == ',' && depth == 0) {
			if (n < max) {
				as[n] = start;
				ae[n] = s;
			}
			n++;
			start = s + 1;
		}
	}
	if (s >= e)
		return NULL;
	if (s > start || n) {
		if (n < max) {
			as[n] = start;
			ae[n] = s;
		}
		n++;
	}
	*nargs = n;
	return s;
}

/* "flags=" inside @s..@e at brace depth @want (clone: 0; clone3: 1). */
static int find_flags(const char *s, const char *e, int want, unsigned long *out, bool *big)
{
	int depth = 0;

	for (const char *q = s; q < e; q++) {
		if (*q == '{' || *q == '[')
			depth++;
		else if (*q == '}' || *q == ']')
			depth--;
		else if (depth == want && *q == 'f' && starts_with(q, e, "flags=") &&
			 (q == s || !is_name(q[-1]))) {
			const char *v = q + 6, *ve = v;

			while (ve < e && *ve != ',' && *ve != '}' && *ve != ')')
				ve++;
			return parse_value(v, ve, out, big);
		}
	}
	return -1;
}

/* How many numeric arguments each call needs, and in which positions. */
static int nums_wanted(enum rp_sys sys)
{
	switch (sys) {
	case RP_SYS_MMAP:
		return 4;
	case RP_SYS_MUNMAP:
		return 2;
	case RP_SYS_MPROTECT:
	case RP_SYS_MADVISE:
		return 3;
	case RP_SYS_PKEY_MPROTECT:
	case RP_SYS_MREMAP:
		return 4;
	case RP_SYS_BRK:
		return 1;
	default:
		return 0;
	}
}

static int clone_flags(enum rp_sys sys, const char **as, const char **ae, int nargs,
		       unsigned long *out, bool *big)
{
	*out = 0;
	if (sys == RP_SYS_VFORK)
		*out = RP_CLONE_VM | RP_CLONE_VFORK;
	else if (sys == RP_SYS_CLONE3)
		return nargs >= 1 ? find_flags(as[0], ae[0], 1, out, big) : -1;
	else if (sys == RP_SYS_CLONE)
		for (int i = 0; i < nargs && i < 6; i++)
			if (!find_flags(as[i], ae[i], 0, out, big))
				return 0;
	return sys == RP_SYS_CLONE ? -1 : 0;
}

/* The part after ')': " = ret [ERRNO (text)] [<time>]". */
static int parse_ret(const char *s, const char *e, struct rp_event *ev, const char **err)
{
	unsigned long v;
	bool big = false;

	s = skip_sp(s, e);
	if (s == e || *s != '=') {
		*err = "expected ' = ' and a return value after ')'";
		return -1;
	}
	s = skip_sp(s + 1, e);
	if (s < e && *s == '?') {
		ev->unknown_ret = 1;
		s++;
	} else {
		const char *q = parse_num(s, e, &v, &big);

		if (!q) {
			*err = "expected a return value (a number, 0x... or '?')";
			return -1;
		}
		if (big) {
			*err = "expected a return value that fits in " RP_NUM_BITS;
			return -1;
		}
		ev->ret = (long)v;
		s = q;
	}
	s = skip_sp(s, e);
	if (s < e && *s >= 'A' && *s <= 'Z') { /* ERRNO (text) or a name like ERESTARTSYS */
		while (s < e && is_name(*s))
			s++;
		s = skip_sp(s, e);
		if (s < e && *s == '(') {
			int depth = 0;

			for (; s < e; s++) {
				if (*s == '(')
					depth++;
				else if (*s == ')' && --depth == 0)
					break;
			}
			if (s == e) {
				*err = "expected ')' closing the error text";
				return -1;
			}
			s = skip_sp(s + 1, e);
		}
		if (ev->unknown_ret || ev->ret == -1)
			ev->failed = 1;
	} else if (!ev->unknown_ret && ev->ret < 0 && ev->ret > -4096 && ev->sys != RP_SYS_MMAP &&
		   ev->sys != RP_SYS_MREMAP && ev->sys != RP_SYS_BRK) {
		ev->failed = 1; /* a raw -errno, as with strace -e raw=all */
	}
	if (s < e && *s == '<') { /* -T time, or <unavailable> */
		const char *c = memchr(s, '>', (size_t)(e - s));

		if (!c) {
			*err = "expected '>' closing the call time";
			return -1;
		}
		s = skip_sp(c + 1, e);
	}
	if (s != e) {
		*err = "expected the end of the line after the return value";
		return -1;
	}
	if (ev->unknown_ret && ev->sys != RP_SYS_EXIT && ev->sys != RP_SYS_EXIT_GROUP &&
	    ev->sys != RP_SYS_EXECVE && ev->sys != RP_SYS_EXECVEAT)
		ev->failed = 1; /* "= ?": the call's result is unknown, do not apply it */
	return 0;
}

/* [@start, @start + @len rounded up to pages) does not wrap past the top. */
static bool range_fits(unsigned long start, unsigned long len)
{
	const unsigned long page = 4096; /* RP_PAGE of the model */
	unsigned long plen;

	if (len > ULONG_MAX - (page - 1))
		return false;
	plen = (len + page - 1) & ~(page - 1);
	return start <= ULONG_MAX - plen;
}

/*
 * The ranges a successful call covers fit in the address space: the kernel
 * refuses a range that wraps (EINVAL), so one that "succeeded" is not a
 * trace strace wrote, and the model must never see its end wrap to 0.
 */
static bool ranges_fit(const struct rp_event *ev)
{
	unsigned long ret = (unsigned long)ev->ret;

	switch (ev->sys) {
	case RP_SYS_MMAP:
		return range_fits(ret, ev->arg[1]);
	case RP_SYS_MUNMAP:
	case RP_SYS_MPROTECT:
	case RP_SYS_PKEY_MPROTECT:
	case RP_SYS_MADVISE:
		return range_fits(ev->arg[0], ev->arg[1]);
	case RP_SYS_MREMAP:
		return range_fits(ev->arg[0], ev->arg[1]) && range_fits(ret, ev->arg[2]);
	case RP_SYS_BRK:
		return range_fits(0, ret); /* the break, rounded up to a page */
	default:
		return true;
	}
}

static int parse_call(struct rp_parser *p, const char *s, const char *e, struct rp_event *ev,
		      const char **err)
{
	const char *as[8], *ae[8], *name = s, *close;
	int nargs = 0, want;
	bool big = false;

	while (s < e && is_name(*s))
		s++;
	if (s == name || s == e || *s != '(') {
		*err = "expected a system call name and '(', a signal (---) or an exit (+++)";
		return -1;
	}
	ev->sys = rp_sys_lookup(name, (size_t)(s - name));
	if (ends_with(s, e, " <unfinished ...>")) {
		const char *ue = e - strlen(" <unfinished ...>");

		if (ev->sys == RP_SYS_CLONE || ev->sys == RP_SYS_CLONE3 || ev->sys == RP_SYS_FORK ||
		    ev->sys == RP_SYS_VFORK) {
			ev->started = 1;
			if (ev->sys == RP_SYS_CLONE || ev->sys == RP_SYS_CLONE3)
				(void)find_flags(s + 1, ue, ev->sys == RP_SYS_CLONE3,
						 &ev->started_flags, &big);
			else
				(void)clone_flags(ev->sys, as, ae, 0, &ev->started_flags, &big);
			if (big) {
				*err = "expected clone flags that fit in " RP_NUM_BITS;
				return -1;
			}
		}
		if (stash_put(p, ev->pid, name, (size_t)(ue - name))) {
			*err = "expected fewer calls in flight (out of memory)";
			return -1;
		}
		ev->kind = RP_EV_NONE;
		return 0;
	}
	close = scan_args(s + 1, e, as, ae, 8, &nargs);
	if (!close) {
		*err = "expected the arguments to end with ')' (or ' <unfinished ...>')";
		return -1;
	}
	ev->kind = RP_EV_CALL;
	if (parse_ret(close + 1, e, ev, err))
		return -1;
	want = nums_wanted(ev->sys);
	if (nargs < want) {
		*err = "expected more arguments for this call";
		return -1;
	}
	for (int i = 0; i < want; i++) {
		if (parse_value(as[i], ae[i], &ev->arg[i], &big)) {
			*err = "expected a number or flags as argument";
			return -1;
		}
	}
	ev->nargs = want;
	if (ev->sys == RP_SYS_MREMAP && nargs >= 5 && !parse_value(as[4], ae[4], &ev->arg[4], &big))
		ev->nargs = 5;
	if (ev->sys >= RP_SYS_CLONE && ev->sys <= RP_SYS_VFORK &&
	    clone_flags(ev->sys, as, ae, nargs, &ev->arg[0], &big)) {
		*err = "expected flags=... in the clone arguments";
		return -1;
	}
	if (big) {
		*err = "expected numbers that fit in " RP_NUM_BITS " as arguments";
		return -1;
	}
	if (!ev->failed && !ranges_fit(ev)) {
		*err = "expected an address range that fits in " RP_NUM_BITS
		       " (address + length wraps)";
		return -1;
	}
	return 0;
}

static int parse_exit(const char *s, const char *e, struct rp_event *ev, const char **err)
{
	bool big = false;
	long v;

	if (!ends_with(s, e, " +++")) {
		*err = "expected ' +++' at the end of an exit line";
		return -1;
	}
	e -= 4;
	s += 4;
	if (starts_with(s, e, "exited with ")) {
		if (parse_long(s + 12, e, &v, &big) == e) {
			if (big || v < 0 || v > 255) {
				*err = big ? "expected an exit status that fits in " RP_NUM_BITS
					   : "expected an exit status 0..255";
				return -1;
			}
			ev->kind = RP_EV_EXIT;
			ev->status = (int)v;
			return 0;
		}
	} else if (starts_with(s, e, "killed by ")) {
		ev->kind = RP_EV_EXIT;
		ev->status = 128;
		return 0;
	} else if (starts_with(s, e, "superseded by execve in pid ")) {
		if (parse_long(s + 28, e, &v, &big) == e) {
			if (big) {
				*err = "expected a pid that fits in " RP_NUM_BITS;
				return -1;
			}
			ev->kind = RP_EV_SUPERSEDED;
			ev->ret = v;
			return 0;
		}
	}
	*err = "expected 'exited with N', 'killed by SIG...' or 'superseded by execve in pid N'";
	return -1;
}

static int parse_resumed(struct rp_parser *p, const char *s, const char *e, struct rp_event *ev,
			 const char **err)
{
	const char *name = s + 5, *n = name, *gt;
	struct rp_stash *st;
	long i;

	while (n < e && is_name(*n))
		n++;
	if (n == name || !starts_with(n, e, " resumed>")) {
		*err = "expected '<... NAME resumed>'";
		return -1;
	}
	gt = n + 9;
	i = stash_find(p, ev->pid);
	if (i < 0) {
		*err = "expected an earlier '<unfinished ...>' line of this pid";
		return -1;
	}
	st = &p->st[i];
	if (st->len < (size_t)(n - name) || memcmp(st->text, name, (size_t)(n - name)) ||
	    st->text[n - name] != '(') {
		*err = "expected the resumed call to be the pid's unfinished one";
		return -1;
	}
	memcpy(p->join, st->text, st->len);
	memcpy(p->join + st->len, gt, (size_t)(e - gt));
	e = p->join + st->len + (e - gt);
	stash_drop(p, ev->pid);
	return parse_call(p, p->join, e, ev, err);
}

int rp_parse_line(struct rp_parser *p, const char *line, size_t len, struct rp_event *ev,
		  const char **err)
{
	const char *s = line, *e = line + len, *q;
	bool big = false;
	long v;

	memset(ev, 0, sizeof(*ev));
	ev->pid = -1;
	if (len > RP_LINE_MAX || memchr(line, '\0', len)) {
		*err = len > RP_LINE_MAX ? "expected a line shorter than 64 KiB"
					 : "expected text, not a NUL byte";
		return -1;
	}
	e = trim_end(s, e);
	if (s == e)
		return 0; /* an empty line */
	if (starts_with(s, e, "[pid ")) {
		q = parse_long(skip_sp(s + 5, e), e, &v, &big);
		if (!q || q == e || *q != ']') {
			*err = "expected '[pid N]'";
			return -1;
		}
		if (big) {
			*err = "expected a pid that fits in " RP_NUM_BITS;
			return -1;
		}
		ev->pid = v;
		s = skip_sp(q + 1, e);
	} else if (is_digit(*s)) {
		q = parse_long(s, e, &v, &big);
		if (q && q < e && *q == ' ') {
			if (big) {
				*err = "expected a pid that fits in " RP_NUM_BITS;
				return -1;
			}
			ev->pid = v;
			s = skip_sp(q, e);
		}
	}
	if (s < e && is_digit(*s)) { /* a timestamp: 20:54:55.020248 or 1700000000.123 */
		for (q = s; q < e && (is_digit(*q) || *q == ':' || *q == '.'); q++)
			;
		if (q == e || *q != ' ') {
			*err = "expected a timestamp followed by a space";
			return -1;
		}
		s = skip_sp(q, e);
	}
	if (s == e) {
		*err = "expected a call, a signal or an exit after the pid and time";
		return -1;
	}
	if (starts_with(s, e, "--- ")) {
		if (!ends_with(s, e, " ---")) {
			*err = "expected ' ---' at the end of a signal line";
			return -1;
		}
		ev->kind = RP_EV_SIGNAL;
		return 0;
	}
	if (starts_with(s, e, "+++ ")) {
		if (parse_exit(s, e, ev, err))
			return -1;
		if (ev->kind == RP_EV_EXIT)
			stash_drop(p, ev->pid);
		return 0;
	}
	if (starts_with(s, e, "<... "))
		return parse_resumed(p, s, e, ev, err);
	if (starts_with(s, e, "strace: ") || (s[0] == '[' && e[-1] == ']'))
		return 0; /* a message from strace itself */
	return parse_call(p, s, e, ev, err);
}
