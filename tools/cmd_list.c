/* SPDX-License-Identifier: MIT */
/*
 * `symdb list`: one line per catalog entry, in UUID order:
 *   UUID MACHINE INDEX-BYTES BUILT-AT IMAGE-NAME
 * The image name comes last because it is the only field that may contain
 * spaces.  Reads the catalog only; no index file is opened.
 */
#include <errno.h>
#include <string.h>

#include "cli_util.h"
#include "symdb.h"

static int print_entry(const symdb_entry *e, void *arg)
{
	struct cli_out *o = arg;
	char hex[2 * SYMDB_UUID_MAX + 1], mbuf[32], tbuf[64];
	symdb_uuid_format(&e->uuid, hex);
	cli_out_line(o, "%s %s %llu %s %s\n", hex,
	             cli_machine_name(e->object_format, e->machine, mbuf, sizeof(mbuf)),
	             (unsigned long long)e->file_size, cli_time_name(e->built_at, tbuf, sizeof(tbuf)),
	             e->image_name ? e->image_name : "");
	return 0;
}

int cli_cmd_list(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	for (int i = 1; i < argc; i++) {
		int m = cli_opt_common(&g, "list", argc, argv, &i);
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m == CLI_OPT_HELP)
			return CLI_EXIT_OK;
		if (m == CLI_OPT_NONE) {
			cli_err(NULL, "list: unexpected argument '%s' (see 'symdb help list')", argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	char err[512] = "", dir[4096];
	if (g.db_dir)
		snprintf(dir, sizeof(dir), "%s", g.db_dir);
	else if (cli_default_dir(dir, sizeof(dir)) < 0)
		snprintf(dir, sizeof(dir), "(default database)");
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof(err));
	symdb *db;
	int rc = cli_open_db(g.db_dir, &o, &db);
	if (rc < 0) {
		if (rc == -ENOENT)
			cli_err(dir, "no symdb database here");
		else
			cli_err_lib(dir, rc, err);
		return CLI_EXIT_DATABASE;
	}
	struct cli_out out;
	if (cli_out_init(&out, stdout, 64 * 1024) < 0) {
		symdb_close(db);
		return CLI_EXIT_FAILED;
	}
	rc = symdb_list(db, print_entry, &out);
	int werr = cli_out_fini(&out);
	symdb_close(db);
	if (rc == SYMDB_E_CATALOG) {
		cli_err(dir, "some catalog entries cannot be decoded and were not listed "
		             "(see 'symdb verify'; 'symdb verify --repair' or 'symdb reindex' fixes them)");
		return CLI_EXIT_DATABASE;
	}
	if (rc < 0) {
		cli_err(dir, "%s", symdb_strerror(rc));
		return CLI_EXIT_DATABASE;
	}
	return werr < 0 ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}
