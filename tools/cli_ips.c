/* SPDX-License-Identifier: MIT */
/*
 * cli_ips.c - JSON crash reports (.ips) for `symdb symbolicate`.
 *
 * A small RFC 8259 parser builds a flat tree of byte spans (no values are
 * copied); the report is then written back byte for byte, with the
 * symbolication members inserted right after the last member of each
 * resolved frame object.  Frames come from threads[].frames[] and from
 * lastExceptionBacktrace[]; a frame that already has "symbol" is left alone.
 * Errors name the line of the offending byte.
 */
#include "cli_ips.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_output.h"

#define J_MAX_DEPTH 256

enum { J_OBJ, J_ARR, J_STR, J_NUM, J_LIT };

struct jnode {
	int type;
	size_t b, e;   /* the value's bytes */
	size_t kb, ke; /* the member's key, quotes excluded (ke == 0: no key) */
	size_t parent, child, next, last; /* SIZE_MAX: none */
};

struct jp {
	const char *s;
	size_t n, i;
	struct jnode *v;
	size_t nv, cap;
	const char *err;
	size_t err_at;
};

static int jfail(struct jp *p, const char *why)
{
	if (!p->err) {
		p->err = why;
		p->err_at = p->i;
	}
	return -1;
}

static void jws(struct jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
	                       p->s[p->i] == '\r'))
		p->i++;
}

static size_t jnew(struct jp *p, int type, size_t parent)
{
	struct jnode *x;

	if (p->nv == p->cap) {
		size_t nc = p->cap ? 2 * p->cap : 256;
		struct jnode *nv = realloc(p->v, nc * sizeof *nv);
		if (!nv)
			return SIZE_MAX;
		p->v = nv;
		p->cap = nc;
	}
	x = &p->v[p->nv];
	memset(x, 0, sizeof *x);
	x->type = type;
	x->b = p->i;
	x->parent = parent;
	x->child = x->next = x->last = SIZE_MAX;
	if (parent != SIZE_MAX) {
		struct jnode *par = &p->v[parent];
		if (par->last != SIZE_MAX)
			p->v[par->last].next = p->nv;
		else
			par->child = p->nv;
		par->last = p->nv;
	}
	return p->nv++;
}

/* A string starting at p->i (the quote); leaves p->i past the closing quote. */
static int jstring(struct jp *p)
{
	for (p->i++; p->i < p->n; p->i++) {
		char ch = p->s[p->i];
		if (ch == '"') {
			p->i++;
			return 0;
		}
		if (ch == '\\')
			p->i++;
		else if ((unsigned char)ch < 0x20)
			return jfail(p, "control character in a JSON string");
	}
	return jfail(p, "unexpected end of JSON inside a string");
}

static int jvalue(struct jp *p, size_t parent, size_t kb, size_t ke, int depth);

static int jmembers(struct jp *p, size_t me, int obj, int depth)
{
	char close = obj ? '}' : ']';

	p->i++;
	jws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		return 0;
	}
	for (;;) {
		size_t kb = 0, ke = 0;
		jws(p);
		if (obj) {
			if (p->i >= p->n || p->s[p->i] != '"')
				return jfail(p, p->i >= p->n ? "unexpected end of JSON" : "expected a key");
			kb = p->i + 1;
			if (jstring(p))
				return -1;
			ke = p->i - 1;
			jws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return jfail(p, p->i >= p->n ? "unexpected end of JSON" : "expected ':'");
			p->i++;
		}
		if (jvalue(p, me, kb, ke, depth + 1))
			return -1;
		jws(p);
		if (p->i >= p->n)
			return jfail(p, "unexpected end of JSON (truncated report?)");
		if (p->s[p->i] == close) {
			p->i++;
			return 0;
		}
		if (p->s[p->i] != ',')
			return jfail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		p->i++;
	}
}

static int jvalue(struct jp *p, size_t parent, size_t kb, size_t ke, int depth)
{
	size_t me;
	char ch;
	int rc = 0;

	jws(p);
	if (p->i >= p->n)
		return jfail(p, "unexpected end of JSON (truncated report?)");
	if (depth > J_MAX_DEPTH)
		return jfail(p, "JSON nested too deeply");
	ch = p->s[p->i];
	me = jnew(p, ch == '{' ? J_OBJ : ch == '[' ? J_ARR : ch == '"' ? J_STR
	             : (ch == '-' || (ch >= '0' && ch <= '9')) ? J_NUM : J_LIT, parent);
	if (me == SIZE_MAX)
		return jfail(p, "out of memory");
	p->v[me].kb = kb;
	p->v[me].ke = ke;
	if (ch == '{' || ch == '[')
		rc = jmembers(p, me, ch == '{', depth);
	else if (ch == '"')
		rc = jstring(p);
	else if (p->v[me].type == J_NUM)
		while (p->i < p->n && strchr("+-0123456789.eE", p->s[p->i]))
			p->i++;
	else if (p->n - p->i >= 4 && (!memcmp(p->s + p->i, "true", 4) ||
	                              !memcmp(p->s + p->i, "null", 4)))
		p->i += 4;
	else if (p->n - p->i >= 5 && !memcmp(p->s + p->i, "false", 5))
		p->i += 5;
	else
		rc = jfail(p, "not a JSON value");
	p->v[me].e = p->i;
	return rc;
}

/* ---- queries on the tree ---------------------------------------------------- */

static size_t jget(const struct jp *p, size_t obj, const char *key)
{
	size_t kl = strlen(key);

	if (obj == SIZE_MAX || p->v[obj].type != J_OBJ)
		return SIZE_MAX;
	for (size_t c = p->v[obj].child; c != SIZE_MAX; c = p->v[c].next)
		if (p->v[c].ke - p->v[c].kb == kl && !memcmp(p->s + p->v[c].kb, key, kl))
			return c;
	return SIZE_MAX;
}

static int jnum(const struct jp *p, size_t x, uint64_t *v)
{
	if (x == SIZE_MAX || p->v[x].type != J_NUM || p->s[p->v[x].b] == '-')
		return -1;
	return cli_parse_u64(p->s + p->v[x].b, p->v[x].e - p->v[x].b, v) ? -1 : 0;
}

/* Copies a string value without its quotes (escapes kept: UUIDs and image
 * names have none). */
static int jstr(const struct jp *p, size_t x, char *buf, size_t sz)
{
	size_t len;

	if (x == SIZE_MAX || p->v[x].type != J_STR)
		return -1;
	len = p->v[x].e - p->v[x].b - 2;
	if (len >= sz)
		len = sz - 1;
	memcpy(buf, p->s + p->v[x].b + 1, len);
	buf[len] = 0;
	return 0;
}

static size_t line_of(const char *s, size_t at)
{
	size_t line = 1;
	for (size_t i = 0; i < at; i++)
		line += s[i] == '\n';
	return line;
}

/* ---- the report ----------------------------------------------------------- */

struct ips {
	struct jp p;
	size_t body;     /* root node of the report body */
	size_t *fnode;   /* frame i -> its JSON object */
	size_t nf, capf;
};

static int ips_images(struct crash *c, struct ips *x, const char *what)
{
	const struct jp *p = &x->p;
	size_t arr = jget(p, x->body, "usedImages");

	if (arr == SIZE_MAX || p->v[arr].type != J_ARR) {
		cli_err(what, "no \"usedImages\" array: not an .ips crash report");
		return -1;
	}
	for (size_t e = p->v[arr].child; e != SIZE_MAX; e = p->v[e].next) {
		struct crash_image *m = crash_add_image(c);
		size_t base = jget(p, e, "base"), uuid = jget(p, e, "uuid");
		char hex[80] = "";
		/* An entry without base or uuid (Apple writes some for unknown
		 * images) is kept, never resolved; a wrong one is an error. */
		if ((base != SIZE_MAX && jnum(p, base, &m->load) < 0) ||
		    (uuid != SIZE_MAX && (jstr(p, uuid, hex, sizeof hex) < 0 ||
		                          symdb_uuid_parse(hex, &m->uuid) < 0))) {
			cli_err(what, "line %zu: usedImages entry without a valid base or uuid",
			        line_of(p->s, p->v[e].b));
			return -1;
		}
		if (base == SIZE_MAX)
			memset(&m->uuid, 0, sizeof m->uuid);
		if (jstr(p, jget(p, e, "name"), m->name, sizeof m->name) < 0)
			snprintf(m->name, sizeof m->name, "???");
		jstr(p, jget(p, e, "arch"), m->arch, sizeof m->arch);
	}
	return 0;
}

static int ips_frame(struct crash *c, struct ips *x, size_t fo, const char *what)
{
	const struct jp *p = &x->p;
	uint64_t idx, off;

	if (p->v[fo].type != J_OBJ || jget(p, fo, "symbol") != SIZE_MAX)
		return 0;
	if (jnum(p, jget(p, fo, "imageIndex"), &idx) < 0 ||
	    jnum(p, jget(p, fo, "imageOffset"), &off) < 0) {
		if (jget(p, fo, "imageIndex") == SIZE_MAX)
			return 0; /* e.g. a frame of an unknown image */
		cli_err(what, "line %zu: frame with a bad imageIndex or imageOffset",
		        line_of(p->s, p->v[fo].b));
		return -1;
	}
	if (idx >= c->nim)
		return 0;
	struct crash_frame *f = crash_add_frame(c);
	f->image = (uint32_t)idx;
	f->addr = c->im[idx].load + off;
	if (x->nf == x->capf) {
		size_t nc = x->capf ? 2 * x->capf : 64;
		size_t *nfn = realloc(x->fnode, nc * sizeof *nfn);
		if (!nfn)
			return -1;
		x->fnode = nfn;
		x->capf = nc;
	}
	x->fnode[x->nf++] = fo;
	return 0;
}

static int ips_frames_of(struct crash *c, struct ips *x, size_t arr, const char *what)
{
	const struct jp *p = &x->p;

	if (arr == SIZE_MAX || p->v[arr].type != J_ARR)
		return 0;
	for (size_t e = p->v[arr].child; e != SIZE_MAX; e = p->v[e].next)
		if (ips_frame(c, x, e, what) < 0)
			return -1;
	return 0;
}

static int ips_frames(struct crash *c, struct ips *x, const char *what)
{
	const struct jp *p = &x->p;
	size_t th = jget(p, x->body, "threads");

	if (th != SIZE_MAX && p->v[th].type == J_ARR)
		for (size_t t = p->v[th].child; t != SIZE_MAX; t = p->v[t].next)
			if (ips_frames_of(c, x, jget(p, t, "frames"), what) < 0)
				return -1;
	return ips_frames_of(c, x, jget(p, x->body, "lastExceptionBacktrace"), what);
}

/* Where a frame object's new members go, and whether a comma is needed. */
static size_t insert_at(const struct jp *p, size_t fo, int *comma)
{
	size_t last = p->v[fo].last;

	*comma = last != SIZE_MAX;
	return last != SIZE_MAX ? p->v[last].e : p->v[fo].b + 1;
}

static void ips_members(struct cli_out *o, const struct crash_text *t, int comma)
{
	cli_out_str(o, comma ? ",\"symbol\":" : "\"symbol\":");
	cli_json_string(o, t->name, strlen(t->name));
	cli_out_str(o, ",\"symbolLocation\":");
	cli_out_u64(o, t->offset);
	if (t->file) {
		cli_out_str(o, ",\"sourceFile\":");
		cli_json_string(o, t->file, strlen(t->file));
		cli_out_str(o, ",\"sourceLine\":");
		cli_out_u64(o, t->line);
	}
}

static void ips_write(const struct crash *c, const struct ips *x, struct cli_out *o)
{
	struct cli_demangler dm;
	size_t pos = 0, *order = malloc((x->nf + 1) * sizeof *order), k = 0;

	if (!order)
		return;
	/* Insertion points in document order (lastExceptionBacktrace may come
	 * before or after threads): a frame object's end is unique. */
	for (size_t i = 0; i < x->nf; i++)
		order[i] = i;
	for (size_t i = 1; i < x->nf; i++) /* insertion sort: almost sorted */
		for (k = i; k > 0 && x->p.v[x->fnode[order[k - 1]]].b > x->p.v[x->fnode[order[k]]].b; k--) {
			size_t t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	cli_demangler_init(&dm);
	for (size_t j = 0; j < x->nf; j++) {
		const struct crash_frame *f = &c->fr[order[j]];
		struct crash_text t;
		int comma;
		size_t at;
		if (!crash_known(c, f))
			continue;
		at = insert_at(&x->p, x->fnode[order[j]], &comma);
		cli_out_mem(o, x->p.s + pos, at - pos);
		crash_text(c, f, &dm, &t);
		ips_members(o, &t, comma);
		pos = at;
	}
	cli_out_mem(o, x->p.s + pos, x->p.n - pos);
	cli_demangler_fini(&dm);
	free(order);
}

static int ips_parse(struct ips *x, const char *buf, size_t n, const char *what)
{
	struct jp *p = &x->p;
	size_t first;

	p->s = buf;
	p->n = n;
	if (jvalue(p, SIZE_MAX, 0, 0, 0) == 0) {
		first = 0;
		x->body = first;
		jws(p);
		if (p->i < p->n) { /* header line, then the body */
			x->body = p->nv;
			if (jvalue(p, SIZE_MAX, 0, 0, 0) == 0) {
				jws(p);
				if (p->i < p->n)
					jfail(p, "unexpected bytes after the report");
			}
		}
	}
	if (p->err) {
		cli_err(what, "line %zu: %s", line_of(buf, p->err_at), p->err);
		return -1;
	}
	if (p->v[x->body].type != J_OBJ) {
		cli_err(what, "the report body is not a JSON object");
		return -1;
	}
	return 0;
}

int cli_ips_run(struct crash *c, symdb *db, const char *buf, size_t n, struct cli_out *o,
                const char *what)
{
	struct ips x;
	int rc = -1;

	memset(&x, 0, sizeof x);
	if (ips_parse(&x, buf, n, what) == 0 && ips_images(c, &x, what) == 0 &&
	    ips_frames(c, &x, what) == 0 && crash_resolve(c, db, what) == 0) {
		ips_write(c, &x, o);
		rc = 0;
	}
	free(x.p.v);
	free(x.fnode);
	return rc;
}
