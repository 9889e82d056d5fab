/* SPDX-License-Identifier: MIT */
/*
 * cli_query_open.c - `symdb query`'s database and images: opened up front for
 * --obj/--uuid or per module on first use, failures reported the CLI's way.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_query.h"
#include "cli_slice.h"
#include "cli_target.h"

/* ---- opening the image ---------------------------------------------------- */

int cli_query_open_db(const struct cli_global *g, symdb **db)
{
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof(err));
	int rc = cli_open_db(g->db_dir, &o, db);
	if (rc == 0)
		return 0;
	char dir[4096] = "";
	if (g->db_dir)
		snprintf(dir, sizeof(dir), "%s", g->db_dir);
	else if (cli_default_dir(dir, sizeof(dir)) < 0)
		snprintf(dir, sizeof(dir), "(default database)");
	if (rc == -ENOENT)
		cli_err(dir, "no symdb database here (create it with 'symdb build FILE')");
	else
		cli_err_lib(dir, rc, err);
	return -CLI_EXIT_DATABASE;
}

static void describe_not_indexed(const char *obj, char *msg, size_t msz)
{
	symdb_uuid id;
	char hex[2 * SYMDB_UUID_MAX + 1];
	if (symdb_file_uuid(obj, NULL, &id) == 0) {
		symdb_uuid_format(&id, hex);
		snprintf(msg, msz, "not indexed (%s %s); run 'symdb build %s' first",
		         id.kind == SYMDB_UUID_GNU_BUILD_ID ? "build-id" : "image id", hex, obj);
	} else {
		snprintf(msg, msz, "not indexed; run 'symdb build %s' first", obj);
	}
}

/*
 * Open the image of a binary (obj) or of a UUID.  On failure the reason is
 * printed on stderr, a short form of it left in msg (JSON's Error.Message:
 * strerror text for system errors, as llvm-symbolizer's), and minus an exit
 * code returned.
 */
int cli_query_open_named(struct query *q, const char *obj, const char *uuid_hex,
                      symdb_image **img, char *msg, size_t msz)
{
	char err[512] = "";
	/* Checksums are verified unless --no-verify: XXH3 runs at memory speed,
	 * and a flipped byte must be reported rather than printed as a wrong
	 * answer. */
	SYMDB_OPTS(symdb_open_opts, o, .flags = q->no_verify ? 0 : SYMDB_OPEN_VERIFY_CHECKSUMS,
	           .errbuf = err, .errbuf_sz = sizeof(err));
	int rc;
	const char *what = obj ? obj : uuid_hex;
	snprintf(msg, msz, "unable to open this image");
	if (obj && (rc = cli_open_slice(q->db, obj, q->arch, &o, img)) <= 0) {
		return rc; /* Mach-O: opened, or reported */
	} else if (obj) {
		rc = symdb_image_open_binary(q->db, obj, &o, img);
	} else {
		symdb_uuid id;
		/* A unique prefix names its image too; cli_target.c words the
		 * ambiguous, short and malformed ones. */
		int n = q->db ? symdb_lookup_prefix(q->db, uuid_hex, NULL, 0) : 0;
		if (n != 0 && (rc = cli_uuid_resolve(q->db, uuid_hex, &id)) < 0)
			return rc;
		if (n == 0 && symdb_uuid_parse(uuid_hex, &id) < 0) {
			cli_err(uuid_hex, "not a UUID (8 to 64 hex digits)");
			return -CLI_EXIT_USAGE;
		}
		rc = symdb_image_open_uuid(q->db, &id, &o, img);
	}
	if (rc == 0)
		return 0;
	if (rc == SYMDB_E_NOT_INDEXED && obj) {
		describe_not_indexed(obj, msg, msz);
		cli_err(obj, "%s", msg);
	} else if (rc == SYMDB_E_NOT_INDEXED) {
		snprintf(msg, msz, "not indexed in this database");
		cli_err(what, "%s", msg);
	} else {
		int sys = rc < 0 && rc > SYMDB_E_FORMAT; /* -errno */
		snprintf(msg, msz, "%s", sys || !err[0] ? symdb_strerror(rc) : err);
		cli_err_lib(what, rc, err);
	}
	return -cli_exit_for(rc);
}

/* A per-line module's image, opened on first use (a failure is reported
 * once and remembered). */
symdb_image *cli_query_module_image(struct query *q, struct module *m)
{
	if (m->state == 0) {
		char msg[1024];
		int rc = cli_query_open_named(q, m->name, NULL, &m->img, msg, sizeof(msg));
		m->state = rc < 0 ? rc : 1;
		if (rc < 0) {
			m->img = NULL;
			m->error = strdup(msg);
			if (-rc > q->module_failed)
				q->module_failed = -rc;
		}
	}
	return m->state > 0 ? m->img : NULL;
}
