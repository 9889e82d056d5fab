/* SPDX-License-Identifier: MIT */
/*
 * test_format_io.c - unit tests of format_io.c: whole reads and writes
 * across short counts (a pipe fed in small pieces) and EINTR (an interval
 * timer whose handler is installed without SA_RESTART), reads that stop at
 * end of file, errors as -errno, and fmt_header_read() on a file shorter
 * than a header.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "format_io.h"

#define BIG (4u << 20)

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
}

/* SIGALRM every 200 µs, interrupting blocked reads and writes. */
static void timer_on(int on)
{
	struct sigaction sa;
	struct itimerval it;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on ? on_alarm : SIG_DFL;
	memset(&it, 0, sizeof it);
	if (on)
		it.it_interval.tv_usec = it.it_value.tv_usec = 200;
	/* The handler is in place before the timer starts and stays until it
	 * has stopped: a tick between the two calls must find on_alarm, since
	 * SIG_DFL for SIGALRM ends the process. */
	if (on)
		sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART */
	setitimer(ITIMER_REAL, &it, NULL);
	if (!on)
		sigaction(SIGALRM, &sa, NULL);
}

static void pause_half_ms(void)
{
	struct timespec ts = { 0, 500000 };

	nanosleep(&ts, NULL);
}

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 131 + (i >> 9));
}

/* A child writes BIG bytes into the pipe in small, slow pieces; the parent
 * reads them in one call. */
static void test_read_pieces(void)
{
	int p[2];
	uint8_t *buf = malloc(BIG + 16);
	pid_t pid;

	CHECK(buf && pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		uint8_t piece[1000];
		size_t i = 0;

		close(p[0]);
		while (i < BIG) {
			size_t n = BIG - i < sizeof piece ? BIG - i : sizeof piece;
			for (size_t k = 0; k < n; k++)
				piece[k] = pattern(i + k);
			if (write(p[1], piece, n) != (ssize_t)n)
				_exit(1);
			i += n;
			if (i % 65536 < sizeof piece)
				pause_half_ms();
		}
		_exit(0);
	}
	close(p[1]);
	ticks = 0;
	timer_on(1);
	ptrdiff_t got = fmt_read_full(p[0], buf, BIG + 16); /* 16 past the end: EOF */
	timer_on(0);
	CHECK(got == (ptrdiff_t)BIG);
	CHECK(ticks > 0); /* the read was interrupted */
	int same = 1;
	for (size_t i = 0; got == (ptrdiff_t)BIG && i < BIG; i++)
		same &= buf[i] == pattern(i);
	CHECK(same);
	CHECK(fmt_read_full(p[0], buf, 16) == 0);
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(p[0]);
	free(buf);
}

/* The parent writes BIG bytes into a pipe a slow child drains, under the
 * timer: every byte arrives once, in order. */
static void test_write_pieces(void)
{
	int p[2];
	uint8_t *buf = malloc(BIG);
	pid_t pid;

	CHECK(buf && pipe(p) == 0);
	for (size_t i = 0; buf && i < BIG; i++)
		buf[i] = pattern(i);
	pid = fork();
	if (pid == 0) {
		uint8_t piece[777];
		size_t i = 0;
		ssize_t n;

		close(p[1]);
		while ((n = read(p[0], piece, sizeof piece)) > 0) {
			for (ssize_t k = 0; k < n; k++)
				if (piece[k] != pattern(i + (size_t)k))
					_exit(2);
			i += (size_t)n;
			if (i % 65536 < sizeof piece)
				pause_half_ms();
		}
		_exit(i == BIG ? 0 : 1);
	}
	close(p[0]);
	ticks = 0;
	timer_on(1);
	CHECK(fmt_write_full(p[1], buf, BIG) == 0);
	timer_on(0);
	close(p[1]);
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	free(buf);
}

static void test_files(void)
{
	char path[] = "/tmp/symdb-test-io-XXXXXX";
	const char *tmp = getenv("TMPDIR");
	char name[4096];
	uint8_t h[FMT_HEADER_SIZE], data[300];
	int fd;

	snprintf(name, sizeof name, "%s/symdb-io-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(name);
	if (fd < 0) {
		fd = mkstemp(path);
		snprintf(name, sizeof name, "%s", path);
	}
	CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = pattern(i);
	/* Shorter than a header: damaged, not an I/O error. */
	CHECK(fmt_write_full(fd, data, FMT_HEADER_SIZE - 1) == 0);
	CHECK(fmt_header_read(fd, h) == SYMDB_E_CORRUPT);
	CHECK(fmt_write_full(fd, data + FMT_HEADER_SIZE - 1,
	                     sizeof data - (FMT_HEADER_SIZE - 1)) == 0);
	CHECK(fmt_header_read(fd, h) == 0 && memcmp(h, data, sizeof h) == 0);
	uint8_t back[400];
	CHECK(fmt_pread_full(fd, back, sizeof back, 10) == (ptrdiff_t)(sizeof data - 10));
	CHECK(memcmp(back, data + 10, sizeof data - 10) == 0);
	CHECK(fmt_pread_full(fd, back, sizeof back, 1000) == 0);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(fmt_read_full(fd, back, 5) == 5 && memcmp(back, data, 5) == 0);
	close(fd);
	unlink(name);
	/* Errors come back as -errno. */
	CHECK(fmt_read_full(fd, back, 1) == -EBADF);
	CHECK(fmt_pread_full(fd, back, 1, 0) == -EBADF);
	CHECK(fmt_write_full(fd, back, 1) == -EBADF);
	CHECK(fmt_header_read(fd, h) == -EBADF);
	CHECK(fmt_write_full(fd, back, 0) == 0);
}

int main(void)
{
	test_read_pieces();
	test_write_pieces();
	test_files();
	return check_exit();
}
