// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/common.h - helpers shared by the guest workloads (static
 * programs run by tests/kernel/boot inside a QEMU guest): options, CPU pinning,
 * clocks, the disk, a worker thread's slot, and the page signature format of
 * the checker.
 */
#ifndef LUF_GUEST_COMMON_H
#define LUF_GUEST_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE_SIZE 4096UL
#define WORDS_PER_PAGE (PAGE_SIZE / sizeof(uint64_t))

static const char *prog = "guest";

static inline void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(2);
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* Pin the calling thread to one CPU; returns 0 or -errno. */
static inline int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return 0;
}

/* "--name=value" or "--name value": returns the value or NULL. */
static inline const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);

	if (strncmp(argv[*i], name, len))
		return NULL;
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (argv[*i][len] || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static inline long opt_long(const char *s, const char *name, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < min) {
		fprintf(stderr, "%s: bad value for %s: '%s' (want an integer >= %ld)\n", prog, name,
			s, min);
		exit(2);
	}
	return v;
}

/* As opt_long(), for an int: a value above INT_MAX is refused too. */
static inline int opt_int(const char *s, const char *name, long min)
{
	long v = opt_long(s, name, min);

	if (v > INT_MAX) {
		fprintf(stderr, "%s: bad value for %s: '%s' (want an integer from %ld to %d)\n",
			prog, name, s, min, INT_MAX);
		exit(2);
	}
	return (int)v;
}

/*
 * One command-line option of a guest program, "--name VALUE" or "--name=VALUE":
 * an integer >= min stored in the int, long or unsigned long at @to, or the string
 * itself (OPT_STR: a const char *); OPT_FLAG is "--name" alone, setting the int at
 * @to to 1.
 */
enum opt_kind { OPT_INT, OPT_LONG, OPT_ULONG, OPT_STR, OPT_FLAG };
struct opt {
	const char *name;
	enum opt_kind kind;
	void *to;
	long min;
};

/* Parses argv[1..] by the @n options @opts; any other argument prints @usage, exit 2. */
static inline void parse_opts(int argc, char **argv, const struct opt *opts, size_t n,
			      const char *usage)
{
	const char *v;
	size_t k;
	int i;

	for (i = 1; i < argc; i++) {
		for (k = 0; k < n; k++) {
			if (opts[k].kind == OPT_FLAG) {
				if (strcmp(argv[i], opts[k].name) == 0) {
					*(int *)opts[k].to = 1;
					break;
				}
				continue;
			}
			v = opt_value(argc, argv, &i, opts[k].name);
			if (!v)
				continue;
			if (opts[k].kind == OPT_STR)
				*(const char **)opts[k].to = v;
			else if (opts[k].kind == OPT_INT)
				*(int *)opts[k].to = opt_int(v, opts[k].name, opts[k].min);
			else if (opts[k].kind == OPT_ULONG)
				*(unsigned long *)opts[k].to =
				    (unsigned long)opt_long(v, opts[k].name, opts[k].min);
			else
				*(long *)opts[k].to = opt_long(v, opts[k].name, opts[k].min);
			break;
		}
		if (k == n) {
			fprintf(stderr, "%s: unknown argument '%s'\n%s", prog, argv[i], usage);
			exit(2);
		}
	}
}

/* Size in bytes of an open disk or file. */
static inline uint64_t fd_size(int fd)
{
	struct stat st;
	uint64_t size;

	if (fstat(fd, &st))
		die("fstat");
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size))
			die("BLKGETSIZE64");
		return size;
	}
	return (uint64_t)st.st_size;
}

/* Sum of /proc/vmstat lines starting with prefix, or -1. */
static inline long vmstat_sum(const char *prefix)
{
	char line[256];
	long sum = -1, v;
	size_t len = strlen(prefix);
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (strncmp(line, prefix, len) || !sp || sscanf(sp, "%ld", &v) != 1)
			continue;
		sum = (sum < 0 ? 0 : sum) + v;
	}
	fclose(f);
	return sum;
}

/* Pages reclaimed so far (kswapd's and direct reclaim's). */
static inline long vm_reclaimed(void)
{
	return vmstat_sum("pgsteal_kswapd") + vmstat_sum("pgsteal_direct");
}

/* TLB shootdowns received so far, all CPUs: the "TLB" row of /proc/interrupts, or -1. */
static inline long tlb_shootdowns(void)
{
	char *line = NULL, *p, *end;
	size_t cap = 0;
	long sum = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		p = line + strspn(line, " ");
		if (strncmp(p, "TLB:", 4))
			continue;
		/* The per-CPU counts, up to the row's description. */
		for (p += 4, sum = 0;; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			sum += v;
		}
		break;
	}
	free(line);
	fclose(f);
	return sum;
}

/*
 * A worker thread of a workload (a reader, a writer, a lookup thread): pinned to
 * @cpu, @index-th of its kind; @done (what it did so far, in the workload's unit)
 * on a cache line of its own, so that counting does not share a line.
 */
struct guest_worker {
	_Alignas(64) atomic_long done;
	pthread_t thread;
	int cpu;
	int index;
};

/*
 * Page signature (checker). Every 64-bit word of a disk page describes itself:
 *   bits 63..48  SIG_MAGIC
 *   bits 47..24  page index on the disk (24 bits: disks up to 64 GiB)
 *   bits 23..9   version of the page (15 bits; 0 as generated, bumped by writes)
 *   bits  8..0   index of the word in the page
 * so any single word read through a stale translation to a reused frame, another
 * disk page or an older version of this page is recognised. The filler process
 * of the checker writes FILL_MAGIC words instead.
 */
#define SIG_MAGIC 0x1f5eULL
#define FILL_MAGIC 0xf111ULL
#define SIG_MAX_PAGES (1UL << 24)
#define SIG_MAX_VERSION 0x7fffU

static inline uint64_t sig_word(uint64_t page, unsigned int version, unsigned int w)
{
	return SIG_MAGIC << 48 | (page & 0xffffff) << 24 | (uint64_t)(version & 0x7fff) << 9 |
	       (w & 0x1ff);
}

static inline void sig_fill(uint64_t *buf, uint64_t page, unsigned int version)
{
	unsigned int w;

	for (w = 0; w < WORDS_PER_PAGE; w++)
		buf[w] = sig_word(page, version, w);
}

/*
 * One random read of a region of @nr_pages signature pages (version 0), the
 * state of its xorshift64 generator in @x: 0 if the word read is its signature,
 * else 1, the first four (@bad so far) printed with @who.
 */
static inline long sig_read_random(const uint64_t *region, uint64_t nr_pages, uint64_t *x, long bad,
				   const char *who)
{
	uint64_t page, w, v;

	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	page = *x % nr_pages;
	w = (*x >> 40) % WORDS_PER_PAGE;
	v = ((const volatile uint64_t *)region)[page * WORDS_PER_PAGE + w];
	if (v == sig_word(page, 0, (unsigned int)w))
		return 0;
	if (bad < 4)
		fprintf(stderr, "%s: page %lu word %lu: %#lx\n", who, (unsigned long)page,
			(unsigned long)w, (unsigned long)v);
	return 1;
}

#define SIG_MAGIC_OF(x) ((x) >> 48)
#define SIG_PAGE_OF(x) (((x) >> 24) & 0xffffff)
#define SIG_VERSION_OF(x) ((unsigned int)((x) >> 9) & 0x7fff)
#define SIG_WORD_OF(x) ((unsigned int)(x)&0x1ff)

#endif /* LUF_GUEST_COMMON_H */
