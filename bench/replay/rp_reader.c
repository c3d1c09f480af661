// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_reader.c - buffered line reader over zlib's gzread(),
 * which also reads uncompressed files as they are.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "rp_parse.h"
#include "rp_reader.h"

#define RP_BUF (4u * RP_LINE_MAX)

struct rp_reader {
	gzFile gz;
	char *buf;
	size_t start, end;
	unsigned long lineno;
	int eof;
	int skipping; /* inside an overlong line: drop bytes up to its '\n' */
	const char *error;
	char why[128]; /* a read error's text */
};

/*
 * Open @path, or a copy of standard input for "-". A directory is refused
 * here with EISDIR: zlib would open it and then report its failing reads
 * as corrupt compressed data.
 */
static int open_fd(const char *path)
{
	struct stat st;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		errno = EISDIR;
		return -1;
	}
	return fd;
}

struct rp_reader *rp_reader_open(const char *path)
{
	struct rp_reader *r = calloc(1, sizeof(*r));
	int fd, e;

	if (!r)
		return NULL;
	r->buf = malloc(RP_BUF);
	if (!r->buf) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	fd = open_fd(path);
	if (fd >= 0) {
		errno = 0;
		r->gz = gzdopen(fd, "rb");
		if (r->gz) {
			gzbuffer(r->gz, 1u << 17);
			return r;
		}
		e = errno ? errno : ENOMEM;
		close(fd);
		errno = e;
	}
	e = errno;
	free(r->buf);
	free(r);
	errno = e;
	return NULL;
}

void rp_reader_close(struct rp_reader *r)
{
	if (!r)
		return;
	gzclose(r->gz);
	free(r->buf);
	free(r);
}

const char *rp_reader_error(const struct rp_reader *r)
{
	return r->error ? r->error : "no error";
}

unsigned long rp_reader_lineno(const struct rp_reader *r)
{
	return r->lineno;
}

/* Refill after the bytes kept at the front. Return: bytes read, 0 at EOF, -1. */
static int fill(struct rp_reader *r)
{
	int n, errnum;

	memmove(r->buf, r->buf + r->start, r->end - r->start);
	r->end -= r->start;
	r->start = 0;
	errno = 0;
	n = gzread(r->gz, r->buf + r->end, (unsigned int)(RP_BUF - r->end));
	if (n < 0 || (n == 0 && (gzerror(r->gz, &errnum), errnum != Z_OK))) {
		gzerror(r->gz, &errnum);
		if (errnum == Z_ERRNO) { /* the file could not be read */
			snprintf(r->why, sizeof(r->why), "read error: %s",
				 strerror(errno ? errno : EIO));
			r->error = r->why;
		} else {
			r->error = "truncated or corrupt compressed data";
		}
		return -1;
	}
	if (n == 0)
		r->eof = 1;
	r->end += (size_t)n;
	return n;
}

int rp_reader_next(struct rp_reader *r, const char **line, size_t *len)
{
	for (;;) {
		char *s = r->buf + r->start;
		char *nl = memchr(s, '\n', r->end - r->start);

		if (nl) {
			r->start = (size_t)(nl + 1 - r->buf);
			if (r->skipping) {
				r->skipping = 0;
				continue;
			}
			r->lineno++;
			*line = s;
			*len = (size_t)(nl - s);
			return 1;
		}
		if (!r->skipping && r->end - r->start > RP_LINE_MAX) {
			/* an overlong line: report it cut, then drop the rest of it */
			r->lineno++;
			r->skipping = 1;
			*line = s;
			*len = RP_LINE_MAX + 1;
			r->start = r->end;
			return 1;
		}
		if (r->skipping)
			r->start = r->end;
		if (r->eof) {
			if (r->start == r->end || r->skipping)
				return 0;
			r->lineno++; /* a last line without '\n' */
			*line = s;
			*len = r->end - r->start;
			r->start = r->end;
			return 1;
		}
		if (fill(r) < 0)
			return -1;
	}
}
