/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_ranges.c - reads DW_AT_ranges lists: DWARF 2-4 .debug_ranges
 * and DWARF 5 .debug_rnglists (§2.17.3, §7.25), resolving DW_FORM_rnglistx
 * through DW_AT_rnglists_base and addrx entries through .debug_addr.
 *
 * symdb reads these sections itself instead of through libdwarf: libdwarf
 * 20210528 frees memory twice in dwarf_load_rnglists on some malformed
 * .debug_rnglists headers (found by flipping bytes), and a hostile file must
 * never crash the indexer.  The semantics follow LLVM 14
 * (DWARFDebugRangeList / DWARFDebugRnglist::getAbsoluteRanges): base
 * address selection entries, offset pairs relative to the current base
 * (the unit's DW_AT_low_pc by default), and DWARF 5 entries whose start is
 * the tombstone (all ones, DWARF 6 proposal used by lld) dropped.
 */
#include <string.h>

#include "ix_dwarf_cursor.h"
#include "ix_dwarf_internal.h"

static int cur_at(ix_cursor *c, const ix_debug_section *s, uint64_t off, int little)
{
	if (!s || off >= s->size)
		return -1;
	c->p = s->data + off;
	c->end = s->data + s->size;
	c->little = little;
	c->bad = 0;
	return 0;
}

/* Entry `idx` of .debug_addr for this unit; 0 when there is none (LLVM's
 * LookupPooledAddress failing). */
static uint64_t pooled(const ix_ranges_ctx *c, uint64_t idx, int *ok)
{
	ix_cursor r;
	uint64_t off = c->addr_base + idx * c->addr_size;
	*ok = 0;
	if (!c->has_addr_base || idx > UINT64_MAX / 16 || cur_at(&r, c->addr, off, c->little))
		return 0;
	uint64_t v = ix_cursor_n(&r, c->addr_size);
	*ok = !r.bad;
	return r.bad ? 0 : v;
}

static int ranges_v4(const ix_ranges_ctx *c, uint64_t off, ix_range_cb add, void *arg)
{
	ix_cursor r;
	if (cur_at(&r, c->ranges, off, c->little))
		return -1;
	uint64_t all = c->addr_size == 4 ? 0xffffffffu : UINT64_MAX;
	uint64_t base = c->base;
	int has_base = c->has_base;
	for (;;) {
		uint64_t lo = ix_cursor_n(&r, c->addr_size), hi = ix_cursor_n(&r, c->addr_size);
		if (r.bad)
			return -1;
		if (lo == 0 && hi == 0)
			return 0;
		if (lo == all) { /* base address selection entry */
			base = hi;
			has_base = 1;
			continue;
		}
		if (has_base) {
			lo += base;
			hi += base;
		}
		if (add(arg, lo, hi))
			return -1;
	}
}

/* DW_FORM_rnglistx: the offsets table after the header, relative to
 * DW_AT_rnglists_base (DWARF 5 §7.28). */
static int rnglistx_offset(const ix_ranges_ctx *c, uint64_t idx, uint64_t *off)
{
	ix_cursor r;
	uint64_t base = c->has_rnglists_base ? c->rnglists_base : 12;
	if (idx > UINT64_MAX / 16 || cur_at(&r, c->rnglists, base + idx * c->offset_size, c->little))
		return -1;
	uint64_t rel = ix_cursor_n(&r, c->offset_size);
	if (r.bad)
		return -1;
	*off = base + rel;
	return 0;
}

static int ranges_v5(const ix_ranges_ctx *c, uint64_t off, ix_range_cb add, void *arg)
{
	ix_cursor r;
	if (cur_at(&r, c->rnglists, off, c->little))
		return -1;
	uint64_t tomb = c->addr_size == 4 ? 0xffffffffu : UINT64_MAX;
	uint64_t base = c->base;
	int has_base = c->has_base, ok;
	for (;;) {
		uint8_t kind = (uint8_t)ix_cursor_n(&r, 1);
		uint64_t lo = 0, hi = 0, a, b;
		if (r.bad)
			return -1;
		switch (kind) {
		case 0: /* DW_RLE_end_of_list */
			return 0;
		case 1: /* DW_RLE_base_addressx */
			a = ix_cursor_uleb(&r);
			base = pooled(c, a, &ok);
			if (!ok)
				base = a; /* as LLVM: the index itself */
			has_base = 1;
			continue;
		case 2: /* DW_RLE_startx_endx */
			a = ix_cursor_uleb(&r);
			b = ix_cursor_uleb(&r);
			lo = pooled(c, a, &ok);
			hi = pooled(c, b, &ok);
			break;
		case 3: /* DW_RLE_startx_length */
			a = ix_cursor_uleb(&r);
			b = ix_cursor_uleb(&r);
			lo = pooled(c, a, &ok);
			hi = lo + b;
			break;
		case 4: /* DW_RLE_offset_pair */
			lo = ix_cursor_uleb(&r);
			hi = ix_cursor_uleb(&r);
			if (has_base) {
				lo += base;
				hi += base;
			}
			break;
		case 5: /* DW_RLE_base_address */
			base = ix_cursor_n(&r, c->addr_size);
			has_base = 1;
			continue;
		case 6: /* DW_RLE_start_end */
			lo = ix_cursor_n(&r, c->addr_size);
			hi = ix_cursor_n(&r, c->addr_size);
			break;
		case 7: /* DW_RLE_start_length */
			lo = ix_cursor_n(&r, c->addr_size);
			hi = lo + ix_cursor_uleb(&r);
			break;
		default:
			return -1;
		}
		if (r.bad)
			return -1;
		if (lo != tomb && add(arg, lo, hi))
			return -1;
	}
}

int ix_ranges_read(const ix_ranges_ctx *c, uint64_t value, int rnglistx, ix_range_cb add,
		   void *arg)
{
	if (c->addr_size != 4 && c->addr_size != 8)
		return -1;
	if (rnglistx) {
		uint64_t off;
		if (rnglistx_offset(c, value, &off))
			return -1;
		return ranges_v5(c, off, add, arg);
	}
	if (c->version >= 5)
		return ranges_v5(c, value, add, arg);
	return ranges_v4(c, value + c->ranges_base, add, arg);
}

int ix_addr_entry(const ix_ranges_ctx *c, uint64_t idx, uint64_t *v)
{
	int ok;
	*v = pooled(c, idx, &ok);
	return ok;
}
