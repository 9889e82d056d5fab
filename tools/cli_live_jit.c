/* SPDX-License-Identifier: MIT */
/*
 * cli_live_jit.c - names for JIT code under `symdb query --pid`: the
 * jit_lookup callback the process cache (symdb_proc_*) asks for addresses
 * in anonymous executable memory, answered from the process's perf map
 * (/tmp/perf-PID.map).  The map is
 * opened on the first such address, as the process's own namespace sees it
 * (/proc/PID/root/tmp/perf-NSPID.map: a JIT in a container), and
 * refreshed once per miss, since the JIT keeps writing it.  A process
 * without a map (not a JIT, or one not asked to write one yet: Python 3.12
 * starts its map when told to, at run time) is tried again once per batch,
 * not once per address.  A map that exists but cannot be used (left by an
 * earlier process with the pid, unreadable) is said once on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_query.h"

struct cli_jit {
	int pid;          /* the process whose map is open (or was tried) */
	int tried;        /* this batch (or for good, once open) */
	char said[512];   /* the last reason printed for a map not opened */
	symdb_perfmap *map;
	/* Names handed out this batch, copied: a refresh for a later address
	 * of the batch moves the map's own. */
	char **names;
	size_t nnames, cap;
};

/* symdb_proc_jit_fn */
static int jit_lookup(void *arg, int pid, uint64_t addr, symdb_proc_jit *out)
{
	struct cli_jit *j = arg;
	if (!j->tried || j->pid != pid) {
		symdb_perfmap_close(j->map);
		j->map = NULL;
		j->pid = pid;
		j->tried = 1;
		char err[512] = "";
		SYMDB_OPTS(symdb_perfmap_opts, o, .flags = SYMDB_PERFMAP_IN_ROOT, .errbuf = err,
		           .errbuf_sz = sizeof err);
		int rc = symdb_perfmap_open_pid(pid, &o, &j->map);
		if (rc < 0 && rc != -ENOENT && err[0] && strcmp(err, j->said) != 0) {
			char what[64];
			snprintf(what, sizeof what, "pid %d", pid);
			cli_err(what, "%s", err);
			snprintf(j->said, sizeof j->said, "%s", err);
		}
		if (rc < 0)
			return 0; /* no map: anonymous code nothing names */
	}
	if (!j->map)
		return 0;
	SYMDB_OPTS(symdb_perfmap_sym, s);
	int rc = symdb_perfmap_lookup(j->map, addr, &s);
	if (rc == SYMDB_E_NOT_FOUND && symdb_perfmap_refresh(j->map, NULL) > 0)
		rc = symdb_perfmap_lookup(j->map, addr, &s);
	if (rc < 0)
		return 0;
	j->names = cli_query_grow(j->names, &j->cap, j->nnames + 1, sizeof *j->names);
	if (!(j->names[j->nnames] = strdup(s.name)))
		return -ENOMEM;
	out->name = j->names[j->nnames++];
	out->start = s.start;
	out->size = s.size;
	return 1;
}

symdb_proc_jit_fn cli_live_jit_fn(void **arg)
{
	struct cli_jit *j = calloc(1, sizeof *j);
	if (!j) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	*arg = j;
	return jit_lookup;
}

void cli_live_jit_batch(void *arg)
{
	struct cli_jit *j = arg;
	if (!j)
		return;
	for (size_t i = 0; i < j->nnames; i++)
		free(j->names[i]);
	j->nnames = 0;
	if (!j->map)
		j->tried = 0; /* written since, perhaps */
}

void cli_live_jit_free(void *arg)
{
	struct cli_jit *j = arg;
	if (!j)
		return;
	cli_live_jit_batch(j);
	free(j->names);
	symdb_perfmap_close(j->map);
	free(j);
}
