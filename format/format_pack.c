/* SPDX-License-Identifier: MIT */
/*
 * format_pack.c - the packed tables of format 2 (SPEC §7.9): validation of
 * a packed record table's header, and the writer's encoders.
 *
 * The encoders choose each field's frame of reference (the smallest value)
 * and width (the fewest bits holding every value minus it) per table for
 * records, per block of 64 for intervals: a block's addresses, files and
 * lines are close together even where the table's are not.
 */
#include "format_pack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symdb_errors.h"

int fmt_packed_parse(const uint8_t *p, uint64_t length, uint64_t count, unsigned nfields,
                     unsigned wide, fmt_packed *out, const char **why)
{
	uint64_t head = FMT_PK_FIELDS + (uint64_t)nfields * FMT_PK_FIELD_SIZE, sum = 0, room;

	memset(out, 0, sizeof *out);
	if (length < head + FMT_PK_TAIL) {
		*why = "shorter than its header";
		return -1;
	}
	if (fmt_be32(p + FMT_PK_FIELD_COUNT) != nfields) {
		*why = "Field_Count is not that of its kind";
		return -1;
	}
	for (unsigned f = 0; f < nfields; f++) {
		const uint8_t *e = p + FMT_PK_FIELDS + f * FMT_PK_FIELD_SIZE;
		out->w[f] = e[FMT_PK_F_WIDTH];
		if (out->w[f] > (wide >> f & 1 ? FMT_PK_MAX_WIDTH : 32)) {
			*why = "a field is wider than its value";
			return -1;
		}
		out->off[f] = (uint32_t)sum;
		out->base[f] = fmt_be64(e + FMT_PK_F_BASE);
		sum += out->w[f];
	}
	/* SPEC §13: u32 indexes.  Also bounds a table of zero-width records,
	 * which no Length limits, so that the verifier's scan ends. */
	if (count > FMT_NONE - 1) {
		*why = "Count above 2^32 - 2 records";
		return -1;
	}
	out->bits = fmt_be32(p + FMT_PK_RECORD_BITS);
	if (out->bits != sum) {
		*why = "Record_Bits is not the sum of the widths";
		return -1;
	}
	/* count x bits / 8 must fit in what follows the header: compare by
	 * division, the product may not fit in 64 bits. */
	room = length - head - FMT_PK_TAIL;
	if (sum && count > room / sum * 8 + (room % sum * 8) / sum) {
		*why = "Length too short for Count records";
		return -1;
	}
	out->rec = p + head;
	out->count = count;
	out->nfields = nfields;
	return 0;
}

/* Bits needed for v. */
static unsigned width_of(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

/* OR the w-bit value v into the zeroed string at p, at bit `bit`. */
static void put_bits(uint8_t *p, uint64_t bit, unsigned w, uint64_t v)
{
	if (w > 56) {
		put_bits(p, bit, w - 32, v >> 32);
		put_bits(p, bit + w - 32, 32, v & 0xFFFFFFFFu);
		return;
	}
	if (w == 0)
		return;
	uint64_t x = fmt_be64(p + (bit >> 3));
	x |= (v << (64 - w)) >> (bit & 7);
	fmt_put64(p + (bit >> 3), x);
}

/* What a field stores for value v (SPEC §7.9 frame of reference). */
static uint64_t stored(uint64_t v, uint64_t base, int nullable)
{
	if (nullable)
		return v == FMT_NONE ? 0 : v - base + 1;
	return v - base;
}

int fmt_pack_records(unsigned nfields, unsigned nullable, uint64_t count, fmt_pack_get_fn get,
                     void *arg, uint8_t **out, uint64_t *len)
{
	uint64_t lo[FMT_PK_MAX_FIELDS], hi[FMT_PK_MAX_FIELDS], v[FMT_PK_MAX_FIELDS];
	uint64_t head = FMT_PK_FIELDS + (uint64_t)nfields * FMT_PK_FIELD_SIZE, bits = 0, off;
	unsigned w[FMT_PK_MAX_FIELDS], f, seen = 0;
	uint8_t *p;

	for (f = 0; f < nfields; f++) {
		lo[f] = UINT64_MAX;
		hi[f] = 0;
	}
	for (uint64_t i = 0; i < count; i++) {
		get(i, v, arg);
		for (f = 0; f < nfields; f++) {
			if ((nullable >> f & 1) && v[f] == FMT_NONE)
				continue;
			lo[f] = v[f] < lo[f] ? v[f] : lo[f];
			hi[f] = v[f] > hi[f] ? v[f] : hi[f];
			seen |= 1u << f;
		}
	}
	for (f = 0; f < nfields; f++) {
		if (!(seen >> f & 1)) /* no value (all NONE, or no records): Base 0, width 0 */
			lo[f] = 0;
		w[f] = seen >> f & 1 ? width_of(stored(hi[f], lo[f], nullable >> f & 1)) : 0;
		bits += w[f];
	}
	*len = head + (count * bits + 7) / 8 + FMT_PK_TAIL;
	p = calloc(1, (size_t)*len);
	if (!p)
		return -ENOMEM;
	fmt_put32(p + FMT_PK_FIELD_COUNT, nfields);
	fmt_put32(p + FMT_PK_RECORD_BITS, (uint32_t)bits);
	for (f = 0; f < nfields; f++) {
		p[FMT_PK_FIELDS + f * FMT_PK_FIELD_SIZE + FMT_PK_F_WIDTH] = (uint8_t)w[f];
		fmt_put64(p + FMT_PK_FIELDS + f * FMT_PK_FIELD_SIZE + FMT_PK_F_BASE, lo[f]);
	}
	for (uint64_t i = 0; i < count; i++) {
		get(i, v, arg);
		off = i * bits;
		for (f = 0; f < nfields; f++) {
			put_bits(p + head, off, w[f], stored(v[f], lo[f], nullable >> f & 1));
			off += w[f];
		}
	}
	*out = p;
	return 0;
}

/* A growing rows buffer, zeroed as it grows (put_bits ORs). */
typedef struct rows_buf {
	uint8_t *p;
	uint64_t len, cap;
} rows_buf;

static int rows_reserve(rows_buf *b, uint64_t need)
{
	if (need <= b->cap)
		return 0;
	uint64_t cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	uint8_t *n = realloc(b->p, (size_t)cap);
	if (!n)
		return -ENOMEM;
	memset(n + b->cap, 0, (size_t)(cap - b->cap));
	b->p = n;
	b->cap = cap;
	return 0;
}

/* Columns of one block: the value of column c in row r, before Base. */
static uint64_t brow_col(const fmt_brow *r, unsigned c, uint64_t first)
{
	switch (c) {
	case FMT_BC_DELTA: return r->addr - first;
	case FMT_BC_INDEX: return r->index;
	case FMT_BC_LINE: return r->line;
	case FMT_BC_COLUMN: return r->column;
	default: return r->discr;
	}
}

/* Does column c of row r take part?  A line row without a file has no line
 * (SPEC §7.9.2): its Line, Column and Discriminator are stored as 0, and
 * leave the Bases and widths to the rows that have one. */
static int brow_has(const fmt_brow *r, unsigned c)
{
	return c <= FMT_BC_INDEX || r->index != FMT_NONE;
}

/* Encode the n <= 64 rows of one block at b->len, and its record at rec. */
static int pack_block(const fmt_brow *rw, unsigned n, unsigned ncols, uint8_t *rec, rows_buf *b)
{
	uint64_t base[FMT_BC_COUNT] = { 0 }, hi[FMT_BC_COUNT] = { 0 }, bits = 0, pos;
	unsigned w[FMT_BC_COUNT] = { 0 }, c, r, seen = 0;

	/* Delta and Discriminator have Base 0; Index (nullable), Line and
	 * Column the block's smallest value. */
	base[FMT_BC_INDEX] = base[FMT_BC_LINE] = base[FMT_BC_COLUMN] = UINT32_MAX;
	for (r = 0; r < n; r++)
		for (c = 0; c < ncols; c++) {
			uint64_t v = brow_col(&rw[r], c, rw[0].addr);
			if ((c == FMT_BC_INDEX && v == FMT_NONE) || !brow_has(&rw[r], c))
				continue;
			if (c != FMT_BC_DELTA && c != FMT_BC_DISCR && v < base[c])
				base[c] = v;
			hi[c] = v > hi[c] ? v : hi[c];
			seen |= 1u << c;
		}
	for (c = 0; c < FMT_BC_COUNT; c++) {
		if (!(seen >> c & 1)) /* all NONE, or not a column of this table: Base 0, width 0 */
			base[c] = 0;
		w[c] = seen >> c & 1 ? width_of(stored(hi[c], base[c], c == FMT_BC_INDEX)) : 0;
		bits += (uint64_t)n * w[c];
	}
	if (b->len > UINT32_MAX)
		return SYMDB_E_TOO_BIG;
	if (rows_reserve(b, b->len + (bits + 7) / 8 + FMT_PK_TAIL))
		return -ENOMEM;
	fmt_put64(rec + FMT_BLK_FIRST, rw[0].addr);
	fmt_put32(rec + FMT_BLK_ROWS_OFFSET, (uint32_t)b->len);
	fmt_put32(rec + FMT_BLK_BASE_INDEX, (uint32_t)base[FMT_BC_INDEX]);
	fmt_put32(rec + FMT_BLK_BASE_LINE, (uint32_t)base[FMT_BC_LINE]);
	fmt_put32(rec + FMT_BLK_BASE_COLUMN, (uint32_t)base[FMT_BC_COLUMN]);
	for (c = 0; c < FMT_BC_COUNT; c++)
		rec[FMT_BLK_WIDTHS + c] = (uint8_t)w[c];
	memset(rec + FMT_BLK_RESERVED, 0, 3);
	pos = 0;
	for (c = 0; c < ncols; c++)
		for (r = 0; r < n; r++, pos += w[c])
			if (brow_has(&rw[r], c))
				put_bits(b->p + b->len, pos, w[c],
				         stored(brow_col(&rw[r], c, rw[0].addr), base[c],
				                c == FMT_BC_INDEX));
	b->len += (bits + 7) / 8;
	return 0;
}

int fmt_pack_blocks(uint64_t n, int lines, fmt_brow_get_fn get, void *arg, uint8_t **blk,
                    uint8_t **rows, uint64_t *rows_len)
{
	uint64_t nblk = (n + FMT_BLK_ROWS - 1) / FMT_BLK_ROWS;
	fmt_brow rw[FMT_BLK_ROWS];
	rows_buf b = { 0 };
	uint8_t *col = malloc(nblk ? (size_t)(nblk * FMT_BLK_SIZE) : 1);
	int rc = col ? rows_reserve(&b, FMT_PK_TAIL) : -ENOMEM;

	for (uint64_t k = 0; rc == 0 && k < nblk; k++) {
		unsigned m = n - k * FMT_BLK_ROWS < FMT_BLK_ROWS ? (unsigned)(n - k * FMT_BLK_ROWS)
		                                                : FMT_BLK_ROWS;
		for (unsigned r = 0; r < m; r++) {
			memset(&rw[r], 0, sizeof rw[r]);
			get(k * FMT_BLK_ROWS + r, &rw[r], arg);
		}
		rc = pack_block(rw, m, lines ? FMT_BC_COUNT : FMT_BC_INDEX + 1,
		                col + k * FMT_BLK_SIZE, &b);
	}
	if (rc == 0 && b.len + FMT_PK_TAIL > (uint64_t)UINT32_MAX + 1)
		rc = SYMDB_E_TOO_BIG;
	if (rc) {
		free(col);
		free(b.p);
		return rc;
	}
	*blk = col;
	*rows = b.p;
	*rows_len = b.len + FMT_PK_TAIL; /* rows_reserve zeroed the tail */
	return 0;
}
