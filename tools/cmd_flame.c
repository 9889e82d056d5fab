/* SPDX-License-Identifier: MIT */
/*
 * `symdb flame FOLDED [-o OUT.svg]`: render folded stacks ("a;b;c N"
 * lines, from `symdb perf`, `symdb pprof --folded`-style tools, perf's
 * stackcollapse scripts...) as the interactive SVG flame graph of
 * prof_svg.c.  The whole input is read before anything is written, and
 * -o OUT is written as cli_outfile.h says (a temporary file renamed over
 * a regular OUT): a bad line leaves no half-written picture behind.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_outfile.h"
#include "cli_util.h"
#include "profile.h"

struct flame_args {
	const char *in, *out;
	prof_svg_opts svg;
};

static int parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out >= 0) ? -1 : 0;
}

/* 0, CLI_OPT_HELP after printing the help, or -1 (a message printed). */
static int flame_args(int argc, char **argv, struct flame_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		int m;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_usage(stdout, "flame");
			return CLI_OPT_HELP;
		}
		if ((m = cli_opt_value(argc, argv, &i, "-o", &v)) ||
		    (m = cli_opt_value(argc, argv, &i, "--output", &v)) ||
		    (m = cli_opt_value(argc, argv, &i, "--svg", &v))) {
			if (m < 0)
				return -1;
			a->out = v;
		} else if ((m = cli_opt_value(argc, argv, &i, "--title", &v))) {
			if (m < 0)
				return -1;
			a->svg.title = v;
		} else if ((m = cli_opt_value(argc, argv, &i, "--subtitle", &v))) {
			if (m < 0)
				return -1;
			a->svg.subtitle = v;
		} else if ((m = cli_opt_value(argc, argv, &i, "--unit", &v))) {
			if (m < 0)
				return -1;
			a->svg.unit = v;
		} else if ((m = cli_opt_value(argc, argv, &i, "--width", &v))) {
			uint64_t w;
			if (m < 0)
				return -1;
			if (cli_parse_u64(v, strlen(v), &w) < 0 || w < 100 || w > 100000) {
				cli_err(NULL, "--width: '%s' is not a width in pixels (100-100000)", v);
				return -1;
			}
			a->svg.width = (unsigned)w;
		} else if ((m = cli_opt_value(argc, argv, &i, "--min-width", &v))) {
			if (m < 0)
				return -1;
			if (parse_double(v, &a->svg.min_width) < 0) {
				cli_err(NULL, "--min-width: '%s' is not a number of pixels", v);
				return -1;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_err(NULL, "flame: unknown option '%s' (see 'symdb flame --help')", argv[i]);
			return -1;
		} else if (a->in) {
			cli_err(NULL, "flame: one FOLDED file only (see 'symdb flame --help')");
			return -1;
		} else {
			a->in = argv[i];
		}
	}
	if (!a->in) {
		cli_err(NULL, "flame: no FOLDED file (see 'symdb flame --help'; '-' is stdin)");
		return -1;
	}
	return 0;
}

static int read_folded(const char *path, prof_folded *f)
{
	int use_stdin = strcmp(path, "-") == 0;
	FILE *in = use_stdin ? stdin : fopen(path, "r");
	char eb[512] = "";
	if (!in) {
		cli_err(path, "%s", strerror(errno));
		return -1;
	}
	int rc = prof_folded_read_text(f, in, use_stdin ? "<stdin>" : path, eb, sizeof(eb));
	if (!use_stdin)
		fclose(in);
	if (rc == -EINVAL && eb[0])
		cli_err(NULL, "%s", eb);
	else if (rc < 0)
		cli_err(use_stdin ? "<stdin>" : path, "%s", strerror(-rc));
	return rc < 0 ? -1 : 0;
}

/* The SVG into out (or stdout): 0 or -1 (a message printed). */
static int write_svg(const prof_folded *f, const struct flame_args *a)
{
	struct cli_outfile out;
	if (cli_outfile_open(&out, a->out) < 0)
		return -1;
	int rc = prof_svg_write(f, out.f, &a->svg);
	if (rc < 0) {
		cli_err(out.name, "%s", strerror(-rc));
		cli_outfile_abort(&out);
		return -1;
	}
	return cli_outfile_commit(&out);
}

int cmd_flame(const struct cli_global *g, int argc, char **argv)
{
	struct flame_args a = { .svg = { .sz = sizeof(prof_svg_opts) } };
	char sub[128];
	(void)g;
	int rc = flame_args(argc, argv, &a);
	if (rc)
		return rc == CLI_OPT_HELP ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	prof_folded *f = prof_folded_new();
	if (!f) {
		cli_err(NULL, "%s", strerror(ENOMEM));
		return CLI_EXIT_FAILED;
	}
	if (read_folded(a.in, f) < 0) {
		prof_folded_free(f);
		return CLI_EXIT_FAILED;
	}
	if (!a.svg.subtitle) {
		snprintf(sub, sizeof(sub), "%llu %s in %zu stacks",
		         (unsigned long long)prof_folded_total(f), a.svg.unit ? a.svg.unit : "samples",
		         prof_folded_count(f));
		a.svg.subtitle = sub;
	}
	rc = write_svg(f, &a);
	prof_folded_free(f);
	return rc < 0 ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}
