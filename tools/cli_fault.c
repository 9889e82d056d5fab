/* SPDX-License-Identifier: MIT */
/*
 * cli_fault.c - the handler symdb.h asks a long-running reader to install.
 * A read past the end of an index file that was truncated while mapped
 * raises SIGBUS; the handler hands the address to symdb_fault_recover(),
 * which replaces the rest of that mapping by zero pages and marks the image
 * damaged, and returns so that the read is retried.  Anything else (a fault
 * outside every index mapping, a SIGBUS sent by kill) gets the default
 * action, as if there were no handler.  The library keeps no global state;
 * the command line may, so the handle lives here.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

#include "cli_fault.h"

/* Read from the handler, on any thread: a lock-free atomic. */
static _Atomic(symdb *) guarded;
/* Faults recovered so far (cli_fault_count). */
static atomic_ulong recovered;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (symdb_fault_recover(atomic_load(&guarded), si->si_addr) > 0) {
		atomic_fetch_add(&recovered, 1);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when this handler returns */
}

void cli_fault_guard(symdb *db)
{
	static int installed;
	atomic_store(&guarded, db);
	if (installed)
		return;
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	installed = sigaction(SIGBUS, &sa, NULL) == 0;
}

void cli_fault_unguard(void)
{
	atomic_store(&guarded, NULL);
}

unsigned long cli_fault_count(void)
{
	return atomic_load(&recovered);
}
