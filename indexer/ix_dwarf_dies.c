/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_dies.c - the walk of one unit's DIEs in pre-order: every
 * subprogram and inlined subroutine with ranges becomes an INLINE_NODES
 * record (SPEC §7.5) and goes into the unit's AddrDieMap.
 */
#include <stdlib.h>
#include <string.h>

#include "ix_dwarf_walk.h"

#define MAX_DEPTH 256  /* DIE nesting we follow; deeper is malformed */

/* One open DIE on the walk stack. */
typedef struct stack_entry {
	Dwarf_Die die;
	int sub;       /* DW_TAG_subprogram or DW_TAG_inlined_subroutine */
	int inlined;
	int parent;    /* stack index of the enclosing subroutine, or -1 */
	uint32_t node;
	Dwarf_Half tag;
	int have_di;   /* di is read (lazily: declarations never need it) */
	sub_attrs di;  /* for subroutines */
} stack_entry;

/* ---- DIE walk ------------------------------------------------------------- */

/* Creates the node of stack entry k (and of its pending ancestors first, so
 * that parents always precede children, SPEC §7.5). */
static uint32_t materialize(unit_walk *u, stack_entry *st, int k)
{
	if (st[k].node != FMT_NONE)
		return st[k].node;
	uint32_t parent = FMT_NONE;
	uint16_t depth = 0;
	if (st[k].inlined && st[k].parent >= 0) {
		parent = materialize(u, st, st[k].parent);
		if (parent == FMT_NONE)
			return FMT_NONE;
		depth = (uint16_t)(IX_AT(&u->x->img->nodes, ix_node, parent).depth + 1);
	}
	if (!st[k].have_di && ix_dwarf_read_sub_attrs(u->x, st[k].die, &st[k].di))
		return FMT_NONE;
	st[k].have_di = 1;
	const sub_attrs *di = &st[k].di;
	uint32_t fn = ix_dwarf_function_of_node(u, st[k].die, di, st[k].inlined);
	ix_node *n = ix_vec_push(&u->x->img->nodes);
	if (!n)
		return FMT_NONE;
	n->parent = parent;
	n->function = fn;
	n->depth = depth;
	n->flags = st[k].inlined ? FMT_NODEF_INLINED : 0;
	n->call_file = ix_line_file(&u->lt, di->call_file);
	n->call_line = (uint32_t)di->call_line;
	n->call_column = (uint32_t)di->call_col;
	n->call_discr = (uint32_t)di->discr;
	if (di->has_low) {
		n->flags |= FMT_NODEF_HAS_LOW_PC;
		n->low_pc = di->low;
	}
	st[k].node = (uint32_t)(u->x->img->nodes.n - 1);
	return st[k].node;
}

/* Does the DIE's abbreviation list DW_AT_low_pc or DW_AT_ranges (what
 * dwarf_hasattr answers)?  Answered once per abbreviation: dwarf_hasattr
 * decodes the DIE's values to find them, 15% of a libstdc++ build.
 * Returns 0 with *yes set, or -1. */
static int may_have_ranges(ix_shard *x, Dwarf_Die d, int *yes)
{
	Dwarf_Error e = NULL;
	Dwarf_Off aoff = 0;
	Dwarf_Unsigned cnt = 0;
	if (dwarf_die_abbrev_global_offset(d, &aoff, &cnt, &e) == DW_DLV_OK) {
		uint32_t v = ix_u64map_get(&x->ab_code, aoff);
		if (v != FMT_NONE) {
			*yes = (int)v;
			return 0;
		}
		Dwarf_Abbrev ab = NULL;
		Dwarf_Unsigned len = 0, n = 0;
		if (dwarf_get_abbrev((Dwarf_Debug)x->dbg, aoff, &ab, &len, &n, &e) == DW_DLV_OK) {
			int found = 0, ok = 1;
			for (Dwarf_Unsigned i = 0; i < n && ok; i++) {
				Dwarf_Unsigned at = 0, form = 0;
				Dwarf_Signed imp = 0;
				Dwarf_Off o = 0;
				ok = dwarf_get_abbrev_entry_b(ab, i, 0, &at, &form, &imp, &o, &e) ==
				     DW_DLV_OK;
				found |= at == DW_AT_low_pc || at == DW_AT_ranges;
			}
			dwarf_dealloc((Dwarf_Debug)x->dbg, ab, DW_DLA_ABBREV);
			if (ok) {
				*yes = found;
				return ix_u64map_put(&x->ab_code, aoff, (uint32_t)found);
			}
		}
	}
	drop_err(x, &e);
	/* Cannot tell from the abbreviation: ask about the DIE. */
	Dwarf_Bool lo = 0, rng = 0;
	if (dwarf_hasattr(d, DW_AT_low_pc, &lo, &e) != DW_DLV_OK ||
	    (!lo && dwarf_hasattr(d, DW_AT_ranges, &rng, &e) != DW_DLV_OK)) {
		drop_err(x, &e);
		return -1;
	}
	*yes = lo || rng;
	return 0;
}

/* Handles the DIE on top of the stack (index k): a subroutine with ranges
 * goes into the unit's AddrDieMap. */
static int visit_die(unit_walk *u, stack_entry *st, int k)
{
	Dwarf_Half tag = 0;
	Dwarf_Error e = NULL;
	int p = k - 1;
	while (p >= 0 && !st[p].sub)
		p--;
	st[k].parent = p;
	st[k].node = FMT_NONE;
	st[k].sub = st[k].inlined = 0;
	if (dwarf_tag(st[k].die, &tag, &e) != DW_DLV_OK) {
		drop_err(u->x, &e);
		return -1;
	}
	st[k].tag = tag;
	if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
		return 0;
	st[k].sub = 1;
	st[k].inlined = tag == DW_TAG_inlined_subroutine;
	/* Most subprogram DIEs of C++ are declarations: without DW_AT_low_pc
	 * or DW_AT_ranges they have no ranges, and their attributes are read
	 * only if a node is ever made for them. */
	int may = 0;
	st[k].have_di = 0;
	if (may_have_ranges(u->x, st[k].die, &may))
		return -1;
	if (!may)
		return 0;
	if (ix_dwarf_read_sub_attrs(u->x, st[k].die, &st[k].di))
		return -1;
	st[k].have_di = 1;
	rangeset rs = { .n = 0 };
	int rc = 0;
	if (ix_dwarf_sub_ranges(u, &st[k].di, &rs)) {
		/* LLVM drops the ranges of a DIE whose list is malformed and
		 * keeps the rest of the unit; so do we (counted as partial). */
		rs.n = 0;
		u->bad = 1;
	}
	for (size_t i = 0; i < rs.n && !rc; i++) {
		uint64_t lo, hi;
		rangeset_get(&rs, i, &lo, &hi);
		if (lo == hi)
			continue;
		uint32_t node = materialize(u, st, k);
		rc = node == FMT_NONE ? -1 : ix_diemap_add(&u->dm, lo, hi, node);
	}
	rangeset_free(&rs);
	return rc;
}

/* DIEs whose children are never subprograms or inlined subroutines in
 * what compilers emit (parameters, variables, call sites, enumerators,
 * array bounds, template parameters): the walk does not descend into them,
 * which saves libdwarf a DIE allocation per child. */
static int no_code_below(Dwarf_Half tag)
{
	switch (tag) {
	case DW_TAG_formal_parameter: case DW_TAG_variable: case DW_TAG_member:
	case DW_TAG_enumeration_type: case DW_TAG_enumerator: case DW_TAG_subroutine_type:
	case DW_TAG_array_type: case DW_TAG_subrange_type: case DW_TAG_base_type:
	case DW_TAG_pointer_type: case DW_TAG_typedef: case DW_TAG_const_type:
	case DW_TAG_volatile_type: case DW_TAG_call_site: case DW_TAG_call_site_parameter:
	case DW_TAG_GNU_call_site: case DW_TAG_GNU_call_site_parameter:
	case DW_TAG_template_type_parameter: case DW_TAG_template_value_parameter:
	case DW_TAG_GNU_template_parameter_pack: case DW_TAG_GNU_formal_parameter_pack:
	case DW_TAG_unspecified_parameters: case DW_TAG_label: case DW_TAG_inheritance:
		return 1;
	default:
		return 0;
	}
}

static int outside_code(Dwarf_Half tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

/* Does the DIE's abbreviation say it has children?  libdwarf's dwarf_child
 * decodes every attribute of the DIE before it looks (to find where a
 * child would start): asking first saves that pass on each leaf.  When the
 * abbreviation cannot tell, dwarf_child decides. */
static int has_children(Dwarf_Die d)
{
	Dwarf_Half yes = 1;
	return dwarf_die_abbrev_children_flag(d, &yes) != DW_DLV_OK || yes;
}

/* Moves to the next DIE in pre-order; frees DIEs left behind. */
static int next_die(unit_walk *u, stack_entry *st, int *k)
{
	ix_shard *x = u->x;
	Dwarf_Die c = NULL;
	Dwarf_Error e = NULL;
	int r = *k > 0 && (no_code_below(st[*k].tag) || !has_children(st[*k].die) ||
			   (outside_code(st[*k].tag) && st[*k].parent < 0))
			? DW_DLV_NO_ENTRY
			: dwarf_child(st[*k].die, &c, &e);
	if (r == DW_DLV_ERROR) {
		drop_err(x, &e);
		return -1;
	}
	if (r == DW_DLV_OK) {
		if (*k + 1 >= MAX_DEPTH) {
			dwarf_dealloc_die(c);
			return -1;
		}
		st[++*k].die = c;
		return 1;
	}
	while (*k > 0) {
		Dwarf_Die s = NULL;
		r = dwarf_siblingof_b(((Dwarf_Debug)x->dbg), st[*k].die, 1, &s, &e);
		dwarf_dealloc_die(st[*k].die);
		st[*k].die = NULL;
		if (r == DW_DLV_ERROR) {
			drop_err(x, &e);
			--*k;
			return -1;
		}
		if (r == DW_DLV_OK) {
			st[*k].die = s;
			return 1;
		}
		--*k; /* no more siblings: back to the parent */
	}
	return 0;
}

int ix_dwarf_walk_dies(unit_walk *u, Dwarf_Die cu_die)
{
	stack_entry *st = calloc(MAX_DEPTH, sizeof(*st));
	if (!st)
		return -1;
	st[0].die = cu_die;
	st[0].parent = -1;
	st[0].node = FMT_NONE;
	int k = 0, rc;
	while ((rc = next_die(u, st, &k)) == 1)
		if (visit_die(u, st, k)) {
			rc = -1;
			break;
		}
	for (int i = k; i > 0; i--)
		if (st[i].die)
			dwarf_dealloc_die(st[i].die);
	free(st);
	return rc;
}
