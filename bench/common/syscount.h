/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * bench/common/syscount.h - count the membarrier(2) and futex(2) calls
 * every library of the process makes through syscall(3) (lib/user,
 * liburcu, the benchmarks' own code): syscount.c defines syscall() in the
 * executable, which comes before the C library's, counts, and calls it.
 * Used by luf-peers and luf-ds.
 */
#ifndef LUF_BENCH_SYSCOUNT_H
#define LUF_BENCH_SYSCOUNT_H

/* membarrier(2) calls so far, all threads. */
unsigned long syscount_membarriers(void);

/* futex(2) calls made through syscall(3) so far, all threads. */
unsigned long syscount_futexes(void);

#endif /* LUF_BENCH_SYSCOUNT_H */
