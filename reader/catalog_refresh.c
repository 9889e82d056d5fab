/* SPDX-License-Identifier: MIT */
/*
 * catalog_refresh.c - a long-lived handle follows a catalog replaced under
 * it (SPEC §12.1, "A replaced catalog").
 *
 * Why: `symdb reindex` creates DB/catalog anew when it is missing, and moves
 * a damaged one aside for a new one, so the data.mdb at DB/catalog is then
 * another file.  A process that opened the old one (`symdb serve`, a
 * profiler backend holding a symdb_db) went on reading that file's last
 * snapshot: every image indexed since was "not indexed" to it, its own
 * writes were refused (cat_lock_same), and only a restart helped, with
 * nothing to say so.  So, at most once a second, when a caller looks an image
 * up or asks whether the catalog changed (rd_catalog_generation), the
 * handle compares data.mdb's identity with the file it opened; when it
 * differs, it opens the new catalog with every check of an open and swaps it
 * in.  A catalog that is missing, or replaced by one that does not open, is
 * not swapped: the old one is all there is until a good one appears.
 *
 * The swap holds the handle's `swap` lock exclusively, which every
 * transaction of the handle holds shared, and keeps the rule of a map
 * resize (catalog_txn.c): only a thread that holds no transaction and no
 * other library lock calls in here.  It waits for the transactions in flight at
 * most CAT_SWAP_WAIT_NS, then gives up until the next look, so no
 * transaction ever runs on a closed environment.  One refresh at a time
 * (c->refresh).
 *
 * Environments are shared by every handle of the process on the same
 * files (catalog_env.c), so letting go of the one swapped out closes it
 * only when no other handle holds it: no lock of another handle is lost.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_rwlock_timedwrlock, lstat */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "catalog_internal.h"
#include "format_layout.h"

#define CAT_RECHECK_NS   1000000000ull /* one stat(2) a second at most */
#define CAT_SWAP_WAIT_NS 100000000ull  /* for the transactions in flight */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cat_refresh_arm(rd_catalog *c)
{
	atomic_store(&c->recheck_ns, clock_ns(CLOCK_MONOTONIC) + CAT_RECHECK_NS);
}

/* Whether DB/catalog/data.mdb now is another file than the one c opened;
 * a missing one is not (nothing to open instead). */
static int data_replaced(const rd_catalog *c)
{
	char path[4096];
	struct stat st;
	size_t n;

	if (fmt_layout_dir(path, sizeof path, c->dir, FMT_LAYOUT_CATALOG) != 0)
		return 0;
	n = strlen(path);
	if ((size_t)snprintf(path + n, sizeof path - n, "/" CAT_DATA_FILE) >= sizeof path - n)
		return 0;
	if (lstat(path, &st) < 0)
		return 0;
	return st.st_dev != c->e->data_dev || st.st_ino != c->e->data_ino;
}

/* Everything an open sets up for one environment, exchanged between c and
 * n.  The named databases' handles are written only when they differ: both
 * opens create them in one order, so they never do, and a thread reading
 * one before it takes `swap` (cat_scan_begin's argument) reads a value
 * nobody writes. */
static void swap_envs(rd_catalog *c, rd_catalog *n)
{
	struct cat_env *e = c->e;
	MDB_dbi dbi;
	int has;

	c->e = n->e;
	n->e = e;
#define CAT_SWAP_DBI(f)                 \
	if (c->f != n->f) {             \
		dbi = c->f;             \
		c->f = n->f;            \
		n->f = dbi;             \
	}
	CAT_SWAP_DBI(images)
	CAT_SWAP_DBI(names)
	CAT_SWAP_DBI(meta)
	CAT_SWAP_DBI(used)
	CAT_SWAP_DBI(paths)
#undef CAT_SWAP_DBI
	has = c->has_used;
	c->has_used = n->has_used;
	n->has_used = has;
	has = c->has_paths;
	c->has_paths = n->has_paths;
	n->has_paths = has;
}

/* Under c->refresh: open the replacement (or take the one opened at an
 * earlier look) and swap it in.  1 when swapped.  A replacement that could
 * not be swapped yet waits in c->next.  The environment swapped out is let
 * go of at once: no transaction of c runs on it any more (`swap`), and
 * other handles on it hold it themselves (catalog_env.c). */
static int reopen(rd_catalog *c)
{
	rd_catalog *n = c->next;
	struct timespec until;
	uint64_t t;

	if (!n && (!data_replaced(c) ||
	           rd_catalog_open(c->dir, c->flags & RD_CAT_WRITE, &n, NULL, 0) != 0))
		return 0;
	c->next = n;
	t = clock_ns(CLOCK_REALTIME) + CAT_SWAP_WAIT_NS;
	until.tv_sec = (time_t)(t / 1000000000u);
	until.tv_nsec = (long)(t % 1000000000u);
	if (pthread_rwlock_timedwrlock(&c->swap, &until) != 0)
		return 0; /* transactions in flight: the next look swaps it */
	swap_envs(c, n);
	atomic_fetch_add(&c->reopened, 1);
	pthread_rwlock_unlock(&c->swap);
	c->next = NULL;
	rd_catalog_close(n); /* n now holds the old environment */
	return 1;
}

int rd_catalog_refresh(rd_catalog *c, int now)
{
	uint64_t t = clock_ns(CLOCK_MONOTONIC), due = atomic_load(&c->recheck_ns);
	int swapped;

	if (!now && (t < due || !atomic_compare_exchange_strong(&c->recheck_ns, &due,
	                                                        t + CAT_RECHECK_NS)))
		return 0;
	if (now)
		pthread_mutex_lock(&c->refresh);
	else if (pthread_mutex_trylock(&c->refresh) != 0)
		return 0; /* another thread is at it */
	swapped = reopen(c);
	pthread_mutex_unlock(&c->refresh);
	return swapped;
}
