/* SPDX-License-Identifier: MIT */
/*
 * `symdb compact --unused-for D [--dry-run]`: move images nobody queried
 * for D into cold storage (SPEC §12.8): each index file is replaced by its
 * LZ4 form `UUIDHEX.symdb.lz4` through symdb_image_compact(), and the next
 * query thaws it transparently.  Selection is gc's (SPEC §12.6): last use is
 * the last-query time recorded in the catalog, else the build time, and the
 * clock is cli_now() ($SYMDB_NOW in tests).  Images already cold are
 * skipped.  One line per image and a total; a progress line on a terminal.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_fault.h"
#include "cli_maint.h"

struct compact {
	symdb *db;
	uint64_t now, unused_for;
	int have_unused, dry_run, tty;
	struct cli_aged aged;
	size_t done, cold, failed_n;
	uint64_t before, after;
	int exit;
};

static void cp_progress(const struct compact *c, size_t i, const char *name)
{
	if (!c->tty)
		return;
	char *shown = cli_line_dup("%s", name); /* the name escaped, not our \r\033[K */
	fprintf(stderr, "\r\033[K[%zu/%zu] compacting %s...", i + 1, c->aged.n, shown);
	fflush(stderr);
	free(shown);
}

static void cp_clear(const struct compact *c)
{
	if (c->tty) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}

static double cp_pct(uint64_t after, uint64_t before)
{
	return before ? 100.0 * (double)after / (double)before : 0.0;
}

static void cp_one(struct compact *c, struct cli_aged_image *im)
{
	char hex[2 * SYMDB_UUID_MAX + 1], tb[64], eb[1024] = "";
	symdb_compact_stats st;
	struct cli_storage sg;
	int rc;

	symdb_uuid_format(&im->uuid, hex);
	if (cli_entry_storage(symdb_dir(c->db), im->file, &sg) == 0 && sg.forms == CLI_STORED_COLD) {
		c->cold++;
		return;
	}
	if (c->dry_run) {
		cp_clear(c);
		cli_print_line("would compact %s %s (%llu bytes, last used %s)\n", hex, im->name,
		               (unsigned long long)im->file_size, cli_time_name(im->last_use, tb, sizeof tb));
		c->done++;
		c->before += im->file_size;
		return;
	}
	st.sz = sizeof st;
	rc = symdb_image_compact(c->db, &im->uuid, CLI_EB_OPTS(eb, sizeof eb), &st);
	cp_clear(c);
	if (rc == 0 && st.was_cold) {
		c->cold++;
		return;
	}
	if (rc < 0) {
		cli_err_lib(hex, rc, eb);
		c->failed_n++;
		if (cli_exit_for(rc) > c->exit)
			c->exit = cli_exit_for(rc);
		return;
	}
	cli_print_line("compacted %s %s (%llu -> %llu bytes, %.1f%%, last used %s)\n", hex, im->name,
	               (unsigned long long)st.bytes_before, (unsigned long long)st.bytes_after,
	               cp_pct(st.bytes_after, st.bytes_before),
	               cli_time_name(im->last_use, tb, sizeof tb));
	fflush(stdout);
	c->done++;
	c->before += st.bytes_before;
	c->after += st.bytes_after;
}

static void cp_run(struct compact *c)
{
	for (size_t i = 0; i < c->aged.n; i++) {
		struct cli_aged_image *im = &c->aged.img[i];
		if (!cli_aged_unused(im, c->now, c->unused_for))
			continue;
		cp_progress(c, i, im->name);
		cp_one(c, im);
	}
	cp_clear(c);
	if (c->dry_run)
		cli_print_line("%zu images (%llu bytes) would be compacted, %zu already cold\n", c->done,
		               (unsigned long long)c->before, c->cold);
	else
		cli_print_line("%zu images compacted: %llu -> %llu bytes (%.1f%%), %zu already cold, "
		               "%zu failed\n",
		               c->done, (unsigned long long)c->before, (unsigned long long)c->after,
		               cp_pct(c->after, c->before), c->cold, c->failed_n);
}

static int cp_args(struct compact *c, struct cli_global *g, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		int m = cli_opt_common(g, "compact", argc, argv, &i);
		if (m < 0)
			return -1;
		if (m == CLI_OPT_HELP)
			return 1;
		if (m == CLI_OPT_TAKEN) {
			continue;
		} else if ((m = cli_opt_value(argc, argv, &i, "--unused-for", &v)) != 0) {
			if (m < 0)
				return -1;
			if (cli_parse_duration(v, &c->unused_for) < 0) {
				cli_err(NULL, "compact: bad value '%s' for --unused-for (e.g. 30d, 12h)",
				        v);
				return -1;
			}
			c->have_unused = 1;
		} else if (!strcmp(argv[i], "-n") || !strcmp(argv[i], "--dry-run")) {
			c->dry_run = 1;
		} else {
			cli_err(NULL, "compact: unexpected argument '%s' (see 'symdb help compact')",
			        argv[i]);
			return -1;
		}
	}
	if (!c->have_unused) {
		cli_err(NULL, "compact: --unused-for AGE is required (see 'symdb help compact')");
		return -1;
	}
	return 0;
}

int cli_cmd_compact(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct compact c = { 0 };
	char err[1024] = "", dir[4096];
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	int rc = cp_args(&c, &g, argc, argv);

	if (rc)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	cli_db_name(&g, dir, sizeof dir);
	/* The catalog is only read: compaction changes files, not entries. */
	rc = cli_open_db(g.db_dir, &o, &c.db);
	if (rc < 0) {
		if (rc == -ENOENT)
			cli_err(dir, "no symdb database here");
		else
			cli_err_lib(dir, rc, err);
		return CLI_EXIT_DATABASE;
	}
	c.now = cli_now();
	c.tty = isatty(STDERR_FILENO);
	cli_fault_guard(c.db); /* an index truncated meanwhile: that image fails */
	rc = cli_aged_load(c.db, &c.aged);
	if (rc < 0)
		cli_err(dir, "cannot read the catalog: %s", symdb_strerror(rc));
	else
		cp_run(&c);
	cli_aged_free(&c.aged);
	cli_fault_unguard();
	symdb_close(c.db);
	return rc < 0 ? CLI_EXIT_DATABASE : c.exit;
}
