/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_names.c - the FUNCTIONS records (SPEC §7.4): a subroutine's linkage
 * name, name and declaration found as LLVM's findRecursively finds them,
 * following DW_AT_abstract_origin and DW_AT_specification.
 */
#include <string.h>

#include "ix_dwarf_walk.h"

#define MAX_HOPS 32    /* origin/specification DIEs visited per name */

/* ---- function records (LLVM's findRecursively) ---------------------------- */

typedef struct function_names {
	int have_link, have_name, have_line, have_file, file_ok;
	const char *link, *name;
	uint64_t line, file;
	uint64_t file_cu; /* CU DIE offset of the DIE holding decl_file */
} function_names;

/* Checks one DIE's attributes, in their order, for the ones still missing,
 * and returns its abstract_origin / specification targets. */
static void scan_fn_die(ix_shard *x, Dwarf_Die d, function_names *f, uint64_t *orig, uint64_t *spec)
{
	Dwarf_Attribute *list = NULL;
	Dwarf_Signed n = 0;
	Dwarf_Error e = NULL;
	*orig = *spec = UINT64_MAX;
	if (dwarf_attrlist(d, &list, &n, &e) != DW_DLV_OK) {
		drop_err(x, &e);
		return;
	}
	for (Dwarf_Signed i = 0; i < n; i++) {
		Dwarf_Half at = 0;
		Dwarf_Off o;
		Dwarf_Unsigned v = 0;
		char *s;
		if (dwarf_whatattr(list[i], &at, &e) == DW_DLV_OK) {
			if ((at == DW_AT_linkage_name || at == DW_AT_MIPS_linkage_name) && !f->have_link) {
				f->have_link = 1;
				f->link = dwarf_formstring(list[i], &s, &e) == DW_DLV_OK ? s : NULL;
			} else if (at == DW_AT_name && !f->have_name) {
				f->have_name = 1;
				f->name = dwarf_formstring(list[i], &s, &e) == DW_DLV_OK ? s : NULL;
			} else if (at == DW_AT_decl_line && !f->have_line) {
				f->have_line = 1;
				f->line = ix_dwarf_form_unsigned(x, list[i], &v) ? v : 0;
			} else if (at == DW_AT_decl_file && !f->have_file) {
				/* LLVM 14 (DWARFFormValue::getAsFile) cannot
				 * name a file given as DW_FORM_implicit_const:
				 * the value has no unit, StartFileName is "". */
				Dwarf_Half form = 0;
				f->have_file = 1;
				f->file_ok = dwarf_whatform(list[i], &form, &e) == DW_DLV_OK &&
					     form != DW_FORM_implicit_const &&
					     ix_dwarf_form_unsigned(x, list[i], &v);
				f->file = f->file_ok ? v : 0;
				Dwarf_Off cu = 0;
				if (dwarf_CU_dieoffset_given_die(d, &cu, &e) != DW_DLV_OK)
					f->file_ok = 0;
				f->file_cu = cu;
			} else if (at == DW_AT_abstract_origin || at == DW_AT_specification) {
				if (dwarf_global_formref(list[i], &o, &e) == DW_DLV_OK)
					*(at == DW_AT_abstract_origin ? orig : spec) = o;
			}
		}
		drop_err(x, &e);
		dwarf_dealloc_attribute(list[i]);
	}
	dwarf_dealloc(((Dwarf_Debug)x->dbg), list, DW_DLA_LIST);
}

static int all_found(const function_names *f)
{
	return f->have_link && f->have_name && f->have_line && f->have_file;
}

/* Walks the DIE and what it refers to in LLVM's order (a stack: the
 * specification is popped before the abstract origin), each DIE once. */
static void resolve_names(ix_shard *x, Dwarf_Die start, function_names *f)
{
	uint64_t work[2 * MAX_HOPS + 2], seen[MAX_HOPS];
	size_t nw = 0, ns = 0;
	Dwarf_Off so = 0;
	Dwarf_Error e = NULL;
	if (dwarf_dieoffset(start, &so, &e) != DW_DLV_OK) {
		drop_err(x, &e);
		return;
	}
	work[nw++] = so;
	while (nw && ns < MAX_HOPS && !all_found(f)) {
		uint64_t off = work[--nw];
		int dup = 0;
		for (size_t i = 0; i < ns; i++)
			dup |= seen[i] == off;
		if (dup)
			continue;
		seen[ns++] = off;
		Dwarf_Die d = start;
		if (off != so && dwarf_offdie_b(((Dwarf_Debug)x->dbg), off, 1, &d, &e) != DW_DLV_OK) {
			drop_err(x, &e);
			continue;
		}
		uint64_t orig, spec;
		scan_fn_die(x, d, f, &orig, &spec);
		if (d != start)
			dwarf_dealloc_die(d);
		if (orig != UINT64_MAX && nw < 2 * MAX_HOPS)
			work[nw++] = orig;
		if (spec != UINT64_MAX && nw < 2 * MAX_HOPS)
			work[nw++] = spec;
	}
}

/* The FUNCTIONS record for DIE `d` at `off`, created on first use.  The
 * decl_file index is read in the line table of the unit holding the
 * attribute, as LLVM's DWARFFormValue::getAsFile does (LTO and dwz refer
 * across units). */
static uint32_t function_for(unit_walk *u, Dwarf_Die d, uint64_t off)
{
	ix_shard *x = u->x;
	uint64_t key = off | u->off_tag;
	uint32_t fi = ix_u64map_get(&x->fn_idx, key);
	if (fi != FMT_NONE)
		return fi;
	function_names f = { 0 };
	resolve_names(x, d, &f);
	ix_function *fn = ix_vec_push(&x->img->functions);
	if (!fn)
		return FMT_NONE;
	fn->die_offset = key;
	const char *ln = f.link ? f.link : f.name;
	fn->linkage_name = ln ? ix_str_addz(x->img->strings, ln) : 0;
	fn->name = f.name ? ix_str_addz(x->img->strings, f.name) : 0;
	fn->decl_file = FMT_NONE;
	if (f.file_ok && f.file_cu == u->cu_die_off)
		fn->decl_file = ix_line_file(&u->lt, f.file);
	else if (f.file_ok && !u->off_tag) /* a split unit refers to no other */
		fn->decl_file = ix_dwarf_foreign_file(x, f.file_cu, f.file);
	fn->decl_line = (uint32_t)f.line;
	fi = (uint32_t)(x->img->functions.n - 1);
	if (ix_u64map_put(&x->fn_idx, key, fi))
		return FMT_NONE;
	return fi;
}

/* The DIE whose record names a subroutine: an inlined subroutine without
 * names of its own is named by its abstract origin, which many inlined
 * copies share. */
uint32_t ix_dwarf_function_of_node(unit_walk *u, Dwarf_Die d, const sub_attrs *di, int inlined)
{
	ix_shard *x = u->x;
	Dwarf_Error e = NULL;
	Dwarf_Off off = 0;
	if (dwarf_dieoffset(d, &off, &e) != DW_DLV_OK) {
		drop_err(x, &e);
		return FMT_NONE;
	}
	if (inlined && !di->has_name && !di->has_link && di->has_origin) {
		Dwarf_Off o = di->origin;
		Dwarf_Die od;
		if (ix_u64map_get(&x->fn_idx, o | u->off_tag) != FMT_NONE)
			return ix_u64map_get(&x->fn_idx, o | u->off_tag);
		if (dwarf_offdie_b(((Dwarf_Debug)x->dbg), o, 1, &od, &e) == DW_DLV_OK) {
			uint32_t fi = function_for(u, od, o);
			dwarf_dealloc_die(od);
			return fi;
		}
		drop_err(x, &e);
	}
	return function_for(u, d, off);
}
