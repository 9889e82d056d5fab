/* SPDX-License-Identifier: MIT */
/*
 * sandbox_signal.h - what the SIGSYS handlers of the two sandboxes
 * (indexer_sandbox.c, fetch_sandbox.c) share: writing their report and
 * dying by the signal, with async-signal-safe calls only.
 */
#ifndef SYMDB_SANDBOX_SIGNAL_H
#define SYMDB_SANDBOX_SIGNAL_H

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

/* Write all of p[0..n) to fd, as a signal handler may: write(2) only; a
 * failure drops the rest (nobody is left to tell). */
static inline void sandbox_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* From inside the handler of sig: die by sig, its default action, so the
 * parent sees WTERMSIG == sig.  sig is blocked in its own handler: it is
 * raised pending, then unblocked. */
static inline void sandbox_die_by(int sig)
{
	struct sigaction dfl;
	sigset_t s;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	raise(sig);
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	_exit(128 + sig); /* not reached */
}

#endif /* SYMDB_SANDBOX_SIGNAL_H */
