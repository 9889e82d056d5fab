/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_split.c - finds the split unit of a skeleton (-gsplit-dwarf) the
 * way llvm-symbolizer 14 does (DWARFUnit::parseDWO,
 * DWARFContext::getDWOContext, getDWOCompileUnitForHash):
 *  - the path is DW_AT_dwo_name (DWARF 5) or DW_AT_GNU_dwo_name (DWARF 4)
 *    appended to the skeleton's DW_AT_comp_dir unless the name is absolute
 *    or comp_dir missing or empty; a relative result is relative to the
 *    working directory of the process that opens it (as LLVM's is);
 *  - when BINARY.dwp exists it answers for every unit, and no .dwo file is
 *    opened, even for a unit it lacks;
 *  - the split unit is the one whose DWO id equals the skeleton's; a
 *    mismatch means no split unit (the skeleton's line table answers).
 * The files come open from the builder (SPEC §12.5): this file matches a
 * path to the descriptor opened for it and records the paths it lacked, so
 * that the builder can open them and run the indexer again.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_io.h"
#include "ix_dwarf_split.h"
#include "symdb_endian.h"

/* The .dwp sections a unit reads, by DW_SECT_* id of index version 2 (GNU
 * DWARF 4 packages) and 5. */
static const char *sect_name(uint32_t version, uint32_t id)
{
	switch (id) {
	case 1: return ".debug_info.dwo";
	case 3: return ".debug_abbrev.dwo";
	case 4: return ".debug_line.dwo";
	case 6: return ".debug_str_offsets.dwo";
	case 8: return version == 5 ? ".debug_rnglists.dwo" : NULL;
	default: return NULL;
	}
}

static uint32_t rd32(const ix_split *sp, const uint8_t *p)
{
	return sp->dwp.little ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
					(uint32_t)p[3] << 24
			      : fmt_be32(p);
}

static uint64_t rd64(const ix_split *sp, const uint8_t *p)
{
	uint64_t a = rd32(sp, p), b = rd32(sp, p + 4);
	return sp->dwp.little ? a | b << 32 : a << 32 | b;
}

/* .debug_cu_index (DWARF 5 §7.3.5.3; the GNU version 2 has the same
 * tables after a 32-bit version): header, hash and index tables, the
 * section ids, then offsets and sizes, unit_count rows each. */
static void parse_cu_index(ix_split *sp)
{
	const ix_debug_section *ix = ix_sections_find(&sp->dwp, ".debug_cu_index");
	if (!ix || ix->size < 16)
		return;
	const uint8_t *p = ix->data;
	uint32_t v = rd32(sp, p);
	uint32_t ver = v == 2 ? 2 : (sp->dwp.little ? v & 0xffff : v >> 16);
	uint32_t ncols = rd32(sp, p + 4), nunits = rd32(sp, p + 8), nslots = rd32(sp, p + 12);
	if ((ver != 2 && ver != 5) || !ncols || ncols > 64 || !nslots || (nslots & (nslots - 1)))
		return;
	uint64_t need = 16 + (uint64_t)nslots * 12 + (uint64_t)ncols * 4 +
			(uint64_t)nunits * ncols * 8;
	if (need > ix->size)
		return;
	sp->idx_version = ver;
	sp->ncols = ncols;
	sp->nunits = nunits;
	sp->nslots = nslots;
	sp->hashes = p + 16;
	sp->rows = sp->hashes + (size_t)nslots * 8;
	sp->cols = sp->rows + (size_t)nslots * 4;
	sp->offs = sp->cols + (size_t)ncols * 4;
	sp->sizes = sp->offs + (size_t)nunits * ncols * 4;
}

int ix_split_open(ix_split *sp, const ix_opts *opts)
{
	char why[256];
	memset(sp, 0, sizeof(*sp));
	pthread_mutex_init(&sp->mu, NULL);
	if (!opts)
		return 0;
	if (opts->dwp.fd >= 0 &&
	    ix_sections_open(&sp->dwp, opts->dwp.fd, opts->dwp.name ? opts->dwp.name : "", why,
			     sizeof(why)) == 0) {
		sp->has_dwp = 1;
		parse_cu_index(sp);
	}
	if (!opts->ndwos)
		return 0;
	sp->dwo = calloc(opts->ndwos, sizeof(*sp->dwo));
	sp->names = calloc(opts->ndwos, sizeof(*sp->names));
	if (!sp->dwo || !sp->names)
		return -ENOMEM;
	for (unsigned i = 0; i < opts->ndwos; i++) {
		const symdb_indexer_file *f = &opts->dwos[i];
		const char *name = f->name ? f->name : "";
		if (f->fd < 0 || ix_sections_open(&sp->dwo[sp->ndwo], f->fd, name, why, sizeof(why)))
			continue;
		sp->names[sp->ndwo++] = name;
	}
	return 0;
}

void ix_split_close(ix_split *sp)
{
	for (size_t i = 0; i < sp->ndwo; i++)
		ix_sections_close(&sp->dwo[i]);
	if (sp->has_dwp)
		ix_sections_close(&sp->dwp);
	for (size_t i = 0; i < sp->nmissing; i++)
		free(sp->missing[i]);
	free(sp->missing);
	free(sp->missing_id);
	free(sp->dwo);
	free(sp->names);
	pthread_mutex_destroy(&sp->mu);
	memset(sp, 0, sizeof(*sp));
}

static void view_add(ix_dwo_view *v, const char *name, const uint8_t *data, uint64_t size)
{
	if (v->s.nsecs >= IX_DWO_NSECS)
		return;
	ix_debug_section *d = &v->secs[v->s.nsecs++];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->data = data;
	d->size = size;
}

static void view_init(ix_dwo_view *v, const ix_sections *from)
{
	memset(v, 0, sizeof(*v));
	v->s.path = from->path;
	v->s.is64 = from->is64;
	v->s.little = from->little;
	v->s.machine = from->machine;
	v->s.secs = v->secs;
}

/* The .dwp row of DWO id `id` (LLVM's DWARFUnitIndex::getFromHash), as a
 * view of its contributions plus the shared string section. */
static int dwp_view(const ix_split *sp, uint64_t id, ix_dwo_view *v)
{
	uint32_t mask = sp->nslots - 1, h = (uint32_t)id & mask;
	uint32_t step = ((uint32_t)(id >> 32) & mask) | 1, row = 0;
	for (uint32_t i = 0; i < sp->nslots; i++, h = (h + step) & mask) {
		uint32_t r = rd32(sp, sp->rows + (size_t)h * 4);
		if (r == 0)
			return -1;
		if (rd64(sp, sp->hashes + (size_t)h * 8) == id) {
			row = r;
			break;
		}
	}
	if (row == 0 || row > sp->nunits)
		return -1;
	view_init(v, &sp->dwp);
	for (uint32_t c = 0; c < sp->ncols; c++) {
		const char *name = sect_name(sp->idx_version, rd32(sp, sp->cols + (size_t)c * 4));
		const ix_debug_section *whole = name ? ix_sections_find(&sp->dwp, name) : NULL;
		size_t at = ((size_t)(row - 1) * sp->ncols + c) * 4;
		uint64_t off = rd32(sp, sp->offs + at), size = rd32(sp, sp->sizes + at);
		if (whole && off <= whole->size && size <= whole->size - off)
			view_add(v, name, whole->data + off, size);
	}
	const ix_debug_section *str = ix_sections_find(&sp->dwp, ".debug_str.dwo");
	if (str)
		view_add(v, str->name, str->data, str->size);
	return ix_sections_find(&v->s, ".debug_info.dwo") ? 0 : -1;
}

static void note_missing(ix_split *sp, const char *path, uint64_t id)
{
	pthread_mutex_lock(&sp->mu);
	int seen = 0;
	for (size_t i = 0; i < sp->nmissing && !seen; i++)
		seen = strcmp(sp->missing[i], path) == 0;
	if (!seen && sp->nmissing == sp->capmissing) {
		size_t cap = sp->capmissing ? 2 * sp->capmissing : 16;
		char **m = realloc(sp->missing, cap * sizeof(*m));
		if (m)
			sp->missing = m;
		uint64_t *d = m ? realloc(sp->missing_id, cap * sizeof(*d)) : NULL;
		if (d) {
			sp->missing_id = d;
			sp->capmissing = cap;
		}
	}
	if (!seen && sp->nmissing < sp->capmissing) {
		char *s = strdup(path);
		if (s) {
			sp->missing_id[sp->nmissing] = id;
			sp->missing[sp->nmissing++] = s;
		}
	}
	pthread_mutex_unlock(&sp->mu);
}

int ix_split_view(ix_split *sp, const char *path, uint64_t id, int version, ix_dwo_view *v)
{
	(void)version;
	const ix_sections *whole = NULL;
	if (sp->has_dwp && sp->nslots)
		return dwp_view(sp, id, v);
	/* A package without a unit index is searched unit by unit, as LLVM
	 * searches a .dwo file. */
	if (sp->has_dwp)
		whole = &sp->dwp;
	for (size_t i = 0; !whole && i < sp->ndwo; i++)
		if (strcmp(sp->names[i], path) == 0)
			whole = &sp->dwo[i];
	if (whole) {
		/* Its .dwo sections only, as LLVM's DWO context reads them: clang's
		 * -gsplit-dwarf=single leaves the split unit in the object file
		 * itself, beside that object's own (skeleton) .debug_info, which
		 * libdwarf would read instead. */
		view_init(v, whole);
		for (size_t i = 0; i < whole->nsecs; i++) {
			size_t n = strlen(whole->secs[i].name);
			if (n > 4 && strcmp(whole->secs[i].name + n - 4, ".dwo") == 0)
				view_add(v, whole->secs[i].name, whole->secs[i].data, whole->secs[i].size);
		}
		return ix_sections_find(&v->s, ".debug_info.dwo") ? 0 : -1;
	}
	note_missing(sp, path, id);
	return -1;
}

/* sys::path::append(P, comp_dir); sys::path::append(P, dwo_name) on an
 * empty P (POSIX style). */
static int path_append(char *out, size_t sz, size_t *len, const char *c)
{
	if (!*c)
		return 0;
	if (*len && out[*len - 1] == '/') {
		while (*c == '/')
			c++;
	} else if (*len && *c != '/') {
		if (*len + 1 >= sz)
			return -1;
		out[(*len)++] = '/';
	}
	size_t n = strlen(c);
	if (*len + n >= sz)
		return -1;
	memcpy(out + *len, c, n + 1);
	*len += n;
	return 0;
}

int ix_split_path(char *out, size_t sz, const char *comp_dir, const char *dwo_name)
{
	size_t len = 0;
	if (!sz)
		return -1;
	out[0] = 0;
	if (dwo_name[0] != '/' && comp_dir && comp_dir[0] && path_append(out, sz, &len, comp_dir))
		return -1;
	return path_append(out, sz, &len, dwo_name);
}

int ix_split_report(const ix_split *sp, const ix_opts *opts)
{
	if (!opts || opts->want_fd < 0 || (opts->flags & SYMDB_INDEXER_DWO_PASS))
		return 0;
	fmt_report *r = calloc(1, sizeof(*r));
	uint8_t *buf = malloc(FMT_REPORT_SIZE);
	int rc = r && buf ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < sp->nmissing && i < FMT_REPORT_MAX_WANTS; i++) {
		memset(r, 0, sizeof(*r));
		r->magic = FMT_REPORT_WANT;
		r->uuid_len = 8;
		for (int b = 0; b < 8; b++)
			r->uuid[b] = (uint8_t)(sp->missing_id[i] >> (56 - 8 * b));
		if (strlen(sp->missing[i]) >= sizeof(r->debug_path))
			continue; /* cannot be named: stays missing */
		snprintf(r->debug_path, sizeof(r->debug_path), "%s", sp->missing[i]);
		fmt_report_encode(r, buf);
		rc = fmt_write_full(opts->want_fd, buf, FMT_REPORT_SIZE);
	}
	free(r);
	free(buf);
	return rc;
}

uint64_t ix_split_info_bytes(const ix_split *sp)
{
	uint64_t n = 0;
	const ix_debug_section *d;
	for (size_t i = 0; i < sp->ndwo; i++)
		if ((d = ix_sections_find(&sp->dwo[i], ".debug_info.dwo")) != NULL)
			n += d->size;
	if (sp->has_dwp && (d = ix_sections_find(&sp->dwp, ".debug_info.dwo")) != NULL)
		n += d->size;
	return n;
}
