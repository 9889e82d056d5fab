/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_units.c - one shard's units, one after the other: each unit's base
 * address, line table, unit ranges and DIE walk, flattened into its
 * pieces; and the file tables of units met through references.
 */
#include <stdlib.h>
#include <string.h>

#include "ix_dwarf_split.h"
#include "ix_dwarf_walk.h"

typedef ix_unit unit;

/* ---- units ---------------------------------------------------------------- */

static int add_unit_ranges(unit_walk *u, Dwarf_Die cu_die)
{
	ix_shard *x = u->x;
	rangeset rs = { .n = 0 };
	int rc = 0;
	if (ix_dwarf_die_ranges(u, cu_die, &rs)) { /* as DWARFDebugAranges: no ranges */
		rs.n = 0;
		u->bad = 1;
	}
	for (size_t i = 0; i < rs.n && !rc; i++) {
		if (x->nur == x->capur) {
			size_t cap = x->capur ? 2 * x->capur : 256;
			ix_urange *n = realloc(x->ur, cap * sizeof(*n));
			if (!n) {
				rc = -1;
				break;
			}
			x->ur = n;
			x->capur = cap;
		}
		ix_urange *r = &x->ur[x->nur++];
		rangeset_get(&rs, i, &r->lo, &r->hi);
		r->unit = u->unit;
	}
	rangeset_free(&rs);
	return rc;
}

/* Parses the line table of the unit whose DIE is cu_die into t.  Returns 0,
 * or 1 when it is malformed (t is then empty). */
static int parse_lines(ix_shard *x, Dwarf_Die cu_die, uint8_t addr_size, ix_line_table *t)
{
	uint64_t stmt;
	memset(t, 0, sizeof(*t));
	ix_vec_init(&t->pieces, sizeof(ix_piece));
	if (!ix_dwarf_attr_secoff(x, cu_die, DW_AT_stmt_list, &stmt, NULL))
		return 0;
	ix_line_ctx lc = {
		.line = ix_sections_find(x->secs, ".debug_line"),
		.str = ix_sections_find(x->secs, ".debug_str"),
		.line_str = ix_sections_find(x->secs, ".debug_line_str"),
		.offset = stmt,
		.addr_size = addr_size,
		.little = x->secs->little,
		.comp_dir = ix_dwarf_attr_string(x, cu_die, DW_AT_comp_dir),
		.img = x->img,
		.files_index = &x->files_idx,
		.reloc = x->secs->reloc,
	};
	char why[200];
	if (ix_line_parse(&lc, t, why, sizeof(why))) {
		ix_line_free(t);
		ix_vec_init(&t->pieces, sizeof(ix_piece));
		return 1;
	}
	return 0;
}

/* A broken line table loses the unit's lines, not its frames
 * (llvm-symbolizer prints ??:0 there too). */
static int read_unit_lines(unit_walk *u, Dwarf_Die cu_die)
{
	return parse_lines(u->x, cu_die, u->addr_size, &u->lt);
}

/* FILES index of file `idx` of the unit whose DIE is at cu_off, parsing
 * (once) the file table of a unit other than the one being walked. */
uint32_t ix_dwarf_foreign_file(ix_shard *x, uint64_t cu_off, uint64_t idx)
{
	uint32_t slot = ix_u64map_get(&x->lt_idx, cu_off);
	if (slot == FMT_NONE) {
		if (x->nforeign == x->capforeign) {
			size_t cap = x->capforeign ? 2 * x->capforeign : 16;
			ix_line_table *n = realloc(x->foreign, cap * sizeof(*n));
			if (!n)
				return FMT_NONE;
			x->foreign = n;
			x->capforeign = cap;
		}
		ix_line_table *t = &x->foreign[x->nforeign];
		Dwarf_Die cu = NULL;
		Dwarf_Error e = NULL;
		Dwarf_Half asz = 8;
		memset(t, 0, sizeof(*t));
		ix_vec_init(&t->pieces, sizeof(ix_piece));
		if (dwarf_offdie_b(((Dwarf_Debug)x->dbg), cu_off, 1, &cu, &e) == DW_DLV_OK) {
			if (dwarf_get_die_address_size(cu, &asz, &e) != DW_DLV_OK)
				drop_err(x, &e);
			parse_lines(x, cu, (uint8_t)asz, t);
			dwarf_dealloc_die(cu);
		}
		drop_err(x, &e);
		ix_vec_free(&t->pieces); /* only the file table is wanted */
		slot = (uint32_t)x->nforeign++;
		if (ix_u64map_put(&x->lt_idx, cu_off, slot))
			return FMT_NONE;
	}
	return ix_line_file(&x->foreign[slot], idx);
}

/* ---- split units ---------------------------------------------------------- */

/* The skeleton's DWO id: the unit header's (DWARF 5), else its
 * DW_AT_GNU_dwo_id; 0 when it has none (LLVM then reads no split unit). */
static int skeleton_id(unit_walk *u, Dwarf_Die cu_die, uint64_t *id)
{
	ix_shard *x = u->x;
	if (x->unit_type == DW_UT_skeleton) {
		*id = x->unit_sig;
		return 1;
	}
	return ix_dwarf_attr_secoff(x, cu_die, DW_AT_GNU_dwo_id, id, NULL);
}

/* The first unit of the split file whose DWO id is `id` (LLVM's
 * getDWOCompileUnitForHash), or NULL. */
static Dwarf_Die split_unit(ix_shard *x, Dwarf_Debug dbg, uint64_t id, uint64_t *end)
{
	for (;;) {
		Dwarf_Unsigned len = 0, abbr = 0, toff = 0, next = 0;
		Dwarf_Half ver = 0, asz = 0, lsz = 0, esz = 0, utype = 0;
		Dwarf_Sig8 sig;
		Dwarf_Error e = NULL;
		Dwarf_Die cu = NULL;
		memset(&sig, 0, sizeof(sig));
		int r = dwarf_next_cu_header_d(dbg, 1, &len, &ver, &abbr, &asz, &lsz, &esz, &sig,
					       &toff, &next, &utype, &e);
		if (r != DW_DLV_OK) {
			if (e)
				dwarf_dealloc_error(dbg, e);
			return NULL;
		}
		if (dwarf_siblingof_b(dbg, NULL, 1, &cu, &e) != DW_DLV_OK) {
			if (e)
				dwarf_dealloc_error(dbg, e);
			continue;
		}
		uint64_t have = 0;
		int ok = 0;
		if (utype == DW_UT_split_compile) {
			memcpy(&have, sig.signature, 8);
			ok = 1;
		} else {
			void *keep = x->dbg;
			x->dbg = dbg;
			ok = ix_dwarf_attr_secoff(x, cu, DW_AT_GNU_dwo_id, &have, NULL);
			x->dbg = keep;
		}
		if (ok && have == id) {
			*end = next;
			return cu;
		}
		dwarf_dealloc_die(cu);
	}
}

/* What the walk of a split unit changes in u and x, to put back after. */
typedef struct split_saved {
	void *dbg;
	ix_ranges_ctx rng;
	uint64_t cu_die_off, cu_end;
	ix_u64map ab_code;
} split_saved;

/* The ranges of a split unit: DWARF 5 lists in its own .debug_rnglists.dwo
 * (base: the header's end, LLVM's DWARFListTableHeader::getHeaderSize);
 * DWARF 4 ones in the skeleton's .debug_ranges at DW_AT_GNU_ranges_base.
 * Addresses are the skeleton's .debug_addr either way. */
static void split_ranges(unit_walk *u, Dwarf_Die skel, const ix_dwo_view *v)
{
	ix_shard *x = u->x;
	if (u->version >= 5) {
		u->rng.rnglists = ix_sections_find(&v->s, ".debug_rnglists.dwo");
		u->rng.rnglists_base = u->rng.offset_size == 8 ? 20 : 12;
		u->rng.has_rnglists_base = 1;
	} else {
		ix_dwarf_attr_secoff(x, skel, DW_AT_GNU_ranges_base, &u->rng.ranges_base, NULL);
		if (!u->rng.has_addr_base)
			u->rng.has_addr_base = ix_dwarf_attr_secoff(x, skel, DW_AT_GNU_addr_base,
								    &u->rng.addr_base, NULL);
	}
}

/* The split unit's DIEs, walked as if they were the skeleton's children
 * (LLVM's getInlinedChainForAddress looks in the DWO unit); its line
 * table stays the skeleton's.  A split file that cannot be read leaves
 * the skeleton's line table alone, as in LLVM.  Returns 1 when the split
 * unit was walked, 0 when there is none to walk, -1 on error. */
static int walk_split(unit_walk *u, Dwarf_Die skel)
{
	ix_shard *x = u->x;
	const char *name = ix_dwarf_attr_string(x, skel, u->version >= 5 ? DW_AT_dwo_name
									: DW_AT_GNU_dwo_name);
	uint64_t id = 0;
	char path[4096];
	if (!x->split || !name || !skeleton_id(u, skel, &id) ||
	    ix_split_path(path, sizeof(path), ix_dwarf_attr_string(x, skel, DW_AT_comp_dir), name))
		return 0;
	ix_dwo_view *v = malloc(sizeof(*v));
	Dwarf_Obj_Access_Interface oai = { NULL, NULL };
	Dwarf_Debug dbg = NULL;
	char why[256];
	if (!v)
		return -1;
	if (ix_split_view(x->split, path, id, u->version, v) ||
	    ix_dwarf_open_dbg(&v->s, &oai, &dbg, why, sizeof(why))) {
		free(v);
		return 0;
	}
	int rc = 0;
	uint64_t end = 0;
	Dwarf_Die cu = split_unit(x, dbg, id, &end);
	if (cu) {
		split_saved sv = { x->dbg, u->rng, u->cu_die_off, u->cu_end, x->ab_code };
		Dwarf_Off cuo = 0;
		Dwarf_Error e = NULL;
		split_ranges(u, skel, v);
		x->dbg = dbg;
		memset(&x->ab_code, 0, sizeof(x->ab_code));
		x->addrx = &u->rng;
		if (dwarf_dieoffset(cu, &cuo, &e) != DW_DLV_OK)
			drop_err(x, &e);
		u->cu_die_off = cuo;
		u->cu_end = end;
		/* LLVM's DWARFUnit::getBaseAddress of the split unit: its own
		 * unit DIE's low_pc, which GCC and clang do not give it; the
		 * skeleton's is not used (offset pairs then start at 0). */
		sub_attrs cd;
		u->rng.has_base = 0;
		u->rng.base = 0;
		if (!ix_dwarf_read_sub_attrs(x, cu, &cd) && cd.has_low) {
			u->rng.base = cd.low;
			u->rng.has_base = 1;
		}
		u->off_tag = 1ull << 63 | (uint64_t)u->unit << 32;
		rc = ix_dwarf_walk_dies(u, cu) < 0 ? -1 : 1;
		dwarf_dealloc_die(cu);
		ix_u64map_free(&x->ab_code);
		x->ab_code = sv.ab_code;
		x->dbg = sv.dbg;
		x->addrx = NULL;
		u->rng = sv.rng;
		u->cu_die_off = sv.cu_die_off;
		u->cu_end = sv.cu_end;
		u->off_tag = 0;
	}
	Dwarf_Error e = NULL;
	dwarf_object_finish(dbg, &e);
	free(v);
	return rc;
}

static int process_unit(ix_shard *x, Dwarf_Die cu_die, uint16_t version, uint8_t offset_size,
			uint32_t idx)
{
	unit_walk u = { .x = x, .unit = idx, .version = version, .cu_end = x->unit_end };
	Dwarf_Half asz = 8;
	Dwarf_Error e = NULL;
	if (dwarf_get_die_address_size(cu_die, &asz, &e) != DW_DLV_OK)
		drop_err(x, &e);
	u.addr_size = (uint8_t)asz;
	Dwarf_Off cuo = 0;
	if (dwarf_dieoffset(cu_die, &cuo, &e) != DW_DLV_OK)
		drop_err(x, &e);
	u.cu_die_off = cuo;
	Dwarf_Addr base;
	if (dwarf_lowpc(cu_die, &base, &e) == DW_DLV_OK) {
		u.base = base;
		u.has_base = 1;
	}
	drop_err(x, &e);
	u.rng = (ix_ranges_ctx){
		.ranges = ix_sections_find(x->secs, ".debug_ranges"),
		.rnglists = ix_sections_find(x->secs, ".debug_rnglists"),
		.addr = ix_sections_find(x->secs, ".debug_addr"),
		.little = x->secs->little,
		.addr_size = u.addr_size,
		.offset_size = offset_size,
		.version = version,
		.base = u.base,
		.has_base = u.has_base,
	};
	u.rng.has_rnglists_base = ix_dwarf_attr_secoff(x, cu_die, DW_AT_rnglists_base, &u.rng.rnglists_base, NULL);
	u.rng.has_addr_base = ix_dwarf_attr_secoff(x, cu_die, DW_AT_addr_base, &u.rng.addr_base, NULL);
	u.bad = read_unit_lines(&u, cu_die);
	int rc = add_unit_ranges(&u, cu_die);
	int ranges_ok = rc == 0;
	/* A skeleton whose split unit was read answers from that unit's DIEs
	 * alone: LLVM 14 searches (DWO ? *DWO : *this), so the copy of the
	 * inlining that clang's -fsplit-dwarf-inlining leaves in the skeleton
	 * (short names, no declaration lines) is read only without the DWO. */
	if (!rc)
		rc = walk_split(&u, cu_die);
	if (!rc)
		rc = ix_dwarf_walk_dies(&u, cu_die) < 0 ? -1 : 0;
	else if (rc == 1)
		rc = 0;
	unit *un = &x->units[idx];
	/* DIEs that cannot be walked (a bad DW_AT_sibling, an unknown form,
	 * nesting past MAX_DEPTH) leave the unit its line table: LLVM reads
	 * .debug_line apart from the DIEs, so its addresses keep file:line,
	 * their names come from the symbol table, without inline frames.
	 * Counted as skipped (PARTIAL).  Function records and inline nodes
	 * the walk added before it failed stay in the image, referred to by
	 * nothing (a few bytes; the unit dropped whole did the same). */
	if (rc < 0 && ranges_ok) {
		ix_diemap_free(&u.dm); /* (leaves it empty) */
		u.bad = 1;
		rc = 0;
	}
	if (!rc)
		rc = ix_diemap_flatten(&u.dm, &un->dies);
	if (!rc) {
		un->lines = u.lt.pieces; /* take ownership */
		ix_vec_init(&u.lt.pieces, sizeof(ix_piece));
	}
	ix_line_free(&u.lt);
	ix_diemap_free(&u.dm);
	return rc ? -1 : u.bad;
}

/*
 * Reads the next unit header with the thread's Dwarf_Debug, whose cursor
 * counts the headers it has read: 0, or 1 when it was past the last unit
 * (libdwarf then answers DW_DLV_NO_ENTRY and starts over at unit 0: the
 * cursor is 0 again), or -1.  Moving through the headers, rather than
 * finding each unit DIE by its offset, keeps libdwarf's current unit up to
 * date: its search for the unit of a DIE offset (every DW_AT_abstract_origin
 * followed) starts there, and at the first unit otherwise, which made the
 * walk of libc's 2063 units quadratic.
 */
static int next_header(ix_shard *x, Dwarf_Half *ver, Dwarf_Half *lsz)
{
	Dwarf_Unsigned len = 0, abbr = 0, toff = 0, next = 0;
	Dwarf_Half asz = 0, esz = 0, utype = 0;
	Dwarf_Sig8 sig;
	Dwarf_Error e = NULL;
	memset(&sig, 0, sizeof(sig));
	int r = dwarf_next_cu_header_d(((Dwarf_Debug)x->dbg), 1, &len, ver, &abbr, &asz, lsz,
				       &esz, &sig, &toff, &next, &utype, &e);
	drop_err(x, &e);
	if (r == DW_DLV_OK) {
		memcpy(&x->unit_sig, sig.signature, 8);
		x->unit_type = utype;
		x->unit_end = next;
		(*x->cursor)++;
		return 0;
	}
	if (r != DW_DLV_NO_ENTRY)
		return -1; /* counted by the header pass (ix_dwarf.c) */
	*x->cursor = 0;
	return 1;
}

/* Walks the units [first, last), moving the thread's cursor there first. */
void ix_dwarf_walk(ix_shard *x)
{
	Dwarf_Half ver = 0, lsz = 0;
	while (*x->cursor != x->first)
		if (next_header(x, &ver, &lsz) < 0)
			return;
	for (size_t idx = x->first; idx < x->last; idx++) {
		if (next_header(x, &ver, &lsz)) /* idx exists: never past the end */
			return;
		Dwarf_Error e = NULL;
		Dwarf_Die cu = NULL;
		if (dwarf_siblingof_b(((Dwarf_Debug)x->dbg), NULL, 1, &cu, &e) != DW_DLV_OK) {
			drop_err(x, &e);
			x->skipped++;
			continue;
		}
		/* 1: indexed, but its line table was malformed (counted as
		 * skipped so PARTIAL is set); -1: dropped. */
		int rc = process_unit(x, cu, ver, (uint8_t)(lsz == 8 ? 8 : 4), (uint32_t)idx);
		dwarf_dealloc_die(cu);
		if (rc)
			x->skipped++;
		if (rc >= 0)
			x->indexed++;
		if (rc < 0) {
			ix_vec_free(&x->units[idx].lines);
			ix_vec_free(&x->units[idx].dies);
		}
	}
}
