/* SPDX-License-Identifier: MIT */
/*
 * format_pack.h - the bit-packed DWARF tables of format 2 (SPEC §7.9):
 * reading a field (one or two big-endian 64-bit loads), the parsed header
 * of a packed record table, one decoded block of an interval table, and the
 * writer's encoders.
 *
 * Reads are in bounds by construction, not by checks at each load: a packed
 * record table's header is validated at open (fmt_packed_parse), and a
 * block is validated when it is decoded (fmt_block_get), so every load the
 * inline readers below make for a record below Count or a row of a valid
 * block lies inside its table (SPEC §7.9: 8 bytes follow every string).
 *
 * Internal: not installed.
 */
#ifndef SYMDB_FORMAT_PACK_H
#define SYMDB_FORMAT_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "symdb_endian.h"
#include "symdb_format.h"

#define FMT_HIDDEN __attribute__((visibility("hidden")))

/* The w-bit field (w <= 56) at bit `bit` of the string at p (SPEC §7.9:
 * most significant bit first).  The double shift makes w == 0 give 0. */
static inline uint64_t fmt_bits56(const uint8_t *p, uint64_t bit, unsigned w)
{
	uint64_t x = fmt_be64(p + (bit >> 3));

	return (x << (bit & 7)) >> (63 - w) >> 1;
}

/* Any field of up to 64 bits: wider than 56 are two loads (first w - 32
 * bits, then 32). */
static inline uint64_t fmt_bits(const uint8_t *p, uint64_t bit, unsigned w)
{
	if (__builtin_expect(w > 56, 0))
		return fmt_bits56(p, bit, w - 32) << 32 | fmt_bits56(p, bit + w - 32, 32);
	return fmt_bits56(p, bit, w);
}

/* A decoded u64 index as a u32 one, anything past the u32 range out of
 * range of every table (SPEC §13: at most 2^32 - 2 records). */
static inline uint32_t fmt_index32(uint64_t v)
{
	return v < FMT_NONE ? (uint32_t)v : FMT_NONE - 1;
}

/* A nullable field (SPEC §7.9): stored 0 is NONE. */
static inline uint32_t fmt_nullable(uint64_t base, uint64_t stored)
{
	return stored ? fmt_index32(base + stored - 1) : FMT_NONE;
}

/* ---- §7.9.1 packed record tables ---------------------------------------- */

typedef struct fmt_packed {
	const uint8_t *rec;   /* the records' bit string; NULL when absent */
	uint64_t count;
	uint32_t bits;        /* Record_Bits */
	unsigned nfields;
	uint8_t w[FMT_PK_MAX_FIELDS];
	uint32_t off[FMT_PK_MAX_FIELDS];  /* bit offset of each field in a record */
	uint64_t base[FMT_PK_MAX_FIELDS];
} fmt_packed;

/* Field f of record i < count, Base added. */
static inline uint64_t fmt_packed_get(const fmt_packed *t, uint64_t i, unsigned f)
{
	return t->base[f] + fmt_bits(t->rec, i * t->bits + t->off[f], t->w[f]);
}

/* A u32 field f (width <= 32, checked at open) of record i, Base added:
 * one load. */
static inline uint32_t fmt_packed_get32(const fmt_packed *t, uint64_t i, unsigned f)
{
	return (uint32_t)(t->base[f] + fmt_bits56(t->rec, i * t->bits + t->off[f], t->w[f]));
}

/* A nullable field f of record i: a u32 index or FMT_NONE. */
static inline uint32_t fmt_packed_index(const fmt_packed *t, uint64_t i, unsigned f)
{
	return fmt_nullable(t->base[f], fmt_bits56(t->rec, i * t->bits + t->off[f], t->w[f]));
}

/* Parse and validate the header of a packed record table of `length` bytes
 * at p holding `count` records of `nfields` fields (SPEC §7.9.1): Field_Count,
 * widths <= 64 (<= 32 but for the fields whose bit is set in `wide`),
 * Record_Bits their sum, Length enough for the records and the 8 bytes
 * after.  O(nfields).  Returns 0 or -1 with *why set. */
FMT_HIDDEN int fmt_packed_parse(const uint8_t *p, uint64_t length, uint64_t count,
                                unsigned nfields, unsigned wide, fmt_packed *out,
                                const char **why);

/* ---- §7.9.2 block interval tables ---------------------------------------- */

typedef struct fmt_block {
	const uint8_t *bits;  /* the block's bit string */
	uint64_t first;       /* First_Address */
	unsigned n;           /* its rows: 64, fewer in the last block */
	uint8_t w[FMT_BC_COUNT];
	uint64_t col[FMT_BC_COUNT]; /* bit where each column starts */
	uint32_t base_index, base_line, base_column;
} fmt_block;

/* Decode block k of a block column `blk` (nblocks = ceil(nrows / 64)
 * records) over the rows table rows[0, rows_len): Width_Delta at most 64,
 * the others at most 32, and its string with 8 bytes after it inside the
 * rows table.  Returns 0, or -1 when the block is damaged (nothing of it may
 * then be read). */
static inline int fmt_block_get(const uint8_t *blk, const uint8_t *rows, uint64_t rows_len,
                                uint64_t nrows, uint64_t k, fmt_block *b)
{
	const uint8_t *r = blk + k * FMT_BLK_SIZE;
	uint64_t off = fmt_be32(r + FMT_BLK_ROWS_OFFSET), bits = 0, left = nrows - k * FMT_BLK_ROWS;

	b->n = left < FMT_BLK_ROWS ? (unsigned)left : FMT_BLK_ROWS;
	for (unsigned c = 0; c < FMT_BC_COUNT; c++) {
		b->w[c] = r[FMT_BLK_WIDTHS + c];
		if (b->w[c] > (c == FMT_BC_DELTA ? FMT_PK_MAX_WIDTH : 32))
			return -1;
		b->col[c] = bits;
		bits += (uint64_t)b->n * b->w[c];
	}
	if (off > rows_len || rows_len - off < (bits + 7) / 8 + FMT_PK_TAIL)
		return -1;
	b->bits = rows + off;
	b->first = fmt_be64(r + FMT_BLK_FIRST);
	b->base_index = fmt_be32(r + FMT_BLK_BASE_INDEX);
	b->base_line = fmt_be32(r + FMT_BLK_BASE_LINE);
	b->base_column = fmt_be32(r + FMT_BLK_BASE_COLUMN);
	return 0;
}

/* Column c of row r < b->n, as stored (no Base). */
static inline uint64_t fmt_block_raw(const fmt_block *b, unsigned c, unsigned r)
{
	if (c != FMT_BC_DELTA) /* at most 32 bits: one load */
		return fmt_bits56(b->bits, b->col[c] + (uint64_t)r * b->w[c], b->w[c]);
	return fmt_bits(b->bits, b->col[c] + (uint64_t)r * b->w[c], b->w[c]);
}

/* The last row r of the block whose start First_Address + Delta[r] is <= the
 * offset o (o >= First_Address): a bisect of the Deltas without branches.
 * Row 0's Delta is 0 in a valid file; in a damaged one the answer is a row of
 * the block all the same. */
static inline unsigned fmt_block_find(const fmt_block *b, uint64_t o)
{
	uint64_t d = o - b->first;
	unsigned lo = 0, len = b->n;

	while (len > 1) {
		unsigned half = len / 2;
		lo = fmt_block_raw(b, FMT_BC_DELTA, lo + half) <= d ? lo + half : lo;
		len -= half;
	}
	return lo;
}

/* ---- writer -------------------------------------------------------------- */

/* Fill vals[0, nfields) with record i's values (nullable fields: an index
 * or FMT_NONE). */
typedef void (*fmt_pack_get_fn)(uint64_t i, uint64_t *vals, void *arg);

/* Encode `count` records of `nfields` fields (bit f of `nullable` set for a
 * nullable field) as a packed record table (SPEC §7.9.1): two passes over
 * get, one for bases and widths, one to write.  *out is malloc'ed, *len
 * bytes.  Returns 0 or -ENOMEM. */
FMT_HIDDEN int fmt_pack_records(unsigned nfields, unsigned nullable, uint64_t count,
                                fmt_pack_get_fn get, void *arg, uint8_t **out, uint64_t *len);

/* One interval of a block interval table, as the writer gives it. */
typedef struct fmt_brow {
	uint64_t addr;        /* offset from Base_Address, strictly ascending */
	uint32_t index;       /* node or FILES index, or FMT_NONE */
	uint32_t line, column, discr; /* line table only */
} fmt_brow;
typedef void (*fmt_brow_get_fn)(uint64_t i, fmt_brow *row, void *arg);

/* Encode n intervals as a block column (*blk, ceil(n/64) x 32 bytes) and a
 * rows table (*rows, *rows_len bytes), SPEC §7.9.2; `lines` selects the
 * line table's five columns (else the inline table's two).  Returns 0,
 * -ENOMEM, or SYMDB_E_TOO_BIG when the rows pass 4 GiB. */
FMT_HIDDEN int fmt_pack_blocks(uint64_t n, int lines, fmt_brow_get_fn get, void *arg,
                               uint8_t **blk, uint8_t **rows, uint64_t *rows_len);

#endif /* SYMDB_FORMAT_PACK_H */
