/* SPDX-License-Identifier: MIT */
/*
 * cli_fetch_id.h - one image fetched by build-id into the database, for the
 * profile commands (`symdb pprof`, `symdb perf`): a mapping or DSO whose
 * file is gone or another build, named by a build-id the database lacks.
 */
#ifndef SYMDB_CLI_FETCH_ID_H
#define SYMDB_CLI_FETCH_ID_H

#include "cli_util.h"
#include "symdb.h"
#include "symdb_fetch.h"

/* What one run's fetches share: after a fetch runs out of time no other is
 * tried, so a dead server costs a run one deadline, not one per image. */
struct cli_fetch_run {
	symdb *db;
	const symdb_fetch_opts *fo; /* NULL: no source (nothing is fetched) */
	int dead;
	void (*before_line)(void *arg); /* clears a progress line; may be NULL */
	void *arg;
};

/* Fetches id from fo's sources and publishes it into f->db.  0 when it is
 * there now; SYMDB_E_NOT_FOUND when no source has it (said by no line: the
 * caller counts it among its unknown images); another failure is one line
 * on stderr with the fetch's reason ("symdb: HEX: URL: HTTP status 500").
 * -1 without a source or after a dead one. */
CLI_HIDDEN int cli_fetch_id(struct cli_fetch_run *f, const symdb_uuid *id);

#endif /* SYMDB_CLI_FETCH_ID_H */
