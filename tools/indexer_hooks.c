/* SPDX-License-Identifier: MIT */
/*
 * indexer_hooks.c - the failures the test build of symdb-indexer makes on
 * purpose (indexer_hooks.h): the crashes the builder must survive (segv,
 * abort, hang, oom), the calls the sandbox must stop (open, socket,
 * execve, fork, ptrace), and a use after free whose sanitizer report must
 * get through the filter.  Each runs where a parser bug would: after a temp
 * file is written, before it is reported, with the limits and the seccomp
 * filter in force.  A forbidden call that succeeds is reported as such, so
 * a test cannot mistake a missing filter for a working one.
 */
#define _GNU_SOURCE /* syscall */
#include "indexer_hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The hook's own error, as the end record carries it. */
static int hook_err(char *eb, size_t ebsz, const char *what)
{
	snprintf(eb, ebsz, "test hook: %s was allowed", what);
	return -EPERM;
}

static int hook_segv(char *eb, size_t ebsz)
{
	(void)eb, (void)ebsz;
	signal(SIGSEGV, SIG_DFL); /* past a sanitizer's handler */
	raise(SIGSEGV);
	return 0;
}

static int hook_abort(char *eb, size_t ebsz)
{
	(void)eb, (void)ebsz;
	abort();
}

/* Sleep for ever on a futex (pause(2) is not in the filter's list). */
static int hook_hang(char *eb, size_t ebsz)
{
	static int never;

	(void)eb, (void)ebsz;
	for (;;)
		syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return 0;
}

/* Reserve (never touch) address space until RLIMIT_AS says no, as a
 * runaway allocation in a parser would. */
static int hook_oom(char *eb, size_t ebsz)
{
	void *chunks[4096];
	size_t n = 0;

	while (n < 4096 && (chunks[n] = malloc(256u << 20)) != NULL)
		n++;
	while (n)
		free(chunks[--n]);
	snprintf(eb, ebsz, "out of memory");
	return -ENOMEM;
}

static int hook_open(char *eb, size_t ebsz)
{
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return hook_err(eb, ebsz, "open(\"/etc/passwd\")");
}

static int hook_socket(char *eb, size_t ebsz)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	close(fd);
	return hook_err(eb, ebsz, "socket()");
}

static int hook_execve(char *eb, size_t ebsz)
{
	char *const argv[] = { (char *)"/bin/true", NULL }, *const envp[] = { NULL };

	execve(argv[0], argv, envp);
	return errno == ENOENT ? 0 : hook_err(eb, ebsz, "execve()");
}

static int hook_fork(char *eb, size_t ebsz)
{
	pid_t p = fork();

	if (p == 0)
		_exit(0);
	if (p < 0)
		return 0;
	waitpid(p, NULL, 0);
	return hook_err(eb, ebsz, "fork()");
}

/* PTRACE_TRACEME: the one request that harms nothing if it is allowed. */
static int hook_ptrace(char *eb, size_t ebsz)
{
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		return 0;
	return hook_err(eb, ebsz, "ptrace()");
}

/* A read after free: what the sanitizer build's report must survive the
 * filter for (indexer_sandbox.c, sbx_allow_sanitizer).  Undefined
 * behaviour elsewhere: only a sanitizer build's tests use it. */
static int hook_use_after_free(char *eb, size_t ebsz)
{
	char *p = malloc(8);
	char *volatile q = p;
	(void)eb, (void)ebsz;
	free(p);
	return q[1];
}

static const struct {
	const char *name;
	int (*fn)(char *, size_t);
} hooks[] = {
	{ "segv", hook_segv },     { "abort", hook_abort },   { "hang", hook_hang },
	{ "oom", hook_oom },       { "open", hook_open },     { "socket", hook_socket },
	{ "execve", hook_execve }, { "fork", hook_fork },     { "ptrace", hook_ptrace },
	{ "use-after-free", hook_use_after_free },
};

int idx_test_hook_args(int argc, char **argv, int (**hook)(char *, size_t))
{
	*hook = NULL;
	if (argc < 3 || strcmp(argv[1], "--test-hook") != 0)
		return 0;
	for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++)
		if (!strcmp(argv[2], hooks[i].name)) {
			*hook = hooks[i].fn;
			return 2;
		}
	fprintf(stderr, "symdb-indexer: unknown test hook: %s\n", argv[2]);
	return -1;
}
