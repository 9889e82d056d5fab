/* SPDX-License-Identifier: MIT */
/*
 * `symdb symbolicate`: Apple crash reports symbolicated from the database.
 *
 * Three inputs:
 *  - the classic text report (.crash): images come from the "Binary Images:"
 *    section ("0xLOAD - 0xEND NAME ARCH <UUID> PATH"), frames are the lines
 *    "N  IMAGE  0xADDR tail" of every thread; a frame of a known image gets
 *    its tail replaced by "func + offset (file:line)", every other line is
 *    copied byte for byte, except that an iOS "Last Exception Backtrace:"
 *    address list "(0xA 0xB ...)" is expanded into frame lines;
 *  - the JSON report (.ips, cli_ips.c): a header line, then one JSON object
 *    whose usedImages give UUID and base and whose threads[].frames[] give
 *    imageIndex and imageOffset; symbolicated frames gain "symbol",
 *    "symbolLocation", "sourceFile" and "sourceLine" as Apple's tools add;
 *  - --stack: plain "IMAGE UUID LOAD-ADDRESS ADDRESS" lines, answered in
 *    atos format (cli_atos.c), one line per frame (several with -i).
 * All frames of one image are resolved in one sorted batch (cli_crash.c).
 * Images not in the database stay as they were and are listed on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_atos.h"
#include "cli_crash.h"
#include "cli_fault.h"
#include "cli_ips.h"
#include "cli_util.h"
#include "symdb.h"

struct sym_opts {
	const char *path; /* "-" = stdin */
	int stack, inlines;
};

/* A line of the input: [p, p + len) without its end, then `end` bytes of
 * line ending. */
struct sym_line {
	const char *p;
	size_t len, end;
};

static char *read_all(const char *path, size_t *n)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t cap = 1 << 16, len = 0;
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(cap + 1);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (len < cap)
			break;
		char *nb = realloc(buf, 2 * cap + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (buf && ferror(f)) {
		free(buf);
		buf = NULL;
	}
	if (f != stdin)
		fclose(f);
	if (buf)
		buf[len] = 0;
	*n = len;
	return buf;
}

static struct sym_line *split_lines(const char *buf, size_t n, size_t *count)
{
	size_t cap = 64, k = 0, off = 0;
	struct sym_line *l = malloc(cap * sizeof *l);

	while (l && off < n) {
		const char *nl = memchr(buf + off, '\n', n - off);
		size_t len = nl ? (size_t)(nl - (buf + off)) : n - off;
		if (k == cap) {
			struct sym_line *nlines = realloc(l, 2 * cap * sizeof *l);
			if (!nlines) {
				free(l);
				return NULL;
			}
			l = nlines;
			cap *= 2;
		}
		l[k].p = buf + off;
		l[k].end = nl ? 1 : 0;
		if (len && l[k].p[len - 1] == '\r') {
			len--;
			l[k].end++;
		}
		l[k].len = len;
		off += len + l[k].end;
		k++;
	}
	*count = k;
	return l;
}

/* ---- small scanners --------------------------------------------------------- */

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* "0x" and hex digits at s[i]: returns the index past them (0 if none). */
static size_t scan_hex(const char *s, size_t i, size_t n, uint64_t *v)
{
	size_t j = i + 2;

	if (i + 2 >= n || s[i] != '0' || (s[i + 1] != 'x' && s[i + 1] != 'X') ||
	    !isxdigit((unsigned char)s[j]))
		return 0;
	while (j < n && isxdigit((unsigned char)s[j]))
		j++;
	if (cli_parse_u64(s + i, j - i, v) != 0)
		return 0;
	return j;
}

/* ---- classic .crash ------------------------------------------------------- */

static int bad_line(char *why, size_t why_sz, const char *reason)
{
	snprintf(why, why_sz, "%s", reason);
	return -1;
}

/* "0xLOAD - 0xEND [+]NAME ARCH <UUID> PATH".  Returns 1 parsed, 0 not an
 * image line (blank), -1 malformed (reason in why). */
static int parse_image_line(const struct sym_line *l, struct crash_image *m, char *why,
                            size_t why_sz)
{
	const char *s = l->p, *lt, *gt;
	size_t n = l->len, i = skip_ws(s, 0, n), j, a;
	char hex[80];

	if (i == n)
		return 0;
	if (!(j = scan_hex(s, i, n, &m->load)))
		return bad_line(why, why_sz, "bad load address in Binary Images");
	i = skip_ws(s, j, n);
	if (i >= n || s[i] != '-')
		return bad_line(why, why_sz, "expected '-' after the load address");
	i = skip_ws(s, i + 1, n);
	if ((j = scan_hex(s, i, n, &m->end)) == 0) {
		while (i < n && s[i] != ' ' && s[i] != '\t') /* "???" */
			i++;
		j = i;
	}
	lt = memchr(s + j, '<', n - j);
	gt = lt ? memchr(lt, '>', (size_t)(s + n - lt)) : NULL;
	if (!lt || !gt || gt - lt - 1 >= (ptrdiff_t)sizeof hex)
		return bad_line(why, why_sz, "no <UUID> in Binary Images line");
	memcpy(hex, lt + 1, (size_t)(gt - lt - 1));
	hex[gt - lt - 1] = 0;
	if (symdb_uuid_parse(hex, &m->uuid) < 0) {
		snprintf(why, why_sz, "bad UUID <%s>", hex);
		return -1;
	}
	/* NAME ARCH between the end address and '<': ARCH is the last word. */
	i = skip_ws(s, j, n);
	a = (size_t)(lt - s);
	while (a > i && (s[a - 1] == ' ' || s[a - 1] == '\t'))
		a--;
	j = a;
	while (j > i && s[j - 1] != ' ' && s[j - 1] != '\t')
		j--;
	snprintf(m->arch, sizeof m->arch, "%.*s", (int)(a - j), s + j);
	while (j > i && (s[j - 1] == ' ' || s[j - 1] == '\t'))
		j--;
	if (i < j && s[i] == '+')
		i++;
	snprintf(m->name, sizeof m->name, "%.*s", (int)(j - i), s + i);
	return 1;
}

/* A frame line "N  IMAGE  0xADDR tail": the address and where the tail
 * starts.  Returns 1 when it is one. */
static int parse_frame_line(const struct sym_line *l, uint64_t *addr, size_t *tail,
                            size_t *name_b, size_t *name_e)
{
	const char *s = l->p;
	size_t n = l->len, i = skip_ws(s, 0, n), j;

	if (i == n || !isdigit((unsigned char)s[i]))
		return 0;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	if (i == n || (s[i] != ' ' && s[i] != '\t'))
		return 0;
	i = skip_ws(s, i, n);
	*name_b = i;
	for (; i + 2 < n; i++) {
		if ((s[i] != ' ' && s[i] != '\t') || s[i + 1] != '0')
			continue;
		j = scan_hex(s, i + 1, n, addr);
		if (j && (j == n || s[j] == ' ' || s[j] == '\t')) {
			*name_e = i;
			*tail = skip_ws(s, j, n);
			return *name_e > *name_b;
		}
	}
	return 0;
}

static int classic_images(struct crash *c, const struct sym_line *l, size_t n, size_t *bi,
                          const char *what)
{
	char why[200];
	size_t i;

	for (i = 0; i < n; i++)
		if (l[i].len >= 14 && !memcmp(l[i].p, "Binary Images:", 14))
			break;
	if (i == n) {
		cli_err(what, "no 'Binary Images:' section: not an Apple crash report");
		return -1;
	}
	*bi = i;
	for (i++; i < n; i++) {
		struct crash_image tmp;
		int r;
		memset(&tmp, 0, sizeof tmp);
		r = parse_image_line(&l[i], &tmp, why, sizeof why);
		if (r == 0)
			break;
		if (r < 0) {
			cli_err(what, "line %zu: %s", i + 1, why);
			return -1;
		}
		*crash_add_image(c) = tmp;
	}
	if (!c->nim) {
		cli_err(what, "line %zu: the Binary Images section is empty", *bi + 1);
		return -1;
	}
	return 0;
}

static uint32_t image_by_name(const struct crash *c, const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	for (size_t i = 0; i < c->nim; i++)
		if (strlen(c->im[i].name) == n && !memcmp(c->im[i].name, s, n))
			return (uint32_t)i;
	return CRASH_NO_IMAGE;
}

/* What one line of a classic report holds: a frame (frame: its index, tail:
 * where the text to replace starts), or an expanded "Last Exception
 * Backtrace" address list (nexp frames from frame), or nothing. */
struct cl_line {
	size_t frame, tail, nexp;
};

static struct crash_frame *add_frame(struct crash *c, uint32_t im, uint64_t addr)
{
	struct crash_frame *f = crash_add_frame(c);
	f->image = im;
	f->addr = addr;
	return f;
}

/* "(0xA 0xB ...)" right after "Last Exception Backtrace:" (iOS reports):
 * every address becomes a frame.  Returns how many, 0 if not such a line. */
static size_t leb_line(struct crash *c, const struct sym_line *l, int after_header)
{
	const char *s = l->p;
	size_t n = l->len, i = skip_ws(s, 0, n), k = 0, j;
	uint64_t a;

	while (n > i && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!after_header || i == n || s[i] != '(' || s[n - 1] != ')')
		return 0;
	for (int pass = 0; pass < 2; pass++)
		for (j = skip_ws(s, i + 1, n), k = 0; j < n - 1; j = skip_ws(s, j, n - 1), k++) {
			size_t e = scan_hex(s, j, n - 1, &a);
			if (!e)
				return 0;
			if (pass)
				add_frame(c, crash_image_of(c, a), a);
			j = e;
		}
	return k;
}

static struct cl_line *classic_frames(struct crash *c, const struct sym_line *l, size_t n,
                                      size_t bi)
{
	struct cl_line *cl = calloc(n + 1, sizeof *cl);

	/* Lines from "Binary Images:" on are no frames: without this they
	 * kept frame 0 from calloc and were printed as frame 0's symbol. */
	for (size_t i = 0; cl && i <= n; i++)
		cl[i].frame = SIZE_MAX;
	for (size_t i = 0; cl && i < n && i < bi; i++) {
		size_t nb, ne;
		uint64_t addr;
		uint32_t im;
		cl[i].frame = c->nfr;
		if ((cl[i].nexp = leb_line(c, &l[i], i > 0 && l[i - 1].len >= 25 &&
		                           !memcmp(l[i - 1].p, "Last Exception Backtrace:", 25))))
			continue;
		cl[i].frame = SIZE_MAX;
		if (!parse_frame_line(&l[i], &addr, &cl[i].tail, &nb, &ne))
			continue;
		im = image_by_name(c, l[i].p + nb, ne - nb);
		if (im == CRASH_NO_IMAGE)
			im = crash_image_of(c, addr);
		if (im == CRASH_NO_IMAGE)
			continue;
		add_frame(c, im, addr);
		cl[i].frame = c->nfr - 1;
	}
	return cl;
}

/* One expanded exception frame, in the thread frames' layout:
 * "N   IMAGE<pad>\t0xADDR func + off (file:line)" (unknown: "0xLOAD + off"). */
static void leb_print(const struct crash *c, const struct crash_frame *f, size_t k,
                      struct cli_demangler *dm, struct cli_out *o)
{
	const struct crash_image *m = f->image == CRASH_NO_IMAGE ? NULL : &c->im[f->image];
	struct crash_text t;

	cli_out_fmt(o, "%-4zu%-30s\t0x%016llx ", k, m ? m->name : "???",
	            (unsigned long long)f->addr);
	if (crash_known(c, f)) {
		crash_text(c, f, dm, &t);
		crash_print_text(o, &t);
	} else {
		cli_out_fmt(o, "0x%llx + %llu", (unsigned long long)(m ? m->load : 0),
		            (unsigned long long)(f->addr - (m ? m->load : 0)));
	}
	cli_out_chr(o, '\n');
}

static void classic_line(const struct crash *c, const struct sym_line *l,
                         const struct cl_line *cl, struct cli_demangler *dm, struct cli_out *o)
{
	const struct crash_frame *f = cl->frame == SIZE_MAX ? NULL : &c->fr[cl->frame];
	struct crash_text t;

	if (cl->nexp) {
		for (size_t k = 0; k < cl->nexp; k++)
			leb_print(c, &c->fr[cl->frame + k], k, dm, o);
	} else if (f && crash_known(c, f)) {
		crash_text(c, f, dm, &t);
		cli_out_mem(o, l->p, cl->tail);
		crash_print_text(o, &t);
		cli_out_mem(o, l->p + l->len, l->end);
	} else {
		cli_out_mem(o, l->p, l->len + l->end);
	}
}

static int run_classic(struct crash *c, symdb *db, const struct sym_line *l, size_t n,
                       struct cli_out *o, const char *what)
{
	struct cli_demangler dm;
	struct cl_line *cl;
	size_t bi;
	int rc = -1;

	if (classic_images(c, l, n, &bi, what) < 0)
		return -1;
	cl = classic_frames(c, l, n, bi);
	if (!cl)
		cli_err(what, "out of memory");
	else if (crash_resolve(c, db, what) == 0)
		rc = 0;
	cli_demangler_init(&dm);
	for (size_t i = 0; rc == 0 && i < n; i++)
		classic_line(c, &l[i], &cl[i], &dm, o);
	cli_demangler_fini(&dm);
	free(cl);
	return rc;
}

/* ---- --stack ---------------------------------------------------------------- */

/* "IMAGE UUID LOAD ADDR": fields into f (and an image, shared by UUID+load). */
static int stack_line(struct crash *c, const struct sym_line *l, size_t lineno,
                      const char *what)
{
	const char *s = l->p;
	size_t n = l->len, b[4], e[4], i = 0, k;
	struct crash_image tmp;
	uint64_t addr;
	char hex[80];

	for (k = 0; k < 4; k++) {
		i = skip_ws(s, i, n);
		b[k] = i;
		while (i < n && s[i] != ' ' && s[i] != '\t')
			i++;
		e[k] = i;
		if (b[k] == e[k])
			break;
	}
	if (k < 4 || skip_ws(s, i, n) != n) {
		cli_err(what, "line %zu: expected 'IMAGE UUID LOAD-ADDRESS ADDRESS'", lineno);
		return -1;
	}
	memset(&tmp, 0, sizeof tmp);
	snprintf(tmp.name, sizeof tmp.name, "%.*s", (int)(e[0] - b[0]), s + b[0]);
	snprintf(hex, sizeof hex, "%.*s", (int)(e[1] - b[1] < 79 ? e[1] - b[1] : 79), s + b[1]);
	if (symdb_uuid_parse(hex, &tmp.uuid) < 0 ||
	    cli_parse_u64(s + b[2], e[2] - b[2], &tmp.load) ||
	    cli_parse_u64(s + b[3], e[3] - b[3], &addr)) {
		cli_err(what, "line %zu: bad UUID or address", lineno);
		return -1;
	}
	k = c->nim;
	for (size_t j = 0; j < c->nim; j++)
		if (c->im[j].load == tmp.load && !memcmp(&c->im[j].uuid, &tmp.uuid, sizeof tmp.uuid))
			k = j;
	if (k == c->nim)
		*crash_add_image(c) = tmp;
	struct crash_frame *f = crash_add_frame(c);
	f->image = (uint32_t)k;
	f->addr = addr;
	return 0;
}

static int run_stack(struct crash *c, symdb *db, const struct sym_line *l, size_t n,
                     struct cli_out *o, const struct sym_opts *so, const char *what)
{
	struct cli_demangler dm;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (skip_ws(l[i].p, 0, l[i].len) < l[i].len && stack_line(c, &l[i], i + 1, what) < 0)
			return -1;
	if (crash_resolve(c, db, what) < 0)
		return -1;
	cli_demangler_init(&dm);
	for (size_t i = 0; i < n; i++) {
		const struct crash_frame *f;
		if (skip_ws(l[i].p, 0, l[i].len) == l[i].len)
			continue;
		f = &c->fr[k++];
		if (!crash_known(c, f)) {
			cli_out_mem(o, l[i].p, l[i].len);
			cli_out_chr(o, '\n');
			continue;
		}
		cli_atos_print(o, &dm, c->im[f->image].name, f->addr, f->vaddr, &f->res,
		               c->sf + f->res.first, so->inlines);
	}
	cli_demangler_fini(&dm);
	return 0;
}

/* ---- command ---------------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct cli_global *g, struct sym_opts *so)
{
	const char *v;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int m;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_usage(stdout, "symbolicate");
			return 1;
		}
		if (!strcmp(a, "--stack"))
			so->stack = 1;
		else if (!strcmp(a, "-i") || !strcmp(a, "--inlines"))
			so->inlines = 1;
		else if ((m = cli_opt_value(argc, argv, &i, "--db", &v)) != 0) {
			if (m < 0)
				return -CLI_EXIT_USAGE;
			g->db_dir = v;
		} else if ((a[0] != '-' || !strcmp(a, "-")) && !so->path)
			so->path = a;
		else {
			cli_err(NULL, "symbolicate: unexpected argument '%s' (see 'symdb help "
			              "symbolicate')", a);
			return -CLI_EXIT_USAGE;
		}
	}
	if (!so->path)
		so->path = "-";
	return 0;
}

static int symbolicate(struct crash *c, symdb *db, const char *buf, size_t n,
                       struct cli_out *o, const struct sym_opts *so, const char *what)
{
	size_t nl, i = 0;
	struct sym_line *l;
	int rc;

	while (i < n && isspace((unsigned char)buf[i]))
		i++;
	if (!so->stack && i < n && buf[i] == '{')
		return cli_ips_run(c, db, buf, n, o, what);
	l = split_lines(buf, n, &nl);
	if (!l) {
		cli_err(what, "out of memory");
		return -1;
	}
	rc = so->stack ? run_stack(c, db, l, nl, o, so, what) : run_classic(c, db, l, nl, o, what);
	free(l);
	return rc;
}

int cli_cmd_symbolicate(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct sym_opts so = { 0 };
	struct cli_out out;
	struct crash c;
	symdb *db = NULL;
	size_t n;
	char *buf, err[512] = "";
	int rc, ex = CLI_EXIT_OK;

	if ((rc = parse_args(argc, argv, &g, &so)) != 0)
		return rc > 0 ? CLI_EXIT_OK : -rc;
	const char *what = strcmp(so.path, "-") ? so.path : "<stdin>";
	if (!(buf = read_all(so.path, &n))) {
		cli_err(what, "%s", strerror(errno ? errno : ENOMEM));
		return CLI_EXIT_FAILED;
	}
	SYMDB_OPTS(symdb_open_opts, oo, .errbuf = err, .errbuf_sz = sizeof err);
	if ((rc = cli_open_db(g.db_dir, &oo, &db)) < 0) {
		cli_err_lib(g.db_dir ? g.db_dir : "(default database)", rc, err);
		free(buf);
		return CLI_EXIT_DATABASE;
	}
	if (cli_out_init(&out, stdout, 256 * 1024) < 0) {
		free(buf);
		symdb_close(db);
		return CLI_EXIT_FAILED;
	}
	crash_init(&c);
	cli_fault_guard(db); /* an index truncated meanwhile: that image is damaged */
	if (symbolicate(&c, db, buf, n, &out, &so, what) < 0)
		ex = CLI_EXIT_FAILED;
	else
		crash_report_missing(&c, what);
	if (cli_out_fini(&out) < 0 && ex == CLI_EXIT_OK)
		ex = CLI_EXIT_FAILED;
	crash_free(&c);
	cli_fault_unguard();
	symdb_close(db);
	free(buf);
	return ex;
}
