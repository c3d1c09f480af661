// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * loadmod.c - load a kernel module with exactly one finit_module() call.
 *
 * busybox insmod retries a failed finit_module() with init_module(), so a
 * module whose init fails runs its init twice and a test cannot count what
 * one load printed. This loader, linked statically into the test's
 * initramfs, makes one call and prints its result:
 *
 *   loadmod <file.ko> [param=value ...]   ->  "loadmod: rc=<errno or 0>"
 *
 * Exit status: 0 if the module loaded, 1 if the kernel refused it, 2 on
 * bad usage or an unreadable file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char params[1024] = "";
	size_t len = 0;
	int fd, i, rc;

	if (argc < 2) {
		fprintf(stderr, "usage: %s <file.ko> [param=value ...]\n", argv[0]);
		return 2;
	}
	for (i = 2; i < argc; i++) {
		int n =
		    snprintf(params + len, sizeof(params) - len, "%s%s", len ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= sizeof(params) - len) {
			fprintf(stderr, "loadmod: parameters too long\n");
			return 2;
		}
		len += (size_t)n;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "loadmod: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	rc = (int)syscall(SYS_finit_module, fd, params, 0) ? errno : 0;
	close(fd);
	printf("loadmod: rc=%d%s%s\n", rc, rc ? " " : "", rc ? strerror(rc) : "");
	return rc ? 1 : 0;
}
