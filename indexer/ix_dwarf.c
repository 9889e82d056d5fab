/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf.c - fills an image's DWARF tables (SPEC §7.3-§7.6) so that the
 * lookup of SPEC §11 prints what llvm-symbolizer 14 prints.
 *
 * The model is LLVM 14's DWARFContext::getInliningInfoForAddress:
 *  - the unit is found from .debug_aranges, plus the DIE ranges of units
 *    that have no aranges set (DWARFDebugAranges::generate);
 *  - the chain is that unit's innermost subroutine DIE (its AddrDieMap),
 *    then its subroutine ancestors up to the first DW_TAG_subprogram;
 *  - frame 0's file:line comes from that unit's line table, frame i's from
 *    the DW_AT_call_* of frame i-1, names from findRecursively over
 *    DW_AT_abstract_origin / DW_AT_specification.
 * Each unit's line pieces and subroutine pieces are computed on their own
 * (ix_dwarf_line.c, ix_dwarf_flat.c), then cut to the unit ranges, so the
 * final arrays answer every address with one binary search each.
 *
 * DIEs are read with libdwarf, served our own already-inflated sections
 * (dwarf_object_init_b), with an error pointer on every call so libdwarf
 * never aborts.  A unit libdwarf cannot read is skipped and counted
 * (FMT_FLAG_PARTIAL, BUILD_INFO index 4).
 *
 * Parallel build: the units are cut into contiguous shards, 16 per thread,
 * which free threads take largest first, each thread with one Dwarf_Debug
 * of its own that it moves through the unit headers (a Dwarf_Debug is not
 * thread-safe; the sections are shared, read-only).  Shard 0 adds to the
 * image, later shards to private images that ix_dwarf_par.c merges so that
 * the index is byte-identical to a one-thread build.
 *
 * This file opens libdwarf over the sections, reads the unit headers and
 * cuts the shards; the walk itself is in ix_dwarf_units.c, ix_dwarf_dies.c,
 * ix_dwarf_names.c and ix_dwarf_attrs.c, the tables are filled by
 * ix_dwarf_assemble.c (ix_dwarf_walk.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ix_dwarf_split.h"
#include "ix_dwarf_walk.h"
#include "ix_reloc.h"
#include "format_header.h"

/* ---- libdwarf object access over ix_sections ------------------------------ */

static int obj_section_info(void *obj, Dwarf_Half idx, Dwarf_Obj_Access_Section *r, int *err)
{
	const ix_sections *s = obj;
	(void)err;
	memset(r, 0, sizeof(*r));
	if (idx == 0) {
		r->name = "";
		return DW_DLV_OK;
	}
	if ((size_t)idx > s->nsecs)
		return DW_DLV_NO_ENTRY;
	r->type = 1; /* SHT_PROGBITS */
	r->size = s->secs[idx - 1].size;
	r->name = s->secs[idx - 1].name;
	/* Range lists are read by ix_dwarf_ranges.c: libdwarf 20210528
	 * double-frees on some malformed .debug_rnglists, so it never sees
	 * them. */
	if (strcmp(r->name, ".debug_rnglists") == 0 || strcmp(r->name, ".debug_ranges") == 0 ||
	    strcmp(r->name, ".debug_rnglists.dwo") == 0)
		r->name = ".symdb_hidden";
	return DW_DLV_OK;
}

static Dwarf_Endianness obj_byte_order(void *obj)
{
	return ((const ix_sections *)obj)->little ? DW_OBJECT_LSB : DW_OBJECT_MSB;
}

static Dwarf_Small obj_offset_size(void *obj)
{
	(void)obj;
	return 4;
}

static Dwarf_Small obj_pointer_size(void *obj)
{
	return ((const ix_sections *)obj)->is64 ? 8 : 4;
}

static Dwarf_Unsigned obj_section_count(void *obj)
{
	return ((const ix_sections *)obj)->nsecs + 1;
}

static int obj_load_section(void *obj, Dwarf_Half idx, Dwarf_Small **data, int *err)
{
	const ix_sections *s = obj;
	(void)err;
	if (idx == 0 || (size_t)idx > s->nsecs)
		return DW_DLV_NO_ENTRY;
	*data = (Dwarf_Small *)(uintptr_t)s->secs[idx - 1].data;
	return DW_DLV_OK;
}

static const Dwarf_Obj_Access_Methods obj_methods = {
	obj_section_info, obj_byte_order, obj_offset_size, obj_pointer_size,
	obj_section_count, obj_load_section, NULL
};

/* ---- entry point ------------------------------------------------------------ */

void ix_shard_free(ix_shard *x)
{
	for (size_t i = 0; i < x->nforeign; i++)
		ix_line_free(&x->foreign[i]);
	free(x->foreign);
	free(x->ur);
	ix_u64map_free(&x->lt_idx);
	ix_u64map_free(&x->ab_code);
	ix_u64map_free(&x->files_idx);
	ix_u64map_free(&x->fn_idx);
	x->foreign = NULL;
	x->ur = NULL;
	x->nforeign = x->nur = 0;
}

/* oai must outlive the Dwarf_Debug: libdwarf keeps the pointer.  One
 * interface serves every thread's handle (it is read-only).  ix_dwarf.c
 * fills oai; a caller elsewhere passes it zeroed. */
int ix_dwarf_open_dbg(const ix_sections *s, Dwarf_Obj_Access_Interface *oai, Dwarf_Debug *dbg,
		      char *errbuf, size_t errbuf_sz)
{
	Dwarf_Error e = NULL;
	if (!oai->object) {
		oai->object = (void *)(uintptr_t)s;
		oai->methods = &obj_methods;
	}
	int r = dwarf_object_init_b(oai, NULL, NULL, DW_GROUPNUMBER_ANY, dbg, &e);
	if (r == DW_DLV_OK)
		return 0;
	fmt_err(errbuf, errbuf_sz, -1, "%s: libdwarf cannot read the debug sections: %s", s->path,
	        r == DW_DLV_ERROR ? dwarf_errmsg(e) : "no DWARF");
	if (e)
		dwarf_dealloc(NULL, e, DW_DLA_ERROR);
	return -1;
}

/* The unit list: header offsets and ends, DWARF versions; *bad when a
 * header libdwarf refused ends it (the rest cannot be walked). */
typedef struct unit_header {
	uint64_t off, end;
} unit_header;

static int read_headers(Dwarf_Debug dbg, unit_header **out, size_t *n, uint64_t *versions, int *bad)
{
	size_t cap = 0;
	uint64_t off = 0;
	*out = NULL;
	*n = 0;
	*bad = 0;
	for (;;) {
		Dwarf_Unsigned len = 0, abbr = 0, toff = 0, next = 0;
		Dwarf_Half ver = 0, asz = 0, lsz = 0, esz = 0, utype = 0;
		Dwarf_Sig8 sig;
		Dwarf_Error e = NULL;
		int r = dwarf_next_cu_header_d(dbg, 1, &len, &ver, &abbr, &asz, &lsz, &esz, &sig,
					       &toff, &next, &utype, &e);
		if (r == DW_DLV_NO_ENTRY)
			return 0;
		if (r != DW_DLV_OK) {
			if (e)
				dwarf_dealloc_error(dbg, e);
			*bad = 1;
			return 0;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			unit_header *h = realloc(*out, cap * sizeof(*h));
			if (!h)
				return -1;
			*out = h;
		}
		(*out)[(*n)++] = (unit_header){ off, next };
		if (ver < 32)
			*versions |= 1ull << ver;
		off = next;
	}
}

/* Cuts the units into n contiguous shards of about equal .debug_info bytes. */
static void cut_shards(ix_shard *w, size_t n, const unit_header *h, size_t nh)
{
	uint64_t base = nh ? h[0].off : 0;
	uint64_t total = nh ? h[nh - 1].end - base : 0;
	size_t u = 0;
	for (size_t s = 0; s < n; s++) {
		w[s].first = u;
		if (s + 1 == n) {
			u = nh;
		} else {
			uint64_t goal = base + total / n * (s + 1);
			u++; /* every shard has a unit: n <= nunits */
			while (u < nh - (n - s - 1) && h[u].off < goal)
				u++;
		}
		w[s].last = u;
		w[s].bytes = u > w[s].first ? h[u - 1].end - h[w[s].first].off : 0;
	}
}

/* Indexes the DWARF of s.  With `release` (s itself, the caller's to
 * change), the walk's memory is given back before the tables are
 * assembled: the libdwarf handles and every inflated section but
 * .debug_aranges, which assembling reads (on a big C++ image that was the
 * build's peak RSS: 544 MB of sections beside the new tables). */
static int index_dwarf(ix_image *img, const ix_sections *s, ix_sections *release, ix_split *sp,
		       unsigned threads, unsigned cpus, char *errbuf, size_t errbuf_sz)
{
	Dwarf_Obj_Access_Interface oai = { (void *)(uintptr_t)s, &obj_methods };
	Dwarf_Debug hdbg = NULL;
	/* libdwarf's process-wide de_alloc_tree records every DIE and
	 * attribute handed out, so that dwarf_finish can free what the caller
	 * forgot (a tsearch insert and delete per handle: 11% of a build).  We
	 * free every handle ourselves.  The flag is read at every allocation
	 * and release, so it is only ever set to 0, before any handle exists,
	 * and never back (a handle allocated with it on and released with it
	 * off would be freed twice). */
	dwarf_set_de_alloc_flag(0);

	unit_header *h = NULL;
	size_t nh = 0;
	uint64_t versions = 0;
	int bad = 0;
	if (ix_dwarf_open_dbg(s, &oai, &hdbg, errbuf, errbuf_sz)) {
		img->header_flags |= FMT_FLAG_PARTIAL;
		img->build_info[FMT_BI_UNITS_SKIPPED]++;
		return 0;
	}
	int rc = read_headers(hdbg, &h, &nh, &versions, &bad);
	Dwarf_Error e = NULL;
	/* Split units' DIEs are in their .dwo files: a skeleton is a few
	 * dozen bytes, so their sizes decide the threads. */
	uint64_t info = ix_sections_find(s, ".debug_info")->size + (sp ? ix_split_info_bytes(sp) : 0);
	size_t nt = ix_dwarf_shards(threads, cpus, nh, info);
	size_t n = ix_dwarf_nshards(nt, nh);
	ix_unit *units = rc ? NULL : calloc(nh + 1, sizeof(*units));
	ix_shard *w = calloc(n, sizeof(*w));
	void **t = calloc(nt, sizeof(*t));
	if (!units || !w || !t)
		rc = -1;
	/* The header pass's handle, its unit contexts read, serves the calling
	 * thread, unless a header it refused ended the list: then no handle
	 * can start over past it, and each starts fresh at unit 0. */
	if (t && !bad)
		t[0] = hdbg;
	else
		dwarf_object_finish(hdbg, &e);
	for (size_t i = 0; !rc && i < nh; i++) {
		units[i].off = h[i].off;
		ix_vec_init(&units[i].lines, sizeof(ix_piece));
		ix_vec_init(&units[i].dies, sizeof(ix_piece));
	}
	for (size_t i = 0; !rc && i < n; i++)
		w[i] = (ix_shard){ .img = img, .secs = s, .units = units, .nunits = nh, .split = sp };
	for (size_t i = t && t[0] ? 1 : 0; !rc && i < nt; i++) {
		char why[256];
		Dwarf_Debug dbg = NULL;
		if (ix_dwarf_open_dbg(s, &oai, &dbg, why, sizeof(why)))
			rc = -1; /* it opened once: only memory can fail */
		t[i] = dbg;
	}
	if (!rc) {
		cut_shards(w, n, h, nh);
		rc = ix_dwarf_par_run(w, n, t, nt, !bad);
	}
	for (size_t i = 0; t && i < nt; i++) {
		if (t[i])
			dwarf_object_finish((Dwarf_Debug)t[i], &e);
		t[i] = NULL;
	}
	if (release)
		ix_sections_release(release, ".debug_aranges");
	if (!rc) {
		rc = ix_dwarf_assemble(&w[0]);
		img->build_info[FMT_BI_UNITS] += w[0].indexed;
		img->build_info[FMT_BI_UNITS_SKIPPED] += w[0].skipped + (uint64_t)bad;
		img->build_info[FMT_BI_DWARF_VERSIONS] |= versions;
		if (w[0].skipped || bad)
			img->header_flags |= FMT_FLAG_PARTIAL;
		if (!rc)
			img->header_flags |= FMT_FLAG_HAS_DWARF;
	}
	if (rc)
		fmt_err(errbuf, errbuf_sz, rc, "%s: out of memory indexing DWARF", s->path);
	for (size_t i = 0; w && i < n; i++)
		ix_shard_free(&w[i]);
	free(t);
	free(w);
	for (size_t i = 0; units && i < nh; i++) {
		ix_vec_free(&units[i].lines);
		ix_vec_free(&units[i].dies);
	}
	free(units);
	free(h);
	return rc ? -ENOMEM : 0;
}

/* Mach-O (ix_macho.c) serves a slice's __DWARF sections itself: universal
 * files and dSYM bundles are not ELF, so ix_sections_open cannot open them. */
int ix_dwarf_index_sections(ix_image *img, const ix_sections *s, unsigned cpus, char *errbuf,
			    size_t errbuf_sz)
{
	if (!ix_sections_find(s, ".debug_info"))
		return 0;
	return index_dwarf(img, s, NULL, NULL, 0, cpus, errbuf, errbuf_sz);
}

/* The builder never passes the input itself as its own debug file (a .debug
 * file indexed on its own finds itself by build-id): it compares inodes
 * before it opens anything for us (SPEC §12.5). */
int ix_dwarf_attach(ix_image *img, int fd, const char *binary_path, const ix_opts *opts,
		    char *debug_path_out, size_t debug_path_sz, char *errbuf, size_t errbuf_sz)
{
	if (debug_path_sz)
		debug_path_out[0] = 0;
	if (opts && (opts->flags & SYMDB_INDEXER_NO_DWARF))
		return 0;
	ix_sections bin, dbg;
	int rc = ix_sections_open(&bin, fd, binary_path, errbuf, errbuf_sz);
	if (rc)
		return rc;
	ix_sections *use = &bin;
	/* llvm-symbolizer prefers a separate debug file when it finds one. */
	const symdb_indexer_file *df = ix_debugfile_find(&bin, opts);
	if (df) {
		char why[512];
		const char *name = df->name ? df->name : "";
		if (ix_sections_open(&dbg, df->fd, name, why, sizeof(why)) == 0) {
			if (ix_sections_find(&dbg, ".debug_info") &&
			    ix_reloc_claims_from(&dbg, &bin) == 0) {
				use = &dbg;
				/* §12.5: the debug file's identity, for the
				 * same-build-id policy (a stripped binary and
				 * its .debug file are the same image). */
				fmt_fd_xxh3(df->fd, NULL, &img->build_info[FMT_BI_DEBUG_XXH3]);
				snprintf(debug_path_out, debug_path_sz, "%s", name);
			} else {
				ix_sections_close(&dbg);
			}
		}
	}
	/* Split DWARF (ix_dwarf_split.c).  LLVM looks for OBJECT.dwp beside
	 * the file its DWARF comes from; the builder opens BINARY.dwp only,
	 * so a separate debug file's skeletons read .dwo files alone. */
	ix_split sp;
	ix_opts so;
	if (opts) {
		so = *opts;
		if (use != &bin)
			so.dwp = (symdb_indexer_file){ -1, NULL };
	}
	if (ix_split_open(&sp, opts ? &so : NULL))
		rc = fmt_err(errbuf, errbuf_sz, -ENOMEM, "%s: out of memory", binary_path);
	if (!rc && ix_sections_find(use, ".debug_info"))
		rc = index_dwarf(img, use, use, &sp, opts ? opts->threads : 0,
				 opts ? opts->cpus : 1, errbuf, errbuf_sz);
	if (!rc && ix_split_report(&sp, opts) < 0)
		rc = fmt_err(errbuf, errbuf_sz, -EIO, "cannot report to the parent");
	ix_split_close(&sp);
	/* §7.2.2: the debug file's own symbol table, for requests naming it. */
	if (rc == 0 && use != &bin)
		ix_elf_load_alt(img, df->fd, df->name ? df->name : "");
	if (use != &bin)
		ix_sections_close(&dbg);
	ix_sections_close(&bin);
	return rc;
}
