/* SPDX-License-Identifier: MIT */
/*
 * cli_query_opts.c - `symdb query`'s options: llvm-symbolizer's flags and values,
 * and symdb's own.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cli_query.h"

/* ---- options ------------------------------------------------------------ */

static int parse_style(const char *v, enum cli_style *out)
{
	if (strcmp(v, "LLVM") == 0)
		*out = CLI_STYLE_LLVM;
	else if (strcmp(v, "GNU") == 0)
		*out = CLI_STYLE_GNU;
	else if (strcmp(v, "JSON") == 0)
		*out = CLI_STYLE_JSON;
	else if (strcmp(v, "atos") == 0)
		*out = CLI_STYLE_ATOS;
	else
		return -1;
	return 0;
}

static int parse_fn_kind(const char *v, enum cli_fn_kind *out)
{
	if (strcmp(v, "none") == 0)
		*out = CLI_FN_NONE;
	else if (strcmp(v, "short") == 0)
		*out = CLI_FN_SHORT;
	else if (strcmp(v, "linkage") == 0)
		*out = CLI_FN_LINKAGE;
	else
		return -1;
	return 0;
}

static int parse_addr_kind(const char *v, enum symdb_addr_kind *out)
{
	static const struct {
		const char *name;
		enum symdb_addr_kind kind;
	} kinds[] = { { "vaddr", SYMDB_ADDR_VADDR },
		      { "offset", SYMDB_ADDR_OFFSET },
		      { "fileoff", SYMDB_ADDR_FILEOFF },
		      { "runtime", SYMDB_ADDR_RUNTIME } };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(v, kinds[i].name) == 0) {
			*out = kinds[i].kind;
			return 0;
		}
	return -1;
}

/* Plain flags; returns 1 when argv[i] was one. */
static int query_flag(struct query *q, const char *a)
{
	struct cli_printer *p = &q->pr;
	if (!strcmp(a, "--inlines") || !strcmp(a, "--inlining") || !strcmp(a, "--inlining=true"))
		q->inlines = 1;
	else if (!strcmp(a, "--no-inlines") || !strcmp(a, "--inlining=false"))
		q->inlines = 0;
	else if (!strcmp(a, "--functions"))
		p->fn_kind = CLI_FN_LINKAGE;
	else if (!strcmp(a, "--demangle") || !strcmp(a, "-demangle=true"))
		p->demangle = 1;
	else if (!strcmp(a, "--no-demangle") || !strcmp(a, "-demangle=false"))
		p->demangle = 0;
	else if (!strcmp(a, "--basenames"))
		p->path_kind = CLI_PATH_BASENAME;
	else if (!strcmp(a, "--relativenames"))
		p->path_kind = CLI_PATH_RELATIVE;
	else if (!strcmp(a, "--addresses") || !strcmp(a, "--print-address"))
		p->print_address = 1;
	else if (!strcmp(a, "--pretty-print"))
		p->pretty = 1;
	else if (!strcmp(a, "--verbose"))
		p->verbose = 1;
	else if (!strcmp(a, "--no-verify"))
		q->no_verify = 1;
	else if (!strcmp(a, "--relative-address") || !strcmp(a, "--use-symbol-table=true"))
		; /* no-ops for ELF and Mach-O in llvm-symbolizer-14: its "preferred
		   base" is non-zero only for COFF.  Use --addr-kind offset. */
	else
		return 0;
	return 1;
}

/* Grouped one-letter flags, as LLVM's OptTable accepts them: -apCs. */
static int query_short_flags(struct query *q, const char *a)
{
	if (a[0] != '-' || a[1] == '-' || a[1] == '\0')
		return 0;
	for (const char *c = a + 1; *c; c++)
		if (!strchr("aCfips", *c))
			return 0;
	for (const char *c = a + 1; *c; c++) {
		switch (*c) {
		case 'a': q->pr.print_address = 1; break;
		case 'C': q->pr.demangle = 1; break;
		case 'f': q->pr.fn_kind = CLI_FN_LINKAGE; break;
		case 'i': q->inlines = 1; break;
		case 'p': q->pr.pretty = 1; break;
		case 's': q->pr.path_kind = CLI_PATH_BASENAME; break;
		}
	}
	return 1;
}

/* A signed int like StringRef::getAsInteger: "-N" is accepted (and, being
 * <= 0, turns the context off). */
static int parse_context_lines(const char *v, int *out)
{
	int neg = v[0] == '-';
	uint64_t n;
	if (cli_parse_u64(v + neg, strlen(v + neg), &n) < 0 || n > 1000000)
		return -1;
	*out = neg ? -(int)n : (int)n;
	return 0;
}

static int bad_value(const char *opt, const char *v)
{
	cli_err(NULL, "invalid value '%s' for %s (see 'symdb help query')", v, opt);
	return CLI_EXIT_USAGE;
}

enum { V_OBJ, V_UUID, V_DB, V_STYLE, V_KIND, V_LOAD, V_VMA, V_ARCH, V_CONTEXT, V_IGNORED };

static const struct {
	const char *name;
	int id;
} value_opts[] = {
	{ "--obj", V_OBJ },       { "--exe", V_OBJ },         { "-e", V_OBJ },
	{ "--uuid", V_UUID },     { "--db", V_DB },           { "--output-style", V_STYLE },
	{ "--addr-kind", V_KIND }, { "--load-address", V_LOAD }, { "--adjust-vma", V_VMA },
	{ "--arch", V_ARCH },     { "--default-arch", V_ARCH },
	{ "--print-source-context-lines", V_CONTEXT },
	/* Where llvm-symbolizer looks for debug info: symdb decides that when
	 * indexing (symdb build --debug-dir), so at query time they are
	 * accepted and have no effect. */
	{ "--debug-file-directory", V_IGNORED }, { "--dwp", V_IGNORED },
	{ "--fallback-debug-path", V_IGNORED },  { "--dsym-hint", V_IGNORED },
};

static int apply_value_opt(struct query *q, struct cli_global *g, int id, const char *name,
                           const char *v)
{
	int bad = 0;
	switch (id) {
	case V_OBJ: q->obj = v; break;
	case V_UUID: q->uuid_hex = v; break;
	case V_DB: g->db_dir = v; break;
	case V_STYLE: bad = parse_style(v, &q->pr.style); break;
	case V_KIND: bad = parse_addr_kind(v, &q->kind); break;
	case V_LOAD:
		bad = cli_parse_u64(v, strlen(v), &q->load_address);
		q->load_given = 1;
		break;
	case V_ARCH: q->arch = v; break;
	case V_CONTEXT: bad = parse_context_lines(v, &q->pr.src.lines); break;
	case V_IGNORED: break;
	default: bad = cli_parse_u64(v, strlen(v), &q->adjust_vma); break;
	}
	return bad ? -bad_value(name, v) : 1;
}

/* Options that take a value; returns 1 handled, 0 not ours, or -exit code. */
static int query_value_opt(struct query *q, struct cli_global *g, int argc, char **argv, int *i)
{
	const char *v;
	for (size_t k = 0; k < sizeof(value_opts) / sizeof(value_opts[0]); k++) {
		int m = cli_opt_value(argc, argv, i, value_opts[k].name, &v);
		if (m < 0)
			return -CLI_EXIT_USAGE;
		if (m > 0)
			return apply_value_opt(q, g, value_opts[k].id, value_opts[k].name, v);
	}
	const char *a = argv[*i];
	if (!strncmp(a, "--functions=", 12) || !strncmp(a, "-f=", 3)) {
		v = strchr(a, '=') + 1;
		if (parse_fn_kind(v, &q->pr.fn_kind))
			return -bad_value("--functions", v);
		return 1;
	}
	return 0;
}

/* Returns 0, HELP_SHOWN, or minus an exit code. */
int cli_query_parse_args(struct query *q, struct cli_global *g, int argc, char **argv,
                            int *first_addr)
{
	int i = 1, nat = 0;
	/* Addresses are collected at the front of argv, in order. */
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			for (i++; i < argc; i++)
				if (argv[i][0])
					argv[nat++] = argv[i];
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_usage(stdout, "query");
			return HELP_SHOWN;
		}
		if (a[0] == '\0')
			continue; /* LLVM's OptTable drops empty arguments */
		if (a[0] != '-' || a[1] == '\0') {
			argv[nat++] = argv[i];
			continue;
		}
		if (query_flag(q, a) || query_short_flags(q, a))
			continue;
		int m = query_value_opt(q, g, argc, argv, &i);
		if (m < 0)
			return m;
		if (m > 0)
			continue;
		cli_err(NULL, "query: unknown option '%s' (see 'symdb help query')", a);
		return -CLI_EXIT_USAGE;
	}
	*first_addr = nat;
	if (q->obj && q->uuid_hex) {
		cli_err(NULL, "query: give only one of --obj FILE and --uuid HEX");
		return -CLI_EXIT_USAGE;
	}
	q->per_line = !q->obj && !q->uuid_hex;
	if (q->per_line && q->pr.style == CLI_STYLE_ATOS) {
		cli_err(NULL, "query: --output-style=atos needs --obj FILE or --uuid HEX");
		return -CLI_EXIT_USAGE;
	}
	if (q->kind == SYMDB_ADDR_RUNTIME && !q->load_given) {
		/* Without it every runtime address would be read as an offset
		 * from load address 0: wrong answers instead of an error. */
		cli_err(NULL, "query: --addr-kind runtime needs --load-address ADDR");
		return -CLI_EXIT_USAGE;
	}
	if (q->kind != SYMDB_ADDR_RUNTIME && q->load_address) {
		cli_err(NULL, "query: --load-address needs --addr-kind runtime");
		return -CLI_EXIT_USAGE;
	}
	return 0;
}
