// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_reader.h - lines from a plain or gzip'd file (zlib reads
 * both), in a fixed buffer: memory does not grow with the file.
 */
#ifndef RP_READER_H
#define RP_READER_H

#include <stddef.h>

struct rp_reader;

/* Open @path ("-": standard input). NULL with errno set on failure. */
struct rp_reader *rp_reader_open(const char *path);
void rp_reader_close(struct rp_reader *r);

/*
 * rp_reader_next() - the next line, without its '\n'.
 * Return: 1 and *@line / *@len (valid until the next call; a line longer
 * than RP_LINE_MAX is returned cut, with *@len = RP_LINE_MAX + 1), 0 at the
 * end, -1 if the data is corrupt or truncated (gzip) or unreadable:
 * rp_reader_error() says why.
 */
int rp_reader_next(struct rp_reader *r, const char **line, size_t *len);
const char *rp_reader_error(const struct rp_reader *r);
/* Line number of the last line returned (1-based); compressed bytes read. */
unsigned long rp_reader_lineno(const struct rp_reader *r);

#endif /* RP_READER_H */
