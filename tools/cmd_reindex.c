/* SPDX-License-Identifier: MIT */
/*
 * cmd_reindex.c - `symdb reindex`: rebuild the catalog from the index files
 * (SPEC §12.6, "Reindex").  The catalog is derived data; when it is lost or
 * damaged (`catalog/data.mdb` garbage, deleted, from another machine),
 * symdb_builder_reindex() verifies every DB/images/XX/UUIDHEX.symdb and
 * writes one entry per valid file in one transaction.  Damaged files are
 * reported one line each on stderr and left for `symdb verify --repair`;
 * unsafe entries (a symbolic link or a foreign-owned entry, SPEC §12.1) are
 * reported as such and left for the operator.
 *
 * A damaged catalog (data.mdb truncated, missing or not LMDB's) is never
 * opened: SYMDB_BUILD_RECOVER moves it aside to DB/catalog.damaged-<time>
 * and the rebuild starts from an empty one (one line on stderr says so).
 *
 * Exit status: 0 when every file was valid, 4 when some were skipped
 * (damaged or unsafe), 3 when the catalog could not be written.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_maint.h"
#include "cli_util.h"
#include "symdb.h"
#include "symdb_build.h"

struct reindex_skips {
	unsigned damaged, unsafe;
};

/* The library gives an unsafe entry (a symbolic link or a foreign-owned
 * entry, never followed: symdb_build.h) a reason ending in ", not followed";
 * it is no damage, and --repair would not remove it either. */
static int reindex_is_unsafe(const char *why)
{
	static const char tail[] = ", not followed";
	size_t n = strlen(why);

	return n >= sizeof tail - 1 && strcmp(why + n - (sizeof tail - 1), tail) == 0;
}

static void reindex_skipped(const char *rel, const char *why, void *arg)
{
	struct reindex_skips *n = arg;
	int unsafe = reindex_is_unsafe(why);

	cli_err(NULL, "reindex: skipped %s %s: %s", unsafe ? "unsafe" : "damaged", rel, why);
	if (unsafe)
		n->unsafe++;
	else
		n->damaged++;
}

/* A missing catalog is what reindex repairs; a missing DB/images means
 * there is no database to rebuild from (the builder would create one). */
static int reindex_has_images(const char *dir)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/images", dir);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	cli_err(dir, "no symdb database here (no images/ directory)");
	return 0;
}

static int reindex_args(struct cli_global *g, int argc, char **argv, int *quiet)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		int m = cli_opt_value(argc, argv, &i, "--db", &v);
		if (m < 0)
			return -1;
		if (m > 0) {
			g->db_dir = v;
		} else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			*quiet = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_usage(stdout, "reindex");
			return 1;
		} else {
			cli_err(NULL, "reindex: unexpected argument '%s' (see 'symdb help reindex')",
			        argv[i]);
			return -1;
		}
	}
	return 0;
}

/* Open with recovery, rebuild; 0, or the exit status. */
static int reindex_run(const char *dir, int quiet, int *recovered)
{
	char err[1024] = "";
	SYMDB_OPTS(symdb_build_opts, o, .flags = SYMDB_BUILD_RECOVER, .errbuf = err,
	           .errbuf_sz = sizeof(err));
	symdb_builder *b;
	struct reindex_skips skipped = { 0, 0 };
	int rc = symdb_builder_open(dir, &o, &b);

	if (rc) {
		cli_err_lib(dir, rc, err);
		return CLI_EXIT_DATABASE;
	}
	const char *moved = symdb_builder_recovered(b);
	if (recovered)
		*recovered = moved != NULL;
	if (moved)
		cli_err(NULL, "%s", moved);
	o.flags = 0;
	rc = symdb_builder_reindex(b, reindex_skipped, &skipped, &o);
	symdb_builder_close(b);
	if (rc < 0) {
		cli_err_lib(dir, rc, err);
		return CLI_EXIT_DATABASE;
	}
	if (!quiet && skipped.unsafe)
		cli_print_line("reindexed %d images, skipped %u damaged files, %u unsafe entries\n",
		               rc, skipped.damaged, skipped.unsafe);
	else if (!quiet)
		cli_print_line("reindexed %d images, skipped %u damaged files\n", rc, skipped.damaged);
	return skipped.damaged || skipped.unsafe ? CLI_EXIT_DAMAGED : CLI_EXIT_OK;
}

int cli_reindex_recover(const char *dir)
{
	int recovered = 0;

	if (!reindex_has_images(dir))
		return -1;
	reindex_run(dir, 0, &recovered);
	return recovered ? 0 : -1;
}

int cli_cmd_reindex(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	char dir[4096];
	int quiet = 0, rc = reindex_args(&g, argc, argv, &quiet);

	if (rc)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (g.db_dir)
		snprintf(dir, sizeof(dir), "%s", g.db_dir);
	else if (cli_default_dir(dir, sizeof(dir)) < 0)
		snprintf(dir, sizeof(dir), "(default database)");
	if (!reindex_has_images(dir))
		return CLI_EXIT_DATABASE;
	return reindex_run(dir, quiet, NULL);
}
