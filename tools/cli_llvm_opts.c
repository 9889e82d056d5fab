/* SPDX-License-Identifier: MIT */
/*
 * cli_llvm_opts.c - LLVM 14's OptTable parsing rules for a table of
 * options (see cli_llvm_opts.h): matching, grouped one-letter flags,
 * missing arguments and the "did you mean" suggestion.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli_llvm_opts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_optlist_free(struct cli_optlist *l)
{
	for (size_t i = 0; i < l->nowned; i++)
		free(l->owned[i]);
	free(l->owned);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int push(struct cli_optlist *l, int id, const char *value, const char *spelling)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct cli_optval *nv = realloc(l->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n++] = (struct cli_optval){ .id = id, .value = value, .spelling = spelling };
	return 0;
}

/* A copy of s (n bytes) prefixed with '-', owned by l; NULL on OOM. */
static char *own_dash(struct cli_optlist *l, const char *s, size_t n)
{
	if (l->nowned == l->owned_cap) {
		size_t cap = l->owned_cap ? l->owned_cap * 2 : 8;
		char **no = realloc(l->owned, cap * sizeof(*no));
		if (!no)
			return NULL;
		l->owned = no;
		l->owned_cap = cap;
	}
	char *p = malloc(n + 2);
	if (!p)
		return NULL;
	p[0] = '-';
	memcpy(p + 1, s, n);
	p[n + 1] = '\0';
	l->owned[l->nowned++] = p;
	return p;
}

/* The length of d's spelling if arg begins with it, else 0. */
static size_t match_len(const struct cli_optdef *d, const char *arg)
{
	size_t pl = strlen(d->prefix), nl = strlen(d->name);
	if (strncmp(arg, d->prefix, pl) != 0 || strncmp(arg + pl, d->name, nl) != 0)
		return 0;
	return pl + nl;
}

/* The spelling d reports itself by (an owned string when composed). */
static const char *spelling_of(struct cli_optlist *l, const struct cli_optdef *d)
{
	if (d->canon)
		return d->canon;
	/* prefix + name: "-" is the only one-character prefix */
	if (strcmp(d->prefix, "-") == 0)
		return own_dash(l, d->name, strlen(d->name));
	char *dn = own_dash(l, d->name, strlen(d->name));
	return dn ? own_dash(l, dn, strlen(dn)) : NULL;
}

/*
 * One option at args[*i] (current text cur).  Returns 1 taken (*i advanced
 * or cur rewritten), 0 no option of defs matched, -1 missing argument,
 * -2 out of memory.
 */
static int take_option(const struct cli_optdef *defs, size_t ndefs, int argc, char **args,
                       int *i, struct cli_optlist *l)
{
	const char *cur = args[*i];
	size_t curlen = strlen(cur);
	/* The matching names are prefixes of one another: longest first, as
	 * LLVM's table order puts a name before its prefixes. */
	size_t best_len = 0;
	const struct cli_optdef *fallback = NULL;
	for (;;) {
		const struct cli_optdef *d = NULL;
		size_t dl = 0;
		for (size_t k = 0; k < ndefs; k++) {
			size_t m = match_len(&defs[k], cur);
			if (m && (best_len == 0 || m < best_len) && m > dl) {
				d = &defs[k];
				dl = m;
			}
		}
		if (!d)
			break;
		best_len = dl;
		const char *sp = spelling_of(l, d);
		if (!sp)
			return -2;
		int exact = dl == curlen;
		switch (d->kind) {
		case CLI_OPTK_FLAG:
			if (exact) {
				(*i)++;
				return push(l, d->id, NULL, sp) ? -2 : 1;
			}
			if (dl == 2)
				fallback = d;
			continue;
		case CLI_OPTK_JOINED:
			(*i)++;
			return push(l, d->id, cur + dl, sp) ? -2 : 1;
		case CLI_OPTK_JOINED_OR_SEPARATE:
			if (!exact) {
				(*i)++;
				return push(l, d->id, cur + dl, sp) ? -2 : 1;
			}
			/* fallthrough */
		case CLI_OPTK_SEPARATE:
			if (!exact)
				continue;
			if (*i + 1 >= argc)
				return -1;
			*i += 2;
			return push(l, d->id, args[*i - 1], sp) ? -2 : 1;
		}
	}
	if (!fallback)
		return 0;
	if (cur[2] == '=') /* "-a=x": a flag given a value is unknown whole */
		return 0;
	const char *sp = spelling_of(l, fallback);
	if (!sp || push(l, fallback->id, NULL, sp))
		return -2;
	if (curlen == 2) {
		(*i)++;
	} else {
		/* "-aCp": -a, and the argument continues as "-Cp" */
		char *rest = own_dash(l, cur + 2, curlen - 2);
		if (!rest)
			return -2;
		args[*i] = rest;
	}
	return 1;
}

/* A one-letter flag: "-a" in defs. */
static int is_flag_letter(const struct cli_optdef *defs, size_t ndefs, char c)
{
	for (size_t k = 0; k < ndefs; k++)
		if (defs[k].kind == CLI_OPTK_FLAG && !strcmp(defs[k].prefix, "-") &&
		    defs[k].name[0] == c && defs[k].name[1] == '\0')
			return 1;
	return 0;
}

int cli_opt_parse(const struct cli_optdef *defs, size_t ndefs, int argc, char **argv,
                  struct cli_optlist *out)
{
	memset(out, 0, sizeof(*out));
	/* Grouped flags rewrite the current argument: work on a copy of the
	 * pointers. */
	char **args = malloc(((size_t)argc + 1) * sizeof(*args));
	if (!args)
		goto oom;
	if (argc > 0) /* argv may be NULL with no arguments: memcpy's must not be */
		memcpy(args, argv, (size_t)argc * sizeof(*args));
	for (int i = 0; i < argc;) {
		const char *a = args[i];
		if (a[0] == '\0') {
			i++;
			continue;
		}
		if (a[0] != '-' || a[1] == '\0') {
			if (push(out, CLI_OPT_INPUT, a, NULL))
				goto oom;
			i++;
			continue;
		}
		int r = take_option(defs, ndefs, argc, args, &i, out);
		if (r == -2)
			goto oom;
		if (r == -1) {
			out->missing = a;
			break;
		}
		if (r == 1)
			continue;
		if (a[1] != '-' && !(a[2] == '=' && is_flag_letter(defs, ndefs, a[1]))) {
			/* an unknown letter: "-X", and "-Xyz" goes on as "-yz" */
			char *x = own_dash(out, a + 1, 1);
			if (!x || push(out, CLI_OPT_UNKNOWN, x, x))
				goto oom;
			if (a[2] == '\0') {
				i++;
			} else {
				char *rest = own_dash(out, a + 2, strlen(a + 2));
				if (!rest)
					goto oom;
				args[i] = rest;
			}
			continue;
		}
		if (push(out, CLI_OPT_UNKNOWN, a, a))
			goto oom;
		i++;
	}
	free(args);
	return 0;
oom:
	free(args);
	fputs("symdb: out of memory\n", stderr);
	return -1;
}

/* ---- "did you mean" ----------------------------------------------------- */

/* StrCmpOptionNameIgnoreCase: case-blind, and a name sorts after the names
 * it is a prefix of; then case-sensitive. */
static int cmp_option_name(const char *a, const char *b)
{
	const char *x = a, *y = b;
	int ca = tolower((unsigned char)*x), cb = tolower((unsigned char)*y);
	while (ca == cb) {
		if (ca == '\0')
			return strcmp(a, b);
		ca = tolower((unsigned char)*++x);
		cb = tolower((unsigned char)*++y);
	}
	if (ca == '\0')
		return 1;
	if (cb == '\0')
		return -1;
	return ca < cb ? -1 : 1;
}

/* LLVM's tablegen order: by name, then prefix, then kind. */
static const struct cli_optdef *sort_defs;
static int cmp_defs(const void *pa, const void *pb)
{
	const struct cli_optdef *a = &sort_defs[*(const size_t *)pa];
	const struct cli_optdef *b = &sort_defs[*(const size_t *)pb];
	int c = cmp_option_name(a->name, b->name);
	if (!c)
		c = cmp_option_name(a->prefix, b->prefix);
	return c ? c : (int)a->kind - (int)b->kind;
}

/* Levenshtein distance (ComputeEditDistance with replacements). */
static unsigned edit_distance(const char *from, const char *to)
{
	size_t m = strlen(from), n = strlen(to);
	unsigned *row = malloc((n + 1) * sizeof(*row));
	if (!row)
		return ~0u;
	for (size_t x = 0; x <= n; x++)
		row[x] = (unsigned)x;
	for (size_t y = 1; y <= m; y++) {
		unsigned prev = (unsigned)(y - 1);
		row[0] = (unsigned)y;
		for (size_t x = 1; x <= n; x++) {
			unsigned old = row[x];
			unsigned sub = prev + (from[y - 1] == to[x - 1] ? 0u : 1u);
			unsigned ins = (row[x - 1] < row[x] ? row[x - 1] : row[x]) + 1;
			row[x] = sub < ins ? sub : ins;
			prev = old;
		}
	}
	unsigned d = row[n];
	free(row);
	return d;
}

unsigned cli_opt_nearest(const struct cli_optdef *defs, size_t ndefs, const char *arg,
                         int with_extra, char *buf, size_t bufsz)
{
	size_t *order = malloc(ndefs * sizeof(*order));
	if (!order)
		return ~0u;
	for (size_t k = 0; k < ndefs; k++)
		order[k] = k;
	sort_defs = defs;
	qsort(order, ndefs, sizeof(*order), cmp_defs);
	unsigned best = ~0u;
	buf[0] = '\0';
	char norm[512], cand[512];
	for (size_t k = 0; k < ndefs; k++) {
		const struct cli_optdef *d = &defs[order[k]];
		size_t nl = strlen(d->name);
		/* findNearest's MinimumLength (4): "-Z" is not "-a" misspelt */
		if ((d->extra && !with_extra) || nl < 4)
			continue;
		char last = nl ? d->name[nl - 1] : '\0';
		int delim = last == '=' || last == ':';
		const char *rhs = "";
		snprintf(norm, sizeof(norm), "%s", arg);
		if (delim) {
			/* "--ob=x" is compared as "--ob=" with "--obj=" and
			 * suggested as "--obj=x" */
			const char *at = strchr(arg, last);
			if (at) {
				rhs = at + 1;
				snprintf(norm, sizeof(norm), "%.*s", (int)(at - arg + 1), arg);
			}
		}
		snprintf(cand, sizeof(cand), "%s%s", d->prefix, d->name);
		unsigned dist = edit_distance(cand, norm);
		if (delim && *rhs == '\0')
			dist++; /* an option that needs a value, given none */
		if (dist < best) {
			best = dist;
			snprintf(buf, bufsz, "%s%s", cand, rhs);
		}
	}
	free(order);
	return best;
}
