/* SPDX-License-Identifier: MIT */
/*
 * reader_info.c - symdb_image_get_info() (header facts and table counts) and
 * symdb_image_verify(), the O(file size) audit that open skips: every table
 * checksum (SPEC §9), zero padding (§4), sort orders, parallel counts, every
 * string reference and every FILES / FUNCTIONS / node index in range, Parent
 * below its child, Depth consistent, and the NONE sentinels that close the
 * inline and line interval tables (§7).  Resolve stays safe without it; it
 * exists so that `symdb verify` can tell a damaged file from a correct one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reader_advise.h"
#include "reader_internal.h"
#include "symdb_endian.h"

int symdb_image_get_info(const symdb_image *img, symdb_image_info *caller)
{
	symdb_image_info full, *out = &full;
	const fmt_view *v;
	uint64_t i;

	if (!img)
		return SYMDB_E_INVAL;
	v = &img->v;
	memset(out, 0, sizeof *out);
	out->sz = sizeof *out;
	memcpy(out->uuid.bytes, v->uuid, sizeof out->uuid.bytes);
	out->uuid.len = v->uuid_len;
	out->uuid.kind = v->uuid_kind;
	out->format_major = v->version_major;
	out->format_minor = v->version_minor;
	out->object_format = v->object_format;
	out->object_class = v->object_class;
	out->object_endian = v->object_endian;
	out->object_type = v->object_type;
	out->machine = v->machine;
	out->machine_sub = v->machine_sub;
	out->flags = v->flags;
	out->address_size = v->address_size;
	out->base_address = v->base_address;
	out->file_size = v->size;
	out->image_name = rd_str(img, v->image_name);
	out->nsymbols = img->nsyms;
	out->nfunctions = img->nfns;
	out->ninline_nodes = img->nnodes;
	out->nline_rows = img->nrows;
	out->nfiles = img->nfiles;
	out->nsegments = img->nsegs;
	for (i = 0; i < img->nbinfo && i < 16; i++)
		out->build_info[i] = fmt_be64(img->binfo + i * FMT_BI_SIZE);
	out->nbuild_info = (unsigned)i;
	out->alt_symbols = img->alt != 0;
	out->symbols_missing = img->names_missing != 0;
	return rd_out_put(caller, out, sizeof *out);
}

/* Shorthand for the errors below: table kind, record index, what is wrong. */
#define BAD(kind, i, ...) bad_record(eb, ebsz, kind, i, __VA_ARGS__)

__attribute__((format(printf, 5, 6))) static int bad_record(char *eb, size_t ebsz, uint32_t kind,
                                                            uint64_t i, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "table %u (%s) record %llu: %s", kind,
	               fmt_table_name(kind), (unsigned long long)i, why);
}

static int ascending(const symdb_image *img, uint32_t kind, const uint8_t *col, uint64_t n,
                     char *eb, size_t ebsz)
{
	uint64_t i;

	for (i = 1; i < n; i++)
		if (fmt_be_addr(col, img->aw, i) <= fmt_be_addr(col, img->aw, i - 1))
			return BAD(kind, i, "address not above the previous one");
	return 0;
}

static int ref_ok(const symdb_image *img, uint32_t ref)
{
	return ref < img->nstrs;
}

static int idx_ok(uint32_t idx, uint64_t n)
{
	return idx == FMT_NONE || idx < n;
}

static int check_segments(const symdb_image *img, char *eb, size_t ebsz)
{
	uint64_t i;

	for (i = 0; i < img->nsegs; i++) {
		const uint8_t *s = img->segs + i * FMT_SEG_SIZE;
		if (fmt_be32(s + FMT_SEG_FLAGS) & ~(FMT_SEGF_X | FMT_SEGF_W | FMT_SEGF_R))
			return BAD(FMT_T_SEGMENTS, i, "unknown Flags bits");
		if (fmt_be32(s + FMT_SEG_RESERVED))
			return BAD(FMT_T_SEGMENTS, i, "Reserved is not zero");
		if (i && fmt_be64(s + FMT_SEG_VADDR) < fmt_be64(s - FMT_SEG_SIZE + FMT_SEG_VADDR))
			return BAD(FMT_T_SEGMENTS, i, "Vaddr below the previous one");
	}
	return 0;
}

/* One symbol table (§7.2, §7.2.1), the image's own or ALT_SYMBOL_* (§7.2.2),
 * as the view gives it: verify checks both, whichever the handle answers with. */
static int check_symtab(const symdb_image *img, uint32_t k_addrs, uint32_t k_syms,
                        uint32_t k_files, char *eb, size_t ebsz)
{
	const fmt_view *v = &img->v;
	const uint8_t *syms = v->t[k_syms].p, *sfiles = v->t[k_files].p;
	uint64_t i, n = v->t[k_syms].count;

	for (i = 0; i < n; i++) {
		const uint8_t *s = syms + i * FMT_SYM_SIZE;
		if (!ref_ok(img, fmt_be32(s + FMT_SYM_NAME)))
			return BAD(k_syms, i, "Name past the string pool");
		if (fmt_be32(s + FMT_SYM_FLAGS) & ~FMT_SYMF_KNOWN)
			return BAD(k_syms, i, "unknown Flags bits");
		if (sfiles && !ref_ok(img, fmt_be32(sfiles + i * FMT_SYMFILE_SIZE)))
			return BAD(k_files, i, "File past the string pool");
	}
	return ascending(img, k_addrs, v->t[k_addrs].p, n, eb, ebsz);
}

static int check_symbols(const symdb_image *img, char *eb, size_t ebsz)
{
	int rc = check_symtab(img, FMT_T_SYMBOL_ADDRS, FMT_T_SYMBOLS, FMT_T_SYMBOL_FILES, eb, ebsz);

	if (rc == 0 && img->v.t[FMT_T_ALT_SYMBOLS].p)
		rc = check_symtab(img, FMT_T_ALT_SYMBOL_ADDRS, FMT_T_ALT_SYMBOLS,
		                  FMT_T_ALT_SYMBOL_FILES, eb, ebsz);
	return rc;
}

static int check_files(const symdb_image *img, char *eb, size_t ebsz)
{
	uint64_t i;

	for (i = 0; i < img->nfiles; i++) {
		const uint8_t *f = img->files + i * FMT_FILE_SIZE;
		if (!ref_ok(img, fmt_be32(f + FMT_FILE_PATH)) ||
		    !ref_ok(img, fmt_be32(f + FMT_FILE_RELATIVE)) ||
		    !ref_ok(img, fmt_be32(f + FMT_FILE_BASE)))
			return BAD(FMT_T_FILES, i, "path past the string pool");
	}
	for (i = 0; i < img->nfsrcs; i++) {
		const uint8_t *r = img->fsrcs + i * FMT_FSRC_SIZE;
		if (!ref_ok(img, fmt_be32(r + FMT_FSRC_PATH)) ||
		    !ref_ok(img, fmt_be32(r + FMT_FSRC_SOURCE)))
			return BAD(FMT_T_FILE_SOURCES, i, "string past the string pool");
		if (i && fmt_be32(r + FMT_FSRC_PATH) <= fmt_be32(r - FMT_FSRC_SIZE + FMT_FSRC_PATH))
			return BAD(FMT_T_FILE_SOURCES, i, "Path not above the previous one");
	}
	return 0;
}

static int check_functions(const symdb_image *img, char *eb, size_t ebsz)
{
	uint64_t i;

	for (i = 0; i < img->nfns; i++) {
		const uint8_t *f = img->fns + i * FMT_FN_SIZE;
		if (!ref_ok(img, fmt_be32(f + FMT_FN_LINKAGE_NAME)) ||
		    !ref_ok(img, fmt_be32(f + FMT_FN_NAME)))
			return BAD(FMT_T_FUNCTIONS, i, "name past the string pool");
		if (!idx_ok(fmt_be32(f + FMT_FN_DECL_FILE), img->nfiles))
			return BAD(FMT_T_FUNCTIONS, i, "Decl_File past FILES");
		if (i && fmt_be64(f + FMT_FN_DIE_OFFSET) <=
		             fmt_be64(f - FMT_FN_SIZE + FMT_FN_DIE_OFFSET))
			return BAD(FMT_T_FUNCTIONS, i, "Die_Offset not above the previous one");
	}
	return 0;
}

static int check_nodes(const symdb_image *img, char *eb, size_t ebsz)
{
	uint64_t i;

	for (i = 0; i < img->nnodes; i++) {
		const uint8_t *n = img->nodes + i * FMT_NODE_SIZE;
		uint32_t parent = fmt_be32(n + FMT_NODE_PARENT);
		unsigned depth = fmt_be16(n + FMT_NODE_DEPTH);
		if (parent != FMT_NONE && parent >= i)
			return BAD(FMT_T_INLINE_NODES, i, "Parent %u not below the node", parent);
		if (depth != (parent == FMT_NONE
		                  ? 0u
		                  : fmt_be16(img->nodes + (uint64_t)parent * FMT_NODE_SIZE +
		                             FMT_NODE_DEPTH) + 1u))
			return BAD(FMT_T_INLINE_NODES, i, "Depth %u is not the parent's + 1", depth);
		if (!idx_ok(fmt_be32(n + FMT_NODE_FUNCTION), img->nfns))
			return BAD(FMT_T_INLINE_NODES, i, "Function past FUNCTIONS");
		if (!idx_ok(fmt_be32(n + FMT_NODE_CALL_FILE), img->nfiles))
			return BAD(FMT_T_INLINE_NODES, i, "Call_File past FILES");
		if (fmt_be16(n + FMT_NODE_FLAGS) & ~FMT_NODEF_KNOWN)
			return BAD(FMT_T_INLINE_NODES, i, "unknown Flags bits");
		if (fmt_be32(n + FMT_NODE_RESERVED))
			return BAD(FMT_T_INLINE_NODES, i, "Reserved is not zero");
	}
	return 0;
}

static int check_intervals(const symdb_image *img, char *eb, size_t ebsz)
{
	uint64_t i;
	int rc;

	for (i = 0; i < img->nimap; i++)
		if (!idx_ok(fmt_be32(img->imap + i * FMT_IMAP_SIZE), img->nnodes))
			return BAD(FMT_T_INLINE_MAP, i, "node past INLINE_NODES");
	if (img->nimap && fmt_be32(img->imap + (img->nimap - 1) * FMT_IMAP_SIZE) != FMT_NONE)
		return BAD(FMT_T_INLINE_MAP, img->nimap - 1, "last interval is not NONE");
	for (i = 0; i < img->nrows; i++)
		if (!idx_ok(fmt_be32(img->rows + i * FMT_ROW_SIZE + FMT_ROW_FILE), img->nfiles))
			return BAD(FMT_T_LINE_ROWS, i, "File past FILES");
	if (img->nrows && fmt_be32(img->rows + (img->nrows - 1) * FMT_ROW_SIZE) != FMT_NONE)
		return BAD(FMT_T_LINE_ROWS, img->nrows - 1, "last row's File is not NONE");
	if ((rc = ascending(img, FMT_T_INLINE_ADDRS, img->iaddr, img->nimap, eb, ebsz)) ||
	    (rc = ascending(img, FMT_T_LINE_ADDRS, img->laddr, img->nrows, eb, ebsz)))
		return rc;
	return 0;
}

int symdb_image_verify(const symdb_image *img, const symdb_open_opts *opts)
{
	unsigned flags;
	size_t ebsz;
	char *eb;
	int rc;

	if ((rc = rd_opts(opts, 0, &flags, &eb, &ebsz)) != 0)
		return rc;
	if (!img)
		return SYMDB_E_INVAL;
	rd_advise_scan(img); /* every byte, table by table */
	if ((rc = fmt_view_check_sums(&img->v, eb, ebsz)) ||
	    (rc = fmt_view_check_padding(&img->v, eb, ebsz)) ||
	    (rc = check_segments(img, eb, ebsz)) || (rc = check_symbols(img, eb, ebsz)) ||
	    (rc = check_files(img, eb, ebsz)) || (rc = check_functions(img, eb, ebsz)) ||
	    (rc = check_nodes(img, eb, ebsz)) || (rc = check_intervals(img, eb, ebsz))) {
		rd_advise_lookup(img);
		return rc;
	}
	rd_advise_lookup(img);
	return 0;
}
