/* SPDX-License-Identifier: MIT */
/*
 * `symdb export UUID|PREFIX|FILE... > BUNDLE` and `symdb import [BUNDLE] < BUNDLE`: move
 * indexed images between machines, so that a fleet builds each binary once
 * and distributes the index files (SPEC §12.7).  `symdb export --tree DIR`
 * writes them into an upstream store tree instead (SPEC §12.9,
 * cli_export_tree.c), for nodes that fetch on a miss.
 *
 * The bundle is the library's: symdb_export() verifies every image and
 * writes it; symdb_import() checks the whole bundle and every image before
 * it publishes any, each through the build's own atomic path (§12.5).  This
 * file parses the command lines and prints one line per image.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_export_tree.h"
#include "cli_fault.h"
#include "cli_maint.h"
#include "cli_target.h"
#include "cli_util.h"
#include "symdb.h"
#include "symdb_build.h"

/* ---- export --------------------------------------------------------------- */

/* The images to export, in order; hex[i] names ids[i] in messages. */
struct bn_ids {
	symdb_uuid *ids;
	char **hex;
	int n, cap;
};

static int bn_add(struct bn_ids *l, const symdb_uuid *id)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		symdb_uuid *ids = realloc(l->ids, (size_t)cap * sizeof *ids);
		char **hex = ids ? realloc(l->hex, (size_t)cap * sizeof *hex) : NULL;
		if (ids)
			l->ids = ids;
		if (!hex)
			return -ENOMEM;
		l->hex = hex;
		l->cap = cap;
	}
	l->hex[l->n] = malloc(2 * SYMDB_UUID_MAX + 1);
	if (!l->hex[l->n])
		return -ENOMEM;
	l->ids[l->n] = *id;
	symdb_uuid_format(id, l->hex[l->n++]);
	return 0;
}

static int bn_add_entry(const symdb_entry *e, void *arg)
{
	return bn_add(arg, &e->uuid);
}

static void bn_ids_free(struct bn_ids *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->hex[i]);
	free(l->hex);
	free(l->ids);
}

/* The images args name (UUIDs, unique prefixes, binaries: cli_target.c). */
static int bn_add_args(symdb *db, struct bn_ids *l, char **args, int nargs)
{
	symdb_uuid ids[64];

	for (int i = 0; i < nargs; i++) {
		int n = cli_target_uuids(db, args[i], ids, sizeof ids / sizeof ids[0]);
		if (n < 0)
			return n;
		for (int k = 0; k < n; k++)
			if (bn_add(l, &ids[k]) < 0)
				return -CLI_EXIT_FAILED;
	}
	return 0;
}

/* Open the database and list the images to export: every one with all,
 * else the ones args name.  0 with *db open (and guarded against SIGBUS),
 * or an exit code with *db NULL. */
static int bn_open_list(const struct cli_global *g, symdb **db, struct bn_ids *l, int all,
                        char **args, int nargs)
{
	char err[512] = "", dir[4096];
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	int rc;

	cli_db_name(g, dir, sizeof dir);
	rc = cli_open_db(g->db_dir, &o, db);
	if (rc < 0) {
		cli_err_lib(dir, rc, err);
		*db = NULL;
		return CLI_EXIT_DATABASE;
	}
	cli_fault_guard(*db); /* an index truncated meanwhile: an error, not SIGBUS */
	rc = all ? symdb_list(*db, bn_add_entry, l) : 0;
	if (rc < 0) {
		cli_err(dir, "%s", symdb_strerror(rc));
		rc = CLI_EXIT_DATABASE;
	} else if (!all) {
		rc = -bn_add_args(*db, l, args, nargs);
	}
	if (rc) {
		cli_fault_unguard();
		symdb_close(*db);
		*db = NULL;
	}
	return rc;
}

/* Export the listed images (or every image with --all) from db. */
static int bn_export_db(const struct cli_global *g, struct bn_ids *l, int all, char **args,
                        int nargs)
{
	symdb *db;
	int rc = bn_open_list(g, &db, l, all, args, nargs);

	if (rc == 0) {
		char why[1200] = "";
		uint64_t written = 0;
		SYMDB_OPTS(symdb_export_opts, eo, .errbuf = why, .errbuf_sz = sizeof why,
		           .written = &written);
		rc = symdb_export(db, l->ids, (size_t)l->n, 1, &eo);
		/* "UUID: reason" for an image; nothing for a write error. */
		if (rc < 0 && why[0])
			cli_err(NULL, "%s", why);
		if (rc < 0)
			rc = written ? CLI_EXIT_FAILED : cli_exit_for(rc);
		cli_fault_unguard();
		symdb_close(db);
	}
	return rc;
}

/* One image into the tree and its line: 0, or the exit code it earns
 * (CLI_EXIT_DAMAGED: the image; CLI_EXIT_FAILED: the tree, which ends the
 * export). */
static int bn_tree_one(symdb *db, int v1fd, const char *tree, const struct bn_ids *l, int i)
{
	struct cli_tree_put tp;
	int rc = cli_tree_put(db, v1fd, &l->ids[i], &tp);
	const char *hex = l->hex[i];
	size_t hl = strlen(hex);

	if (rc == 1)
		cli_print_line("exported %s %s (%" PRIu64 " bytes)\n", hex, tp.rel, tp.bytes);
	else if (rc == 0)
		cli_print_line("skipped %s (already in the tree)\n", hex);
	else if (tp.write_error)
		cli_err(NULL, "%s/%s: %s", tree, tp.rel, tp.why);
	else if (strncmp(tp.why, hex, hl) == 0 && (tp.why[hl] == ':' || tp.why[hl] == '/'))
		cli_err(NULL, "%s", tp.why);
	else
		cli_err(hex, "%s", tp.why[0] ? tp.why : symdb_strerror(rc));
	if (rc >= 0)
		return 0;
	return tp.write_error ? CLI_EXIT_FAILED : cli_exit_for(rc);
}

/* `export --tree DIR`: each image verified and written on its own; a
 * damaged one is named and skipped, a write error ends the export. */
static int bn_export_tree(const struct cli_global *g, const char *tree, struct bn_ids *l,
                          int all, char **args, int nargs)
{
	char err[4200] = "";
	symdb *db;
	int rc = bn_open_list(g, &db, l, all, args, nargs), v1fd, worst = 0;

	if (rc)
		return rc;
	v1fd = cli_tree_open(tree, err, sizeof err);
	if (v1fd < 0) {
		cli_err(NULL, "%s", err);
		worst = CLI_EXIT_FAILED;
	}
	for (int i = 0; v1fd >= 0 && i < l->n && worst != CLI_EXIT_FAILED; i++) {
		rc = bn_tree_one(db, v1fd, tree, l, i);
		if (rc > worst)
			worst = rc;
	}
	fflush(stdout);
	if (v1fd >= 0)
		close(v1fd);
	cli_fault_unguard();
	symdb_close(db);
	return worst;
}

int cli_cmd_export(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct bn_ids l = { 0 };
	char **args = calloc((size_t)argc, sizeof *args);
	const char *tree = NULL;
	int all = 0, rc = args ? -1 : CLI_EXIT_FAILED, nargs = 0, t;

	for (int i = 1; rc < 0 && i < argc; i++) {
		int m = cli_opt_common(&g, "export", argc, argv, &i);
		if (m < 0) {
			rc = CLI_EXIT_USAGE;
		} else if (m == CLI_OPT_HELP) {
			rc = CLI_EXIT_OK;
		} else if (m == CLI_OPT_TAKEN) {
			continue;
		} else if ((t = cli_opt_value(argc, argv, &i, "--tree", &tree)) != 0) {
			if (t < 0)
				rc = CLI_EXIT_USAGE;
		} else if (!strcmp(argv[i], "--all")) {
			all = 1;
		} else if (argv[i][0] == '-' && argv[i][1] && !cli_is_uuid_arg(argv[i])) {
			cli_err(NULL, "export: unknown option '%s' (see 'symdb help export')", argv[i]);
			rc = CLI_EXIT_USAGE;
		} else {
			args[nargs++] = argv[i]; /* resolved once the database is open */
		}
	}
	if (rc < 0 && tree && !tree[0]) {
		cli_err(NULL, "export: --tree needs a directory (see 'symdb help export')");
		rc = CLI_EXIT_USAGE;
	}
	if (rc < 0 && tree && nargs == 0)
		all = 1; /* a store tree mirrors the whole database by default */
	if (rc < 0 && (nargs == 0) == !all) {
		cli_err(NULL, all ? "export: --all takes no UUID (see 'symdb help export')"
		                  : "export: no UUID given (see 'symdb help export')");
		rc = CLI_EXIT_USAGE;
	}
	if (rc < 0 && tree)
		rc = bn_export_tree(&g, tree, &l, all, args, nargs);
	if (rc < 0 && isatty(1)) {
		cli_err(NULL, "export: refusing to write a bundle to a terminal");
		rc = CLI_EXIT_USAGE;
	}
	if (rc < 0)
		rc = bn_export_db(&g, &l, all, args, nargs);
	bn_ids_free(&l);
	free(args);
	return rc;
}

/* ---- import --------------------------------------------------------------- */

/* What symdb_import() did with each image, one line each. */
struct bn_report {
	const char *what;
	int quiet, failed;
};

static void bn_report_image(const symdb_uuid *uuid, int rc, const symdb_build_result *res,
                            const char *why, void *arg)
{
	struct bn_report *r = arg;
	char hex[2 * SYMDB_UUID_MAX + 1];

	symdb_uuid_format(uuid, hex);
	if (rc < 0) {
		cli_err(r->what, "image %s: %s", hex, why[0] ? why : symdb_strerror(rc));
		r->failed = 1;
	} else if (!r->quiet) {
		cli_print_line(res->skipped ? "skipped %s (already indexed)\n" : "imported %s\n", hex);
	}
}

/* An index file (SPEC §5 magic), as GET /v1/images/{id}/index of `symdb
 * serve` sends it, rather than a bundle. */
static int is_index_file(int fd)
{
	static const unsigned char magic[8] = { 0x89, 'S', 'Y', 'M', 'D', 'B', '\r', '\n' };
	unsigned char head[8];

	return pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
	       memcmp(head, magic, sizeof magic) == 0;
}

/* Publish one index file as symdb_builder_import_file() does: copied,
 * every checksum and invariant verified, then renamed and committed. */
static int import_index_file(symdb_builder *b, const char *file, unsigned flags, int quiet)
{
	char err[512] = "", hex[2 * SYMDB_UUID_MAX + 1];
	SYMDB_OPTS(symdb_build_opts, bo, .flags = flags, .errbuf = err, .errbuf_sz = sizeof err);
	SYMDB_OPTS(symdb_build_result, res);
	int rc = symdb_builder_import_file(b, file, NULL, &bo, &res);

	if (rc < 0) {
		size_t n = cli_errbuf_names(err, file, ":");
		const char *why = n ? err + n + 2 : err;
		cli_err(file, "index file rejected, nothing imported: %s",
		        why[0] ? why : symdb_strerror(rc));
		return rc == SYMDB_E_CHECKSUM || rc == SYMDB_E_CORRUPT || rc == SYMDB_E_FORMAT ||
		               rc == SYMDB_E_VERSION
		       ? CLI_EXIT_DAMAGED
		       : CLI_EXIT_FAILED;
	}
	symdb_uuid_format(&res.uuid, hex);
	if (!quiet)
		cli_print_line(res.skipped ? "skipped %s (already indexed)\n" : "imported %s\n", hex);
	return CLI_EXIT_OK;
}

int cli_cmd_import(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	const char *file = NULL;
	unsigned flags = 0;
	int quiet = 0;

	for (int i = 1; i < argc; i++) {
		int m = cli_opt_common(&g, "import", argc, argv, &i);
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m == CLI_OPT_HELP)
			return CLI_EXIT_OK;
		if (m == CLI_OPT_TAKEN)
			continue;
		else if (!strcmp(argv[i], "--force"))
			flags |= SYMDB_BUILD_FORCE;
		else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!file && (argv[i][0] != '-' || !strcmp(argv[i], "-")))
			file = argv[i];
		else {
			cli_err(NULL, "import: unexpected argument '%s' (see 'symdb help import')",
			        argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	const char *what = file && strcmp(file, "-") ? file : "<stdin>";
	int in = file && strcmp(file, "-") ? open(file, O_RDONLY | O_CLOEXEC) : 0;
	if (in < 0) {
		cli_err(file, "%s", strerror(errno));
		return CLI_EXIT_FAILED;
	}
	char err[512] = "", dir[4096];
	cli_db_name(&g, dir, sizeof dir);
	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = err, .errbuf_sz = sizeof err);
	symdb_builder *b;
	int rc = symdb_builder_open(cli_db_dir(g.db_dir), &bo, &b);
	if (rc < 0) {
		cli_err_lib(dir, rc, err);
		if (in > 0)
			close(in);
		return CLI_EXIT_DATABASE;
	}
	if (in > 0 && is_index_file(in)) {
		rc = import_index_file(b, file, flags, quiet);
		symdb_builder_close(b);
		close(in);
		return rc;
	}
	char why[1200] = "";
	struct bn_report rep = { .what = what, .quiet = quiet };
	SYMDB_OPTS(symdb_import_opts, io, .flags = flags, .errbuf = why, .errbuf_sz = sizeof why,
	           .on_image = bn_report_image, .arg = &rep);
	rc = symdb_import(b, in, &io);
	if (rc < 0 && !rep.failed && !(rc <= SYMDB_E_FORMAT && rc > SYMDB_E_LAST_)) {
		/* -errno: the database's trouble (a full disk), not the bundle's */
		cli_err(what, "nothing imported: %s", why);
		rc = CLI_EXIT_FAILED;
	} else if (rc < 0 && !rep.failed) {
		cli_err(what, "bundle rejected, nothing imported: %s", why);
		rc = CLI_EXIT_DAMAGED;
	} else {
		rc = rc < 0 ? CLI_EXIT_FAILED : CLI_EXIT_OK;
	}
	fflush(stdout);
	symdb_builder_close(b);
	if (in > 0)
		close(in);
	return rc;
}
