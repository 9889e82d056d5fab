/* SPDX-License-Identifier: MIT */
/*
 * fetch_spawn.c - one run of the symdb-fetch executable (SPEC §12.9) under
 * a wall-clock deadline.
 *
 * The network is touched only by that child: a resolver or TLS library
 * that hangs, a server that accepts and never answers, or a bug in libcurl
 * or libdebuginfod costs this process at most the deadline, after which
 * the child's whole process group is killed.  As for symdb-indexer
 * (build_spawn.c), posix_spawn runs no code of ours between fork and exec,
 * so any thread may call this; the child gets the environment the caller
 * built (this library reads none), stdin on /dev/null, its status pipe as
 * stdout, stderr only when it may draw progress there, the download
 * descriptors as 3 and 4, nothing else, and a session (so a process group)
 * of its own, without a controlling terminal.
 * What it downloads is judged here, never by it.
 */
#define _GNU_SOURCE /* posix_spawn_file_actions_addclosefrom_np, pipe2 */
#include "fetch_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FETCH_LIFT_FD 10 /* above the child's 0..4, so dup2 never clobbers one */
/* How often the wait for the fetcher looks at job->cancel: a signal handler
 * in another thread does not interrupt this thread's poll. */
#define FETCH_TICK_MS 100

int64_t rd_fetch_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fetch_cancelled(const struct rd_fetch_job *j)
{
	return rd_fetch_cancelled(j->cancel);
}

/* Kill the child's process group (anything it started dies with it). */
static void fetch_kill(pid_t pid)
{
	if (kill(-pid, SIGKILL) < 0)
		kill(pid, SIGKILL);
}

static int fetch_spawn(struct rd_fetch_job *j, int wfd, pid_t *pid)
{
	char num[32];
	char *argv[8];
	int n = 0, lifted[3] = { -1, -1, -1 }, rc = 0;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none;

	argv[n++] = (char *)j->exe;
	snprintf(num, sizeof num, "%llu", (unsigned long long)j->max_bytes);
	argv[n++] = "--max-bytes";
	argv[n++] = num;
	if (j->progress)
		argv[n++] = "--progress";
	argv[n++] = (char *)j->mode;
	argv[n++] = (char *)j->what;
	argv[n] = NULL;
	/* Our descriptors may be 3 or 4 themselves: lift them first. */
	int src[3] = { wfd, j->out[0], j->out[1] };
	for (int i = 0; i < 3 && rc == 0; i++)
		if (src[i] >= 0 && (lifted[i] = fcntl(src[i], F_DUPFD_CLOEXEC, FETCH_LIFT_FD)) < 0)
			rc = -errno;
	if (rc == 0) {
		sigemptyset(&none);
		posix_spawn_file_actions_init(&fa);
		posix_spawnattr_init(&at);
		posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, lifted[0], STDOUT_FILENO);
		if (!j->progress)
			posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
		for (int i = 1; i < 3; i++)
			if (lifted[i] >= 0)
				posix_spawn_file_actions_adddup2(&fa, lifted[i], 2 + i);
		posix_spawn_file_actions_addclosefrom_np(&fa, 5);
		posix_spawnattr_setsigmask(&at, &none);
		/* A session of its own, so also a process group of its own
		 * (fetch_kill) and no controlling terminal: a fetcher taken
		 * over cannot open /dev/tty and push input into it. */
		posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSID);
		rc = -posix_spawn(pid, j->exe, &fa, &at, argv, j->env);
		posix_spawnattr_destroy(&at);
		posix_spawn_file_actions_destroy(&fa);
	}
	for (int i = 0; i < 3; i++)
		if (lifted[i] >= 0)
			close(lifted[i]);
	return rc;
}

/* Read the status line until EOF, the deadline or the cancel flag: 0,
 * -ETIMEDOUT or -EINTR. */
static int fetch_read_line(struct rd_fetch_job *j, int rfd, char *buf, size_t sz)
{
	size_t len = 0;

	for (;;) {
		int64_t left = j->deadline_ms - rd_fetch_now_ms();
		struct pollfd p = { .fd = rfd, .events = POLLIN };

		if (fetch_cancelled(j))
			return -EINTR;
		if (left <= 0)
			return -ETIMEDOUT;
		int r = poll(&p, 1, left > FETCH_TICK_MS ? FETCH_TICK_MS : (int)left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		ssize_t n = read(rfd, buf + len, sz - 1 - len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0 || (len += (size_t)n) >= sz - 1)
			break;
	}
	buf[len] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Reap pid, killing it at the deadline or once cancelled (*killed set):
 * its wait status. */
static int fetch_reap(const struct rd_fetch_job *j, pid_t pid, int *killed)
{
	int st = 0;
	long nap = 1000 * 1000;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return st;
		if (!*killed && (rd_fetch_now_ms() >= j->deadline_ms || fetch_cancelled(j))) {
			*killed = 1;
			fetch_kill(pid);
		}
		struct timespec ts = { 0, nap };
		nanosleep(&ts, NULL);
		if (nap < 50 * 1000 * 1000)
			nap *= 2;
	}
}

int rd_fetch_run(struct rd_fetch_job *j)
{
	char buf[sizeof j->line + 16];
	int p[2], rc, killed = 0;
	pid_t pid = 0;

	j->line[0] = 0;
	if (fetch_cancelled(j)) {
		snprintf(j->line, sizeof j->line, "interrupted");
		return -EINTR;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	rc = fetch_spawn(j, p[1], &pid);
	close(p[1]);
	if (rc) {
		close(p[0]);
		snprintf(j->line, sizeof j->line, "cannot run %s: %s", j->exe, strerror(-rc));
		return rc;
	}
	rc = fetch_read_line(j, p[0], buf, sizeof buf);
	close(p[0]);
	if (rc == -ETIMEDOUT || rc == -EINTR) {
		fetch_kill(pid);
		killed = 1;
	}
	int st = fetch_reap(j, pid, &killed);
	/* Cancelled, even once the line was read: the caller stops here, and
	 * nothing of this download is published. */
	if (fetch_cancelled(j)) {
		snprintf(j->line, sizeof j->line, "interrupted");
		return -EINTR;
	}
	if (killed) {
		snprintf(j->line, sizeof j->line, "no answer within the deadline");
		return -ETIMEDOUT;
	}
	/* The line is written once the download is complete: an exit status
	 * other than the line's (a leak checker's at exit, in a sanitizer
	 * build) does not undo it; a signal might have cut the write. */
	if (strncmp(buf, "found ", 6) == 0 && WIFEXITED(st)) {
		snprintf(j->line, sizeof j->line, "%.1000s", buf + 6);
		return 0;
	}
	if (strcmp(buf, "missing") == 0 && WIFEXITED(st))
		return SYMDB_E_NOT_FOUND;
	if (strncmp(buf, "error ", 6) == 0)
		snprintf(j->line, sizeof j->line, "%.1000s", buf + 6);
	else if (WIFSIGNALED(st))
		snprintf(j->line, sizeof j->line, "%s died: signal %d", j->exe, WTERMSIG(st));
	else
		snprintf(j->line, sizeof j->line, "%s failed (exit status %d)", j->exe,
		         WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return -EIO;
}
