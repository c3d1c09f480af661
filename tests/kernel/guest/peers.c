// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/peers.c - the "peers" workload: two peer test suites from
 * Debian, fio and stress-ng, run while reclaim runs.
 *
 * The suites and the shared libraries they need are on an ext4 file system
 * mounted at --root (/peers: tests/kernel/boot's peers_image(), every file at its
 * host path, ROOT/library-path naming the libraries' directories), run one after
 * the other through that file system's dynamic loader
 * (ROOT/lib64/ld-linux-x86-64.so.2 --library-path ROOT/DIR:...), in ROOT/work,
 * their output on stderr:
 *  - fio: two jobs over files of --fio-mb MiB each in ROOT/work (together a
 *    little more than the guest's 256 MiB), 4 KiB random writes through the mmap
 *    and the psync engines, each block written with a crc32c that fio reads back
 *    and checks once the job has written its file (verify=crc32c, do_verify=1);
 *  - stress-ng: its vm, mmap (over a file in ROOT/work), madvise, mremap and fork
 *    stressors, one worker each, for --stress-seconds, each checking what it
 *    does where it can (--verify).
 * Meanwhile a child runs --reclaim (/bin/reclaim) --dev DEV (/mnt/data: the file
 * of the reclaim-ext4 disk, larger than RAM) with --threads threads until it is
 * killed, so that the suites' pages are reclaimed (and on luf's kernel their
 * flushes deferred) beside its own. The suites start once reclaim has taken
 * --warm-mb MiB (at most WARM_LIMIT_S seconds).
 *
 * Usage: peers [--root /peers] [--dev /mnt/data] [--threads 2] [--reclaim PATH]
 *              [--fio-mb 160] [--stress-seconds 60] [--warm-mb 16]
 * Prints key=value lines: warm_seconds, then for each suite (fio_, stress_): rc
 * (its exit status; 128 + N if signal N killed it), seconds, reclaimed (pages
 * reclaimed while it ran: pgsteal_kswapd + pgsteal_direct) and deferred (the rise
 * of nr_luf_deferred; 0 on a kernel without it). Exit 1 if a suite failed, 2 if
 * the set-up did (no loader or library-path, reclaim that ended or took too
 * little).
 */
#include "common.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#define MAX_ARGS 40
#define WARM_LIMIT_S 300

static const char *root = "/peers";
static char loader[256];
static char libpath[1024];

/* What one suite's run did. */
struct run {
	int rc;
	double seconds;
	long reclaimed;
	long deferred;
};

/* Flushes luf deferred so far; 0 on a kernel without luf. */
static long deferred(void)
{
	long v = vmstat_sum("nr_luf_deferred");

	return v > 0 ? v : 0;
}

/* @name under the root, in @buf of @size bytes; exit 2 if it does not fit. */
static char *under_root(char *buf, size_t size, const char *name)
{
	if ((size_t)snprintf(buf, size, "%s%s", root, name) >= size) {
		fprintf(stderr, "%s: path too long: %s%s\n", prog, root, name);
		exit(2);
	}
	return buf;
}

/* The loader and its --library-path: ROOT/library-path's directories, under ROOT. */
static void find_loader(void)
{
	char path[256], dirs[768], *dir, *save;
	size_t len = 0;
	FILE *f;

	under_root(loader, sizeof(loader), "/lib64/ld-linux-x86-64.so.2");
	if (access(loader, X_OK))
		die(loader);
	f = fopen(under_root(path, sizeof(path), "/library-path"), "r");
	if (!f)
		die(path);
	if (!fgets(dirs, sizeof(dirs), f)) {
		fprintf(stderr, "%s: %s is empty\n", prog, path);
		exit(2);
	}
	fclose(f);
	dirs[strcspn(dirs, "\n")] = 0;
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		len += snprintf(libpath + len, sizeof(libpath) - len, "%s%s%s", len ? ":" : "",
				root, dir);
		if (len >= sizeof(libpath)) {
			fprintf(stderr, "%s: %s names too many directories\n", prog, path);
			exit(2);
		}
	}
}

/*
 * Starts @reclaim over @dev with @threads threads, its results to /dev/null; it
 * ends with this process at the latest.
 */
static pid_t start_reclaim(const char *reclaim, const char *dev, int threads)
{
	char n[16];
	pid_t pid;

	snprintf(n, sizeof(n), "%d", threads);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd < 0 || dup2(fd, 1) < 0)
			die("/dev/null");
		if (prctl(PR_SET_PDEATHSIG, SIGKILL))
			die("PR_SET_PDEATHSIG");
		execl(reclaim, "reclaim", "--dev", dev, "--threads", n, "--passes", "1000000",
		      (char *)NULL);
		die(reclaim);
	}
	return pid;
}

/* Whether the child @pid has ended (its status in *@status). */
static int ended(pid_t pid, int *status)
{
	return waitpid(pid, status, WNOHANG) == pid;
}

/*
 * Runs the suite ROOT@exe with the arguments @args (NULL-terminated) through the
 * loader, its output on stderr, and says what it did in @r.
 */
static void run_suite(const char *exe, const char *const *args, struct run *r)
{
	const char *argv[MAX_ARGS];
	char path[256];
	long steal = vm_reclaimed(), def = deferred();
	double t0 = now_s();
	int n = 0, i, status;
	pid_t pid;

	argv[n++] = loader;
	argv[n++] = "--library-path";
	argv[n++] = libpath;
	argv[n++] = under_root(path, sizeof(path), exe);
	while (*args && n < MAX_ARGS - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	fprintf(stderr, "%s: running", prog);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %s", argv[i]);
	fprintf(stderr, "\n");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		if (dup2(2, 1) < 0)
			die("dup2");
		execv(argv[0], (char *const *)argv);
		die(argv[0]);
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	r->seconds = now_s() - t0;
	r->rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->reclaimed = vm_reclaimed() - steal;
	r->deferred = deferred() - def;
	fprintf(stderr, "%s: %s exited %d after %.1f s\n", prog, exe, r->rc, r->seconds);
}

static void print_run(const char *name, const struct run *r)
{
	printf("%s_rc=%d\n", name, r->rc);
	printf("%s_seconds=%.1f\n", name, r->seconds);
	printf("%s_reclaimed=%ld\n", name, r->reclaimed);
	printf("%s_deferred=%ld\n", name, r->deferred);
}

int main(int argc, char **argv)
{
	const char *dev = "/mnt/data", *reclaim = "/bin/reclaim";
	int threads = 2, fio_mb = 160, stress_seconds = 60, warm_mb = 16;
	const struct opt opts[] = {
	    {.name = "--root", .kind = OPT_STR, .to = &root},
	    {.name = "--dev", .kind = OPT_STR, .to = &dev},
	    {.name = "--threads", .kind = OPT_INT, .to = &threads, .min = 1},
	    {.name = "--reclaim", .kind = OPT_STR, .to = &reclaim},
	    {.name = "--fio-mb", .kind = OPT_INT, .to = &fio_mb, .min = 1},
	    {.name = "--stress-seconds", .kind = OPT_INT, .to = &stress_seconds, .min = 1},
	    {.name = "--warm-mb", .kind = OPT_INT, .to = &warm_mb, .min = 0},
	};
	char work[256], dir[300], size[32], secs[32];
	struct run fio, stress;
	long target;
	double t0, warm;
	int status, early;
	pid_t rpid;

	prog = "peers";
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		   "usage: peers [--root DIR] [--dev PATH] [--threads N] [--reclaim PATH] "
		   "[--fio-mb MB] [--stress-seconds S] [--warm-mb MB]\n");
	find_loader();
	under_root(work, sizeof(work), "/work");
	if ((mkdir(work, 0755) && errno != EEXIST) || chdir(work))
		die(work);
	snprintf(dir, sizeof(dir), "--directory=%s", work);
	snprintf(size, sizeof(size), "--size=%dm", fio_mb);
	snprintf(secs, sizeof(secs), "%ds", stress_seconds);

	rpid = start_reclaim(reclaim, dev, threads);
	target = vm_reclaimed() + ((long)warm_mb << 20) / (long)PAGE_SIZE;
	t0 = now_s();
	while (vm_reclaimed() < target) {
		if (ended(rpid, &status)) {
			fprintf(stderr, "%s: %s ended (status %#x) before it took %d MiB\n", prog,
				reclaim, status, warm_mb);
			return 2;
		}
		if (now_s() - t0 > WARM_LIMIT_S) {
			fprintf(stderr, "%s: reclaim took less than %d MiB in %d s\n", prog,
				warm_mb, WARM_LIMIT_S);
			kill(rpid, SIGKILL);
			return 2;
		}
		usleep(100000);
	}
	warm = now_s() - t0;

	{
		/*
		 * Global options first, then one job per engine: every 4 KiB block of
		 * each file written once, in random order, with a crc32c, then read
		 * back and checked; the first bad block ends fio with an error.
		 */
		const char *args[] = {"--eta=never",
				      dir,
				      size,
				      "--bs=4k",
				      "--rw=randwrite",
				      "--verify=crc32c",
				      "--do_verify=1",
				      "--verify_fatal=1",
				      "--clat_percentiles=0",
				      "--name=mmap",
				      "--ioengine=mmap",
				      "--name=psync",
				      "--ioengine=psync",
				      NULL};

		run_suite("/usr/bin/fio", args, &fio);
	}
	{
		/*
		 * One worker per stressor, sized (about 100 MiB of anonymous memory in
		 * all, no swap) to fit in the guest beside the kernel and reclaim's
		 * page cache; the mmap stressor's file is on ext4, in ROOT/work.
		 */
		const char *args[] = {"--vm",
				      "1",
				      "--vm-bytes",
				      "48m",
				      "--mmap",
				      "1",
				      "--mmap-bytes",
				      "32m",
				      "--mmap-file",
				      "--madvise",
				      "1",
				      "--mremap",
				      "1",
				      "--mremap-bytes",
				      "16m",
				      "--fork",
				      "1",
				      "--timeout",
				      secs,
				      "--verify",
				      "--metrics-brief",
				      "--temp-path",
				      work,
				      NULL};

		run_suite("/usr/bin/stress-ng", args, &stress);
	}

	early = ended(rpid, &status);
	if (!early) {
		kill(rpid, SIGKILL);
		waitpid(rpid, NULL, 0);
	}
	printf("warm_seconds=%.1f\n", warm);
	print_run("fio", &fio);
	print_run("stress", &stress);
	fflush(stdout);
	if (fio.rc || stress.rc)
		return 1;
	if (early) {
		fprintf(stderr, "%s: %s ended (status %#x) before the suites did\n", prog, reclaim,
			status);
		return 2;
	}
	return 0;
}
