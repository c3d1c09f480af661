// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_lex.h - character classes and number scanners of the
 * strace line parser (rp_parse.c). Every scanner takes [s, e) and returns
 * the first byte after what it read, or NULL if nothing matched.
 */
#ifndef RP_LEX_H
#define RP_LEX_H

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

	return (size_t)(e - s) >= n && !memcmp(e - n, lit, n);
}

static inline bool starts_with(const char *s, const char *e, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(e - s) >= n && !memcmp(s, lit, n);
}

/* Decimal number (optionally negative); NULL if none. */
static inline const char *parse_long(const char *s, const char *e, long *out)
{
	bool neg = false;
	unsigned long v = 0;
	const char *d;

	if (s < e && *s == '-') {
		neg = true;
		s++;
	}
	for (d = s; s < e && is_digit(*s); s++)
		v = v * 10 + (unsigned long)(*s - '0');
	if (s == d)
		return NULL;
	*out = neg ? -(long)v : (long)v;
	return s;
}

static inline const char *parse_hex(const char *s, const char *e, unsigned long *out)
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
		v = v << 4 | x;
	}
	*out = v;
	return s == d ? NULL : s;
}

/* A number: 0x1f, 42, -1. */
static inline const char *parse_num(const char *s, const char *e, unsigned long *out)
{
	long v;

	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_hex(s + 2, e, out);
	s = parse_long(s, e, &v);
	*out = (unsigned long)v;
	return s;
}

#endif /* RP_LEX_H */
