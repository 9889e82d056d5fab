/* SPDX-License-Identifier: MIT */
/*
 * reader_info.c - symdb_image_get_info() (header facts and table counts) and
 * symdb_image_verify(), the O(file size) audit that open skips: every table
 * checksum (SPEC §9), zero padding (§4), sort orders, parallel counts, every
 * string reference and every FILES / FUNCTIONS / node index in range, Parent
 * below its child, Depth consistent, and the NONE sentinels that close the
 * inline and line interval tables (§7), in either major (reader_tables.h
 * decodes both).  Resolve stays safe without it; it
 * exists so that `symdb verify` can tell a damaged file from a correct one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reader_advise.h"
#include "reader_internal.h"
#include "reader_tables.h"
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
	out->answers_nothing = img->nsyms == 0 && img->nfns == 0 && img->nrows == 0;
	for (i = 1; i <= FMT_T_KIND_MAX && i < 32; i++)
		out->table_bytes[i] = v->t[i].p ? v->t[i].length : 0;
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

/* FUNCTIONS[i]'s Die_Offset: the sort key, read only here. */
static uint64_t fn_die(const rd_tab *tb, uint64_t i)
{
	if (tb->img->packed)
		return fmt_packed_get(&tb->fns, i, FMT_PF_DIE_OFFSET);
	return fmt_be64(tb->img->fns + i * FMT_FN_SIZE + FMT_FN_DIE_OFFSET);
}

/* Format 2: the packed headers of FUNCTIONS and INLINE_NODES (SPEC §7.9.1). */
static int check_packed_heads(const symdb_image *img, rd_tab *tb, char *eb, size_t ebsz)
{
	const char *why = NULL;

	rd_tab_init(tb, img, &why);
	if (tb->nfns != img->nfns)
		return BAD(FMT_T_FUNCTIONS, 0, "packed header: %s", why ? why : "");
	if (tb->nnodes != img->nnodes)
		return BAD(FMT_T_INLINE_NODES, 0, "packed header: %s", why ? why : "");
	return 0;
}

static int check_functions(const symdb_image *img, const rd_tab *tb, char *eb, size_t ebsz)
{
	uint64_t i;

	for (i = 0; i < img->nfns; i++) {
		rd_fn f;
		rd_fn_get(tb, (uint32_t)i, &f);
		if (!ref_ok(img, f.linkage) || !ref_ok(img, f.name))
			return BAD(FMT_T_FUNCTIONS, i, "name past the string pool");
		if (!idx_ok(f.decl_file, img->nfiles))
			return BAD(FMT_T_FUNCTIONS, i, "Decl_File past FILES");
		if (i && fn_die(tb, i) <= fn_die(tb, i - 1))
			return BAD(FMT_T_FUNCTIONS, i, "Die_Offset not above the previous one");
	}
	return 0;
}

static int check_nodes(const symdb_image *img, const rd_tab *tb, char *eb, size_t ebsz)
{
	uint64_t i;

	for (i = 0; i < img->nnodes; i++) {
		rd_node n;
		rd_call c;
		unsigned depth = rd_node_depth(tb, (uint32_t)i);
		rd_node_get(tb, (uint32_t)i, &n);
		rd_node_call(tb, (uint32_t)i, &c);
		if (n.parent != FMT_NONE && n.parent >= i)
			return BAD(FMT_T_INLINE_NODES, i, "Parent %u not below the node", n.parent);
		if (depth != (n.parent == FMT_NONE ? 0u : rd_node_depth(tb, n.parent) + 1u))
			return BAD(FMT_T_INLINE_NODES, i, "Depth %u is not the parent's + 1", depth);
		if (!idx_ok(n.function, img->nfns))
			return BAD(FMT_T_INLINE_NODES, i, "Function past FUNCTIONS");
		if (!idx_ok(c.file, img->nfiles))
			return BAD(FMT_T_INLINE_NODES, i, "Call_File past FILES");
		if (n.flags & ~FMT_NODEF_KNOWN)
			return BAD(FMT_T_INLINE_NODES, i, "unknown Flags bits");
		if (!img->packed &&
		    fmt_be32(img->nodes + i * FMT_NODE_SIZE + FMT_NODE_RESERVED))
			return BAD(FMT_T_INLINE_NODES, i, "Reserved is not zero");
	}
	return 0;
}

/* Format 2: every block of a block column valid (SPEC §7.9.2), with zero
 * reserved bytes, and a Delta 0 of 0. */
static int check_blocks(const symdb_image *img, int lines, char *eb, size_t ebsz)
{
	uint32_t kind = lines ? FMT_T_LINE_ADDRS : FMT_T_INLINE_ADDRS;
	const uint8_t *col = lines ? img->laddr : img->iaddr;
	uint64_t k, n = lines ? img->nlblk : img->niblk;

	for (k = 0; k < n; k++) {
		const uint8_t *r = col + k * FMT_BLK_SIZE;
		fmt_block b;
		if (rd_block(img, lines, k, &b))
			return BAD(kind, k, "widths or Rows_Offset out of range");
		if (r[FMT_BLK_RESERVED] || r[FMT_BLK_RESERVED + 1] || r[FMT_BLK_RESERVED + 2])
			return BAD(kind, k, "Reserved is not zero");
		if (fmt_block_raw(&b, FMT_BC_DELTA, 0))
			return BAD(kind, k, "the first Delta is not 0");
		if (!lines && (b.w[FMT_BC_LINE] || b.w[FMT_BC_COLUMN] || b.w[FMT_BC_DISCR]))
			return BAD(kind, k, "line columns in an inline block");
	}
	return 0;
}

/* Interval starts strictly ascending, in either major. */
static int intervals_ascend(const symdb_image *img, int lines, char *eb, size_t ebsz)
{
	uint32_t kind = lines ? FMT_T_LINE_ADDRS : FMT_T_INLINE_ADDRS;
	uint64_t i, n = lines ? img->nrows : img->nimap, a, prev = 0;

	for (i = 0; i < n; i++) {
		if (rd_interval_start(img, lines, i, &a))
			return BAD(kind, i / FMT_BLK_ROWS, "damaged block");
		if (i && a <= prev)
			return BAD(kind, i, "address not above the previous one");
		prev = a;
	}
	return 0;
}

static int check_intervals(const symdb_image *img, char *eb, size_t ebsz)
{
	uint64_t i;
	uint32_t node;
	rd_row row;
	int rc;

	if (img->packed &&
	    ((rc = check_blocks(img, 0, eb, ebsz)) || (rc = check_blocks(img, 1, eb, ebsz))))
		return rc;
	for (i = 0; i < img->nimap; i++) {
		if (rd_imap_get(img, i, &node) || !idx_ok(node, img->nnodes))
			return BAD(FMT_T_INLINE_MAP, i, "node past INLINE_NODES");
		if (i == img->nimap - 1 && node != FMT_NONE)
			return BAD(FMT_T_INLINE_MAP, i, "last interval is not NONE");
	}
	for (i = 0; i < img->nrows; i++) {
		if (rd_row_get(img, i, &row) || !idx_ok(row.file, img->nfiles))
			return BAD(FMT_T_LINE_ROWS, i, "File past FILES");
		if (i == img->nrows - 1 && row.file != FMT_NONE)
			return BAD(FMT_T_LINE_ROWS, i, "last row's File is not NONE");
	}
	if ((rc = intervals_ascend(img, 0, eb, ebsz)) || (rc = intervals_ascend(img, 1, eb, ebsz)))
		return rc;
	return 0;
}

int symdb_image_verify(const symdb_image *img, const symdb_open_opts *opts)
{
	rd_tab tb;
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
	    (rc = check_files(img, eb, ebsz)) || (rc = check_packed_heads(img, &tb, eb, ebsz)) ||
	    (rc = check_functions(img, &tb, eb, ebsz)) || (rc = check_nodes(img, &tb, eb, ebsz)) ||
	    (rc = check_intervals(img, eb, ebsz))) {
		rd_advise_lookup(img);
		return rc;
	}
	rd_advise_lookup(img);
	return 0;
}
