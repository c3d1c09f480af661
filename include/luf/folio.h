/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/folio.h - what luf keeps in a caller's folio descriptor.
 *
 * The free list's links and state live in struct luf_folio, which the
 * caller embeds in its own folio descriptor (struct page, a slab header, a
 * pool slot), never in the folio's bytes: a CPU reading through a stale
 * translation would see them (S1). This header includes nothing, so a
 * kernel's struct page definition can include it.
 */
#ifndef LUF_FOLIO_H
#define LUF_FOLIO_H

/**
 * enum luf_folio_state - where a folio is
 * @LUF_FOLIO_IN_USE: allocated, or never freed to luf
 * @LUF_FOLIO_CLEAN: on a clean list: no flush owed
 * @LUF_FOLIO_PEND: on a pend list: a flush is owed before reuse
 */
enum luf_folio_state {
	LUF_FOLIO_IN_USE = 0,
	LUF_FOLIO_CLEAN = 1,
	LUF_FOLIO_PEND = 2,
};

/**
 * struct luf_folio - luf's part of a folio descriptor; zero-initialise it
 * @next: the next folio on its list; NULL at the end or when in use
 * @key: the key of its pending set when freed; 0 = none
 * @state: an enum luf_folio_state
 * @file: LUF_DEBUG in user space: the call site of its last free or allocation
 * @line: ... and its line
 *
 * Two words (a list_head's worth) outside LUF_DEBUG.
 */
struct luf_folio {
	struct luf_folio *next;
	unsigned short key;
	unsigned char state;
#if defined(LUF_DEBUG) && !defined(__KERNEL__)
	const char *file;
	int line;
#endif
};

#endif /* LUF_FOLIO_H */
