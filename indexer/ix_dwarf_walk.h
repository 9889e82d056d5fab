/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_walk.h - what the files of the DWARF walk share (internal).
 *
 * ix_dwarf.c opens libdwarf over our sections and cuts the units into
 * shards; ix_dwarf_units.c walks a shard unit by unit; ix_dwarf_dies.c walks
 * one unit's DIEs into its AddrDieMap; ix_dwarf_names.c makes the FUNCTIONS
 * records (LLVM's findRecursively); ix_dwarf_attrs.c reads attributes and
 * address ranges; ix_dwarf_assemble.c cuts every unit's pieces to the unit
 * ranges and fills the image's tables.  See ix_dwarf.c for the model.
 */
#ifndef SYMDB_IX_DWARF_WALK_H
#define SYMDB_IX_DWARF_WALK_H

#include <stdint.h>
#include <stdlib.h>

#include "libdwarf.h"
#include "dwarf.h"

#include "ix_dwarf_internal.h"
#include "ix_dwarf_par.h"


/* What the walk reads of a subroutine DIE, in one dwarf_attrlist pass
 * (each the first occurrence, decoded as dwarf_lowpc, dwarf_highpc_b,
 * dwarf_formudata/formsdata and dwarf_global_formref decode it). */
typedef struct sub_attrs {
	uint64_t low, high, ranges, origin;
	uint64_t sibling; /* DW_AT_sibling: the next sibling's section offset */
	Dwarf_Unsigned call_file, call_line, call_col, discr;
	uint32_t seen; /* SUB_* bits */
	uint8_t has_low, has_high, high_const, has_ranges, ranges_x, has_origin;
	uint8_t has_name, has_link;
	uint8_t sib; /* SIB_* */
} sub_attrs;

/* What the walk knows of a DIE's DW_AT_sibling, which GCC gives every DIE
 * with children but its parent's last (clang gives none). */
enum {
	SIB_UNREAD, /* not looked at yet */
	SIB_NONE,   /* none, or DW_FORM_ref_addr, which libdwarf ignores */
	SIB_AT,     /* a unit-local reference: the walk may jump there */
	SIB_BAD,    /* one libdwarf refuses or cannot read: leave it to libdwarf */
};

enum {
	SUB_LOW = 1 << 0, SUB_HIGH = 1 << 1, SUB_RANGES = 1 << 2, SUB_ORIGIN = 1 << 3,
	SUB_CALL_FILE = 1 << 4, SUB_CALL_LINE = 1 << 5, SUB_CALL_COL = 1 << 6, SUB_DISCR = 1 << 7,
	SUB_SIBLING = 1 << 8,
};

typedef struct unit_walk {
	ix_shard *x;
	uint32_t unit;
	uint64_t cu_die_off;
	uint64_t cu_end;  /* section offset of the unit's end (its next unit's) */
	/* 0, or while a split unit is walked the bits that make its DIE
	 * offsets unique in the image (SPEC §7.4): 2^63 | unit << 32. */
	uint64_t off_tag;
	uint16_t version;
	uint8_t addr_size;
	uint64_t base;
	int has_base;
	int bad; /* malformed parts were dropped: count the unit as partial */
	ix_ranges_ctx rng;
	ix_line_table lt;
	ix_diemap dm;
} unit_walk;

/* A DIE's address ranges: 64 in place, more on the heap. */
typedef struct rangeset {
	uint64_t lo[64], hi[64];
	uint64_t *xlo, *xhi; /* overflow */
	size_t n, cap;
} rangeset;

static inline void rangeset_get(const rangeset *r, size_t i, uint64_t *lo, uint64_t *hi)
{
	*lo = i < 64 ? r->lo[i] : r->xlo[i - 64];
	*hi = i < 64 ? r->hi[i] : r->xhi[i - 64];
}

static inline void rangeset_free(rangeset *r)
{
	free(r->xlo);
	free(r->xhi);
}

static inline void drop_err(ix_shard *x, Dwarf_Error *e)
{
	if (*e) {
		dwarf_dealloc_error(((Dwarf_Debug)x->dbg), *e);
		*e = NULL;
	}
}

/* ---- attributes and ranges (ix_dwarf_attrs.c) ---------------------------- */

/* An unsigned constant, DW_FORM_implicit_const included.  Returns 1 or 0. */
IX_HIDDEN int ix_dwarf_form_unsigned(ix_shard *x, Dwarf_Attribute a, Dwarf_Unsigned *v);
/* The string value of attribute `at`, or NULL. */
IX_HIDDEN const char *ix_dwarf_attr_string(ix_shard *x, Dwarf_Die d, Dwarf_Half at);
/* A section offset attribute (DW_AT_stmt_list, DW_AT_ranges) and its form
 * (form may be NULL).  Returns 1 when found, else 0. */
IX_HIDDEN int ix_dwarf_attr_secoff(ix_shard *x, Dwarf_Die d, Dwarf_Half at, uint64_t *v,
				   Dwarf_Half *form);
/* A DW_AT_sibling attribute of form `form` (SIB_AT with *off, SIB_NONE or
 * SIB_BAD), read as dwarf_siblingof_b reads it. */
IX_HIDDEN int ix_dwarf_sibling_form(ix_shard *x, Dwarf_Attribute a, Dwarf_Half form,
				    uint64_t *off);
/* Everything the walk needs of a subroutine DIE.  Returns 0 or -1. */
IX_HIDDEN int ix_dwarf_read_sub_attrs(ix_shard *x, Dwarf_Die d, sub_attrs *di);
/* A DIE's ranges (LLVM's DWARFDie::getAddressRanges).  Returns 0 (possibly
 * with no ranges) or -1 when the DIE is malformed. */
IX_HIDDEN int ix_dwarf_die_ranges(unit_walk *u, Dwarf_Die d, rangeset *rs);
/* The same for a subroutine DIE already read by ix_dwarf_read_sub_attrs. */
IX_HIDDEN int ix_dwarf_sub_ranges(unit_walk *u, const sub_attrs *di, rangeset *rs);

/* ---- function records (ix_dwarf_names.c) --------------------------------- */

/* The FUNCTIONS index naming the subroutine DIE d, or FMT_NONE. */
IX_HIDDEN uint32_t ix_dwarf_function_of_node(unit_walk *u, Dwarf_Die d, const sub_attrs *di,
					     int inlined);

/* ---- the DIE walk (ix_dwarf_dies.c) --------------------------------------- */

/* Walks the DIEs below cu_die into u->dm.  Returns 0 or -1. */
IX_HIDDEN int ix_dwarf_walk_dies(unit_walk *u, Dwarf_Die cu_die);

/* ---- libdwarf over our sections (ix_dwarf.c) ------------------------------- */

/* A Dwarf_Debug reading s; oai zeroed (filled here) and kept until
 * dwarf_object_finish.  Returns 0 or -1 with a reason in errbuf. */
IX_HIDDEN int ix_dwarf_open_dbg(const ix_sections *s, Dwarf_Obj_Access_Interface *oai,
				Dwarf_Debug *dbg, char *errbuf, size_t errbuf_sz);

/* ---- units (ix_dwarf_units.c) --------------------------------------------- */

/* FILES index of file `idx` in the line table of the unit whose DIE is at
 * cu_off (parsed once), or FMT_NONE. */
IX_HIDDEN uint32_t ix_dwarf_foreign_file(ix_shard *x, uint64_t cu_off, uint64_t idx);

/* ---- assembling the image (ix_dwarf_assemble.c) --------------------------- */

/* Cuts the units' pieces to the unit ranges and fills x->img's ROWS, IMAP
 * and sorted FUNCTIONS.  Returns 0 or -1 (out of memory). */
IX_HIDDEN int ix_dwarf_assemble(ix_shard *x);

#endif /* SYMDB_IX_DWARF_WALK_H */
