/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_attrs.c - the attributes the DWARF walk reads (one dwarf_attrlist pass
 * per subroutine DIE; DW_FORM_implicit_const as LLVM reads it) and the
 * address ranges of a DIE, as LLVM's DWARFDie::getAddressRanges gives them.
 */
#include <stdlib.h>
#include <string.h>

#include "ix_dwarf_walk.h"

/* ---- attributes ---------------------------------------------------------- */

/* An unsigned constant.  libdwarf 20210528's dwarf_formudata refuses
 * DW_FORM_implicit_const (DWARF 5 §7.5.3), which GCC 11+ uses for
 * DW_AT_call_file and DW_AT_decl_file; dwarf_formsdata reads it. */
int ix_dwarf_form_unsigned(ix_shard *x, Dwarf_Attribute a, Dwarf_Unsigned *v)
{
	Dwarf_Error e = NULL;
	if (dwarf_formudata(a, v, &e) == DW_DLV_OK)
		return 1;
	drop_err(x, &e);
	Dwarf_Signed s;
	if (dwarf_formsdata(a, &s, &e) == DW_DLV_OK) {
		*v = (Dwarf_Unsigned)s;
		return 1;
	}
	drop_err(x, &e);
	return 0;
}

const char *ix_dwarf_attr_string(ix_shard *x, Dwarf_Die d, Dwarf_Half at)
{
	Dwarf_Attribute a;
	Dwarf_Error e = NULL;
	if (dwarf_attr(d, at, &a, &e) != DW_DLV_OK) {
		drop_err(x, &e);
		return NULL;
	}
	char *s = NULL;
	if (dwarf_formstring(a, &s, &e) != DW_DLV_OK)
		s = NULL;
	drop_err(x, &e);
	dwarf_dealloc_attribute(a);
	return s;
}

/* A section offset attribute (DW_AT_stmt_list, DW_AT_ranges). */
int ix_dwarf_attr_secoff(ix_shard *x, Dwarf_Die d, Dwarf_Half at, uint64_t *v, Dwarf_Half *form)
{
	Dwarf_Attribute a;
	Dwarf_Error e = NULL;
	if (dwarf_attr(d, at, &a, &e) != DW_DLV_OK) {
		drop_err(x, &e);
		return 0;
	}
	Dwarf_Half f = 0;
	Dwarf_Unsigned u = 0;
	Dwarf_Off o = 0;
	int ok = dwarf_whatform(a, &f, &e) == DW_DLV_OK;
	drop_err(x, &e);
	if (ok && dwarf_formudata(a, &u, &e) != DW_DLV_OK) {
		drop_err(x, &e);
		ok = dwarf_global_formref(a, &o, &e) == DW_DLV_OK;
		u = o;
	}
	drop_err(x, &e);
	dwarf_dealloc_attribute(a);
	*v = u;
	if (form)
		*form = f;
	return ok;
}

static int is_addr_form(Dwarf_Half f)
{
	switch (f) {
	case DW_FORM_addr: case DW_FORM_addrx: case DW_FORM_addrx1: case DW_FORM_addrx2:
	case DW_FORM_addrx3: case DW_FORM_addrx4: case DW_FORM_GNU_addr_index:
		return 1;
	default:
		return 0;
	}
}

/* A DW_AT_sibling value as dwarf_siblingof_b reads it (SIB_*): the
 * unit-local reference forms are followed, DW_FORM_ref_addr is ignored,
 * and libdwarf refuses any other form. */
int ix_dwarf_sibling_form(ix_shard *x, Dwarf_Attribute a, Dwarf_Half form, uint64_t *off)
{
	Dwarf_Error e = NULL;
	Dwarf_Off o = 0;
	switch (form) {
	case DW_FORM_ref1: case DW_FORM_ref2: case DW_FORM_ref4: case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		if (dwarf_global_formref(a, &o, &e) != DW_DLV_OK) {
			drop_err(x, &e);
			return SIB_BAD;
		}
		*off = o;
		return SIB_AT;
	case DW_FORM_ref_addr:
		return SIB_NONE;
	default:
		return SIB_BAD;
	}
}

/* An address attribute: in a split unit, an index form reads the
 * skeleton's .debug_addr (libdwarf would need the skeleton's Dwarf_Debug
 * tied to the split file's, and a search of its units by DWO id). */
static int form_addr(ix_shard *x, Dwarf_Attribute a, Dwarf_Half form, Dwarf_Addr *ad,
		     Dwarf_Error *e)
{
	if (x->addrx && form != DW_FORM_addr) {
		Dwarf_Unsigned idx = 0;
		uint64_t v = 0;
		if (dwarf_get_debug_addr_index(a, &idx, e) != DW_DLV_OK ||
		    !ix_addr_entry(x->addrx, idx, &v))
			return DW_DLV_ERROR;
		*ad = v;
		return DW_DLV_OK;
	}
	return dwarf_formaddr(a, ad, e);
}

/* One attribute of read_dinfo; bit is its SUB_* flag. */
static void sub_attr_read(ix_shard *x, Dwarf_Attribute a, uint32_t bit, sub_attrs *di)
{
	Dwarf_Error e = NULL;
	Dwarf_Half form = 0;
	Dwarf_Addr ad;
	Dwarf_Off o;
	Dwarf_Unsigned v;
	if (dwarf_whatform(a, &form, &e) != DW_DLV_OK) {
		drop_err(x, &e);
		return;
	}
	switch (bit) {
	case SUB_LOW:
		if (is_addr_form(form) && form_addr(x, a, form, &ad, &e) == DW_DLV_OK)
			di->low = ad, di->has_low = 1;
		break;
	case SUB_HIGH:
		if (is_addr_form(form)) {
			if (form_addr(x, a, form, &ad, &e) == DW_DLV_OK)
				di->high = ad, di->has_high = 1;
		} else if (ix_dwarf_form_unsigned(x, a, &v)) {
			di->high = v, di->has_high = di->high_const = 1;
		}
		break;
	case SUB_RANGES: {
		/* dwarf_formudata refuses DW_FORM_sec_offset, and an error
		 * costs libdwarf a formatted message: ask the one that reads it. */
		Dwarf_Unsigned u = 0;
		if (form != DW_FORM_sec_offset && dwarf_formudata(a, &u, &e) == DW_DLV_OK) {
			di->ranges = u, di->has_ranges = 1;
		} else {
			drop_err(x, &e);
			if (dwarf_global_formref(a, &o, &e) == DW_DLV_OK)
				di->ranges = o, di->has_ranges = 1;
		}
		di->ranges_x = form == DW_FORM_rnglistx;
		break;
	}
	case SUB_SIBLING:
		di->sib = ix_dwarf_sibling_form(x, a, form, &di->sibling);
		break;
	case SUB_ORIGIN:
		if (dwarf_global_formref(a, &o, &e) == DW_DLV_OK)
			di->origin = o, di->has_origin = 1;
		break;
	case SUB_CALL_FILE: ix_dwarf_form_unsigned(x, a, &di->call_file); break;
	case SUB_CALL_LINE: ix_dwarf_form_unsigned(x, a, &di->call_line); break;
	case SUB_CALL_COL: ix_dwarf_form_unsigned(x, a, &di->call_col); break;
	case SUB_DISCR: ix_dwarf_form_unsigned(x, a, &di->discr); break;
	}
	drop_err(x, &e);
}

/* Everything the walk needs of a subroutine DIE, from one dwarf_attrlist
 * instead of a dwarf_attr search per attribute.  Returns 0 or -1. */
int ix_dwarf_read_sub_attrs(ix_shard *x, Dwarf_Die d, sub_attrs *di)
{
	Dwarf_Attribute *list = NULL;
	Dwarf_Signed n = 0;
	Dwarf_Error e = NULL;
	memset(di, 0, sizeof(*di));
	di->sib = SIB_NONE;
	int r = dwarf_attrlist(d, &list, &n, &e);
	if (r != DW_DLV_OK) {
		drop_err(x, &e);
		return r == DW_DLV_ERROR ? -1 : 0;
	}
	for (Dwarf_Signed i = 0; i < n; i++) {
		Dwarf_Half at = 0;
		uint32_t bit = 0;
		if (dwarf_whatattr(list[i], &at, &e) == DW_DLV_OK) {
			switch (at) {
			case DW_AT_low_pc: bit = SUB_LOW; break;
			case DW_AT_high_pc: bit = SUB_HIGH; break;
			case DW_AT_ranges: bit = SUB_RANGES; break;
			case DW_AT_abstract_origin: bit = SUB_ORIGIN; break;
			case DW_AT_call_file: bit = SUB_CALL_FILE; break;
			case DW_AT_call_line: bit = SUB_CALL_LINE; break;
			case DW_AT_call_column: bit = SUB_CALL_COL; break;
			case DW_AT_GNU_discriminator: bit = SUB_DISCR; break;
			case DW_AT_sibling: bit = SUB_SIBLING; break;
			case DW_AT_name: di->has_name = 1; break;
			case DW_AT_linkage_name: di->has_link = 1; break;
			default: break;
			}
		}
		drop_err(x, &e);
		if (bit && !(di->seen & bit)) {
			di->seen |= bit;
			sub_attr_read(x, list[i], bit, di);
		}
		dwarf_dealloc_attribute(list[i]);
	}
	dwarf_dealloc(((Dwarf_Debug)x->dbg), list, DW_DLA_LIST);
	return 0;
}

static uint64_t tombstone(const unit_walk *u)
{
	return u->addr_size == 4 ? 0xffffffffu : UINT64_MAX;
}

/* ---- address ranges (LLVM's DWARFDie::getAddressRanges) ------------------ */

static int rangeset_add(rangeset *r, uint64_t lo, uint64_t hi)
{
	if (r->n < 64) {
		r->lo[r->n] = lo;
		r->hi[r->n++] = hi;
		return 0;
	}
	size_t k = r->n - 64;
	if (k == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		uint64_t *a = realloc(r->xlo, cap * sizeof(*a));
		if (!a)
			return -1;
		r->xlo = a;
		uint64_t *b = realloc(r->xhi, cap * sizeof(*b));
		if (!b)
			return -1;
		r->xhi = b;
		r->cap = cap;
	}
	r->xlo[k] = lo;
	r->xhi[k] = hi;
	r->n++;
	return 0;
}

static int rangeset_add_cb(void *arg, uint64_t lo, uint64_t hi)
{
	return rangeset_add(arg, lo, hi);
}

/* Returns 0 (possibly with no ranges) or -1 when the DIE is malformed. */
int ix_dwarf_die_ranges(unit_walk *u, Dwarf_Die d, rangeset *rs)
{
	ix_shard *x = u->x;
	Dwarf_Error e = NULL;
	Dwarf_Addr lo = 0, hv = 0;
	Dwarf_Half form = 0;
	enum Dwarf_Form_Class cls = DW_FORM_CLASS_UNKNOWN;
	int r = dwarf_lowpc(d, &lo, &e);
	drop_err(x, &e);
	if (r == DW_DLV_OK && lo != tombstone(u)) {
		r = dwarf_highpc_b(d, &hv, &form, &cls, &e);
		drop_err(x, &e);
		if (r == DW_DLV_OK)
			return rangeset_add(rs, lo, cls == DW_FORM_CLASS_CONSTANT ? lo + hv : hv);
	}
	uint64_t off;
	Dwarf_Half f;
	if (!ix_dwarf_attr_secoff(x, d, DW_AT_ranges, &off, &f))
		return 0;
	return ix_ranges_read(&u->rng, off, f == DW_FORM_rnglistx, rangeset_add_cb, rs);
}

/* The same for a subroutine DIE already read by read_dinfo. */
int ix_dwarf_sub_ranges(unit_walk *u, const sub_attrs *di, rangeset *rs)
{
	if (di->has_low && di->low != tombstone(u) && di->has_high)
		return rangeset_add(rs, di->low, di->high_const ? di->low + di->high : di->high);
	if (!di->has_ranges)
		return 0;
	return ix_ranges_read(&u->rng, di->ranges, di->ranges_x, rangeset_add_cb, rs);
}
