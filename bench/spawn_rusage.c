/* SPDX-License-Identifier: MIT */
/*
 * spawn_rusage OUT -- CMD [ARG...]: run CMD (stdin, stdout and stderr
 * inherited) and write "WALL USER SYS MAXRSS_KB" to OUT: wall seconds from
 * a monotonic clock, CPU seconds from the child's wait4 rusage (its own
 * children included once they were waited for), peak RSS in KiB.  Exits
 * with CMD's status (128 + N when a signal N ended it, 127 when it could not
 * be started).
 *
 * Why not time it from the benchmark driver itself: the peak RSS wait4
 * reports for a child includes what the child was before exec, a copy of
 * its parent (Linux records the old address space's high-water mark at
 * exec).  A Python driver holding 200 MiB made every command it started
 * look at least 200 MiB big.  This program is a few hundred KiB when it
 * forks, so the figure is the command's own.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	double t0, wall;
	int status;
	pid_t pid;
	FILE *out;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fputs("usage: spawn_rusage OUT -- CMD [ARG...]\n", stderr);
		return 2;
	}
	t0 = now_s();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "spawn_rusage: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "spawn_rusage: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "spawn_rusage: wait4: %s\n", strerror(errno));
			return 127;
		}
	}
	wall = now_s() - t0;
	out = fopen(argv[1], "w");
	if (!out || fprintf(out, "%.6f %.6f %.6f %ld\n", wall, tv_s(ru.ru_utime),
	                    tv_s(ru.ru_stime), ru.ru_maxrss) < 0 || fclose(out) != 0) {
		fprintf(stderr, "spawn_rusage: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
