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
	int skip;      /* a subprogram declaration: its children are not walked */
	int sib;       /* SIB_*: what is known of its DW_AT_sibling ... */
	uint64_t sib_off; /* ... with SIB_AT, the next sibling's section offset */
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

/* What the walk asks of a DIE's abbreviation. */
enum {
	AB_RANGES = 1,     /* DW_AT_low_pc or DW_AT_ranges (what dwarf_hasattr answers) */
	AB_DECL = 2,       /* DW_AT_declaration, DW_FORM_flag_present: always true */
	AB_NO_SIBLING = 4, /* no DW_AT_sibling */
};

/* The AB_* bits of the DIE's abbreviation, answered once per abbreviation:
 * dwarf_hasattr decodes the DIE's values to find an attribute, 15% of a
 * libstdc++ build.  Returns 0 with *bits set, or -1. */
static int abbrev_bits(ix_shard *x, Dwarf_Die d, uint32_t *bits)
{
	Dwarf_Error e = NULL;
	Dwarf_Off aoff = 0;
	Dwarf_Unsigned cnt = 0;
	if (dwarf_die_abbrev_global_offset(d, &aoff, &cnt, &e) == DW_DLV_OK) {
		uint32_t v = ix_u64map_get(&x->ab_code, aoff);
		if (v != FMT_NONE) {
			*bits = v;
			return 0;
		}
		Dwarf_Abbrev ab = NULL;
		Dwarf_Unsigned len = 0, n = 0;
		if (dwarf_get_abbrev((Dwarf_Debug)x->dbg, aoff, &ab, &len, &n, &e) == DW_DLV_OK) {
			uint32_t b = AB_NO_SIBLING;
			int ok = 1;
			for (Dwarf_Unsigned i = 0; i < n && ok; i++) {
				Dwarf_Unsigned at = 0, form = 0;
				Dwarf_Signed imp = 0;
				Dwarf_Off o = 0;
				ok = dwarf_get_abbrev_entry_b(ab, i, 0, &at, &form, &imp, &o, &e) ==
				     DW_DLV_OK;
				if (at == DW_AT_low_pc || at == DW_AT_ranges)
					b |= AB_RANGES;
				if (at == DW_AT_declaration && form == DW_FORM_flag_present)
					b |= AB_DECL;
				if (at == DW_AT_sibling)
					b &= ~(uint32_t)AB_NO_SIBLING;
			}
			dwarf_dealloc((Dwarf_Debug)x->dbg, ab, DW_DLA_ABBREV);
			if (ok) {
				*bits = b;
				return ix_u64map_put(&x->ab_code, aoff, b);
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
	*bits = lo || rng ? AB_RANGES : 0;
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
	st[k].sub = st[k].inlined = st[k].skip = 0;
	st[k].have_di = 0;
	st[k].sib = SIB_UNREAD;
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
	 * only if a node is ever made for them.  A declaration has no body:
	 * below it are only its parameters, never code, and the walk skips
	 * them (4 % of a big C++ image's DIEs); a subprogram without ranges
	 * that is not one (an abstract instance) may hold the definitions of
	 * its lambdas. */
	uint32_t ab = 0;
	if (abbrev_bits(u->x, st[k].die, &ab))
		return -1;
	if (ab & AB_NO_SIBLING)
		st[k].sib = SIB_NONE;
	if (!(ab & AB_RANGES)) {
		st[k].skip = (ab & AB_DECL) != 0;
		return 0;
	}
	if (ix_dwarf_read_sub_attrs(u->x, st[k].die, &st[k].di))
		return -1;
	st[k].have_di = 1;
	st[k].sib = st[k].di.sib;
	st[k].sib_off = st[k].di.sibling;
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

static int descends_into(const stack_entry *st, int k)
{
	return k == 0 || !(no_code_below(st[k].tag) || st[k].skip || !has_children(st[k].die) ||
			   (outside_code(st[k].tag) && st[k].parent < 0));
}

/* ---- moving through the DIEs ---------------------------------------------
 *
 * dwarf_siblingof_b finds a DIE's next sibling by decoding the DIE's
 * attributes (to its DW_AT_sibling if it has one), and when it has none
 * but has children, by decoding its whole subtree again: with GCC's DWARF
 * that is every last child with children, down chains of nested inlined
 * subroutines, a third of a big C++ build's DIE decoding.  Two shortcuts
 * give the same DIEs:
 *  - a DIE whose DW_AT_sibling is known (read with the attributes of a
 *    subroutine, or once when needed) is left with dwarf_offdie_b, which
 *    decodes no attribute;
 *  - when a leaf is the last DIE of its list and its parent has no
 *    DW_AT_sibling, dwarf_child on the leaf moves libdwarf's "last DIE"
 *    pointer past the null entries that follow it, which
 *    dwarf_validate_die_sibling reports: the first DIE after the lists
 *    that end there.  If that is the DW_AT_sibling of an ancestor (or the
 *    unit's end), every list up to that ancestor ends at those null
 *    entries (the sibling bounds its subtree), and the walk continues at
 *    that ancestor's sibling.  Otherwise libdwarf's own way is taken.
 */

/* Reads what DIE `e` says of its sibling, once. */
static void read_sibling(unit_walk *u, stack_entry *e)
{
	ix_shard *x = u->x;
	uint32_t ab = 0;
	if (e->sib != SIB_UNREAD)
		return;
	e->sib = SIB_BAD;
	if (abbrev_bits(x, e->die, &ab))
		return;
	if (ab & AB_NO_SIBLING) {
		e->sib = SIB_NONE;
		return;
	}
	Dwarf_Attribute a = NULL;
	Dwarf_Error err = NULL;
	Dwarf_Half form = 0;
	int r = dwarf_attr(e->die, DW_AT_sibling, &a, &err);
	if (r == DW_DLV_NO_ENTRY)
		e->sib = SIB_NONE;
	else if (r == DW_DLV_OK && dwarf_whatform(a, &form, &err) == DW_DLV_OK)
		e->sib = ix_dwarf_sibling_form(x, a, form, &e->sib_off);
	drop_err(x, &err);
	if (a)
		dwarf_dealloc_attribute(a);
}

/* The DIE at e's DW_AT_sibling, as dwarf_siblingof_b finds it: past the
 * unit is an error, the unit's end or a null entry ends the list. */
static int die_at_sibling(unit_walk *u, const stack_entry *e, Dwarf_Die *out)
{
	ix_shard *x = u->x;
	Dwarf_Error err = NULL;
	Dwarf_Off self = 0;
	if (dwarf_dieoffset(e->die, &self, &err) != DW_DLV_OK) {
		drop_err(x, &err);
		return DW_DLV_ERROR;
	}
	/* libdwarf refuses a sibling before the DIE; one at the DIE itself
	 * would make the walk loop. */
	if (e->sib_off <= self || e->sib_off > u->cu_end)
		return DW_DLV_ERROR;
	if (e->sib_off == u->cu_end)
		return DW_DLV_NO_ENTRY;
	int r = dwarf_offdie_b((Dwarf_Debug)x->dbg, e->sib_off, 1, out, &err);
	drop_err(x, &err);
	return r;
}

/* The DIE after e at its level.  dwarf_siblingof_b follows a DW_AT_sibling
 * that the walk never read (e's abbreviation was not looked at), and one
 * that names the DIE itself gives the DIE back: the walk looped until the
 * indexer's time limit.  A sibling that is not past the DIE is an error, as
 * die_at_sibling says for the attributes it reads. */
static int next_sibling(unit_walk *u, stack_entry *e, Dwarf_Die *out)
{
	Dwarf_Error err = NULL;
	Dwarf_Off self = 0, next = 0;
	if (e->sib == SIB_AT && u->cu_end)
		return die_at_sibling(u, e, out);
	int r = dwarf_siblingof_b((Dwarf_Debug)u->x->dbg, e->die, 1, out, &err);
	drop_err(u->x, &err);
	if (r != DW_DLV_OK)
		return r;
	if (dwarf_dieoffset(e->die, &self, &err) != DW_DLV_OK ||
	    dwarf_dieoffset(*out, &next, &err) != DW_DLV_OK || next <= self) {
		drop_err(u->x, &err);
		dwarf_dealloc_die(*out);
		*out = NULL;
		return DW_DLV_ERROR;
	}
	return r;
}

/* The section offset of the first DIE after the null entries that follow
 * leaf d (the unit's end if none): 1, or 0 when libdwarf cannot say. */
static int after_lists(unit_walk *u, Dwarf_Die d, uint64_t *q)
{
	ix_shard *x = u->x;
	Dwarf_Die c = NULL;
	Dwarf_Error err = NULL;
	Dwarf_Off self = 0, at = 0;
	int r = dwarf_child(d, &c, &err);
	drop_err(x, &err);
	if (r == DW_DLV_OK)
		dwarf_dealloc_die(c);
	if (r != DW_DLV_NO_ENTRY || dwarf_dieoffset(d, &self, &err) != DW_DLV_OK) {
		drop_err(x, &err);
		return 0;
	}
	/* DW_DLV_ERROR: d is not where the walk is, and `at` is. */
	if (dwarf_validate_die_sibling(d, &at) != DW_DLV_ERROR || at <= self || at > u->cu_end)
		return 0;
	*q = at;
	return 1;
}

/* The last leaf of the subtree of d, whose children the walk skipped: its
 * last child, or that child's last leaf.  Sets *leaf (the caller frees
 * it) and returns 1, or 0. */
static int last_leaf(unit_walk *u, Dwarf_Die d, Dwarf_Die *leaf)
{
	Dwarf_Debug dbg = (Dwarf_Debug)u->x->dbg;
	Dwarf_Error err = NULL;
	Dwarf_Die cur = d; /* the caller's while cur == d */
	for (int depth = 0; cur && depth < MAX_DEPTH; depth++) {
		Dwarf_Die c = NULL, s = NULL;
		int r = dwarf_child(cur, &c, &err);
		if (cur != d)
			dwarf_dealloc_die(cur);
		cur = NULL;
		if (r != DW_DLV_OK)
			break;
		while ((r = dwarf_siblingof_b(dbg, c, 1, &s, &err)) == DW_DLV_OK) {
			dwarf_dealloc_die(c);
			c = s;
		}
		Dwarf_Half kids = 1;
		if (r != DW_DLV_NO_ENTRY || dwarf_die_abbrev_children_flag(c, &kids) != DW_DLV_OK) {
			dwarf_dealloc_die(c);
			break;
		}
		if (!kids) {
			*leaf = c;
			return 1;
		}
		cur = c;
	}
	if (cur && cur != d)
		dwarf_dealloc_die(cur);
	drop_err(u->x, &err);
	return 0;
}

enum { CLOSED_NONE, CLOSED_TO_SIBLING, CLOSED_ALL };

/* The DIE on top of the stack (index *k) was the last of its list: ends,
 * in one step, every list that ends with its subtree (see above).  A DIE
 * whose children the walk skipped (the call site that often ends a
 * function, with its parameters) is looked into for its last leaf.
 * CLOSED_TO_SIBLING: *k is now an ancestor whose DW_AT_sibling is next;
 * CLOSED_ALL: the unit's lists all end there; CLOSED_NONE: nothing done. */
static int close_lists(unit_walk *u, stack_entry *st, int *k)
{
	Dwarf_Half kids = 1;
	if (*k < 2 || !u->cu_end || dwarf_die_abbrev_children_flag(st[*k].die, &kids) != DW_DLV_OK)
		return CLOSED_NONE;
	read_sibling(u, &st[*k - 1]);
	if (st[*k - 1].sib != SIB_NONE)
		return CLOSED_NONE; /* leaving the parent is cheap */
	Dwarf_Die leaf = st[*k].die;
	if (kids && (descends_into(st, *k) || !last_leaf(u, st[*k].die, &leaf)))
		return CLOSED_NONE;
	uint64_t q = 0;
	int found = after_lists(u, leaf, &q);
	if (leaf != st[*k].die)
		dwarf_dealloc_die(leaf);
	if (!found)
		return CLOSED_NONE;
	int j = *k - 2;
	for (; j >= 1; j--) {
		read_sibling(u, &st[j]);
		if (st[j].sib == SIB_NONE)
			continue;
		if (st[j].sib != SIB_AT || st[j].sib_off != q)
			return CLOSED_NONE;
		break;
	}
	if (j == 0 && q != u->cu_end)
		return CLOSED_NONE;
	for (int i = *k; i > j; i--) {
		dwarf_dealloc_die(st[i].die);
		st[i].die = NULL;
	}
	*k = j;
	return j ? CLOSED_TO_SIBLING : CLOSED_ALL;
}

/* Moves to the next DIE in pre-order; frees DIEs left behind.  Returns 1,
 * 0 at the end of the unit, or -1. */
static int next_die(unit_walk *u, stack_entry *st, int *k)
{
	Dwarf_Die c = NULL;
	Dwarf_Error e = NULL;
	int r = descends_into(st, *k) ? dwarf_child(st[*k].die, &c, &e) : DW_DLV_NO_ENTRY;
	if (r == DW_DLV_ERROR) {
		drop_err(u->x, &e);
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
		r = next_sibling(u, &st[*k], &s);
		if (r == DW_DLV_OK) {
			dwarf_dealloc_die(st[*k].die);
			st[*k].die = s;
			return 1;
		}
		if (r == DW_DLV_ERROR) {
			dwarf_dealloc_die(st[*k].die);
			st[*k].die = NULL;
			--*k;
			return -1;
		}
		int c2 = close_lists(u, st, k);
		if (c2 == CLOSED_ALL)
			return 0;
		if (c2 == CLOSED_TO_SIBLING)
			continue;
		dwarf_dealloc_die(st[*k].die);
		st[*k].die = NULL;
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
