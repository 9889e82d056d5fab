/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf.c - fills an image's DWARF tables (SPEC §7.3-§7.6) so that the
 * lookup of SPEC §11 prints what llvm-symbolizer 14 prints.
 *
 * The model is LLVM 14's DWARFContext::getInliningInfoForAddress:
 *  - the unit is found from .debug_aranges, plus the DIE ranges of units
 *    that have no aranges set (DWARFDebugAranges::generate);
 *  - the chain is that unit's innermost subroutine DIE (its AddrDieMap),
 *    then its subroutine ancestors up to the first DW_TAG_subprogram;
 *  - frame 0's file:line comes from that unit's line table, frame i's from
 *    the DW_AT_call_* of frame i-1, names from findRecursively over
 *    DW_AT_abstract_origin / DW_AT_specification.
 * Each unit's line pieces and subroutine pieces are computed on their own
 * (ix_dwarf_line.c, ix_dwarf_flat.c), then cut to the unit ranges, so the
 * final arrays answer every address with one binary search each.
 *
 * DIEs are read with libdwarf, served our own already-inflated sections
 * (dwarf_object_init_b), with an error pointer on every call so libdwarf
 * never aborts.  A unit libdwarf cannot read is skipped and counted
 * (FMT_FLAG_PARTIAL, BUILD_INFO index 4).
 *
 * Parallel build: the units are cut into contiguous shards, 16 per thread,
 * which free threads take largest first, each thread with one Dwarf_Debug
 * of its own that it moves through the unit headers (a Dwarf_Debug is not
 * thread-safe; the sections are shared, read-only).  Shard 0 adds to the
 * image, later shards to private images that ix_dwarf_par.c merges so that
 * the index is byte-identical to a one-thread build.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libdwarf.h"
#include "dwarf.h"

#include "ix_dwarf_internal.h"
#include "ix_dwarf_par.h"

#define MAX_DEPTH 256  /* DIE nesting we follow; deeper is malformed */
#define MAX_HOPS 32    /* origin/specification DIEs visited per name */

typedef ix_unit unit;
typedef ix_wk dwx;

/* What the walk reads of a subroutine DIE, in one dwarf_attrlist pass
 * (each the first occurrence, decoded as dwarf_lowpc, dwarf_highpc_b,
 * dwarf_formudata/formsdata and dwarf_global_formref decode it). */
typedef struct dinfo {
	uint64_t low, high, ranges, origin;
	Dwarf_Unsigned call_file, call_line, call_col, discr;
	uint32_t seen; /* DI_* bits */
	uint8_t has_low, has_high, high_const, has_ranges, ranges_x, has_origin;
	uint8_t has_name, has_link;
} dinfo;

enum {
	DI_LOW = 1 << 0, DI_HIGH = 1 << 1, DI_RANGES = 1 << 2, DI_ORIGIN = 1 << 3,
	DI_CALL_FILE = 1 << 4, DI_CALL_LINE = 1 << 5, DI_CALL_COL = 1 << 6, DI_DISCR = 1 << 7,
};

typedef struct uctx {
	dwx *x;
	uint32_t unit;
	uint64_t cu_die_off;
	uint16_t version;
	uint8_t addr_size;
	uint64_t base;
	int has_base;
	int bad; /* malformed parts were dropped: count the unit as partial */
	ix_rng_ctx rng;
	ix_line_table lt;
	ix_diemap dm;
} uctx;

/* One open DIE on the walk stack. */
typedef struct sframe {
	Dwarf_Die die;
	int sub;      /* DW_TAG_subprogram or DW_TAG_inlined_subroutine */
	int inlined;
	int parent;   /* stack index of the enclosing subroutine, or -1 */
	uint32_t node;
	Dwarf_Half tag;
	int have_di;  /* di is read (lazily: declarations never need it) */
	dinfo di;     /* for subroutines */
} sframe;

static void drop_err(dwx *x, Dwarf_Error *e)
{
	if (*e) {
		dwarf_dealloc_error(((Dwarf_Debug)x->dbg), *e);
		*e = NULL;
	}
}

/* ---- libdwarf object access over ix_sections ------------------------------ */

static int oa_info(void *obj, Dwarf_Half idx, Dwarf_Obj_Access_Section *r, int *err)
{
	const ix_sections *s = obj;
	(void)err;
	memset(r, 0, sizeof(*r));
	if (idx == 0) {
		r->name = "";
		return DW_DLV_OK;
	}
	if ((size_t)idx > s->nsecs)
		return DW_DLV_NO_ENTRY;
	r->type = 1; /* SHT_PROGBITS */
	r->size = s->secs[idx - 1].size;
	r->name = s->secs[idx - 1].name;
	/* Range lists are read by ix_dwarf_ranges.c: libdwarf 20210528
	 * double-frees on some malformed .debug_rnglists, so it never sees
	 * them. */
	if (strcmp(r->name, ".debug_rnglists") == 0 || strcmp(r->name, ".debug_ranges") == 0)
		r->name = ".symdb_hidden";
	return DW_DLV_OK;
}

static Dwarf_Endianness oa_order(void *obj)
{
	return ((const ix_sections *)obj)->little ? DW_OBJECT_LSB : DW_OBJECT_MSB;
}

static Dwarf_Small oa_length(void *obj)
{
	(void)obj;
	return 4;
}

static Dwarf_Small oa_pointer(void *obj)
{
	return ((const ix_sections *)obj)->is64 ? 8 : 4;
}

static Dwarf_Unsigned oa_count(void *obj)
{
	return ((const ix_sections *)obj)->nsecs + 1;
}

static int oa_load(void *obj, Dwarf_Half idx, Dwarf_Small **data, int *err)
{
	const ix_sections *s = obj;
	(void)err;
	if (idx == 0 || (size_t)idx > s->nsecs)
		return DW_DLV_NO_ENTRY;
	*data = (Dwarf_Small *)(uintptr_t)s->secs[idx - 1].data;
	return DW_DLV_OK;
}

static const Dwarf_Obj_Access_Methods oa_methods = {
	oa_info, oa_order, oa_length, oa_pointer, oa_count, oa_load, NULL
};

/* ---- attributes ---------------------------------------------------------- */

/* An unsigned constant.  libdwarf 20210528's dwarf_formudata refuses
 * DW_FORM_implicit_const (DWARF 5 §7.5.3), which GCC 11+ uses for
 * DW_AT_call_file and DW_AT_decl_file; dwarf_formsdata reads it. */
static int form_unsigned(dwx *x, Dwarf_Attribute a, Dwarf_Unsigned *v)
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

static const char *attr_string(dwx *x, Dwarf_Die d, Dwarf_Half at)
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
static int attr_secoff(dwx *x, Dwarf_Die d, Dwarf_Half at, uint64_t *v, Dwarf_Half *form)
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

/* One attribute of read_dinfo; bit is its DI_* flag. */
static void dinfo_attr(dwx *x, Dwarf_Attribute a, uint32_t bit, dinfo *di)
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
	case DI_LOW:
		if (is_addr_form(form) && dwarf_formaddr(a, &ad, &e) == DW_DLV_OK)
			di->low = ad, di->has_low = 1;
		break;
	case DI_HIGH:
		if (is_addr_form(form)) {
			if (dwarf_formaddr(a, &ad, &e) == DW_DLV_OK)
				di->high = ad, di->has_high = 1;
		} else if (form_unsigned(x, a, &v)) {
			di->high = v, di->has_high = di->high_const = 1;
		}
		break;
	case DI_RANGES: {
		Dwarf_Unsigned u = 0;
		if (dwarf_formudata(a, &u, &e) == DW_DLV_OK) {
			di->ranges = u, di->has_ranges = 1;
		} else {
			drop_err(x, &e);
			if (dwarf_global_formref(a, &o, &e) == DW_DLV_OK)
				di->ranges = o, di->has_ranges = 1;
		}
		di->ranges_x = form == DW_FORM_rnglistx;
		break;
	}
	case DI_ORIGIN:
		if (dwarf_global_formref(a, &o, &e) == DW_DLV_OK)
			di->origin = o, di->has_origin = 1;
		break;
	case DI_CALL_FILE: form_unsigned(x, a, &di->call_file); break;
	case DI_CALL_LINE: form_unsigned(x, a, &di->call_line); break;
	case DI_CALL_COL: form_unsigned(x, a, &di->call_col); break;
	case DI_DISCR: form_unsigned(x, a, &di->discr); break;
	}
	drop_err(x, &e);
}

/* Everything the walk needs of a subroutine DIE, from one dwarf_attrlist
 * instead of a dwarf_attr search per attribute.  Returns 0 or -1. */
static int read_dinfo(dwx *x, Dwarf_Die d, dinfo *di)
{
	Dwarf_Attribute *list = NULL;
	Dwarf_Signed n = 0;
	Dwarf_Error e = NULL;
	memset(di, 0, sizeof(*di));
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
			case DW_AT_low_pc: bit = DI_LOW; break;
			case DW_AT_high_pc: bit = DI_HIGH; break;
			case DW_AT_ranges: bit = DI_RANGES; break;
			case DW_AT_abstract_origin: bit = DI_ORIGIN; break;
			case DW_AT_call_file: bit = DI_CALL_FILE; break;
			case DW_AT_call_line: bit = DI_CALL_LINE; break;
			case DW_AT_call_column: bit = DI_CALL_COL; break;
			case DW_AT_GNU_discriminator: bit = DI_DISCR; break;
			case DW_AT_name: di->has_name = 1; break;
			case DW_AT_linkage_name: di->has_link = 1; break;
			default: break;
			}
		}
		drop_err(x, &e);
		if (bit && !(di->seen & bit)) {
			di->seen |= bit;
			dinfo_attr(x, list[i], bit, di);
		}
		dwarf_dealloc_attribute(list[i]);
	}
	dwarf_dealloc(((Dwarf_Debug)x->dbg), list, DW_DLA_LIST);
	return 0;
}

static uint64_t tombstone(const uctx *u)
{
	return u->addr_size == 4 ? 0xffffffffu : UINT64_MAX;
}

/* ---- address ranges (LLVM's DWARFDie::getAddressRanges) ------------------ */

typedef struct rangeset {
	uint64_t lo[64], hi[64];
	uint64_t *xlo, *xhi; /* overflow */
	size_t n, cap;
} rangeset;

static int rs_add(rangeset *r, uint64_t lo, uint64_t hi)
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

static void rs_get(const rangeset *r, size_t i, uint64_t *lo, uint64_t *hi)
{
	*lo = i < 64 ? r->lo[i] : r->xlo[i - 64];
	*hi = i < 64 ? r->hi[i] : r->xhi[i - 64];
}

static void rs_free(rangeset *r)
{
	free(r->xlo);
	free(r->xhi);
}

static int rs_add_cb(void *arg, uint64_t lo, uint64_t hi)
{
	return rs_add(arg, lo, hi);
}

/* Returns 0 (possibly with no ranges) or -1 when the DIE is malformed. */
static int die_ranges(uctx *u, Dwarf_Die d, rangeset *rs)
{
	dwx *x = u->x;
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
			return rs_add(rs, lo, cls == DW_FORM_CLASS_CONSTANT ? lo + hv : hv);
	}
	uint64_t off;
	Dwarf_Half f;
	if (!attr_secoff(x, d, DW_AT_ranges, &off, &f))
		return 0;
	return ix_ranges_read(&u->rng, off, f == DW_FORM_rnglistx, rs_add_cb, rs);
}

/* The same for a subroutine DIE already read by read_dinfo. */
static int sub_ranges(uctx *u, const dinfo *di, rangeset *rs)
{
	if (di->has_low && di->low != tombstone(u) && di->has_high)
		return rs_add(rs, di->low, di->high_const ? di->low + di->high : di->high);
	if (!di->has_ranges)
		return 0;
	return ix_ranges_read(&u->rng, di->ranges, di->ranges_x, rs_add_cb, rs);
}

/* ---- function records (LLVM's findRecursively) ---------------------------- */

typedef struct fnames {
	int have_link, have_name, have_line, have_file, file_ok;
	const char *link, *name;
	uint64_t line, file;
	uint64_t file_cu; /* CU DIE offset of the DIE holding decl_file */
} fnames;

/* Checks one DIE's attributes, in their order, for the ones still missing,
 * and returns its abstract_origin / specification targets. */
static void scan_fn_die(dwx *x, Dwarf_Die d, fnames *f, uint64_t *orig, uint64_t *spec)
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
				f->line = form_unsigned(x, list[i], &v) ? v : 0;
			} else if (at == DW_AT_decl_file && !f->have_file) {
				/* LLVM 14 (DWARFFormValue::getAsFile) cannot
				 * name a file given as DW_FORM_implicit_const:
				 * the value has no unit, StartFileName is "". */
				Dwarf_Half form = 0;
				f->have_file = 1;
				f->file_ok = dwarf_whatform(list[i], &form, &e) == DW_DLV_OK &&
					     form != DW_FORM_implicit_const &&
					     form_unsigned(x, list[i], &v);
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

static int all_found(const fnames *f)
{
	return f->have_link && f->have_name && f->have_line && f->have_file;
}

/* Walks the DIE and what it refers to in LLVM's order (a stack: the
 * specification is popped before the abstract origin), each DIE once. */
static void resolve_names(dwx *x, Dwarf_Die start, fnames *f)
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

static uint32_t foreign_file(dwx *x, uint64_t cu_off, uint64_t idx);

/* The FUNCTIONS record for DIE `d` at `off`, created on first use.  The
 * decl_file index is read in the line table of the unit holding the
 * attribute, as LLVM's DWARFFormValue::getAsFile does (LTO and dwz refer
 * across units). */
static uint32_t function_for(uctx *u, Dwarf_Die d, uint64_t off)
{
	dwx *x = u->x;
	uint32_t fi = ix_u64map_get(&x->fn_idx, off);
	if (fi != FMT_NONE)
		return fi;
	fnames f = { 0 };
	resolve_names(x, d, &f);
	ix_function *fn = ix_vec_push(&x->img->functions);
	if (!fn)
		return FMT_NONE;
	fn->die_offset = off;
	const char *ln = f.link ? f.link : f.name;
	fn->linkage_name = ln ? ix_str_addz(x->img->strings, ln) : 0;
	fn->name = f.name ? ix_str_addz(x->img->strings, f.name) : 0;
	fn->decl_file = FMT_NONE;
	if (f.file_ok && f.file_cu == u->cu_die_off)
		fn->decl_file = ix_line_file(&u->lt, f.file);
	else if (f.file_ok)
		fn->decl_file = foreign_file(x, f.file_cu, f.file);
	fn->decl_line = (uint32_t)f.line;
	fi = (uint32_t)(x->img->functions.n - 1);
	if (ix_u64map_put(&x->fn_idx, off, fi))
		return FMT_NONE;
	return fi;
}

/* The DIE whose record names a subroutine: an inlined subroutine without
 * names of its own is named by its abstract origin, which many inlined
 * copies share. */
static uint32_t function_of_node(uctx *u, Dwarf_Die d, const dinfo *di, int inlined)
{
	dwx *x = u->x;
	Dwarf_Error e = NULL;
	Dwarf_Off off = 0;
	if (dwarf_dieoffset(d, &off, &e) != DW_DLV_OK) {
		drop_err(x, &e);
		return FMT_NONE;
	}
	if (inlined && !di->has_name && !di->has_link && di->has_origin) {
		Dwarf_Off o = di->origin;
		Dwarf_Die od;
		if (ix_u64map_get(&x->fn_idx, o) != FMT_NONE)
			return ix_u64map_get(&x->fn_idx, o);
		if (dwarf_offdie_b(((Dwarf_Debug)x->dbg), o, 1, &od, &e) == DW_DLV_OK) {
			uint32_t fi = function_for(u, od, o);
			dwarf_dealloc_die(od);
			return fi;
		}
		drop_err(x, &e);
	}
	return function_for(u, d, off);
}

/* ---- DIE walk ------------------------------------------------------------- */

/* Creates the node of stack entry k (and of its pending ancestors first, so
 * that parents always precede children, SPEC §7.5). */
static uint32_t materialize(uctx *u, sframe *st, int k)
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
	if (!st[k].have_di && read_dinfo(u->x, st[k].die, &st[k].di))
		return FMT_NONE;
	st[k].have_di = 1;
	const dinfo *di = &st[k].di;
	uint32_t fn = function_of_node(u, st[k].die, di, st[k].inlined);
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
static int may_have_ranges(dwx *x, Dwarf_Die d, int *yes)
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
static int visit_die(uctx *u, sframe *st, int k)
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
	if (read_dinfo(u->x, st[k].die, &st[k].di))
		return -1;
	st[k].have_di = 1;
	rangeset rs = { .n = 0 };
	int rc = 0;
	if (sub_ranges(u, &st[k].di, &rs)) {
		/* LLVM drops the ranges of a DIE whose list is malformed and
		 * keeps the rest of the unit; so do we (counted as partial). */
		rs.n = 0;
		u->bad = 1;
	}
	for (size_t i = 0; i < rs.n && !rc; i++) {
		uint64_t lo, hi;
		rs_get(&rs, i, &lo, &hi);
		if (lo == hi)
			continue;
		uint32_t node = materialize(u, st, k);
		rc = node == FMT_NONE ? -1 : ix_diemap_add(&u->dm, lo, hi, node);
	}
	rs_free(&rs);
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

/* Moves to the next DIE in pre-order; frees DIEs left behind. */
static int next_die(uctx *u, sframe *st, int *k)
{
	dwx *x = u->x;
	Dwarf_Die c = NULL;
	Dwarf_Error e = NULL;
	int r = *k > 0 && no_code_below(st[*k].tag) ? DW_DLV_NO_ENTRY
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

static int walk_dies(uctx *u, Dwarf_Die cu_die)
{
	sframe *st = calloc(MAX_DEPTH, sizeof(*st));
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

/* ---- units ---------------------------------------------------------------- */

static int add_unit_ranges(uctx *u, Dwarf_Die cu_die)
{
	dwx *x = u->x;
	rangeset rs = { .n = 0 };
	int rc = 0;
	if (die_ranges(u, cu_die, &rs)) { /* as DWARFDebugAranges: no ranges */
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
		rs_get(&rs, i, &r->lo, &r->hi);
		r->unit = u->unit;
	}
	rs_free(&rs);
	return rc;
}

/* Parses the line table of the unit whose DIE is cu_die into t.  Returns 0,
 * or 1 when it is malformed (t is then empty). */
static int parse_lines(dwx *x, Dwarf_Die cu_die, uint8_t addr_size, ix_line_table *t)
{
	uint64_t stmt;
	memset(t, 0, sizeof(*t));
	ix_vec_init(&t->pieces, sizeof(ix_piece));
	if (!attr_secoff(x, cu_die, DW_AT_stmt_list, &stmt, NULL))
		return 0;
	ix_line_ctx lc = {
		.line = ix_sections_find(x->secs, ".debug_line"),
		.str = ix_sections_find(x->secs, ".debug_str"),
		.line_str = ix_sections_find(x->secs, ".debug_line_str"),
		.offset = stmt,
		.addr_size = addr_size,
		.little = x->secs->little,
		.comp_dir = attr_string(x, cu_die, DW_AT_comp_dir),
		.img = x->img,
		.files_index = &x->files_idx,
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
static int read_unit_lines(uctx *u, Dwarf_Die cu_die)
{
	return parse_lines(u->x, cu_die, u->addr_size, &u->lt);
}

/* FILES index of file `idx` of the unit whose DIE is at cu_off, parsing
 * (once) the file table of a unit other than the one being walked. */
static uint32_t foreign_file(dwx *x, uint64_t cu_off, uint64_t idx)
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

static int process_unit(dwx *x, Dwarf_Die cu_die, uint16_t version, uint8_t offset_size,
			uint32_t idx)
{
	uctx u = { .x = x, .unit = idx, .version = version };
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
	u.rng = (ix_rng_ctx){
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
	u.rng.has_rnglists_base = attr_secoff(x, cu_die, DW_AT_rnglists_base, &u.rng.rnglists_base, NULL);
	u.rng.has_addr_base = attr_secoff(x, cu_die, DW_AT_addr_base, &u.rng.addr_base, NULL);
	u.bad = read_unit_lines(&u, cu_die);
	int rc = add_unit_ranges(&u, cu_die);
	if (!rc)
		rc = walk_dies(&u, cu_die) < 0 ? -1 : 0;
	unit *un = &x->units[idx];
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
static int next_header(dwx *x, Dwarf_Half *ver, Dwarf_Half *lsz)
{
	Dwarf_Unsigned len = 0, abbr = 0, toff = 0, next = 0;
	Dwarf_Half asz = 0, esz = 0, utype = 0;
	Dwarf_Sig8 sig;
	Dwarf_Error e = NULL;
	int r = dwarf_next_cu_header_d(((Dwarf_Debug)x->dbg), 1, &len, ver, &abbr, &asz, lsz,
				       &esz, &sig, &toff, &next, &utype, &e);
	drop_err(x, &e);
	if (r == DW_DLV_OK) {
		(*x->cursor)++;
		return 0;
	}
	if (r != DW_DLV_NO_ENTRY)
		return -1; /* counted by index_dwarf's header pass */
	*x->cursor = 0;
	return 1;
}

/* Walks the units [first, last), moving the thread's cursor there first. */
void ix_dwarf_walk(dwx *x)
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

/* ---- .debug_aranges (DWARF 5 §6.1.2), read as LLVM does ------------------ */

static uint64_t rd(const uint8_t *p, unsigned n, int little)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * (little ? i : n - 1 - i));
	return v;
}

/* Appends each set's tuples to *out and marks its unit as covered; stops at
 * the first malformed set, as DWARFDebugAranges::extract does. */
static int read_aranges(dwx *x, ix_u64map *by_off, uint8_t *covered, ix_urange **out,
			size_t *n, size_t *cap)
{
	const ix_dsec *s = ix_sections_find(x->secs, ".debug_aranges");
	int little = x->secs->little;
	uint64_t pos = 0;
	while (s && pos + 4 <= s->size) {
		const uint8_t *p = s->data + pos;
		uint64_t len = rd(p, 4, little), hl = 4;
		unsigned osz = 4;
		if (len == 0xffffffffu) {
			if (pos + 12 > s->size)
				break;
			len = rd(p + 4, 8, little);
			hl = 12;
			osz = 8;
		}
		if (len > s->size - pos - hl || len < 2 + osz + 2)
			break;
		const uint8_t *q = p + hl + 2, *end = p + hl + len;
		uint64_t cu_off = rd(q, osz, little);
		unsigned asz = q[osz], seg = q[osz + 1];
		if ((asz != 4 && asz != 8) || seg != 0)
			break;
		uint64_t t = hl + 2 + osz + 2, tup = 2 * (uint64_t)asz;
		t = (t + tup - 1) / tup * tup; /* tuples are aligned to their size */
		uint32_t ui = ix_u64map_get(by_off, cu_off);
		for (const uint8_t *r = p + t; r + tup <= end; r += tup) {
			uint64_t lo = rd(r, asz, little), l = rd(r + asz, asz, little);
			if (ui == FMT_NONE || l == 0)
				continue;
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 256;
				ix_urange *nr = realloc(*out, *cap * sizeof(*nr));
				if (!nr)
					return -1;
				*out = nr;
			}
			(*out)[(*n)++] = (ix_urange){ lo, lo + l, ui };
		}
		if (ui != FMT_NONE)
			covered[ui] = 1;
		pos += hl + len;
	}
	return 0;
}

static int unit_pieces(dwx *x, ix_vec *pieces)
{
	ix_u64map by_off = { 0 };
	uint8_t *covered = calloc(x->nunits + 1, 1);
	ix_urange *r = NULL;
	size_t n = 0, cap = 0;
	int rc = covered ? 0 : -1;
	for (size_t i = 0; i < x->nunits && !rc; i++)
		rc = ix_u64map_put(&by_off, x->units[i].off, (uint32_t)i);
	if (!rc)
		rc = read_aranges(x, &by_off, covered, &r, &n, &cap);
	for (size_t i = 0; i < x->nur && !rc; i++) {
		if (covered[x->ur[i].unit])
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			ix_urange *nr = realloc(r, cap * sizeof(*nr));
			if (!nr) {
				rc = -1;
				break;
			}
			r = nr;
		}
		r[n++] = x->ur[i];
	}
	if (!rc)
		rc = ix_units_flatten(r, n, pieces);
	free(r);
	free(covered);
	ix_u64map_free(&by_off);
	return rc;
}

/* ---- assembling the image ------------------------------------------------- */

/* Copies src's pieces over [a, b) into dst. */
static int copy_span(const ix_vec *src, uint64_t a, uint64_t b, int last, ix_vec *dst)
{
	static const uint32_t none[4] = { FMT_NONE, 0, 0, 0 };
	ptrdiff_t k = ix_piece_find(src, a);
	int rc = ix_piece_push(dst, a, k >= 0 ? IX_AT(src, ix_piece, k).v : none);
	for (size_t j = (size_t)(k + 1); !rc && j < src->n; j++) {
		const ix_piece *p = &IX_AT(src, ix_piece, j);
		if (!last && p->addr >= b)
			break;
		rc = ix_piece_push(dst, p->addr, p->v);
	}
	return rc;
}

static int compose(dwx *x, const ix_vec *units, ix_vec *lines, ix_vec *dies)
{
	static const uint32_t none[4] = { FMT_NONE, 0, 0, 0 };
	int rc = 0;
	for (size_t i = 0; i < units->n && !rc; i++) {
		const ix_piece *p = &IX_AT(units, ix_piece, i);
		uint64_t b = i + 1 < units->n ? IX_AT(units, ix_piece, i + 1).addr : UINT64_MAX;
		uint32_t un = p->v[0];
		if (un == FMT_NONE) {
			rc = ix_piece_push(lines, p->addr, none);
			if (!rc)
				rc = ix_piece_push(dies, p->addr, none);
			continue;
		}
		rc = copy_span(&x->units[un].lines, p->addr, b, 0, lines);
		if (!rc)
			rc = copy_span(&x->units[un].dies, p->addr, b, 0, dies);
	}
	return rc;
}

/* Pieces at or above base, the one covering base moved to it, ending in
 * a FMT_NONE sentinel (SPEC §7.5, §7.6). */
static size_t clip_start(const ix_vec *v, uint64_t base)
{
	ptrdiff_t k = ix_piece_find(v, base);
	return k < 0 ? 0 : (size_t)k;
}

static int emit_rows(ix_image *img, const ix_vec *v)
{
	for (size_t i = clip_start(v, img->base_address); i < v->n; i++) {
		const ix_piece *p = &IX_AT(v, ix_piece, i);
		ix_row *r = ix_vec_push(&img->rows);
		if (!r)
			return -1;
		r->addr = p->addr < img->base_address ? img->base_address : p->addr;
		r->file = p->v[0];
		r->line = p->v[1];
		r->column = p->v[2];
		r->discr = p->v[3];
	}
	return 0;
}

static int emit_imap(ix_image *img, const ix_vec *v)
{
	for (size_t i = clip_start(v, img->base_address); i < v->n; i++) {
		const ix_piece *p = &IX_AT(v, ix_piece, i);
		ix_imap *m = ix_vec_push(&img->imap);
		if (!m)
			return -1;
		m->addr = p->addr < img->base_address ? img->base_address : p->addr;
		m->node = p->v[0];
	}
	return 0;
}

/* FUNCTIONS must be sorted by DIE offset (SPEC §7.4): sort (offset, old
 * index) pairs, then renumber the nodes' references. */
typedef struct fn_key {
	uint64_t off;
	uint32_t idx;
} fn_key;

static int cmp_fn_key(const void *a, const void *b)
{
	const fn_key *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int sort_functions(ix_image *img)
{
	size_t n = img->functions.n;
	ix_function *f = img->functions.p;
	if (n == 0)
		return 0;
	fn_key *k = malloc((n + 1) * sizeof(*k));
	uint32_t *remap = malloc((n + 1) * sizeof(*remap));
	ix_function *tmp = malloc((n + 1) * sizeof(*tmp));
	int rc = k && remap && tmp ? 0 : -1;
	if (!rc) {
		memcpy(tmp, f, n * sizeof(*f));
		for (size_t i = 0; i < n; i++)
			k[i] = (fn_key){ f[i].die_offset, (uint32_t)i };
		qsort(k, n, sizeof(*k), cmp_fn_key);
		for (size_t i = 0; i < n; i++) {
			f[i] = tmp[k[i].idx];
			remap[k[i].idx] = (uint32_t)i;
		}
		for (size_t i = 0; i < img->nodes.n; i++) {
			ix_node *nd = &IX_AT(&img->nodes, ix_node, i);
			if (nd->function != FMT_NONE)
				nd->function = remap[nd->function];
		}
	}
	free(k);
	free(remap);
	free(tmp);
	return rc;
}

static int assemble(dwx *x)
{
	ix_vec units, lines, dies;
	ix_vec_init(&units, sizeof(ix_piece));
	ix_vec_init(&lines, sizeof(ix_piece));
	ix_vec_init(&dies, sizeof(ix_piece));
	int rc = unit_pieces(x, &units);
	if (!rc)
		rc = compose(x, &units, &lines, &dies);
	if (!rc)
		rc = emit_rows(x->img, &lines);
	if (!rc)
		rc = emit_imap(x->img, &dies);
	if (!rc)
		rc = sort_functions(x->img);
	ix_vec_free(&units);
	ix_vec_free(&lines);
	ix_vec_free(&dies);
	return rc;
}

/* ---- entry point ------------------------------------------------------------ */

void ix_wk_free(dwx *x)
{
	for (size_t i = 0; i < x->nforeign; i++)
		ix_line_free(&x->foreign[i]);
	free(x->foreign);
	free(x->ur);
	ix_u64map_free(&x->lt_idx);
	ix_u64map_free(&x->ab_code);
	ix_u64map_free(&x->files_idx);
	ix_u64map_free(&x->fn_idx);
	x->foreign = NULL;
	x->ur = NULL;
	x->nforeign = x->nur = 0;
}

/* oai must outlive the Dwarf_Debug: libdwarf keeps the pointer.  One
 * interface serves every thread's handle (it is read-only). */
static int open_dbg(const ix_sections *s, Dwarf_Obj_Access_Interface *oai, Dwarf_Debug *dbg,
		    char *errbuf, size_t errbuf_sz)
{
	Dwarf_Error e = NULL;
	/* libdwarf's process-wide de_alloc_tree records every DIE and
	 * attribute handed out, so that dwarf_finish can free what the caller
	 * forgot (a tsearch insert and delete per handle: 11% of a build).  We
	 * free every handle ourselves.  The flag is read at every allocation
	 * and release, so it is only ever set to 0, before any handle exists,
	 * and never back (a handle allocated with it on and released with it
	 * off would be freed twice). */
	dwarf_set_de_alloc_flag(0);
	int r = dwarf_object_init_b(oai, NULL, NULL, DW_GROUPNUMBER_ANY, dbg, &e);
	if (r == DW_DLV_OK)
		return 0;
	snprintf(errbuf, errbuf_sz, "%s: libdwarf cannot read the debug sections: %s", s->path,
		 r == DW_DLV_ERROR ? dwarf_errmsg(e) : "no DWARF");
	if (e)
		dwarf_dealloc(NULL, e, DW_DLA_ERROR);
	return -1;
}

/* The unit list: header offsets and ends, DWARF versions; *bad when a
 * header libdwarf refused ends it (the rest cannot be walked). */
typedef struct uhdr {
	uint64_t off, end;
} uhdr;

static int read_headers(Dwarf_Debug dbg, uhdr **out, size_t *n, uint64_t *versions, int *bad)
{
	size_t cap = 0;
	uint64_t off = 0;
	*out = NULL;
	*n = 0;
	*bad = 0;
	for (;;) {
		Dwarf_Unsigned len = 0, abbr = 0, toff = 0, next = 0;
		Dwarf_Half ver = 0, asz = 0, lsz = 0, esz = 0, utype = 0;
		Dwarf_Sig8 sig;
		Dwarf_Error e = NULL;
		int r = dwarf_next_cu_header_d(dbg, 1, &len, &ver, &abbr, &asz, &lsz, &esz, &sig,
					       &toff, &next, &utype, &e);
		if (r == DW_DLV_NO_ENTRY)
			return 0;
		if (r != DW_DLV_OK) {
			if (e)
				dwarf_dealloc_error(dbg, e);
			*bad = 1;
			return 0;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			uhdr *h = realloc(*out, cap * sizeof(*h));
			if (!h)
				return -1;
			*out = h;
		}
		(*out)[(*n)++] = (uhdr){ off, next };
		if (ver < 32)
			*versions |= 1ull << ver;
		off = next;
	}
}

/* Cuts the units into n contiguous shards of about equal .debug_info bytes. */
static void cut_shards(ix_wk *w, size_t n, const uhdr *h, size_t nh)
{
	uint64_t base = nh ? h[0].off : 0;
	uint64_t total = nh ? h[nh - 1].end - base : 0;
	size_t u = 0;
	for (size_t s = 0; s < n; s++) {
		w[s].first = u;
		if (s + 1 == n) {
			u = nh;
		} else {
			uint64_t goal = base + total / n * (s + 1);
			u++; /* every shard has a unit: n <= nunits */
			while (u < nh - (n - s - 1) && h[u].off < goal)
				u++;
		}
		w[s].last = u;
		w[s].bytes = u > w[s].first ? h[u - 1].end - h[w[s].first].off : 0;
	}
}

static int index_dwarf(ix_image *img, const ix_sections *s, unsigned threads, char *errbuf,
		       size_t errbuf_sz)
{
	Dwarf_Obj_Access_Interface oai = { (void *)(uintptr_t)s, &oa_methods };
	Dwarf_Debug hdbg = NULL;
	uhdr *h = NULL;
	size_t nh = 0;
	uint64_t versions = 0;
	int bad = 0;
	if (open_dbg(s, &oai, &hdbg, errbuf, errbuf_sz)) {
		img->header_flags |= FMT_FLAG_PARTIAL;
		img->build_info[FMT_BI_UNITS_SKIPPED]++;
		return 0;
	}
	int rc = read_headers(hdbg, &h, &nh, &versions, &bad);
	Dwarf_Error e = NULL;
	size_t nt = ix_dwarf_shards(threads, nh, ix_sections_find(s, ".debug_info")->size);
	size_t n = ix_dwarf_nshards(nt, nh);
	ix_unit *units = rc ? NULL : calloc(nh + 1, sizeof(*units));
	dwx *w = calloc(n, sizeof(*w));
	void **t = calloc(nt, sizeof(*t));
	if (!units || !w || !t)
		rc = -1;
	/* The header pass's handle, its unit contexts read, serves the calling
	 * thread, unless a header it refused ended the list: then no handle
	 * can start over past it, and each starts fresh at unit 0. */
	if (t && !bad)
		t[0] = hdbg;
	else
		dwarf_object_finish(hdbg, &e);
	for (size_t i = 0; !rc && i < nh; i++) {
		units[i].off = h[i].off;
		ix_vec_init(&units[i].lines, sizeof(ix_piece));
		ix_vec_init(&units[i].dies, sizeof(ix_piece));
	}
	for (size_t i = 0; !rc && i < n; i++)
		w[i] = (dwx){ .img = img, .secs = s, .units = units, .nunits = nh };
	for (size_t i = t && t[0] ? 1 : 0; !rc && i < nt; i++) {
		char why[256];
		Dwarf_Debug dbg = NULL;
		if (open_dbg(s, &oai, &dbg, why, sizeof(why)))
			rc = -1; /* it opened once: only memory can fail */
		t[i] = dbg;
	}
	if (!rc) {
		cut_shards(w, n, h, nh);
		rc = ix_dwarf_par_run(w, n, t, nt, !bad);
	}
	if (!rc) {
		rc = assemble(&w[0]);
		img->build_info[FMT_BI_UNITS] += w[0].indexed;
		img->build_info[FMT_BI_UNITS_SKIPPED] += w[0].skipped + (uint64_t)bad;
		img->build_info[FMT_BI_DWARF_VERSIONS] |= versions;
		if (w[0].skipped || bad)
			img->header_flags |= FMT_FLAG_PARTIAL;
		if (!rc)
			img->header_flags |= FMT_FLAG_HAS_DWARF;
	}
	if (rc)
		snprintf(errbuf, errbuf_sz, "%s: out of memory indexing DWARF", s->path);
	for (size_t i = 0; t && i < nt; i++)
		if (t[i])
			dwarf_object_finish((Dwarf_Debug)t[i], &e);
	for (size_t i = 0; w && i < n; i++)
		ix_wk_free(&w[i]);
	free(t);
	free(w);
	for (size_t i = 0; units && i < nh; i++) {
		ix_vec_free(&units[i].lines);
		ix_vec_free(&units[i].dies);
	}
	free(units);
	free(h);
	return rc ? -ENOMEM : 0;
}

/* Mach-O (ix_macho.c) serves a slice's __DWARF sections itself: universal
 * files and dSYM bundles are not ELF, so ix_sections_open cannot open them. */
int ix_dwarf_index_sections(ix_image *img, const ix_sections *s, char *errbuf,
			    size_t errbuf_sz)
{
	if (!ix_sections_find(s, ".debug_info"))
		return 0;
	return index_dwarf(img, s, 0, errbuf, errbuf_sz);
}

/* A .debug file indexed on its own finds itself by build-id. */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int ix_dwarf_attach(ix_image *img, const char *binary_path, const symdb_build_opts *opts,
		    char *debug_path_out, size_t debug_path_sz, char *errbuf, size_t errbuf_sz)
{
	if (debug_path_sz)
		debug_path_out[0] = 0;
	if (opts && (opts->flags & SYMDB_BUILD_NO_DWARF))
		return 0;
	ix_sections bin, dbg;
	int rc = ix_sections_open(&bin, binary_path, errbuf, errbuf_sz);
	if (rc)
		return rc;
	char path[4096];
	const ix_sections *use = &bin;
	/* llvm-symbolizer prefers a separate debug file when it finds one. */
	if (ix_debugfile_find(&bin, binary_path, opts ? opts->debug_dir : NULL, path, sizeof(path)) &&
	    !same_file(path, binary_path)) {
		char why[512];
		if (ix_sections_open(&dbg, path, why, sizeof(why)) == 0) {
			if (ix_sections_find(&dbg, ".debug_info")) {
				use = &dbg;
				/* §12.5: the debug file's identity, for the
				 * same-build-id policy (a stripped binary and
				 * its .debug file are the same image). */
				ix_file_xxh3(path, NULL, &img->build_info[FMT_BI_DEBUG_XXH3]);
				snprintf(debug_path_out, debug_path_sz, "%s", path);
			} else {
				ix_sections_close(&dbg);
			}
		}
	}
	if (ix_sections_find(use, ".debug_info"))
		rc = index_dwarf(img, use, opts ? opts->threads : 0, errbuf, errbuf_sz);
	if (use != &bin)
		ix_sections_close(&dbg);
	ix_sections_close(&bin);
	return rc;
}
