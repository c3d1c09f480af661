// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * allocheavy: an allocator-heavy C program for trace capture. Four threads
 * malloc and free blocks of 4 KiB to 1 MiB (the large ones are mmap'd and
 * munmap'd by glibc), and every thread now and then maps a read-only
 * table, reads it, and unmaps it, or flips a page read-only and back.
 * Build: cc -O2 -pthread -o allocheavy allocheavy.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *worker(void *arg)
{
	unsigned long seed = (unsigned long)arg * 2654435761u + 1, sum = 0;
	void *slot[64] = {0};

	for (int i = 0; i < 6000; i++) {
		unsigned int k;
		size_t sz;

		seed = seed * 6364136223846793005ul + 1442695040888963407ul;
		k = (unsigned int)(seed >> 33) % 64;
		sz = 4096ul << ((seed >> 20) % 9);
		free(slot[k]);
		slot[k] = malloc(sz);
		if (slot[k])
			memset(slot[k], i & 0xff, 64);
		if (i % 50 == 0) {
			char *t = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (t != MAP_FAILED) {
				memset(t, 1, 65536);
				mprotect(t, 65536, PROT_READ);
				for (int j = 0; j < 65536; j += 4096)
					sum += (unsigned char)t[j];
				munmap(t, 65536);
			}
		}
	}
	for (int k = 0; k < 64; k++)
		free(slot[k]);
	return (void *)sum;
}

int main(void)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	puts("allocheavy done");
	return 0;
}
