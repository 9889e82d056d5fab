/* SPDX-License-Identifier: MIT */
/*
 * cli_fetch_id.c - one image fetched by build-id for the profile commands
 * (cli_fetch_id.h).  They fetch through symdb_fetch() themselves, rather
 * than through the symbolizer context's SYMDB_SYMBOLIZER_FETCH, because the
 * context keeps only a failure's code per request, and the user wants the
 * reason: which source, which status.
 */
#include "cli_fetch_id.h"

#include <errno.h>

#include "cli_fetch.h"

int cli_fetch_id(struct cli_fetch_run *f, const symdb_uuid *id)
{
	if (!f->fo || !f->db || f->dead)
		return -1;
	char err[1024] = "", hex[2 * SYMDB_UUID_MAX + 1];
	symdb_builder *b = NULL;
	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = err, .errbuf_sz = sizeof err);
	symdb_fetch_opts fo = *f->fo;
	fo.errbuf = err;
	fo.errbuf_sz = sizeof err;
	symdb_uuid_format(id, hex);
	int rc = symdb_builder_open(symdb_dir(f->db), &bo, &b);
	if (rc == 0)
		rc = cli_fetch_run(b, id, &fo, NULL);
	symdb_builder_close(b);
	if (rc == -ETIMEDOUT)
		f->dead = 1;
	if (rc && rc != SYMDB_E_NOT_FOUND) {
		if (f->before_line)
			f->before_line(f->arg);
		cli_fetch_report(hex, rc, err);
	}
	return rc;
}
