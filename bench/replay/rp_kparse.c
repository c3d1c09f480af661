// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_kparse.c - the kernel trace lines of rp_kparse.h.
 *
 * The header is found from its end, the first " [CPU] " after a "-PID"
 * run of digits: a task name may hold anything but that. Numbers are
 * checked for overflow; every field a used event needs must be there.
 */
#include <string.h>

#include "rp_kparse.h"

const char *rp_kev_name(enum rp_kev_kind k)
{
	static const char *const n[RP_K_NR] = {"none",	"unmap", "dirty", "batch", "switch", "wp",
					       "alloc", "ipi",	 "lazy",  "lost",  "other"};

	return (unsigned int)k < RP_K_NR ? n[k] : "?";
}

struct cur {
	const char *p, *end;
};

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Decimal digits at p: value in *v (at most 64 bits), p moves past them. */
static int dec(struct cur *s, uint64_t *v)
{
	const char *d = s->p;

	*v = 0;
	while (s->p < s->end && digit(*s->p)) {
		unsigned int x = (unsigned int)(*s->p - '0');

		if (*v > (UINT64_MAX - x) / 10)
			return -1;
		*v = *v * 10 + x;
		s->p++;
	}
	return s->p > d ? 0 : -1;
}

static int hexval(char c)
{
	if (digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "0x" and hex digits (at most 16 significant): value in *v. */
static int hex(struct cur *s, uint64_t *v)
{
	unsigned int n = 0;

	*v = 0;
	if (s->end - s->p < 3 || s->p[0] != '0' || (s->p[1] != 'x' && s->p[1] != 'X'))
		return -1;
	s->p += 2;
	while (s->p < s->end && hexval(*s->p) >= 0) {
		if (*v >> 60)
			return -1;
		*v = *v << 4 | (uint64_t)hexval(*s->p);
		s->p++;
		n++;
	}
	return n ? 0 : -1;
}

/* Find " @key" or a leading "@key" in [p, end); the cursor lands after it. */
static int field(const struct cur *s, const char *key, struct cur *out)
{
	size_t kl = strlen(key);

	for (const char *q = s->p; q + kl <= s->end; q++)
		if ((q == s->p || q[-1] == ' ') && !memcmp(q, key, kl)) {
			out->p = q + kl;
			out->end = s->end;
			return 0;
		}
	return -1;
}

static int hex_field(const struct cur *s, const char *key, uint64_t *v)
{
	struct cur f;

	return field(s, key, &f) || hex(&f, v) ? -1 : 0;
}

int rp_kparse_sniff(const char *line, size_t len)
{
	struct rp_kev ev;
	const char *why;

	if (len && line[0] == '#')
		return 1;
	return rp_kparse(line, len, &ev, &why) == 0 && ev.kind != RP_K_NONE;
}

/* "CPU:N [LOST M EVENTS]" */
static int lost_line(struct cur *s, struct rp_kev *ev)
{
	uint64_t cpu, n;

	if (s->end - s->p < 4 || memcmp(s->p, "CPU:", 4))
		return -1;
	s->p += 4;
	if (dec(s, &cpu) || cpu > 0xffffffffu || s->end - s->p < 7 || memcmp(s->p, " [LOST ", 7))
		return -1;
	s->p += 7;
	if (dec(s, &n) || s->end - s->p < 8 || memcmp(s->p, " EVENTS]", 8))
		return -1;
	ev->kind = RP_K_LOST;
	ev->cpu = (unsigned int)cpu;
	ev->a = n;
	return 0;
}

int rp_kparse(const char *line, size_t len, struct rp_kev *ev, const char **why)
{
	struct cur s = {line, line + len}, f;
	const char *name, *q;
	uint64_t cpu, v;
	size_t nl;

	memset(ev, 0, sizeof(*ev));
	while (s.p < s.end && (*s.p == ' ' || *s.p == '\t'))
		s.p++;
	if (s.p == s.end || *s.p == '#')
		return 0; /* RP_K_NONE */
	if (!lost_line(&s, ev))
		return 0;
	/* the header: "-PID [CPU] " */
	for (q = s.p; q < s.end; q++) {
		const char *d = q + 1, *e;

		if (*q != '-' || d >= s.end || !digit(*d))
			continue;
		while (d < s.end && digit(*d))
			d++;
		e = d;
		while (e < s.end && *e == ' ')
			e++;
		if (e == d || e >= s.end || *e != '[')
			continue;
		s.p = e + 1;
		break;
	}
	if (q >= s.end) {
		*why = "TASK-PID [CPU] at the start of the line";
		return -1;
	}
	if (dec(&s, &cpu) || cpu > 0xffffffffu || s.p >= s.end || *s.p != ']') {
		*why = "a CPU number in [brackets]";
		return -1;
	}
	ev->cpu = (unsigned int)cpu;
	s.p++;
	/* optional irq-info flags, then SECONDS: */
	while (s.p < s.end && *s.p == ' ')
		s.p++;
	q = s.p;
	while (q < s.end && *q != ' ' && *q != ':')
		q++;
	if (q < s.end && *q == ' ' &&
	    !(s.p < s.end && digit(*s.p) && memchr(s.p, '.', (size_t)(q - s.p)))) {
		s.p = q; /* that was the flags column */
		while (s.p < s.end && *s.p == ' ')
			s.p++;
	}
	if (dec(&s, &v) || s.p >= s.end || *s.p != '.') {
		*why = "a timestamp SECONDS.MICROSECONDS:";
		return -1;
	}
	s.p++;
	if (dec(&s, &v) || s.p >= s.end || *s.p != ':') {
		*why = "a timestamp SECONDS.MICROSECONDS:";
		return -1;
	}
	s.p++;
	while (s.p < s.end && *s.p == ' ')
		s.p++;
	name = s.p;
	while (s.p < s.end && *s.p != ':' && *s.p != ' ')
		s.p++;
	nl = (size_t)(s.p - name);
	if (!nl || s.p >= s.end || *s.p != ':') {
		*why = "an EVENT: name";
		return -1;
	}
	s.p++;
#define IS(str) (nl == sizeof(str) - 1 && !memcmp(name, str, nl))
	if (IS("unmap")) {
		ev->kind = RP_K_UNMAP;
		if (hex_field(&s, "folio=", &ev->a) || hex_field(&s, "mm=", &ev->b) ||
		    hex_field(&s, "vmflags=", &ev->c)) {
			*why = "unmap: folio=0x.. mm=0x.. vmflags=0x..";
			return -1;
		}
	} else if (IS("dirty")) {
		ev->kind = RP_K_DIRTY;
		if (hex_field(&s, "folio=", &ev->a)) {
			*why = "dirty: folio=0x..";
			return -1;
		}
	} else if (IS("batch")) {
		ev->kind = RP_K_BATCH;
	} else if (IS("lazy")) {
		ev->kind = RP_K_LAZY;
	} else if (IS("switch")) {
		ev->kind = RP_K_SWITCH;
		if (hex_field(&s, "prev=", &ev->a) || hex_field(&s, "next=", &ev->b)) {
			*why = "switch: prev=0x.. next=0x..";
			return -1;
		}
	} else if (IS("wp")) {
		ev->kind = RP_K_WP;
		if (hex_field(&s, "mm=", &ev->b)) {
			*why = "wp: mm=0x..";
			return -1;
		}
	} else if (IS("mm_page_alloc")) {
		ev->kind = RP_K_ALLOC;
		if (hex_field(&s, "pfn=", &ev->a) || field(&s, "order=", &f) || dec(&f, &ev->c)) {
			*why = "mm_page_alloc: pfn=0x.. order=N";
			return -1;
		}
	} else if (IS("tlb_flush")) {
		ev->kind = field(&s, "reason:remote shootdown", &f) ? RP_K_OTHER : RP_K_IPI;
	} else {
		ev->kind = RP_K_OTHER;
	}
#undef IS
	return 0;
}
