/* SPDX-License-Identifier: MIT */
/*
 * `symdb rm UUID|PREFIX|FILE...` and `symdb gc [--unused-for D] [--max-size S]`.
 *
 * gc always removes leftovers of builds that died (DB/tmp/ files) and orphan
 * index files (under DB/images/ but named by no catalog entry), once they
 * are older than --grace: younger ones may belong to a build in progress
 * (SPEC §12.5).  Images are then expired by last use, which is the
 * last-query time recorded in the catalog (SPEC §12.6), else the build time:
 * --unused-for removes those unused for longer than D, and --max-size then
 * removes the least recently used until the index files total at most S
 * bytes on disk (a compacted image counts its .lz4, SPEC §12.8).
 * Negative fetch answers (DB/misses/HEX, SPEC §12.9) older than --miss-age
 * (default a day) are removed too: each is an empty file, written per
 * build-id nobody had, so a node meeting many unknown builds would
 * otherwise keep one forever.
 * Every removal goes through symdb_remove() (entry first, then file), so a
 * gc killed at any point leaves at most an orphan for the next gc.  The
 * clock is cli_now(): $SYMDB_NOW in tests.
 *
 * Nothing inside DB is followed (SPEC §12.1): the walk reaches files through
 * directory descriptors and unlinks with unlinkat(); a symbolic link or a
 * foreign entry is named on stderr, left alone, and makes the exit 1.  Two
 * gc runs take turns (cli_maint_lock), and each counts only what it removed
 * itself: an entry someone else deleted first (SYMDB_E_NOT_INDEXED) or a
 * file someone else unlinked first (ENOENT) is theirs.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, unlinkat */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_maint.h"
#include "cli_target.h"

/* ---- rm ------------------------------------------------------------------- */

static int open_write(const struct cli_global *g, symdb **db)
{
	char err[1024] = "", dir[4096];
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_WRITE, .errbuf = err,
	           .errbuf_sz = sizeof err);
	int rc = cli_open_db(g->db_dir, &o, db);

	if (rc < 0) {
		cli_db_name(g, dir, sizeof dir);
		if (rc == -ENOENT)
			cli_err(dir, "no symdb database here");
		else
			cli_err_lib(dir, rc, err);
	}
	return rc;
}

static int rm_uuid(symdb *db, const char *arg, const symdb_uuid *id)
{
	char hex[2 * SYMDB_UUID_MAX + 1], eb[1024] = "";
	int rc = symdb_remove(db, id, CLI_EB_OPTS(eb, sizeof eb));

	symdb_uuid_format(id, hex);
	if (rc == SYMDB_E_NOT_INDEXED) {
		/* A path names its image by build-id: say which one is missing. */
		if (strcmp(arg, hex) != 0 && !cli_is_uuid_arg(arg))
			cli_err(arg, "not in the database (UUID %s)", hex);
		else
			cli_err(arg, "not in the database");
		return CLI_EXIT_FAILED;
	}
	if (rc < 0) {
		cli_err_lib(arg, rc, eb);
		return CLI_EXIT_FAILED;
	}
	cli_print_line("removed %s\n", hex);
	return CLI_EXIT_OK;
}

/* One argument: a UUID, a unique prefix, or a binary (each of its images). */
static int rm_one(symdb *db, const char *arg)
{
	symdb_uuid ids[64];
	int n = cli_target_uuids(db, arg, ids, sizeof ids / sizeof ids[0]), ex = CLI_EXIT_OK;

	if (n < 0)
		return -n;
	for (int k = 0; k < n; k++) {
		int r = rm_uuid(db, arg, &ids[k]);
		if (r > ex)
			ex = r;
	}
	return ex;
}

int cli_cmd_rm(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	int i = 1, ex = CLI_EXIT_OK, nargs = 0;
	symdb *db;

	for (; i < argc && argv[i][0] == '-'; i++) {
		int m = cli_opt_common(&g, "rm", argc, argv, &i);
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m == CLI_OPT_HELP)
			return CLI_EXIT_OK;
		if (m == CLI_OPT_TAKEN) {
			continue;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			cli_err(NULL, "rm: unknown option '%s' (see 'symdb help rm')", argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	nargs = argc - i;
	if (nargs == 0) {
		cli_err(NULL, "rm: no image given (see 'symdb help rm')");
		return CLI_EXIT_USAGE;
	}
	if (open_write(&g, &db) < 0)
		return CLI_EXIT_DATABASE;
	for (; i < argc; i++) {
		int r = rm_one(db, argv[i]);
		if (r > ex)
			ex = r;
	}
	symdb_close(db);
	return ex;
}

/* ---- gc ------------------------------------------------------------------- */

struct gc {
	symdb *db;
	uint64_t now, grace, unused_for, max_size, miss_age;
	int have_unused, have_max, dry_run;
	struct cli_aged aged;
	struct cli_catfiles cf;
	size_t files_removed, images_removed, misses_removed;
	uint64_t bytes_removed;
	int failed;
};

static void gc_remove_image(struct gc *gc, struct cli_aged_image *im, const char *why)
{
	char hex[2 * SYMDB_UUID_MAX + 1], tb[64], eb[1024] = "";
	int rc = 0;

	symdb_uuid_format(&im->uuid, hex);
	if (!gc->dry_run)
		rc = symdb_remove(gc->db, &im->uuid, CLI_EB_OPTS(eb, sizeof eb));
	if (rc == SYMDB_E_NOT_INDEXED)
		return; /* another gc or rm removed it first: theirs to count */
	if (rc < 0) {
		cli_err_lib(hex, rc, eb);
		gc->failed = 1;
		return;
	}
	cli_print_line("%s %s %s (%s, last used %s)\n", gc->dry_run ? "would remove" : "removed", hex,
	               im->name, why, cli_time_name(im->last_use, tb, sizeof tb));
	gc->images_removed++;
	gc->bytes_removed += im->disk_size;
	im->disk_size = 0; /* removed */
}

/* The images were loaded least recently used first (cli_aged_load). */
static void gc_expire(struct gc *gc)
{
	struct cli_aged *a = &gc->aged;
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < a->n; i++) {
		struct cli_aged_image *im = &a->img[i];
		if (gc->have_unused && cli_aged_unused(im, gc->now, gc->unused_for))
			gc_remove_image(gc, im, "unused");
		total += im->disk_size;
	}
	for (i = 0; gc->have_max && total > gc->max_size && i < a->n; i++) {
		struct cli_aged_image *im = &a->img[i];
		uint64_t sz = im->disk_size;
		if (sz == 0)
			continue;
		gc_remove_image(gc, im, "over --max-size");
		if (im->disk_size == 0)
			total -= sz;
	}
}

/* Whether the walk met f as unsafe: never followed or removed (SPEC
 * §12.1), named on stderr, an operator's matter. */
static int gc_unsafe(struct gc *gc, const struct cli_fs_visit *f)
{
	if (!f->unsafe)
		return 0;
	cli_err(f->path, "%s", f->unsafe);
	gc->failed = 1;
	return 1;
}

/* Remove f (not in a dry run): 1 when it is gone, 0 when another process
 * removed it first (theirs to count: ENOENT) or it could not be removed
 * (named on stderr). */
static int gc_unlink(struct gc *gc, const struct cli_fs_visit *f)
{
	if (gc->dry_run || unlinkat(f->dirfd, f->name, 0) == 0)
		return 1;
	if (errno != ENOENT) {
		cli_err(f->path, "cannot remove: %s", symdb_strerror(-errno));
		gc->failed = 1;
	}
	return 0;
}

/* A debuginfod fetch's directory (a partial download may hold gigabytes):
 * removed once past the grace period and its process is gone, the
 * process of a fetch in progress being alive. */
static void gc_fetch_dir(struct gc *gc, const struct cli_fs_visit *f)
{
	uint64_t bytes = 0;

	if (cli_younger(f->mtime, gc->now, gc->grace) || cli_fetch_dir_live(f))
		return;
	if (cli_fs_remove_dir(f, gc->dry_run, &bytes) < 0) {
		gc->failed = 1;
		return;
	}
	cli_print_line("%s %s/ (leftover of a fetch that died, %llu bytes)\n",
	               gc->dry_run ? "would remove" : "removed", f->rel, (unsigned long long)bytes);
	gc->files_removed++;
}

static int gc_visit(const struct cli_fs_visit *f, void *arg)
{
	struct gc *gc = arg;

	if (gc_unsafe(gc, f))
		return 0;
	if (f->fetch_pid) {
		gc_fetch_dir(gc, f);
		return 0;
	}
	enum cli_file_role role = f->is_tmp ? CLI_FILE_STRAY : cli_catfiles_role(&gc->cf, f);

	if (role == CLI_FILE_INDEX)
		return 0;
	if (cli_younger(f->mtime, gc->now, gc->grace))
		return 0;
	if (!gc->dry_run && role == CLI_FILE_REDUNDANT) {
		int removed, r = symdb_cold_remove_redundant(gc->db, f->rel, NULL, &removed);
		if (r == 0 && !removed)
			return 0; /* a compaction made it the only form, or another gc removed it */
		if (r < 0) {
			cli_err(f->path, "cannot remove: %s", symdb_strerror(r));
			gc->failed = 1;
			return 0;
		}
	} else if (role != CLI_FILE_REDUNDANT && !gc_unlink(gc, f)) {
		return 0;
	}
	cli_print_line("%s %s (%s)\n", gc->dry_run ? "would remove" : "removed", f->rel,
	               f->is_tmp                   ? "leftover of a build"
	               : role == CLI_FILE_REDUNDANT ? "redundant cold copy"
	                                            : "orphan");
	gc->files_removed++;
	return 0;
}

/* Whether name is a build-id as DB/misses names them: 2 to 64 lowercase
 * hex digits, an even number.  Anything else there is not symdb's: left. */
static int miss_name(const char *name)
{
	size_t n = strspn(name, "0123456789abcdef");
	return name[n] == 0 && n >= 2 && n <= 64 && n % 2 == 0;
}

static int gc_visit_miss(const struct cli_fs_visit *f, void *arg)
{
	struct gc *gc = arg;
	char tb[64];

	if (gc_unsafe(gc, f))
		return 0;
	/* An mtime in the future is no answer the fetches trust (they read
	 * the real clock, not $SYMDB_NOW): dead weight.  A minute of slack
	 * keeps an answer a fetch writes while this gc runs. */
	int future = f->mtime > (uint64_t)time(NULL) + 60;
	if (!miss_name(f->name) || (!future && cli_younger(f->mtime, gc->now, gc->miss_age)))
		return 0;
	if (!gc_unlink(gc, f)) /* (ENOENT: a fetch found it, or another gc) */
		return 0;
	cli_print_line("%s %s (negative fetch answer of %s)\n",
	               gc->dry_run ? "would remove" : "removed", f->rel,
	               cli_time_name(f->mtime, tb, sizeof tb));
	gc->misses_removed++;
	return 0;
}

static int gc_args(struct gc *gc, struct cli_global *g, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v, *opt = argv[i]; /* named in a message: i may move to its value */
		int m = cli_opt_common(g, "gc", argc, argv, &i);
		if (m < 0)
			return -1;
		if (m == CLI_OPT_HELP)
			return 1;
		if (m == CLI_OPT_TAKEN) {
			continue;
		} else if ((m = cli_opt_value(argc, argv, &i, "--unused-for", &v)) != 0) {
			if (m < 0 || cli_parse_duration(v, &gc->unused_for) < 0)
				goto bad;
			gc->have_unused = 1;
		} else if ((m = cli_opt_value(argc, argv, &i, "--max-size", &v)) != 0) {
			if (m < 0 || cli_parse_size(v, &gc->max_size) < 0)
				goto bad;
			gc->have_max = 1;
		} else if ((m = cli_opt_value(argc, argv, &i, "--grace", &v)) != 0) {
			if (m < 0 || cli_parse_duration(v, &gc->grace) < 0)
				goto bad;
		} else if ((m = cli_opt_value(argc, argv, &i, "--miss-age", &v)) != 0) {
			if (m < 0 || cli_parse_duration(v, &gc->miss_age) < 0)
				goto bad;
		} else if (!strcmp(argv[i], "-n") || !strcmp(argv[i], "--dry-run")) {
			gc->dry_run = 1;
		} else {
			cli_err(NULL, "gc: unexpected argument '%s' (see 'symdb help gc')", argv[i]);
			return -1;
		}
		continue;
bad:
		if (m > 0)
			cli_err(NULL, "gc: bad value '%s' for %.*s (see 'symdb help gc')", v,
			        (int)strcspn(opt, "="), opt);
		return -1;
	}
	return 0;
}

int cli_cmd_gc(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct gc gc = { .grace = CLI_GRACE_DEFAULT, .miss_age = CLI_MISS_AGE_DEFAULT };
	int lock, rc = gc_args(&gc, &g, argc, argv);

	if (rc)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (open_write(&g, &gc.db) < 0)
		return CLI_EXIT_DATABASE;
	gc.now = cli_now();
	/* One gc (or verify --repair) at a time: the next one starts from
	 * what this one left. */
	lock = gc.dry_run ? -ENOENT : cli_maint_lock(symdb_dir(gc.db));
	rc = lock < 0 && lock != -ENOENT ? lock : cli_aged_load(gc.db, &gc.aged);
	if (rc == 0)
		gc_expire(&gc);
	if (rc == 0)
		rc = cli_catfiles_load(gc.db, &gc.cf);
	if (rc == 0)
		rc = cli_fs_walk(symdb_dir(gc.db), gc_visit, &gc);
	if (rc == 0)
		rc = cli_fs_walk_misses(symdb_dir(gc.db), gc_visit_miss, &gc);
	if (rc < 0)
		cli_err(symdb_dir(gc.db), "cannot read the catalog: %s", symdb_strerror(rc));
	else
		cli_print_line("%zu images (%llu bytes) and %zu stray files %s\n", gc.images_removed,
		               (unsigned long long)gc.bytes_removed, gc.files_removed,
		               gc.dry_run ? "would be removed" : "removed");
	if (rc >= 0 && gc.misses_removed)
		cli_print_line("%zu negative fetch answers %s\n", gc.misses_removed,
		               gc.dry_run ? "would be forgotten" : "forgotten");
	cli_aged_free(&gc.aged);
	cli_catfiles_free(&gc.cf);
	if (lock >= 0)
		close(lock);
	symdb_close(gc.db);
	return rc < 0 ? CLI_EXIT_DATABASE : gc.failed ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}
