/* SPDX-License-Identifier: MIT */
/*
 * fetch_internal.h - what the files of symdb_fetch() share (SPEC §12.9):
 *   fetch_api.c     symdb_fetch(): the sources in order, publishing
 *   fetch_spawn.c   one run of the symdb-fetch executable under a deadline
 *   fetch_misses.c  the negative cache, DB/misses/HEX
 * Internal: not installed.
 */
#ifndef SYMDB_FETCH_INTERNAL_H
#define SYMDB_FETCH_INTERNAL_H

#include <signal.h>
#include <stdint.h>

#include "format_layout.h"
#include "reader_internal.h"
#include "symdb_fetch.h"

#define RD_FETCH_MISSES FMT_LAYOUT_MISSES /* DB/misses/HEX (SPEC §12.9) */

/* One run of symdb-fetch: MODE WHAT with env, descriptors out[0] and out[1]
 * (or -1) as its 3 and 4. */
struct rd_fetch_job {
	const char *exe, *mode, *what;
	char *const *env;
	int out[2];
	uint64_t max_bytes;
	int progress;
	int64_t deadline_ms; /* rd_fetch_now_ms() time when it is killed */
	const volatile sig_atomic_t *cancel; /* killed too once *cancel != 0 (or NULL) */
	char line[1024];     /* out: its status line, without "found "/"error " */
};

/* CLOCK_MONOTONIC in milliseconds. */
RD_HIDDEN int64_t rd_fetch_now_ms(void);

/* Run job: 0 when it found something (line holds the sizes),
 * SYMDB_E_NOT_FOUND when the source has no such file, -ETIMEDOUT when the
 * deadline passed (it was killed), -EINTR when *cancel was set (killed, or
 * never started), -EIO for any other failure (line holds the reason), or
 * -errno when it could not be started. */
RD_HIDDEN int rd_fetch_run(struct rd_fetch_job *job);

/* 1 when DB/misses/HEX was written less than ttl_s seconds ago (*age_s
 * set), else 0. */
RD_HIDDEN int rd_fetch_miss_fresh(const char *dbdir, const char *hex, uint32_t ttl_s,
                                  uint32_t *age_s);
/* Write DB/misses/HEX now.  0 or -errno (a cache that cannot be written
 * costs only a later refetch). */
RD_HIDDEN int rd_fetch_miss_put(const char *dbdir, const char *hex);
/* Remove DB/misses/HEX.  0 (also when absent) or -errno. */
RD_HIDDEN int rd_fetch_miss_drop(const char *dbdir, const char *hex);

/* Whether *cancel (symdb_fetch_opts.cancel, NULL: never) is set.  An
 * atomic load: the flag is set by a signal handler or by another thread
 * (a stopping server), and a plain read of it from this one would be a
 * data race. */
static inline int rd_fetch_cancelled(const volatile sig_atomic_t *cancel)
{
	return cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED) != 0;
}

#endif /* SYMDB_FETCH_INTERNAL_H */
