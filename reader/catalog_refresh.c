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
 * The swap holds `resize` exclusively, as a map resize does, and keeps its
 * rule (catalog_txn.c): only a thread that holds no transaction and no other
 * library lock calls in here.  It waits for the transactions in flight at
 * most CAT_SWAP_WAIT_NS, then gives up until the next look, so no
 * transaction ever runs on a closed environment.  One refresh at a time
 * (c->refresh): two would open the same new file twice in one process,
 * which LMDB forbids (closing either drops the process's locks on it).
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
	return st.st_dev != c->data_dev || st.st_ino != c->data_ino;
}

#define CAT_SWAP(a, b)                  \
	do {                            \
		__typeof__(a) t_ = (a); \
		(a) = (b);              \
		(b) = t_;               \
	} while (0)

/* Everything an open sets up for one environment, exchanged between c and
 * n (whose close then closes c's old environment). */
static void swap_envs(rd_catalog *c, rd_catalog *n)
{
	CAT_SWAP(c->env, n->env);
	CAT_SWAP(c->images, n->images);
	CAT_SWAP(c->names, n->names);
	CAT_SWAP(c->meta, n->meta);
	CAT_SWAP(c->used, n->used);
	CAT_SWAP(c->has_used, n->has_used);
	CAT_SWAP(c->paths, n->paths);
	CAT_SWAP(c->has_paths, n->has_paths);
	CAT_SWAP(c->lock_dev, n->lock_dev);
	CAT_SWAP(c->lock_ino, n->lock_ino);
	CAT_SWAP(c->lock_known, n->lock_known);
	CAT_SWAP(c->data_dev, n->data_dev);
	CAT_SWAP(c->data_ino, n->data_ino);
}

/* Under c->refresh: open the replacement and swap it in.  1 when swapped. */
static int reopen(rd_catalog *c)
{
	rd_catalog *n;
	struct timespec until;
	uint64_t t;

	if (!data_replaced(c) ||
	    rd_catalog_open(c->dir, c->flags & RD_CAT_WRITE, &n, NULL, 0) != 0)
		return 0;
	t = clock_ns(CLOCK_REALTIME) + CAT_SWAP_WAIT_NS;
	until.tv_sec = (time_t)(t / 1000000000u);
	until.tv_nsec = (long)(t % 1000000000u);
	if (pthread_rwlock_timedwrlock(&c->resize, &until) != 0) {
		rd_catalog_close(n);
		return 0;
	}
	swap_envs(c, n);
	atomic_fetch_add(&c->reopened, 1);
	pthread_rwlock_unlock(&c->resize);
	rd_catalog_close(n); /* the old environment, no transaction left on it */
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
