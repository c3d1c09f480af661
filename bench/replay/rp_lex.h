// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_lex.h - character classes and number scanners of the
 * strace line parser (rp_parse.c). Every scanner takes [s, e) and returns
 * the first byte after what it read, or NULL if nothing matched.
 */
#ifndef RP_LEX_H
#define RP_LEX_H

#include <limits.h>
#include <stdbool.h>
#include <string.h>

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_name(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
	       c == '?';
}

static inline const char *skip_sp(const char *s, const char *e)
{
	while (s < e && *s == ' ')
		s++;
	return s;
}

/* Trailing blanks and a '\r' (a file that went through Windows) are not content. */
static inline const char *trim_end(const char *s, const char *e)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t'))
		e--;
	return e;
}

static inline bool ends_with(const char *s, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return e >= s && (size_t)(e - s) >= n && !memcmp(e - n, lit, n);
}

static inline bool starts_with(const char *s, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return e >= s && (size_t)(e - s) >= n && !memcmp(s, lit, n);
}

/*
 * The number scanners below read every digit of a number and set *@big
 * when its value does not fit (a munmap length of 10^26, a 17-digit hex
 * address): the caller must refuse the line, never use a wrapped value.
 * *@big is left alone otherwise, so one flag can cover a whole line.
 */
#if ULONG_MAX > 0xfffffffful
#define RP_NUM_BITS "64 bits"
#else
#define RP_NUM_BITS "32 bits"
#endif

/* Decimal digits into *@out (0..ULONG_MAX); NULL if none. */
static inline const char *parse_udec(const char *s, const char *e, unsigned long *out, bool *big)
{
	unsigned long v = 0;
	const char *d = s;

	for (; s < e && is_digit(*s); s++) {
		unsigned int x = (unsigned int)(*s - '0');

		if (v > (ULONG_MAX - x) / 10)
			*big = true;
		v = v * 10 + x;
	}
	*out = v;
	return s == d ? NULL : s;
}

/* Decimal number (optionally negative), LONG_MIN..LONG_MAX; NULL if none. */
static inline const char *parse_long(const char *s, const char *e, long *out, bool *big)
{
	bool neg = s < e && *s == '-';
	unsigned long v;

	s = parse_udec(s + neg, e, &v, big);
	if (!s)
		return NULL;
	if (v > (unsigned long)LONG_MAX + neg)
		*big = true;
	*out = neg ? (long)(0ul - v) : (long)v;
	return s;
}

static inline const char *parse_hex(const char *s, const char *e, unsigned long *out, bool *big)
{
	unsigned long v = 0;
	const char *d = s;

	for (; s < e; s++) {
		char c = *s;
		unsigned int x;

		if (is_digit(c))
			x = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x = (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			x = (unsigned int)(c - 'A' + 10);
		else
			break;
		if (v >> (sizeof(v) * CHAR_BIT - 4))
			*big = true;
		v = v << 4 | x;
	}
	*out = v;
	return s == d ? NULL : s;
}

/*
 * A number: 0x1f, 42, -1. Positive values up to ULONG_MAX (strace prints a
 * size_t as unsigned), negative ones down to LONG_MIN, as two's complement.
 */
static inline const char *parse_num(const char *s, const char *e, unsigned long *out, bool *big)
{
	bool neg = s < e && *s == '-';
	unsigned long v;

	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_hex(s + 2, e, out, big);
	s = parse_udec(s + neg, e, &v, big);
	if (s && neg && v > (unsigned long)LONG_MAX + 1)
		*big = true;
	*out = neg ? 0ul - v : v;
	return s;
}

#endif /* RP_LEX_H */
