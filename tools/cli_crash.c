/* SPDX-License-Identifier: MIT */
/*
 * cli_crash.c - images and frames of a crash report, resolved one batch per
 * image (see cli_crash.h).  A runtime address becomes a file address with
 * the image's load address (SPEC §10 "runtime"); the batch is sorted as
 * symdb_resolve_batch() requires and the results are put back in report
 * order.  Frames of images missing from the database stay unresolved and are
 * left untouched by the printers.
 */
#include "cli_crash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *crash_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n;
	void *np;

	if (need <= *cap)
		return p;
	n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	np = realloc(p, n * elem);
	if (!np) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	memset((char *)np + *cap * elem, 0, (n - *cap) * elem);
	*cap = n;
	return np;
}

void crash_init(struct crash *c)
{
	memset(c, 0, sizeof *c);
}

void crash_free(struct crash *c)
{
	for (size_t i = 0; i < c->nim; i++)
		symdb_image_close(c->im[i].img);
	free(c->im);
	free(c->fr);
	free(c->sf);
	memset(c, 0, sizeof *c);
}

struct crash_image *crash_add_image(struct crash *c)
{
	c->im = crash_grow(c->im, &c->cap_im, c->nim + 1, sizeof *c->im);
	return &c->im[c->nim++];
}

struct crash_frame *crash_add_frame(struct crash *c)
{
	c->fr = crash_grow(c->fr, &c->cap_fr, c->nfr + 1, sizeof *c->fr);
	c->fr[c->nfr].image = CRASH_NO_IMAGE;
	return &c->fr[c->nfr++];
}

uint32_t crash_image_of(const struct crash *c, uint64_t addr)
{
	uint32_t best = CRASH_NO_IMAGE;

	for (size_t i = 0; i < c->nim; i++) {
		const struct crash_image *m = &c->im[i];
		if (addr < m->load || (m->end && addr > m->end))
			continue;
		if (best == CRASH_NO_IMAGE || m->load > c->im[best].load)
			best = (uint32_t)i;
	}
	return best;
}

struct crash_ord {
	uint64_t vaddr;
	size_t frame;
};

static int ord_cmp(const void *a, const void *b)
{
	const struct crash_ord *x = a, *y = b;
	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* One image: translate, sort, resolve, scatter back. */
static int resolve_image(struct crash *c, uint32_t ii, struct crash_ord *ord, uint64_t *addrs,
                         symdb_result *res)
{
	struct crash_image *m = &c->im[ii];
	size_t n = 0, done = 0;

	for (size_t i = 0; i < c->nfr; i++)
		if (c->fr[i].image == ii) {
			addrs[n] = c->fr[i].addr;
			ord[n++].frame = i;
		}
	if (symdb_image_translate(m->img, SYMDB_ADDR_RUNTIME, m->load, addrs, addrs, n) < 0)
		return SYMDB_E_INVAL;
	for (size_t k = 0; k < n; k++)
		ord[k].vaddr = addrs[k];
	qsort(ord, n, sizeof *ord, ord_cmp);
	for (size_t k = 0; k < n; k++)
		addrs[k] = ord[k].vaddr;
	while (done < n) {
		ptrdiff_t r;
		c->sf = crash_grow(c->sf, &c->cap_sf, c->nsf + 256, sizeof *c->sf);
		r = symdb_resolve_batch(m->img, addrs + done, n - done, c->sf + c->nsf,
		                        c->cap_sf - c->nsf, sizeof(symdb_frame), res + done,
		                        sizeof(symdb_result));
		if (r == 0 || r == SYMDB_E_INVAL) {
			c->sf = crash_grow(c->sf, &c->cap_sf, c->cap_sf * 2, sizeof *c->sf);
			continue;
		}
		if (r < 0)
			return (int)r;
		size_t base = c->nsf, end = c->nsf;
		for (size_t k = done; k < done + (size_t)r; k++) {
			struct crash_frame *f = &c->fr[ord[k].frame];
			f->vaddr = addrs[k];
			f->res = res[k];
			f->res.first += (uint32_t)base;
			if (f->res.first + f->res.count > end)
				end = f->res.first + f->res.count;
		}
		c->nsf = end;
		done += (size_t)r;
	}
	return 0;
}

static int open_images(struct crash *c, symdb *db, const char *what)
{
	for (size_t i = 0; i < c->nim; i++) {
		struct crash_image *m = &c->im[i];
		int rc;
		if (!m->nframes || !m->uuid.len)
			continue;
		/* $SYMDB_OPEN_VERIFY_CHECKSUMS as for `symdb query` (SPEC §9). */
		SYMDB_OPTS(symdb_open_opts, o, .flags = cli_verify_flag(0));
		rc = symdb_image_open_uuid(db, &m->uuid, &o, &m->img);
		if (rc == SYMDB_E_NOT_INDEXED) {
			m->img = NULL;
			continue;
		}
		if (rc < 0) {
			cli_err(what, "image %s: %s", m->name, symdb_strerror(rc));
			return rc;
		}
	}
	return 0;
}

int crash_resolve(struct crash *c, symdb *db, const char *what)
{
	struct crash_ord *ord;
	uint64_t *addrs;
	symdb_result *res;
	int rc;

	for (size_t i = 0; i < c->nfr; i++)
		if (c->fr[i].image != CRASH_NO_IMAGE)
			c->im[c->fr[i].image].nframes++;
	if ((rc = open_images(c, db, what)) < 0)
		return rc;
	ord = calloc(c->nfr + 1, sizeof *ord);
	addrs = calloc(c->nfr + 1, sizeof *addrs);
	res = calloc(c->nfr + 1, sizeof *res);
	if (!ord || !addrs || !res) {
		rc = -12; /* -ENOMEM */
		cli_err(what, "out of memory");
	}
	for (uint32_t i = 0; rc == 0 && i < c->nim; i++)
		if (c->im[i].img && (rc = resolve_image(c, i, ord, addrs, res)) < 0)
			cli_err(what, "image %s: %s", c->im[i].name, symdb_strerror(rc));
	free(ord);
	free(addrs);
	free(res);
	return rc;
}

int crash_known(const struct crash *c, const struct crash_frame *f)
{
	if (f->image == CRASH_NO_IMAGE || !c->im[f->image].img || f->res.status)
		return 0;
	return f->res.count > 0 || f->res.sym_name;
}

static const char *crash_base(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

void crash_text(const struct crash *c, const struct crash_frame *f, struct cli_demangler *dm,
                struct crash_text *t)
{
	const symdb_result *r = &f->res;
	const symdb_frame *o = r->count ? &c->sf[r->first + r->count - 1] : NULL;
	const char *name = r->sym_name ? r->sym_name : o ? o->name : NULL;
	uint64_t start = f->vaddr;

	if (r->sym_name)
		start = r->sym_addr;
	else if (o && (o->flags & SYMDB_FRAME_HAS_START))
		start = o->start_addr;
	memset(t, 0, sizeof *t);
	t->name = name && *name ? cli_demangle(dm, name) : "???";
	t->offset = f->vaddr >= start ? f->vaddr - start : 0;
	if (o && o->file && o->line) {
		t->file = crash_base(o->file);
		t->line = o->line;
	}
}

void crash_print_text(struct cli_out *o, const struct crash_text *t)
{
	cli_out_text(o, t->name, strlen(t->name), CLI_TEXT_CTRL);
	cli_out_str(o, " + ");
	cli_out_u64(o, t->offset);
	if (t->file) {
		cli_out_str(o, " (");
		cli_out_text(o, t->file, strlen(t->file), CLI_TEXT_CTRL);
		cli_out_chr(o, ':');
		cli_out_u64(o, t->line);
		cli_out_chr(o, ')');
	}
}

void crash_report_missing(const struct crash *c, const char *what)
{
	for (size_t i = 0; i < c->nim; i++) {
		const struct crash_image *m = &c->im[i];
		char hex[2 * SYMDB_UUID_MAX + 1] = "";
		if (!m->nframes || m->img)
			continue;
		if (m->uuid.len)
			symdb_uuid_format(&m->uuid, hex);
		cli_err(what, "not in the database, left as is: %s %s", m->name,
		        hex[0] ? hex : "(no UUID)");
	}
}
