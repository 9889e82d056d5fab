/* SPDX-License-Identifier: MIT */
/*
 * `symdb list`: one line per catalog entry, in UUID order:
 *   UUID MACHINE INDEX-BYTES BUILT-AT PATH
 * PATH is the absolute path of the file indexed, as `symdb build` recorded
 * it (SPEC §12.2 `paths`), or the image name when none is recorded (an
 * imported or reindexed image).  It comes last because it is the only
 * field that may contain spaces.  --json prints one JSON document instead.
 * Filters: --name (substring, or a glob when it has * ? or [), --machine,
 * --older-than (last use, SPEC §12.6, as gc and compact count it).  Reads
 * the catalog only; no index file is opened.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fnmatch.h>
#include <string.h>
#include <strings.h>

#include "cli_maint.h"
#include "cli_output.h"
#include "cli_util.h"
#include "symdb.h"

struct list_opts {
	const char *name;    /* --name PATTERN */
	const char *machine; /* --machine NAME */
	uint64_t older_than; /* --older-than AGE, seconds */
	int have_older, json;
};

struct list_run {
	const struct list_opts *opt;
	struct cli_out *out;
	symdb *db;
	uint64_t now;
	size_t shown;
};

static const char *uuid_kind_label(unsigned kind)
{
	switch (kind) {
	case SYMDB_UUID_GNU_BUILD_ID: return "gnu-build-id";
	case SYMDB_UUID_MACHO: return "macho-uuid";
	case SYMDB_UUID_FALLBACK: return "fallback-hash";
	default: return "unknown";
	}
}

/* A glob when the pattern has glob characters, else a substring. */
static int name_matches(const char *pat, const char *s)
{
	if (!s)
		return 0;
	if (strpbrk(pat, "*?["))
		return fnmatch(pat, s, 0) == 0;
	return strstr(s, pat) != NULL;
}

static uint64_t last_use(symdb *db, const symdb_entry *e)
{
	uint64_t t;
	return symdb_last_used(db, &e->uuid, &t) == 0 ? t : e->built_at;
}

static int keep_entry(const struct list_run *r, const symdb_entry *e, const char *machine,
                      uint64_t used)
{
	const struct list_opts *o = r->opt;
	if (o->name && !name_matches(o->name, e->image_name) &&
	    !name_matches(o->name, e->source_path))
		return 0;
	if (o->machine && strcasecmp(o->machine, machine) != 0)
		return 0;
	/* gc's rule (cli_aged_unused): unused for more than the age */
	if (o->have_older && o->older_than == UINT64_MAX)
		return 0; /* nothing is unused for more than 2^64-1 s (the + 1 would wrap) */
	return !o->have_older || !cli_younger(used, r->now, o->older_than + 1);
}

static void json_field(struct cli_out *o, const char *key, const char *val)
{
	cli_out_fmt(o, ",\"%s\":", key);
	if (val)
		cli_json_string(o, val, strlen(val));
	else
		cli_out_str(o, "null");
}

static void print_json(struct list_run *r, const symdb_entry *e, const char *hex,
                       const char *machine, uint64_t used)
{
	char tb[64], ub[64];
	struct cli_out *o = r->out;
	cli_out_str(o, r->shown ? ",\n" : "\n");
	cli_out_fmt(o, "{\"uuid\":\"%s\",\"uuid_kind\":\"%s\"", hex, uuid_kind_label(e->uuid.kind));
	json_field(o, "machine", machine);
	cli_out_fmt(o, ",\"index_bytes\":%llu", (unsigned long long)e->file_size);
	json_field(o, "built_at", cli_time_name(e->built_at, tb, sizeof tb));
	cli_out_fmt(o, ",\"built_at_unix\":%llu", (unsigned long long)e->built_at);
	json_field(o, "last_used", cli_time_name(used, ub, sizeof ub));
	cli_out_fmt(o, ",\"last_used_unix\":%llu", (unsigned long long)used);
	json_field(o, "image_name", e->image_name);
	json_field(o, "path", e->source_path);
	json_field(o, "index_file", e->file);
	cli_out_str(o, "}");
}

static int print_entry(const symdb_entry *e, void *arg)
{
	struct list_run *r = arg;
	char hex[2 * SYMDB_UUID_MAX + 1], mbuf[32], tbuf[64];
	const char *machine = cli_machine_name(e->object_format, e->machine, mbuf, sizeof(mbuf));
	uint64_t used = r->opt->have_older || r->opt->json ? last_use(r->db, e) : 0;

	if (!keep_entry(r, e, machine, used))
		return 0;
	symdb_uuid_format(&e->uuid, hex);
	if (r->opt->json)
		print_json(r, e, hex, machine, used);
	else
		cli_out_line(r->out, "%s %s %llu %s %s\n", hex, machine,
		             (unsigned long long)e->file_size,
		             cli_time_name(e->built_at, tbuf, sizeof(tbuf)),
		             e->source_path ? e->source_path : e->image_name ? e->image_name : "");
	r->shown++;
	return 0;
}

/* Returns 0, CLI_OPT_HELP when the help was printed, or -1 (reported). */
static int parse_list_args(struct cli_global *g, struct list_opts *lo, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		int m = cli_opt_common(g, "list", argc, argv, &i);
		if (m < 0)
			return -1;
		if (m == CLI_OPT_HELP)
			return CLI_OPT_HELP;
		if (m == CLI_OPT_TAKEN)
			continue;
		if (!strcmp(argv[i], "--json")) {
			lo->json = 1;
		} else if ((m = cli_opt_value(argc, argv, &i, "--name", &v)) != 0) {
			if (m < 0)
				return -1;
			lo->name = v;
		} else if ((m = cli_opt_value(argc, argv, &i, "--machine", &v)) != 0) {
			if (m < 0)
				return -1;
			lo->machine = v;
		} else if ((m = cli_opt_value(argc, argv, &i, "--older-than", &v)) != 0) {
			if (m < 0)
				return -1;
			if (cli_parse_duration(v, &lo->older_than) < 0) {
				cli_err(NULL, "list: invalid age '%s' (e.g. 30d, 12h, 90m, 2w, 3600)", v);
				return -1;
			}
			lo->have_older = 1;
		} else {
			cli_err(NULL, "list: unexpected argument '%s' (see 'symdb help list')", argv[i]);
			return -1;
		}
	}
	return 0;
}

int cli_cmd_list(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct list_opts lo = { 0 };
	int prc = parse_list_args(&g, &lo, argc, argv);
	if (prc < 0)
		return CLI_EXIT_USAGE;
	if (prc == CLI_OPT_HELP)
		return CLI_EXIT_OK;
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
	struct list_run r = { &lo, &out, db, cli_now(), 0 };
	if (lo.json)
		cli_out_str(&out, "{\"images\":[");
	rc = symdb_list(db, print_entry, &r);
	/* Even after an error the document is closed: what was listed parses. */
	if (lo.json)
		cli_out_str(&out, r.shown ? "\n]}\n" : "]}\n");
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
