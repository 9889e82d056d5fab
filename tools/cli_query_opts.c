/* SPDX-License-Identifier: MIT */
/*
 * cli_query_opts.c - the options of `symdb query` and of the llvm-symbolizer
 * personality: one table, LLVM 14's llvm-symbolizer option set (Opts.td:
 * every spelling, alias and hidden compatibility flag) plus symdb's own,
 * parsed by LLVM's rules (cli_llvm_opts.c) and applied with LLVM's
 * precedence (the last of an option or its negation wins; any plain
 * --functions beats --functions=).
 *
 * The two differ only in words: run as llvm-symbolizer, the environment and
 * @FILE are expanded first and errors are llvm-symbolizer-14's ("error:
 * unknown argument '--x', did you mean '--y'?", exit 1; an unknown
 * --output-style or --functions value is quietly the default, as there);
 * as `symdb query`, @FILE is expanded, "--" ends the options, and errors
 * are symdb's (exit 2).
 *
 * To add an option: an id in enum opt_id, its spellings in opts[] (EQ()
 * for --name=V / --name V), and what it does in apply_opt().
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_llvm.h"
#include "cli_llvm_opts.h"
#include "cli_query.h"

enum opt_id {
	/* llvm-symbolizer-14's */
	O_ADDRESSES = CLI_OPT_FIRST,
	O_ADJUST_VMA,
	O_BASENAMES,
	O_RELATIVENAMES,
	O_DEBUG_FILE_DIRECTORY,
	O_DEFAULT_ARCH,
	O_DEMANGLE,
	O_NO_DEMANGLE,
	O_DIA,
	O_DWP,
	O_DSYM_HINT,
	O_FALLBACK_DEBUG_PATH,
	O_FUNCTIONS,
	O_FUNCTIONS_EQ,
	O_HELP,
	O_INLINES,
	O_NO_INLINES,
	O_OBJ,
	O_OUTPUT_STYLE,
	O_PRETTY_PRINT,
	O_CONTEXT_LINES,
	O_RELATIVE_ADDRESS,
	O_UNTAG_ADDRESSES,
	O_NO_UNTAG_ADDRESSES,
	O_USE_SYMBOL_TABLE,
	O_VERBOSE,
	O_VERSION,
	/* symdb's */
	X_DB,
	X_UUID,
	X_BUILD_ID,
	X_ADDR_KIND,
	X_LOAD_ADDRESS,
	X_VERIFY,
	X_NO_VERIFY,
	X_NO_BUILD,
	X_PERF_MAP,
	/* --kernel and its sources (cli_live_kernel.c) */
	X_KERNEL,
	X_KALLSYMS,
	X_KALLSYMS_ONLY,
	X_KERNEL_NOTES,
	X_KERNEL_MODULES,
	X_SYSFS_MODULE,
	X_KERNEL_RELEASE,
	X_KERNEL_ROOT,
	X_DEBUG_DIR,
	X_PID,
	/* fetching unknown images (cli_fetch.h) */
	X_UPSTREAM,
	X_DEBUGINFOD,
	X_FETCH_TIMEOUT,
	X_NEGATIVE_TTL,
	X_NO_FETCH,
};

#define F_(p, n, id) { p, n, CLI_OPTK_FLAG, 0, id, NULL }
#define FA(p, n, id, canon) { p, n, CLI_OPTK_FLAG, 0, id, canon }
/* LLVM's Eq multiclass: --name=V, and --name V reported as "--name=" */
#define EQ(n, id) { "--", n "=", CLI_OPTK_JOINED, 0, id, NULL }, \
	{ "--", n, CLI_OPTK_SEPARATE, 0, id, "--" n "=" }
#define XEQ(n, id) { "--", n "=", CLI_OPTK_JOINED, 1, id, NULL }, \
	{ "--", n, CLI_OPTK_SEPARATE, 1, id, "--" n "=" }

/* LLVM 14's llvm/tools/llvm-symbolizer/Opts.td, then symdb's. */
static const struct cli_optdef opts[] = {
	F_("--", "addresses", O_ADDRESSES),
	FA("-", "a", O_ADDRESSES, "--addresses"),
	FA("--", "print-address", O_ADDRESSES, "--addresses"),
	EQ("adjust-vma", O_ADJUST_VMA),
	F_("--", "basenames", O_BASENAMES),
	FA("-", "s", O_BASENAMES, "--basenames"),
	F_("--", "relativenames", O_RELATIVENAMES),
	EQ("debug-file-directory", O_DEBUG_FILE_DIRECTORY),
	EQ("default-arch", O_DEFAULT_ARCH),
	F_("--", "demangle", O_DEMANGLE),
	FA("-", "C", O_DEMANGLE, "--demangle"),
	FA("-", "demangle=true", O_DEMANGLE, "--demangle"),
	F_("--", "no-demangle", O_NO_DEMANGLE),
	FA("-", "demangle=false", O_NO_DEMANGLE, "--no-demangle"),
	F_("--", "dia", O_DIA),
	EQ("dwp", O_DWP),
	EQ("dsym-hint", O_DSYM_HINT),
	EQ("fallback-debug-path", O_FALLBACK_DEBUG_PATH),
	F_("--", "functions", O_FUNCTIONS),
	FA("-", "f", O_FUNCTIONS, "--functions"),
	{ "--", "functions=", CLI_OPTK_JOINED, 0, O_FUNCTIONS_EQ, NULL },
	{ "-", "f=", CLI_OPTK_JOINED, 0, O_FUNCTIONS_EQ, "--functions=" },
	F_("--", "help", O_HELP),
	FA("-", "h", O_HELP, "--help"),
	F_("--", "inlines", O_INLINES),
	FA("-", "i", O_INLINES, "--inlines"),
	FA("--", "inlining", O_INLINES, "--inlines"),
	FA("--", "inlining=true", O_INLINES, "--inlines"),
	F_("--", "no-inlines", O_NO_INLINES),
	FA("--", "inlining=false", O_NO_INLINES, "--no-inlines"),
	EQ("obj", O_OBJ),
	{ "--", "exe=", CLI_OPTK_JOINED, 0, O_OBJ, "--obj=" },
	{ "--", "exe", CLI_OPTK_SEPARATE, 0, O_OBJ, "--obj=" },
	{ "-", "e", CLI_OPTK_JOINED_OR_SEPARATE, 0, O_OBJ, "--obj=" },
	{ "-", "e=", CLI_OPTK_JOINED, 0, O_OBJ, "--obj=" },
	EQ("output-style", O_OUTPUT_STYLE),
	F_("--", "pretty-print", O_PRETTY_PRINT),
	FA("-", "p", O_PRETTY_PRINT, "--pretty-print"),
	EQ("print-source-context-lines", O_CONTEXT_LINES),
	F_("--", "relative-address", O_RELATIVE_ADDRESS),
	F_("--", "untag-addresses", O_UNTAG_ADDRESSES),
	F_("--", "no-untag-addresses", O_NO_UNTAG_ADDRESSES),
	/* a compatibility no-op for old sanitizer runtimes, not in --help */
	F_("--", "use-symbol-table=true", O_USE_SYMBOL_TABLE),
	F_("--", "verbose", O_VERBOSE),
	F_("--", "version", O_VERSION),
	FA("-", "v", O_VERSION, "--version"),

	XEQ("db", X_DB),
	XEQ("uuid", X_UUID),
	/* LLVM 15's: llvm-symbolizer-14 has no such option */
	XEQ("build-id", X_BUILD_ID),
	XEQ("addr-kind", X_ADDR_KIND),
	XEQ("load-address", X_LOAD_ADDRESS),
	XEQ("pid", X_PID),
	XEQ("arch", O_DEFAULT_ARCH),
	{ "--", "verify", CLI_OPTK_FLAG, 1, X_VERIFY, NULL },
	{ "--", "no-verify", CLI_OPTK_FLAG, 1, X_NO_VERIFY, NULL },
	{ "--", "no-build", CLI_OPTK_FLAG, 1, X_NO_BUILD, NULL },
	XEQ("perf-map", X_PERF_MAP),
	{ "--", "kernel", CLI_OPTK_FLAG, 1, X_KERNEL, NULL },
	{ "--", "kallsyms-only", CLI_OPTK_FLAG, 1, X_KALLSYMS_ONLY, NULL },
	XEQ("kallsyms", X_KALLSYMS),
	XEQ("kernel-notes", X_KERNEL_NOTES),
	XEQ("kernel-modules", X_KERNEL_MODULES),
	XEQ("sysfs-module", X_SYSFS_MODULE),
	XEQ("kernel-release", X_KERNEL_RELEASE),
	XEQ("kernel-root", X_KERNEL_ROOT),
	XEQ("debug-dir", X_DEBUG_DIR),
	/* Last, and unknown to the llvm-symbolizer personality: LLVM 15's
	 * --debuginfod is a flag, and llvm-symbolizer-14 rejects them all. */
	XEQ("upstream", X_UPSTREAM),
	XEQ("debuginfod", X_DEBUGINFOD),
	XEQ("fetch-timeout", X_FETCH_TIMEOUT),
	XEQ("negative-ttl", X_NEGATIVE_TTL),
	{ "--", "no-fetch", CLI_OPTK_FLAG, 1, X_NO_FETCH, NULL },
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))
#define NFETCH_OPTS 9 /* the fetch options at the end of opts[] */

/* ---- values ------------------------------------------------------------- */

static int parse_style(const char *v, enum cli_style *out)
{
	static const struct {
		const char *name;
		enum cli_style style;
	} styles[] = { { "LLVM", CLI_STYLE_LLVM },
		       { "GNU", CLI_STYLE_GNU },
		       { "JSON", CLI_STYLE_JSON },
		       { "atos", CLI_STYLE_ATOS } };
	for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++)
		if (strcmp(v, styles[i].name) == 0) {
			*out = styles[i].style;
			return 0;
		}
	return -1;
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

/* An int as StringRef::getAsInteger<int> reads it (radix from the
 * prefix, "-N" accepted; N <= 0 turns the context off). */
static int parse_context_lines(const char *v, int *out)
{
	int neg = v[0] == '-';
	uint64_t n;
	if (cli_parse_u64(v + neg, strlen(v + neg), &n) < 0 || n > (uint64_t)INT32_MAX + neg)
		return -1;
	*out = neg ? (int)-(int64_t)n : (int)n;
	return 0;
}

/* sys::path::extension(hint) == ".dSYM": the last component's ("." for a
 * path ending in '/'). */
static int is_dsym(const char *hint)
{
	size_t n = strlen(hint);
	if (n && hint[n - 1] == '/')
		return 0;
	const char *base = strrchr(hint, '/');
	base = base ? base + 1 : hint;
	const char *dot = strrchr(base, '.');
	return dot && strcmp(base, ".") && strcmp(base, "..") && !strcmp(dot, ".dSYM");
}

/* ---- applying ----------------------------------------------------------- */

struct opt_state {
	int llvm;            /* the llvm-symbolizer personality */
	int help, version;
	int functions_flag;  /* a plain --functions/-f: wins over --functions= */
	const char *functions_eq, *adjust_vma, *context_lines, *style, *kind, *load;
	const char *adjust_vma_sp, *context_lines_sp;
	const char *pid;
};

static int bad_value(const char *opt, const char *v)
{
	cli_err(NULL, "invalid value '%s' for %s (see 'symdb help query')", v, opt);
	return -CLI_EXIT_USAGE;
}

static void apply_opt(struct query *q, struct cli_global *g, struct opt_state *s,
                      const struct cli_optval *a)
{
	struct cli_printer *p = &q->pr;
	switch (a->id) {
	case O_ADDRESSES: p->print_address = 1; break;
	case O_ADJUST_VMA: s->adjust_vma = a->value; s->adjust_vma_sp = a->spelling; break;
	case O_BASENAMES: p->path_kind = CLI_PATH_BASENAME; break;
	case O_RELATIVENAMES: p->path_kind = CLI_PATH_RELATIVE; break;
	case O_DEFAULT_ARCH: q->arch = a->value; break;
	case O_DEMANGLE: p->demangle = 1; break;
	case O_NO_DEMANGLE: p->demangle = 0; break;
	case O_FUNCTIONS: s->functions_flag = 1; break;
	case O_FUNCTIONS_EQ: s->functions_eq = a->value; break;
	case O_HELP: s->help = 1; break;
	case O_INLINES: q->inlines = 1; break;
	case O_NO_INLINES: q->inlines = 0; break;
	case O_OBJ: q->obj = a->value; break;
	case O_OUTPUT_STYLE: s->style = a->value; break;
	case O_PRETTY_PRINT: p->pretty = 1; break;
	case O_CONTEXT_LINES: s->context_lines = a->value; s->context_lines_sp = a->spelling; break;
	case O_VERBOSE: p->verbose = 1; break;
	case O_VERSION: s->version = 1; break;
	case X_DB: g->db_dir = a->value; break;
	case X_UUID: q->uuid_hex = a->value; break;
	case X_BUILD_ID: q->build_id_hex = a->value; break;
	case X_ADDR_KIND: s->kind = a->value; break;
	case X_LOAD_ADDRESS: s->load = a->value; break;
	case X_VERIFY: q->verify = 1; break;
	case X_NO_VERIFY: q->verify = -1; break;
	case X_NO_BUILD: q->no_build = 1; break;
	case X_PERF_MAP: q->perf_map = a->value; break;
	case X_KERNEL: q->ksrc.on = 1; break;
	case X_KALLSYMS_ONLY: q->ksrc.no_dwarf = q->ksrc.any = 1; break;
	case X_KALLSYMS: q->ksrc.kallsyms = a->value; q->ksrc.any = 1; break;
	case X_KERNEL_NOTES: q->ksrc.notes = a->value; q->ksrc.any = 1; break;
	case X_KERNEL_MODULES: q->ksrc.modules = a->value; q->ksrc.any = 1; break;
	case X_SYSFS_MODULE: q->ksrc.sysfs_module = a->value; q->ksrc.any = 1; break;
	case X_KERNEL_RELEASE: q->ksrc.release = a->value; q->ksrc.any = 1; break;
	case X_KERNEL_ROOT: q->ksrc.root = a->value; q->ksrc.any = 1; break;
	case X_DEBUG_DIR:
		q->ksrc.any = 1;
		if (q->ksrc.ndebug < CLI_KERNEL_DEBUG_DIRS)
			q->ksrc.debug_dirs[q->ksrc.ndebug++] = a->value;
		else
			q->ksrc.too_many = 1;
		break;
	case X_PID: s->pid = a->value; break;
	case X_UPSTREAM: (void)cli_fetch_set(&q->fetch, "--upstream", a->value); break;
	case X_DEBUGINFOD: (void)cli_fetch_set(&q->fetch, "--debuginfod", a->value); break;
	case X_FETCH_TIMEOUT: (void)cli_fetch_set(&q->fetch, "--fetch-timeout", a->value); break;
	case X_NEGATIVE_TTL: (void)cli_fetch_set(&q->fetch, "--negative-ttl", a->value); break;
	case X_NO_FETCH: (void)cli_fetch_set(&q->fetch, "--no-fetch", NULL); break;
	case O_DEBUG_FILE_DIRECTORY:
		if (q->nbuild_id_dirs < QUERY_BUILD_ID_DIRS)
			q->build_id_dirs[q->nbuild_id_dirs++] = a->value;
		else
			q->build_id_dirs_over = 1;
		break;
	/*
	 * Accepted, no effect.  --dwp and --fallback-debug-path say where
	 * debug info is: symdb decides that when indexing (symdb build
	 * --debug-dir); --debug-file-directory only says where the images of
	 * --build-id and "BUILDID:" lines are (cli_query_open.c).  --relative-address,
	 * --untag-addresses and --use-symbol-table=true change nothing for
	 * ELF and Mach-O files in llvm-symbolizer-14 either (a preferred base
	 * is COFF's; untagging applies to symbol addresses, which carry no
	 * tags), and --dia is Windows-only.
	 */
	default: break;
	}
}

/* LLVM's "SPELLING: expected a non-negative integer, but got 'V'" (no
 * newline, exit 1), or symdb's usage error. */
static int bad_int(const struct opt_state *s, const char *spelling, const char *v)
{
	if (!s->llvm) {
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(spelling, "="), spelling);
		return bad_value(name, v);
	}
	fprintf(stderr, "%s: expected a non-negative integer, but got '%s'", spelling, v);
	return -CLI_EXIT_FAILED;
}

/* --build-id HEX (LLVM 15's; checked where llvm-symbolizer-16 checks it,
 * after the other values): hex digits, and not beside --obj (or --uuid,
 * symdb's). */
static int check_build_id(const struct query *q, const struct opt_state *s)
{
	const char *v = q->build_id_hex;
	size_t n = strspn(v, "0123456789abcdefABCDEF");
	/* (llvm-16 says the conflict first, whatever the value) */
	if (q->obj && s->llvm) {
		fputs("error: cannot specify both --build-id and --obj\n", stderr);
		return -CLI_EXIT_FAILED;
	}
	if (q->obj || q->uuid_hex) {
		cli_err(NULL, "query: give only one of --obj FILE, --uuid HEX and --build-id HEX");
		return -CLI_EXIT_USAGE;
	}
	if (!v[0] || v[n]) {
		if (!s->llvm)
			return bad_value("--build-id", v);
		fprintf(stderr, "--build-id=: expected a build ID, but got '%s'\n", v);
		return -CLI_EXIT_FAILED;
	}
	return 0;
}

/* The values that need parsing, in llvm-symbolizer-14's order. */
static int finish_values(struct query *q, const struct opt_state *s)
{
	struct cli_printer *p = &q->pr;
	if (q->fetch.bad) /* reported when seen */
		return -CLI_EXIT_USAGE;
	if (s->adjust_vma && cli_parse_u64(s->adjust_vma, strlen(s->adjust_vma), &q->adjust_vma))
		return bad_int(s, s->adjust_vma_sp, s->adjust_vma);
	if (s->functions_flag) {
		p->fn_kind = CLI_FN_LINKAGE;
	} else if (s->functions_eq && parse_fn_kind(s->functions_eq, &p->fn_kind)) {
		if (!s->llvm)
			return bad_value("--functions", s->functions_eq);
		p->fn_kind = CLI_FN_LINKAGE;
	}
	if (s->context_lines && parse_context_lines(s->context_lines, &p->src.lines))
		return bad_int(s, s->context_lines_sp, s->context_lines);
	if (s->style && parse_style(s->style, &p->style)) {
		if (!s->llvm)
			return bad_value("--output-style", s->style);
		p->style = CLI_STYLE_LLVM;
	}
	if (s->style && s->llvm && p->style == CLI_STYLE_ATOS)
		p->style = CLI_STYLE_LLVM; /* symdb's own style, not llvm-symbolizer's */
	if (s->kind && parse_addr_kind(s->kind, &q->kind))
		return bad_value("--addr-kind", s->kind);
	if (s->load && cli_parse_u64(s->load, strlen(s->load), &q->load_address))
		return bad_value("--load-address", s->load);
	q->load_given = s->load != NULL;
	/* Decimal only, as /proc names it: "010" is not pid 8, "0x73bf" no
	 * pid at all (eu-addr2line --pid refuses both). */
	uint64_t pid = 0;
	if (s->pid && (!s->pid[0] || s->pid[strspn(s->pid, "0123456789")] || s->pid[0] == '0' ||
	               strlen(s->pid) > 10 || cli_parse_u64(s->pid, strlen(s->pid), &pid) ||
	               pid > INT32_MAX))
		return bad_value("--pid", s->pid);
	q->pid = s->pid ? (int)pid : 0;
	if (q->build_id_hex)
		return check_build_id(q, s);
	return 0;
}

/* ---- errors ------------------------------------------------------------- */

/* Every parse error, in llvm-symbolizer-14's words (exit 1) or the first in
 * symdb's (exit 2); 0 when there is none. */
static int report_errors(const struct cli_optlist *l, int llvm)
{
	char near[256];
	int errors = 0;
	if (l->missing) {
		if (!llvm) {
			cli_err(NULL, "option '%s' needs a value", l->missing);
			return -CLI_EXIT_USAGE;
		}
		fprintf(stderr, "error: %s: missing argument\n", l->missing);
		errors++;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].id != CLI_OPT_UNKNOWN)
			continue;
		const char *a = l->v[i].value;
		int close = cli_opt_nearest(opts, NOPTS, a, !llvm, near, sizeof(near)) <= 1;
		if (!llvm) {
			if (close)
				cli_err(NULL, "query: unknown option '%s', did you mean '%s'? "
				              "(see 'symdb help query')", a, near);
			else
				cli_err(NULL, "query: unknown option '%s' (see 'symdb help query')", a);
			return -CLI_EXIT_USAGE;
		}
		if (close)
			fprintf(stderr, "error: unknown argument '%s', did you mean '%s'?\n", a, near);
		else
			fprintf(stderr, "error: unknown argument '%s'\n", a);
		errors++;
	}
	return errors ? -CLI_EXIT_FAILED : 0;
}

/* ---- the command line --------------------------------------------------- */

/* Kept until exit: option values and addresses point into them. */
static struct {
	char **args;
	int nargs;
	struct cli_optlist list;
	char **inputs;
} parsed;

static void free_parsed(void)
{
	cli_optlist_free(&parsed.list);
	cli_llvm_args_free(parsed.args, parsed.nargs);
	free(parsed.inputs);
	memset(&parsed, 0, sizeof(parsed));
}

/* Check what the options say together; 0 or minus an exit code. */
static int check_combination(struct query *q)
{
	if (q->obj && q->uuid_hex) {
		cli_err(NULL, "query: give only one of --obj FILE and --uuid HEX");
		return -CLI_EXIT_USAGE;
	}
	if (q->pid && (q->obj || q->uuid_hex || q->build_id_hex || q->perf_map || q->ksrc.on ||
	               q->ksrc.any)) {
		cli_err(NULL, "query: --pid PID names the process: no --obj, --uuid, --build-id, "
		              "--perf-map or --kernel with it");
		return -CLI_EXIT_USAGE;
	}
	if (q->pid && (q->kind != SYMDB_ADDR_VADDR || q->load_given ||
	               q->pr.style == CLI_STYLE_ATOS)) {
		cli_err(NULL, "query: --pid takes runtime addresses as they are: no --addr-kind, "
		              "--load-address or --output-style=atos with it");
		return -CLI_EXIT_USAGE;
	}
	if (q->ksrc.on || q->ksrc.any)
		return cli_kernel_check(q);
	/* --pid: every request has its own module, found by the library */
	q->per_line = !q->obj && !q->uuid_hex && !q->build_id_hex;
	if (q->build_id_dirs_over && ((q->per_line && !q->pid) || q->build_id_hex)) {
		/* (elsewhere the option changes nothing, as in llvm-symbolizer-14) */
		cli_err(NULL, "query: at most %d --debug-file-directory", QUERY_BUILD_ID_DIRS);
		return -CLI_EXIT_USAGE;
	}
	if (q->perf_map && (q->obj || q->uuid_hex || q->build_id_hex || q->pr.style == CLI_STYLE_ATOS)) {
		cli_err(NULL, "query: --perf-map takes no --obj, --uuid, --build-id or "
		              "--output-style=atos");
		return -CLI_EXIT_USAGE;
	}
	if ((q->per_line || q->build_id_hex) && q->pr.style == CLI_STYLE_ATOS) {
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

/* Returns 0, HELP_SHOWN, or minus an exit code. */
int cli_query_parse_args(struct query *q, struct cli_global *g, int argc, char **argv,
                         char ***addrs, int *naddrs)
{
	struct opt_state s = { .llvm = g->llvm_symbolizer };
	free_parsed();
	const char *env = s.llvm ? getenv(CLI_LLVM_ENV) : NULL;
	if (cli_llvm_expand_args(env, argc - 1, argv + 1, &parsed.args, &parsed.nargs) < 0)
		return -CLI_EXIT_FAILED;
	/* symdb's own "--": what follows are addresses (LLVM 14 has none). */
	int nopt = parsed.nargs;
	for (int i = 0; !s.llvm && i < parsed.nargs; i++)
		if (!strcmp(parsed.args[i], "--")) {
			nopt = i;
			break;
		}
	if (cli_opt_parse(opts, s.llvm ? NOPTS - NFETCH_OPTS : NOPTS, nopt, parsed.args,
	                  &parsed.list) < 0)
		return -CLI_EXIT_FAILED;
	int rc = report_errors(&parsed.list, s.llvm);
	if (rc < 0)
		return rc;
	parsed.inputs = malloc(((size_t)parsed.nargs + 1) * sizeof(*parsed.inputs));
	if (!parsed.inputs)
		return -CLI_EXIT_FAILED;
	int n = 0;
	for (size_t i = 0; i < parsed.list.n; i++) {
		if (parsed.list.v[i].id == CLI_OPT_INPUT)
			parsed.inputs[n++] = (char *)parsed.list.v[i].value;
		else
			apply_opt(q, g, &s, &parsed.list.v[i]);
	}
	for (int i = nopt + 1; i < parsed.nargs; i++)
		if (parsed.args[i][0])
			parsed.inputs[n++] = parsed.args[i];
	if (s.help) {
		if (s.llvm)
			cli_llvm_help(stdout);
		else
			cli_usage(stdout, "query");
		return HELP_SHOWN;
	}
	if (s.version) {
		cli_llvm_version(stdout);
		return HELP_SHOWN;
	}
	if ((rc = finish_values(q, &s)) < 0)
		return rc;
	/* llvm-symbolizer-14 checks each --dsym-hint after the other values;
	 * symdb finds .dSYM bundles when indexing, so that is all it does. */
	for (size_t i = 0; i < parsed.list.n; i++)
		if (parsed.list.v[i].id == O_DSYM_HINT && !is_dsym(parsed.list.v[i].value))
			fprintf(stderr,
			        "Warning: invalid dSYM hint: \"%s\" (must have the '.dSYM' "
			        "extension).\n",
			        parsed.list.v[i].value);
	*addrs = parsed.inputs;
	*naddrs = n;
	return check_combination(q);
}
