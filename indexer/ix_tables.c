/* SPDX-License-Identifier: MIT */
/*
 * ix_tables.c - from an ix_image to encoded tables (SPEC §7): the symbol
 * reduction of §7.2, the cross-reference checks that keep a writer from
 * producing a file a reader would reject, the Address_Size choice of §5, and
 * the encoding of every table through format_writer.h.
 *
 * Symbols.  LLVM 14 (SymbolizableObjectFile::create) stable-sorts its symbols
 * by (address, size) and keeps the last of each run of equal addresses: the
 * largest size, and among equal sizes the one latest in the symbol table.
 * Sorting by (address, size, table position) with qsort gives the same order
 * deterministically.
 *
 * Each symbol's STT_FILE name (ix_symbol.file) travels with it through the
 * sort, so the survivor of an address keeps its own.
 *
 * The DWARF tables (kinds 5-11) are written exactly when FMT_FLAG_HAS_DWARF
 * is set; BUILD_INFO always, marked OPTIONAL; SYMBOL_FILES (OPTIONAL) when a
 * symbol has a file; FILE_SOURCES (OPTIONAL) when a file has embedded
 * source.  The other file's symbol table of a stripped-binary /
 * debug-file pair (ALT_SYMBOL_*, §7.2.2, OPTIONAL) goes through the same
 * reduction and encoding as the image's own.
 */
#include "ix_emit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_header.h"
#include "format_pack.h"

#define ADDR32_MAX 0xFFFFFFFFull

static int cmp_sym(const void *a, const void *b)
{
	const ix_symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void symbols_reduce(ix_vec *v)
{
	ix_symbol *s = v->p;
	size_t n = v->n, i, j = 0;

	if (n == 0)
		return;
	qsort(s, n, sizeof *s, cmp_sym);
	for (i = 0; i < n; i++) {
		if (i + 1 < n && s[i + 1].addr == s[i].addr)
			continue;
		s[j++] = s[i];
	}
	v->n = j;
}

void ix_symbols_reduce(ix_image *img)
{
	img->symbols_reduced = 1;
	symbols_reduce(&img->symbols);
}

/* Intervals are emitted from Base_Address up: an interval starting below it
 * is clipped to start there (or dropped if the next one starts there too).
 * Returns the index of the first emitted element; *first_addr gets its
 * (possibly clipped) start.  Elements are ix_imap or ix_row, whose first
 * member is the u64 address. */
static size_t builder_first_kept(const void *p, size_t elem, size_t n, uint64_t base,
                                 uint64_t *first_addr)
{
	const uint8_t *b = p;
	size_t k = 0;
	uint64_t a;

	while (k < n) {
		memcpy(&a, b + k * elem, sizeof a); /* addr is the first member */
		if (a >= base)
			break;
		k++;
	}
	*first_addr = base;
	if (k > 0) {
		if (k < n) {
			memcpy(&a, b + k * elem, sizeof a);
			if (a == base)
				return k;
		}
		return k - 1; /* starts below base: clip to base */
	}
	if (n)
		memcpy(first_addr, b, sizeof *first_addr);
	return 0;
}

/* ---- consistency checks of the DWARF model ------------------------------ */

static int builder_bad(char *eb, size_t ebsz, const char *what, size_t i)
{
	return fmt_err(eb, ebsz, SYMDB_E_INVAL, "internal error: %s at index %zu", what, i);
}

static int builder_check_dwarf(const ix_image *img, char *eb, size_t ebsz)
{
	const ix_function *fn = img->functions.p;
	const ix_node *nd = img->nodes.p;
	const ix_imap *im = img->imap.p;
	const ix_row *rw = img->rows.p;
	size_t nf = img->files.n, i;

	if (nf >= FMT_NONE || img->functions.n >= FMT_NONE || img->nodes.n >= FMT_NONE)
		return fmt_err(eb, ebsz, SYMDB_E_TOO_BIG, "more than 2^32-2 DWARF records");
	for (i = 0; i < img->functions.n; i++)
		if ((i && fn[i].die_offset <= fn[i - 1].die_offset) ||
		    (fn[i].decl_file != FMT_NONE && fn[i].decl_file >= nf))
			return builder_bad(eb, ebsz, "FUNCTIONS unsorted or bad decl_file", i);
	for (i = 0; i < img->nodes.n; i++)
		if ((nd[i].parent != FMT_NONE && nd[i].parent >= i) ||
		    (nd[i].function != FMT_NONE && nd[i].function >= img->functions.n) ||
		    (nd[i].call_file != FMT_NONE && nd[i].call_file >= nf))
			return builder_bad(eb, ebsz, "INLINE_NODES parent/function/call_file", i);
	for (i = 0; i < img->imap.n; i++)
		if ((i && im[i].addr <= im[i - 1].addr) ||
		    (im[i].node != FMT_NONE && im[i].node >= img->nodes.n))
			return builder_bad(eb, ebsz, "INLINE_ADDRS unsorted or bad node", i);
	if (img->imap.n && im[img->imap.n - 1].node != FMT_NONE)
		return builder_bad(eb, ebsz, "INLINE_MAP without a NONE sentinel", img->imap.n - 1);
	for (i = 0; i < img->rows.n; i++)
		if ((i && rw[i].addr <= rw[i - 1].addr) ||
		    (rw[i].file != FMT_NONE && rw[i].file >= nf))
			return builder_bad(eb, ebsz, "LINE_ADDRS unsorted or bad file", i);
	if (img->rows.n && rw[img->rows.n - 1].file != FMT_NONE)
		return builder_bad(eb, ebsz, "LINE_ROWS without a NONE sentinel", img->rows.n - 1);
	return 0;
}

/* ---- encoding ----------------------------------------------------------- */

struct table_builder {
	ix_image *img;
	ix_output *out;
	fmt_wtable t[FMT_MAX_TABLES];
	unsigned nt;
	int dwarf;
	size_t imap0, rows0;     /* first emitted interval of each */
	uint64_t imap0_addr, rows0_addr;
};

/* Allocate an encoded table of count records of rs bytes. */
static uint8_t *builder_alloc(struct table_builder *b, uint32_t kind, uint16_t flags,
                              uint64_t count, unsigned rs)
{
	uint64_t len = count * rs;
	fmt_wtable *t = &b->t[b->nt++];
	uint8_t *p = malloc(len ? (size_t)len : 1);

	b->out->buf[kind] = p;
	t->kind = kind;
	t->flags = flags;
	t->data = p;
	t->length = len;
	t->count = count;
	return p;
}

/* Hand an encoded packed table (SPEC §7.9) of len bytes to the plan. */
static void builder_adopt(struct table_builder *b, uint32_t kind, uint8_t *p, uint64_t len,
                          uint64_t count)
{
	fmt_wtable *t = &b->t[b->nt++];

	b->out->buf[kind] = p;
	t->kind = kind;
	t->flags = 0;
	t->data = p;
	t->length = len;
	t->count = count;
}

static unsigned builder_address_size(const struct table_builder *b)
{
	const ix_image *img = b->img;
	const ix_symbol *s = img->symbols.p;
	const ix_imap *im = img->imap.p;
	const ix_row *rw = img->rows.p;
	uint64_t base = img->base_address;
	size_t i;

	for (i = 0; i < img->symbols.n; i++) {
		uint64_t o = s[i].addr - base;

		if (o > ADDR32_MAX || s[i].size > ADDR32_MAX - o)
			return 8;
	}
	s = img->alt_symbols.p;
	for (i = 0; i < img->alt_symbols.n; i++) {
		uint64_t o = s[i].addr - base;

		if (o > ADDR32_MAX || s[i].size > ADDR32_MAX - o)
			return 8;
	}
	if (!b->dwarf)
		return 4;
	/* Interval starts ascend, so the last one is the largest; one below the
	 * base was clipped to it. */
	if (img->imap.n && im[img->imap.n - 1].addr > base &&
	    im[img->imap.n - 1].addr - base > ADDR32_MAX)
		return 8;
	if (img->rows.n && rw[img->rows.n - 1].addr > base &&
	    rw[img->rows.n - 1].addr - base > ADDR32_MAX)
		return 8;
	return 4;
}

/* SYMBOL_ADDRS/SYMBOLS/SYMBOL_FILES (§7.2, §7.2.1) from v, or their
 * ALT_ twins (§7.2.2): the same records under other kinds.  The files table
 * is written only when some kept symbol has an STT_FILE name, so an image
 * without any (stripped, Mach-O, .dynsym only) is unchanged. */
static int builder_symtab(struct table_builder *b, unsigned as, const ix_vec *v, uint32_t k_addrs,
                          uint32_t k_syms, uint32_t k_files, uint16_t flags)
{
	const ix_symbol *s = v->p;
	size_t n = v->n, i;
	uint8_t *a = builder_alloc(b, k_addrs, flags, n, as);
	uint8_t *r = builder_alloc(b, k_syms, flags, n, FMT_SYM_SIZE);

	if (!a || !r)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		fmt_put_addr(a, as, i, s[i].addr - b->img->base_address);
		fmt_enc_symbol(r + i * FMT_SYM_SIZE, s[i].size, s[i].name, s[i].flags);
	}
	for (i = 0; i < n && s[i].file == 0; i++)
		;
	if (i == n)
		return 0;
	r = builder_alloc(b, k_files, FMT_TABLE_OPTIONAL, n, FMT_SYMFILE_SIZE);
	if (!r)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		fmt_enc_symbol_file(r + i * FMT_SYMFILE_SIZE, s[i].file);
	return 0;
}

static int builder_symbols(struct table_builder *b, unsigned as)
{
	int rc = builder_symtab(b, as, &b->img->symbols, FMT_T_SYMBOL_ADDRS, FMT_T_SYMBOLS,
	                        FMT_T_SYMBOL_FILES, 0);

	b->out->nsymbols = b->img->symbols.n;
	if (rc == 0 && b->img->alt_symbols.n)
		rc = builder_symtab(b, as, &b->img->alt_symbols, FMT_T_ALT_SYMBOL_ADDRS,
		                    FMT_T_ALT_SYMBOLS, FMT_T_ALT_SYMBOL_FILES, FMT_TABLE_OPTIONAL);
	return rc;
}

static int builder_segments(struct table_builder *b)
{
	const ix_segment *s = b->img->segments.p;
	size_t n = b->img->segments.n, i;
	uint8_t *r = builder_alloc(b, FMT_T_SEGMENTS, 0, n, FMT_SEG_SIZE);

	if (!r)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		fmt_enc_segment(r + i * FMT_SEG_SIZE, s[i].vaddr, s[i].memsz, s[i].fileoff,
		                s[i].filesz, s[i].flags);
	return 0;
}

static int builder_strings(struct table_builder *b)
{
	size_t len;
	const uint8_t *p = ix_str_bytes(b->img->strings, &len);
	fmt_wtable *t = &b->t[b->nt++];

	t->kind = FMT_T_STRINGS;
	t->data = p; /* owned by the pool, which outlives the plan's use */
	t->length = t->count = len;
	return 0;
}

static int builder_build_info(struct table_builder *b)
{
	uint8_t *r = builder_alloc(b, FMT_T_BUILD_INFO, FMT_TABLE_OPTIONAL, FMT_BI_COUNT, FMT_BI_SIZE);
	unsigned i;

	if (!r)
		return -ENOMEM;
	for (i = 0; i < FMT_BI_COUNT; i++)
		fmt_put64(r + i * FMT_BI_SIZE, b->img->build_info[i]);
	return 0;
}

/* FUNCTIONS record i's fields in SPEC §7.9.1 order. */
static void function_fields(uint64_t i, uint64_t *v, void *arg)
{
	const ix_function *fn = (const ix_function *)((const ix_image *)arg)->functions.p + i;

	v[FMT_PF_DIE_OFFSET] = fn->die_offset;
	v[FMT_PF_LINKAGE_NAME] = fn->linkage_name;
	v[FMT_PF_NAME] = fn->name;
	v[FMT_PF_DECL_FILE] = fn->decl_file;
	v[FMT_PF_DECL_LINE] = fn->decl_line;
}

static int builder_files_functions(struct table_builder *b)
{
	const ix_file *f = b->img->files.p;
	size_t i;
	uint8_t *r = builder_alloc(b, FMT_T_FILES, 0, b->img->files.n, FMT_FILE_SIZE), *q;
	uint64_t len;

	if (!r)
		return -ENOMEM;
	for (i = 0; i < b->img->files.n; i++)
		fmt_enc_file(r + i * FMT_FILE_SIZE, f[i].path, f[i].relative, f[i].base);
	if (fmt_pack_records(FMT_PF_COUNT, FMT_PF_NULLABLE, b->img->functions.n, function_fields,
	                     b->img, &q, &len))
		return -ENOMEM;
	builder_adopt(b, FMT_T_FUNCTIONS, q, len, b->img->functions.n);
	return 0;
}

/* (path, order) triples: by path, then FILES order (a total order, so
 * qsort's instability cannot change which text is first). */
static int cmp_fsrc(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* SPEC §7.3.1: written only when a line table embeds some file's source
 * (clang -gembed-source), as (Path, Source) pairs sorted by Path, each Path
 * once.  A path can head two FILES records (two relative forms, §7.3): the
 * first record in FILES order, which is unit order, gives its text. */
static int builder_file_sources(struct table_builder *b)
{
	const ix_file *f = b->img->files.p;
	size_t n = 0, i, k = 0, u = 0;

	for (i = 0; i < b->img->files.n; i++)
		n += f[i].source != FMT_NONE;
	if (n == 0)
		return 0;
	uint32_t *tri = malloc(n * 3 * sizeof(*tri)); /* path, order, source */
	if (!tri)
		return -ENOMEM;
	for (i = 0; i < b->img->files.n; i++)
		if (f[i].source != FMT_NONE) {
			tri[3 * k] = f[i].path;
			tri[3 * k + 1] = (uint32_t)i;
			tri[3 * k++ + 2] = f[i].source;
		}
	qsort(tri, n, 3 * sizeof(*tri), cmp_fsrc);
	for (i = 0; i < n; i++)
		u += i == 0 || tri[3 * i] != tri[3 * (i - 1)];
	uint8_t *r = builder_alloc(b, FMT_T_FILE_SOURCES, FMT_TABLE_OPTIONAL, u, FMT_FSRC_SIZE);
	if (!r) {
		free(tri);
		return -ENOMEM;
	}
	for (i = 0, k = 0; i < n; i++)
		if (i == 0 || tri[3 * i] != tri[3 * (i - 1)])
			fmt_enc_file_source(r + k++ * FMT_FSRC_SIZE, tri[3 * i], tri[3 * i + 2]);
	free(tri);
	return 0;
}

/* INLINE_NODES record i's fields in SPEC §7.9.1 order. */
static void node_fields(uint64_t i, uint64_t *v, void *arg)
{
	const ix_image *img = arg;
	const ix_node *nd = (const ix_node *)img->nodes.p + i;
	uint64_t base = img->base_address;
	uint16_t fl = nd->flags & FMT_NODEF_KNOWN;

	/* A low_pc below the base cannot be stored as an offset. */
	if (!(fl & FMT_NODEF_HAS_LOW_PC) || nd->low_pc < base)
		fl &= (uint16_t)~FMT_NODEF_HAS_LOW_PC;
	v[FMT_PN_PARENT_DISTANCE] = nd->parent == FMT_NONE ? 0 : i - nd->parent;
	v[FMT_PN_FUNCTION] = nd->function;
	v[FMT_PN_CALL_FILE] = nd->call_file;
	v[FMT_PN_CALL_LINE] = nd->call_line;
	v[FMT_PN_CALL_COLUMN] = nd->call_column;
	v[FMT_PN_CALL_DISCR] = nd->call_discr;
	v[FMT_PN_DEPTH] = nd->depth;
	v[FMT_PN_FLAGS] = fl;
	v[FMT_PN_LOW_PC] = fl & FMT_NODEF_HAS_LOW_PC ? nd->low_pc - base : 0;
}

static int builder_nodes(struct table_builder *b)
{
	uint8_t *r;
	uint64_t len;

	if (fmt_pack_records(FMT_PN_COUNT, FMT_PN_NULLABLE, b->img->nodes.n, node_fields, b->img,
	                     &r, &len))
		return -ENOMEM;
	builder_adopt(b, FMT_T_INLINE_NODES, r, len, b->img->nodes.n);
	b->out->ninline_nodes = b->img->nodes.n;
	return 0;
}

/* Interval i of the emitted inline intervals (the first one clipped to
 * Base_Address, builder_first_kept). */
static void imap_row(uint64_t i, fmt_brow *r, void *arg)
{
	const struct table_builder *b = arg;
	const ix_imap *im = (const ix_imap *)b->img->imap.p + b->imap0 + i;

	r->addr = (i ? im->addr : b->imap0_addr) - b->img->base_address;
	r->index = im->node;
}

static void line_row(uint64_t i, fmt_brow *r, void *arg)
{
	const struct table_builder *b = arg;
	const ix_row *x = (const ix_row *)b->img->rows.p + b->rows0 + i;

	r->addr = (i ? x->addr : b->rows0_addr) - b->img->base_address;
	r->index = x->file;
	r->line = x->line;
	r->column = x->column;
	r->discr = x->discr;
}

/* A block interval table pair (SPEC §7.9.2): the block column under kind kb,
 * the rows under kr. */
static int builder_blocks(struct table_builder *b, uint32_t kb, uint32_t kr, uint64_t n,
                          int lines, fmt_brow_get_fn get)
{
	uint8_t *blk, *rows;
	uint64_t len;
	int rc = fmt_pack_blocks(n, lines, get, b, &blk, &rows, &len);

	if (rc)
		return rc;
	builder_adopt(b, kb, blk, (n + FMT_BLK_ROWS - 1) / FMT_BLK_ROWS * FMT_BLK_SIZE,
	              (n + FMT_BLK_ROWS - 1) / FMT_BLK_ROWS);
	builder_adopt(b, kr, rows, len, n);
	return 0;
}

static int builder_imap(struct table_builder *b)
{
	return builder_blocks(b, FMT_T_INLINE_ADDRS, FMT_T_INLINE_MAP,
	                      b->img->imap.n - b->imap0, 0, imap_row);
}

static int builder_rows(struct table_builder *b)
{
	b->out->nline_rows = b->img->rows.n - b->rows0;
	return builder_blocks(b, FMT_T_LINE_ADDRS, FMT_T_LINE_ROWS, b->out->nline_rows, 1,
	                      line_row);
}

static void builder_header(const ix_image *img, unsigned as, fmt_whdr *h)
{
	memset(h, 0, sizeof *h);
	h->flags = img->header_flags & FMT_FLAGS_KNOWN;
	if (img->uuid.kind == FMT_UUID_FALLBACK)
		h->flags |= FMT_FLAG_UUID_FALLBACK;
	h->object_format = img->object_format;
	h->address_size = (uint8_t)as;
	h->uuid_kind = img->uuid.kind;
	h->uuid_len = img->uuid.len;
	memcpy(h->uuid, img->uuid.bytes, img->uuid.len <= FMT_UUID_MAX ? img->uuid.len : 0);
	h->machine = img->machine;
	h->machine_sub = img->machine_sub;
	h->object_class = img->object_class;
	h->object_endian = img->object_endian;
	h->object_type = img->object_type;
	h->image_name = img->image_name;
	h->base_address = img->base_address;
}

static int builder_encode(struct table_builder *b, unsigned as)
{
	int rc = builder_strings(b);

	if (rc == 0)
		rc = builder_segments(b);
	if (rc == 0)
		rc = builder_symbols(b, as);
	if (rc == 0 && b->dwarf)
		rc = builder_files_functions(b);
	if (rc == 0 && b->dwarf)
		rc = builder_nodes(b);
	if (rc == 0 && b->dwarf)
		rc = builder_imap(b);
	if (rc == 0 && b->dwarf)
		rc = builder_rows(b);
	if (rc == 0)
		rc = builder_build_info(b);
	if (rc == 0 && b->dwarf)
		rc = builder_file_sources(b);
	return rc;
}

int ix_tables_build(ix_image *img, ix_output *out, char *eb, size_t ebsz)
{
	struct table_builder b;
	fmt_whdr h;
	unsigned as;
	int rc;

	memset(&b, 0, sizeof b);
	b.img = img;
	b.out = out;
	b.dwarf = (img->header_flags & FMT_FLAG_HAS_DWARF) != 0;
	if (!b.dwarf)
		img->header_flags &= ~(uint32_t)FMT_FLAG_PARTIAL;
	if (!img->symbols_reduced)
		ix_symbols_reduce(img);
	symbols_reduce(&img->alt_symbols);
	if (b.dwarf) {
		rc = builder_check_dwarf(img, eb, ebsz);
		if (rc)
			return rc;
		b.imap0 = builder_first_kept(img->imap.p, sizeof(ix_imap), img->imap.n,
					     img->base_address, &b.imap0_addr);
		b.rows0 = builder_first_kept(img->rows.p, sizeof(ix_row), img->rows.n,
					     img->base_address, &b.rows0_addr);
	}
	as = builder_address_size(&b);
	out->address_size = as;
	rc = builder_encode(&b, as);
	if (rc == SYMDB_E_TOO_BIG)
		return fmt_err(eb, ebsz, rc, "an interval table's packed rows pass 4 GiB");
	if (rc)
		return fmt_err(eb, ebsz, rc, "out of memory encoding tables");
	builder_header(img, as, &h);
	return fmt_wplan_build(&out->plan, &h, b.t, b.nt, eb, ebsz);
}

void ix_output_free(ix_output *out)
{
	unsigned k;

	if (!out)
		return;
	for (k = 0; k <= FMT_T_KIND_MAX; k++) {
		free(out->buf[k]);
		out->buf[k] = NULL;
	}
}
